/**
 * Servers that never complete a release step, for the contract suite's release bounds
 * (docs/DESIGN.md, "Release"): the Streamable HTTP server's `stallDeletes`, the legacy server's
 * `post-never-answered` fault, and the rows' `stubbornRelease`, which maps to them.
 */
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type ClientUnderTest, type Peer, rows } from "../src/contract/index.js"
import { startLegacyServer, startServer, type LegacyTestServer, type TestServer } from "../src/index.js"
import { callIncrement, closeAllSse, connectLegacy, postRpc, request } from "./legacyHelpers.js"

const opened: Array<{ close: () => Promise<void> }> = []
const track = <A extends { close: () => Promise<void> }>(value: A): A => {
  opened.push(value)
  return value
}
afterEach(async () => {
  closeAllSse()
  await Promise.all(opened.splice(0).map((value) => value.close()))
})

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitUntil = async (predicate: () => boolean, what: string) => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > 10_000) throw new Error(`not within 10 s: ${what}`)
    await pause(5)
  }
}

/**
 * Sends with a signal and waits until the server has it (`arrived`: a predicate, or a promise
 * that resolves then). A later round trip to the same server (`url`'s origin) then shows the
 * server has moved past the request without answering it; the abort ends the wait, and the
 * fetch must not have been answered.
 */
const neverAnswered = async (
  url: string,
  send: (signal: AbortSignal) => Promise<Response>,
  arrived: (() => boolean) | (() => Promise<void>)
) => {
  const controller = new AbortController()
  let outcome: { readonly answered: number } | { readonly rejected: string } | undefined
  const settled = send(controller.signal).then(
    (response) => (outcome = { answered: response.status }),
    (error: unknown) => (outcome = { rejected: error instanceof Error ? error.name : String(error) })
  )
  const seen = arrived()
  if (typeof seen === "boolean") await waitUntil(arrived as () => boolean, "the request arrived")
  else await seen
  const later = await fetch(new URL("/a-later-exchange", url))
  await later.arrayBuffer()
  expect(outcome).toBeUndefined()
  controller.abort()
  expect(await settled).toEqual({ rejected: "AbortError" })
}

const jsonHeaders = (sessionId?: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" })
})

/** initialize over raw fetch; returns the session id. */
const initialize = async (url: string): Promise<string> => {
  const response = await fetch(url, {
    method: "POST",
    headers: jsonHeaders(),
    body: JSON.stringify(request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }))
  })
  await response.arrayBuffer()
  const sessionId = response.headers.get("mcp-session-id")
  if (sessionId === null) throw new Error("no session id")
  return sessionId
}

const cancelled = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "test" } }
const postNotice = (url: string, sessionId: string | undefined, signal?: AbortSignal) =>
  fetch(url, { method: "POST", headers: jsonHeaders(sessionId), body: JSON.stringify(cancelled), ...(signal === undefined ? {} : { signal }) })
const del = (url: string, sessionId: string, signal?: AbortSignal) =>
  fetch(url, { method: "DELETE", headers: { "mcp-session-id": sessionId }, ...(signal === undefined ? {} : { signal }) })

describe("Streamable HTTP server: stallDeletes", () => {
  const start = async (options: Parameters<typeof startServer>[0]): Promise<TestServer> => track(await startServer(options))

  it("receives and counts every DELETE, never answers it, and counts it closed when the client gives up", async () => {
    const server = await start({ stallDeletes: true })
    const sessionId = await initialize(server.url)
    await neverAnswered(server.url, (signal) => del(server.url, sessionId, signal), () => server.deletes() === 1)
    await waitUntil(() => server.abortedResponses() === 1, "the DELETE counted closed")
    // The session was not ended: the server never completed the DELETE.
    const ping = await fetch(server.url, { method: "POST", headers: jsonHeaders(sessionId), body: JSON.stringify(request(2, "ping")) })
    expect(ping.status).toBe(200)
    await ping.arrayBuffer()
    await neverAnswered(server.url, (signal) => del(server.url, sessionId, signal), () => server.deletes() === 2)
  })

  it("stalls DELETEs in the stateless era too, and leaves them answered by default", async () => {
    const stateless = await start({ era: "stateless", stallDeletes: true })
    await neverAnswered(stateless.url, (signal) => del(stateless.url, "any", signal), () => stateless.deletes() === 1)
    const normal = await start({})
    const sessionId = await initialize(normal.url)
    const deleted = await del(normal.url, sessionId)
    expect(deleted.status).toBe(200)
    await deleted.arrayBuffer()
    expect(normal.deletes()).toBe(1)
  })

  it("refuses a stallDeletes that is not a boolean", async () => {
    await expect(startServer({ stallDeletes: "yes" as unknown as boolean })).rejects.toThrow(TypeError)
  })
})

describe("legacy HTTP+SSE server: post-never-answered", () => {
  const start = async (): Promise<LegacyTestServer> => track(await startLegacyServer())

  it("receives a notification's POST, never answers it, and counts it closed when the client gives up", async () => {
    const server = await start()
    const { endpoint } = await connectLegacy(server.url)
    server.script({ on: "notifications/cancelled", kind: "post-never-answered" })
    await neverAnswered(
      endpoint,
      (signal) => fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(cancelled), signal }),
      () => server.rpcCalls("notifications/cancelled") === 1
    )
    await waitUntil(() => server.unansweredPostsClosed() === 1, "the POST counted closed")
    // Consumed (times 1): the next notice is accepted.
    const next = await postRpc(endpoint, cancelled)
    expect(next.status).toBe(202)
    await next.arrayBuffer()
    expect(server.unansweredPostsClosed()).toBe(1)
  })

  it("on a request: the side effect happens, neither the POST nor the stream answers it", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "tools/call", kind: "post-never-answered" })
    await neverAnswered(
      endpoint,
      (signal) => fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(callIncrement(1)), signal }),
      () => server.rpcCalls("tools/call") === 1
    )
    expect(server.counter()).toBe(1)
    // The stream's next event answers the next request: nothing was sent for the first.
    const next = await postRpc(endpoint, callIncrement(2))
    expect(next.status).toBe(202)
    await next.arrayBuffer()
    expect(JSON.parse((await sse.next()).data)).toMatchObject({ id: 2 })
    expect(server.counter()).toBe(2)
  })

  it("is validated like the other faults", async () => {
    const server = await start()
    expect(() => server.script({ on: "notifications/cancelled", kind: "post-never-answered", times: 0 })).toThrow(RangeError)
    expect(() => server.script({ on: "notifications/cancelled", kind: "post-never-answered", times: 1.5 })).toThrow(RangeError)
    server.script({ on: "notifications/cancelled", kind: "post-never-answered", times: Infinity })
  })
})

describe("contract rows: stubbornRelease", () => {
  // The rows need no client to start their servers: these tests talk to them directly.
  const noClient: ClientUnderTest<never> = {
    httpClients: ["raw"],
    layer: () => Layer.empty,
    connectHttp: () => Effect.die("unused"),
    connectStdio: () => Effect.die("unused"),
    connectPromise: () => Promise.reject(new Error("unused"))
  }
  const rowOf = (server: string) => {
    const row = rows(noClient).find((candidate) => candidate.server === server)
    if (row === undefined) throw new Error(`no row ${server}`)
    return row
  }
  const startPeer = async (server: string, stubbornRelease: boolean): Promise<Peer<never>> => track(await rowOf(server).start({ stubbornRelease }))

  it("Streamable HTTP 2025: the DELETE and the cancellation notice are never answered", async () => {
    for (const server of ["streamable-json/2025", "streamable-sse/2025"]) {
      const peer = await startPeer(server, true)
      const sessionId = await initialize(peer.target)
      await neverAnswered(peer.target, (signal) => postNotice(peer.target, sessionId, signal), () => peer.calls("notifications/cancelled") === 1)
      await peer.waitFor(() => peer.abandoned() === 1, "the notice's POST closed")
      // released() waits for the DELETE on 2025 rows.
      await neverAnswered(peer.target, (signal) => del(peer.target, sessionId, signal), () => peer.released(10_000))
      await peer.waitFor(() => peer.abandoned() === 2, "the DELETE closed")
      // Every notice, not only the first.
      await neverAnswered(peer.target, (signal) => postNotice(peer.target, sessionId, signal), () => peer.calls("notifications/cancelled") === 2)
    }
  })

  it("Streamable HTTP 2026: nothing to stall (no notice, no session): the server behaves as without it", async () => {
    const peer = await startPeer("streamable-json/2026", true)
    const notice = await postNotice(peer.target, undefined)
    expect(notice.status).toBe(202)
    await notice.arrayBuffer()
    const refused = await fetch(peer.target, { method: "DELETE" })
    expect(refused.status).toBe(405)
    await refused.arrayBuffer()
  })

  it("legacy HTTP+SSE: every cancellation notice's POST is never answered; without it, accepted", async () => {
    const stubborn = await startPeer("legacy-sse/2024", true)
    const { endpoint } = await connectLegacy(stubborn.target)
    for (const count of [1, 2]) {
      await neverAnswered(
        endpoint,
        (signal) => fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(cancelled), signal }),
        () => stubborn.calls("notifications/cancelled") === count
      )
    }
    const normal = await startPeer("legacy-sse/2024", false)
    const accepted = await postRpc((await connectLegacy(normal.target)).endpoint, cancelled)
    expect(accepted.status).toBe(202)
    await accepted.arrayBuffer()
  })
})
