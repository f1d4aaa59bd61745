/**
 * stdio (2025 era) end to end with real child processes: banners, what is not JSON-RPC or not
 * UTF-8, a flooded stderr, exits and their codes, spawn failures, the child's environment,
 * `initialize` never cancelled, late answers, and a child that ignores SIGTERM stopped within
 * the bound after a failure gave its session up.
 *
 * Budgets per phase, exact line ceilings, deadlines, interruption and abort, release and
 * redaction over this row are the contract suite's (packages/client/test/contract/).
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { McpClient } from "../../src/index.js"
import * as Stdio from "../../src/internal/transport/stdio.js"
import { connect } from "../../src/promise.js"
import { eventually, expectReleased, failureOf } from "../support/harness.js"

const platform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

const fixture = (options?: Testkit.StdioFixtureOptions) =>
  Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture(options)), (f) => Effect.sync(() => f.cleanup()))

/** The release bound of the stubborn-child cases: large enough that a loaded machine's slack stays small beside it. */
const RELEASE_MS = 500
/** Stdin closed, SIGTERM, SIGKILL: three release steps at most, and slack for a loaded machine. */
const SHUTDOWN_BOUND_MS = 3 * RELEASE_MS + 3_000
/** "Promptly", against a 30 s deadline. */
const PROMPT_MS = 10_000
/** An upper bound that proves only that something ended, not how fast. */
const GENEROUS_MS = 10_000

const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(platform)) as Effect.Effect<void, unknown, never>, timeout)

const connectTo = (f: Testkit.StdioFixture, policy?: McpClient.StdioConnectOptions["policy"]) =>
  McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, policy })

/**
 * A child that writes `lines` of script and exits before the handshake, spawned with the stderr
 * `mode`: its failure, and the tail reader the stderr option's `onSpawn` was given.
 */
const failingChild = (mode: McpClient.StderrHandling["mode"], lines: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    let readTail: Effect.Effect<string> | undefined
    const { error } = yield* failureOf(
      McpClient.connectStdio({
        command: process.execPath,
        args: ["-e", lines.join(";")],
        policy: { discovery: { timeout: 10_000 } },
        stderr: { mode, onSpawn: (tail) => void (readTail = tail) }
      })
    )
    return { error, readTail }
  })

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

  // The exact line ceiling and one byte more in both phases, a complete line over its request's
  // ceiling failing that request only, and a never-ending line: the contract suite's (ceilings,
  // overrides, no replay) on this row.
  for (
    const [name, fault, expected] of [
      ["invalid UTF-8 on stdout", { on: "tools/call", kind: "invalid-utf8" }, { _tag: "ProtocolViolation", reason: "invalid-utf8" }],
      // Past the largest bound (the call's 64 KiB): the session is given up.
      ["a line past every bound", { on: "tools/call", kind: "never-ending-line" }, {
        _tag: "ByteCeilingExceeded",
        limits: { maxBytes: 64 * 1024 }
      }],
      ["a cut-off JSON line", { on: "tools/call", kind: "invalid-json" }, { _tag: "ProtocolViolation", reason: "invalid-json" }]
    ] as const
  ) {
    scoped(`after ${name}, closing at once still stops a child that ignores SIGTERM, within the bound`, () =>
      Effect.gen(function*() {
        const f = yield* fixture({ faults: [{ kind: "ignore-sigterm" }, fault] })
        const scope = yield* Scope.make()
        const connection = yield* connectTo(f, {
          releaseTimeout: RELEASE_MS,
          call: { maxBytes: 64 * 1024 },
          unsolicited: { maxBytes: 1024 }
        }).pipe(Scope.extend(scope))
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ ...expected, stage: "call", phase: "call", retryable: false })
        const started = Date.now()
        yield* Scope.close(scope, Exit.void)
        // The bound is what is proven: at most three release steps (stdin, SIGTERM, SIGKILL), with
        // slack for a loaded machine. No lower bound: the failure gave the session up, so its
        // release may have begun before the close.
        expect(Date.now() - started).toBeLessThan(SHUTDOWN_BOUND_MS)
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

  scoped("a child that fails to start: its stderr tail stays readable through the stderr option's onSpawn, never in the error", () =>
    Effect.gen(function*() {
      const { error, readTail } = yield* failingChild("tail", [
        "process.stderr.write('starting\\n')",
        "process.stderr.write('fatal: API_KEY is not set (given CANARY-stderr-77)\\n')",
        "process.exit(1)"
      ])
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "process-exited", exitCode: 1, phase: "discovery" })
      expect(JSON.stringify(error) + String(error)).not.toContain("CANARY")
      // The child is released; what it wrote is still there.
      expect(readTail).toBeDefined()
      const tail = yield* readTail!
      expect(tail).toBe("starting\nfatal: API_KEY is not set (given CANARY-stderr-77)\n")
    }))

  scoped("stderr drop: stderr still drained (a 1 MiB flood does not block the child), nothing kept", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ kind: "stderr-flood", bytes: 1024 * 1024 }] })
      let spawned = 0
      const connection = yield* McpClient.connectStdio({
        command: f.command,
        args: f.args,
        env: f.env,
        policy: { discovery: { timeout: 10_000 } },
        stderr: { mode: "drop", onSpawn: () => void spawned++ }
      })
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      expect(yield* connection.logTail).toBe("")
      expect(spawned).toBe(1)
    }))

  scoped("an invalid stderr option is InvalidOption stderr, and nothing is spawned", () =>
    Effect.gen(function*() {
      for (const stderr of [{ mode: "keep" }, { mode: "tail", onSpawn: "no" }, "tail"]) {
        const { error } = yield* failureOf(
          McpClient.connectStdio({ command: process.execPath, args: ["-e", "process.exit(9)"], stderr: stderr as unknown as McpClient.StderrHandling })
        )
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "stderr", stage: "config", outcome: "not-sent" })
      }
    }))

  scoped("stderr inherit: the child's stderr is not piped to the client, nothing kept", () =>
    Effect.gen(function*() {
      // A small stderr (this test process's own stderr receives it): the session works as usual.
      const { error, readTail } = yield* failingChild("inherit", [
        "process.stderr.write('inherited stderr line from a phasebound test child\\n')",
        "process.exit(2)"
      ])
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "process-exited", exitCode: 2 })
      expect(yield* readTail!).toBe("")
    }))

  scoped("a child that exits mid-call fails the call promptly, with its exit code", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ on: "tools/call", kind: "exit", code: 7 }] })
      const connection = yield* connectTo(f, { timeout: 30_000 })
      const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "process-exited", exitCode: 7, stage: "call", outcome: "unknown" })
      // Promptly: long before the 30 s deadline.
      expect(elapsedMs).toBeLessThan(PROMPT_MS)
      expect(f.counter()).toBe(1)
      yield* expectReleased(connection)
    }))

  scoped("a child that exits during discovery fails it promptly", () =>
    Effect.gen(function*() {
      const f = yield* fixture({ faults: [{ on: "tools/list", kind: "exit", code: 2 }] })
      const { error, elapsedMs } = yield* failureOf(connectTo(f, { timeout: 30_000 }))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "process-exited", stage: "list-tools", phase: "discovery" })
      expect(elapsedMs).toBeLessThan(PROMPT_MS)
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
      // Long enough for a loaded machine to start the child and have the probe refused: the
      // deadline falls on initialize.
      const { error, elapsedMs } = yield* failureOf(connectTo(f, { discovery: { timeout: 2_000 } }))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "initialize", limits: { timeoutMs: 2_000 } })
      // Generous: the deadline ended it, not the test's own timeout.
      expect(elapsedMs).toBeLessThan(GENEROUS_MS)
      yield* eventually(() => !f.isAlive())
      expect(f.rpcCalls("notifications/cancelled")).toBe(0)
    }))

  // An interruption and a deadline, each announced with notifications/cancelled: the contract
  // suite's (cancellation) on this row.

  // docs/GUIDE.md, "Decisions": late answers on shared streams are dropped and counted.
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

  // A child that ignores SIGTERM and outlives its stdin, gone after close within the
  // shutdown's bound (with a lower bound showing both waits): the contract suite's (release).
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

  // An aborted connect, rejected with the signal's reason, the child released: the contract
  // suite's (cancellation).
})
