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
import { rawMcpServer, SSE_HEADERS, sseEvent } from "../support/rawMcpServer.js"

/** Answers a GET with an SSE stream that stays open (a comment first, so its headers reach the client). */
const openStream = (res: http.ServerResponse): http.ServerResponse => {
  res.writeHead(200, SSE_HEADERS)
  res.write(": open\n\n")
  return res
}

/**
 * A raw server of session `s-1` whose GETs `answer` scripts by their number (the first is 1):
 * what it returns is kept (`kept`), for the test to end; `gets()` counts them so far.
 */
const scriptedGets = (answer: (get: number, res: http.ServerResponse) => http.ServerResponse | undefined) =>
  Effect.gen(function*() {
    let gets = 0
    const kept: Array<http.ServerResponse> = []
    const srv = yield* rawMcpServer({
      sessionId: "s-1",
      onGet: ({ res }) => {
        const keep = answer(++gets, res)
        if (keep !== undefined) kept.push(keep)
      }
    })
    return { srv, kept, gets: () => gets }
  })

describe("the standalone GET stream", () => {
  it.scopedLive("a stream that ends is opened again after 1 s, and the tools are listed again", () =>
    Effect.gen(function*() {
      // The first stream ends at once; the next ones stay.
      const { gets, kept, srv } = yield* scriptedGets((get, res) => get === 1 ? void openStream(res).end() : openStream(res))
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { relistDelay: 20 } })
      const listedAtConnect = srv.posts("tools/list").length
      yield* eventually(() => gets() === 2, 5_000)
      // The reopened stream counts as a change: one more listing.
      yield* eventually(() => srv.posts("tools/list").length === listedAtConnect + 1, 5_000)
      // The server has the request; the client is done with it once it observed the listing.
      yield* connection.observations.pipe(
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (seen) => seen.some((o) => o.operation === "tools/list") }),
        Effect.timeout("5 seconds")
      )
      expect(srv.received.filter((r) => r.method === "GET").every((r) => r.headers["mcp-session-id"] === "s-1")).toBe(true)
      expect((yield* connection.diagnostics).pending).toBe(0)
      for (const res of kept) res.end()
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
      // The first GET is never answered.
      const { gets, kept, srv } = yield* scriptedGets((get, res) => get === 1 ? res : openStream(res))
      const started = Date.now()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { releaseTimeout: 200 } })
      // The discovery waited one release step for the first GET, not more.
      expect(Date.now() - started).toBeLessThan(3_000)
      yield* eventually(() => gets() === 2, 5_000)
      expect((yield* connection.callTool("increment").pipe(Effect.flip))._tag).toBe("RemoteRefusal")
      for (const res of kept) res.destroy()
    }).pipe(Effect.provide(FetchHttpClient.layer)), 20_000)

  // The server answers neither until it has both: a client that waited for the notification's
  // answer before asking for the stream would never get either, and its discovery would fail.
  it.scoped("is asked for beside notifications/initialized, and both are answered before tools/list is sent", () =>
    Effect.gen(function*() {
      let bothArrived!: () => void
      const both = new Promise<void>((resolve) => (bothArrived = resolve))
      let arrived = 0
      const meet = () => {
        if (++arrived === 2) bothArrived()
        return both
      }
      const open: Array<http.ServerResponse> = []
      let answeredBefore = -1
      const srv = yield* rawMcpServer({
        sessionId: "s-1",
        onNotification: async ({ res }) => {
          await meet()
          res.writeHead(202).end()
        },
        onGet: async ({ res }) => {
          await meet()
          open.push(openStream(res))
          answeredBefore = srv.received.length
        }
      })
      yield* McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { discovery: { timeout: "5 seconds" } } })
      const methods = srv.received.map((r) => r.rpcMethod ?? r.method)
      expect(methods.filter((m) => m === "GET")).toHaveLength(1)
      // tools/list arrived after the stream's headers were written.
      expect(answeredBefore).toBeGreaterThan(0)
      expect(methods.indexOf("tools/list")).toBeGreaterThanOrEqual(answeredBefore)
      for (const res of open) res.end()
    }).pipe(Effect.provide(FetchHttpClient.layer)), 20_000)

  // A server may want the notification before it opens the stream: a refusal other than 405 is
  // asked once more after it, and the stream opened then carries the server's messages.
  it.scoped("a stream refused (400) beside the notification is asked for once more after it, and then heard", () =>
    Effect.gen(function*() {
      const { gets, kept, srv } = yield* scriptedGets((get, res) => get === 1 ? void res.writeHead(400).end() : openStream(res))
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { relistDelay: 1 } })
      expect(gets()).toBe(2)
      const listed = srv.posts("tools/list").length
      // A change announced on the second stream is heard: the tools are listed again.
      kept[0]!.write(sseEvent({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }))
      yield* TestClock.adjust("1 second")
      yield* connection.observations.pipe(
        Effect.repeat({ until: (seen) => seen.some((o) => o.operation === "tools/list") }),
        Effect.timeout("5 seconds")
      )
      expect(srv.posts("tools/list")).toHaveLength(listed + 1)
      for (const res of kept) res.end()
    }).pipe(Effect.provide(FetchHttpClient.layer)), 20_000)
})
