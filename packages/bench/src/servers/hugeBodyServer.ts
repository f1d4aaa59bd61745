/**
 * A server child process for workload 5: a minimal stateless Streamable HTTP MCP server whose
 * `huge` tool answers one FINITE, valid JSON-RPC response of `totalBytes` (default 1 GiB),
 * streamed in 64 KiB chunks with backpressure, as JSON or as one SSE event (`small` answers
 * `ok`, the clients' warm-up call).
 *
 * The testkit's `never-ending-body` never ends and its `exact-size` builds the whole body in
 * memory (a 1 GiB string does not fit in V8), so this server streams a finite body instead:
 * the same prefix as the testkit's never-ending body, then "a" bytes, then the closing suffix.
 *
 *   tsx --conditions=@phasebound/source src/servers/hugeBodyServer.ts json|sse [totalBytes]
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

const mode = (process.argv[2] ?? "json") as "json" | "sse"
const totalBytes = Number(process.argv[3] ?? 1024 ** 3)
const CHUNK = Buffer.alloc(64 * 1024, 0x61)
const SUPPORTED = ["2025-03-26", "2025-06-18", "2025-11-25"]
let bodiesStarted = 0
let bytesWritten = 0

const send = (res: http.ServerResponse, message: unknown) => {
  const json = JSON.stringify(message)
  if (mode === "sse") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.end(`event: message\ndata: ${json}\n\n`)
  } else {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(json)
  }
}

const streamHuge = async (res: http.ServerResponse, id: unknown) => {
  bodiesStarted++
  const head = Buffer.from(
    (mode === "sse" ? "event: message\ndata: " : "") +
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`
  )
  const tail = Buffer.from(`"}]}}` + (mode === "sse" ? "\n\n" : ""))
  res.writeHead(200, { "content-type": mode === "sse" ? "text/event-stream" : "application/json" })
  let left = totalBytes - head.length - tail.length
  res.write(head)
  while (left > 0 && !res.destroyed) {
    const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)
    left -= chunk.length
    bytesWritten += chunk.length
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done)
          res.off("close", done)
          resolve()
        }
        res.on("drain", done)
        res.on("close", done)
      })
    }
  }
  if (!res.destroyed) res.end(tail)
}

const httpServer = http.createServer((req, res) => {
  if (req.method === "DELETE") return void res.writeHead(200).end()
  if (req.method !== "POST") return void res.writeHead(405).end()
  const parts: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => parts.push(chunk))
  req.on("end", () => {
    let message: { id?: unknown; method?: string; params?: Record<string, unknown> }
    try {
      message = JSON.parse(Buffer.concat(parts).toString("utf8"))
    } catch {
      return void res.writeHead(400).end()
    }
    if (message.id === undefined) return void res.writeHead(202).end()
    const id = message.id
    switch (message.method) {
      case "initialize": {
        const requested = message.params?.["protocolVersion"]
        const protocolVersion = typeof requested === "string" && SUPPORTED.includes(requested) ? requested : "2025-06-18"
        return send(res, {
          jsonrpc: "2.0",
          id,
          result: { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "huge-body", version: "0.1.0" } }
        })
      }
      case "ping":
        return send(res, { jsonrpc: "2.0", id, result: {} })
      case "tools/list":
        return send(res, {
          jsonrpc: "2.0",
          id,
          result: {
            tools: [
              { name: "huge", description: "Answers with a huge body", inputSchema: { type: "object" } },
              { name: "small", description: "Answers ok (the warm-up call)", inputSchema: { type: "object" } }
            ]
          }
        })
      case "tools/call":
        if (message.params?.["name"] === "small") {
          return send(res, { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "ok" }] } })
        }
        return void streamHuge(res, id)
      default:
        return send(res, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } })
    }
  })
})
const sockets = new Set<Socket>()
httpServer.on("connection", (socket) => {
  sockets.add(socket)
  socket.on("close", () => sockets.delete(socket))
})
httpServer.listen(0, "127.0.0.1", () => {
  const { port } = httpServer.address() as AddressInfo
  process.stdout.write(JSON.stringify({ mode, url: `http://127.0.0.1:${port}/mcp`, totalBytes }) + "\n")
})
const shutdown = () => {
  process.stderr.write("")
  for (const socket of sockets) socket.destroy()
  httpServer.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 500).unref()
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
export const stats = () => ({ bodiesStarted, bytesWritten })
