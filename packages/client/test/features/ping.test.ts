/**
 * `ping`: its own small budget (phase `call`, stage `ping`), the same byte,
 * error and release rules as every request, in both eras and both APIs.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type * as Testkit from "@phasebound/testkit"
import { Effect, Layer } from "effect"
import { McpClient, PhasePolicy } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { expectReleased, failureOf, server } from "../support/harness.js"

describe.each([["handshake", {}], ["stateless", { era: "stateless" }]] as const)("ping, %s server", (_, options) => {
  const start = () => server(options as Testkit.TestServerOptions)
  // 2026-07-28 removed ping: its liveness check is server/discover.
  const method = "era" in options ? "server/discover" : "ping"

  it.scopedLive("answered: the round trip in milliseconds, one ping on the wire, an observation", () =>
    Effect.gen(function*() {
      const srv = yield* start()
      const connection = yield* McpClient.connect({ url: srv.url })
      const ms = yield* connection.ping
      expect(ms).toBeGreaterThanOrEqual(0)
      expect(ms).toBeLessThan(5_000)
      expect(srv.rpcCalls(method)).toBe("era" in options ? 2 : 1)
      expect((yield* connection.observations).map((o) => [o.operation, o.stage, o.outcome])).toEqual([["ping", "ping", "ok"]])
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("never answered: DeadlineExceeded at the ping timeout, stage ping, phase call; released", () =>
    Effect.gen(function*() {
      const srv = yield* start()
      const connection = yield* McpClient.connect({ url: srv.url, policy: { ping: { timeout: 300 } } })
      srv.script({ on: method, kind: "headers-never-sent" })
      const { elapsedMs: ms, error } = yield* failureOf(connection.ping)
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "ping", phase: "call", limits: { timeoutMs: 300, maxBytes: 65_536 } })
      expect(ms).toBeGreaterThanOrEqual(280)
      expect(ms).toBeLessThan(3_000)
      yield* expectReleased(connection)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("an answer past the ping ceiling: ByteCeilingExceeded, whatever the call ceiling", () =>
    Effect.gen(function*() {
      const srv = yield* start()
      const connection = yield* McpClient.connect({ url: srv.url, policy: { ping: { maxBytes: 2_000 } } })
      srv.script({ on: method, kind: "exact-size", bytes: 2_001 })
      const { error } = yield* failureOf(connection.ping)
      expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", stage: "ping", observedBytes: 2_001, limits: { maxBytes: 2_000 } })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("a JSON-RPC error: RemoteRefusal", () =>
    Effect.gen(function*() {
      const srv = yield* start()
      const connection = yield* McpClient.connect({ url: srv.url })
      srv.script({ on: method, kind: "jsonrpc-error", code: -32603, message: "not now" })
      const { error } = yield* failureOf(connection.ping)
      expect(error).toMatchObject({ _tag: "RemoteRefusal", code: -32603, stage: "ping" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})

describe("the ping budget", () => {
  it("is validated like every budget", () => {
    for (const [input, option] of [[{ ping: { timeout: 0 } }, "ping.timeout"], [{ ping: { maxBytes: 1.5 } }, "ping.maxBytes"]] as const) {
      const error = Effect.runSync(Effect.flip(PhasePolicy.make(input)))
      expect(error).toMatchObject({ _tag: "InvalidOption", option })
    }
    // Its defaults are its own, not the baseline's.
    expect(Effect.runSync(PhasePolicy.make({ timeout: "10 minutes" })).ping).toMatchObject({ timeoutMs: 5_000, maxBytes: 65_536 })
  })
})

describe("Promise API", () => {
  it.live("connection.ping() resolves with the round trip", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const ms = yield* Effect.promise(async () => {
        const connection = await connect({ url: srv.url, httpClient: Layer.orDie(FetchHttpClient.layer) })
        try {
          return await connection.ping()
        } finally {
          await connection.close()
        }
      })
      expect(ms).toBeGreaterThanOrEqual(0)
      expect(srv.rpcCalls("ping")).toBe(1)
    }).pipe(Effect.scoped))
})
