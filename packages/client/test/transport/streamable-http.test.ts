/**
 * The Streamable HTTP path (2025 era) end to end, over real loopback HTTP, through every HTTP
 * client layer, in JSON and SSE answers: discovery and calls, the session a discovery refused
 * for its size released, missing responses, `initialize` never cancelled, no replay after the
 * answers the contract suite has no fault for (5xx, an SSE stream without the response), and a
 * TCP reset at two exact points of the exchange.
 *
 * Budgets per phase, exact byte ceilings, deadlines, interruption and abort, release and
 * redaction over these rows are the contract suite's (packages/client/test/contract/).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClient } from "../../src/index.js"
import { eventually, expectReleased, expectTag, failureOf, httpClients, server } from "../support/harness.js"
import { json, rawMcpServer, sseEvent } from "../support/rawMcpServer.js"

/**
 * A raw 2025 Streamable HTTP server (no session, support/rawMcpServer.ts) that resets the TCP
 * connection of its first `tools/call` (`socket.resetAndDestroy()`: an RST, not a clean end);
 * later calls are answered normally. `mid-body`: the answer is an SSE stream, a `ping` request
 * first, then half of the response's frame, and the reset once the client's answer to the ping
 * has arrived (so the client has read the stream that far). `before-headers`: the reset as soon
 * as the call has arrived whole, before any answer.
 */
const resettingServer = (when: "mid-body" | "before-headers") =>
  Effect.gen(function*() {
    let calls = 0
    let resets = 0
    const raw = yield* rawMcpServer({
      onCall: ({ message, replied, res }) => {
        calls++
        if (calls > 1) return json(res, { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: String(calls) }] } })
        if (when === "before-headers") {
          resets++
          return void res.socket?.resetAndDestroy()
        }
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(sseEvent({ jsonrpc: "2.0", id: "sync", method: "ping" }))
        res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"te`)
        void replied(1).then(() => {
          resets++
          res.socket?.resetAndDestroy()
        })
      }
    })
    return {
      url: raw.url,
      calls: () => calls,
      resets: () => resets,
      /** The client's answers to the server's requests (the ping). */
      pingAnswers: () => raw.replies.map((reply) => reply.message),
      /** GETs carrying Last-Event-ID: resumptions. */
      resumptions: () => raw.received.filter((r) => r.method === "GET" && r.headers["last-event-id"] !== undefined)
    }
  })

describe.each(httpClients)("Streamable HTTP through %s", (_, httpClient) => {
  const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
    it.scopedLive(name, () => body().pipe(Effect.provide(httpClient)) as Effect.Effect<void, unknown, never>, timeout)

  describe.each(["json", "sse"] as const)("%s responses", (mode) => {
    scoped("discovers and calls tools; isError comes back as a result", () =>
      Effect.gen(function*() {
        const srv = yield* server({ mode })
        const connection = yield* McpClient.connect({ url: srv.url })
        expect(connection.transport).toBe("streamable-http")
        expect(connection.protocolVersion).toBe("2025-11-25")
        expect(connection.serverInfo?.name).toBe("phasebound-testkit")
        expect(connection.tools.map((tool) => tool.name)).toEqual(["add", "echo", "increment"])
        expect(yield* connection.callTool("add", { a: 20, b: 22 })).toMatchObject({ content: [{ type: "text", text: "42" }] })
        const domainFailure = yield* connection.callTool("add", { a: "x", b: 1 })
        expect(domainFailure.isError).toBe(true)
        // Every attempt of the negotiation is observed: the stateless probe this 2025 server
        // refused, then the handshake that succeeded.
        expect(connection.discovery.map((o) => [o.stage, o.outcome, o.attempt?.era])).toEqual([
          ["discover", "RemoteRefusal", "stateless"],
          ["initialize", "ok", "handshake"],
          ["initialized", "ok", "handshake"],
          ["list-tools", "ok", "handshake"]
        ])
        yield* expectReleased(connection)
      }))

    // The exact ceiling and one byte more, in both phases, a never-ending body and a call's own
    // ceiling are the contract suite's (ceilings, overrides); what is left here is the session a
    // discovery refused for its size still ends with its DELETE.
    scoped("a tools/list response of 4001 bytes against a discovery ceiling of 4000 fails discovery; the session is released", () =>
      Effect.gen(function*() {
        const ceiling = 4_000
        const srv = yield* server({ mode })
        srv.script({ on: "tools/list", kind: "exact-size", bytes: ceiling + 1, chunkSize: 5, as: mode })
        const { error } = yield* failureOf(McpClient.connect({
          url: srv.url,
          // The call ceiling is far lower: only the discovery ceiling may apply here.
          policy: { discovery: { maxBytes: ceiling }, call: { maxBytes: 10 } }
        }))
        expect(error).toMatchObject({
          _tag: "ByteCeilingExceeded",
          stage: "list-tools",
          phase: "discovery",
          limits: { maxBytes: ceiling },
          observedBytes: ceiling + 1
        })
        // The refused session is released.
        yield* eventually(() => srv.deletes() === 1)
      }))

    // A JSON body with another id is the contract suite's (no replay: wrong id).
    describe("missing responses fail promptly, long before the deadline", () => {
      const faults = [
        ["an SSE stream that ends without the response", { kind: "close-before-response" }],
        ["an SSE frame that is never terminated", { kind: "unterminated-frame" }]
      ] as const
      for (const [name, fault] of faults) {
        scoped(name, () =>
          Effect.gen(function*() {
            const srv = yield* server({ mode })
            const connection = yield* McpClient.connect({ url: srv.url, policy: { timeout: 30_000 } })
            srv.script({ on: "tools/call", ...fault })
            const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
            expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "missing-response", stage: "call" })
            expect(elapsedMs).toBeLessThan(2_000)
            expect(srv.counter()).toBe(1)
            yield* expectReleased(connection)
          }))
      }
    })
  })

  // A deadline against an interruption, each released at the server with its notice, is the
  // contract suite's (cancellation).
  describe("cancellation notices", () => {
    scoped("initialize is never cancelled", () =>
      Effect.gen(function*() {
        const srv = yield* server()
        srv.script({ on: "initialize", kind: "headers-never-sent" })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 300 } } }))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "initialize", phase: "discovery" })
        // A notice would be started as the request is cut: by the time the server has seen the
        // cut, and then served a whole new session, it would have arrived.
        yield* eventually(() => srv.abortedResponses() === 1)
        const next = yield* McpClient.connect({ url: srv.url })
        expect(yield* next.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        expect(srv.rpcCalls("notifications/cancelled")).toBe(0)
      }))
  })

  describe("no replay: a call that failed once arrived once", () => {
    // A deadline, a byte ceiling, a wrong id, a cut or reset answer: the contract suite's (no
    // replay), on every row. These are the answers it has no fault for.
    const faults = [
      ["a 500", { kind: "status", status: 500 }, "UpstreamFailure"],
      ["a 502", { kind: "status", status: 502 }, "UpstreamFailure"],
      ["an SSE stream that ends without the response", { kind: "close-before-response" }, "ProtocolViolation"]
    ] as const
    for (const [name, fault, tag] of faults) {
      scoped(`after ${name}`, () =>
        Effect.gen(function*() {
          const srv = yield* server()
          // A deadline no answer comes near: only the fault ends the call.
          const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 30_000 } } })
          srv.script({ on: "tools/call", ...fault })
          const { error } = yield* failureOf(connection.callTool("increment"))
          expectTag(error, tag)
          expect((error as { retryable: boolean }).retryable).toBe(false)
          // Nothing left in flight or in the background: whatever the client sent has arrived.
          yield* expectReleased(connection)
          expect(srv.counter()).toBe(1)
          expect(srv.rpcCalls("tools/call")).toBe(1)
        }))
    }

    // The contract suite's reset mid-answer (no replay) does not wait for the client: its RST may
    // land before the client has read the headers. These two reset at known points: after the
    // client has read into the body (its answer to the ping arrived), and before any answer.
    scoped("after a TCP reset in the middle of the answer's body: TransportFailure, outcome unknown, nothing re-sent", () =>
      Effect.gen(function*() {
        const raw = yield* resettingServer("mid-body")
        const connection = yield* McpClient.connect({ url: raw.url, policy: { call: { timeout: 30_000 } } })
        const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
        // The body read broke off (ECONNRESET): the request may have been applied.
        expect(error).toMatchObject({
          _tag: "TransportFailure",
          reason: "connection-closed",
          stage: "call",
          phase: "call",
          outcome: "unknown",
          retryable: false
        })
        expect(elapsedMs).toBeLessThan(10_000)
        expect(raw.resets()).toBe(1)
        // The ping before the cut was answered; the call was sent once and not resumed (its
        // events carried no id) nor re-sent.
        expect(raw.pingAnswers()).toEqual([{ jsonrpc: "2.0", id: "sync", result: {} }])
        yield* expectReleased(connection)
        expect(raw.calls()).toBe(1)
        expect(raw.resumptions()).toEqual([])
        // The reset broke that answer, not the session: the next call is sent and answered.
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ type: "text", text: "2" }] })
        expect(raw.calls()).toBe(2)
      }))

    // The call arrived whole and was applied, then the connection was reset before any answer:
    // only a connection that never opened is `not-sent` (docs/DESIGN.md, "No replay, outcomes").
    it.scopedLive("after a TCP reset before the answer's headers (the call arrived): outcome unknown, not retryable", () =>
      Effect.gen(function*() {
        const raw = yield* resettingServer("before-headers")
        const connection = yield* McpClient.connect({ url: raw.url, policy: { call: { timeout: 30_000 } } })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(raw.calls()).toBe(1)
        expect(raw.resets()).toBe(1)
        expect(error).toMatchObject({ _tag: "TransportFailure", stage: "call", phase: "call", outcome: "unknown", retryable: false })
      }).pipe(Effect.provide(httpClient)), 30_000)
  })
})
