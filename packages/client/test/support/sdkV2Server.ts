/**
 * A real peer for the 2026-07-28 revision that no one here wrote: the MCP TypeScript SDK v2
 * server (`@modelcontextprotocol/server` 2.4.0), on 127.0.0.1 port 0, in one of three modes:
 *
 * - `"stateless"`: 2026-07-28 only. `createMcpHandler(factory, { legacy: "reject" })`: no
 *   `initialize`, every request carries its revision in `_meta` and the `MCP-Protocol-Version`
 *   header; a 2025-era request is refused with the unsupported-version error.
 * - `"dual"`: 2026-07-28 plus the 2025 revisions. `createMcpHandler(factory)` (its default
 *   `legacy: "stateless"`): a 2026 request is served as above; a 2025-era request (no `_meta`
 *   claim, `initialize` included) is served by a fresh instance per request, without sessions.
 * - `"stateful"`: the 2025 revisions only, with sessions: `WebStandardStreamableHTTPServerTransport`
 *   with a session id generator, one transport and server per `Mcp-Session-Id` (as the v1 peer in
 *   officialServer.ts).
 *
 * `answers` picks how requests are answered: `"json"` (one JSON body) or `"sse"` (an SSE stream).
 * It shapes the 2026 leg (`responseMode`) and the stateful transport (`enableJsonResponse`); the
 * dual mode's stateless 2025 leg is not configurable in the SDK (it is always the SDK's default).
 *
 * Tools: `add` ({a, b} -> "a+b"), `echo` ({text} -> text), `increment` (bumps a counter held by
 * the test, outside any server instance, so it counts every execution whichever instance or era
 * served it: a replayed call would show as 2).
 *
 * The SDK's handler is web-standard (`fetch(Request) => Response`): support/webHandlerServer.ts
 * carries node:http requests to it.
 */
import {
  createMcpHandler,
  McpServer,
  WebStandardStreamableHTTPServerTransport
} from "@modelcontextprotocol/server"
import { randomUUID } from "node:crypto"
import { z } from "zod"
import { serveWebHandler, type WebRequestRecord } from "./webHandlerServer.js"

export type SdkV2Mode = "stateless" | "dual" | "stateful"
export type SdkV2Answers = "json" | "sse"

export interface SdkV2ServerOptions {
  readonly mode: SdkV2Mode
  /** Default `"json"`. */
  readonly answers?: SdkV2Answers | undefined
}

export type SdkV2Request = WebRequestRecord

export interface SdkV2Server {
  readonly url: string
  readonly mode: SdkV2Mode
  /** How many times `increment` ran. */
  readonly counter: () => number
  /** Every HTTP request the server received, in order (headers lower-cased). */
  readonly requests: ReadonlyArray<SdkV2Request>
  readonly close: () => Promise<void>
}

export const SDK_V2_TOOL_NAMES = ["add", "echo", "increment"] as const

export const startSdkV2Server = async (options: SdkV2ServerOptions): Promise<SdkV2Server> => {
  const answers = options.answers ?? "json"
  let counter = 0

  const makeServer = () => {
    const server = new McpServer({ name: "sdk-v2-peer", version: "2.4.0" })
    server.registerTool(
      "add",
      { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
      ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] })
    )
    server.registerTool(
      "echo",
      { description: "Echoes text", inputSchema: z.object({ text: z.string() }) },
      ({ text }) => ({ content: [{ type: "text", text }] })
    )
    server.registerTool(
      "increment",
      { description: "Increments a counter held by the test" },
      () => ({ content: [{ type: "text", text: String(++counter) }] })
    )
    return server
  }

  let handle: (request: Request) => Promise<Response>
  let shutdown: () => Promise<void>

  if (options.mode === "stateful") {
    const transports = new Map<string, WebStandardStreamableHTTPServerTransport>()
    handle = async (request) => {
      const sessionId = request.headers.get("mcp-session-id")
      const existing = sessionId === null ? undefined : transports.get(sessionId)
      if (existing !== undefined) return existing.handleRequest(request)
      // Unknown or absent session: a fresh transport, as the SDK's own examples do; it answers
      // anything but `initialize` itself (the refusal is what this peer is for).
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: answers === "json",
        onsessioninitialized: (id) => {
          transports.set(id, transport)
        },
        onsessionclosed: (id) => {
          transports.delete(id)
        }
      })
      await makeServer().connect(transport)
      return transport.handleRequest(request)
    }
    shutdown = async () => {
      for (const transport of transports.values()) await transport.close().catch(() => undefined)
      transports.clear()
    }
  } else {
    // `responseMode: "json"` makes the SDK warn (once per handler, on the console) that it drops
    // notifications sent before a result; these tools send none, so that one warning is muted.
    const warn = console.warn
    console.warn = (...args: Array<unknown>) => {
      if (typeof args[0] === "string" && args[0].startsWith("responseMode: 'json' drops")) return
      warn(...args)
    }
    let handler: ReturnType<typeof createMcpHandler>
    try {
      handler = createMcpHandler(() => makeServer(), {
        legacy: options.mode === "stateless" ? "reject" : "stateless",
        responseMode: answers
      })
    } finally {
      console.warn = warn
    }
    handle = (request) => handler.fetch(request)
    shutdown = () => handler.close()
  }

  const web = await serveWebHandler(handle)
  return {
    url: `http://127.0.0.1:${web.port}/mcp`,
    mode: options.mode,
    counter: () => counter,
    requests: web.requests,
    close: () => web.close(shutdown)
  }
}
