import { it as effectIt } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import {
  exactNotificationFrame,
  scopedLegacy,
  startLegacyServer,
  type LegacyServerOptions,
  type LegacyTestServer
} from "../src/index.js"
import { callIncrement, closeAllSse, connectLegacy, openSse, postRpc, request } from "./legacyHelpers.js"

const servers: Array<LegacyTestServer> = []
const start = async (options?: LegacyServerOptions) => {
  const server = await startLegacyServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  closeAllSse()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })
const json = (data: string) => JSON.parse(data) as Record<string, unknown>

/** POSTs and expects `202 Accepted` with an empty body. */
const send = async (endpoint: string, message: unknown) => {
  const response = await postRpc(endpoint, message)
  expect(response.status).toBe(202)
  expect(await response.text()).toBe("")
}

describe("legacy HTTP+SSE: normal behaviour", () => {
  it("sends the endpoint first, accepts POSTs with 202 and answers on the GET stream", async () => {
    const server = await start()
    const sse = await openSse(server.url)
    expect(sse.response.status).toBe(200)
    expect(sse.response.headers.get("content-type")).toBe("text/event-stream")
    const endpoint = await sse.next()
    expect(endpoint.event).toBe("endpoint")
    expect(endpoint.data).toMatch(/^\/messages\?sessionId=[0-9a-f-]{36}$/)
    const postUrl = new URL(endpoint.data, server.url).href
    expect(server.openStreams()).toBe(1)

    await send(postUrl, request(1, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "0" } }))
    const init = await sse.next()
    expect(init.event).toBe("message")
    expect(json(init.data)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2024-11-05", serverInfo: { name: "phasebound-testkit" } } })
    await send(postUrl, { jsonrpc: "2.0", method: "notifications/initialized" })

    await send(postUrl, request(2, "tools/list"))
    const list = json((await sse.next()).data) as { result: { tools: Array<{ name: string }> } }
    expect(list.result.tools.map((tool) => tool.name)).toEqual(["add", "echo", "increment"])

    await send(postUrl, callIncrement(3))
    expect(json((await sse.next()).data)).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "1" }] } })
    await send(postUrl, request(4, "tools/call", { name: "add", arguments: { a: 2, b: 3 } }))
    expect(json((await sse.next()).data)).toMatchObject({ id: 4, result: { content: [{ text: "5" }] } })

    expect(server.counter()).toBe(1)
    expect(server.rpcCalls("tools/call")).toBe(2)
    expect(server.rpcCalls("notifications/initialized")).toBe(1)
    expect(server.requests[0]).toMatchObject({ method: "GET", url: "/sse", body: "" })
    expect(server.requests.map((r) => r.rpcMethod)).toContain("tools/list")
  })

  it("honours protocolVersion, extraTools and pageSize", async () => {
    const server = await start({ protocolVersion: "2025-03-26", extraTools: 3, pageSize: 4 })
    const { sse, endpoint } = await connectLegacy(server.url)
    await send(endpoint, request(1, "initialize", { protocolVersion: "2024-11-05" }))
    expect(json((await sse.next()).data)).toMatchObject({ result: { protocolVersion: "2025-03-26" } })
    await send(endpoint, request(2, "tools/list"))
    const page = json((await sse.next()).data) as { result: { tools: Array<unknown>; nextCursor?: string } }
    expect(page.result.tools).toHaveLength(4)
    await send(endpoint, request(3, "tools/list", { cursor: page.result.nextCursor }))
    const last = json((await sse.next()).data) as { result: { tools: Array<{ name: string }>; nextCursor?: string } }
    expect(last.result.tools.map((tool) => tool.name)).toEqual(["tool-1", "tool-2"])
    expect(last.result.nextCursor).toBeUndefined()
  })

  it("refuses unknown and missing sessions, and POSTs to the SSE path (404 by default)", async () => {
    const server = await start()
    const unknown = await postRpc(`${server.origin}/messages?sessionId=nope`, callIncrement(1))
    expect(unknown.status).toBe(404)
    await unknown.arrayBuffer()
    const missing = await postRpc(`${server.origin}/messages`, callIncrement(1))
    expect(missing.status).toBe(400)
    await missing.arrayBuffer()
    const probe = await postRpc(server.url, request(1, "initialize"))
    expect(probe.status).toBe(404)
    expect(probe.headers.get("content-type")).toMatch(/^text\/plain/)
    await probe.arrayBuffer()
    expect(server.counter()).toBe(0)
    expect(server.rpcCalls("tools/call")).toBe(0)
  })

  for (const status of [400, 404, 405] as const) {
    it(`answers a POST to the SSE path with the configured ${status}`, async () => {
      const server = await start({ postToSsePath: status })
      const probe = await postRpc(server.url, request(1, "initialize", { protocolVersion: "2025-06-18" }))
      expect(probe.status).toBe(status)
      if (status === 405) expect(probe.headers.get("allow")).toBe("GET")
      const body = strictUtf8.decode(new Uint8Array(await probe.arrayBuffer()))
      expect(() => JSON.parse(body)).toThrow()
      expect(server.rpcCalls("initialize")).toBe(0)
    })
  }

  it("counts streams the client closes, and forgets their sessions", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    const other = await connectLegacy(server.url)
    expect(server.openStreams()).toBe(2)
    sse.close()
    await server.waitFor(() => server.closedStreams() === 1 && server.openStreams() === 1)
    const gone = await postRpc(endpoint, callIncrement(1))
    expect(gone.status).toBe(404)
    await gone.arrayBuffer()
    expect(server.counter()).toBe(0)
    await send(other.endpoint, callIncrement(2))
    expect(json((await other.sse.next()).data)).toMatchObject({ id: 2 })
  })
})

describe("legacy HTTP+SSE: endpoint faults", () => {
  it("endpoint-never-sent: the stream opens and stays silent", async () => {
    const server = await start()
    server.script({ kind: "endpoint-never-sent" })
    const sse = await openSse(server.url)
    expect(sse.response.status).toBe(200)
    expect(sse.response.headers.get("content-type")).toBe("text/event-stream")
    await expect(sse.next(150)).rejects.toThrow("timeout")
    expect(server.openStreams()).toBe(1)
    // consumed: the next GET is normal
    const { endpoint } = await connectLegacy(server.url)
    expect(endpoint).toMatch(/\/messages\?sessionId=/)
  })

  it("endpoint-delay: the endpoint comes after the delay", async () => {
    const server = await start()
    server.script({ kind: "endpoint-delay", ms: 150 })
    const sse = await openSse(server.url)
    const opened = Date.now()
    const endpoint = await sse.next()
    expect(endpoint.event).toBe("endpoint")
    expect(Date.now() - opened).toBeGreaterThanOrEqual(120)
  })

  it("endpoint-foreign: the data is the given foreign URL, and the foreign server hears nothing", async () => {
    const server = await start()
    const foreign = await start()
    const target = `${foreign.origin}/messages?sessionId=x`
    server.script({ kind: "endpoint-foreign", target })
    const sse = await openSse(server.url)
    const endpoint = await sse.next()
    expect(endpoint).toMatchObject({ event: "endpoint", data: target })
    expect(new URL(endpoint.data, server.url).origin).not.toBe(server.origin)
    expect(foreign.requests).toHaveLength(0)
  })

  it("endpoint-relative and endpoint-absolute-same-origin are valid same-origin endpoints", async () => {
    const server = await start()
    server.script({ kind: "endpoint-relative" })
    server.script({ kind: "endpoint-absolute-same-origin" })
    const relative = await openSse(server.url)
    const relativeData = (await relative.next()).data
    expect(relativeData).toMatch(/^messages\?sessionId=[0-9a-f-]{36}$/)
    const absolute = await openSse(server.url)
    const absoluteData = (await absolute.next()).data
    expect(absoluteData.startsWith(`${server.origin}/messages?sessionId=`)).toBe(true)
    for (const [sse, data] of [[relative, relativeData], [absolute, absoluteData]] as const) {
      const endpoint = new URL(data, server.url)
      expect(endpoint.origin).toBe(server.origin)
      await send(endpoint.href, callIncrement(7))
      expect(json((await sse.next()).data)).toMatchObject({ id: 7 })
    }
    expect(server.counter()).toBe(2)
  })

  it("endpoint-malformed and endpoint-empty", async () => {
    const server = await start()
    server.script({ kind: "endpoint-malformed" })
    server.script({ kind: "endpoint-empty" })
    const malformed = await (await openSse(server.url)).next()
    expect(malformed).toMatchObject({ event: "endpoint", data: "http://[::1" })
    expect(() => new URL(malformed.data, server.url)).toThrow()
    const empty = await (await openSse(server.url)).next()
    expect(empty).toMatchObject({ event: "endpoint", data: "" })
    expect(strictUtf8.decode(empty.raw)).toBe("event: endpoint\ndata: \n\n")
  })

  it("message-before-endpoint: a message event comes first, then the endpoint", async () => {
    const server = await start()
    server.script({ kind: "message-before-endpoint" })
    const sse = await openSse(server.url)
    const first = await sse.next()
    expect(first.event).toBe("message")
    expect(json(first.data)).toMatchObject({ jsonrpc: "2.0", method: "notifications/message" })
    expect((await sse.next()).event).toBe("endpoint")
  })

  it("drop-stream-after-endpoint: the stream ends after the endpoint; the session is gone", async () => {
    const server = await start()
    server.script({ kind: "drop-stream-after-endpoint" })
    const { sse, endpoint } = await connectLegacy(server.url)
    await sse.ended()
    const late = await postRpc(endpoint, callIncrement(1))
    expect(late.status).toBe(404)
    await late.arrayBuffer()
    expect(server.openStreams()).toBe(0)
    expect(server.closedStreams()).toBe(0)
    expect(server.counter()).toBe(0)
  })
})

describe("legacy HTTP+SSE: response faults", () => {
  it("exact-size: the response event block is exactly N bytes on the wire", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    const sizes = [200, 201, 202, 1000, 1001]
    for (const [index, bytes] of sizes.entries()) {
      server.script({ on: "tools/call", kind: "exact-size", bytes, chunkSize: index % 2 === 0 ? 7 : 3 })
      await send(endpoint, callIncrement(index))
      const frame = await sse.next()
      expect(frame.raw.length).toBe(bytes)
      const text = strictUtf8.decode(frame.raw)
      expect(text.startsWith("event: message\ndata: {") && text.endsWith("}\n\n")).toBe(true)
      expect(json(frame.data)).toMatchObject({ jsonrpc: "2.0", id: index, result: { content: [{ type: "text" }] } })
    }
    server.script({ on: "tools/list", kind: "exact-size", bytes: 1000 })
    await send(endpoint, request(99, "tools/list"))
    const list = await sse.next()
    expect(list.raw.length).toBe(1000)
    expect(list.data).toContain("\"name\":\"increment\"")
    expect(server.counter()).toBe(sizes.length)
  })

  it("unsolicited-frame: a notification of exactly N bytes, then the response", async () => {
    const server = await start()
    expect(() => server.script({ on: "tools/call", kind: "unsolicited-frame", bytes: 10 })).toThrow(RangeError)
    expect(exactNotificationFrame(777).length).toBe(777)
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "tools/call", kind: "unsolicited-frame", bytes: 500, chunkSize: 3 })
    await send(endpoint, callIncrement(5))
    const unsolicited = await sse.next()
    expect(unsolicited.raw.length).toBe(500)
    expect(json(unsolicited.data)).toMatchObject({ method: "notifications/message" })
    expect(json((await sse.next()).data)).toMatchObject({ id: 5, result: { content: [{ text: "1" }] } })
  })

  it("never-ending-frame: writes until the client closes the stream, then stops", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "tools/call", kind: "never-ending-frame" })
    await send(endpoint, callIncrement(1))
    await sse.readUntil(300_000)
    sse.close()
    await server.waitFor(() => server.closedStreams() === 1 && server.openStreams() === 0)
    // The writer has stopped (a sync point, not a pause): its byte count is final.
    await server.waitFor(() => server.neverEndingStopped() === 1)
    expect(server.bytesWritten()).toBeGreaterThanOrEqual(300_000 - 200)
    expect(server.counter()).toBe(1)
  })

  it("no-response: 202 and nothing on the stream; later requests are answered", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "tools/call", kind: "no-response" })
    await send(endpoint, callIncrement(1))
    await expect(sse.next(150)).rejects.toThrow("timeout")
    await send(endpoint, request(2, "ping"))
    expect(json((await sse.next()).data)).toEqual({ jsonrpc: "2.0", id: 2, result: {} })
    expect(server.counter()).toBe(1)
  })

  it("close-stream: 202, then the server ends the GET stream mid-call", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "tools/call", kind: "close-stream" })
    await send(endpoint, callIncrement(1))
    await expect(sse.next()).rejects.toThrow("stream ended")
    expect(server.counter()).toBe(1)
    expect(server.openStreams()).toBe(0)
    expect(server.closedStreams()).toBe(0)
    const late = await postRpc(endpoint, callIncrement(2))
    expect(late.status).toBe(404)
    await late.arrayBuffer()
    expect(server.counter()).toBe(1)
  })

  it("delay, jsonrpc-error and post-status", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "tools/call", kind: "delay", ms: 120 })
    const sent = Date.now()
    await send(endpoint, callIncrement(1))
    expect(json((await sse.next()).data)).toMatchObject({ id: 1 })
    expect(Date.now() - sent).toBeGreaterThanOrEqual(100)

    server.script({ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: "nope" })
    await send(endpoint, callIncrement(2))
    expect(json((await sse.next()).data)).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32000, message: "nope" } })

    for (const status of [401, 500] as const) {
      server.script({ on: "tools/call", kind: "post-status", status })
      const refused = await postRpc(endpoint, callIncrement(3))
      expect(refused.status).toBe(status)
      if (status === 401) expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/)
      await refused.arrayBuffer()
    }
    await expect(sse.next(100)).rejects.toThrow("timeout")
    // increment ran once per arriving tools/call, whatever the fault
    expect(server.counter()).toBe(4)
    expect(server.rpcCalls("tools/call")).toBe(4)
  })

  it("times and clearFaults", async () => {
    const server = await start()
    const { sse, endpoint } = await connectLegacy(server.url)
    server.script({ on: "ping", kind: "jsonrpc-error", code: -1, message: "x", times: 2 })
    server.script({ on: "tools/call", kind: "no-response", times: Infinity })
    for (const id of [1, 2, 3]) await send(endpoint, request(id, "ping"))
    expect(json((await sse.next()).data)).toMatchObject({ id: 1, error: { code: -1 } })
    expect(json((await sse.next()).data)).toMatchObject({ id: 2, error: { code: -1 } })
    expect(json((await sse.next()).data)).toEqual({ jsonrpc: "2.0", id: 3, result: {} })
    server.clearFaults()
    await send(endpoint, callIncrement(4))
    expect(json((await sse.next()).data)).toMatchObject({ id: 4 })
  })
})

effectIt.effect("scopedLegacy closes the server and its streams with the scope", () =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const server = yield* scopedLegacy().pipe(Scope.extend(scope))
    const { sse } = yield* Effect.promise(() => connectLegacy(server.url))
    expect(server.openConnections()).toBe(1)
    yield* Scope.close(scope, Exit.void)
    expect(server.openConnections()).toBe(0)
    const ended = yield* Effect.promise(() => sse.ended().then(() => "ended", (error: unknown) => error instanceof Error ? error.message : "failed"))
    expect(ended).not.toBe("timeout")
    const after = yield* Effect.promise(() => fetch(server.url).then(() => "answered", () => "refused"))
    expect(after).toBe("refused")
  }))
