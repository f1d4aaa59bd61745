/**
 * A server child process: the official MCP TypeScript SDK server (`@modelcontextprotocol/sdk`
 * 1.32.2) on 127.0.0.1, port 0, in one of three modes. It runs in its own process so that its
 * CPU does not share the measured client's event loop. It prints one JSON line with its URLs.
 *
 *   tsx --conditions=@phasebound/source src/servers/officialServer.ts json|sse|legacy [bigBytes]
 *
 * Two MCP servers live behind the same port:
 * - "small" (`/mcp`, legacy `/sse`): 50 tools (`add`, `echo`, `increment`, 47 generated ones).
 * - "big" (`/big`, legacy `/big/sse`): `tools/list` is about `bigBytes` (default 8 MiB, in the
 *   first tool's description), and tool `big` returns `bigBytes` of text.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { z } from "zod"

const mode = (process.argv[2] ?? "json") as "json" | "sse" | "legacy"
const bigBytes = Number(process.argv[3] ?? 8 * 1024 * 1024)
const TOOL_COUNT = 50

let counter = 0
const bigText = "a".repeat(bigBytes)
// The big tools/list: the description carries most of the bytes (ASCII, nothing to escape).
const bigDescription = "b".repeat(bigBytes)

const makeSmall = () => {
  const server = new McpServer({ name: "official-sdk-peer", version: "1.32.2" })
  server.registerTool("add", { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }]
  }))
  server.registerTool("echo", { description: "Echoes text", inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: "text", text }]
  }))
  server.registerTool("increment", { description: "Increments a counter" }, () => ({
    content: [{ type: "text", text: String(++counter) }]
  }))
  for (let i = 0; i < TOOL_COUNT - 3; i++) {
    server.registerTool(`tool-${i}`, {
      description: `Generated tool number ${i}`,
      inputSchema: { query: z.string().optional(), limit: z.number().optional() }
    }, () => ({ content: [{ type: "text", text: `tool-${i}` }] }))
  }
  return server
}

const makeBig = () => {
  const server = new McpServer({ name: "official-sdk-peer-big", version: "1.32.2" })
  server.registerTool("big", { description: bigDescription }, () => ({ content: [{ type: "text", text: bigText }] }))
  return server
}

const makeServer = (path: string) => (path.startsWith("/big") ? makeBig() : makeSmall())

const streamable = new Map<string, StreamableHTTPServerTransport>()
const legacy = new Map<string, SSEServerTransport>()

const handleStreamable = async (req: http.IncomingMessage, res: http.ServerResponse, path: string) => {
  const sessionId = req.headers["mcp-session-id"]
  const existing = typeof sessionId === "string" ? streamable.get(sessionId) : undefined
  if (existing !== undefined) return existing.handleRequest(req, res)
  if (req.method !== "POST") {
    res.writeHead(typeof sessionId === "string" ? 404 : 400).end()
    return
  }
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: mode === "json",
    onsessioninitialized: (id) => {
      streamable.set(id, transport)
    }
  })
  transport.onclose = () => {
    if (transport.sessionId !== undefined) streamable.delete(transport.sessionId)
  }
  await makeServer(path).connect(transport)
  await transport.handleRequest(req, res)
}

const handleLegacy = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
  const prefix = url.pathname.startsWith("/big") ? "/big" : ""
  if (req.method === "GET" && url.pathname === `${prefix}/sse`) {
    const transport = new SSEServerTransport(`${prefix}/messages`, res)
    legacy.set(transport.sessionId, transport)
    transport.onclose = () => legacy.delete(transport.sessionId)
    await makeServer(url.pathname).connect(transport)
    return
  }
  if (req.method === "POST" && url.pathname === `${prefix}/messages`) {
    const transport = legacy.get(url.searchParams.get("sessionId") ?? "")
    if (transport === undefined) {
      res.writeHead(404).end("unknown session")
      return
    }
    await transport.handlePostMessage(req, res)
    return
  }
  res.writeHead(404).end("not found")
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (mode === "legacy") return await handleLegacy(req, res, url)
    if (url.pathname === "/mcp" || url.pathname === "/big") return await handleStreamable(req, res, url.pathname)
    res.writeHead(404).end("not found")
  } catch {
    if (!res.headersSent) res.writeHead(500).end()
  }
})
httpServer.keepAliveTimeout = 60_000
const sockets = new Set<Socket>()
httpServer.on("connection", (socket) => {
  sockets.add(socket)
  socket.on("close", () => sockets.delete(socket))
})
httpServer.listen(0, "127.0.0.1", () => {
  const { port } = httpServer.address() as AddressInfo
  const base = `http://127.0.0.1:${port}`
  const urls = mode === "legacy"
    ? { url: `${base}/sse`, bigUrl: `${base}/big/sse` }
    : { url: `${base}/mcp`, bigUrl: `${base}/big` }
  process.stdout.write(JSON.stringify({ mode, ...urls, bigBytes }) + "\n")
})

const shutdown = () => {
  for (const socket of sockets) socket.destroy()
  httpServer.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 1000).unref()
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
process.on("disconnect", shutdown)
