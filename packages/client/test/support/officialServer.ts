/**
 * A real peer that no one here wrote: the official MCP TypeScript SDK server
 * (`@modelcontextprotocol/sdk` 1.32.2) with `StreamableHTTPServerTransport`, stateful, on
 * 127.0.0.1 port 0. `jsonResponse` selects JSON answers (true) or SSE answers (false).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { z } from "zod"

export interface OfficialServer {
  readonly url: string
  readonly counter: () => number
  /** Sessions initialized so far. */
  readonly sessions: () => number
  /**
   * Forgets every session, as a restarted server would: a request that names one is then
   * answered 404 (the spec's answer for a session the server does not know).
   */
  readonly forgetSessions: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * The SDK's stateful transport, one per session, on a node:http server on 127.0.0.1 port 0: a
 * request naming a session this server does not know (never had, or forgot) is answered 404,
 * as the spec says a server answers for a session it does not know.
 */
export const serveSessions = async (
  makeServer: (req: http.IncomingMessage) => McpServer,
  jsonResponse: boolean
) => {
  let sessions = 0
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const httpServer = http.createServer(async (req, res) => {
    try {
      const sessionId = req.headers["mcp-session-id"]
      const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined
      if (existing !== undefined) {
        await existing.handleRequest(req, res)
        return
      }
      if (typeof sessionId === "string") {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }))
        return
      }
      if (req.method !== "POST") {
        res.writeHead(400).end()
        return
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: jsonResponse,
        onsessioninitialized: (id) => {
          sessions++
          transports.set(id, transport)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId !== undefined) transports.delete(transport.sessionId)
      }
      await makeServer(req).connect(transport)
      await transport.handleRequest(req, res)
    } catch {
      if (!res.headersSent) res.writeHead(500).end()
    }
  })
  const sockets = new Set<import("node:net").Socket>()
  httpServer.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address() as AddressInfo
  let closing: Promise<void> | undefined
  return {
    port,
    /** Sessions initialized so far. */
    sessions: () => sessions,
    /** Forgets every session, as a restarted server would: a request that names one is then answered 404. */
    forgetSessions: async () => {
      const forgotten = [...transports.values()]
      transports.clear()
      for (const transport of forgotten) await transport.close().catch(() => undefined)
    },
    close: () => (closing ??= (async () => {
      for (const transport of [...transports.values()]) await transport.close().catch(() => undefined)
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    })())
  }
}

export const startOfficialServer = async (options: { readonly jsonResponse: boolean }): Promise<OfficialServer> => {
  let counter = 0
  const makeServer = () => {
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
    server.registerTool("fail", { description: "Returns a tool-level error" }, () => ({
      content: [{ type: "text", text: "this tool failed" }],
      isError: true
    }))
    return server
  }

  const served = await serveSessions(() => makeServer(), options.jsonResponse)
  return {
    url: `http://127.0.0.1:${served.port}/mcp`,
    counter: () => counter,
    sessions: served.sessions,
    forgetSessions: served.forgetSessions,
    close: served.close
  }
}
