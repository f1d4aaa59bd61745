/**
 * The standalone GET stream of a 2025 session, for the session's life (docs/DESIGN.md, "Live
 * tool lists"): opened again when it ends or its headers do not come in time, with a growing
 * delay, until the server says it offers none; each reopening counts as a tool list change
 * (what the server said meanwhile is lost). Against a raw server that scripts each GET.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule, TestClock } from "effect"
import type * as http from "node:http"
import { McpClient } from "../../src/index.js"
import { eventually } from "../support/harness.js"
import { rawMcpServer, SSE_HEADERS } from "../support/rawMcpServer.js"

describe("the standalone GET stream", () => {
  it.scopedLive("a stream that ends is opened again after 1 s, and the tools are listed again", () =>
    Effect.gen(function*() {
      const open: Array<http.ServerResponse> = []
      let gets = 0
      const srv = yield* rawMcpServer({
        sessionId: "s-1",
        onGet: ({ res }) => {
          gets++
          res.writeHead(200, SSE_HEADERS)
          res.write(": open\n\n")
          // The first stream ends at once; the next ones stay.
          if (gets === 1) res.end()
          else open.push(res)
        }
      })
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { relistDelay: 20 } })
      const listedAtConnect = srv.posts("tools/list").length
      yield* eventually(() => gets === 2, 5_000)
      // The reopened stream counts as a change: one more listing.
      yield* eventually(() => srv.posts("tools/list").length === listedAtConnect + 1, 5_000)
      // The server has the request; the client is done with it once it observed the listing.
      yield* connection.observations.pipe(
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (seen) => seen.some((o) => o.operation === "tools/list") }),
        Effect.timeout("5 seconds")
      )
      expect(srv.received.filter((r) => r.method === "GET").every((r) => r.headers["mcp-session-id"] === "s-1")).toBe(true)
      expect((yield* connection.diagnostics).pending).toBe(0)
      for (const res of open) res.end()
    }).pipe(Effect.provide(FetchHttpClient.layer)), 20_000)

  // Under TestClock, no sleep: a reopening waits on the client's clock ("Live tool lists": after
  // 1 s, 2 s, ... at most 30 s). Moving it past every reopen delay wakes whatever waits, and a
  // later exchange, sent after, finds the one GET.
  it.scoped("a server that offers none (405) is asked once", () =>
    Effect.gen(function*() {
      const srv = yield* rawMcpServer({ sessionId: "s-1" })
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http" })
      expect(srv.received.filter((r) => r.method === "GET")).toHaveLength(1)
      yield* TestClock.adjust("1 minute")
      // The raw server refuses ping (-32601): an answer all the same.
      expect((yield* Effect.flip(connection.ping))._tag).toBe("RemoteRefusal")
      expect(srv.received.filter((r) => r.method === "GET")).toHaveLength(1)
    }).pipe(Effect.provide(FetchHttpClient.layer)), 20_000)

  it.scopedLive("headers that do not come within a release step: asked again later, in the background", () =>
    Effect.gen(function*() {
      let gets = 0
      const held: Array<http.ServerResponse> = []
      const srv = yield* rawMcpServer({
        sessionId: "s-1",
        onGet: ({ res }) => {
          gets++
          if (gets === 1) return void held.push(res) // never answered
          res.writeHead(200, SSE_HEADERS)
          res.write(": open\n\n")
          held.push(res)
        }
      })
      const started = Date.now()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { releaseTimeout: 200 } })
      // The discovery waited one release step for the first GET, not more.
      expect(Date.now() - started).toBeLessThan(3_000)
      yield* eventually(() => gets === 2, 5_000)
      expect((yield* connection.callTool("increment").pipe(Effect.flip))._tag).toBe("RemoteRefusal")
      for (const res of held) res.destroy()
    }).pipe(Effect.provide(FetchHttpClient.layer)), 20_000)
})
