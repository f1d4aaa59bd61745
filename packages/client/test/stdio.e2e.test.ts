/**
 * stdio end to end with real child processes: bounded lines, banners, a flooded stderr, exits,
 * cancellation, and a release that finishes in bounded time even when the child ignores
 * SIGTERM.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { McpClient, Stdio } from "../src/index.js"
import { connect } from "../src/promise.js"
import { eventually, expectReleased, expectTag, failureOf } from "./support/harness.js"

const platform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

const fixture = (options?: Testkit.StdioFixtureOptions) =>
  Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture(options)), (f) => Effect.sync(() => f.cleanup()))

const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(platform)) as Effect.Effect<void, unknown, never>, timeout)

const connectTo = (f: Testkit.StdioFixture, policy?: McpClient.StdioConnectOptions["policy"]) =>
  McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, policy })

describe("stdio", () => {
  scoped("discovers and calls tools over a child process; closing the scope ends the child", () =>
    Effect.gen(function*() {
      const f = yield* fixture()
      const scope = yield* Scope.make()
      const connection = yield* connectTo(f).pipe(Scope.extend(scope))
      expect(connection.transport).toBe("stdio")
      expect(connection.tools.map((t) => t.name)).toEqual(["add", "echo", "increment"])
      expect(yield* connection.callTool("add", { a: 2, b: 3 })).toMatchObject({ content: [{ text: "5" }] })
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      expect(f.counter()).toBe(1)
      expect(f.isAlive()).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(f.isAlive()).toBe(false)
    }))

  describe("line ceilings (raw bytes including the newline)", () => {
    const ceiling = 2_000
    for (const bytes of [ceiling - 1, ceiling, ceiling + 1]) {
      scoped(`a call answer line of ${bytes} bytes against a call ceiling of ${ceiling}`, () =>
        Effect.gen(function*() {
          const f = yield* fixture({ faults: [{ on: "tools/call", kind: "exact-size", bytes, chunkSize: 7 }] })
          const connection = yield* connectTo(f, { call: { maxBytes: ceiling } })
          const exit = yield* Effect.exit(connection.callTool("echo", { text: "x" }))
          if (bytes <= ceiling) {
            expect(Exit.isSuccess(exit)).toBe(true)
          } else {
            expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
              _tag: "ByteCeilingExceeded",
              stage: "call",
              observedBytes: ceiling + 1,
              limits: { maxBytes: ceiling }
            })
          }
          // A complete line over its request's ceiling fails that request only.
          expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        }))

      scoped(`a tools/list line of ${bytes} bytes against a discovery ceiling of ${ceiling}`, () =>
        Effect.gen(function*() {
          const f = yield* fixture({ faults: [{ on: "tools/list", kind: "exact-size", bytes, chunkSize: 5 }] })
          const exit = yield* Effect.exit(connectTo(f, { discovery: { maxBytes: ceiling }, unsolicited: { maxBytes: 100 } }))
          if (bytes <= ceiling) {
            expect(Exit.isSuccess(exit)).toBe(true)
          } else {
            expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
              _tag: "ByteCeilingExceeded",
              stage: "list-tools",
              phase: "discovery"
            })
            yield* eventually(() => !f.isAlive())
          }
        }))
    }

    scoped("a never-ending line is refused while reading; the child is released", () =>
      Effect.gen(function*() {
        const f = yield* fixture({ faults: [{ on: "tools/call", kind: "never-ending-line" }] })
        const connection = yield* connectTo(f, { call: { maxBytes: 256 * 1024 }, unsolicited: { maxBytes: 1024 } })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", stage: "call", limits: { maxBytes: 256 * 1024 } })
        expect((error as { observedBytes: number }).observedBytes).toBeGreaterThan(256 * 1024)
        yield* eventually(() => !f.isAlive())
        expect(f.counter()).toBe(1)
        const after = yield* failureOf(connection.callTool("increment"))
        expect(after.error).toMatchObject({ _tag: "TransportFailure", outcome: "not-sent" })
        yield* expectReleased(connection)
      }))
  })

  for (const [name, fault, expected] of [
    ["invalid UTF-8 on stdout", { on: "tools/call", kind: "invalid-utf8" }, { _tag: "ProtocolViolation", reason: "invalid-utf8" }],
    // Past the largest bound (the call's 64 KiB): the session is given up.
    ["a line past every bound", { on: "tools/call", kind: "never-ending-line" }, {
      _tag: "ByteCeilingExceeded",
      limits: { maxBytes: 64 * 1024 }
    }],
    ["a cut-off JSON line", { on: "tools/call", kind: "invalid-json" }, { _tag: "ProtocolViolation", reason: "invalid-json" }]
  ] as const) {
    scoped(`after ${name}, closing at once still stops a child that ignores SIGTERM, within the bound`, () =>
      Effect.gen(function*() {
        const f = yield* fixture({ faults: [{ kind: "ignore-sigterm" }, fault] })
        const scope = yield* Scope.make()
        const connection = yield* connectTo(f, { releaseTimeout: 300, call: { maxBytes: 64 * 1024 }, unsolicited: { maxBytes: 1024 } })
          .pipe(Scope.extend(scope))
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ ...expected, stage: "call", phase: "call", retryable: false })
        const started = Date.now()
        yield* Scope.close(scope, Exit.void)
        // At most three release steps of 300 ms (stdin, SIGTERM, SIGKILL), and some slack.
        expect(Date.now() - started).toBeLessThan(2_500)
        expect(f.isAlive()).toBe(false)
        expect(f.counter()).toBe(1)
      }))
  }

  scoped("a banner on stdout is dropped and counted", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ kind: "banner", bannerEachResponse: true }] })
      const connection = yield* connectTo(f)
      // One banner at start-up, one before each answer (server/discover's -32601, initialize,
      // tools/list): read before the answers, so all counted by the end of discovery.
      expect((yield* connection.diagnostics).droppedFrames).toBe(4)
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      expect((yield* connection.diagnostics).droppedFrames).toBe(5)
    }))

  for (const [kind, reason] of [["not-jsonrpc", "invalid-message"], ["invalid-utf8", "invalid-utf8"]] as const) {
    scoped(`${kind} on stdout is a protocol violation (${reason}); the session is given up`, () =>
      Effect.gen(function*() {
        const f = yield* fixture({ faults: [{ on: "tools/call", kind }] })
        const connection = yield* connectTo(f)
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason, stage: "call", phase: "call", outcome: "unknown", retryable: false })
        yield* eventually(() => !f.isAlive())
        const after = yield* failureOf(connection.callTool("increment"))
        expect(after.error).toMatchObject({ _tag: "TransportFailure", outcome: "not-sent" })
        expect(f.counter()).toBe(1)
      }))
  }

  scoped("stderr is drained (a 1 MiB flood does not block the child) and its tail kept in process only", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ kind: "stderr-flood", bytes: 1024 * 1024 }] })
      const connection = yield* connectTo(f, { discovery: { timeout: 10_000 } })
      // The child reads nothing until its flood has been taken: this answer proves the drain.
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      const tail = yield* connection.logTail
      // All but at most a pipe's worth of the flood has been read: the tail is full, 64 KiB.
      expect(tail.length).toBe(64 * 1024)
      expect(tail).toContain("stderr flood: this log line only proves that the client drains stderr")
    }))

  scoped("a child that exits mid-call fails the call promptly, with its exit code", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ on: "tools/call", kind: "exit", code: 7 }] })
      const connection = yield* connectTo(f, { timeout: 30_000 })
      const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "process-exited", exitCode: 7, stage: "call", outcome: "unknown" })
      expect(elapsedMs).toBeLessThan(2_000)
      expect(f.counter()).toBe(1)
      yield* expectReleased(connection)
    }))

  scoped("a child that exits during discovery fails it promptly", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ on: "tools/list", kind: "exit", code: 2 }] })
      const { error, elapsedMs } = yield* failureOf(connectTo(f, { timeout: 30_000 }))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "process-exited", stage: "list-tools", phase: "discovery" })
      expect(elapsedMs).toBeLessThan(2_000)
    }))

  scoped("spawn failures are TransportFailure at stage connect, without the path in public fields", () =>
    Effect.gen(function*() {
      const { error } = yield* failureOf(McpClient.connectStdio({ command: "/nonexistent/secret-path/mcp-server", args: ["--token=CANARY-ARG"] }))
      expect(error).toMatchObject({ _tag: "TransportFailure", stage: "connect", reason: "spawn-failed", outcome: "not-sent" })
      expect(JSON.stringify(error) + String(error)).not.toMatch(/secret-path|CANARY|nonexistent/)
    }))

  scoped("the child gets a safe environment plus the caller's variables, never this process's other variables", () =>
    Effect.gen(function*() {
      // A minimal MCP server whose only tool returns its own environment.
      const envServer = `
        const rl = require("node:readline").createInterface({ input: process.stdin })
        const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n")
        rl.on("line", (line) => {
          const m = JSON.parse(line)
          if (m.id === undefined) return
          if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "env", version: "1" } } })
          else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "env", inputSchema: { type: "object" } }] } })
          else send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: JSON.stringify(process.env) }] } })
        })`
      process.env.PHASEBOUND_PARENT_SECRET = "CANARY-PARENT"
      const connection = yield* McpClient.connectStdio({
        command: process.execPath,
        args: ["-e", envServer],
        env: { GIVEN: "yes" }
      }).pipe(Effect.ensuring(Effect.sync(() => delete process.env.PHASEBOUND_PARENT_SECRET)))
      const result = yield* connection.callTool("env")
      const env = JSON.parse((result.content[0] as unknown as { text: string }).text)
      expect(env.GIVEN).toBe("yes")
      expect(env.PATH).toBe(process.env.PATH)
      expect(env.PHASEBOUND_PARENT_SECRET).toBeUndefined()
      const allowed = new Set([...Stdio.inheritedVariables, "GIVEN"])
      // Node itself may add a few of its own (none of ours).
      const unexpected = Object.keys(env).filter((name) => !allowed.has(name) && !name.startsWith("NODE_") && name !== "_")
      expect(unexpected).toEqual([])
    }))

  scoped("the discovery deadline covers a server that never answers; initialize is never cancelled", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ on: "initialize", kind: "never-answer" }] })
      const { error, elapsedMs } = yield* failureOf(connectTo(f, { discovery: { timeout: 300 } }))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "initialize" })
      expect(elapsedMs).toBeLessThan(1_500)
      yield* eventually(() => !f.isAlive())
      expect(f.rpcCalls("notifications/cancelled")).toBe(0)
    }))

  scoped("an interrupted call sends notifications/cancelled; a deadline too", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ on: "tools/call", kind: "never-answer", times: Infinity }] })
      const connection = yield* connectTo(f, { call: { timeout: 300 } })
      const fiber = yield* Effect.fork(connection.callTool("increment"))
      yield* eventually(() => f.rpcCalls("tools/call") === 1)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* eventually(() => f.rpcCalls("notifications/cancelled") === 1)
      const { error } = yield* failureOf(connection.callTool("increment"))
      expectTag(error, "DeadlineExceeded")
      yield* eventually(() => f.rpcCalls("notifications/cancelled") === 2)
      expect(f.counter()).toBe(2)
      yield* expectReleased(connection)
    }))

  // README, "Decisions": late answers on shared streams are dropped and counted.
  scoped("a late answer on stdout is dropped and counted, and never taken for the next call's answer", () =>
    Effect.gen(function*() {
      // The first answer comes 1 s after its call (700 ms after its deadline), while the second
      // call waits for its own, 1.5 s after it was sent: on stdout, in that order.
      const f = yield* fixture({
        faults: [{ on: "tools/call", kind: "delay", ms: 1_000 }, { on: "tools/call", kind: "delay", ms: 1_500 }]
      })
      const connection = yield* connectTo(f, { call: { timeout: 300 } })
      expect((yield* connection.diagnostics).droppedFrames).toBe(0)
      const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call", phase: "call", outcome: "unknown", retryable: false })
      expect(elapsedMs).toBeGreaterThanOrEqual(250)
      expect((yield* connection.diagnostics).droppedFrames).toBe(0)
      // The second call's answer says "2": the late "1" went by while it waited.
      expect(yield* connection.callTool("increment", {}, { timeout: 10_000 })).toMatchObject({ content: [{ text: "2" }] })
      expect((yield* connection.diagnostics).droppedFrames).toBe(1)
      expect(f.counter()).toBe(2)
      // The deadline was announced (handshake era), and the session goes on.
      expect(f.rpcCalls("notifications/cancelled")).toBe(1)
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "3" }] })
      expect((yield* connection.diagnostics).droppedFrames).toBe(1)
      yield* expectReleased(connection)
    }))

  scoped("a child that ignores SIGTERM is killed within the stated bound and leaves no process behind", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ kind: "ignore-sigterm" }] })
      const scope = yield* Scope.make()
      yield* connectTo(f, { releaseTimeout: 300 }).pipe(Scope.extend(scope))
      const pid = f.pid()
      expect(pid).toBeDefined()
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = Date.now() - started
      // stdin close (300 ms) + SIGTERM (300 ms) + SIGKILL: within 3 x releaseTimeout.
      expect(elapsed).toBeGreaterThanOrEqual(550)
      expect(elapsed).toBeLessThan(900 + 900)
      expect(f.isAlive()).toBe(false)
    }))
})

describe("stdio through the Promise API", () => {
  it("connects, calls and closes; the transport is stdio and the child is gone", async () => {
    const f = Testkit.makeStdioFixture()
    try {
      const connection = await connect({ stdio: { command: f.command, args: f.args } })
      expect(connection.transport).toBe("stdio")
      expect(await connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      await connection.close()
      expect(f.isAlive()).toBe(false)
    } finally {
      f.cleanup()
    }
  })

  it("an abort rejects with the reason and the child is released", async () => {
    const f = Testkit.makeStdioFixture({ faults: [{ on: "tools/list", kind: "never-answer" }] })
    try {
      const controller = new AbortController()
      const pending = connect({ stdio: { command: f.command, args: f.args }, signal: controller.signal })
      await f.waitFor(() => f.rpcCalls("tools/list") === 1)
      const reason = new Error("stop")
      controller.abort(reason)
      await expect(pending).rejects.toBe(reason)
      await f.waitFor(() => !f.isAlive())
    } finally {
      f.cleanup()
    }
  })
})
