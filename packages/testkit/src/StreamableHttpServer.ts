/**
 * A scriptable loopback MCP server over Streamable HTTP (2025-03-26, 2025-06-18, 2025-11-25),
 * normal by default and hostile on request (`script(fault)`). It records every request and
 * counts what client tests need to prove: side effects, cancellations, releases, aborts.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { FaultQueue, respondWithFault, type Fault } from "./faults.js"
import {
  classify,
  ErrorCode,
  errorMessage,
  resultMessage,
  type JsonRpcId,
  type JsonRpcOutgoing
} from "./jsonrpc.js"
import { makeMcpBehaviour } from "./mcp.js"
import { headerValue, listenLoopback, parseJson, receive, type RecordedRequest, waitFor } from "./loopback.js"

export type { RecordedRequest }
import { ResumableStreams } from "./resumable.js"
import { sendJsonBody, sendMessage, sendText, type ResponseMode } from "./wire.js"

export interface TestServerOptions {
  /** How POST responses are sent (default "json"); "sse" = one `message` event, then the stream ends. */
  readonly mode?: ResponseMode
  /** What initialize answers; default: the client's version if supported, else "2025-06-18". */
  readonly protocolVersion?: string
  /** Issue Mcp-Session-Id on initialize and require it afterwards (default true). */
  readonly sessions?: boolean
  /** Additional generated tools "tool-0".."tool-N-1" (default 0). */
  readonly extraTools?: number
  /** tools/list page size, with nextCursor pagination (default: all in one page). */
  readonly pageSize?: number
  /** Pads the `add` tool's inputSchema description to this many bytes. */
  readonly schemaPadBytes?: number
}


export interface TestServer {
  /** e.g. http://127.0.0.1:PORT/mcp */
  readonly url: string
  readonly port: number
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Executions of the side-effecting `increment` tool (one per arriving request, whatever the fault). */
  counter(): number
  /** JSON-RPC messages with that method that arrived. */
  rpcCalls(method: string): number
  /** DELETE requests received. */
  deletes(): number
  /** Sockets currently open. */
  openConnections(): number
  /** Sockets accepted since the start: a client that reuses connections keeps this low. */
  acceptedConnections(): number
  /** Responses whose connection closed before the server finished them. */
  abortedResponses(): number
  /** Bytes handed to the socket by never-ending bodies, in total. */
  bytesWritten(): number
  /** Polls until `pred` holds; rejects after `timeoutMs` (default 5000). */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>
  script(fault: Fault): void
  clearFaults(): void
  /** Forgets all sessions: later requests with an old Mcp-Session-Id get 404. */
  expireSession(): void
  /** Closes the server and destroys every open socket. */
  close(): Promise<void>
}

const MCP_PATH = "/mcp"
const SESSION_HEADER = "mcp-session-id"

export const startServer = async (options: TestServerOptions = {}): Promise<TestServer> => {
  const mode: ResponseMode = options.mode ?? "json"
  const sessionsEnabled = options.sessions ?? true
  const mcp = makeMcpBehaviour(options)
  const faults = new FaultQueue()
  const resumables = new ResumableStreams()
  const sessions = new Set<string>()
  const requests: Array<RecordedRequest> = []
  const rpcCounts = new Map<string, number>()
  let deleteCount = 0
  let abortedCount = 0
  let neverEndingBytes = 0
  let closing = false

  /** Session rule for every request but initialize: missing → 400, unknown → 404. */
  const checkSession = (req: IncomingMessage, res: ServerResponse, id: JsonRpcId): boolean => {
    if (!sessionsEnabled) return true
    const sessionId = headerValue(req, SESSION_HEADER)
    if (sessionId === undefined) {
      sendJsonBody(res, 400, errorMessage(id, { code: ErrorCode.ServerError, message: "Bad Request: missing Mcp-Session-Id" }))
      return false
    }
    if (!sessions.has(sessionId)) {
      sendJsonBody(res, 404, errorMessage(id, { code: ErrorCode.SessionNotFound, message: "Session not found" }))
      return false
    }
    return true
  }

  const handlePost = async (req: IncomingMessage, res: ServerResponse, body: string): Promise<void> => {
    const parsed = parseJson(body)
    if (!parsed.ok) {
      return sendJsonBody(res, 400, errorMessage(null, { code: ErrorCode.ParseError, message: "Parse error" }))
    }
    if (Array.isArray(parsed.value)) {
      for (const item of parsed.value) countRpc(classify(item))
      return sendJsonBody(
        res,
        400,
        errorMessage(null, { code: ErrorCode.InvalidRequest, message: "Batches are not supported" })
      )
    }
    const message = classify(parsed.value)
    countRpc(message)
    if (message === undefined) {
      return sendJsonBody(res, 400, errorMessage(null, { code: ErrorCode.InvalidRequest, message: "Invalid Request" }))
    }
    const id = message.kind === "notification" ? null : message.id
    const isInitialize = message.kind === "request" && message.method === "initialize"
    if (!isInitialize && !checkSession(req, res, id)) return

    // Run the request (side effects included) before any fault decides how it is answered.
    let normal: JsonRpcOutgoing | undefined
    const headers: Record<string, string> = {}
    if (message.kind === "request") {
      const outcome = mcp.handle(message.method, message.params)
      normal = outcome._tag === "result" ? resultMessage(message.id, outcome.result) : errorMessage(message.id, outcome.error)
      if (isInitialize && outcome._tag === "result" && sessionsEnabled) {
        const sessionId = randomUUID()
        sessions.add(sessionId)
        headers["Mcp-Session-Id"] = sessionId
      }
    }
    const respondNormally = () => {
      if (normal === undefined) {
        res.writeHead(202)
        res.end()
      } else sendMessage(res, normal, mode, headers)
    }

    if (message.kind === "response") return respondNormally()
    const fault = faults.take(message.method)
    if (fault === undefined) return respondNormally()
    const requestSession = headerValue(req, SESSION_HEADER) ?? headers["Mcp-Session-Id"]
    return respondWithFault(fault, {
      res,
      method: message.method,
      id,
      normal,
      mode,
      headers,
      respondNormally,
      onNeverEndingBytes: (n) => {
        neverEndingBytes += n
      },
      openResumable: (response, events, retryMs) => {
        resumables.open(res, response, sessionsEnabled ? requestSession : undefined, { events, retryMs, headers })
      }
    })
  }

  const handleGet = (req: IncomingMessage, res: ServerResponse): void => {
    const lastEventId = headerValue(req, "last-event-id")
    // No standalone server-to-client stream: only resumption of a resumable POST stream.
    if (lastEventId === undefined) return sendText(res, 405, "testkit: no standalone SSE stream", { allow: "POST, DELETE" })
    if (!checkSession(req, res, null)) return
    const sessionId = sessionsEnabled ? headerValue(req, SESSION_HEADER) : undefined
    const found = resumables.lookup(lastEventId, sessionId)
    if (found._tag !== "found") return sendText(res, 400, `testkit: cannot resume (${found._tag})`)
    resumables.resume(res, found, {})
  }

  const handleDelete = (req: IncomingMessage, res: ServerResponse): void => {
    deleteCount += 1
    if (!sessionsEnabled) return sendText(res, 405, "testkit: sessions are disabled", { allow: "POST, GET" })
    if (!checkSession(req, res, null)) return
    const sessionId = headerValue(req, SESSION_HEADER)
    if (sessionId !== undefined) sessions.delete(sessionId)
    res.writeHead(200)
    res.end()
  }

  const countRpc = (message: ReturnType<typeof classify>): void => {
    if (message === undefined || message.kind === "response") return
    rpcCounts.set(message.method, (rpcCounts.get(message.method) ?? 0) + 1)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.on("close", () => {
      if (!res.writableFinished && !closing) abortedCount += 1
    })
    res.on("error", () => {}) // a write racing a client abort is expected here, not a failure
    const body = await receive(req, requests)
    if (body === undefined) return // the client went away while sending
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
    if (path !== MCP_PATH) return sendText(res, 404, "testkit: not found")
    switch (req.method) {
      case "POST":
        return handlePost(req, res, body)
      case "GET":
        return handleGet(req, res)
      case "DELETE":
        return handleDelete(req, res)
      default:
        return sendText(res, 405, "testkit: method not allowed", { allow: "POST, GET, DELETE" })
    }
  }

  const listener = await listenLoopback(handle)
  const port = listener.port

  let closed: Promise<void> | undefined
  const close = (): Promise<void> => (closed ??= shutdown())
  const shutdown = async (): Promise<void> => {
    closing = true
    resumables.clear()
    faults.clear()
    await listener.close()
  }

  return {
    url: `http://127.0.0.1:${port}${MCP_PATH}`,
    port,
    requests,
    counter: () => mcp.counter(),
    rpcCalls: (method) => rpcCounts.get(method) ?? 0,
    deletes: () => deleteCount,
    openConnections: listener.openConnections,
    acceptedConnections: listener.acceptedConnections,
    abortedResponses: () => abortedCount,
    bytesWritten: () => neverEndingBytes,
    waitFor,
    script: (fault) => faults.push(fault),
    clearFaults: () => faults.clear(),
    expireSession: () => sessions.clear(),
    close
  }
}


