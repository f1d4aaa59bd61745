/**
 * `_meta` on a call (docs/DESIGN.md, "Request _meta and trace context"): the caller's keys
 * validated before any I/O and sent as given, the current span's W3C `traceparent` added when a
 * tracer is installed, nothing of it in spans.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type * as Testkit from "@phasebound/testkit"
import { Effect, Layer } from "effect"
import { McpClient } from "../../src/index.js"
import { isCallerMetaKey, maxMetaBytes } from "../../src/internal/requestMeta.js"
import { connect } from "../../src/promise.js"
import { failureOf, server } from "../support/harness.js"
import { type W3cSpan, w3cTracer } from "../support/w3cTracer.js"

const MARKER = "META-MARKER-3c9e"

/** The `_meta` of the server's `tools/call` requests. */
const callMetas = (srv: Testkit.TestServer) =>
  srv.requests.filter((r) => r.rpcMethod === "tools/call").map((r) => (r as Testkit.RecordedHttpRequest).meta ?? {})

describe("the keys a caller may put in _meta", () => {
  it("accepts the spec's forms, refuses reserved and malformed keys", () => {
    for (const key of ["note", "com.example/key", "com.example.mcp/x", "a.b-c/x_y.z", "com.example/", "traceparent", "tracestate", "baggage"]) {
      expect(isCallerMetaKey(key), key).toBe(true)
    }
    for (
      const key of [
        "",
        "progressToken",
        "io.modelcontextprotocol/protocolVersion",
        "dev.mcp/x",
        "org.modelcontextprotocol.api/x",
        "-bad",
        "bad-",
        "com..example/x",
        "1com.example/x",
        "com.example-/x",
        "a b",
        "com.example/x y"
      ]
    ) {
      expect(isCallerMetaKey(key), key).toBe(false)
    }
  })
})

describe.each([["handshake", {}], ["stateless", { era: "stateless" }]] as const)("a call's _meta, %s server", (_, options) => {
  it.scopedLive("the caller's keys reach the server as given; the library's own fields stay the library's", () =>
    Effect.gen(function*() {
      const srv = yield* server(options as Testkit.TestServerOptions)
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.callTool("echo", { text: "x" }, { meta: { "com.example/request": MARKER, note: 1 } })
      const [meta] = callMetas(srv)
      expect(meta).toMatchObject({ "com.example/request": MARKER, note: 1 })
      expect(meta).not.toHaveProperty("traceparent")
      if (options !== undefined && "era" in options) expect(meta).toHaveProperty(["io.modelcontextprotocol/protocolVersion"])
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("with a tracer installed: the call span's traceparent; a caller's own traceparent wins; nothing of _meta in spans", () => {
    const spans: Array<W3cSpan> = []
    return Effect.gen(function*() {
      const srv = yield* server(options as Testkit.TestServerOptions)
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.callTool("echo", { text: "x" }, { meta: { "com.example/request": MARKER } })
      const own = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
      yield* connection.callTool("echo", { text: "y" }, { meta: { traceparent: own } })
      const [first, second] = callMetas(srv)
      const call = spans.find((span) => span.name === "mcp.tools.call")!
      expect(first!["traceparent"]).toBe(`00-${call.traceId}-${call.spanId}-01`)
      expect(second!["traceparent"]).toBe(own)
      for (const span of spans) for (const value of span.attributes.values()) expect(String(value)).not.toContain(MARKER)
    }).pipe(
      Effect.provide(FetchHttpClient.layer),
      Effect.withTracer(w3cTracer(spans))
    )
  })
})

describe("tracestate", () => {
  const callWith = (traceState: string) => {
    const spans: Array<W3cSpan> = []
    return Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.callTool("echo", { text: "x" })
      return callMetas(srv)[0]!
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.withTracer(w3cTracer(spans, traceState)))
  }

  it.scopedLive("an OpenTelemetry span's W3C trace state travels beside traceparent", () =>
    Effect.gen(function*() {
      const meta = yield* callWith("vendor=t61rcWkgMzE,other@tenant=00f067aa0ba902b7")
      expect(meta["tracestate"]).toBe("vendor=t61rcWkgMzE,other@tenant=00f067aa0ba902b7")
      expect(meta["traceparent"]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    }))

  it.scopedLive("a trace state that is not a valid W3C one is not sent", () =>
    Effect.gen(function*() {
      for (const bad of ["no-equals-sign", "Upper=case", `a=${"x".repeat(600)}`, "a=b\nc=d"]) {
        const meta = yield* callWith(bad)
        expect(meta, bad).not.toHaveProperty("tracestate")
        expect(meta["traceparent"]).toBeDefined()
      }
    }))
})

describe("refused before any I/O", () => {
  it.scopedLive("a reserved key, a non-object, or more than 64 KiB: InvalidOption meta, nothing sent", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      const before = srv.requests.length
      const bad: ReadonlyArray<unknown> = [
        { "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
        { progressToken: 1 },
        [],
        { big: "x".repeat(maxMetaBytes) }
      ]
      for (const meta of bad) {
        const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }, { meta: meta as Record<string, unknown> }))
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "meta", stage: "call", outcome: "not-sent", retryable: false })
      }
      expect(srv.requests.length).toBe(before)
      // Exactly 64 KiB of JSON is accepted.
      const padding = maxMetaBytes - JSON.stringify({ big: "" }).length
      yield* connection.callTool("echo", { text: "x" }, { meta: { big: "x".repeat(padding) } })
      expect(callMetas(srv)).toHaveLength(1)
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})

describe("Promise API", () => {
  it.live("callTool(name, args, { meta }) sends it", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      yield* Effect.promise(async () => {
        const connection = await connect({ url: srv.url, httpClient: Layer.orDie(FetchHttpClient.layer) })
        try {
          await connection.callTool("echo", { text: "x" }, { meta: { "com.example/request": MARKER } })
        } finally {
          await connection.close()
        }
      })
      expect(callMetas(srv)[0]).toMatchObject({ "com.example/request": MARKER })
    }).pipe(Effect.scoped))
})
