/**
 * Interop with the official SDK's StreamableHTTPServerTransport (JSON and SSE answers), through
 * each HTTP client and the Promise API. On the live clock with explicit budgets, well inside
 * vitest's timeout: a peer that hangs fails here as a typed DeadlineExceeded, not as a test
 * timeout (under a TestClock, virtual time would never reach the client's deadline).
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { startOfficialServer } from "../support/officialServer.js"

const policy = { discovery: { timeout: 10_000 }, call: { timeout: 5_000 } } as const

const clients = [
  ["FetchHttpClient", FetchHttpClient.layer],
  ["NodeHttpClient (undici)", NodeHttpClient.layerUndici]
] as const satisfies ReadonlyArray<readonly [string, Layer.Layer<any>]>

describe.each(
  [
    ["JSON", true],
    ["SSE", false]
  ] as const
)("official SDK 1.32.2 StreamableHTTPServerTransport, %s mode", (_, jsonResponse) => {
  describe.each(clients)("through %s", (_, layer) => {
    it.scopedLive("discovers and calls tools", () =>
      Effect.gen(function*() {
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => startOfficialServer({ jsonResponse })),
          (s) => Effect.promise(() => s.close())
        )
        const connection = yield* McpClient.connect({ url: server.url, policy })
        expect(connection.transport).toBe("streamable-http")
        expect(connection.serverInfo?.name).toBe("official-sdk-peer")
        expect(connection.protocolVersion).toBe("2025-11-25")
        expect(connection.tools.map((t) => t.name).sort()).toEqual(["add", "echo", "fail", "increment"])
        const sum = yield* connection.callTool("add", { a: 2, b: 40 })
        expect(sum.content).toEqual([{ type: "text", text: "42" }])
        const failed = yield* connection.callTool("fail")
        expect(failed.isError).toBe(true)
        expect((yield* connection.callTool("increment")).content).toEqual([{ type: "text", text: "1" }])
        expect(server.counter()).toBe(1)
        const echoed = yield* connection.callTool("echo", { text: "héllo 😀" })
        expect(echoed.content).toEqual([{ type: "text", text: "héllo 😀" }])
      }).pipe(Effect.provide(layer)), 30_000)

    it.scopedLive("a server that forgot its sessions: SessionExpired once, then a new SDK session; no call sent twice", () =>
      Effect.gen(function*() {
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => startOfficialServer({ jsonResponse })),
          (s) => Effect.promise(() => s.close())
        )
        const connection = yield* McpClient.connect({ url: server.url, policy })
        expect((yield* connection.callTool("increment")).content).toEqual([{ type: "text", text: "1" }])
        yield* Effect.promise(() => server.forgetSessions())
        const expired = yield* Effect.flip(connection.callTool("increment"))
        expect(expired).toMatchObject({ _tag: "SessionExpired", status: 404, outcome: "not-applied", retryable: true })
        expect(server.counter()).toBe(1)
        expect((yield* connection.callTool("increment")).content).toEqual([{ type: "text", text: "2" }])
        expect(server.sessions()).toBe(2)
        expect(yield* connection.sessions).toBe(2)
      }).pipe(Effect.provide(layer)), 30_000)
  })

  it("works through the Promise API", async () => {
    const server = await startOfficialServer({ jsonResponse })
    try {
      const connection = await connect({ url: server.url, policy })
      try {
        const result = await connection.callTool("add", { a: 1, b: 2 }, { timeout: 5_000 })
        expect(result.content).toEqual([{ type: "text", text: "3" }])
        expect((await connection.listTools()).map((t) => t.name).sort()).toEqual(["add", "echo", "fail", "increment"])
      } finally {
        await connection.close()
      }
    } finally {
      await server.close()
    }
  }, 30_000)
})
