/**
 * A server child process for the progress-and-validation benchmark (src/progressOverhead.ts): a
 * minimal Streamable HTTP MCP server (2025-11-25, no session, SSE answers) with one tool,
 * `report`, that answers a ~1 KB `structuredContent`, at two endpoints:
 *
 * - `/plain`: `report` declares no `outputSchema`;
 * - `/typed`: `report` declares one (patterns, formats, nested objects: a realistic tool's), and
 *   a call that carries `_meta.progressToken` gets one `notifications/progress` event before
 *   its answer.
 *
 * Everything else is the same bytes and the same work, so the difference is the client's.
 *
 *   tsx --conditions=@phasebound/source src/servers/progressServer.ts
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { outputSchema, structuredContent } from "./reportPayload.js"

const result = { content: [{ type: "text", text: "report ready" }], structuredContent }

const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`

const server = http.createServer((req, res) => {
  const typed = req.url === "/typed"
  if (req.method !== "POST") return void res.writeHead(405).end()
  let body = ""
  req.setEncoding("utf8")
  req.on("data", (chunk) => (body += chunk))
  req.on("end", () => {
    const message = JSON.parse(body) as { id?: number; method: string; params?: Record<string, any> }
    if (message.id === undefined) return void res.writeHead(202).end()
    const answer = (value: unknown, before = "") => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.end(before + event({ jsonrpc: "2.0", id: message.id, result: value }))
    }
    switch (message.method) {
      case "initialize":
        return answer({ protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "progress-bench", version: "1" } })
      case "tools/list":
        return answer({
          tools: [{ name: "report", inputSchema: { type: "object" }, ...(typed ? { outputSchema } : {}) }]
        })
      case "tools/call": {
        const token = message.params?._meta?.progressToken
        const progress = token !== undefined
          ? event({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 1, total: 1 } })
          : ""
        return answer(result, progress)
      }
      default:
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }))
    }
  })
})
const sockets = new Set<Socket>()
server.on("connection", (socket) => {
  sockets.add(socket)
  socket.on("close", () => sockets.delete(socket))
})
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`)
})
process.on("SIGTERM", () => {
  for (const socket of sockets) socket.destroy()
  server.close(() => process.exit(0))
})
