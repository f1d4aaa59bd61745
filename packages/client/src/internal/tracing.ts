/**
 * The client's spans (`mcp.connect`, `mcp.tools.call`, `mcp.tools.list`), created only when a
 * tracer is installed.
 *
 * Effect's built-in tracer, the one in place when the application installs none, records spans
 * nowhere outside the fiber, and our spans have no children of their own (the HTTP client's
 * spans are disabled, see `http.ts`): with it, a span is pure cost, about 20 µs of CPU per call
 * under load (docs/BENCHMARKS.md). With any other tracer (OpenTelemetry, a test recorder) the
 * span is made, as `Effect.withSpan` would.
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

const builtInTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** Sets attributes on the current span (nothing when there is none). */
export type Annotate = (attributes: Readonly<Record<string, unknown>>) => void

const ignore: Annotate = () => {}

export const clientSpan = <A, E, R>(
  name: string,
  attributes: Readonly<Record<string, unknown>>,
  body: (annotate: Annotate) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => {
    if (tracer === builtInTracer) return body(ignore)
    return Effect.useSpan(name, { kind: "client", captureStackTrace: false, attributes }, (span) =>
      Effect.withParentSpan(
        body((more) => {
          for (const key in more) span.attribute(key, more[key])
        }),
        span
      ))
  })
