/**
 * Scripted faults of the legacy HTTP+SSE server (2024-11-05): stream faults that change what the
 * next GET stream does (mostly its `endpoint` event), and response faults that change how one
 * JSON-RPC method is answered. As with the Streamable HTTP server, a response fault replaces only
 * the answer: the request's side effects have already happened when it applies.
 */
import { checkFaultFraming, validateFault, type Fault } from "./faults.js"
import type { JsonRpcId } from "./jsonrpc.js"
import { padString, SSE_EVENT_PREFIX, SSE_EVENT_SUFFIX, utf8Length } from "./payload.js"

interface Repeatable {
  /** How many matching requests (or GET streams) it applies to before it is consumed (default 1; Infinity = always). */
  readonly times?: number
}

/** Faults of the GET stream itself; each applies to the next GET (or the next `times` GETs). */
export type LegacyStreamFault =
  & Repeatable
  & (
    /** The stream opens (200, text/event-stream) but no `endpoint` event is ever sent. */
    | { readonly kind: "endpoint-never-sent" }
    /** The `endpoint` event is sent after `ms` milliseconds. */
    | { readonly kind: "endpoint-delay"; readonly ms: number }
    /** The `endpoint` data is `target` verbatim: an absolute URL on another origin, given by the test. */
    | { readonly kind: "endpoint-foreign"; readonly target: string }
    /** `messages?sessionId=...` without a leading slash: same origin once resolved against the SSE URL (valid). */
    | { readonly kind: "endpoint-relative" }
    /** `http://127.0.0.1:PORT/messages?sessionId=...` (valid). */
    | { readonly kind: "endpoint-absolute-same-origin" }
    /** Unparseable endpoint data; default `http://[::1`. */
    | { readonly kind: "endpoint-malformed"; readonly data?: string }
    /**
     * `event: endpoint` with an empty data field. (A parser that follows the SSE spec to the letter
     * does not dispatch an event whose data buffer is empty, so it sees no endpoint at all.)
     */
    | { readonly kind: "endpoint-empty" }
    /** A `message` event (a `notifications/message` notification) first, then the endpoint. */
    | { readonly kind: "message-before-endpoint" }
    /** The endpoint event, then the server ends the GET stream (the session is gone: POSTs get 404). */
    | { readonly kind: "drop-stream-after-endpoint" }
  )

/**
 * Faults of the answer to one JSON-RPC method (the POST, or the response event on the GET
 * stream): the shared vocabulary of faults.ts, those kinds `FAULT_FRAMINGS` gives "legacy-sse"
 * (the others are refused by `script`). On this server `exact-size` sizes the SSE event block
 * carrying the response, `never-answer` is a 202 and no response, `never-ending` a response
 * `data:` line that never ends, `cut-mid-answer` half of the response's event block on the GET
 * stream, then the stream ends or its connection is reset.
 */
export type LegacyResponseFault = Fault

export type LegacyFault = LegacyStreamFault | LegacyResponseFault
export type LegacyFaultKind = LegacyFault["kind"]

export const DEFAULT_LEGACY_CHUNK_SIZE = 7
export const DEFAULT_MALFORMED_ENDPOINT = "http://[::1"

export const isResponseFault = (fault: LegacyFault): fault is LegacyResponseFault => "on" in fault

const checkPositiveInteger = (kind: string, name: string, value: number): void => {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${kind}: ${name} must be an integer >= 1`)
}

const checkMs = (kind: string, ms: number): void => {
  if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`${kind}: ms must be a finite number >= 0`)
}

/** Refuses faults that could never apply, at `script()` time rather than mid-response. */
export const validateLegacyFault = (fault: LegacyFault): void => {
  if (isResponseFault(fault)) {
    checkFaultFraming(fault, "legacy-sse")
    validateFault(fault)
  }
  const times = fault.times ?? 1
  if (!(times === Infinity || (Number.isSafeInteger(times) && times >= 1))) {
    throw new RangeError(`fault ${fault.kind}: times must be an integer >= 1 or Infinity`)
  }
  switch (fault.kind) {
    case "exact-size":
    case "unsolicited-frame":
      checkPositiveInteger(fault.kind, "bytes", fault.bytes)
      checkPositiveInteger(fault.kind, "chunkSize", fault.chunkSize ?? DEFAULT_LEGACY_CHUNK_SIZE)
      if (fault.kind === "unsolicited-frame") exactNotificationFrame(fault.bytes) // throws if too small
      return
    case "delay":
    case "endpoint-delay":
      return checkMs(fault.kind, fault.ms)
    case "post-status":
      if (![400, 401, 403, 404, 405, 500].includes(fault.status)) {
        throw new RangeError(`post-status: unsupported status ${fault.status}`)
      }
      return
    default:
      return
  }
}

/** Faults in the order they were scripted; the first matching one is applied. */
export class LegacyFaultQueue {
  private entries: Array<{ readonly fault: LegacyFault; remaining: number }> = []

  push(fault: LegacyFault): void {
    validateLegacyFault(fault)
    this.entries.push({ fault, remaining: fault.times ?? 1 })
  }

  /** Takes one application of the first response fault for `method`, if any. */
  takeResponse(method: string): LegacyResponseFault | undefined {
    const fault = this.take((f) => isResponseFault(f) && f.on === method)
    return fault !== undefined && isResponseFault(fault) ? fault : undefined
  }

  /** Takes one application of the first stream fault, if any (for a new GET stream). */
  takeStream(): LegacyStreamFault | undefined {
    const fault = this.take((f) => !isResponseFault(f))
    return fault !== undefined && !isResponseFault(fault) ? fault : undefined
  }

  clear(): void {
    this.entries = []
  }

  private take(pred: (fault: LegacyFault) => boolean): LegacyFault | undefined {
    const index = this.entries.findIndex((entry) => pred(entry.fault))
    const entry = this.entries[index]
    if (entry === undefined) return undefined
    entry.remaining -= 1
    if (entry.remaining <= 0) this.entries.splice(index, 1)
    return entry.fault
  }
}

const encoder = new TextEncoder()

/** `event: endpoint\ndata: <data>\n\n` (the data must not contain a line break). */
export const endpointFrame = (data: string): string => `event: endpoint\ndata: ${data}\n\n`

/** The notification sent by `message-before-endpoint` and padded by `unsolicited-frame`. */
export const logNotification = (data: string) => ({
  jsonrpc: "2.0" as const,
  method: "notifications/message",
  params: { level: "info", logger: "phasebound-testkit", data }
})

/**
 * An SSE event block `event: message\ndata: <notifications/message>\n\n` of exactly `bytes`
 * bytes, padded with mixed 1- to 4-byte characters. Throws a RangeError below the minimum size.
 */
export const exactNotificationFrame = (bytes: number): Uint8Array => {
  const render = (pad: string) => SSE_EVENT_PREFIX + JSON.stringify(logNotification(pad)) + SSE_EVENT_SUFFIX
  const minimum = utf8Length(render(""))
  if (!Number.isSafeInteger(bytes) || bytes < minimum) {
    throw new RangeError(`unsolicited-frame: ${bytes} bytes is not possible, the smallest frame is ${minimum} bytes`)
  }
  const out = encoder.encode(render(padString(bytes - minimum)))
  if (out.length !== bytes) throw new Error(`unsolicited-frame: size mismatch (${out.length} != ${bytes})`)
  return out
}

/** The start of a response event whose `data:` line never ends (see `never-ending-frame`). */
export const neverEndingFramePrefix = (id: JsonRpcId): Uint8Array =>
  encoder.encode(
    `${SSE_EVENT_PREFIX}{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`
  )
