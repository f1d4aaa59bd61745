/** A tracer that records the spans made under it (name, attributes, whether ended). */
import { Tracer } from "effect"

export interface Recorded {
  readonly name: string
  readonly attributes: Map<string, unknown>
  ended: boolean
}

export const recordingTracer = (spans: Array<Recorded>) =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const recorded: Recorded = { name, attributes: new Map(), ended: false }
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
        end: () => {
          recorded.ended = true
        },
        attribute: (key, value) => {
          recorded.attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
