/**
 * A tracer that records every span made under it: name, kind, attributes, events, links,
 * whether it ended and the exit it ended with (what an exporter such as OpenTelemetry's would
 * turn into the span's status and exception event). Installed with `Effect.withTracer`, it is
 * "a tracer the application installed" (docs/DESIGN.md, "Observation").
 */
import { type Exit, type Option, Tracer } from "effect"

export interface RecordedSpan {
  readonly name: string
  readonly spanId: string
  readonly kind: Tracer.SpanKind
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly attributes: Map<string, unknown>
  readonly events: Array<{ readonly name: string; readonly attributes: Readonly<Record<string, unknown>> | undefined }>
  readonly links: Array<Tracer.SpanLink>
  ended: boolean
  exit: Exit.Exit<unknown, unknown> | undefined
}

export interface RecordingTracer {
  readonly tracer: Tracer.Tracer
  /** Every span made so far, in the order they started. */
  readonly spans: ReadonlyArray<RecordedSpan>
}

export const recordingTracer = (): RecordingTracer => {
  const spans: Array<RecordedSpan> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const spanId = `span-${spans.length + 1}`
      const recorded: RecordedSpan = {
        name,
        spanId,
        kind,
        parent,
        attributes: new Map(),
        events: [],
        links: [...links],
        ended: false,
        exit: undefined
      }
      spans.push(recorded)
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId,
        traceId: "contract-trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: recorded.attributes,
        links: recorded.links,
        sampled: true,
        kind,
        end: (endTime, exit) => {
          recorded.ended = true
          recorded.exit = exit
          ;(span as { status: Tracer.SpanStatus }).status = { _tag: "Ended", startTime, endTime, exit }
        },
        attribute: (key, value) => {
          recorded.attributes.set(key, value)
        },
        event: (eventName, _startTime, attributes) => {
          recorded.events.push({ name: eventName, attributes })
        },
        addLinks: (more) => {
          for (const link of more) recorded.links.push(link)
        }
      }
      return span
    },
    context: (f) => f()
  })
  return { tracer, spans }
}
