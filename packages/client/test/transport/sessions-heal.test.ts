/**
 * Sessions that heal (docs/DESIGN.md, "Sessions that heal"), over real loopback servers: the
 * operation that meets an expired session fails as it is (never sent again by the library), and
 * the next operation runs on a new session, discovered under the discovery budget, shared by
 * concurrent callers, bounded by `maxSessionRenewals`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Exit, Fiber, Scope } from "effect"
import { McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { eventually, expectReleased, failureOf, httpClients, server } from "../support/harness.js"

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) => result.content.map((c) => (c as { text?: string }).text ?? "").join("")

const legacy = (options?: Testkit.LegacyServerOptions) =>
  Effect.acquireRelease(Effect.promise(() => Testkit.startLegacyServer(options)), (srv) => Effect.promise(() => srv.close()))

/** The session ids the server saw on its `initialize` requests (none: a new session) and on the others. */
const initializeSessionIds = (srv: Testkit.TestServer) => srv.requests.filter((r) => r.rpcMethod === "initialize").map((r) => r.headers["mcp-session-id"])

describe.each(httpClients)("sessions that heal, through %s", (_, layer) => {
  const scoped = (name: string, body: () => Effect.Effect<unknown, unknown, any>) =>
    it.scopedLive(name, () => body().pipe(Effect.provide(layer)) as Effect.Effect<void, unknown, never>)

  scoped("Streamable HTTP: the expired call fails SessionExpired (retryable, never re-sent); the next runs on a new session", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      srv.expireSession()
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "SessionExpired", status: 404, stage: "call", outcome: "not-applied", retryable: true })
      expect(srv.counter()).toBe(0)
      expect(yield* connection.sessions).toBe(1)
      // The next call: a new initialize, without the old id, then the call, once.
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(srv.counter()).toBe(1)
      expect(yield* connection.sessions).toBe(2)
      expect(initializeSessionIds(srv)).toEqual([undefined, undefined])
      const observed = yield* connection.observations
      expect(observed.map((o) => [o.operation, o.outcome])).toEqual([
        ["tools/call", "SessionExpired"],
        ["new-session", "ok"],
        ["tools/call", "ok"]
      ])
      // The tools of the new session are the connection's.
      expect(connection.tools.map((t) => t.name)).toContain("increment")
      yield* expectReleased(connection)
    }))

  scoped("concurrent calls after an expiry share ONE new session; each runs once", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      srv.expireSession()
      yield* failureOf(connection.callTool("echo", { text: "lost" }))
      const results = yield* Effect.all(
        Array.from({ length: 5 }, () => connection.callTool("increment")),
        { concurrency: "unbounded" }
      )
      expect(results.map(textOf).sort()).toEqual(["1", "2", "3", "4", "5"])
      expect(srv.rpcCalls("initialize")).toBe(2)
      expect(yield* connection.sessions).toBe(2)
    }))

  scoped("a server that forgets every new session at once: maxSessionRenewals new sessions, then LimitExceeded without I/O", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"], policy: { maxSessionRenewals: 2 } })
      // Every call is answered 404: the session is gone each time.
      srv.script({ on: "tools/call", kind: "status", status: 404, times: Infinity })
      for (let i = 0; i < 3; i++) {
        const { error } = yield* failureOf(connection.callTool("echo", { text: "lost" }))
        expect(error).toMatchObject({ _tag: "SessionExpired", status: 404 })
      }
      expect(yield* connection.sessions).toBe(3)
      const before = srv.requests.length
      const { error } = yield* failureOf(connection.callTool("echo", { text: "lost" }))
      expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxSessionRenewals", outcome: "not-sent", retryable: false })
      // For good: nothing more is sent.
      const again = yield* failureOf(connection.listTools)
      expect(again.error).toMatchObject({ _tag: "LimitExceeded", limit: "maxSessionRenewals" })
      expect(srv.requests.length).toBe(before)
      expect(srv.rpcCalls("initialize")).toBe(3)
    }))

  scoped("an operation that succeeds in between resets the bound", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"], policy: { maxSessionRenewals: 1 } })
      for (let round = 1; round <= 3; round++) {
        srv.expireSession()
        yield* failureOf(connection.callTool("increment"))
        expect(textOf(yield* connection.callTool("increment"))).toBe(String(round))
      }
      expect(yield* connection.sessions).toBe(4)
    }))

  scoped("a new session that cannot be discovered fails the operation with the discovery's error; the next one tries again", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"], policy: { maxSessionRenewals: 3 } })
      srv.expireSession()
      yield* failureOf(connection.callTool("increment"))
      srv.script({ on: "initialize", kind: "status", status: 503 })
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 503, stage: "initialize", phase: "discovery" })
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      const observed = yield* connection.observations
      expect(observed.filter((o) => o.operation === "new-session").map((o) => o.outcome)).toEqual(["UpstreamFailure", "ok"])
    }))

  scoped("legacy HTTP+SSE: a GET stream that ended is replaced by a new session before the next call", () =>
    Effect.gen(function*() {
      const srv = yield* legacy()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      srv.script({ on: "tools/call", kind: "close-stream" })
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "stream-ended", stage: "call" })
      // The next call is not refused: a new GET stream, a new endpoint, the call once.
      expect(textOf(yield* connection.callTool("echo", { text: "again" }))).toBe("again")
      expect(yield* connection.sessions).toBe(2)
      expect(srv.rpcCalls("initialize")).toBe(2)
      expect(srv.rpcCalls("tools/call")).toBe(2)
      yield* expectReleased(connection)
    }))

  scoped("stateless (2026-07-28): no session to lose; a 404 is an UpstreamFailure and nothing is rediscovered", () =>
    Effect.gen(function*() {
      const srv = yield* server({ era: "stateless" })
      const connection = yield* McpClient.connect({ url: srv.url })
      srv.script({ on: "tools/call", kind: "status", status: 404 })
      const { error } = yield* failureOf(connection.callTool("echo", { text: "refused" }))
      expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 404, retryable: false })
      expect(textOf(yield* connection.callTool("echo", { text: "answered" }))).toBe("answered")
      expect(yield* connection.sessions).toBe(1)
      expect(srv.rpcCalls("server/discover")).toBe(1)
    }))

  scoped(
    "closing the connection while a new session is being discovered: the waiting call fails session-closed, the request is released",
    () =>
      Effect.gen(function*() {
        const srv = yield* server()
        const scope = yield* Scope.make()
        const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] }).pipe(Scope.extend(scope))
        srv.expireSession()
        yield* failureOf(connection.callTool("increment"))
        srv.script({ on: "initialize", kind: "headers-never-sent" })
        const waiting = yield* Effect.fork(connection.callTool("increment"))
        yield* eventually(() => srv.rpcCalls("initialize") === 2)
        yield* Scope.close(scope, Exit.void)
        const error = yield* Effect.flip(Fiber.join(waiting))
        expect(error).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", stage: "call", outcome: "not-sent" })
        yield* eventually(() => srv.abortedResponses() >= 1)
        expect(srv.counter()).toBe(0)
      })
  )
})

describe("Promise API", () => {
  it.live("the expired call rejects SessionExpired with retryable: true; the next call succeeds on a new session", () =>
    Effect.promise(async () => {
      const srv = await Testkit.startServer()
      const connection = await connect({ url: srv.url, revisions: ["2025-11-25"] })
      try {
        srv.expireSession()
        await expect(connection.callTool("increment")).rejects.toMatchObject({ _tag: "SessionExpired", retryable: true })
        expect(textOf(await connection.callTool("increment"))).toBe("1")
        expect(connection.tools.length).toBeGreaterThan(0)
      } finally {
        await connection.close()
        await srv.close()
      }
    }))
})
