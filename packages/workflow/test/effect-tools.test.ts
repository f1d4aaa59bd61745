/**
 * The testkit's effect tools (`effectTools`, packages/testkit/src/effects.ts) and the effect
 * identities its servers count, the same over Streamable HTTP (both eras), legacy HTTP+SSE and
 * the plain-JS stdio server: what the durable tool call tests stand on.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { McpClient } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { textOf } from "./support/harness.js"

type Served = {
  readonly connection: McpClient.Connection
  readonly counters: Testkit.FeatureCounters
}

const servers: ReadonlyArray<readonly [string, Effect.Effect<Served, unknown, Scope.Scope>]> = [
  [
    "Streamable HTTP, 2025-11-25",
    Effect.gen(function*() {
      const server = yield* Testkit.scoped({ effectTools: true })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"] }).pipe(Effect.provide(FetchHttpClient.layer))
      return { connection, counters: server }
    })
  ],
  [
    "Streamable HTTP, 2026-07-28",
    Effect.gen(function*() {
      const server = yield* Testkit.scoped({ effectTools: true, era: "stateless" })
      const connection = yield* McpClient.connect({ url: server.url }).pipe(Effect.provide(FetchHttpClient.layer))
      return { connection, counters: server }
    })
  ],
  [
    "legacy HTTP+SSE",
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => Testkit.startLegacyServer({ effectTools: true })),
        (server) => Effect.promise(() => server.close())
      )
      const connection = yield* McpClient.connect({ url: server.url, transport: "sse" }).pipe(Effect.provide(FetchHttpClient.layer))
      return { connection, counters: server }
    })
  ],
  [
    "stdio",
    Effect.gen(function*() {
      const fixture = yield* Effect.acquireRelease(
        Effect.sync(() => Testkit.makeStdioFixture({ effectTools: true })),
        (fixture) => Effect.sync(() => fixture.cleanup())
      )
      const connection = yield* McpClient.connectStdio(fixture).pipe(Effect.provide(NodeContext.layer))
      return { connection, counters: fixture }
    })
  ]
]

describe.each(servers)("effect tools over %s", (_, serve) => {
  it.scopedLive("are listed with their annotations, apply their effects and count the identities they carried", () =>
    Effect.gen(function*() {
      const { connection, counters } = yield* serve
      const listed = connection.tools.filter((tool) => ["lookup", "upsert", "append"].includes(tool.name))
      expect(listed.map((tool) => [tool.name, tool.annotations?.["readOnlyHint"], tool.annotations?.["idempotentHint"]])).toEqual([
        ["lookup", true, undefined],
        ["upsert", false, true],
        ["append", false, false]
      ])
      expect(textOf(yield* connection.callTool("upsert", { key: "k", value: "v" }, { effectIdentity: "id-1" }))).toBe("v")
      expect(textOf(yield* connection.callTool("lookup", { key: "k" }))).toBe("v")
      expect(textOf(yield* connection.callTool("append", { entry: "a" }, { effectIdentity: "id-2" }))).toBe("1")
      expect(textOf(yield* connection.callTool("append", { entry: "b" }, { effectIdentity: "id-2" }))).toBe("2")
      // The answer waits for delayMs; the effect does not.
      const slow = yield* Effect.either(connection.callTool("append", { entry: "c", delayMs: 1_000 }, { timeout: "200 millis" }))
      expect(slow._tag === "Left" && slow.left._tag).toBe("DeadlineExceeded")
      expect(textOf(yield* connection.callTool("append", { entry: "d" }))).toBe("4")
      expect([counters.toolCalls("upsert"), counters.toolCalls("lookup"), counters.toolCalls("append")]).toEqual([1, 1, 4])
      expect(counters.effectIdentities("upsert")).toEqual(["id-1"])
      expect(counters.effectIdentities("lookup")).toEqual([])
      expect(counters.effectIdentities("append")).toEqual(["id-2", "id-2"])
    }))
})
