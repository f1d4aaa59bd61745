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
  resetConnection,
  sendJsonBody,
  sendMessage,
  sendText,
  sseHeaders,
  writeChunks,
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

export type Fault =
  | (FaultBase & {
    readonly kind: "exact-size"
    readonly bytes: number
    readonly chunkSize?: number
    readonly as?: ResponseMode
  })
  | (FaultBase & { readonly kind: "never-ending-body"; readonly as?: ResponseMode })
  | (FaultBase & {
    readonly kind: "unterminated-frame"
    /** End the `data:` line with "\n" (still no blank line); default true. */
    readonly trailingNewline?: boolean
  })
  | (FaultBase & { readonly kind: "headers-never-sent" })
  | (FaultBase & { readonly kind: "response-never-sent"; readonly as?: ResponseMode })
  | (FaultBase & { readonly kind: "close-before-response" })
  | (FaultBase & { readonly kind: "wrong-id" })
  | (FaultBase & { readonly kind: "invalid-utf8"; readonly as?: ResponseMode })
  | (FaultBase & { readonly kind: "invalid-json"; readonly as?: ResponseMode })
  | (FaultBase & { readonly kind: "wrong-content-type" })
  | (FaultBase & {
    readonly kind: "status"
    readonly status: 400 | 401 | 403 | 404 | 405 | 500 | 502 | 503
    readonly body?: string
  })
  | (FaultBase & {
    readonly kind: "jsonrpc-error"
    readonly code: number
    readonly message: string
    readonly data?: unknown
  })
  | (FaultBase & { readonly kind: "delay"; readonly ms: number })
  | (FaultBase & { readonly kind: "resumable"; readonly eventsBeforeClose?: number; readonly retryMs?: number })
  /**
   * HTTP 400 with the JSON-RPC error -32022 "Unsupported protocol version", data
   * `{ supported, requested }` (`requested`: the request's `_meta` version, else its
   * MCP-Protocol-Version header, else initialize's protocolVersion, else ""). With
   * `times: Infinity` every retry is refused again: a hostile -32022 loop.
   */
  | (FaultBase & { readonly kind: "unsupported-version"; readonly supported: ReadonlyArray<string> })
  /**
   * A result `{resultType: "input_required", inputRequests: {name: elicitation/create …},
   * requestState}` instead of the normal answer; `requestState` as given, else a fresh one that
   * `ask_name` accepts. With `times: Infinity` the input is asked for forever.
   */
  | (FaultBase & { readonly kind: "input-required"; readonly requestState?: string })
  /** The normal result with `resultType` set to `value` (e.g. "bogus"); an error answer is sent as is. */
  | (FaultBase & { readonly kind: "result-type"; readonly value: string })
  /**
   * The first half of the normal answer's bytes (JSON body or SSE frame), then the response ends
   * cleanly ("end": the last chunk of a chunked body) or the TCP connection is reset ("reset":
   * an RST where the runtime can send one, else a plain destroy).
   */
  | (FaultBase & { readonly kind: "cut-mid-answer"; readonly how: "end" | "reset" })
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

export type FaultKind = Fault["kind"]

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
  if (fault.kind === "unsupported-version") {
    if (!Array.isArray(fault.supported) || !fault.supported.every((v) => typeof v === "string")) {
      throw new TypeError("unsupported-version: supported must be an array of strings")
    }
  }
  if (fault.kind === "input-required" && fault.requestState !== undefined && typeof fault.requestState !== "string") {
    throw new TypeError("input-required: requestState must be a string")
  }
  if (fault.kind === "lying-content-length") {
    if (!Number.isSafeInteger(fault.bytes) || fault.bytes < 1) throw new RangeError("lying-content-length: bytes must be an integer >= 1")
    if (!Number.isSafeInteger(fault.declared) || fault.declared < 0) throw new RangeError("lying-content-length: declared must be an integer >= 0")
  }
  if (fault.kind === "result-type" && typeof fault.value !== "string") {
    throw new TypeError("result-type: value must be a string")
  }
}

/** Faults in the order they were scripted; the first one matching a method is applied. */
export class FaultQueue {
  private entries: Array<{ readonly fault: Fault; remaining: number }> = []

  push(fault: Fault): void {
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
}

const encoder = new TextEncoder()

const normalResultOf = (ctx: FaultContext): unknown =>
  ctx.normal !== undefined && "result" in ctx.normal ? ctx.normal.result : {}

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
      return sendJsonBody(res, 400, errorMessage(ctx.id, unsupportedVersionError(fault.supported, ctx.requestedVersion ?? "")), ctx.headers)
    case "input-required": {
      const requestState = fault.requestState ?? ctx.issueRequestState?.() ?? newRequestState("input-required")
      return sendMessage(res, resultMessage(ctx.id, inputRequiredResult(ASK_NAME_INPUT_REQUESTS, requestState)), ctx.mode, ctx.headers)
    }
    case "cut-mid-answer": {
      const json = JSON.stringify(messageFor(ctx))
      const whole = encoder.encode(ctx.mode === "sse" ? sseFrame(json) : json)
      res.writeHead(200, headersFor(ctx.mode, ctx.headers))
      if (!(await writeChunks(res, whole.subarray(0, Math.floor(whole.length / 2)), DEFAULT_CHUNK_SIZE))) return
      if (fault.how === "end") return void res.end()
      return resetConnection(res)
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
      const result = isRecord(message.result) ? message.result : {}
      return sendMessage(res, resultMessage(ctx.id, { ...result, resultType: fault.value }), ctx.mode, ctx.headers)
    }
  }
}
