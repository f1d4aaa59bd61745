/**
 * Raw loopback servers, for the tests that need a wire the testkit servers do not script (a
 * reset at an exact point, an endless resumption, a server request on a stream, a second
 * `endpoint` event, a refusal with a JSON-RPC body on a 4xx).
 *
 * - `rawHttpServer(handle)`: a node:http server on 127.0.0.1, port 0, for the length of the
 *   scope. Every request is read whole, its body parsed as JSON with a guard (a body that is not
 *   JSON is `message: undefined`, never an unhandled error in the server), and recorded in
 *   `received` before `handle` sees it. A `handle` that throws or rejects answers 500.
 * - `rawMcpServer(options)`: on top of it, the common 2025 handshake of a Streamable HTTP server:
 *   `server/discover` refused (404 without a JSON-RPC body, as a plain 2025 server refuses an
 *   unknown POST, or a JSON-RPC -32601), `initialize` answered (with `Mcp-Session-Id` when a
 *   session is asked for), notifications accepted (202), `tools/list` answered, any other request
 *   -32601, a POST that is not JSON 400, a GET 405 (no standalone stream), a DELETE 200 in a
 *   session (405 without one). A client's replies to server requests (a message with an id and
 *   no method) are accepted (202) and collected in `replies`; `replied(n)` resolves once `n` have
 *   arrived. What a test is about goes in its hooks: `onCall` answers `tools/call`, `onGet` a GET,
 *   `onNotification` a notification.
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A request as the server received it. */
export interface RawRequest {
  /** The HTTP method. */
  readonly method: string
  /** The path without the query. */
  readonly path: string
  /** The request target as sent: path and query. */
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  /** The body as text. */
  readonly body: string
  /** The body parsed as JSON; undefined when empty or not JSON. */
  readonly message: any
  /** The JSON-RPC method of the message, when it has one. */
  readonly rpcMethod: string | undefined
}

export type RawHandler = (req: http.IncomingMessage, res: http.ServerResponse, request: RawRequest) => void | Promise<void>

const parse = (body: string): unknown => {
  if (body === "") return undefined
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

export const rawHttpServer = (handle: RawHandler) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<RawRequest> = []
      const srv = http.createServer((req, res) => {
        let body = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => (body += chunk))
        req.on("end", () => {
          const message = parse(body) as any
          const target = req.url ?? "/"
          const request: RawRequest = {
            method: req.method ?? "",
            path: new URL(target, "http://127.0.0.1").pathname,
            url: target,
            headers: req.headers,
            body,
            message,
            rpcMethod: typeof message?.method === "string" ? message.method : undefined
          }
          received.push(request)
          Promise.resolve()
            .then(() => handle(req, res, request))
            .catch(() => {
              if (!res.headersSent) res.writeHead(500)
              res.end()
            })
        })
      })
      await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve))
      const origin = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`
      return { srv, origin, received }
    }),
    ({ srv }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          srv.closeAllConnections()
          srv.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ origin, received }) => ({ origin, received: received as ReadonlyArray<RawRequest> })))

/** Answers 200 with a JSON body. */
export const json = (res: http.ServerResponse, body: unknown, headers: Readonly<Record<string, string>> = {}): void => {
  res.writeHead(200, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

/** One SSE event block carrying `message`. */
export const sseEvent = (message: unknown): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`

export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" } as const

/** What a hook gets: the request, its response, and the client's replies so far. */
export interface RawMcpContext {
  readonly req: http.IncomingMessage
  readonly res: http.ServerResponse
  readonly request: RawRequest
  /** The parsed message (a `tools/call` request, for `onCall`). */
  readonly message: any
  readonly replies: ReadonlyArray<RawRequest>
  readonly replied: (count: number) => Promise<void>
}

export interface RawMcpOptions {
  /** How `server/discover` is refused: 404 without a JSON-RPC body (default) or a JSON-RPC -32601. */
  readonly discover?: "404" | "method-not-found"
  /** Names a session on `initialize` (`Mcp-Session-Id`). */
  readonly sessionId?: string
  /** Default 2025-11-25. */
  readonly protocolVersion?: string
  /** What `tools/list` lists; default one `increment` tool. */
  readonly tools?: ReadonlyArray<{ readonly name: string; readonly inputSchema: unknown; readonly outputSchema?: unknown }>
  /** Answers `tools/call`; default -32601. */
  readonly onCall?: (ctx: RawMcpContext) => void | Promise<void>
  /** Answers a GET; default 405. */
  readonly onGet?: (ctx: RawMcpContext) => void | Promise<void>
  /** Answers a notification (a message with a method and no id); default 202. */
  readonly onNotification?: (ctx: RawMcpContext) => void | Promise<void>
}

export const rawMcpServer = (options: RawMcpOptions = {}) =>
  Effect.gen(function*() {
    const replies: Array<RawRequest> = []
    const waiters: Array<{ readonly count: number; readonly resolve: () => void }> = []
    const replied = (count: number) =>
      new Promise<void>((resolve) => {
        if (replies.length >= count) resolve()
        else waiters.push({ count, resolve })
      })
    const tools = options.tools ?? [{ name: "increment", inputSchema: { type: "object" } }]
    const server = yield* rawHttpServer(async (req, res, request) => {
      const message = request.message
      const ctx: RawMcpContext = { req, res, request, message, replies, replied }
      if (request.method === "GET") {
        if (options.onGet !== undefined) return options.onGet(ctx)
        return void res.writeHead(405, { allow: "POST" }).end()
      }
      if (request.method === "DELETE") return void res.writeHead(options.sessionId === undefined ? 405 : 200).end()
      if (request.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end()
      if (message === undefined || typeof message !== "object") return void res.writeHead(400).end()
      if (message.method === undefined) {
        // A reply to one of the server's requests.
        replies.push(request)
        res.writeHead(202).end()
        for (const waiter of waiters.filter((w) => replies.length >= w.count)) waiter.resolve()
        return
      }
      if (message.id === undefined) {
        if (options.onNotification !== undefined) return options.onNotification(ctx)
        return void res.writeHead(202).end()
      }
      const error = (code: number, text: string) => json(res, { jsonrpc: "2.0", id: message.id, error: { code, message: text } })
      switch (message.method) {
        case "server/discover":
          return options.discover === "method-not-found"
            ? error(-32601, "Method not found")
            : void res.writeHead(404, { "content-type": "text/plain" }).end("not found")
        case "initialize":
          return json(res, {
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: options.protocolVersion ?? "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "raw", version: "1" }
            }
          }, options.sessionId === undefined ? {} : { "mcp-session-id": options.sessionId })
        case "tools/list":
          return json(res, { jsonrpc: "2.0", id: message.id, result: { tools } })
        case "tools/call":
          if (options.onCall !== undefined) return options.onCall(ctx)
          return error(-32601, "Method not found")
        default:
          return error(-32601, "Method not found")
      }
    })
    return {
      ...server,
      url: `${server.origin}/mcp`,
      replies: replies as ReadonlyArray<RawRequest>,
      replied,
      /** The POSTs of one JSON-RPC method. */
      posts: (method: string) => server.received.filter((r) => r.method === "POST" && r.rpcMethod === method)
    }
  })
