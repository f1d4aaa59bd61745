/** A tracer that records the spans made under it (name, attributes, events, whether ended, and how). */
import { type Exit, Tracer } from "effect"

export interface Recorded {
  readonly name: string
  readonly attributes: Map<string, unknown>
  readonly events: Array<{ readonly name: string; readonly attributes: Record<string, unknown> | undefined }>
  ended: boolean
  /** What the span ended with (an exporter records a failure's errors from it). */
  exit?: Exit.Exit<unknown, unknown> | undefined
}

export const recordingTracer = (spans: Array<Recorded>) =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const recorded: Recorded = { name, attributes: new Map(), events: [], ended: false }
      spans.push(recorded)
      return {
        _tag: "Span",
        name,
        spanId: String(spans.length),
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: recorded.attributes,
        links,
        sampled: true,
        kind,
        end: (_endTime, exit) => {
          recorded.ended = true
          recorded.exit = exit
        },
        attribute: (key, value) => {
          recorded.attributes.set(key, value)
        },
        event: (eventName, _startTime, eventAttributes) => {
          recorded.events.push({ name: eventName, attributes: eventAttributes })
        },
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
