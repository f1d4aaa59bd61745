/**
 * Subscriptions against `@modelcontextprotocol/server-everything` (docs/DESIGN.md,
 * "Subscriptions"), a real peer that declares `resources.subscribe` and the list changes of
 * tools, prompts and resources: over Streamable HTTP (its updates and list changes on the
 * session's GET stream) and over stdio. Its `toggle-subscriber-updates` tool sends an update of
 * every URI the session subscribed to at once (then every 5 s); `gzip-file-as-resource` with a
 * `data:` URI (nothing fetched) registers a session resource, which the SDK announces with
 * `notifications/resources/list_changed`.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Scope, Stream } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { McpClient } from "../../src/index.js"
import { eventually } from "../support/harness.js"
import { startEverythingServer } from "../support/everythingServer.js"

const require = createRequire(import.meta.url)
const entry = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js")
const WAIT_MS = 20_000

const connections: ReadonlyArray<readonly [string, Effect.Effect<McpClient.Connection, unknown, any>]> = [
  [
    "Streamable HTTP",
    Effect.flatMap(
      Effect.acquireRelease(Effect.promise(() => startEverythingServer("streamableHttp")), (s) => Effect.promise(() => s.close())),
      (srv) => McpClient.connect({ url: srv.url, transport: "streamable-http" })
    )
  ],
  ["stdio", McpClient.connectStdio({ command: process.execPath, args: [entry, "stdio"] })]
]

describe.each(connections)("server-everything over %s", (_, connectTo) => {
  const live = (name: string, body: (connection: McpClient.Connection) => Effect.Effect<void, unknown, any>) =>
    it.scopedLive(
      name,
      () =>
        Effect.flatMap(connectTo, body).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(NodeContext.layer)) as Effect.Effect<
          void,
          unknown,
          never
        >,
      60_000
    )

  live("a subscribed resource's update arrives; closing the scope unsubscribes (the server answers)", (connection) =>
    Effect.gen(function*() {
      expect(connection.capabilities).toMatchObject({ resources: { subscribe: true } })
      const [resource] = yield* connection.resourceList.get
      expect(resource).toBeDefined()
      const scope = yield* Scope.make()
      const updates = yield* Scope.extend(connection.subscribeResource(resource!.uri), scope)
      const first = yield* Effect.fork(Stream.runHead(updates))
      yield* connection.callTool("toggle-subscriber-updates")
      expect(yield* Fiber.join(first)).toEqual(Option.some({ _tag: "ResourceUpdated", uri: resource!.uri, gap: false }))
      yield* Scope.close(scope, Exit.void)
      const done = (yield* connection.observations).filter((o) => o.operation === "resources/subscribe" || o.operation === "resources/unsubscribe")
      expect(done.map((o) => [o.operation, o.outcome])).toEqual([["resources/subscribe", "ok"], ["resources/unsubscribe", "ok"]])
      // Updates stop reaching anyone: nothing is watched any more.
      yield* connection.callTool("toggle-subscriber-updates")
    }))

  live("a resource registered during the session reaches the live resource list", (connection) =>
    Effect.gen(function*() {
      const lists: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(Stream.runForEach(connection.resourceList.changes, (list) => Effect.sync(() => void lists.push(list.map((r) => r.name)))))
      yield* eventually(() => lists.length === 1, WAIT_MS)
      yield* connection.callTool("gzip-file-as-resource", { name: "note.txt.gz", data: "data:text/plain;base64,aGVsbG8=", outputType: "resourceLink" })
      yield* eventually(() => lists.length >= 2, WAIT_MS)
      expect(lists.at(-1)).toContain("note.txt.gz")
      expect(lists[0]).not.toContain("note.txt.gz")
    }))
})
