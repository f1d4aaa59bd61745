import { afterEach, describe, expect, it } from "vitest"
import { startServer, type TestServer, type TestServerOptions } from "../src/index.js"
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

describe("normal behaviour", () => {
  it("initialize issues a session, tools/list lists add/echo/increment, tools/call runs them", async () => {
    const server = await start()
    const { sessionId, initialized, protocolVersion } = await handshake(server, "2025-11-25")
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(initialized).toBe(202)
    expect(protocolVersion).toBe("2025-11-25")

    const list = await post(server, "tools/list", {}, { id: 2, sessionId })
    expect(list.headers.get("content-type")).toBe("application/json")
    const tools = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools
    expect(tools.map((tool) => tool.name)).toEqual(["add", "echo", "increment"])

    const add = await (await callTool(server, "add", { a: 2, b: 3 }, { id: 3, sessionId })).json()
    expect(add).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "5" }] } })
    const bad = (await (await callTool(server, "add", { a: "x" }, { sessionId })).json()) as { result: unknown }
    expect(bad.result).toMatchObject({ isError: true })
    const unknown = (await (await callTool(server, "nope", {}, { sessionId })).json()) as { result: unknown }
    expect(unknown.result).toMatchObject({ isError: true })
    const echo = (await (await callTool(server, "echo", { text: "hi" }, { sessionId })).json()) as { result: unknown }
    expect(echo.result).toEqual({ content: [{ type: "text", text: "hi" }] })

    const ping = await (await post(server, "ping", {}, { id: 9, sessionId })).json()
    expect(ping).toEqual({ jsonrpc: "2.0", id: 9, result: {} })
    const missing = (await (await post(server, "nope/nope", {}, { sessionId })).json()) as { error: { code: number } }
    expect(missing.error.code).toBe(-32601)

    expect(server.rpcCalls("tools/call")).toBe(4)
    expect(server.rpcCalls("notifications/initialized")).toBe(1)
    expect(server.requests.map((request) => request.rpcMethod)).toContain("tools/list")
    expect(server.requests[0]?.headers["content-type"]).toBe("application/json")
  })

  it("unsupported protocol version falls back to 2025-06-18; a fixed one is always answered", async () => {
    const server = await start({ sessions: false })
    expect((await handshake(server, "1999-01-01")).protocolVersion).toBe("2025-06-18")
    const fixed = await start({ protocolVersion: "2025-03-26", sessions: false })
    const { sessionId, protocolVersion } = await handshake(fixed, "2025-11-25")
    expect(protocolVersion).toBe("2025-03-26")
    expect(sessionId).toBeUndefined()
  })

  it("refuses invalid JSON, batches and missing sessions", async () => {
    const server = await start()
    const invalid = await fetch(server.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{" })
    expect(invalid.status).toBe(400)
    expect(((await invalid.json()) as { error: { code: number } }).error.code).toBe(-32700)
    const batch = await fetch(server.url, { method: "POST", body: "[]" })
    expect(batch.status).toBe(400)
    await batch.arrayBuffer()
    const noSession = await post(server, "tools/list")
    expect(noSession.status).toBe(400)
    await noSession.arrayBuffer()
    const get = await fetch(server.url, { headers: { accept: "text/event-stream" } })
    expect(get.status).toBe(405)
    await get.arrayBuffer()
  })

  it("paginates tools/list with opaque cursors", async () => {
    const server = await start({ extraTools: 5, pageSize: 3, sessions: false })
    const names: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const response = await post(server, "tools/list", cursor === undefined ? {} : { cursor })
      const body = (await response.json()) as { result: { tools: Array<{ name: string }>; nextCursor?: string } }
      for (const tool of body.result.tools) names.push(tool.name)
      cursor = body.result.nextCursor
      pages += 1
    } while (cursor !== undefined)
    expect(pages).toBe(3)
    expect(names).toEqual(["add", "echo", "increment", "tool-0", "tool-1", "tool-2", "tool-3", "tool-4"])
  })

  it("pads the add schema to the requested size", async () => {
    const server = await start({ schemaPadBytes: 2_000_000, sessions: false })
    const body = (await (await post(server, "tools/list")).json()) as {
      result: { tools: Array<{ inputSchema: { description?: string } }> }
    }
    const description = body.result.tools[0]?.inputSchema.description ?? ""
    expect(Buffer.byteLength(description, "utf8")).toBe(2_000_000)
  })

  it("sse mode answers with one event block and ends the stream", async () => {
    const server = await start({ mode: "sse", sessions: false })
    const response = await callTool(server, "add", { a: 1, b: 1 }, { id: 7 })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const text = await response.text()
    expect(text).toBe(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "2" }] } })}\n\n`)
  })
})

describe("sessions", () => {
  it("expired sessions get 404 with a JSON-RPC error; DELETE forgets and is counted", async () => {
    const server = await start()
    const first = await handshake(server)
    server.expireSession()
    const expired = await post(server, "tools/list", {}, { sessionId: first.sessionId })
    expect(expired.status).toBe(404)
    expect(((await expired.json()) as { error: { code: number } }).error).toBeDefined()

    const second = await handshake(server)
    const deleted = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": second.sessionId ?? "" } })
    expect(deleted.status).toBe(200)
    await deleted.arrayBuffer()
    expect(server.deletes()).toBe(1)
    const after = await post(server, "tools/list", {}, { sessionId: second.sessionId })
    expect(after.status).toBe(404)
    await after.arrayBuffer()
  })
})

describe("side effects and no-replay", () => {
  it("counter increments once per arriving call, even when a 500 is scripted", async () => {
    const server = await start({ sessions: false })
    server.script({ on: "tools/call", kind: "status", status: 500 })
    const failed = await callTool(server, "increment", {})
    expect(failed.status).toBe(500)
    await failed.arrayBuffer()
    expect(server.counter()).toBe(1)
    const ok = (await (await callTool(server, "increment", {})).json()) as { result: { content: Array<{ text: string }> } }
    expect(ok.result.content[0]?.text).toBe("2")
    expect(server.counter()).toBe(2)
    expect(server.rpcCalls("tools/call")).toBe(2)
  })

  it("a delayed response whose client leaves first is aborted and not executed again", async () => {
    const server = await start({ sessions: false })
    server.script({ on: "tools/call", kind: "delay", ms: 2_000 })
    await expect(callTool(server, "increment", {}, { signal: AbortSignal.timeout(100) })).rejects.toThrow()
    await server.waitFor(() => server.abortedResponses() === 1)
    expect(server.counter()).toBe(1)
  })

  it("times counts applications; Infinity always applies; clearFaults removes them", async () => {
    const server = await start({ sessions: false })
    server.script({ on: "ping", kind: "status", status: 503, times: 2 })
    const statuses: Array<number> = []
    for (let i = 0; i < 3; i++) {
      const response = await post(server, "ping")
      statuses.push(response.status)
      await response.arrayBuffer()
    }
    expect(statuses).toEqual([503, 503, 200])
    server.script({ on: "ping", kind: "status", status: 502, times: Infinity })
    for (let i = 0; i < 3; i++) {
      const response = await post(server, "ping")
      expect(response.status).toBe(502)
      await response.arrayBuffer()
    }
    server.clearFaults()
    const response = await post(server, "ping")
    expect(response.status).toBe(200)
    await response.arrayBuffer()
  })
})

describe("resumable SSE (2025-11-25)", () => {
  it("closes after a priming event and delivers the response once on GET + Last-Event-ID", async () => {
    const server = await start({ protocolVersion: "2025-11-25" })
    const { sessionId } = await handshake(server, "2025-11-25")
    server.script({ on: "tools/call", kind: "resumable", retryMs: 20 })
    const first = await callTool(server, "increment", {}, { id: 5, sessionId })
    expect(first.headers.get("content-type")).toBe("text/event-stream")
    const primed = await first.text()
    const match = /^id: (\S+-1)\nretry: 20\ndata: \n\n$/.exec(primed)
    expect(match).not.toBeNull()
    const lastEventId = match?.[1] ?? ""
    expect(server.counter()).toBe(1)

    const resume = () =>
      fetch(server.url, {
        headers: { accept: "text/event-stream", "mcp-session-id": sessionId ?? "", "last-event-id": lastEventId }
      })
    const resumed = await resume()
    expect(resumed.status).toBe(200)
    const text = await resumed.text()
    const streamId = lastEventId.slice(0, -2)
    expect(text).toBe(
      `id: ${streamId}-2\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 5, result: { content: [{ type: "text", text: "1" }] } })}\n\n`
    )
    expect(server.counter()).toBe(1)
    const gets = server.requests.filter((request) => request.method === "GET")
    expect(gets[0]?.headers["last-event-id"]).toBe(lastEventId)

    const again = await resume()
    expect(again.status).toBe(400)
    await again.arrayBuffer()
  })
})
