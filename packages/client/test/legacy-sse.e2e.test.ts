/**
 * Legacy HTTP+SSE (2024-11-05) end to end, and transport negotiation under one discovery
 * deadline, over real loopback HTTP through every HTTP client layer.
 */
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { McpClient, McpSchema } from "../src/index.js"
import { eventually, expectReleased, expectTag, failureOf, httpClients, server } from "./support/harness.js"

const legacy = (options?: Testkit.LegacyServerOptions) => Testkit.scopedLegacy(options)

describe.each(httpClients)("legacy HTTP+SSE through %s", (_, httpClient) => {
  const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
    it.scopedLive(name, () => body().pipe(Effect.provide(httpClient)) as Effect.Effect<void, unknown, never>, timeout)

  describe("transport choice", () => {
    scoped("forced sse: the endpoint is the readiness step, then discovery and calls", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
        expect(connection.transport).toBe("sse")
        expect(connection.protocolVersion).toBe("2024-11-05")
        expect(connection.tools.map((t) => t.name)).toEqual(["add", "echo", "increment"])
        expect(yield* connection.callTool("add", { a: 1, b: 2 })).toMatchObject({ content: [{ text: "3" }] })
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        expect(srv.requests.filter((r) => r.method === "POST" && r.url === "/sse")).toHaveLength(0)
        yield* expectReleased(connection)
      }))

    for (const status of [400, 404, 405] as const) {
      scoped(`auto falls back when the first POST is answered ${status} without a JSON-RPC error`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy({ postToSsePath: status })
          const connection = yield* McpClient.connect({ url: srv.url })
          expect(connection.transport).toBe("sse")
          yield* connection.callTool("increment")
          expect(srv.counter()).toBe(1)
          // The ladder, under one deadline: the stateless probe, the handshake, then legacy.
          const [discover, initialize, get] = srv.requests
          expect(discover).toMatchObject({ method: "POST", url: "/sse", rpcMethod: "server/discover" })
          expect(initialize).toMatchObject({ method: "POST", url: "/sse", rpcMethod: "initialize" })
          expect(get).toMatchObject({ method: "GET", url: "/sse" })
        }))
    }

    scoped("forced streamable-http never falls back", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "streamable-http" }))
        expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 404, stage: "initialize" })
        expect(srv.requests.filter((r) => r.method === "GET")).toHaveLength(0)
      }))

    const neverFallBack = [
      ["401", { kind: "status", status: 401 }, "Unauthorized"],
      ["403", { kind: "status", status: 403 }, "Forbidden"],
      ["500", { kind: "status", status: 500 }, "UpstreamFailure"],
      ["503", { kind: "status", status: 503 }, "UpstreamFailure"],
      ["a JSON-RPC error on 400", { kind: "jsonrpc-error", code: -32600, message: "bad request" }, "RemoteRefusal"],
      ["a timeout", { kind: "headers-never-sent" }, "DeadlineExceeded"]
    ] as const
    for (const [name, fault, tag] of neverFallBack) {
      scoped(`auto never falls back on ${name}`, () =>
        Effect.gen(function*() {
          const srv = yield* server()
          srv.script({ on: "initialize", ...fault })
          const { error } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 400 } } }))
          expectTag(error, tag)
          expect((error as { stage: string }).stage).toBe("initialize")
          yield* Effect.sleep("100 millis")
          expect(srv.requests.filter((r) => r.method === "GET")).toHaveLength(0)
        }))
    }

    scoped("auto never falls back on a refused connection", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const url = srv.url
        yield* Effect.promise(() => srv.close())
        const { error } = yield* failureOf(McpClient.connect({ url }))
        // The first POST is the stateless probe: a refused connection ends the negotiation there.
        expect(error).toMatchObject({ _tag: "TransportFailure", stage: "discover", outcome: "not-sent" })
      }))

    scoped("one deadline: a slow refusal of the first POST plus a slow endpoint fail at the single deadline", () =>
      Effect.gen(function*() {
        const srv = yield* legacy({ postToSsePathDelayMs: 400 })
        srv.script({ kind: "endpoint-delay", ms: 400 })
        // The handshake revisions only: the first POST is initialize (the stateless probe would be
        // one more slow refusal before it).
        const { error, elapsedMs } = yield* failureOf(
          McpClient.connect({ url: srv.url, revisions: McpSchema.handshakeRevisions, policy: { discovery: { timeout: 600 } } })
        )
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "endpoint", phase: "discovery", limits: { timeoutMs: 600 } })
        // Falling back did not restart the clock: well under the sum of two deadlines.
        // Each delay alone fits the deadline: only one shared deadline makes this fail at all.
        expect(elapsedMs).toBeGreaterThanOrEqual(550)
        expect(elapsedMs).toBeLessThan(1_500)
        yield* eventually(() => srv.closedStreams() === 1)
      }))
  })

  scoped("the GET stream belongs to the connection, not to discovery: calls go on long after the discovery deadline", () =>
    Effect.gen(function*() {
      const srv = yield* legacy()
      const scope = yield* Scope.make()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { discovery: { timeout: 300 } } })
        .pipe(Scope.extend(scope))
      const started = Date.now()
      for (let i = 1; i <= 8; i++) {
        yield* Effect.sleep("300 millis")
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: String(i) }] })
      }
      expect(Date.now() - started).toBeGreaterThan(2_000)
      expect(srv.openStreams()).toBe(1)
      yield* Scope.close(scope, Exit.void)
      yield* eventually(() => srv.closedStreams() === 1)
    }), 20_000)

  describe("endpoint fence", () => {
    scoped("a foreign endpoint fails discovery and nothing, credentials above all, reaches the foreign origin", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const foreign = yield* server()
        srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
        const { error } = yield* failureOf(McpClient.connect({
          url: srv.url,
          transport: "sse",
          headers: { authorization: "Bearer CANARY-FENCE-1234" }
        }))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", stage: "endpoint", reason: "foreign-endpoint", outcome: "not-sent" })
        expect(JSON.stringify(error)).not.toContain("CANARY")
        yield* Effect.sleep("100 millis")
        expect(foreign.requests).toHaveLength(0)
        yield* eventually(() => srv.closedStreams() === 1)
      }))

    scoped("another port on the same host is a foreign origin", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const other = yield* legacy()
        srv.script({ kind: "endpoint-foreign", target: `${other.origin}/messages?sessionId=x` })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse" }))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "foreign-endpoint" })
        expect(other.requests).toHaveLength(0)
      }))

    for (const [kind, reason] of [["endpoint-malformed", "bad-endpoint"], ["endpoint-empty", "bad-endpoint"]] as const) {
      scoped(`${kind} fails discovery with ProtocolViolation at stage endpoint`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy()
          srv.script({ kind })
          const { error } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse" }))
          expect(error).toMatchObject({ _tag: "ProtocolViolation", stage: "endpoint", reason })
          yield* eventually(() => srv.closedStreams() === 1)
        }))
    }

    scoped("a missing endpoint fails at the discovery deadline, stage endpoint", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        srv.script({ kind: "endpoint-never-sent" })
        const { error, elapsedMs } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse", policy: { discovery: { timeout: 300 } } }))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "endpoint", outcome: "not-sent" })
        expect(elapsedMs).toBeLessThan(1_500)
        yield* eventually(() => srv.closedStreams() === 1)
      }))

    for (const kind of ["endpoint-relative", "endpoint-absolute-same-origin", "message-before-endpoint"] as const) {
      scoped(`${kind} is accepted`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy()
          srv.script({ kind })
          const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
          yield* connection.callTool("increment")
          expect(srv.counter()).toBe(1)
        }))
    }
  })

  describe("the shared stream", () => {
    const ceiling = 3_000
    for (const bytes of [ceiling - 1, ceiling, ceiling + 1]) {
      scoped(`a call answer frame of ${bytes} bytes against a call ceiling of ${ceiling}: only that call fails, the stream goes on`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy()
          const connection = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { call: { maxBytes: ceiling } } })
          srv.script({ on: "tools/call", kind: "exact-size", bytes, chunkSize: 7 })
          const exit = yield* Effect.exit(connection.callTool("echo", { text: "x" }))
          if (bytes <= ceiling) {
            expect(Exit.isSuccess(exit)).toBe(true)
          } else {
            expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
              _tag: "ByteCeilingExceeded",
              stage: "call",
              limits: { maxBytes: ceiling },
              observedBytes: ceiling + 1,
              outcome: "applied"
            })
          }
          // The stream is intact: the next call works on the same session.
          expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
          expect(srv.openStreams()).toBe(1)
          yield* expectReleased(connection)
        }))

      scoped(`a tools/list frame of ${bytes} bytes against a discovery ceiling of ${ceiling}`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy()
          srv.script({ on: "tools/list", kind: "exact-size", bytes, chunkSize: 5 })
          const exit = yield* Effect.exit(McpClient.connect({
            url: srv.url,
            transport: "sse",
            policy: { discovery: { maxBytes: ceiling }, call: { maxBytes: 10 }, unsolicited: { maxBytes: 100 } }
          }))
          if (bytes <= ceiling) {
            expect(Exit.isSuccess(exit)).toBe(true)
          } else {
            expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
              _tag: "ByteCeilingExceeded",
              stage: "list-tools",
              phase: "discovery",
              limits: { maxBytes: ceiling }
            })
            yield* eventually(() => srv.closedStreams() === 1)
          }
        }))
    }

    scoped("a frame past every bound aborts the stream, releases the session and fails every pending request", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({
          url: srv.url,
          transport: "sse",
          policy: { call: { maxBytes: 64 * 1024 }, unsolicited: { maxBytes: 1024 } }
        })
        srv.script({ on: "tools/call", kind: "no-response" })
        const waiting = yield* Effect.fork(connection.callTool("echo", { text: "waiting" }))
        yield* eventually(() => srv.rpcCalls("tools/call") === 1)
        srv.script({ on: "tools/call", kind: "never-ending-frame" })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", limits: { maxBytes: 64 * 1024 } })
        expect((error as { observedBytes: number }).observedBytes).toBeGreaterThan(64 * 1024)
        const other = yield* Fiber.join(waiting).pipe(Effect.flip)
        expect(other).toMatchObject({ _tag: "ByteCeilingExceeded", stage: "call" })
        yield* eventually(() => srv.closedStreams() === 1)
        const after = yield* failureOf(connection.callTool("increment"))
        expect(after.error).toMatchObject({ _tag: "TransportFailure", outcome: "not-sent" })
        expect(srv.counter()).toBe(1)
        yield* expectReleased(connection)
      }))

    scoped("a corrupt frame gives up the stream: every pending call fails and the GET is released", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
        srv.script({ on: "tools/call", kind: "no-response" })
        const waiting = yield* Effect.fork(connection.callTool("echo", { text: "waiting" }))
        yield* eventually(() => srv.rpcCalls("tools/call") === 1)
        srv.script({ on: "tools/call", kind: "corrupt-frame" })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-json", stage: "call" })
        expect(yield* Fiber.join(waiting).pipe(Effect.flip)).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-json" })
        yield* eventually(() => srv.closedStreams() === 1)
        const after = yield* failureOf(connection.callTool("increment"))
        expect(after.error).toMatchObject({ _tag: "TransportFailure", outcome: "not-sent" })
        yield* expectReleased(connection)
      }))

    scoped("a 404 on a POST ends the session: SessionExpired, and the GET is released", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
        srv.script({ on: "tools/call", kind: "post-status", status: 404 })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "SessionExpired", stage: "call" })
        yield* eventually(() => srv.closedStreams() === 1)
        const after = yield* failureOf(connection.callTool("increment"))
        expect(after.error).toMatchObject({ outcome: "not-sent" })
        expect(srv.rpcCalls("tools/call")).toBe(1)
        yield* expectReleased(connection)
      }))

    scoped("a completed unsolicited frame over unsolicited.maxBytes is dropped; the call still succeeds", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({
          url: srv.url,
          transport: "sse",
          policy: { call: { maxBytes: 10_000 }, unsolicited: { maxBytes: 500 } }
        })
        srv.script({ on: "tools/call", kind: "unsolicited-frame", bytes: 2_000 })
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        expect((yield* connection.diagnostics).droppedFrames).toBe(1)
      }))

    scoped("a stream closed mid-call fails the call promptly with TransportFailure; nothing is re-sent", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { timeout: 30_000 } })
        srv.script({ on: "tools/call", kind: "close-stream" })
        const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "TransportFailure", reason: "stream-ended", stage: "call", outcome: "unknown", retryable: false })
        expect(elapsedMs).toBeLessThan(2_000)
        yield* Effect.sleep("200 millis")
        expect(srv.counter()).toBe(1)
        expect(srv.rpcCalls("tools/call")).toBe(1)
        yield* expectReleased(connection)
      }))

    scoped("a stream dropped right after the endpoint fails initialize promptly", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        srv.script({ kind: "drop-stream-after-endpoint" })
        const { error, elapsedMs } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse", policy: { timeout: 30_000 } }))
        // Either the client saw the stream end first, or the server already forgot the session (404).
        expect(["TransportFailure", "SessionExpired"]).toContain((error as { _tag: string })._tag)
        expect(error).toMatchObject({ stage: "initialize", phase: "discovery" })
        expect(elapsedMs).toBeLessThan(2_000)
      }))
  })

  describe("no replay on any transport: a call that failed once arrived once", () => {
    const faults = [
      ["a deadline", { kind: "no-response" }, "DeadlineExceeded"],
      ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
      ["a 500 on the POST", { kind: "post-status", status: 500 }, "UpstreamFailure"],
      ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, "RemoteRefusal"],
      ["a closed stream", { kind: "close-stream" }, "TransportFailure"]
    ] as const
    for (const [name, fault, tag] of faults) {
      scoped(`after ${name} (auto mode, fallen back to legacy)`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy()
          const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300, maxBytes: 1_000 } } })
          expect(connection.transport).toBe("sse")
          srv.script({ on: "tools/call", ...fault })
          const { error } = yield* failureOf(connection.callTool("increment"))
          expectTag(error, tag)
          yield* Effect.sleep("300 millis")
          expect(srv.counter()).toBe(1)
          expect(srv.rpcCalls("tools/call")).toBe(1)
          // Never re-sent over Streamable HTTP either: the only POSTs to /sse were the two probes
          // of the negotiation (server/discover, initialize).
          expect(srv.requests.filter((r) => r.method === "POST" && r.url === "/sse").map((r) => r.rpcMethod))
            .toEqual(["server/discover", "initialize"])
        }))
    }
  })

  scoped("an interrupted call sends notifications/cancelled to the endpoint", () =>
    Effect.gen(function*() {
      const srv = yield* legacy()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      srv.script({ on: "tools/call", kind: "no-response" })
      const fiber = yield* Effect.fork(connection.callTool("increment"))
      yield* eventually(() => srv.rpcCalls("tools/call") === 1)
      yield* Fiber.interrupt(fiber)
      yield* eventually(() => srv.rpcCalls("notifications/cancelled") === 1)
      yield* expectReleased(connection)
    }))
})
