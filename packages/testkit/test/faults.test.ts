import { request, type IncomingMessage } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import {
  exactJsonResponse,
  exactSseFrame,
  paddedResultTemplate,
  startServer,
  type TestServer,
  type TestServerOptions
} from "../src/index.js"
import { callTool, handshake, post } from "./helpers.js"

const servers: Array<TestServer> = []
const start = async (options?: TestServerOptions) => {
  const server = await startServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })
const callTemplate = paddedResultTemplate("tools/call", {})
const isContinuationByte = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80

describe("exact-size payloads", () => {
  it("builds responses of exactly N bytes with multi-byte characters split by 7-byte chunks", () => {
    // The smallest tools/call response with id 1 is 73 bytes; every size from there on is possible.
    for (let bytes = 73; bytes < 200; bytes++) expect(exactJsonResponse(1, callTemplate, bytes).length).toBe(bytes)
    for (const bytes of [73, 74, 75, 76, 77, 99, 1024, 65_537]) {
      const body = exactJsonResponse(1, callTemplate, bytes)
      expect(body.length).toBe(bytes)
      expect(JSON.parse(strictUtf8.decode(body))).toMatchObject({ jsonrpc: "2.0", id: 1 })
    }
    const big = exactJsonResponse(1, callTemplate, 4096)
    const splitBoundaries = Array.from({ length: Math.floor(big.length / 7) }, (_, k) => (k + 1) * 7)
      .filter((offset) => isContinuationByte(big[offset]))
    expect(splitBoundaries.length).toBeGreaterThan(10)
  })

  it("refuses impossible sizes", () => {
    expect(() => exactJsonResponse(1, callTemplate, 10)).toThrow(RangeError)
    expect(() => exactSseFrame(1, callTemplate, 20)).toThrow(RangeError)
    const server = startServer({ sessions: false }).then((s) => {
      servers.push(s)
      return s
    })
    return server.then((s) => {
      expect(() => s.script({ on: "tools/call", kind: "exact-size", bytes: 0 })).toThrow(RangeError)
      expect(() => s.script({ on: "tools/call", kind: "exact-size", bytes: 100, chunkSize: 0 })).toThrow(RangeError)
    })
  })

  for (const as of ["json", "sse"] as const) {
    it(`puts exactly N bytes on the wire (${as}) for tools/call, tools/list and initialize`, async () => {
      const server = await start({ sessions: false })
      const sizes = [200, 201, 202, 203, 1000, 70_001]
      for (const [index, bytes] of sizes.entries()) {
        const chunkSize = bytes > 10_000 ? 1021 : index % 2 === 0 ? 7 : 3
        server.script({ on: "tools/call", kind: "exact-size", bytes, as, chunkSize })
        const response = await callTool(server, "increment", {}, { id: index })
        expect(response.headers.get("content-type")).toBe(as === "sse" ? "text/event-stream" : "application/json")
        const body = new Uint8Array(await response.arrayBuffer())
        expect(body.length).toBe(bytes)
        const text = strictUtf8.decode(body)
        const json = as === "sse" ? text.replace(/^event: message\ndata: /, "").replace(/\n\n$/, "") : text
        if (as === "sse") expect(text.startsWith("event: message\ndata: ") && text.endsWith("}\n\n")).toBe(true)
        expect(JSON.parse(json)).toMatchObject({ jsonrpc: "2.0", id: index, result: { content: [{ type: "text" }] } })
      }
      expect(server.counter()).toBe(sizes.length)

      server.script({ on: "tools/list", kind: "exact-size", bytes: 5000, as })
      const list = new Uint8Array(await (await post(server, "tools/list")).arrayBuffer())
      expect(list.length).toBe(5000)
      expect(strictUtf8.decode(list)).toContain("\"name\":\"increment\"")

      server.script({ on: "initialize", kind: "exact-size", bytes: 3000, as })
      const init = new Uint8Array(await (await post(server, "initialize", { protocolVersion: "2025-06-18" })).arrayBuffer())
      expect(init.length).toBe(3000)
      expect(strictUtf8.decode(init)).toContain("\"instructions\":")
    })
  }

  it("still issues the session id when initialize is answered with an exact-size body", async () => {
    const server = await start()
    server.script({ on: "initialize", kind: "exact-size", bytes: 2048 })
    const response = await post(server, "initialize", { protocolVersion: "2025-06-18" })
    expect(response.headers.get("mcp-session-id")).not.toBeNull()
    expect((await response.arrayBuffer()).byteLength).toBe(2048)
  })
})

describe("never-ending body", () => {
  for (const as of ["json", "sse"] as const) {
    it(`stops writing once a fetch client aborts (${as})`, async () => {
      const server = await start({ sessions: false })
      server.script({ on: "tools/call", kind: "never-ending-body", as })
      const controller = new AbortController()
      const response = await callTool(server, "increment", {}, { signal: controller.signal })
      const reader = response.body!.getReader()
      let received = 0
      while (received < 300_000) {
        const { value, done } = await reader.read()
        if (done) throw new Error("body ended")
        received += value.length
      }
      controller.abort()
      await server.waitFor(() => server.abortedResponses() === 1)
      // The writer has stopped (a sync point, not a pause): its byte count is final.
      await server.waitFor(() => server.neverEndingStopped() === 1)
      expect(server.bytesWritten()).toBeGreaterThanOrEqual(received)
      expect(server.counter()).toBe(1)
    })
  }

  it("sees the socket closed as soon as the client destroys it", async () => {
    // (undici's fetch may keep an aborted socket open for a few seconds; node:http destroys at once)
    const server = await start({ sessions: false })
    server.script({ on: "tools/call", kind: "never-ending-body", as: "sse" })
    const req = request(server.url, { method: "POST" })
    req.on("error", () => {})
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "increment" } }))
    const res = await new Promise<IncomingMessage>((resolve) => req.on("response", resolve))
    await new Promise<void>((resolve) => res.once("data", () => resolve()))
    expect(server.openConnections()).toBe(1)
    req.destroy()
    await server.waitFor(() => server.abortedResponses() === 1 && server.openConnections() === 0)
  })
})

describe("stalls", () => {
  it("headers-never-sent keeps the client waiting until it leaves", async () => {
    const server = await start({ sessions: false })
    server.script({ on: "tools/call", kind: "headers-never-sent" })
    await expect(callTool(server, "increment", {}, { signal: AbortSignal.timeout(100) })).rejects.toThrow()
    await server.waitFor(() => server.abortedResponses() === 1)
    expect(server.counter()).toBe(1)
  })

  for (const as of ["json", "sse"] as const) {
    it(`response-never-sent sends headers then nothing (${as})`, async () => {
      const server = await start({ sessions: false })
      server.script({ on: "tools/call", kind: "response-never-sent", as })
      const controller = new AbortController()
      const response = await callTool(server, "echo", { text: "x" }, { signal: controller.signal })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe(as === "sse" ? "text/event-stream" : "application/json")
      const read = response.arrayBuffer()
      setTimeout(() => controller.abort(), 50)
      await expect(read).rejects.toThrow()
      await server.waitFor(() => server.abortedResponses() === 1)
    })
  }
})

describe("malformed answers", () => {
  it("wrong-id, wrong-content-type, jsonrpc-error, status 401", async () => {
    const server = await start({ sessions: false })
    server.script({ on: "tools/call", kind: "wrong-id" })
    expect(await (await callTool(server, "add", { a: 1, b: 2 }, { id: 4 })).json()).toMatchObject({ id: 999_999 })

    server.script({ on: "tools/call", kind: "wrong-content-type" })
    const html = await callTool(server, "add", { a: 1, b: 2 }, { id: 4 })
    expect(html.headers.get("content-type")).toBe("text/html")
    expect(await html.json()).toMatchObject({ id: 4, result: { content: [{ text: "3" }] } })

    server.script({ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: "nope", data: { why: 1 } })
    expect(await (await callTool(server, "add", {}, { id: 8 })).json()).toEqual({
      jsonrpc: "2.0",
      id: 8,
      error: { code: -32000, message: "nope", data: { why: 1 } }
    })

    server.script({ on: "tools/call", kind: "status", status: 401 })
    const unauthorized = await callTool(server, "add", {})
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.headers.get("www-authenticate")).toMatch(/^Bearer/)
    await unauthorized.arrayBuffer()
  })

  for (const as of ["json", "sse"] as const) {
    it(`invalid-utf8 and invalid-json (${as})`, async () => {
      const server = await start({ sessions: false })
      server.script({ on: "tools/call", kind: "invalid-utf8", as })
      const utf8 = Buffer.from(await (await callTool(server, "add", {})).arrayBuffer())
      expect(utf8.includes(Buffer.from([0xc3, 0x28]))).toBe(true)
      expect(() => strictUtf8.decode(utf8)).toThrow()

      server.script({ on: "tools/call", kind: "invalid-json", as })
      const text = await (await callTool(server, "add", {})).text()
      expect(text).toContain("{\"jsonrpc\":\"2.0\",")
      expect(() => JSON.parse(as === "sse" ? text.replace(/^event: message\ndata: /, "") : text)).toThrow()
    })
  }

  it("unterminated-frame and close-before-response end the SSE stream without a complete response", async () => {
    const server = await start({ sessions: false })
    server.script({ on: "tools/call", kind: "unterminated-frame" })
    const unterminated = await (await callTool(server, "add", { a: 1, b: 1 }, { id: 3 })).text()
    expect(unterminated.startsWith("event: message\ndata: {")).toBe(true)
    expect(unterminated.endsWith("}\n")).toBe(true)
    expect(unterminated).not.toContain("\n\n")

    server.script({ on: "tools/call", kind: "close-before-response" })
    const closed = await (await callTool(server, "add", { a: 1, b: 1 }, { id: 3 })).text()
    expect(closed).toContain("notifications/message")
    expect(closed).not.toContain("\"id\":3")
  })
})

describe("handshake faults", () => {
  it("a fault on initialize leaves later initializes normal", async () => {
    const server = await start()
    server.script({ on: "initialize", kind: "status", status: 404 })
    const refused = await post(server, "initialize", { protocolVersion: "2025-06-18" })
    expect(refused.status).toBe(404)
    await refused.arrayBuffer()
    const { sessionId } = await handshake(server)
    expect(sessionId).toBeDefined()
  })
})
