/**
 * The client's spans (`internal/tracing.ts`): made with any installed tracer, skipped with
 * Effect's built-in one (which exports nothing).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { clientSpan } from "../../src/internal/tracing.js"
import { type Recorded, recordingTracer } from "../support/recordingTracer.js"

describe("clientSpan", () => {
  it.effect("with an installed tracer: a client span with the attributes and the annotations, parent of the body", () =>
    Effect.gen(function*() {
      const spans: Array<Recorded> = []
      const inner = yield* clientSpan("mcp.tools.call", { "mcp.phase": "call" }, (annotate) =>
        Effect.gen(function*() {
          annotate({ "mcp.outcome": "ok" })
          return yield* Effect.currentSpan
        })).pipe(Effect.withTracer(recordingTracer(spans)))
      expect(spans).toHaveLength(1)
      expect(spans[0]!.name).toBe("mcp.tools.call")
      expect(Object.fromEntries(spans[0]!.attributes)).toEqual({ "mcp.phase": "call", "mcp.outcome": "ok" })
      expect(spans[0]!.ended).toBe(true)
      expect(inner.name).toBe("mcp.tools.call")
    }))

  it.effect("with Effect's built-in tracer: no span, and annotations are ignored", () =>
    Effect.gen(function*() {
      const inner = yield* clientSpan("mcp.tools.call", { "mcp.phase": "call" }, (annotate) =>
        Effect.gen(function*() {
          annotate({ "mcp.outcome": "ok" })
          return yield* Effect.option(Effect.currentSpan)
        }))
      expect(Option.isNone(inner)).toBe(true)
    }))
})
