/**
 * Real peers for resource subscriptions and prompt/resource list changes, on 127.0.0.1 port 0:
 *
 * - `start2025`: the official SDK v1 (`subscriptionsPeer.mjs`) over its stateful
 *   `StreamableHTTPServerTransport`, one transport per `Mcp-Session-Id`, JSON or SSE answers.
 *   `dropStreams` ends every session's standalone GET stream (the SDK's own
 *   `closeStandaloneSSEStream`: the client must open it again); `forgetSessions` forgets them
 *   as a restarted server would (404 for the ids it no longer knows).
 * - `startLegacy`: the same peer over the SDK v1's deprecated `SSEServerTransport` (2024-11-05:
 *   GET /sse, POST /messages?sessionId=...); `dropStreams` ends every GET stream, which ends the
 *   session (the client starts a new one).
 * - `start2026`: the SDK v2 (`@modelcontextprotocol/server` 2.4.0) `createMcpHandler`, whose
 *   listen router serves `subscriptions/listen` itself: the filter's `resourceSubscriptions` are
 *   honoured when the server declares `resources.subscribe`, and what is published on the
 *   handler's bus (`notify.resourceUpdated(uri)`, `promptsChanged()`, `resourcesChanged()`)
 *   reaches the subscriptions that asked for it. The same tools as the 2025 peer drive it.
 *   `dropListens` destroys the sockets of the open `subscriptions/listen` answers (a dropped
 *   stream, not the server's own end).
 */
import { createMcpHandler, McpServer as McpServerV2 } from "@modelcontextprotocol/server"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { z } from "zod"
import { makeCounts, makeSubscriptionsServer } from "./subscriptionsPeer.mjs"
import { serveWebHandler, type WebRequestRecord } from "./webHandlerServer.js"

export interface Counts {
  readonly subscribes: Record<string, number>
  readonly unsubscribes: Record<string, number>
}

export interface Peer2025 {
  readonly url: string
  readonly counts: Counts
  readonly sessions: () => number
  /** Standalone GET streams open now. */
  readonly getStreams: () => number
  readonly dropStreams: () => void
  /** `notifications/resources/updated` of uri to every session, subscribed or not. */
  readonly touch: (uri: string) => Promise<void>
  /** `notifications/prompts/list_changed` to every session. */
  readonly announcePrompts: () => Promise<void>
  readonly forgetSessions: () => Promise<void>
  readonly close: () => Promise<void>
}

export const start2025 = async (options: { readonly jsonResponse: boolean; readonly subscribe?: boolean }): Promise<Peer2025> => {
  const counts = makeCounts() as Counts
  let sessions = 0
  let getStreams = 0
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const servers: Array<ReturnType<typeof makeSubscriptionsServer>> = []
  const httpServer = http.createServer(async (req, res) => {
    try {
      const sessionId = req.headers["mcp-session-id"]
      const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined
      if (existing !== undefined) {
        if (req.method === "GET") {
          getStreams++
          res.on("close", () => void getStreams--)
        }
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
        enableJsonResponse: options.jsonResponse,
        onsessioninitialized: (id) => {
          sessions++
          transports.set(id, transport)
        }
      })
      const server = makeSubscriptionsServer(counts, { subscribe: options.subscribe ?? true })
      servers.push(server)
      await server.connect(transport)
      await transport.handleRequest(req, res)
    } catch {
      if (!res.headersSent) res.writeHead(500).end()
    }
  })
  const sockets = new Set<Socket>()
  httpServer.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    counts,
    sessions: () => sessions,
    getStreams: () => getStreams,
    dropStreams: () => {
      for (const transport of transports.values()) transport.closeStandaloneSSEStream()
    },
    touch: async (uri) => {
      for (const server of servers) await server.server.sendResourceUpdated({ uri }).catch(() => undefined)
    },
    announcePrompts: async () => {
      for (const server of servers) await server.server.sendPromptListChanged().catch(() => undefined)
    },
    forgetSessions: async () => {
      const forgotten = [...transports.values()]
      transports.clear()
      for (const transport of forgotten) await transport.close().catch(() => undefined)
    },
    close: async () => {
      for (const transport of [...transports.values()]) await transport.close().catch(() => undefined)
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    }
  }
}

export interface PeerLegacy {
  readonly url: string
  readonly counts: Counts
  /** GET streams opened so far (one per session). */
  readonly sessions: () => number
  readonly dropStreams: () => Promise<void>
  readonly close: () => Promise<void>
}

export const startLegacy = async (): Promise<PeerLegacy> => {
  const counts = makeCounts() as Counts
  let sessions = 0
  const transports = new Map<string, SSEServerTransport>()
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (req.method === "GET" && url.pathname === "/sse") {
      sessions++
      const transport = new SSEServerTransport("/messages", res)
      transports.set(transport.sessionId, transport)
      transport.onclose = () => void transports.delete(transport.sessionId)
      await makeSubscriptionsServer(counts).connect(transport)
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
    counts,
    sessions: () => sessions,
    dropStreams: async () => {
      for (const transport of [...transports.values()]) await transport.close().catch(() => undefined)
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    }
  }
}

export interface Peer2026 {
  readonly url: string
  /** The `notifications` filter of each `subscriptions/listen` received, in order. */
  readonly filters: () => ReadonlyArray<Record<string, unknown>>
  /** `subscriptions/listen` answers open now. */
  readonly listening: () => number
  readonly dropListens: () => void
  readonly requests: ReadonlyArray<WebRequestRecord>
  readonly close: () => Promise<void>
}

export const start2026 = async (options: { readonly answers: "json" | "sse"; readonly subscribe?: boolean }): Promise<Peer2026> => {
  const prompts = new Set<string>(["greet"])
  const resources = new Set<string>(["a", "b"])
  const bus: { notify?: ReturnType<typeof createMcpHandler>["notify"] } = {}
  const makeServer = () => {
    const server = new McpServerV2({ name: "subscriptions-peer-v2", version: "2.4.0" }, {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true, ...(options.subscribe === false ? {} : { subscribe: true }) }
      }
    })
    for (const name of resources) {
      server.registerResource(name, `doc://${name}`, { mimeType: "text/plain" }, (uri) => ({
        contents: [{ uri: uri.href, mimeType: "text/plain", text: name }]
      }))
    }
    for (const name of prompts) {
      server.registerPrompt(name, { description: `prompt ${name}` }, () => ({
        messages: [{ role: "user", content: { type: "text", text: name } }]
      }))
    }
    server.registerTool("touch", { inputSchema: z.object({ uri: z.string(), force: z.boolean().optional() }) }, ({ uri }) => {
      bus.notify?.resourceUpdated(uri)
      return { content: [{ type: "text", text: "sent" }] }
    })
    server.registerTool("flood", { inputSchema: z.object({ uri: z.string(), count: z.number().int().min(1).max(100_000) }) }, ({ count, uri }) => {
      for (let i = 0; i < count; i++) bus.notify?.resourceUpdated(uri)
      return { content: [{ type: "text", text: `sent ${count}` }] }
    })
    server.registerTool("add_prompt", { inputSchema: z.object({ name: z.string() }) }, ({ name }) => {
      prompts.add(name)
      bus.notify?.promptsChanged()
      return { content: [{ type: "text", text: `added ${name}` }] }
    })
    server.registerTool("add_resource", { inputSchema: z.object({ name: z.string() }) }, ({ name }) => {
      resources.add(name)
      bus.notify?.resourcesChanged()
      return { content: [{ type: "text", text: `added ${name}` }] }
    })
    return server
  }
  const warn = console.warn
  console.warn = (...args: Array<unknown>) => {
    if (typeof args[0] === "string" && args[0].startsWith("responseMode: 'json' drops")) return
    warn(...args)
  }
  let handler: ReturnType<typeof createMcpHandler>
  try {
    handler = createMcpHandler(() => makeServer(), { legacy: "reject", responseMode: options.answers })
  } finally {
    console.warn = warn
  }
  bus.notify = handler.notify
  const listens = new Set<http.ServerResponse>()
  const web = await serveWebHandler((request) => handler.fetch(request), (record, res) => {
    if (record.headers["mcp-method"] === "subscriptions/listen" && record.status === 200) {
      listens.add(res)
      res.on("close", () => void listens.delete(res))
    }
  })
  return {
    url: `http://127.0.0.1:${web.port}/mcp`,
    filters: () =>
      web.requests.filter((r) => r.headers["mcp-method"] === "subscriptions/listen").map((r) => {
        const body = JSON.parse(r.body) as { params?: { notifications?: Record<string, unknown> } }
        return body.params?.notifications ?? {}
      }),
    listening: () => listens.size,
    dropListens: () => {
      for (const res of listens) res.destroy()
    },
    requests: web.requests,
    close: () => web.close(() => handler.close())
  }
}
