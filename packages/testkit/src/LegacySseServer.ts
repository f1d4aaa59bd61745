/**
 * A scriptable loopback MCP server over the legacy HTTP+SSE transport (protocol revision
 * 2024-11-05), normal by default and hostile on request (`script(fault)`).
 *
 * The client GETs the SSE URL (`/sse`); the server answers `200 text/event-stream` and sends
 * first an `endpoint` event whose data is the POST URL (`/messages?sessionId=<id>`). Each
 * JSON-RPC message is POSTed there and answered `202 Accepted` with an empty body; responses
 * travel on the GET stream as `event: message` events. Closing the GET stream ends the session.
 * The server serves the legacy transport only: a POST to the SSE URL (the Streamable HTTP probe
 * of an "auto" client) is refused with `postToSsePath` (404 by default).
 *
 * With `features` (features.ts): capabilities, tools, resources, prompts and logging, as the
 * handshake era of the Streamable HTTP server has them. Everything goes on the session's GET
 * stream: a request's notifications (progress, log messages) before its answer, list changes
 * and floods on every session's stream. A `notifications/cancelled` for a request still playing
 * out stops it: nothing more is sent for it. A fault that replaces the answer (any but `delay`,
 * `endless-accepted` and `unsolicited-frame`) replaces what the request would play out too, but
 * its list change still goes out, at once.
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, type Scope } from "effect"
import { classify, errorMessage, isRecord, type JsonRpcNotification, resultMessage, type JsonRpcOutgoing } from "./jsonrpc.js"
import {
  DEFAULT_LEGACY_CHUNK_SIZE,
  DEFAULT_MALFORMED_ENDPOINT,
  endpointFrame,
  exactNotificationFrame,
  LegacyFaultQueue,
  logNotification,
  neverEndingFramePrefix,
  type LegacyFault,
  type LegacyStreamFault
} from "./legacyFaults.js"
import type { FeatureCounters } from "./features.js"
import { listenLoopback, parseJson, receive, type RecordedRequest, waitFor } from "./loopback.js"
import { makeMcpBehaviour } from "./mcp.js"
import { exactSseFrame, paddedResultTemplate, sseFrame } from "./payload.js"
import { playTimeline, type Timeline } from "./timeline.js"
import { isGone, sendText, sseHeaders, writeChunks, writeChunksThenReset, writeForever } from "./wire.js"

export const LEGACY_PROTOCOL_VERSION = "2024-11-05"
export const LEGACY_SSE_PATH = "/sse"
export const LEGACY_MESSAGES_PATH = "/messages"

export interface LegacyServerOptions {
  /** What initialize answers (default "2024-11-05", whatever the client asks for). */
  readonly protocolVersion?: string
  /** Additional generated tools "tool-0".."tool-N-1" (default 0). */
  readonly extraTools?: number
  /** tools/list page size, with nextCursor pagination (default: all in one page). */
  readonly pageSize?: number
  /** Pads the `add` tool's inputSchema description to this many bytes. */
  readonly schemaPadBytes?: number
  /**
   * The answer to a POST to the SSE path itself (the Streamable HTTP probe of a client in "auto"
   * mode): 404 (default), 405 or 400, with a plain-text body (never a JSON-RPC error).
   */
  readonly postToSsePath?: 400 | 404 | 405
  /** Delay before answering a POST to the SSE path (a slow refusal of the Streamable HTTP probe). */
  readonly postToSsePathDelayMs?: number
  /** The body of every `202` to a POST (default empty; the official SDK's server sends `Accepted`). */
  readonly acceptedBody?: string
  /** The long-lived connection features (features.ts and the module comment). Default false: none of it. */
  readonly features?: boolean
  /** With `features`: how many `test://docs/i` resources are listed (default 3). */
  readonly resources?: number
  /**
   * Adds the tools with a lasting effect of effects.ts (`lookup` read-only, `upsert` idempotent,
   * `append` neither), after the other tools. Default false.
   */
  readonly effectTools?: boolean
}

export interface LegacyTestServer extends FeatureCounters {
  /** The SSE URL: http://127.0.0.1:PORT/sse */
  readonly url: string
  /** http://127.0.0.1:PORT */
  readonly origin: string
  readonly port: number
  /** Every request received, in order (GETs of the SSE URL included, with an empty body). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Executions of the side-effecting `increment` tool (one per arriving request, whatever the fault). */
  counter(): number
  /** JSON-RPC messages with that method that arrived on a known session. */
  rpcCalls(method: string): number
  /** GET SSE streams currently open (a stream the server ended no longer counts). */
  openStreams(): number
  /** GET SSE streams closed by the client (not by the server): proves the client released them. */
  closedStreams(): number
  /** Sockets currently open. */
  openConnections(): number
  /** Sockets accepted since the start. */
  acceptedConnections(): number
  /** Bodies of `endless-accepted` POST answers the client cut (closed before the end). */
  acceptedBodiesCut(): number
  /** POSTs left unanswered by `post-never-answered` that the client closed (gave up on). */
  unansweredPostsClosed(): number
  /** Bytes handed to the socket by never-ending frames, in total. */
  bytesWritten(): number
  /** Never-ending frames that stopped being written because the client left: their bytes are final. */
  neverEndingStopped(): number
  /** Polls until `pred` holds; rejects after `timeoutMs` (default 5000). */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>
  script(fault: LegacyFault): void
  clearFaults(): void
  /** Open GET streams: who a list change reaches now. */
  listChangedListeners(): number
  /** With `features`: adds `count` tools (default 1) and sends every session a list change; returns how many were sent. */
  changeTools(count?: number): number
  /** With `features`: sends every session `count` debug log messages of `bytes` bytes of data (default 100); returns how many. */
  floodNotifications(count: number, bytes?: number): number
  /** Closes the server and destroys every open socket. */
  close(): Promise<void>
}

/** One GET stream and the session it carries. */
interface Session {
  readonly id: string
  readonly res: ServerResponse
  open: boolean
  endedByServer: boolean
  /** Writes on the stream, one after the other, so chunked frames never interleave. */
  queue: Promise<void>
  readonly timers: Set<NodeJS.Timeout>
  /** Requests still playing out (features), by JSON-RPC id: each entry stops one. */
  readonly playing: Map<string | number, () => boolean>
}

const NEVER_ENDING_CHUNK = new Uint8Array(64 * 1024).fill(0x61) // "a"
const encoder = new TextEncoder()

/** Writes a whole string on an open stream, waiting for drain if the socket is full. */
const writeWhole = (res: ServerResponse, text: string): Promise<boolean> => {
  const bytes = encoder.encode(text)
  return writeChunks(res, bytes, Math.max(1, bytes.length))
}

export const startLegacyServer = async (options: LegacyServerOptions = {}): Promise<LegacyTestServer> => {
  const postToSsePath = options.postToSsePath ?? 404
  if (![400, 404, 405].includes(postToSsePath)) throw new RangeError(`postToSsePath must be 400, 404 or 405`)
  const mcp = makeMcpBehaviour({ ...options, protocolVersion: options.protocolVersion ?? LEGACY_PROTOCOL_VERSION })
  const faults = new LegacyFaultQueue()
  const sessions = new Map<string, Session>()
  const requests: Array<RecordedRequest> = []
  const rpcCounts = new Map<string, number>()
  const sentCounts = new Map<string, number>()
  let timelinesStopped = 0
  let closedByClient = 0
  let neverEndingBytes = 0
  let neverEndingStopped = 0
  let acceptedBodiesCut = 0
  let unansweredPostsClosed = 0
  let closing = false
  let origin = ""

  const enqueue = (session: Session, task: () => Promise<unknown>): void => {
    session.queue = session.queue
      .then(() => (session.open && !isGone(session.res) ? task() : undefined))
      .then(
        () => undefined,
        () => {
          session.res.destroy() // a failed write leaves the stream unusable
        }
      )
  }

  const schedule = (session: Session, ms: number, task: () => void): void => {
    const timer = setTimeout(() => {
      session.timers.delete(timer)
      if (session.open) task()
    }, ms)
    session.timers.add(timer)
  }

  const forget = (session: Session): void => {
    session.open = false
    sessions.delete(session.id)
    for (const timer of session.timers) clearTimeout(timer)
    session.timers.clear()
    for (const stop of session.playing.values()) if (stop()) timelinesStopped += 1
    session.playing.clear()
  }

  /** The server ends the GET stream: the session is gone. */
  const endStream = (session: Session): void => {
    session.endedByServer = true
    forget(session)
    if (!isGone(session.res)) session.res.end()
  }

  const sendFrame = (session: Session, text: string): void => {
    enqueue(session, () => writeWhole(session.res, text))
  }

  const sendMessage = (session: Session, message: JsonRpcOutgoing): void => {
    sendFrame(session, sseFrame(JSON.stringify(message)))
  }

  /** A notification of the server's own, counted when it is handed to the socket. */
  const sendNotification = (session: Session, notification: JsonRpcNotification): void => {
    enqueue(session, () => {
      sentCounts.set(notification.method, (sentCounts.get(notification.method) ?? 0) + 1)
      return writeWhole(session.res, sseFrame(JSON.stringify(notification)))
    })
  }

  /** Sends each notification on every session's stream; returns how many messages that made. */
  const broadcast = (notifications: ReadonlyArray<JsonRpcNotification>): number => {
    let sent = 0
    for (const session of sessions.values()) {
      if (!session.open) continue
      for (const notification of notifications) sendNotification(session, notification)
      sent += notifications.length
    }
    return sent
  }

  /** Plays a request's timeline on its session's stream: notifications, the answer, then the broadcast. */
  const play = (session: Session, id: string | number, message: JsonRpcOutgoing, timeline: Timeline): void => {
    let answered = false
    const stop = playTimeline(timeline, {
      notify: (notification) => sendNotification(session, notification),
      answer: () => {
        answered = true
        session.playing.delete(id)
        sendMessage(session, message)
        broadcast(timeline.broadcast)
      }
    })
    if (!answered) session.playing.set(id, stop)
  }

  const openStream = (res: ServerResponse): void => {
    const session: Session = {
      id: randomUUID(),
      res,
      open: true,
      endedByServer: false,
      queue: Promise.resolve(),
      timers: new Set(),
      playing: new Map()
    }
    sessions.set(session.id, session)
    res.on("close", () => {
      if (!session.endedByServer && !closing) closedByClient += 1
      forget(session)
    })
    res.writeHead(200, sseHeaders())
    res.flushHeaders()
    const path = `${LEGACY_MESSAGES_PATH}?sessionId=${session.id}`
    const sendEndpoint = (data: string) => sendFrame(session, endpointFrame(data))
    const fault: LegacyStreamFault | undefined = faults.takeStream()
    if (fault === undefined) return sendEndpoint(path)
    switch (fault.kind) {
      case "endpoint-never-sent":
        return
      case "endpoint-delay":
        return schedule(session, fault.ms, () => sendEndpoint(path))
      case "endpoint-foreign":
        return sendEndpoint(fault.target)
      case "endpoint-relative":
        return sendEndpoint(path.slice(1))
      case "endpoint-absolute-same-origin":
        return sendEndpoint(origin + path)
      case "endpoint-malformed":
        return sendEndpoint(fault.data ?? DEFAULT_MALFORMED_ENDPOINT)
      case "endpoint-empty":
        return sendEndpoint("")
      case "message-before-endpoint":
        sendFrame(session, sseFrame(JSON.stringify(logNotification("a message before the endpoint"))))
        return sendEndpoint(path)
      case "drop-stream-after-endpoint":
        sendEndpoint(path)
        return enqueue(session, async () => endStream(session))
    }
  }

  const countRpc = (message: ReturnType<typeof classify>): void => {
    if (message === undefined || message.kind === "response") return
    rpcCounts.set(message.method, (rpcCounts.get(message.method) ?? 0) + 1)
  }

  const accept = (res: ServerResponse): void => {
    res.writeHead(202)
    res.end(options.acceptedBody ?? "")
  }

  const handleMessage = (url: URL, res: ServerResponse, body: string): void => {
    const sessionId = url.searchParams.get("sessionId")
    if (sessionId === null) return sendText(res, 400, "testkit: missing sessionId")
    const session = sessions.get(sessionId)
    if (session === undefined || !session.open) return sendText(res, 404, "testkit: unknown session")
    const parsed = parseJson(body)
    if (!parsed.ok) return sendText(res, 400, "testkit: invalid JSON")
    if (Array.isArray(parsed.value)) {
      for (const item of parsed.value) countRpc(classify(item))
      return sendText(res, 400, "testkit: batches are not supported")
    }
    const message = classify(parsed.value)
    countRpc(message)
    if (message === undefined) return sendText(res, 400, "testkit: not a JSON-RPC 2.0 message")
    if (message.kind === "response") return accept(res)

    // Run the request (side effects included) before any fault decides how it is answered.
    let normal: JsonRpcOutgoing | undefined
    let timeline: Timeline | undefined
    if (message.kind === "request") {
      const outcome = mcp.handle(message.method, message.params, session.id)
      normal = outcome._tag === "result" ? resultMessage(message.id, outcome.result) : errorMessage(message.id, outcome.error)
      if (outcome._tag === "result") timeline = outcome.timeline
    } else if (message.method === "notifications/cancelled" && isRecord(message.params)) {
      const requestId = message.params["requestId"]
      if (typeof requestId === "string" || typeof requestId === "number") {
        if (session.playing.get(requestId)?.() === true) timelinesStopped += 1
        session.playing.delete(requestId)
      }
    }
    const respondNormally = () => {
      if (normal === undefined) return
      if (timeline === undefined || message.kind !== "request") return sendMessage(session, normal)
      play(session, message.id, normal, timeline)
    }

    const fault = faults.takeResponse(message.method)
    if (fault === undefined) {
      accept(res)
      return respondNormally()
    }
    if (timeline !== undefined && !["delay", "endless-accepted", "unsolicited-frame"].includes(fault.kind)) {
      broadcast(timeline.broadcast) // the answer is replaced, the change is not
    }
    if (fault.kind === "post-status") {
      const extra: Record<string, string> = fault.status === 401
        ? { "www-authenticate": `Bearer realm="phasebound-testkit"` }
        : fault.status === 405
        ? { allow: "GET" }
        : {}
      return sendText(res, fault.status, `testkit: scripted status ${fault.status}`, extra)
    }
    if (fault.kind === "post-never-answered") {
      // Never answered: the socket stays open until the client gives up (or the server closes).
      if (isGone(res)) unansweredPostsClosed += 1
      else {
        res.on("close", () => {
          if (!closing) unansweredPostsClosed += 1
        })
      }
      return
    }
    // Build sized frames before accepting, so an impossible size is a 500, not a silent stall.
    const normalResult = normal !== undefined && "result" in normal ? normal.result : {}
    const exact = fault.kind === "exact-size" && message.kind === "request"
      ? exactSseFrame(message.id, paddedResultTemplate(message.method, normalResult), fault.bytes)
      : undefined
    if (fault.kind !== "endless-accepted") accept(res)
    switch (fault.kind) {
      case "exact-size":
        if (exact !== undefined) {
          enqueue(session, () => writeChunks(session.res, exact, fault.chunkSize ?? DEFAULT_LEGACY_CHUNK_SIZE))
        }
        return
      case "never-ending":
      case "never-ending-frame":
        if (message.kind === "request") {
          const prefix = neverEndingFramePrefix(message.id)
          enqueue(session, async () => {
            await writeForever(session.res, prefix, NEVER_ENDING_CHUNK, (n) => {
              neverEndingBytes += n
            })
            neverEndingStopped += 1
          })
        }
        return
      case "never-answer":
      case "no-response":
        return
      case "endless-accepted":
        res.writeHead(202, { "content-type": "text/plain" })
        res.on("close", () => {
          if (!closing) acceptedBodiesCut += 1
        })
        void writeForever(res, new Uint8Array(0), NEVER_ENDING_CHUNK, () => {})
        return respondNormally()
      case "corrupt-frame":
        return sendFrame(session, sseFrame("{not json"))
      case "close-stream":
        return enqueue(session, async () => endStream(session))
      case "cut-mid-answer":
        if (normal !== undefined) {
          const frame = encoder.encode(sseFrame(JSON.stringify(normal)))
          const half = frame.subarray(0, Math.floor(frame.length / 2))
          enqueue(session, async () => {
            if (fault.how === "end") {
              if (await writeChunks(session.res, half, DEFAULT_LEGACY_CHUNK_SIZE)) endStream(session)
              return
            }
            session.endedByServer = true
            forget(session)
            await writeChunksThenReset(session.res, half, DEFAULT_LEGACY_CHUNK_SIZE)
          })
        }
        return
      case "wrong-id":
        if (normal !== undefined) sendMessage(session, { ...normal, id: 999_999 })
        return
      case "delay":
        return schedule(session, fault.ms, respondNormally)
      case "jsonrpc-error":
        if (message.kind === "request") {
          const error = fault.data === undefined
            ? { code: fault.code, message: fault.message }
            : { code: fault.code, message: fault.message, data: fault.data }
          sendMessage(session, errorMessage(message.id, error))
        }
        return
      case "unsolicited-frame": {
        const frame = exactNotificationFrame(fault.bytes)
        enqueue(session, () => writeChunks(session.res, frame, fault.chunkSize ?? DEFAULT_LEGACY_CHUNK_SIZE))
        return respondNormally()
      }
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.on("error", () => {}) // a write racing a client abort is expected here, not a failure
    const body = await receive(req, requests)
    if (body === undefined) return // the client went away while sending
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (url.pathname === LEGACY_SSE_PATH) {
      if (req.method === "GET") return openStream(res)
      if (req.method === "POST") {
        if (options.postToSsePathDelayMs !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, options.postToSsePathDelayMs))
          if (isGone(res)) return
        }
        return sendText(res, postToSsePath, `testkit: legacy HTTP+SSE server, POST ${LEGACY_MESSAGES_PATH}`, {
          ...(postToSsePath === 405 ? { allow: "GET" } : {})
        })
      }
      return sendText(res, 405, "testkit: method not allowed", { allow: "GET" })
    }
    if (url.pathname === LEGACY_MESSAGES_PATH) {
      if (req.method === "POST") return handleMessage(url, res, body)
      return sendText(res, 405, "testkit: method not allowed", { allow: "POST" })
    }
    return sendText(res, 404, "testkit: not found")
  }

  const featuresOf = (method: string) => {
    if (mcp.features === undefined) throw new TypeError(`${method} needs the \`features\` option`)
    return mcp.features
  }

  const listener = await listenLoopback(handle)
  const port = listener.port
  origin = `http://127.0.0.1:${port}`

  let closed: Promise<void> | undefined
  const close = (): Promise<void> => (closed ??= shutdown())
  const shutdown = async (): Promise<void> => {
    closing = true
    faults.clear()
    for (const session of [...sessions.values()]) forget(session)
    await listener.close()
  }

  return {
    url: `${origin}${LEGACY_SSE_PATH}`,
    origin,
    port,
    requests,
    counter: () => mcp.counter(),
    rpcCalls: (method) => rpcCounts.get(method) ?? 0,
    openStreams: () => sessions.size,
    closedStreams: () => closedByClient,
    openConnections: listener.openConnections,
    acceptedConnections: listener.acceptedConnections,
    acceptedBodiesCut: () => acceptedBodiesCut,
    unansweredPostsClosed: () => unansweredPostsClosed,
    bytesWritten: () => neverEndingBytes,
    neverEndingStopped: () => neverEndingStopped,
    waitFor,
    script: (fault) => faults.push(fault),
    clearFaults: () => faults.clear(),
    toolCalls: (name) => mcp.toolCalls(name),
    effectIdentities: (name) => mcp.effectIdentities(name),
    notificationsSent: (method) => sentCounts.get(method) ?? 0,
    progressSent: () => sentCounts.get("notifications/progress") ?? 0,
    logMessagesSent: () => sentCounts.get("notifications/message") ?? 0,
    listChangedSent: () => sentCounts.get("notifications/tools/list_changed") ?? 0,
    subscriptionsClosed: () => 0,
    timelinesStopped: () => timelinesStopped,
    listChangedListeners: () => [...sessions.values()].filter((session) => session.open && !isGone(session.res)).length,
    changeTools: (count = 1) => {
      if (!Number.isSafeInteger(count) || count < 0) throw new RangeError("changeTools: count must be an integer >= 0")
      return broadcast([featuresOf("changeTools").changeTools(count)])
    },
    floodNotifications: (count, bytes = 100) => {
      if (!Number.isSafeInteger(count) || count < 0 || !Number.isSafeInteger(bytes) || bytes < 0) {
        throw new RangeError("floodNotifications: count and bytes must be integers >= 0")
      }
      return broadcast(featuresOf("floodNotifications").flood(count, bytes))
    },
    close
  }
}

/** The legacy server as an Effect resource: started on acquire, closed (sockets destroyed) on release. */
export const scopedLegacy = (options?: LegacyServerOptions): Effect.Effect<LegacyTestServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startLegacyServer(options)),
    (server) => Effect.promise(() => server.close())
  )
