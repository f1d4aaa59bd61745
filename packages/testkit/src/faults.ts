/**
 * Scripted faults: what they are, the queue they wait in, and how each one answers a request.
 * A fault replaces only the response; the request's side effects have already happened.
 */
import type { ServerResponse } from "node:http"
import { errorMessage, isRecord, resultMessage, type JsonRpcId, type JsonRpcOutgoing } from "./jsonrpc.js"
import { ASK_NAME_INPUT_REQUESTS, inputRequiredResult, newRequestState, unsupportedVersionError } from "./modern.js"
import { exactJsonResponse, exactSseFrame, paddedResultTemplate, sseFrame } from "./payload.js"
import {
  headersFor,
  isGone,
  jsonHeaders,
  sendJsonBody,
  sendMessage,
  sendText,
  sseHeaders,
  writeChunks,
  writeChunksThenReset,
  writeForever,
  writeInChunks,
  type ExtraHeaders,
  type ResponseMode
} from "./wire.js"

interface FaultBase {
  /** The JSON-RPC method this fault applies to, e.g. "initialize", "tools/list", "tools/call". */
  readonly on: string
  /** How many matching requests it applies to before it is consumed (default 1; Infinity = always). */
  readonly times?: number
}

/** The three ways the testkit frames the same MCP behaviour. */
export type Framing = "streamable-http" | "legacy-sse" | "stdio"

/**
 * A scripted misbehaviour sited on a JSON-RPC method: one vocabulary for every framing. Each
 * server's `script` (or, on stdio, `faults`) accepts a `Fault` and refuses, with a TypeError
 * naming the framings it has, a kind its framing does not have (`FAULT_FRAMINGS`): a TCP reset
 * on a pipe, a `Content-Length` on the legacy GET stream. A fault replaces only the answer: the
 * request's side effects have already happened. What each kind does on each framing is told
 * here; the legacy server answers on its GET stream (after a 202 to the POST), the stdio server
 * on stdout.
 */
export type Fault =
  // --- every framing ---------------------------------------------------------------------
  /**
   * The answer (JSON body, SSE event block, or stdio line with its "\n") is exactly `bytes`
   * bytes, padded with multi-byte characters and written `chunkSize` bytes (default 7) at a time.
   */
  | (FaultBase & {
    readonly kind: "exact-size"
    readonly bytes: number
    readonly chunkSize?: number
    /** Streamable HTTP only: the body's form, default the server's mode. */
    readonly as?: ResponseMode
    /** stdio only: a pause between writes (default 0: one event-loop turn). */
    readonly chunkDelayMs?: number
  })
  /** The request arrives; no answer ever starts (Streamable HTTP: not even the headers; legacy: a 202, then nothing on the stream). */
  | (FaultBase & { readonly kind: "never-answer" })
  /** The answer starts and never ends: 64 KiB chunks, with backpressure, until the client leaves. */
  | (FaultBase & { readonly kind: "never-ending"; readonly as?: ResponseMode })
  /**
   * The first half of the normal answer's bytes, then its stream ends cleanly ("end"; stdio: the
   * child exits, as `exit-mid-answer`) or its TCP connection is reset ("reset", not on stdio:
   * once the headers and that half were flushed, an RST, so the client sees ECONNRESET in the
   * middle of the body; wire.ts `writeChunksThenReset`).
   */
  | (FaultBase & { readonly kind: "cut-mid-answer"; readonly how: "end" | "reset" })
  /** The normal answer with the id 999999. */
  | (FaultBase & { readonly kind: "wrong-id" })
  /** The normal answer, `ms` milliseconds late (if the client leaves first, nothing is sent). */
  | (FaultBase & { readonly kind: "delay"; readonly ms: number })
  /** A JSON-RPC error answer. */
  | (FaultBase & {
    readonly kind: "jsonrpc-error"
    readonly code: number
    readonly message: string
    readonly data?: unknown
  })
  // --- Streamable HTTP and stdio ---------------------------------------------------------
  /** The answer carries the bytes 0xC3 0x28. */
  | (FaultBase & { readonly kind: "invalid-utf8"; readonly as?: ResponseMode })
  /** An answer that starts as JSON and is not: `{"jsonrpc":"2.0",…` */
  | (FaultBase & { readonly kind: "invalid-json"; readonly as?: ResponseMode })
  /**
   * The JSON-RPC error -32022 "Unsupported protocol version" (HTTP 400), data `{ supported,
   * requested }` (`requested`: the request's `_meta` version, else its MCP-Protocol-Version
   * header, else initialize's protocolVersion, else ""). With `times: Infinity` every retry is
   * refused again: a hostile -32022 loop.
   */
  | (FaultBase & {
    readonly kind: "unsupported-version"
    /** data.supported (default: the server's `supportedVersions`). */
    readonly supported?: ReadonlyArray<string>
  })
  /**
   * A result `{resultType: "input_required", inputRequests, requestState}` instead of the normal
   * answer. With `times: Infinity` the input is asked for forever. A retry with inputResponses
   * and the requestState is an ordinary request again.
   */
  | (FaultBase & {
    readonly kind: "input-required"
    /** Default: the `ask_name` elicitation; null omits the field. */
    readonly inputRequests?: Readonly<Record<string, unknown>> | null
    /** Default: a fresh one that `ask_name` accepts; null omits the field. */
    readonly requestState?: string | null
  })
  /** The normal result with `resultType` set to `value` (default "bogus"; null removes the field); an error answer is sent as is. */
  | (FaultBase & { readonly kind: "result-type"; readonly value?: string | null })
  // --- Streamable HTTP only --------------------------------------------------------------
  /** Streamable HTTP's name for `never-ending`. */
  | (FaultBase & { readonly kind: "never-ending-body"; readonly as?: ResponseMode })
  | (FaultBase & {
    readonly kind: "unterminated-frame"
    /** End the `data:` line with "\n" (still no blank line); default true. */
    readonly trailingNewline?: boolean
  })
  /** Streamable HTTP's name for `never-answer`. */
  | (FaultBase & { readonly kind: "headers-never-sent" })
  | (FaultBase & { readonly kind: "response-never-sent"; readonly as?: ResponseMode })
  | (FaultBase & { readonly kind: "close-before-response" })
  | (FaultBase & { readonly kind: "wrong-content-type" })
  | (FaultBase & {
    readonly kind: "status"
    readonly status: 400 | 401 | 403 | 404 | 405 | 500 | 502 | 503
    readonly body?: string
  })
  | (FaultBase & { readonly kind: "resumable"; readonly eventsBeforeClose?: number; readonly retryMs?: number })
  /**
   * A JSON answer of exactly `bytes` bytes (7-byte chunks) under a `Content-Length: declared`
   * header that does not match it. After the bytes the connection is held open ("hold") or
   * destroyed ("close").
   */
  | (FaultBase & {
    readonly kind: "lying-content-length"
    readonly declared: number
    readonly bytes: number
    readonly then: "hold" | "close"
  })
  // --- legacy HTTP+SSE only (see legacyFaults.ts) -----------------------------------------
  /** The legacy server's name for `never-ending`: the response's `data:` line never ends. */
  | (FaultBase & { readonly kind: "never-ending-frame" })
  /** 202 to the POST with a body that never ends; the response travels on the GET stream normally. */
  | (FaultBase & { readonly kind: "endless-accepted" })
  /** 202 to the POST; instead of the response, an `event: message` whose data is not JSON. */
  | (FaultBase & { readonly kind: "corrupt-frame" })
  /** The legacy server's name for `never-answer`: 202 to the POST, the response is never sent. */
  | (FaultBase & { readonly kind: "no-response" })
  /**
   * The POST is received (side effects happen, the message is counted) and never answered: no
   * status, nothing on the GET stream. A POST the client closes is counted by `unansweredPostsClosed()`.
   */
  | (FaultBase & { readonly kind: "post-never-answered" })
  /** 202 to the POST, then the server ends the GET stream instead of responding. */
  | (FaultBase & { readonly kind: "close-stream" })
  /** The POST itself is answered with this status (text body); nothing is sent on the stream. */
  | (FaultBase & { readonly kind: "post-status"; readonly status: 400 | 401 | 403 | 404 | 405 | 500 })
  /**
   * Before the response, a `notifications/message` event block of exactly `bytes` bytes on the
   * GET stream (in chunks of `chunkSize`, default 7); then the response, normally.
   */
  | (FaultBase & { readonly kind: "unsolicited-frame"; readonly bytes: number; readonly chunkSize?: number })
  // --- stdio only (see StdioServer.ts) ---------------------------------------------------
  /** stdio's name for `never-ending`: the response line never ends. */
  | (FaultBase & { readonly kind: "never-ending-line" })
  /** Exits with `code` (default 3) without answering, once earlier answers are written; also on a notification. */
  | (FaultBase & { readonly kind: "exit"; readonly code?: number })
  /** Writes the first half of the response line (no line break), then exits with `code` (default 3). */
  | (FaultBase & { readonly kind: "exit-mid-answer"; readonly code?: number })
  /** A valid JSON line that is no JSON-RPC message (`{"hello":1}`), then the real response. */
  | (FaultBase & { readonly kind: "not-jsonrpc" })

export type FaultKind = Fault["kind"]

const ALL: ReadonlyArray<Framing> = ["streamable-http", "legacy-sse", "stdio"]
const HTTP_AND_STDIO: ReadonlyArray<Framing> = ["streamable-http", "stdio"]
const HTTP: ReadonlyArray<Framing> = ["streamable-http"]
const LEGACY: ReadonlyArray<Framing> = ["legacy-sse"]
const STDIO: ReadonlyArray<Framing> = ["stdio"]

/** The framings that have each fault kind. */
export const FAULT_FRAMINGS: { readonly [K in FaultKind]: ReadonlyArray<Framing> } = {
  "exact-size": ALL,
  "never-answer": ALL,
  "never-ending": ALL,
  "cut-mid-answer": ALL,
  "wrong-id": ALL,
  delay: ALL,
  "jsonrpc-error": ALL,
  "invalid-utf8": HTTP_AND_STDIO,
  "invalid-json": HTTP_AND_STDIO,
  "unsupported-version": HTTP_AND_STDIO,
  "input-required": HTTP_AND_STDIO,
  "result-type": HTTP_AND_STDIO,
  "never-ending-body": HTTP,
  "unterminated-frame": HTTP,
  "headers-never-sent": HTTP,
  "response-never-sent": HTTP,
  "close-before-response": HTTP,
  "wrong-content-type": HTTP,
  status: HTTP,
  resumable: HTTP,
  "lying-content-length": HTTP,
  "never-ending-frame": LEGACY,
  "endless-accepted": LEGACY,
  "corrupt-frame": LEGACY,
  "no-response": LEGACY,
  "post-never-answered": LEGACY,
  "close-stream": LEGACY,
  "post-status": LEGACY,
  "unsolicited-frame": LEGACY,
  "never-ending-line": STDIO,
  exit: STDIO,
  "exit-mid-answer": STDIO,
  "not-jsonrpc": STDIO
}

/** Why `fault` cannot apply to `framing`, or undefined when it can. */
export const faultRefusal = (fault: Fault, framing: Framing): string | undefined => {
  const framings: ReadonlyArray<Framing> | undefined = FAULT_FRAMINGS[fault.kind]
  if (framings === undefined) return `unknown fault kind ${String(fault.kind)}`
  if (!framings.includes(framing)) return `fault ${fault.kind} does not apply to ${framing} (only to ${framings.join(", ")})`
  if (fault.kind === "cut-mid-answer" && fault.how === "reset" && framing === "stdio") {
    return "fault cut-mid-answer with how: \"reset\" does not apply to stdio (a pipe has no reset; how: \"end\" exits mid-answer)"
  }
  return undefined
}

/** Refuses, with a TypeError, a fault its framing does not have. */
export const checkFaultFraming = (fault: Fault, framing: Framing): void => {
  const refusal = faultRefusal(fault, framing)
  if (refusal !== undefined) throw new TypeError(refusal)
}

const DEFAULT_CHUNK_SIZE = 7
const NEVER_ENDING_CHUNK = new Uint8Array(64 * 1024).fill(0x61) // "a"
const WRONG_ID = 999_999

/** Refuses faults that could never apply, at `script()` time rather than mid-response. */
export const validateFault = (fault: Fault): void => {
  const times = fault.times ?? 1
  if (!(times === Infinity || (Number.isSafeInteger(times) && times >= 1))) {
    throw new RangeError(`fault ${fault.kind}: times must be an integer >= 1 or Infinity`)
  }
  if (fault.kind === "exact-size") {
    if (!Number.isSafeInteger(fault.bytes) || fault.bytes < 1) throw new RangeError("exact-size: bytes must be an integer >= 1")
    const chunkSize = fault.chunkSize ?? DEFAULT_CHUNK_SIZE
    if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) throw new RangeError("exact-size: chunkSize must be an integer >= 1")
  }
  if (fault.kind === "delay" && !(Number.isFinite(fault.ms) && fault.ms >= 0)) {
    throw new RangeError("delay: ms must be a finite number >= 0")
  }
  if (fault.kind === "resumable") {
    const events = fault.eventsBeforeClose ?? 1
    if (!Number.isSafeInteger(events) || events < 1) throw new RangeError("resumable: eventsBeforeClose must be >= 1")
  }
  if (fault.kind === "unsupported-version" && fault.supported !== undefined) {
    if (!Array.isArray(fault.supported) || !fault.supported.every((v) => typeof v === "string")) {
      throw new TypeError("unsupported-version: supported must be an array of strings")
    }
  }
  if (fault.kind === "input-required") {
    if (fault.requestState !== undefined && fault.requestState !== null && typeof fault.requestState !== "string") {
      throw new TypeError("input-required: requestState must be a string or null")
    }
    if (fault.inputRequests === null && fault.requestState === null) {
      throw new RangeError("input-required: at least one of inputRequests and requestState must be present")
    }
  }
  if (fault.kind === "lying-content-length") {
    if (!Number.isSafeInteger(fault.bytes) || fault.bytes < 1) throw new RangeError("lying-content-length: bytes must be an integer >= 1")
    if (!Number.isSafeInteger(fault.declared) || fault.declared < 0) throw new RangeError("lying-content-length: declared must be an integer >= 0")
  }
  if (fault.kind === "result-type" && fault.value !== undefined && fault.value !== null && typeof fault.value !== "string") {
    throw new TypeError("result-type: value must be a string or null")
  }
}

/** Faults in the order they were scripted; the first one matching a method is applied. */
export class FaultQueue {
  private entries: Array<{ readonly fault: Fault; remaining: number }> = []

  constructor(private readonly framing: Framing) {}

  push(fault: Fault): void {
    checkFaultFraming(fault, this.framing)
    validateFault(fault)
    this.entries.push({ fault, remaining: fault.times ?? 1 })
  }

  /** Takes one application of the first fault for `method`, if any. */
  take(method: string): Fault | undefined {
    const index = this.entries.findIndex((entry) => entry.fault.on === method)
    const entry = this.entries[index]
    if (entry === undefined) return undefined
    entry.remaining -= 1
    if (entry.remaining <= 0) this.entries.splice(index, 1)
    return entry.fault
  }

  clear(): void {
    this.entries = []
  }
}

/** What a fault needs to know about the request it answers, and the server hooks it may use. */
export interface FaultContext {
  readonly res: ServerResponse
  readonly method: string
  /** The request id; null for a notification. */
  readonly id: JsonRpcId
  /** The response the server would normally send (undefined for notifications). */
  readonly normal: JsonRpcOutgoing | undefined
  readonly mode: ResponseMode
  /** Headers every successful answer carries (the new Mcp-Session-Id on initialize). */
  readonly headers: ExtraHeaders
  readonly respondNormally: () => void
  readonly onNeverEndingBytes: (bytes: number) => void
  /** A never-ending body stopped being written (the client left): its byte count is final. */
  readonly onNeverEndingStopped: () => void
  readonly openResumable: (message: JsonRpcOutgoing, eventsBeforeClose: number, retryMs: number) => void
  /** The protocol version the request asked for, for `unsupported-version` (default ""). */
  readonly requestedVersion?: string | undefined
  /** Issues a request state the server will accept back, for `input-required` (default: an unknown one). */
  readonly issueRequestState?: (() => string) | undefined
  /** The server's versions, the default of `unsupported-version`'s `supported`. */
  readonly supportedVersions?: ReadonlyArray<string> | undefined
}

const encoder = new TextEncoder()

const normalResultOf = (ctx: FaultContext): unknown => ctx.normal !== undefined && "result" in ctx.normal ? ctx.normal.result : {}

const messageFor = (ctx: FaultContext): JsonRpcOutgoing => ctx.normal ?? resultMessage(ctx.id, {})

const sendRaw = (res: ServerResponse, headers: Record<string, string>, body: Uint8Array | string): void => {
  res.writeHead(200, headers)
  res.end(body)
}

/** Answers the request as the fault says. Resolves when the fault is done writing. */
export const respondWithFault = async (fault: Fault, ctx: FaultContext): Promise<void> => {
  const { res } = ctx
  switch (fault.kind) {
    case "exact-size": {
      const as = fault.as ?? ctx.mode
      const template = paddedResultTemplate(ctx.method, normalResultOf(ctx))
      const bytes = as === "sse"
        ? exactSseFrame(ctx.id, template, fault.bytes)
        : exactJsonResponse(ctx.id, template, fault.bytes)
      res.writeHead(200, headersFor(as, ctx.headers))
      return writeInChunks(res, bytes, fault.chunkSize ?? DEFAULT_CHUNK_SIZE)
    }
    case "never-ending":
    case "never-ending-body": {
      const as = fault.as ?? ctx.mode
      const json = `{"jsonrpc":"2.0","id":${JSON.stringify(ctx.id)},"result":{"content":[{"type":"text","text":"`
      const prefix = encoder.encode(as === "sse" ? "event: message\ndata: " + json : json)
      res.writeHead(200, headersFor(as, ctx.headers))
      await writeForever(res, prefix, NEVER_ENDING_CHUNK, ctx.onNeverEndingBytes)
      return ctx.onNeverEndingStopped()
    }
    case "unterminated-frame": {
      const newline = fault.trailingNewline ?? true ? "\n" : ""
      return sendRaw(res, sseHeaders(ctx.headers), `event: message\ndata: ${JSON.stringify(messageFor(ctx))}${newline}`)
    }
    case "never-answer":
    case "headers-never-sent":
      return // the socket stays open until the client (or server.close) ends it
    case "response-never-sent": {
      const as = fault.as ?? ctx.mode
      res.writeHead(200, headersFor(as, ctx.headers))
      if (as === "sse") res.write(": waiting\n\n")
      else res.flushHeaders()
      return
    }
    case "close-before-response": {
      const notification = {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "closing before the response" }
      }
      return sendRaw(res, sseHeaders(ctx.headers), sseFrame(JSON.stringify(notification)))
    }
    case "wrong-id": {
      const message = messageFor(ctx)
      return sendMessage(res, { ...message, id: WRONG_ID }, ctx.mode, ctx.headers)
    }
    case "invalid-utf8": {
      const as = fault.as ?? ctx.mode
      // 0xC3 opens a 2-byte sequence; 0x28 "(" is not a continuation byte.
      const json = Buffer.concat([
        Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(ctx.id)},"result":{"content":[{"type":"text","text":"bad `),
        Buffer.from([0xc3, 0x28]),
        Buffer.from(` byte"}]}}`)
      ])
      const body = as === "sse"
        ? Buffer.concat([Buffer.from("event: message\ndata: "), json, Buffer.from("\n\n")])
        : json
      return sendRaw(res, headersFor(as, ctx.headers), body)
    }
    case "invalid-json": {
      const as = fault.as ?? ctx.mode
      const garbage = `{"jsonrpc":"2.0",`
      return sendRaw(res, headersFor(as, ctx.headers), as === "sse" ? sseFrame(garbage) : garbage)
    }
    case "wrong-content-type":
      return sendRaw(res, { ...ctx.headers, "content-type": "text/html" }, JSON.stringify(messageFor(ctx)))
    case "status": {
      const extra: Record<string, string> = fault.status === 401
        ? { "www-authenticate": `Bearer realm="phasebound-testkit"` }
        : {}
      return sendText(res, fault.status, fault.body ?? `testkit: scripted status ${fault.status}`, extra)
    }
    case "jsonrpc-error": {
      const error = fault.data === undefined
        ? { code: fault.code, message: fault.message }
        : { code: fault.code, message: fault.message, data: fault.data }
      return sendMessage(res, errorMessage(ctx.id, error), ctx.mode, ctx.headers)
    }
    case "delay": {
      // Side effects already ran; if the client leaves first, nothing is sent or re-run.
      const timer = setTimeout(() => {
        if (!isGone(res)) ctx.respondNormally()
      }, fault.ms)
      res.on("close", () => clearTimeout(timer))
      return
    }
    case "resumable":
      return ctx.openResumable(messageFor(ctx), fault.eventsBeforeClose ?? 1, fault.retryMs ?? 50)
    case "unsupported-version":
      return sendJsonBody(
        res,
        400,
        errorMessage(ctx.id, unsupportedVersionError(fault.supported ?? ctx.supportedVersions ?? [], ctx.requestedVersion ?? "")),
        ctx.headers
      )
    case "input-required": {
      const inputRequests = fault.inputRequests === null ? undefined : fault.inputRequests ?? ASK_NAME_INPUT_REQUESTS
      const requestState = fault.requestState === null
        ? undefined
        : fault.requestState ?? ctx.issueRequestState?.() ?? newRequestState("input-required")
      return sendMessage(res, resultMessage(ctx.id, inputRequiredResult(inputRequests, requestState)), ctx.mode, ctx.headers)
    }
    case "cut-mid-answer": {
      const json = JSON.stringify(messageFor(ctx))
      const whole = encoder.encode(ctx.mode === "sse" ? sseFrame(json) : json)
      const half = whole.subarray(0, Math.floor(whole.length / 2))
      res.writeHead(200, headersFor(ctx.mode, ctx.headers))
      if (fault.how === "reset") return void (await writeChunksThenReset(res, half, DEFAULT_CHUNK_SIZE))
      if (!(await writeChunks(res, half, DEFAULT_CHUNK_SIZE))) return
      return void res.end()
    }
    case "lying-content-length": {
      const template = paddedResultTemplate(ctx.method, normalResultOf(ctx))
      res.writeHead(200, { ...jsonHeaders(ctx.headers), "content-length": String(fault.declared) })
      if (!(await writeChunks(res, exactJsonResponse(ctx.id, template, fault.bytes), DEFAULT_CHUNK_SIZE))) return
      if (fault.then === "close") res.socket?.destroy()
      return
    }
    case "result-type": {
      const message = messageFor(ctx)
      if (!("result" in message)) return sendMessage(res, message, ctx.mode, ctx.headers)
      const { resultType: _, ...rest } = isRecord(message.result) ? message.result : {}
      const result = fault.value === null ? rest : { ...rest, resultType: fault.value ?? "bogus" }
      return sendMessage(res, resultMessage(ctx.id, result), ctx.mode, ctx.headers)
    }
  }
}
