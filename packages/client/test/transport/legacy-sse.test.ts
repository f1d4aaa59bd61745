/**
 * Legacy HTTP+SSE (2024-11-05) end to end, and transport negotiation under one discovery
 * deadline, over real loopback HTTP through every HTTP client layer: the fall back and when it
 * never happens, the endpoint fence, the shared stream's own rules (a frame past every bound, a
 * corrupt frame, a 404, unsolicited and late frames), no replay after falling back, and the
 * cancellation notice's target.
 *
 * Budgets per phase, exact byte ceilings, deadlines, interruption and abort, release and
 * redaction over this row are the contract suite's (packages/client/test/contract/).
 */
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Scope, TestClock } from "effect"
import type * as http from "node:http"
import { McpClient, McpConnectionError, McpSchema } from "../../src/index.js"
import { eventually, expectReleased, expectTag, failureOf, httpClients, server } from "../support/harness.js"
import { rawHttpServer } from "../support/rawMcpServer.js"

const legacy = (options?: Testkit.LegacyServerOptions) => Testkit.scopedLegacy(options)

const sseFrame = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`

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
      // The testkit sends a scripted JSON-RPC error with status 200; 400/404/405 are below.
      ["a JSON-RPC error answered 200", { kind: "jsonrpc-error", code: -32600, message: "bad request" }, "RemoteRefusal"],
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
          // The negotiation is over when connect fails: a legacy GET could only have come before.
          expect(srv.requests.filter((r) => r.method === "GET")).toHaveLength(0)
        }))
    }

    // docs/GUIDE.md, "Revisions, transports and fallback": legacy HTTP+SSE only when initialize was
    // answered 400, 404 or 405 with a body that is NOT a JSON-RPC error. With one, the server is
    // a Streamable HTTP server that refused: its refusal is the answer.
    for (const status of [400, 404, 405] as const) {
      scoped(`auto never falls back when initialize is answered ${status} with a JSON-RPC error body`, () =>
        Effect.gen(function*() {
          const raw = yield* rawHttpServer((req, res, { message }) => {
            // A GET would be the legacy transport's first step: answered, and recorded above.
            if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end()
            if (message?.method === "initialize") {
              res.writeHead(status, { "content-type": "application/json" })
              return void res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32600, message: "bad request" } }))
            }
            // The stateless probe, refused as a 2025 server refuses it (no JSON-RPC body): the
            // handshake follows.
            res.writeHead(404, { "content-type": "text/plain" }).end("not found")
          })
          const { error } = yield* failureOf(McpClient.connect({ url: `${raw.origin}/mcp`, policy: { discovery: { timeout: 10_000 } } }))
          expect(error).toMatchObject({
            _tag: "RemoteRefusal",
            stage: "initialize",
            phase: "discovery",
            status,
            code: -32600,
            remoteMessage: "bad request",
            outcome: "not-applied",
            retryable: false
          })
          // The probe, then initialize; no GET to any SSE path, nothing after the refusal.
          expect(raw.received).toMatchObject([
            { method: "POST", path: "/mcp", rpcMethod: "server/discover" },
            { method: "POST", path: "/mcp", rpcMethod: "initialize" }
          ])
        }))
    }

    scoped("a URL answered 404 to everything: the failure's attempts keep the first POST's answer and the fallback's", () =>
      Effect.gen(function*() {
        const body = "no such page: /wrong?token=CANARY-body-404"
        const raw = yield* rawHttpServer((_req, res) => void res.writeHead(404, { "content-type": "text/plain" }).end(body))
        const url = `${raw.origin}/wrong?token=CANARY-query-404`
        const { error } = yield* failureOf(McpClient.connect({ url, policy: { discovery: { timeout: 10_000 } } }))
        // The last attempt is the error itself: legacy's GET, refused with 404.
        expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 404, phase: "discovery" })
        const record = McpConnectionError.toRecord(error)
        expect(record.attempts).toEqual([
          { era: "stateless", transport: "streamable-http", tag: "UpstreamFailure", stage: "discover", status: 404 },
          { era: "handshake", transport: "streamable-http", tag: "UpstreamFailure", stage: "initialize", status: 404 },
          { era: "handshake", transport: "sse", tag: "UpstreamFailure", stage: record.stage, status: 404 }
        ])
        expect(error.message).toContain("after 3 attempts")
        // No URL, query value, body or header in any public form.
        for (const text of [JSON.stringify(error), String(error), error.message]) {
          expect(text).not.toContain("CANARY")
          expect(text).not.toContain("127.0.0.1")
          expect(text).not.toContain("no such page")
        }
        expect(raw.received.map((r) => [r.method, r.rpcMethod])).toEqual([
          ["POST", "server/discover"],
          ["POST", "initialize"],
          ["GET", undefined]
        ])
      }))

    scoped(
      "a deadline that ends the negotiation after a fallback lists the attempts before it and the one it ended; on the first attempt or at tools/list, none",
      () =>
        Effect.gen(function*() {
          // POSTs are refused with 404 (no MCP endpoint); the legacy GET opens and never names an endpoint.
          const raw = yield* rawHttpServer((req, res) => {
            if (req.method === "GET") res.writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n")
            else res.writeHead(404, { "content-type": "text/plain" }).end("not here")
          })
          const { error } = yield* failureOf(McpClient.connect({ url: `${raw.origin}/mcp`, policy: { discovery: { timeout: 800 } } }))
          expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "endpoint", phase: "discovery", limits: { timeoutMs: 800 } })
          expect(McpConnectionError.toRecord(error).attempts).toEqual([
            { era: "stateless", transport: "streamable-http", tag: "UpstreamFailure", stage: "discover", status: 404 },
            { era: "handshake", transport: "streamable-http", tag: "UpstreamFailure", stage: "initialize", status: 404 },
            { era: "handshake", transport: "sse", tag: "DeadlineExceeded", stage: "endpoint" }
          ])
          expect(error.message).toContain("after 3 attempts")

          // A stalled first POST: the deadline ends the only attempt.
          const stalled = yield* rawHttpServer(() => {})
          const first = yield* failureOf(McpClient.connect({ url: `${stalled.origin}/mcp`, policy: { discovery: { timeout: 300 } } }))
          expect(first.error).toMatchObject({ _tag: "DeadlineExceeded", stage: "discover" })
          expect(McpConnectionError.toRecord(first.error)).not.toHaveProperty("attempts")

          // A 2025 server is reached after the stateless probe failed; a deadline at tools/list is
          // the session's, after the negotiation: no attempts.
          const srv = yield* Testkit.scoped()
          srv.script({ on: "tools/list", kind: "headers-never-sent" })
          const listing = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 500 } } }))
          expect(listing.error).toMatchObject({ _tag: "DeadlineExceeded", stage: "list-tools" })
          expect(McpConnectionError.toRecord(listing.error)).not.toHaveProperty("attempts")
        })
    )

    scoped("a failure of the only attempt carries no attempts", () =>
      Effect.gen(function*() {
        const raw = yield* rawHttpServer((_req, res) => void res.writeHead(404).end())
        const { error } = yield* failureOf(McpClient.connect({ url: `${raw.origin}/mcp`, transport: "sse" }))
        expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 404 })
        expect(McpConnectionError.toRecord(error)).not.toHaveProperty("attempts")
      }))

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

  // Under TestClock (the connection's deadlines run on it): moving the clock past the discovery
  // deadline fires that deadline if anything of discovery still held the GET stream, and each call
  // answered afterwards on that one stream is the later event that shows it was not cut.
  it.scoped("the GET stream belongs to the connection, not to discovery: calls go on long after the discovery deadline", () =>
    Effect.gen(function*() {
      // This clock drives the discovery deadline: a stalled discovery ends when it passes 300 ms.
      const stalled = yield* rawHttpServer(() => {})
      const stalling = yield* Effect.fork(
        failureOf(McpClient.connect({ url: `${stalled.origin}/mcp`, transport: "sse", policy: { discovery: { timeout: 300 } } }))
      )
      yield* eventually(() => stalled.received.length === 1)
      yield* TestClock.adjust("300 millis")
      expect((yield* Fiber.join(stalling)).error).toMatchObject({ _tag: "DeadlineExceeded", phase: "discovery" })

      const srv = yield* legacy()
      const scope = yield* Scope.make()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { discovery: { timeout: 300 } } })
        .pipe(Scope.extend(scope))
      // Calls spread over eight discovery deadlines of the connection's clock.
      for (let i = 1; i <= 8; i++) {
        yield* TestClock.adjust("300 millis")
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: String(i) }] })
      }
      // The same GET stream all along: opened once, never cut by the client nor reopened.
      expect(srv.requests.filter((r) => r.method === "GET")).toHaveLength(1)
      expect(srv.closedStreams()).toBe(0)
      expect(srv.openStreams()).toBe(1)
      expect((yield* connection.observations).map((o) => o.outcome)).toEqual(Array(8).fill("ok"))
      yield* Scope.close(scope, Exit.void)
      yield* eventually(() => srv.closedStreams() === 1)
    }).pipe(Effect.provide(httpClient)), 20_000)

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
        // The GET stream released is the last thing the failed discovery does.
        yield* eventually(() => srv.closedStreams() === 1)
        expect(foreign.requests).toHaveLength(0)
        // Nothing was POSTed to the legacy server either: the endpoint was refused, not used.
        expect(srv.requests.map((r) => r.method)).toEqual(["GET"])
      }))

    scoped("another port on the same host is a foreign origin", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const other = yield* legacy()
        srv.script({ kind: "endpoint-foreign", target: `${other.origin}/messages?sessionId=x` })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse" }))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", stage: "endpoint", reason: "foreign-endpoint", outcome: "not-sent" })
        yield* eventually(() => srv.closedStreams() === 1)
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
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "endpoint", outcome: "not-sent", limits: { timeoutMs: 300 } })
        // The deadline ended the wait: not before it, and not long after.
        expect(elapsedMs).toBeGreaterThanOrEqual(250)
        expect(elapsedMs).toBeLessThan(3_000)
        yield* eventually(() => srv.closedStreams() === 1)
      }))

    for (const kind of ["endpoint-relative", "endpoint-absolute-same-origin"] as const) {
      scoped(`${kind} is accepted, and the calls go to it`, () =>
        Effect.gen(function*() {
          const srv = yield* legacy()
          srv.script({ kind })
          const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
          expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
          expect(srv.counter()).toBe(1)
          const posts = srv.requests.filter((r) => r.method === "POST")
          expect(posts.map((r) => r.rpcMethod)).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"])
          for (const post of posts) expect(post.url).toMatch(/^\/messages\?sessionId=/)
        }))
    }

    // docs/GUIDE.md, "Decisions": before the legacy `endpoint`, other events are dropped (and counted).
    scoped("an event before the endpoint is dropped and counted; the session works", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        srv.script({ kind: "message-before-endpoint" })
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
        // Read before the endpoint, so counted before discovery could end.
        expect((yield* connection.diagnostics).droppedFrames).toBe(1)
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        expect((yield* connection.diagnostics).droppedFrames).toBe(1)
        expect(srv.counter()).toBe(1)
      }))

    scoped("without an event before the endpoint nothing is counted as dropped", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        expect((yield* connection.diagnostics).droppedFrames).toBe(0)
      }))

    // docs/GUIDE.md, "Decisions": a second `endpoint` event later is ignored. The second one names a
    // path of the same origin (it would pass the origin fence): nothing may be POSTed there.
    scoped("a second endpoint event later is ignored: every message still goes to the first endpoint", () =>
      Effect.gen(function*() {
        let stream: http.ServerResponse | undefined
        let increments = 0
        let secondSent = false
        const answer = (message: any) => {
          switch (message.method) {
            case "initialize":
              return { protocolVersion: "2024-11-05", capabilities: { tools: {} }, serverInfo: { name: "raw-legacy", version: "1" } }
            case "tools/list":
              return { tools: [{ name: "increment", inputSchema: { type: "object" } }] }
            default:
              increments++
              return { content: [{ type: "text", text: String(increments) }] }
          }
        }
        const raw = yield* rawHttpServer((req, res, { message, path }) => {
          if (req.method === "GET" && path === "/sse") {
            res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
            res.write(sseFrame("endpoint", "/messages?sessionId=first"))
            stream = res
            return
          }
          if (req.method !== "POST") return void res.writeHead(405).end()
          // Accepted wherever it arrives, so that a client posting to the second endpoint fails
          // the assertions below, not by a hang.
          res.writeHead(202).end()
          if (path !== "/messages" || message?.id === undefined || message.method === undefined) return
          if (message.method === "tools/call" && !secondSent) {
            // On the stream before the first call's answer: read by the client before it.
            secondSent = true
            stream!.write(sseFrame("endpoint", "/second?sessionId=second"))
          }
          stream!.write(sseFrame("message", JSON.stringify({ jsonrpc: "2.0", id: message.id, result: answer(message) })))
        })
        const connection = yield* McpClient.connect({ url: `${raw.origin}/sse`, transport: "sse" })
        for (const text of ["1", "2", "3"]) {
          expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text }] })
        }
        expect(secondSent).toBe(true)
        expect(raw.received.filter((r) => r.path === "/second")).toEqual([])
        expect(raw.received.filter((r) => r.path === "/messages").map((r) => r.rpcMethod)).toEqual([
          "initialize",
          "notifications/initialized",
          "tools/list",
          "tools/call",
          "tools/call",
          "tools/call"
        ])
        expect(raw.received.filter((r) => r.method === "GET")).toHaveLength(1)
        expect(increments).toBe(3)
      }))
  })

  // The exact ceiling and one byte more in both phases, a complete frame over its request's
  // ceiling failing that request only, a never-ending frame, a stream that ends mid-answer: the
  // contract suite's (ceilings, overrides, no replay) on this row.
  describe("the shared stream", () => {
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
        expect(srv.counter()).toBe(1)
        // The stream is given up: the next call runs on a new session (sessions-heal.e2e.test.ts).
        yield* connection.callTool("increment")
        expect(srv.counter()).toBe(2)
        expect(srv.rpcCalls("initialize")).toBe(2)
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
        // The stream is gone: the next call runs on a new session (sessions-heal.e2e.test.ts).
        yield* connection.callTool("increment")
        expect(srv.rpcCalls("initialize")).toBe(2)
        yield* expectReleased(connection)
      }))

    scoped("a 404 on a POST ends the session: SessionExpired, the GET is released, the next call has a new session", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
        srv.script({ on: "tools/call", kind: "post-status", status: 404 })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "SessionExpired", stage: "call", retryable: true })
        yield* eventually(() => srv.closedStreams() === 1)
        // The next call runs on a new session: a new GET stream and endpoint.
        yield* connection.callTool("increment")
        expect(srv.rpcCalls("tools/call")).toBe(2)
        expect(srv.rpcCalls("initialize")).toBe(2)
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

    // The server ends the stream once initialize has arrived, so initialize is pending when the
    // end is read: deterministic, unlike a stream dropped right after the endpoint (where the
    // initialize POST races the end of the stream and may meet a 404 for the forgotten session).
    scoped("a stream that ends while initialize waits fails it promptly with TransportFailure", () =>
      Effect.gen(function*() {
        const srv = yield* legacy()
        srv.script({ on: "initialize", kind: "close-stream" })
        const { error, elapsedMs } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse", policy: { timeout: 30_000 } }))
        expect(error).toMatchObject({
          _tag: "TransportFailure",
          reason: "stream-ended",
          stage: "initialize",
          phase: "discovery",
          outcome: "unknown",
          // Discovery is idempotent: a transient failure of it may be retried.
          retryable: true
        })
        expect(elapsedMs).toBeLessThan(5_000)
        expect(srv.rpcCalls("initialize")).toBe(1)
        expect(srv.rpcCalls("notifications/initialized")).toBe(0)
      }))
  })

  // docs/GUIDE.md, "Decisions": late answers on shared streams are dropped and counted.
  scoped("a late answer on the GET stream is dropped and counted, and never taken for the next call's answer", () =>
    Effect.gen(function*() {
      const srv = yield* legacy()
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { call: { timeout: 300 } } })
      // The first answer comes 1 s after its call (700 ms after the deadline), while the second
      // call waits for its own, 1.5 s after it was sent: on the one stream, in that order.
      srv.script({ on: "tools/call", kind: "delay", ms: 1_000 })
      srv.script({ on: "tools/call", kind: "delay", ms: 1_500 })
      expect((yield* connection.diagnostics).droppedFrames).toBe(0)
      const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call", phase: "call", outcome: "unknown", retryable: false })
      expect(elapsedMs).toBeGreaterThanOrEqual(250)
      expect((yield* connection.diagnostics).droppedFrames).toBe(0)
      // The second call's answer says "2": the late "1" went by while it waited.
      const second = yield* connection.callTool("increment", {}, { timeout: 10_000 })
      expect(second).toMatchObject({ content: [{ text: "2" }] })
      expect((yield* connection.diagnostics).droppedFrames).toBe(1)
      expect(srv.counter()).toBe(2)
      expect(srv.rpcCalls("tools/call")).toBe(2)
      // The stream goes on: a third call gets its answer at once.
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "3" }] })
      expect((yield* connection.diagnostics).droppedFrames).toBe(1)
      yield* expectReleased(connection)
    }))

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
          // Nothing left in flight or in the background (a cancellation notice included).
          yield* expectReleased(connection)
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
      const exit = yield* Fiber.interrupt(fiber)
      // An interruption, never a deadline.
      expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
      yield* eventually(() => srv.rpcCalls("notifications/cancelled") === 1)
      // To the endpoint, naming the interrupted request.
      const call = srv.requests.find((r) => r.rpcMethod === "tools/call")!
      const notice = srv.requests.find((r) => r.rpcMethod === "notifications/cancelled")!
      expect(notice.url).toBe(call.url)
      expect(JSON.parse(notice.body).params).toMatchObject({ requestId: JSON.parse(call.body).id })
      yield* expectReleased(connection)
      // The session goes on.
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "2" }] })
    }))
})
