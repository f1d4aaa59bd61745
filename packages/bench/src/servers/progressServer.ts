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

export const outputSchema = {
  type: "object",
  properties: {
    id: { type: "string", pattern: "^[a-z0-9-]{8,64}$" },
    title: { type: "string", minLength: 1, maxLength: 200 },
    status: { type: "string", enum: ["open", "closed", "pending", "archived"] },
    createdAt: { type: "string", format: "date-time" },
    score: { type: "number", minimum: 0, maximum: 100 },
    tags: { type: "array", items: { type: "string", maxLength: 40 }, maxItems: 20, uniqueItems: true },
    author: {
      type: "object",
      properties: { name: { type: "string" }, email: { type: "string", format: "email" } },
      required: ["name"],
      additionalProperties: false
    },
    items: {
      type: "array",
      items: {
        type: "object",
        properties: {
          sku: { type: "string", pattern: "^[A-Z]{3}-[0-9]{4}$" },
          qty: { type: "integer", minimum: 1 },
          price: { type: "number", exclusiveMinimum: 0 }
        },
        required: ["sku", "qty", "price"],
        additionalProperties: false
      }
    }
  },
  required: ["id", "title", "status", "createdAt", "items"],
  additionalProperties: false
}

const structuredContent = {
  id: "order-7f3a9c21",
  title: "Quarterly restock for the north warehouse",
  status: "pending",
  createdAt: "2025-06-01T12:34:56Z",
  score: 87.5,
  tags: ["restock", "north", "q3", "priority", "bulk"],
  author: { name: "Ada Lovelace", email: "ada@example.com" },
  items: Array.from({ length: 9 }, (_, i) => ({ sku: `ABC-${1000 + i}`, qty: i + 1, price: 9.99 + i }))
}
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
