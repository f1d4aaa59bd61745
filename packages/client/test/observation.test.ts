/**
 * Observation: one span per public operation, with phase, stage, transport, revision, observed
 * bytes and outcome, and never a URL, header or body in its attributes. The library logs nothing.
 */
import { FetchHttpClient } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { McpClient } from "../src/index.js"
import { server } from "./support/harness.js"
import { type Recorded, recordingTracer } from "./support/recordingTracer.js"

it.scopedLive("spans per operation, without URL, header or body; no log lines", () =>
  Effect.gen(function*() {
    const spans: Array<Recorded> = []
    const logs: Array<unknown> = []
    const srv = yield* server()
    const url = `${srv.url}?token=CANARY-SPAN`
    const program = Effect.gen(function*() {
      const connection = yield* McpClient.connect({ url, headers: { authorization: "Bearer CANARY-SPAN-H" } })
      yield* connection.callTool("echo", { text: "BODY-CANARY" })
      srv.script({ on: "tools/call", kind: "exact-size", bytes: 5_000 })
      yield* Effect.flip(connection.callTool("echo", { text: "x" }, { maxBytes: 1_000 }))
    }).pipe(
      Effect.withTracer(recordingTracer(spans)),
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make((entry) => logs.push(entry))))
    )
    yield* program
    const names = spans.map((s) => s.name)
    expect(names.filter((n) => n === "mcp.connect")).toHaveLength(1)
    expect(names.filter((n) => n === "mcp.tools.call")).toHaveLength(2)
    const connect = spans.find((s) => s.name === "mcp.connect")!
    expect(Object.fromEntries(connect.attributes)).toMatchObject({
      "mcp.phase": "discovery",
      "mcp.transport": "streamable-http",
      "mcp.protocol.version": "2025-11-25"
    })
    const [ok, refused] = spans.filter((s) => s.name === "mcp.tools.call")
    expect(Object.fromEntries(ok!.attributes)).toMatchObject({ "mcp.phase": "call", "mcp.stage": "call", "mcp.outcome": "ok" })
    expect(Object.fromEntries(refused!.attributes)).toMatchObject({
      "mcp.outcome": "ByteCeilingExceeded",
      "mcp.observed_bytes": 1_001
    })
    for (const span of spans) {
      expect(span.ended).toBe(true)
      const text = JSON.stringify([...span.attributes])
      for (const forbidden of ["CANARY", "127.0.0.1", "http:", "://", "BODY", "authorization"]) expect(text).not.toContain(forbidden)
    }
    expect(logs).toEqual([])
  }).pipe(Effect.provide(FetchHttpClient.layer)))
