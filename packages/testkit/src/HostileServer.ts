/**
 * A loopback HTTP server whose answers come from a script: a function given each request
 * (HTTP method, path, headers, the JSON-RPC method, id and params) that returns exactly what
 * goes back: a status, raw header pairs (duplicates allowed), body bytes written in chosen
 * chunks, and what happens after them (end, hold the connection open, reset). For property-based
 * tests that generate hostile answers (listings, results, frames, headers, authorization
 * metadata) and need a real wire under them.
 *
 * What the script does not answer (`"normal"`) gets an honest answer of the server's era, in
 * its `mode` (a JSON body or one SSE event):
 * - "stateless" (2026-07-28): `server/discover` and `tools/list` (one `echo` tool) and
 *   `tools/call` (a text result); `initialize` 400 + -32022; GET and DELETE 405.
 * - "handshake" (2025-11-25): `server/discover` 404 without a JSON-RPC body, `initialize` with an
 *   `Mcp-Session-Id`, the same listing and result; GET 405, DELETE 200.
 * Notifications and client replies are 202.
 *
 * The script is mutable (`setScript`), so one server can serve every generated case of a
 * property. Every request is recorded, and `tools/call` arrivals are counted by JSON-RPC id and
 * by the `nonce` argument and the effect identity they carry (`toolCallArrivals`), so a test can
 * prove nothing was sent twice. A body may hold `__ID__`: it becomes the request's JSON-RPC id
 * (as JSON) when the answer is sent.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { isRecord } from "./jsonrpc.js"
import { drainOrClose, nextTick, resetConnection } from "./wire.js"

/** The placeholder a scripted body may hold for the JSON-RPC id of the request it answers. */
export const ID_PLACEHOLDER = "__ID__"

/** The `_meta` key of a call's effect identity, as the client sends it. */
const EFFECT_IDENTITY_KEY = "io.phasebound/effect-identity"

export type HostileEra = "stateless" | "handshake"

/** One request as the hostile server received it. */
export interface HostileRequest {
  readonly httpMethod: string
  /** The path, without the query. */
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** The JSON-RPC method of a single message, when it has one. */
  readonly method: string | undefined
  /** The JSON-RPC id of a single request. */
  readonly id: string | number | undefined
  readonly params: unknown
}

/** Exactly what goes back. */
export interface HostileAnswer {
  /** Default 200. */
  readonly status?: number
  /** Header pairs as they go out, in order; a name given twice is sent twice. */
  readonly headers?: ReadonlyArray<readonly [string, string]>
  /** The body: text (UTF-8, `__ID__` replaced) or raw bytes. Default: empty. */
  readonly body?: string | Uint8Array
  /** Sizes of the successive writes (an event-loop turn between them); the rest goes in one. Default: one write. */
  readonly chunks?: ReadonlyArray<number>
  /** Every write this many bytes (after `chunks`), e.g. 1 to split at every byte. */
  readonly chunkSize?: number
  /** After the body: end the response (default), keep it open, or reset the connection. */
  readonly then?: "end" | "hold" | "reset"
}

/** What the script returns: an answer, the era's honest one, or nothing at all (headers never sent). */
export type HostileReply = HostileAnswer | "normal" | "stall"
export type HostileScript = (request: HostileRequest) => HostileReply

/** A `tools/call` as it arrived. */
export interface ToolCallArrival {
  readonly id: string | number | undefined
  readonly nonce: unknown
  readonly effectIdentity: unknown
}

export interface HostileServerOptions {
  readonly era: HostileEra
  /** How the honest answers go: a JSON body (default) or one SSE event. */
  readonly mode?: "json" | "sse"
  /** Default `() => "normal"`. */
  readonly script?: HostileScript
  /** The loopback address to listen on (default 127.0.0.1; e.g. 127.0.0.2 for a second host). */
  readonly host?: string
}

export interface HostileServer {
  /** http://HOST:PORT/mcp */
  readonly url: string
  /** http://HOST:PORT */
  readonly origin: string
  readonly requests: ReadonlyArray<HostileRequest>
  setScript(script: HostileScript): void
  toolCallArrivals(): ReadonlyArray<ToolCallArrival>
  /** Forgets the recorded requests and arrivals (between generated cases). */
  reset(): void
  /** Sockets currently open. */
  openConnections(): number
  /** Requests whose headers arrived and that are not recorded yet (their body is still coming). */
  inFlight(): number
  close(): Promise<void>
}

/** The honest listing: one tool that takes anything. */
export const HOSTILE_NORMAL_TOOL = {
  name: "echo",
  inputSchema: { type: "object" }
} as const

const MODERN = "2026-07-28"
const HANDSHAKE = "2025-11-25"
const SERVER_INFO = { name: "phasebound-hostile", version: "0.1.0" }

/** A JSON-RPC result message as text, `__ID__` standing for the id. */
export const resultText = (result: unknown): string => `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":${JSON.stringify(result)}}`

/** One SSE `message` event carrying `text`. */
export const sseEventText = (text: string): string => `event: message\ndata: ${text}\n\n`

/** A 200 answer carrying one message text as JSON or as one SSE event. */
export const messageAnswer = (text: string, mode: "json" | "sse", extra: ReadonlyArray<readonly [string, string]> = []): HostileAnswer =>
  mode === "sse"
    ? { headers: [["content-type", "text/event-stream"], ...extra], body: sseEventText(text) }
    : { headers: [["content-type", "application/json"], ...extra], body: text }

const noContent: HostileAnswer = { status: 202 }
const notAllowed: HostileAnswer = { status: 405, headers: [["allow", "POST"]], body: "hostile: method not allowed" }

/** The honest answer of `era` to `request`. */
export const normalAnswer = (era: HostileEra, mode: "json" | "sse", request: HostileRequest): HostileAnswer => {
  const message = (result: unknown, extra: ReadonlyArray<readonly [string, string]> = []) => messageAnswer(resultText(result), mode, extra)
  const complete = era === "stateless" ? { resultType: "complete" } : {}
  if (request.httpMethod === "DELETE") return era === "handshake" ? { status: 200 } : notAllowed
  if (request.httpMethod !== "POST") return notAllowed
  if (request.method === undefined || request.id === undefined) return noContent
  switch (request.method) {
    case "server/discover":
      return era === "stateless"
        ? message({ ...complete, supportedVersions: [MODERN], capabilities: { tools: {} }, _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO } })
        : { status: 404, headers: [["content-type", "text/plain"]], body: "hostile: not found" }
    case "initialize":
      if (era === "stateless") {
        const error = { code: -32022, message: "Unsupported protocol version", data: { supported: [MODERN], requested: "" } }
        return {
          status: 400,
          headers: [["content-type", "application/json"]],
          body: `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"error":${JSON.stringify(error)}}`
        }
      }
      return message({ protocolVersion: HANDSHAKE, capabilities: { tools: {} }, serverInfo: SERVER_INFO }, [["mcp-session-id", "hostile-session"]])
    case "tools/list":
      return message({ ...complete, tools: [HOSTILE_NORMAL_TOOL] })
    case "tools/call":
      return message({ ...complete, content: [{ type: "text", text: "ok" }] })
    default: {
      const error = { code: -32601, message: "Method not found" }
      return messageAnswer(`{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"error":${JSON.stringify(error)}}`, mode)
    }
  }
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const toRequest = (req: IncomingMessage, body: string): HostileRequest => {
  const message = req.method === "POST" ? parse(body) : undefined
  const single = isRecord(message) ? message : undefined
  const id = single?.["id"]
  const method = single?.["method"]
  return {
    httpMethod: req.method ?? "",
    path: new URL(req.url ?? "/", "http://127.0.0.1").pathname,
    headers: req.headers,
    body,
    method: typeof method === "string" ? method : undefined,
    id: typeof id === "string" || typeof id === "number" ? id : undefined,
    params: single?.["params"]
  }
}

const arrivalOf = (request: HostileRequest): ToolCallArrival => {
  const params = isRecord(request.params) ? request.params : {}
  const args = isRecord(params["arguments"]) ? params["arguments"] : {}
  const meta = isRecord(params["_meta"]) ? params["_meta"] : {}
  return { id: request.id, nonce: args["nonce"], effectIdentity: meta[EFFECT_IDENTITY_KEY] }
}

const encoder = new TextEncoder()

/** The body's bytes, `__ID__` replaced by the request's id. */
export const bodyBytes = (body: string | Uint8Array | undefined, id: string | number | undefined): Uint8Array => {
  if (body === undefined) return new Uint8Array(0)
  if (typeof body !== "string") return body
  return encoder.encode(body.split(ID_PLACEHOLDER).join(JSON.stringify(id ?? null)))
}

const gone = (res: ServerResponse): boolean => res.destroyed || res.socket === null || res.socket.destroyed

const writeAll = async (res: ServerResponse, bytes: Uint8Array, answer: HostileAnswer): Promise<boolean> => {
  let offset = 0
  const write = async (size: number): Promise<boolean> => {
    if (gone(res)) return false
    const piece = bytes.subarray(offset, offset + size)
    offset += piece.length
    if (!res.write(piece)) await drainOrClose(res)
    await nextTick()
    return true
  }
  for (const size of answer.chunks ?? []) {
    if (offset >= bytes.length) break
    if (!(await write(Math.max(1, size)))) return false
  }
  const step = answer.chunkSize ?? Math.max(1, bytes.length - offset)
  while (offset < bytes.length) {
    if (!(await write(Math.max(1, step)))) return false
  }
  return !gone(res)
}

const send = async (res: ServerResponse, answer: HostileAnswer, id: string | number | undefined): Promise<void> => {
  const flat: Array<string> = []
  for (const [name, value] of answer.headers ?? []) flat.push(name, value)
  // Raw pairs: a name given twice goes out twice, values as they are.
  res.writeHead(answer.status ?? 200, flat)
  res.flushHeaders()
  if (!(await writeAll(res, bodyBytes(answer.body, id), answer))) return
  const then = answer.then ?? "end"
  if (then === "end") res.end()
  else if (then === "reset") resetConnection(res)
}

export const startHostileServer = async (options: HostileServerOptions): Promise<HostileServer> => {
  const mode = options.mode ?? "json"
  const host = options.host ?? "127.0.0.1"
  let script: HostileScript = options.script ?? (() => "normal")
  const requests: Array<HostileRequest> = []
  const arrivals: Array<ToolCallArrival> = []
  const sockets = new Set<Socket>()
  let inFlight = 0

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.on("error", () => {}) // a write racing the client's abort is expected here
    const chunks: Array<Buffer> = []
    inFlight += 1
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer)
    } catch {
      return // the client went away while sending
    } finally {
      inFlight -= 1
    }
    const request = toRequest(req, Buffer.concat(chunks).toString("utf8"))
    requests.push(request)
    if (request.method === "tools/call") arrivals.push(arrivalOf(request))
    let reply: HostileReply
    try {
      reply = script(request)
    } catch (cause) {
      reply = { status: 500, body: `hostile: the script threw: ${cause instanceof Error ? cause.message : String(cause)}` }
    }
    if (reply === "stall") return // headers never sent: only the client (or close) ends it
    await send(res, reply === "normal" ? normalAnswer(options.era, mode, request) : reply, request.id)
  }

  const server = createServer({ requestTimeout: 0, keepAliveTimeout: 5_000, noDelay: true }, (req, res) => {
    handle(req, res).catch(() => res.destroy())
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`
  let closed: Promise<void> | undefined
  return {
    url: `${origin}/mcp`,
    origin,
    requests,
    setScript: (next) => {
      script = next
    },
    toolCallArrivals: () => arrivals,
    reset: () => {
      requests.length = 0
      arrivals.length = 0
    },
    openConnections: () => sockets.size,
    inFlight: () => inFlight,
    close: () => (closed ??= new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.closeAllConnections()
      server.close(() => resolve())
    }))
  }
}
