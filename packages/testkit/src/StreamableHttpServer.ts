/**
 * A scriptable loopback MCP server over Streamable HTTP, normal by default and hostile on request
 * (`script(fault)`). It records every request and counts what client tests need to prove: side
 * effects, cancellations, releases, aborts.
 *
 * Eras (`era`):
 * - "handshake" (default): 2025-03-26, 2025-06-18, 2025-11-25: initialize, Mcp-Session-Id, GET
 *   resumption, DELETE. A request without a session is 400 "missing Mcp-Session-Id" (-32000),
 *   2026-era requests included: that is how a 2025 server looks to a 2026 client.
 * - "stateless": 2026-07-28 only: no initialize (400 + -32022 naming the supported versions), no
 *   sessions (Mcp-Session-Id ignored, never minted), GET and DELETE 405. Every request carries its
 *   `_meta` and the request metadata headers, validated as `validateStatelessRequest` (modern.ts)
 *   says; tools/call also its `Mcp-Param-*` headers. An unknown method is 404 + -32601. A
 *   notification is 202.
 * - "dual": a request carrying the modern `_meta` (and server/discover always) is served as in
 *   "stateless"; initialize starts a handshake-era session, served as in "handshake".
 *
 * With `auth` (any era), the MCP endpoint is an OAuth-protected resource whose tokens come from a
 * `startOAuthServer`: every request to it needs a Bearer token issued for this server, else 401
 * (or 403 insufficient_scope) before anything else happens, and Protected Resource Metadata is
 * served (see protectedResource.ts). Refused requests are recorded with `refused`, counted by
 * `unauthorizedCount()` / `forbiddenCount()`, and have no other effect.
 *
 * With `features` (features.ts), both eras add capabilities, tools, resources, prompts and
 * logging. A request's notifications (progress, log messages) go on its own SSE response before
 * the answer ("sse" mode); in "json" mode, in the handshake era, on an open GET stream of its
 * session, else nowhere. The handshake era gains the standalone GET stream (GET without
 * Last-Event-ID: 200 text/event-stream, kept open; DELETE of the session or `expireSession`
 * ends it); the stateless era gains `subscriptions/listen`, answered with an SSE stream in both
 * modes (listeners.ts). List changes and floods go to both kinds of stream. A fault that replaces
 * the answer (any but `delay`) replaces what the request would play out too, but its list change
 * still goes out, at once: the change did happen.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { FeatureCounters } from "./features.js"
import { FaultQueue, respondWithFault, type Fault } from "./faults.js"
import {
  classify,
  ErrorCode,
  errorMessage,
  isRecord,
  resultMessage,
  type JsonRpcId,
  type JsonRpcIncoming,
  type JsonRpcOutgoing
} from "./jsonrpc.js"
import { type SentMessage, SseChannel } from "./channel.js"
import { Listeners } from "./listeners.js"
import { makeMcpBehaviour, SUPPORTED_PROTOCOL_VERSIONS } from "./mcp.js"
import { headerValue, listenLoopback, parseJson, receive, type RecordedRequest, waitFor } from "./loopback.js"
import {
  checkParamHeaders,
  DEFAULT_MODERN_VERSIONS,
  type Era,
  HEADER_PROTOCOL_VERSION,
  hasModernMeta,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
  metaOf,
  unsupportedVersionError,
  validateStatelessRequest
} from "./modern.js"

export type { Era, RecordedRequest }
import { ResumableStreams } from "./resumable.js"
import { isImmediate, playTimeline, type Timeline } from "./timeline.js"
import { type ExtraHeaders, isGone, sendJsonBody, sendMessage, sendText, type ResponseMode } from "./wire.js"
import {
  bearerTokenOf,
  makeProtectedResource,
  type ProtectedResource,
  type ProtectedResourceOptions,
  type ResourceMetadataFault
} from "./protectedResource.js"

/** A recorded request of this server: the raw request, and its body parsed. */
export interface RecordedHttpRequest extends RecordedRequest {
  /** The parsed JSON body (POST bodies that parse; a batch is the array). */
  readonly json?: unknown
  /** `params._meta` of a single JSON-RPC message, when it is an object. */
  readonly meta?: Readonly<Record<string, unknown>>
  /** The JSON-RPC id of a single request. */
  readonly rpcId?: string | number
  /** Set when `auth` refused the request (401 or 403): it was not processed. */
  readonly refused?: 401 | 403
}

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
  /** Which protocol era(s) the server speaks (default "handshake", see the module comment). */
  readonly era?: Era
  /**
   * The versions the server names (server/discover's supportedVersions, -32022's data.supported).
   * "stateless" serves every one of them statelessly (default ["2026-07-28"]); "dual" serves
   * those that are not handshake versions statelessly (default ["2026-07-28", "2025-11-25",
   * "2025-06-18", "2025-03-26"]). Unused by "handshake".
   */
  readonly supportedVersions?: ReadonlyArray<string>
  /** ttlMs of server/discover and stateless tools/list results (default 60000; cacheScope "public"). */
  readonly ttlMs?: number
  /** server/discover's `instructions` (absent by default). */
  readonly instructions?: string
  /**
   * Adds to the stateless listing one tool per way an `x-mcp-header` declaration can be invalid
   * (bad_header_empty, bad_header_space, bad_header_duplicate, bad_header_number,
   * bad_header_in_items, bad_header_in_oneof), next to the valid `region_query`.
   */
  readonly invalidHeaderTools?: boolean
  /** Adds `typed_headers` (integer `Count`, boolean `Flag`, nested string `Zone` headers) to the stateless listing. */
  readonly typedHeaderTool?: boolean
  /**
   * Every DELETE is received (counted by `deletes()`) and never answered, whatever the era: a
   * server that never completes a session's release. Only the client's own bound ends the
   * request, and the response it closes is counted by `abortedResponses()`. Default false.
   */
  readonly stallDeletes?: boolean
  /**
   * Makes the MCP endpoint an OAuth-protected resource (MCP authorization, RFC 6750, RFC 9728)
   * accepting the tokens of `auth.oauth` (see protectedResource.ts). Default: no authorization.
   */
  readonly auth?: ProtectedResourceOptions
  /**
   * The long-lived connection features (features.ts and the module comment): capabilities,
   * tools, resources, prompts, logging, the GET stream (handshake era) and
   * `subscriptions/listen` (stateless era). Default false: none of it, listings as before.
   */
  readonly features?: boolean
  /** With `features`: how many `test://docs/i` resources are listed (default 3). */
  readonly resources?: number
  /**
   * Adds the tools with a lasting effect of effects.ts (`lookup` read-only, `upsert` idempotent,
   * `append` neither), after the other tools. Default false.
   */
  readonly effectTools?: boolean
}

export interface TestServer extends FeatureCounters {
  /** e.g. http://127.0.0.1:PORT/mcp */
  readonly url: string
  readonly port: number
  /** Every request received, in order: headers (lower-case names), raw body, parsed body and `_meta`. */
  readonly requests: ReadonlyArray<RecordedHttpRequest>
  /** Executions of the side-effecting `increment` tool (one per arriving request, whatever the fault). */
  counter(): number
  /** JSON-RPC messages with that method that arrived (and, with `auth`, were not refused). */
  rpcCalls(method: string): number
  /** DELETE requests received. */
  deletes(): number
  /** Answers sent with `resultType: "input_required"` (by `ask_name` or the `input-required` fault). */
  inputRounds(): number
  /** Sockets currently open. */
  openConnections(): number
  /** Sockets accepted since the start: a client that reuses connections keeps this low. */
  acceptedConnections(): number
  /** Responses whose connection closed before the server finished them. */
  abortedResponses(): number
  /** Bytes handed to the socket by never-ending bodies, in total. */
  bytesWritten(): number
  /** Never-ending bodies that stopped being written because the client left: their bytes are final. */
  neverEndingStopped(): number
  /** Polls until `pred` holds; rejects after `timeoutMs` (default 5000). */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>
  script(fault: Fault): void
  clearFaults(): void
  /** Forgets all sessions: later requests with an old Mcp-Session-Id get 404. */
  expireSession(): void
  /** With `auth`: where the Protected Resource Metadata is served (undefined without `auth` or with metadata "none"). */
  readonly resourceMetadataUrl: string | undefined
  /** With `auth`: the resource accepted tokens must be issued for, the PRM's `resource` (undefined without `auth`). */
  readonly resource: string | undefined
  /** Requests to the MCP path refused 401 by `auth` (0 without it). */
  unauthorizedCount(): number
  /** Requests to the MCP path refused 403 insufficient_scope by `auth` (0 without it). */
  forbiddenCount(): number
  /** Requests received at the PRM path (0 without `auth`). */
  resourceMetadataRequests(): number
  /** Every `Authorization: Bearer` token received, on any path, in order (with or without `auth`). */
  bearerTokens(): ReadonlyArray<string>
  /** Adds a Protected Resource Metadata fault (needs `auth`). `clearFaults()` clears these too. */
  scriptAuth(fault: ResourceMetadataFault): void
  /** Open GET streams plus open subscriptions that agreed to `toolsListChanged`: who a list change reaches now. */
  listChangedListeners(): number
  /**
   * With `features`: adds `count` tools (default 1) as `change_tools` does and sends every
   * listener a `notifications/tools/list_changed`; returns how many were sent.
   */
  changeTools(count?: number): number
  /**
   * With `features`: until the returned function is called, an answer that follows a request's
   * notifications waits (they are sent on time). Where the notifications travel on another
   * stream than the answer (JSON answers), a test orders them first by releasing the answer once
   * the client has them.
   */
  holdAnswers(): () => void
  /** With `features`: sends every listener `count` debug log messages of `bytes` bytes of data (default 100); returns how many were sent. */
  floodNotifications(count: number, bytes?: number): number
  /** Ends every subscription gracefully (its listen request's result, then the end of the stream); returns how many. */
  endSubscriptions(): number
  /** Closes the server and destroys every open socket. */
  close(): Promise<void>
}

const MCP_PATH = "/mcp"
const SESSION_HEADER = "mcp-session-id"

/** What a recorded POST adds from its parsed body. */
const parsedFields = (value: unknown): Pick<RecordedHttpRequest, "json" | "meta" | "rpcId"> => {
  const meta = Array.isArray(value) ? undefined : metaOf(isRecord(value) ? value["params"] : undefined)
  const id = isRecord(value) ? value["id"] : undefined
  return {
    json: value,
    ...(meta === undefined ? {} : { meta }),
    ...(typeof id === "string" || typeof id === "number" ? { rpcId: id } : {})
  }
}

const DUAL_DEFAULT_VERSIONS: ReadonlyArray<string> = [
  ...DEFAULT_MODERN_VERSIONS,
  ...[...SUPPORTED_PROTOCOL_VERSIONS].reverse()
]

export const startServer = async (options: TestServerOptions = {}): Promise<TestServer> => {
  if (options.stallDeletes !== undefined && typeof options.stallDeletes !== "boolean") {
    throw new TypeError("stallDeletes must be a boolean")
  }
  const mode: ResponseMode = options.mode ?? "json"
  const sessionsEnabled = options.sessions ?? true
  const era: Era = options.era ?? "handshake"
  const supportedVersions: ReadonlyArray<string> = [
    ...(options.supportedVersions ?? (era === "dual" ? DUAL_DEFAULT_VERSIONS : DEFAULT_MODERN_VERSIONS))
  ]
  /** The versions served statelessly: in "dual", the handshake versions are initialize's. */
  const statelessVersions = era === "dual"
    ? supportedVersions.filter((version) => !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    : supportedVersions
  const mcp = makeMcpBehaviour({ ...options, supportedVersions })
  let url = ""
  let neverEndingBytes = 0
  let neverEndingStopped = 0
  const auth: ProtectedResource | undefined = options.auth === undefined ? undefined : makeProtectedResource(options.auth, MCP_PATH, {
    mcpUrl: () => url,
    onNeverEndingBytes: (n) => {
      neverEndingBytes += n
    },
    onNeverEndingStopped: () => {
      neverEndingStopped += 1
    }
  })
  const faults = new FaultQueue("streamable-http")
  const resumables = new ResumableStreams()
  const sessions = new Set<string>()
  const requests: Array<RecordedHttpRequest> = []
  const rpcCounts = new Map<string, number>()
  const sentCounts = new Map<string, number>()
  let timelinesStopped = 0
  /** Answers waiting for `holdAnswers`' release; `undefined` while answers are not held. */
  let heldAnswers: Array<() => void> | undefined
  const answerWhenReleased = (send: () => void): void => {
    if (heldAnswers === undefined) send()
    else heldAnswers.push(send)
  }
  let deleteCount = 0
  let inputRoundCount = 0
  let abortedCount = 0
  let closing = false

  const countSent = (message: SentMessage): void => {
    if ("method" in message) sentCounts.set(message.method, (sentCounts.get(message.method) ?? 0) + 1)
  }
  const listeners = new Listeners(countSent, () => closing)
  /** The session a request or GET belongs to, for its log level and GET streams ("" without sessions). */
  const sessionOf = (req: IncomingMessage): string => (sessionsEnabled ? headerValue(req, SESSION_HEADER) ?? "" : "")

  /**
   * Sends an answer and plays the request's timeline around it: in "sse" mode its notifications
   * go on the POST's own stream first; in "json" mode on `elsewhere()` if there is one. The
   * broadcast follows the answer. A client that closes the POST stops what is left.
   */
  const answer = (
    res: ServerResponse,
    message: JsonRpcOutgoing,
    timeline: Timeline | undefined,
    headers: ExtraHeaders,
    elsewhere: () => SseChannel | undefined
  ): void => {
    if (timeline === undefined || isImmediate(timeline)) {
      sendMessage(res, message, mode, headers)
      if (timeline !== undefined) listeners.broadcast(timeline.broadcast)
      return
    }
    const channel = mode === "sse" ? SseChannel.open(res, countSent, headers) : undefined
    const cancel = playTimeline(timeline, {
      notify: (notification) => (channel ?? elsewhere())?.send(notification),
      answer: () =>
        answerWhenReleased(() => {
          if (channel !== undefined) {
            channel.send(message)
            channel.end()
          } else if (!isGone(res)) sendMessage(res, message, mode, headers)
          listeners.broadcast(timeline.broadcast)
        })
    })
    res.on("close", () => {
      if (cancel()) timelinesStopped += 1
    })
  }

  /** Under a fault that replaces the answer, the list change of a request still goes out, at once. */
  const broadcastUnderFault = (kind: Fault["kind"], timeline: Timeline | undefined): void => {
    if (kind !== "delay" && timeline !== undefined) listeners.broadcast(timeline.broadcast)
  }

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

  /** The version a request asks for: its `_meta`'s, else its header's, else initialize's, else "". */
  const requestedVersionOf = (req: IncomingMessage, params: unknown): string => {
    const fromMeta = metaOf(params)?.[META_PROTOCOL_VERSION]
    if (typeof fromMeta === "string") return fromMeta
    const fromHeader = headerValue(req, HEADER_PROTOCOL_VERSION)
    if (fromHeader !== undefined) return fromHeader
    const fromInitialize = isRecord(params) ? params["protocolVersion"] : undefined
    return typeof fromInitialize === "string" ? fromInitialize : ""
  }

  /** Whether a message is served by the stateless era (see the module comment). */
  const servesStatelessly = (req: IncomingMessage, message: JsonRpcIncoming): boolean => {
    if (era !== "dual") return era === "stateless"
    if (message.kind === "response" || message.method === "initialize") return false
    if (message.method === "server/discover" || hasModernMeta(message.params)) return true
    // No _meta at all, but the header of a stateless version and no session: a malformed 2026 request.
    const version = headerValue(req, HEADER_PROTOCOL_VERSION)
    return headerValue(req, SESSION_HEADER) === undefined && version !== undefined && statelessVersions.includes(version)
  }

  const countInputRound = (message: JsonRpcOutgoing | undefined): void => {
    if (message !== undefined && "result" in message && isRecord(message.result) && message.result["resultType"] === "input_required") {
      inputRoundCount += 1
    }
  }

  const handleStatelessPost = (req: IncomingMessage, res: ServerResponse, message: JsonRpcIncoming): Promise<void> | void => {
    if (message.kind === "response") {
      const error = { code: ErrorCode.InvalidRequest, message: "Invalid Request: no JSON-RPC responses in the stateless era" }
      return sendJsonBody(res, 400, errorMessage(null, error))
    }
    const id = message.kind === "notification" ? null : message.id
    const { method, params } = message
    // The answer the request gets unless a fault replaces it; undefined for a notification (202).
    let normal: { readonly status: number; readonly message: JsonRpcOutgoing } | undefined
    let timeline: Timeline | undefined
    let listening: Readonly<Record<string, unknown>> | undefined
    if (message.kind === "request") {
      if (method === "initialize") {
        // Only in "stateless": the spec asks a modern-only server to name its versions here.
        const error = unsupportedVersionError(supportedVersions, requestedVersionOf(req, params))
        normal = { status: 400, message: errorMessage(id, error) }
      } else {
        const header = (name: string) => headerValue(req, name)
        const checked = validateStatelessRequest({
          method,
          params,
          header,
          accepted: statelessVersions,
          supported: supportedVersions
        })
        if (!checked.ok) return sendJsonBody(res, checked.refusal.status, errorMessage(id, checked.refusal.error))
        if (method === "tools/call" && isRecord(params)) {
          const tool = mcp.modernTools.find((candidate) => candidate.name === params["name"])
          const refused = tool === undefined ? undefined : checkParamHeaders(tool.inputSchema, params["arguments"], header)
          if (refused !== undefined) return sendJsonBody(res, refused.status, errorMessage(id, refused.error))
        }
        // Run the request (side effects included) before any fault decides how it is answered.
        const outcome = mcp.handleModern(method, params)
        if (outcome._tag === "listen") {
          listening = outcome.notifications
          // What a fault answers in place of the stream: the graceful end of the subscription.
          normal = { status: 200, message: resultMessage(id, { resultType: "complete", _meta: { [META_SUBSCRIPTION_ID]: id } }) }
        } else if (outcome._tag === "result") {
          normal = { status: 200, message: resultMessage(id, outcome.result) }
          timeline = outcome.timeline
        } else {
          normal = {
            status: outcome.status ?? (outcome.error.code === ErrorCode.MethodNotFound ? 404 : 200),
            message: errorMessage(id, outcome.error)
          }
        }
      }
    }
    const respondNormally = () => {
      if (normal === undefined) {
        res.writeHead(202)
        res.end()
      } else if (listening !== undefined && id !== null) {
        listeners.listen(res, id, listening)
      } else if (normal.status === 200) {
        countInputRound(normal.message)
        // No stream of its own in "json" mode: a stateless request's notifications go nowhere.
        answer(res, normal.message, timeline, {}, () => undefined)
      } else sendJsonBody(res, normal.status, normal.message)
    }
    const fault = faults.take(method)
    if (fault === undefined) return respondNormally()
    broadcastUnderFault(fault.kind, timeline)
    if (fault.kind === "input-required") inputRoundCount += 1
    return respondWithFault(fault, {
      res,
      method,
      id,
      normal: normal?.message,
      mode,
      headers: {},
      respondNormally,
      onNeverEndingBytes: (n) => {
        neverEndingBytes += n
      },
      onNeverEndingStopped: () => {
        neverEndingStopped += 1
      },
      openResumable: (response, events, retryMs) => {
        resumables.open(res, response, undefined, { events, retryMs, headers: {} })
      },
      requestedVersion: requestedVersionOf(req, params),
      issueRequestState: mcp.issueRequestState,
      supportedVersions
    })
  }

  const handlePost = async (
    req: IncomingMessage,
    res: ServerResponse,
    parsed: ReturnType<typeof parseJson>
  ): Promise<void> => {
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
    if (servesStatelessly(req, message)) return handleStatelessPost(req, res, message)
    const id = message.kind === "notification" ? null : message.id
    const isInitialize = message.kind === "request" && message.method === "initialize"
    if (!isInitialize && !checkSession(req, res, id)) return

    // Run the request (side effects included) before any fault decides how it is answered.
    let normal: JsonRpcOutgoing | undefined
    let timeline: Timeline | undefined
    const headers: Record<string, string> = {}
    const session = sessionOf(req)
    if (message.kind === "request") {
      const outcome = mcp.handle(message.method, message.params, session)
      normal = outcome._tag === "result" ? resultMessage(message.id, outcome.result) : errorMessage(message.id, outcome.error)
      if (outcome._tag === "result") timeline = outcome.timeline
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
      } else answer(res, normal, timeline, headers, () => listeners.getStreamOf(session))
    }

    if (message.kind === "response") return respondNormally()
    const fault = faults.take(message.method)
    if (fault === undefined) return respondNormally()
    broadcastUnderFault(fault.kind, timeline)
    if (fault.kind === "input-required") inputRoundCount += 1
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
      onNeverEndingStopped: () => {
        neverEndingStopped += 1
      },
      openResumable: (response, events, retryMs) => {
        resumables.open(res, response, sessionsEnabled ? requestSession : undefined, { events, retryMs, headers })
      },
      requestedVersion: requestedVersionOf(req, message.params),
      issueRequestState: mcp.issueRequestState,
      supportedVersions
    })
  }

  const handleGet = (req: IncomingMessage, res: ServerResponse): void => {
    // No GET stream and no resumption in the stateless era (Last-Event-ID is ignored).
    if (era === "stateless") return sendText(res, 405, "testkit: the stateless era has no GET stream", { allow: "POST" })
    const lastEventId = headerValue(req, "last-event-id")
    if (lastEventId === undefined) {
      // No standalone server-to-client stream without features: only resumption of a resumable POST stream.
      if (mcp.features === undefined) return sendText(res, 405, "testkit: no standalone SSE stream", { allow: "POST, DELETE" })
      if (!checkSession(req, res, null)) return
      return listeners.openGetStream(res, sessionOf(req))
    }
    if (!checkSession(req, res, null)) return
    const sessionId = sessionsEnabled ? headerValue(req, SESSION_HEADER) : undefined
    const found = resumables.lookup(lastEventId, sessionId)
    if (found._tag !== "found") return sendText(res, 400, `testkit: cannot resume (${found._tag})`)
    resumables.resume(res, found, {})
  }

  const handleDelete = (req: IncomingMessage, res: ServerResponse): void => {
    deleteCount += 1
    if (options.stallDeletes === true) return // never answered: the socket stays open until the client (or close) ends it
    if (era === "stateless") return sendText(res, 405, "testkit: the stateless era has no sessions", { allow: "POST" })
    if (!sessionsEnabled) return sendText(res, 405, "testkit: sessions are disabled", { allow: "POST, GET" })
    if (!checkSession(req, res, null)) return
    const sessionId = headerValue(req, SESSION_HEADER)
    if (sessionId !== undefined) {
      sessions.delete(sessionId)
      listeners.endGetStreams(sessionId)
    }
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
    const received: Array<RecordedRequest> = []
    const body = await receive(req, received)
    const recorded = received[0]
    if (body === undefined || recorded === undefined) return // the client went away while sending
    const parsed = req.method === "POST" ? parseJson(body) : { ok: false as const }
    const entry: RecordedHttpRequest = parsed.ok ? { ...recorded, ...parsedFields(parsed.value) } : recorded
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
    if (auth !== undefined && path === MCP_PATH) {
      // Authorization comes first: a refused request is answered and has no other effect.
      const refused = auth.guard(req, res, parsed.ok ? parsed.value : undefined)
      if (refused !== undefined) {
        requests.push({ ...entry, refused })
        return
      }
    }
    requests.push(entry)
    if (auth?.metadataPath !== undefined && path === auth.metadataPath) return auth.serveMetadata(req, res)
    if (path !== MCP_PATH) return sendText(res, 404, "testkit: not found")
    switch (req.method) {
      case "POST":
        return handlePost(req, res, parsed)
      case "GET":
        return handleGet(req, res)
      case "DELETE":
        return handleDelete(req, res)
      default:
        return sendText(res, 405, "testkit: method not allowed", { allow: "POST, GET, DELETE" })
    }
  }

  const featuresOf = (method: string) => {
    if (mcp.features === undefined) throw new TypeError(`${method} needs the \`features\` option`)
    return mcp.features
  }

  const listener = await listenLoopback(handle)
  const port = listener.port
  url = `http://127.0.0.1:${port}${MCP_PATH}`

  let closed: Promise<void> | undefined
  const close = (): Promise<void> => (closed ??= shutdown())
  const shutdown = async (): Promise<void> => {
    closing = true
    resumables.clear()
    faults.clear()
    auth?.clearFaults()
    await listener.close()
  }

  return {
    url,
    port,
    requests,
    counter: () => mcp.counter(),
    rpcCalls: (method) => rpcCounts.get(method) ?? 0,
    deletes: () => deleteCount,
    inputRounds: () => inputRoundCount,
    openConnections: listener.openConnections,
    acceptedConnections: listener.acceptedConnections,
    abortedResponses: () => abortedCount,
    bytesWritten: () => neverEndingBytes,
    neverEndingStopped: () => neverEndingStopped,
    waitFor,
    script: (fault) => faults.push(fault),
    clearFaults: () => {
      faults.clear()
      auth?.clearFaults()
    },
    expireSession: () => {
      sessions.clear()
      listeners.endGetStreams()
    },
    resourceMetadataUrl: auth?.metadataUrl(),
    resource: auth?.resource(),
    unauthorizedCount: () => auth?.unauthorizedCount() ?? 0,
    forbiddenCount: () => auth?.forbiddenCount() ?? 0,
    resourceMetadataRequests: () => auth?.metadataRequests() ?? 0,
    bearerTokens: () =>
      requests.flatMap((request) => {
        const token = bearerTokenOf(request.headers["authorization"])
        return token === undefined ? [] : [token]
      }),
    scriptAuth: (fault) => {
      if (auth === undefined) throw new TypeError("scriptAuth needs the `auth` option")
      auth.script(fault)
    },
    toolCalls: (name) => mcp.toolCalls(name),
    effectIdentities: (name) => mcp.effectIdentities(name),
    notificationsSent: (method) => sentCounts.get(method) ?? 0,
    progressSent: () => sentCounts.get("notifications/progress") ?? 0,
    logMessagesSent: () => sentCounts.get("notifications/message") ?? 0,
    listChangedSent: () => sentCounts.get("notifications/tools/list_changed") ?? 0,
    subscriptionsClosed: () => listeners.closedSubscriptions(),
    timelinesStopped: () => timelinesStopped,
    listChangedListeners: () => listeners.count(),
    changeTools: (count = 1) => {
      if (!Number.isSafeInteger(count) || count < 0) throw new RangeError("changeTools: count must be an integer >= 0")
      return listeners.broadcast([featuresOf("changeTools").changeTools(count)])
    },
    holdAnswers: () => {
      heldAnswers ??= []
      return () => {
        const waiting = heldAnswers ?? []
        heldAnswers = undefined
        for (const send of waiting) send()
      }
    },
    floodNotifications: (count, bytes = 100) => {
      if (!Number.isSafeInteger(count) || count < 0 || !Number.isSafeInteger(bytes) || bytes < 0) {
        throw new RangeError("floodNotifications: count and bytes must be integers >= 0")
      }
      return listeners.broadcast(featuresOf("floodNotifications").flood(count, bytes))
    },
    endSubscriptions: () => listeners.endSubscriptions(),
    close
  }
}
