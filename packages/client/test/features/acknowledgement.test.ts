/**
 * The body of a POST's acknowledgement (`202 Accepted` on the legacy transport) is released
 * unread: a complete body keeps its connection for the next request, an endless one is cut
 * without holding up the call. Through every HTTP client layer, node:http included (its
 * message is drained rather than destroyed, because destroying it closes the socket).
 */
import { FetchHttpClient } from "@effect/platform"
import type { HttpClient } from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { McpClient } from "../../src/index.js"
import { eventually, expectReleased } from "../support/harness.js"

const layers: ReadonlyArray<readonly [string, Layer.Layer<HttpClient>]> = [
  ["FetchHttpClient", FetchHttpClient.layer],
  ["NodeHttpClient.layerUndici", NodeHttpClient.layerUndici],
  // node:http's default agent opens a connection per request: keep-alive is what is under test.
  [
    "NodeHttpClient (node:http, keep-alive agent)",
    Layer.provide(NodeHttpClient.layerWithoutAgent, NodeHttpClient.makeAgentLayer({ keepAlive: true }))
  ]
]

describe.each(layers)("legacy acknowledgements through %s", (_, httpClient) => {
  const live = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
    it.scopedLive(name, () => body().pipe(Effect.provide(httpClient)) as Effect.Effect<void, unknown, never>, 30_000)

  live("an `Accepted` body is released unread and its connection serves the next POST", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy({ acceptedBody: "Accepted" })
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      const before = srv.acceptedConnections()
      for (let i = 1; i <= 20; i++) {
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: String(i) }] })
      }
      // 20 POSTs, one at a time: a body that cost its connection would need 20 more sockets.
      expect(srv.acceptedConnections() - before).toBeLessThanOrEqual(2)
      yield* expectReleased(connection)
    }))

  live("an endless acknowledgement is cut; the call is answered on the stream all the same", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      srv.script({ on: "tools/call", kind: "endless-accepted" })
      expect(yield* connection.callTool("add", { a: 1, b: 2 })).toMatchObject({ content: [{ text: "3" }] })
      yield* eventually(() => srv.acceptedBodiesCut() === 1)
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      expect(srv.openStreams()).toBe(1)
      yield* expectReleased(connection)
    }))
})
