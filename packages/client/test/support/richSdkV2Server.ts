/**
 * A richer real peer for the 2026-07-28 revision that no one here wrote: the MCP TypeScript SDK
 * v2 server (`@modelcontextprotocol/server` 2.4.0), on 127.0.0.1 port 0, with the tools,
 * resources and prompts of richOfficialServer.ts, in one of two modes:
 *
 * - `"stateless"`: 2026-07-28 only, `createMcpHandler(factory, { legacy: "reject", responseMode })`:
 *   a fresh `McpServer` per HTTP request, so whatever must outlive one request (the counters, the
 *   tools added at runtime) is held here, outside any instance.
 * - `"stateful"`: the 2025 revisions only, with sessions: `WebStandardStreamableHTTPServerTransport`
 *   with a session id generator, one transport and one `McpServer` per `Mcp-Session-Id`.
 *
 * `answers`: `"json"` (one JSON body) or `"sse"` (an SSE stream): `responseMode` of the 2026
 * handler, `enableJsonResponse` of the stateful transport; `"auto"`, the 2026 handler's default:
 * JSON, upgraded to SSE when the handler sends a related message before its result (the
 * stateful transport answers anything but `"json"` in SSE).
 *
 * What the SDK does with each feature (read from its dist sources):
 *
 * - progress: the tool sends `notifications/progress` with `ctx.mcpReq.notify` (related to the
 *   request). On the 2026 leg, `responseMode: "sse"` streams it before the result; `"json"` drops
 *   it (dist/createMcpHandler-*.d.mts, `CreateMcpHandlerOptions.responseMode`: "Mid-call
 *   notifications (progress, logging, ...) are dropped"; the handler also warns so on the console
 *   at creation, in dist/index.mjs `createMcpHandler`, muted here). The stateful transport
 *   writes related messages only on an SSE answer, as SDK v1 does (dist/index.mjs,
 *   `WebStandardStreamableHTTPServerTransport.send`, the `if (!this._enableJsonResponse)` branch).
 * - logging: `ctx.mcpReq.log(level, data, logger)` (dist/mcp-*.mjs, `Server.buildContext`): on a
 *   2026 request its threshold is the request's own `_meta["io.modelcontextprotocol/logLevel"]`,
 *   and a request without one gets no log message at all; on the 2025 leg it is the level the
 *   session set with `logging/setLevel` (`_loggingLevels`, by session id). Either way the
 *   message is a related notification (on the request's SSE answer; dropped with JSON answers).
 *   `log` with `channel: "session"` uses `McpServer.sendLoggingMessage(params, sessionId)`
 *   instead, filtered by the session's level and sent on the standalone GET stream (2025 only).
 * - tool list changes: on the 2026 leg the handler serves `subscriptions/listen` itself
 *   (dist/listenRouter-*.mjs, `createListenRouter`): an SSE stream that starts with
 *   `notifications/subscriptions/acknowledged` and carries what is published on the handler's
 *   bus (`handler.notify.toolsChanged()`). A per-request instance's own `sendToolListChanged`
 *   reaches no one, so `add_tool` (2026) records the tool here, for every later instance, and
 *   publishes on the bus. On the 2025 leg `registerTool` after `connect` sends the notification
 *   itself, on the session's standalone GET stream.
 * - request `_meta`: `echo` records what its handler received in `ctx.mcpReq._meta` (`metas`)
 *   and in `ctx.mcpReq.envelope` (`envelopes`). The SDK lifts the reserved 2026-07-28 envelope
 *   keys (`io.modelcontextprotocol/protocolVersion`, `.../clientInfo`, `.../clientCapabilities`,
 *   `.../logLevel`) out of the request's `_meta` before any handler runs and hands them over as
 *   `ctx.mcpReq.envelope`; every other key stays in `_meta` (dist/src-DdvbAHrR.mjs,
 *   `liftWireOnlyMaterial` and `RESERVED_ENVELOPE_META_KEYS`, from
 *   core-internal/src/shared/protocol.ts; called on every inbound request by `Protocol`).
 * - sessions (stateful only): the SDK has no session router; this file routes by
 *   `Mcp-Session-Id`, and hands a request with an id it does not hold (or none) to a fresh
 *   transport, as a server does for an `initialize`. `forgetSessions` forgets them in one of
 *   three ways (`ForgetHow`); what the SDK's transport answers then is read from
 *   dist/index.mjs (src/server/streamableHttp.ts), `WebStandardStreamableHTTPServerTransport`:
 *   `handleRequest` answers a transport closed by `close()` 404 -32001 "Session not found"
 *   (its first line, `if (this._closed)`); `validateSession` answers a non-initialize request to
 *   a transport not initialized 400 -32000 "Bad Request: Server not initialized", and one naming
 *   another id than its own 404 -32001 "Session not found". The status and body of every answer
 *   of 400 and above are recorded (`RichSdkV2Request.status`, `.answer`).
 */
import {
  createMcpHandler,
  McpServer,
  ResourceTemplate,
  type ServerContext,
  WebStandardStreamableHTTPServerTransport
} from "@modelcontextprotocol/server"
import { randomUUID } from "node:crypto"
import { z } from "zod"
import { weatherOf } from "./richOfficialServer.js"
import { serveWebHandler, type WebRequestRecord } from "./webHandlerServer.js"

export type RichSdkV2Mode = "stateless" | "stateful"
/** `"auto"` (2026 only): the SDK's default, JSON unless a related message comes before the result. */
export type RichSdkV2Answers = "json" | "sse" | "auto"

export type RichSdkV2Request = WebRequestRecord

/**
 * How a stateful peer forgets its sessions (`forgetSessions`). Each way closes every session's
 * transport (`close()`, which also ends its standalone GET stream):
 *
 * - `"restart"`, as a restarted server would: the routing table is emptied. A request naming a
 *   forgotten id is then routed like any with an id this router does not hold: to a fresh SDK
 *   transport, whose `validateSession` answers a non-initialize request 400
 *   `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`.
 * - `"closed"`: the closed transports stay routed: the SDK transport's own `handleRequest`
 *   answers 404 `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`.
 * - `"router-404"`: the routing table is emptied and this router, not the SDK, answers a request
 *   naming a forgotten id 404 with that same body, as the SDK v1 examples' routers (and
 *   richOfficialServer.ts) do.
 */
export type ForgetHow = "restart" | "closed" | "router-404"

export interface RichSdkV2Server {
  readonly url: string
  readonly mode: RichSdkV2Mode
  /** How many times the tool named so ran (every instance, every session). */
  readonly calls: (tool: string) => number
  /** The `_meta.progressToken` of each `slow_progress` call, as the tool received it. */
  readonly progressTokens: () => ReadonlyArray<string | number | undefined>
  /** `subscriptions/listen` streams open now (their acknowledgement written). */
  readonly listening: () => number
  /** Every HTTP request the server received, in order (headers lower-cased). */
  readonly requests: ReadonlyArray<RichSdkV2Request>
  /** The request `_meta` each `echo` call's handler received (`ctx.mcpReq._meta`), in order. */
  readonly metas: () => ReadonlyArray<Readonly<Record<string, unknown>> | undefined>
  /** The reserved keys the SDK lifted out of each `echo` call's `_meta` (`ctx.mcpReq.envelope`). */
  readonly envelopes: () => ReadonlyArray<Readonly<Record<string, unknown>> | undefined>
  /** Stateful: SDK sessions initialized so far (`onsessioninitialized`); stateless: 0. */
  readonly sessions: () => number
  /** Stateful only (stateless has no session to forget): see `ForgetHow`. */
  readonly forgetSessions: (how: ForgetHow) => Promise<void>
  readonly close: () => Promise<void>
}

const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const startRichSdkV2Server = async (options: {
  readonly mode: RichSdkV2Mode
  readonly answers: RichSdkV2Answers
}): Promise<RichSdkV2Server> => {
  const calls = new Map<string, number>()
  const count = (tool: string) => void calls.set(tool, (calls.get(tool) ?? 0) + 1)
  const progressTokens: Array<string | number | undefined> = []
  const metas: Array<Readonly<Record<string, unknown>> | undefined> = []
  const envelopes: Array<Readonly<Record<string, unknown>> | undefined> = []
  let sessions = 0
  /** Tools added at runtime on the 2026 leg: every later instance has them. */
  const added = new Set<string>()
  let port = 0
  let toolsChanged = () => {}

  const registerAdded = (server: McpServer, name: string) =>
    server.registerTool(name, { description: `Added at runtime: ${name}` }, () => {
      count(name)
      return { content: [{ type: "text", text: `I am ${name}` }] }
    })

  const makeServer = (peerKey: string) => {
    const server = new McpServer({ name: "rich-sdk-v2-peer", version: "2.4.0" }, { capabilities: { logging: {} } })
    server.registerTool(
      "slow_progress",
      {
        description: "Reports progress after each interval, then returns",
        inputSchema: z.object({ steps: z.number().int().min(1).max(20), intervalMs: z.number().int().min(0).max(2_000) })
      },
      async ({ intervalMs, steps }, ctx: ServerContext) => {
        count("slow_progress")
        const progressToken = ctx.mcpReq._meta?.progressToken
        progressTokens.push(progressToken)
        for (let step = 1; step <= steps; step++) {
          await sleep(intervalMs)
          if (progressToken !== undefined) {
            await ctx.mcpReq.notify({
              method: "notifications/progress",
              params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` }
            })
          }
        }
        return { content: [{ type: "text", text: `done after ${steps} steps` }] }
      }
    )
    server.registerTool(
      "weather",
      {
        description: "The weather of a city, typed",
        inputSchema: z.object({ city: z.string() }),
        outputSchema: z.object({ city: z.string(), temperatureC: z.number(), conditions: z.string() })
      },
      ({ city }) => {
        count("weather")
        const weather = weatherOf(city)
        return { content: [{ type: "text", text: JSON.stringify(weather) }], structuredContent: weather }
      }
    )
    server.registerTool("link_resource", { description: "Points to a resource" }, () => {
      count("link_resource")
      return {
        content: [
          { type: "text", text: "see the linked note" },
          {
            type: "resource_link",
            uri: "doc://rich/notes/42",
            name: "note-42",
            mimeType: "text/plain",
            description: "The note numbered 42"
          }
        ]
      }
    })
    server.registerTool(
      "log",
      {
        description: "Sends log messages at the given levels",
        inputSchema: z.object({
          messages: z.array(z.object({ level: z.enum(levels), data: z.string() })),
          channel: z.enum(["request", "session"]).optional()
        })
      },
      async ({ channel, messages }, ctx: ServerContext) => {
        count("log")
        for (const { data, level } of messages) {
          if (channel === "session") await server.sendLoggingMessage({ level, logger: "rich-peer", data }, ctx.sessionId)
          else await ctx.mcpReq.log(level, data, "rich-peer")
        }
        return { content: [{ type: "text", text: `sent ${messages.length}` }] }
      }
    )
    server.registerTool(
      "add_tool",
      { description: "Registers a new tool", inputSchema: z.object({ name: z.string().min(1) }) },
      ({ name }) => {
        count("add_tool")
        if (options.mode === "stateful") {
          // This session's server: the SDK announces the change on the standalone GET stream.
          registerAdded(server, name)
        } else {
          // Instances live one request: later ones list it; subscribers hear of it on the bus.
          added.add(name)
          toolsChanged()
        }
        return { content: [{ type: "text", text: `added ${name}` }] }
      }
    )
    server.registerTool("echo", { description: "Echoes text", inputSchema: z.object({ text: z.string() }) }, ({ text }, ctx) => {
      count("echo")
      const { _meta: meta, envelope } = ctx.mcpReq
      metas.push(meta === undefined ? undefined : structuredClone(meta))
      envelopes.push(envelope === undefined ? undefined : structuredClone(envelope as Record<string, unknown>))
      return { content: [{ type: "text", text }] }
    })
    for (const name of added) registerAdded(server, name)

    server.registerResource(
      "readme",
      "doc://rich/readme",
      { title: "Read me", description: "What this peer is", mimeType: "text/markdown" },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Rich peer\nThe SDK v2." }] })
    )
    server.registerResource(
      "changelog",
      "doc://rich/changelog",
      { description: "Changes", mimeType: "text/plain" },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "2.4.0: the peer" }] })
    )
    server.registerResource(
      "note",
      // Listing the notes finds none, and says so in the log (at `error`): in 2026-07-28 the SDK
      // sends it only when the resources/list request carried a log level in its `_meta`.
      new ResourceTemplate("doc://rich/notes/{id}", {
        list: async (ctx) => {
          await ctx.mcpReq.log("error", "no notes to list", "rich-peer")
          return { resources: [] }
        }
      }),
      { description: "A note by number", mimeType: "text/plain" },
      (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${String(id)}` }] })
    )

    // A careless refusal: it echoes the caller's key and a URL with it.
    const careless = `greet needs a name; key ${peerKey}; see http://127.0.0.1:${port}/help?key=${peerKey}`
    server.registerPrompt(
      "greet",
      { description: "Greets someone", argsSchema: z.object({ name: z.string({ error: careless }) }) },
      ({ name }) => ({
        description: "A greeting",
        messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }]
      })
    )
    return server
  }
  const peerKeyOf = (request: Request | undefined) => request?.headers.get("x-peer-key") ?? "none"

  let handle: (request: Request) => Promise<Response>
  let shutdown: () => Promise<void>
  let forgetSessions: (how: ForgetHow) => Promise<void> = () => Promise.reject(new Error("a stateless peer has no session to forget"))

  if (options.mode === "stateful") {
    const transports = new Map<string, WebStandardStreamableHTTPServerTransport>()
    /** `"router-404"`: the ids this router answers 404 itself. */
    const forgotten = new Set<string>()
    handle = async (request) => {
      const sessionId = request.headers.get("mcp-session-id")
      const existing = sessionId === null ? undefined : transports.get(sessionId)
      if (existing !== undefined) return existing.handleRequest(request)
      if (sessionId !== null && forgotten.has(sessionId)) {
        // This router's answer, not the SDK's.
        return Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, {
          status: 404
        })
      }
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.answers === "json",
        onsessioninitialized: (id) => {
          sessions++
          transports.set(id, transport)
        },
        onsessionclosed: (id) => {
          transports.delete(id)
        }
      })
      await makeServer(peerKeyOf(request)).connect(transport)
      return transport.handleRequest(request)
    }
    shutdown = async () => {
      for (const transport of [...transports.values()]) await transport.close().catch(() => undefined)
      transports.clear()
    }
    forgetSessions = async (how) => {
      const known = [...transports]
      if (how !== "closed") transports.clear()
      if (how === "router-404") { for (const [id] of known) forgotten.add(id) }
      for (const [, transport] of known) await transport.close().catch(() => undefined)
    }
  } else {
    // `responseMode: "json"` makes the SDK warn once, on the console, that it drops mid-call
    // notifications: that is what the tests pin, so the warning is muted.
    const warn = console.warn
    console.warn = (...args: Array<unknown>) => {
      if (typeof args[0] === "string" && args[0].startsWith("responseMode: 'json' drops")) return
      warn(...args)
    }
    let handler: ReturnType<typeof createMcpHandler>
    try {
      handler = createMcpHandler((ctx) => makeServer(peerKeyOf(ctx.requestInfo)), {
        legacy: "reject",
        responseMode: options.answers
      })
    } finally {
      console.warn = warn
    }
    toolsChanged = () => handler.notify.toolsChanged()
    handle = (request) => handler.fetch(request)
    shutdown = () => handler.close()
  }

  let listening = 0
  const web = await serveWebHandler(handle, (record, res) => {
    // The listen router registers the subscription (and writes its acknowledgement) before it
    // returns the response: from here the subscription hears what is published.
    if (record.headers["mcp-method"] === "subscriptions/listen" && record.status === 200) {
      listening++
      res.on("close", () => void listening--)
    }
  })
  port = web.port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    mode: options.mode,
    calls: (tool) => calls.get(tool) ?? 0,
    progressTokens: () => [...progressTokens],
    listening: () => listening,
    requests: web.requests,
    metas: () => [...metas],
    envelopes: () => [...envelopes],
    sessions: () => sessions,
    forgetSessions: (how) => forgetSessions(how),
    close: () => web.close(shutdown)
  }
}
