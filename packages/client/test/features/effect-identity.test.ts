/**
 * A call's effect identity (docs/DESIGN.md, "Effect identity"): the caller's key, sent in
 * `_meta["io.phasebound/effect-identity"]`, recorded in the call's observation and span, the same
 * on a caller's retry after a new session, validated before any I/O; it never makes the library
 * send a call twice.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type * as Testkit from "@phasebound/testkit"
import { Effect, Layer } from "effect"
import { McpClient } from "../../src/index.js"
import { effectIdentityMetaKey, isCallerMetaKey, maxEffectIdentityLength } from "../../src/internal/requestMeta.js"
import { connect } from "../../src/promise.js"
import { failureOf, server } from "../support/harness.js"
import { type W3cSpan, w3cTracer } from "../support/w3cTracer.js"

const IDENTITY = "order-7f3a/charge"

const callMetas = (srv: Testkit.TestServer) =>
  srv.requests.filter((r) => r.rpcMethod === "tools/call").map((r) => (r as Testkit.RecordedHttpRequest).meta ?? {})

describe("the effect identity key", () => {
  it("is namespaced, public, and the library's own: a caller's _meta may not carry it", () => {
    expect(McpClient.effectIdentityMetaKey).toBe("io.phasebound/effect-identity")
    expect(effectIdentityMetaKey).toBe(McpClient.effectIdentityMetaKey)
    expect(isCallerMetaKey(effectIdentityMetaKey)).toBe(false)
    expect(isCallerMetaKey("io.phasebound/other")).toBe(true)
  })
})

describe.concurrent.each([["handshake", {}], ["stateless", { era: "stateless" }]] as const)("a call's effect identity, %s server", (_, options) => {
  it.scopedLive("travels in _meta beside the caller's own keys, and is recorded in the call's observation", () =>
    Effect.gen(function*() {
      const srv = yield* server(options as Testkit.TestServerOptions)
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.callTool("echo", { text: "x" }, { effectIdentity: IDENTITY, meta: { "com.example/k": 1 } })
      yield* connection.callTool("echo", { text: "y" })
      const [first, second] = callMetas(srv)
      expect(first).toMatchObject({ [effectIdentityMetaKey]: IDENTITY, "com.example/k": 1 })
      expect(second).not.toHaveProperty([effectIdentityMetaKey])
      const calls = (yield* connection.observations).filter((o) => o.operation === "tools/call")
      expect(calls.map((o) => o.effectIdentity)).toEqual([IDENTITY, undefined])
      expect(calls.map((o) => o.outcome)).toEqual(["ok", "ok"])
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})

describe.concurrent("effect identity across sessions, failures and spans", () => {
  it.scopedLive("a caller's retry after SessionExpired carries the same identity on the new session; the library sent it once", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      srv.expireSession()
      const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }, { effectIdentity: IDENTITY }))
      expect(error).toMatchObject({ _tag: "SessionExpired", outcome: "not-applied" })
      expect(callMetas(srv)).toHaveLength(1)
      yield* connection.callTool("echo", { text: "x" }, { effectIdentity: IDENTITY })
      const metas = callMetas(srv)
      expect(metas.map((meta) => meta[effectIdentityMetaKey])).toEqual([IDENTITY, IDENTITY])
      const sessions = srv.requests.filter((r) => r.rpcMethod === "tools/call").map((r) => r.headers["mcp-session-id"])
      expect(sessions[0]).not.toBe(sessions[1])
      const calls = (yield* connection.observations).filter((o) => o.operation === "tools/call")
      expect(calls.map((o) => [o.outcome, o.effectIdentity])).toEqual([["SessionExpired", IDENTITY], ["ok", IDENTITY]])
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("the call's span carries it as mcp.effect_identity", () => {
    const spans: Array<W3cSpan> = []
    return Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.callTool("echo", { text: "x" }, { effectIdentity: IDENTITY })
      const call = spans.find((span) => span.name === "mcp.tools.call")!
      expect(call.attributes.get("mcp.effect_identity")).toBe(IDENTITY)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.withTracer(w3cTracer(spans)))
  })

  it.scopedLive("refused before any I/O: empty, too long, control characters, not a string, or the key in meta", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      const before = srv.requests.length
      for (const bad of ["", "x".repeat(maxEffectIdentityLength + 1), "a\nb", "a\u0000b", "a\u0085b", 7]) {
        const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }, { effectIdentity: bad as string }))
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "effectIdentity", outcome: "not-sent", retryable: false })
      }
      const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }, { meta: { [effectIdentityMetaKey]: IDENTITY } }))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "meta", outcome: "not-sent" })
      expect(srv.requests.length).toBe(before)
      // The longest identity, and any printable Unicode, are accepted.
      yield* connection.callTool("echo", { text: "x" }, { effectIdentity: "é".repeat(maxEffectIdentityLength) })
      yield* connection.callTool("echo", { text: "x" }, { effectIdentity: "wf:執行/活動 1" })
      expect(callMetas(srv).map((meta) => meta[effectIdentityMetaKey])).toEqual(["é".repeat(maxEffectIdentityLength), "wf:執行/活動 1"])
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.live("Promise API: callTool(name, args, { effectIdentity }) sends it", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      yield* Effect.promise(async () => {
        const connection = await connect({ url: srv.url, httpClient: Layer.orDie(FetchHttpClient.layer) })
        try {
          await connection.callTool("echo", { text: "x" }, { effectIdentity: IDENTITY })
        } finally {
          await connection.close()
        }
      })
      expect(callMetas(srv)[0]).toMatchObject({ [effectIdentityMetaKey]: IDENTITY })
    }).pipe(Effect.scoped))
})
