/** Raw helpers for the `features` tests: SSE responses of POSTs and GETs, and 2026-07-28 requests. */
import type { TestServer } from "../src/index.js"
import { SseConnection, type SseEvent } from "./legacyHelpers.js"

export const MODERN_VERSION = "2026-07-28"

export interface RpcBody {
  readonly jsonrpc: "2.0"
  readonly id?: string | number | null
  readonly method?: string
  readonly params?: any
  readonly result?: any
  readonly error?: { readonly code: number; readonly message: string; readonly data?: any }
}

const streams: Array<SseConnection> = []

/** Reads a response as an SSE stream (aborting `controller` closes it). */
export const sseOf = (response: Response, controller: AbortController): SseConnection => {
  if (response.body === null) throw new Error("no body")
  const connection = new SseConnection(response, response.body.getReader(), controller)
  streams.push(connection)
  return connection
}

/** Aborts every stream opened here (for afterEach). */
export const closeStreams = (): void => {
  for (const stream of streams.splice(0)) stream.close()
}

export const bodyOf = (event: SseEvent): RpcBody => JSON.parse(event.data) as RpcBody

/** Reads events through the first response (included): the stream's messages in order. */
export const untilAnswer = async (stream: SseConnection, timeoutMs = 2_000): Promise<Array<RpcBody>> => {
  const seen: Array<RpcBody> = []
  for (;;) {
    const body = bodyOf(await stream.next(timeoutMs))
    seen.push(body)
    if ("result" in body || "error" in body) return seen
  }
}

export interface Request {
  readonly id?: string | number
  readonly sessionId?: string | undefined
  /** Extra `_meta` (2025: the whole `_meta`; 2026: merged into the era's fields). */
  readonly meta?: Record<string, unknown>
  readonly notification?: boolean
  /** Header overrides for 2026 requests: a string replaces, null removes. */
  readonly headers?: Record<string, string | null>
}

/** A POST of the handshake era (2025), with its own abort controller. */
export const post2025 = async (server: TestServer, method: string, params: Record<string, unknown> = {}, request: Request = {}) => {
  const controller = new AbortController()
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" }
  if (request.sessionId !== undefined) headers["mcp-session-id"] = request.sessionId
  const fullParams = request.meta === undefined ? params : { ...params, _meta: request.meta }
  const message = request.notification === true
    ? { jsonrpc: "2.0", method, params: fullParams }
    : { jsonrpc: "2.0", id: request.id ?? 1, method, params: fullParams }
  const response = await fetch(server.url, { method: "POST", headers, body: JSON.stringify(message), signal: controller.signal })
  return { response, controller }
}

/** A POST of the stateless era (2026-07-28): `_meta` in the body, the metadata headers. */
export const post2026 = async (server: TestServer, method: string, params: Record<string, unknown> = {}, request: Request = {}) => {
  const controller = new AbortController()
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "features-test", version: "0" },
    ...request.meta
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method
  }
  const name = method === "resources/read" ? params["uri"] : params["name"]
  if (typeof name === "string" && ["tools/call", "prompts/get", "resources/read"].includes(method)) headers["mcp-name"] = name
  for (const [key, value] of Object.entries(request.headers ?? {})) {
    if (value === null) delete headers[key.toLowerCase()]
    else headers[key.toLowerCase()] = value
  }
  const message = request.notification === true
    ? { jsonrpc: "2.0", method, params: { ...params, _meta: meta } }
    : { jsonrpc: "2.0", id: request.id ?? 1, method, params: { ...params, _meta: meta } }
  const response = await fetch(server.url, { method: "POST", headers, body: JSON.stringify(message), signal: controller.signal })
  return { response, controller }
}

type Posted = { readonly response: Response; readonly controller: AbortController }

/** The JSON-RPC answer of a POST, whether it came as JSON or at the end of an SSE stream. */
export const answerOf = async (posted: Posted): Promise<RpcBody> => {
  if (posted.response.headers.get("content-type") !== "text/event-stream") return (await posted.response.json()) as RpcBody
  const last = (await messagesOf(posted)).at(-1)
  if (last === undefined) throw new Error("no answer on the stream")
  return last
}

/** Every message of a POST's SSE response, through the answer. */
export const messagesOf = (posted: Posted): Promise<Array<RpcBody>> => untilAnswer(sseOf(posted.response, posted.controller))

/** initialize + notifications/initialized; the session id. */
export const handshake2025 = async (server: TestServer, protocolVersion = "2025-11-25") => {
  const init = await post2025(server, "initialize", { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "0" } })
  const body = await answerOf(init)
  const sessionId = init.response.headers.get("mcp-session-id") ?? undefined
  const initialized = await post2025(server, "notifications/initialized", {}, { sessionId, notification: true })
  await initialized.response.arrayBuffer()
  return { sessionId, capabilities: body.result.capabilities as Record<string, unknown> }
}

/** Opens the standalone GET stream of a session. */
export const openGet = async (server: TestServer, sessionId: string | undefined): Promise<SseConnection> => {
  const controller = new AbortController()
  const headers: Record<string, string> = { accept: "text/event-stream" }
  if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
  const response = await fetch(server.url, { headers, signal: controller.signal })
  return sseOf(response, controller)
}

export const textOf = (body: RpcBody): string | undefined => body.result?.content?.[0]?.text
