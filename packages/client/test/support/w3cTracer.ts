/** A tracer with W3C ids, for the tests of the trace context a call sends in `_meta`. */
import { Tracer } from "effect"

export interface W3cSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly attributes: Map<string, unknown>
}

/**
 * A tracer whose spans have W3C ids (32 and 16 lowercase hex digits), as OpenTelemetry's do;
 * with `traceState`, each span also carries an OpenTelemetry span whose context has that W3C
 * trace state, where `@effect/opentelemetry`'s spans keep theirs (`span.spanContext()`).
 */
export const w3cTracer = (spans: Array<W3cSpan>, traceState?: string) =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const hex = (digits: number) => Array.from({ length: digits }, () => Math.floor(Math.random() * 16).toString(16)).join("")
      const traceId = parent._tag === "Some" ? parent.value.traceId : hex(32)
      const recorded: W3cSpan = { name, traceId, spanId: hex(16), attributes: new Map() }
      spans.push(recorded)
      return {
        _tag: "Span",
        name,
        spanId: recorded.spanId,
        traceId,
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: recorded.attributes,
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: (key, value) => void recorded.attributes.set(key, value),
        event: () => {},
        addLinks: () => {},
        ...(traceState === undefined ? {} : { span: { spanContext: () => ({ traceState: { serialize: () => traceState } }) } })
      }
    },
    context: (f) => f()
  })
