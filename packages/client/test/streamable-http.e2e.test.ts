/**
 * The Streamable HTTP path end to end, over real loopback HTTP, through every HTTP client
 * layer: budgets per phase, exact byte boundaries, interruption against deadline, prompt
 * failures for missing responses, no replay, and release after every failure.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { McpClient } from "../src/index.js"
import { eventually, expectReleased, expectTag, failureOf, httpClients, server } from "./support/harness.js"

/**
 * A raw 2025 Streamable HTTP server (no session) that resets the TCP connection of its first
 * `tools/call` (`socket.resetAndDestroy()`: an RST, not a clean end); later calls are answered
 * normally. `mid-body`: the answer is an SSE stream, a `ping` request first, then half of the
 * response's frame, and the reset once the client's answer to the ping has arrived (so the
 * client has read the stream that far). `before-headers`: the reset as soon as the call has
 * arrived whole, before any answer. Bodies are parsed with a guard, and a GET is answered 405
 * (no standalone stream).
 */
const resettingServer = (when: "mid-body" | "before-headers") => Effect.acquireRelease(
  Effect.promise(async () => {
    let calls = 0
    let resets = 0
    const gets: Array<http.IncomingHttpHeaders> = []
    const pingAnswers: Array<unknown> = []
    let pingAnswered: (() => void) | undefined
    const json = (res: http.ServerResponse, body: unknown) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    const srv = http.createServer((req, res) => {
      let body = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => (body += chunk))
      req.on("end", () => {
        if (req.method === "GET") gets.push(req.headers)
        if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end()
        let message: any
        try {
          message = JSON.parse(body)
        } catch {
          return void res.writeHead(400).end()
        }
        if (message?.method === undefined) {
          // The client's answer to our ping.
          pingAnswers.push(message)
          res.writeHead(202).end()
          return pingAnswered?.()
        }
        if (message.id === undefined) return void res.writeHead(202).end()
        switch (message.method) {
          case "server/discover":
            return void res.writeHead(404, { "content-type": "text/plain" }).end("not found")
          case "initialize":
            return json(res, {
              jsonrpc: "2.0",
              id: message.id,
              result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "resetting", version: "1" } }
            })
          case "tools/list":
            return json(res, { jsonrpc: "2.0", id: message.id, result: { tools: [{ name: "increment", inputSchema: { type: "object" } }] } })
          case "tools/call": {
            calls++
            if (calls > 1) return json(res, { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: String(calls) }] } })
            if (when === "before-headers") {
              resets++
              return void res.socket?.resetAndDestroy()
            }
            res.writeHead(200, { "content-type": "text/event-stream" })
            const answered = new Promise<void>((resolve) => (pingAnswered = resolve))
            res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: "sync", method: "ping" })}\n\n`)
            res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"te`)
            void answered.then(() => {
              resets++
              res.socket?.resetAndDestroy()
            })
            return
          }
          default:
            return json(res, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
        }
      })
    })
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve))
    return {
      srv,
      url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`,
      calls: () => calls,
      resets: () => resets,
      gets,
      pingAnswers
    }
  }),
  ({ srv }) =>
    Effect.promise(() =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections()
        srv.close(() => resolve())
      })
    )
)

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

    describe("opposite phase overrides", () => {
      scoped("a short discovery with a long call fails discovery at its deadline", () =>
        Effect.gen(function*() {
          const srv = yield* server({ mode })
          srv.script({ on: "tools/list", kind: "delay", ms: 2_000 })
          const { error, elapsedMs } = yield* failureOf(McpClient.connect({
            url: srv.url,
            policy: { discovery: { timeout: 600 }, call: { timeout: 5_000 } }
          }))
          expectTag(error, "DeadlineExceeded")
          expect(error).toMatchObject({ stage: "list-tools", phase: "discovery", limits: { timeoutMs: 600 } })
          // The discovery deadline ended it: not before it, and before the 2 s delay would have.
          expect(elapsedMs).toBeGreaterThanOrEqual(550)
          expect(elapsedMs).toBeLessThan(1_900)
        }))

      scoped("the same short discovery lets a slow call finish under the long call budget", () =>
        Effect.gen(function*() {
          const srv = yield* server({ mode })
          const connection = yield* McpClient.connect({
            url: srv.url,
            policy: { discovery: { timeout: 600 }, call: { timeout: 5_000 } }
          })
          srv.script({ on: "tools/call", kind: "delay", ms: 1_000 })
          const started = Date.now()
          const result = yield* connection.callTool("increment")
          expect(result.content).toEqual([{ type: "text", text: "1" }])
          // It did wait out the delay, past the discovery deadline.
          expect(Date.now() - started).toBeGreaterThanOrEqual(950)
        }))

      scoped("a long discovery with a short call: slow discovery passes, the call fails at its deadline", () =>
        Effect.gen(function*() {
          const srv = yield* server({ mode })
          srv.script({ on: "initialize", kind: "delay", ms: 600 })
          const connection = yield* McpClient.connect({
            url: srv.url,
            policy: { discovery: { timeout: 5_000 }, call: { timeout: 200 } }
          })
          srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
          const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
          expectTag(error, "DeadlineExceeded")
          expect(error).toMatchObject({ stage: "call", phase: "call", limits: { timeoutMs: 200 }, outcome: "unknown", retryable: false })
          // The call deadline ended it: not before it, and well before the 2 s delay would have.
          expect(elapsedMs).toBeGreaterThanOrEqual(150)
          expect(elapsedMs).toBeLessThan(1_900)
          yield* expectReleased(connection)
        }))
    })

    describe("exact byte ceilings", () => {
      const ceiling = 4_000
      for (const bytes of [ceiling - 1, ceiling, ceiling + 1]) {
        scoped(`a call response of ${bytes} bytes against a call ceiling of ${ceiling}`, () =>
          Effect.gen(function*() {
            const srv = yield* server({ mode })
            const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { maxBytes: ceiling } } })
            srv.script({ on: "tools/call", kind: "exact-size", bytes, chunkSize: 7, as: mode })
            const exit = yield* Effect.exit(connection.callTool("increment"))
            if (bytes <= ceiling) {
              expect(Exit.isSuccess(exit)).toBe(true)
            } else {
              expect(exit).toMatchObject({ _tag: "Failure" })
              const error = Cause.failureOption((exit as Exit.Failure<unknown, any>).cause)
              expect(error._tag).toBe("Some")
              const e = (error as any).value
              expectTag(e, "ByteCeilingExceeded")
              expect(e).toMatchObject({
                stage: "call",
                phase: "call",
                limits: { maxBytes: ceiling },
                observedBytes: ceiling + 1,
                outcome: "applied",
                retryable: false
              })
            }
            expect(srv.counter()).toBe(1)
            yield* expectReleased(connection)
          }))

        scoped(`a tools/list response of ${bytes} bytes against a discovery ceiling of ${ceiling}`, () =>
          Effect.gen(function*() {
            const srv = yield* server({ mode })
            srv.script({ on: "tools/list", kind: "exact-size", bytes, chunkSize: 5, as: mode })
            const exit = yield* Effect.exit(McpClient.connect({
              url: srv.url,
              // The call ceiling is far lower: only the discovery ceiling may apply here.
              policy: { discovery: { maxBytes: ceiling }, call: { maxBytes: 10 } }
            }))
            if (bytes <= ceiling) {
              expect(Exit.isSuccess(exit)).toBe(true)
            } else {
              const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
              expect(error?._tag).toBe("Some")
              expect((error as any).value).toMatchObject({
                _tag: "ByteCeilingExceeded",
                stage: "list-tools",
                phase: "discovery",
                limits: { maxBytes: ceiling },
                observedBytes: ceiling + 1
              })
              // The refused session is released.
              yield* eventually(() => srv.deletes() === 1)
            }
          }))
      }

      scoped("a per-call override is the ceiling of that call only", () =>
        Effect.gen(function*() {
          const srv = yield* server({ mode })
          const connection = yield* McpClient.connect({ url: srv.url })
          srv.script({ on: "tools/call", kind: "exact-size", bytes: 501, as: mode })
          const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }, { maxBytes: 500 }))
          expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", limits: { maxBytes: 500 }, observedBytes: 501 })
          srv.script({ on: "tools/call", kind: "exact-size", bytes: 501, as: mode })
          const ok = yield* connection.callTool("echo", { text: "x" })
          expect(ok.content[0]).toMatchObject({ type: "text" })
        }))

      scoped("a never-ending body is refused while reading, and the server sees the connection closed", () =>
        Effect.gen(function*() {
          const srv = yield* server({ mode })
          const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { maxBytes: 1024 * 1024 } } })
          srv.script({ on: "tools/call", kind: "never-ending-body", as: mode })
          const { error } = yield* failureOf(connection.callTool("increment"))
          expectTag(error, "ByteCeilingExceeded")
          const observed = (error as { observedBytes: number }).observedBytes
          expect(observed).toBeGreaterThan(1024 * 1024)
          // Past the ceiling by at most the chunk that crossed it (the platform sizes chunks).
          expect(observed).toBeLessThanOrEqual(1024 * 1024 + 512 * 1024)
          yield* eventually(() => srv.abortedResponses() === 1)
          expect(srv.counter()).toBe(1)
          yield* expectReleased(connection)
        }))
    })

    describe("missing responses fail promptly, long before the deadline", () => {
      const faults = [
        ["a JSON body with another id", { kind: "wrong-id" }],
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

  describe("caller interruption against deadline", () => {
    scoped("a deadline is DeadlineExceeded; the server sees the request closed and gets notifications/cancelled", () =>
      Effect.gen(function*() {
        const srv = yield* server()
        const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300 } } })
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expectTag(error, "DeadlineExceeded")
        yield* eventually(() => srv.abortedResponses() === 1)
        yield* eventually(() => srv.rpcCalls("notifications/cancelled") === 1)
        expect(srv.rpcCalls("tools/call")).toBe(1)
        yield* expectReleased(connection)
      }))

    scoped("an interruption is an interruption, never a deadline; the server sees the request closed", () =>
      Effect.gen(function*() {
        const srv = yield* server()
        const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 10_000 } } })
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const fiber = yield* Effect.fork(connection.callTool("increment"))
        yield* eventually(() => srv.rpcCalls("tools/call") === 1)
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
        yield* eventually(() => srv.abortedResponses() === 1)
        yield* eventually(() => srv.rpcCalls("notifications/cancelled") === 1)
        yield* expectReleased(connection)
      }))

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
    const faults = [
      ["a deadline", { kind: "delay", ms: 1_500 }, "DeadlineExceeded"],
      ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
      ["a 500", { kind: "status", status: 500 }, "UpstreamFailure"],
      ["a 502", { kind: "status", status: 502 }, "UpstreamFailure"],
      ["an SSE stream that ends without the response", { kind: "close-before-response" }, "ProtocolViolation"]
    ] as const
    for (const [name, fault, tag] of faults) {
      scoped(`after ${name}`, () =>
        Effect.gen(function*() {
          const srv = yield* server()
          const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300, maxBytes: 1_000 } } })
          srv.script({ on: "tools/call", ...fault })
          const { error } = yield* failureOf(connection.callTool("increment"))
          expectTag(error, tag)
          expect((error as { retryable: boolean }).retryable).toBe(false)
          // Nothing left in flight or in the background (the cancellation notice of a deadline
          // included): whatever the client sent has arrived.
          yield* expectReleased(connection)
          expect(srv.counter()).toBe(1)
          expect(srv.rpcCalls("tools/call")).toBe(1)
        }))
    }

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
        expect(raw.pingAnswers).toEqual([{ jsonrpc: "2.0", id: "sync", result: {} }])
        yield* expectReleased(connection)
        expect(raw.calls()).toBe(1)
        expect(raw.gets.filter((headers) => headers["last-event-id"] !== undefined)).toEqual([])
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
