/**
 * The Streamable HTTP path end to end, over real loopback HTTP, through every HTTP client
 * layer: budgets per phase, exact byte boundaries, interruption against deadline, prompt
 * failures for missing responses, no replay, and release after every failure.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"
import { McpClient } from "../src/index.js"
import { eventually, expectReleased, expectTag, failureOf, httpClients, server } from "./support/harness.js"

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
          expect(elapsedMs).toBeLessThan(1_500)
        }))

      scoped("the same short discovery lets a slow call finish under the long call budget", () =>
        Effect.gen(function*() {
          const srv = yield* server({ mode })
          const connection = yield* McpClient.connect({
            url: srv.url,
            policy: { discovery: { timeout: 600 }, call: { timeout: 5_000 } }
          })
          srv.script({ on: "tools/call", kind: "delay", ms: 1_000 })
          const result = yield* connection.callTool("increment")
          expect(result.content).toEqual([{ type: "text", text: "1" }])
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
          expect(elapsedMs).toBeLessThan(1_500)
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
        yield* eventually(() => srv.abortedResponses() === 1)
        yield* Effect.sleep("200 millis")
        expect(srv.rpcCalls("notifications/cancelled")).toBe(0)
      }))
  })

  describe("no replay: a call that failed once arrived once", () => {
    const faults = [
      ["a deadline", { kind: "delay", ms: 1_500 }, "DeadlineExceeded"],
      ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
      ["a 500", { kind: "status", status: 500 }, "UpstreamFailure"],
      ["a 502", { kind: "status", status: 502 }, "UpstreamFailure"],
      ["a reset stream", { kind: "close-before-response" }, "ProtocolViolation"]
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
          yield* Effect.sleep("300 millis")
          expect(srv.counter()).toBe(1)
          expect(srv.rpcCalls("tools/call")).toBe(1)
          yield* expectReleased(connection)
        }))
    }
  })
})
