/**
 * The official SDK's deprecated legacy transport (`SSEServerTransport`, 1.32.2) on 127.0.0.1
 * port 0: GET /sse opens the stream, POST /messages?sessionId=... carries the messages.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { z } from "zod"

export interface OfficialLegacyServer {
  readonly url: string
  readonly counter: () => number
  readonly close: () => Promise<void>
}

export const startOfficialLegacyServer = async (): Promise<OfficialLegacyServer> => {
  let counter = 0
  const transports = new Map<string, SSEServerTransport>()
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res)
      transports.set(transport.sessionId, transport)
      transport.onclose = () => transports.delete(transport.sessionId)
      const server = new McpServer({ name: "official-sdk-legacy-peer", version: "1.32.2" })
      server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
        content: [{ type: "text", text: String(a + b) }]
      }))
      server.registerTool("increment", {}, () => ({ content: [{ type: "text", text: String(++counter) }] }))
      await server.connect(transport)
      return
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = transports.get(url.searchParams.get("sessionId") ?? "")
      if (transport === undefined) {
        res.writeHead(404).end("unknown session")
        return
      }
      await transport.handlePostMessage(req, res)
      return
    }
    res.writeHead(404).end("not found")
  })
  const sockets = new Set<Socket>()
  httpServer.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/sse`,
    counter: () => counter,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    }
  }
}
