/**
 * `_meta` of a call (docs/DESIGN.md, "Request _meta and trace context"): what the caller attaches,
 * validated before any I/O, and the W3C trace context of the current span when a tracer is
 * installed (the MCP 2026-07-28 "OpenTelemetry trace context" convention: `traceparent`,
 * `tracestate` in `_meta`). Neither is ever put in a span attribute.
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

/** The largest `_meta` a caller may attach, as UTF-8 JSON. */
export const maxMetaBytes = 64 * 1024

/**
 * Where a call's effect identity travels (docs/DESIGN.md, "Effect identity"): the library writes
 * it from `CallOptions.effectIdentity`, so a caller's `_meta` may not carry it.
 */
export const effectIdentityMetaKey = "io.phasebound/effect-identity"

/** The longest effect identity, in UTF-16 code units. */
export const maxEffectIdentityLength = 512

/**
 * An effect identity a call may carry: a non-empty string of at most `maxEffectIdentityLength`
 * characters, none of them a control character (it is recorded in observations and spans).
 */
export const isValidEffectIdentity = (identity: unknown): identity is string =>
  typeof identity === "string" && identity.length > 0 && identity.length <= maxEffectIdentityLength &&
  !/\p{Cc}/u.test(identity)

/** The trace context keys a caller may also give itself (its own wins over the span's). */
const traceKeys: ReadonlySet<string> = new Set(["traceparent", "tracestate", "baggage"])

const prefixLabel = /^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/
const keyName = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$/

/**
 * A key a caller may use (MCP, "General fields", `_meta`): an optional prefix (dot-separated
 * labels and a slash) and a name. Refused: a reserved prefix (its second label `modelcontextprotocol`
 * or `mcp`: the library writes those), `progressToken` (progress is the library's own) and
 * `effectIdentityMetaKey` (given as `CallOptions.effectIdentity`).
 */
export const isCallerMetaKey = (key: string): boolean => {
  if (traceKeys.has(key)) return true
  if (key === effectIdentityMetaKey) return false
  const slash = key.lastIndexOf("/")
  const name = key.slice(slash + 1)
  if (!keyName.test(name) || (slash === -1 && name === "progressToken") || (slash === -1 && name === "")) return false
  if (slash === -1) return true
  const labels = key.slice(0, slash).split(".")
  if (!labels.every((label) => prefixLabel.test(label))) return false
  const second = labels[1]?.toLowerCase()
  return second !== "modelcontextprotocol" && second !== "mcp"
}

/** Whether `meta` may be attached to a request: a plain object of valid keys, at most `maxMetaBytes` as JSON. */
export const isValidCallerMeta = (meta: unknown): meta is Readonly<Record<string, unknown>> => {
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return false
  if (!Object.keys(meta).every(isCallerMetaKey)) return false
  let json: string | undefined
  try {
    json = JSON.stringify(meta)
  } catch {
    return false
  }
  return json !== undefined && new TextEncoder().encode(json).length <= maxMetaBytes
}

const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)
const traceId = /^[0-9a-f]{32}$/
const spanId = /^[0-9a-f]{16}$/
const allZeros = /^0+$/

/** W3C `tracestate`: list members `key=value`, at most 32, at most 512 characters in all. */
const traceStateMember = /^[a-z0-9][_0-9a-z\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/

/**
 * The W3C `tracestate` of a span that carries an OpenTelemetry span (as `@effect/opentelemetry`'s
 * spans do, in their `span` field; Effect's own spans have no trace state), when it is a valid
 * one; `undefined` otherwise.
 */
const traceStateOf = (span: Tracer.AnySpan): string | undefined => {
  const otel = (span as { readonly span?: { readonly spanContext?: unknown } }).span
  if (typeof otel?.spanContext !== "function") return undefined
  try {
    const state = (otel.spanContext() as { readonly traceState?: { readonly serialize?: () => unknown } }).traceState
    const text = typeof state?.serialize === "function" ? state.serialize() : undefined
    if (typeof text !== "string" || text === "" || text.length > 512) return undefined
    const members = text.split(",").map((member) => member.trim())
    return members.length <= 32 && members.every((member) => traceStateMember.test(member)) ? text : undefined
  } catch {
    return undefined
  }
}

/**
 * `{ traceparent, tracestate? }` of the current span when a tracer other than Effect's default
 * is installed and the span's ids are W3C ids (32 and 16 lowercase hex digits, not all zeros);
 * `undefined` otherwise.
 */
export const traceContext: Effect.Effect<Readonly<Record<string, string>> | undefined> = Effect.tracerWith((tracer) =>
  tracer === nativeTracer
    ? Effect.succeed(undefined)
    : Effect.map(Effect.option(Effect.currentSpan), (span) => {
      if (Option.isNone(span)) return undefined
      const { sampled, spanId: id, traceId: trace } = span.value
      if (!traceId.test(trace) || !spanId.test(id) || allZeros.test(trace) || allZeros.test(id)) return undefined
      const traceparent = `00-${trace}-${id}-${sampled ? "01" : "00"}`
      const tracestate = traceStateOf(span.value)
      return tracestate === undefined ? { traceparent } : { traceparent, tracestate }
    })
)
