/**
 * A server child process for the 2026-07-28 ("stateless") revision: the official MCP TypeScript
 * SDK v2 server (`@modelcontextprotocol/server` 2.4.0), `createMcpHandler(factory, { legacy:
 * "reject" })`, on 127.0.0.1, port 0. 2026-07-28 only: no `initialize`, no session; each request
 * carries its revision in `_meta` and the `MCP-Protocol-Version` header, and a 2025-era request
 * is refused with the unsupported-version error. It runs in its own process, as the other servers
 * do (src/servers/officialServer.ts), and prints one JSON line with its URL.
 *
 *   tsx --conditions=@phasebound/source src/servers/statelessServer.ts
 *
 * The same 50 tools as officialServer.ts's "small" server (`add`, `echo`, `increment`, 47
 * generated ones), so that the workloads compare across modes. `responseMode` is the SDK's
 * default (`"auto"`): a single JSON body, since these tools send nothing before their result.
 *
 * The SDK serves each request with a fresh server instance from the factory ("Return a new
 * instance for each request"), so the factory registers the 50 tools on every request; the zod
 * schemas are built once, outside it. The handler is web-standard (`fetch(Request) => Response`)
 * and `@modelcontextprotocol/node` is not installed, so a small adapter carries node:http
 * requests to it (as packages/client/test/support/sdkV2Server.ts does, without the recorder).
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { z } from "zod"

const TOOL_COUNT = 50
let counter = 0

const addInput = z.object({ a: z.number(), b: z.number() })
const echoInput = z.object({ text: z.string() })
const generatedInput = z.object({ query: z.string().optional(), limit: z.number().optional() })

const makeServer = () => {
  const server = new McpServer({ name: "official-sdk-v2-stateless-peer", version: "2.4.0" })
  server.registerTool("add", { description: "Adds two numbers", inputSchema: addInput }, ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }]
  }))
  server.registerTool("echo", { description: "Echoes text", inputSchema: echoInput }, ({ text }) => ({
    content: [{ type: "text", text }]
  }))
  server.registerTool("increment", { description: "Increments a counter" }, () => ({
    content: [{ type: "text", text: String(++counter) }]
  }))
  for (let i = 0; i < TOOL_COUNT - 3; i++) {
    server.registerTool(`tool-${i}`, { description: `Generated tool number ${i}`, inputSchema: generatedInput }, () => ({
      content: [{ type: "text", text: `tool-${i}` }]
    }))
  }
  return server
}

const handler = createMcpHandler(() => makeServer(), { legacy: "reject" })

const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  const abort = new AbortController()
  res.on("close", () => {
    if (!res.writableFinished) abort.abort()
  })
  const method = req.method ?? "GET"
  const request = new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`), {
    method,
    headers,
    ...(method !== "GET" && method !== "HEAD" ? { body: Buffer.concat(chunks) } : {}),
    signal: abort.signal
  })
  const response = await handler.fetch(request)
  const outHeaders: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    outHeaders[name] = value
  })
  res.writeHead(response.status, response.statusText, outHeaders)
  if (response.body === null) {
    res.end()
    return
  }
  const reader = response.body.getReader()
  res.on("close", () => {
    void reader.cancel().catch(() => undefined)
  })
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    res.write(value)
  }
  res.end()
}

const httpServer = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1")
  if (url.pathname !== "/mcp") {
    res.writeHead(404).end("not found")
    return
  }
  void serve(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500).end()
    else res.destroy()
  })
})
httpServer.keepAliveTimeout = 60_000
const sockets = new Set<Socket>()
httpServer.on("connection", (socket) => {
  sockets.add(socket)
  socket.on("close", () => sockets.delete(socket))
})
httpServer.listen(0, "127.0.0.1", () => {
  const { port } = httpServer.address() as AddressInfo
  const url = `http://127.0.0.1:${port}/mcp`
  // No big server here: workload 4 (large responses) is not run in this mode.
  process.stdout.write(JSON.stringify({ mode: "stateless", url, bigUrl: url }) + "\n")
})

const shutdown = () => {
  void handler.close().catch(() => undefined)
  for (const socket of sockets) socket.destroy()
  httpServer.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 1000).unref()
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
process.on("disconnect", shutdown)
