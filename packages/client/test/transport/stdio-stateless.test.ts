/**
 * The stateless era (2026-07-28) over stdio, end to end with real child processes of the
 * testkit stdio server: `server/discover` without a handshake, the fall back to `initialize` on
 * the same child (answered -32601, or never answered within the bounded probe wait), the dual
 * era, cancellation notices, the -32022 retry, `resultType` and `input_required` rounds, and the
 * exact line ceiling of `server/discover`, and a `tools/call` line of exactly the ceiling
 * observed whole. Budgets per phase, the call's line ceiling and one byte more, deadlines,
 * interruption and abort, release and redaction over this row are the contract suite's
 * (packages/client/test/contract/).
 *
 * The child is started with a small `--import` preload that records, next to the fixture's own
 * observations, every byte written to its stdin (to read the wire messages, ids and `_meta`
 * included) and the pid of every process started (to count spawns).
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type ClientHandlers, McpClient } from "../../src/index.js"
import { eventually, expectReleased, failureOf } from "../support/harness.js"

const platform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(platform)) as Effect.Effect<void, unknown, never>, timeout)

/** An upper bound that proves only that something ended, not how fast. */
const GENEROUS_MS = 10_000

const META_VERSION = "io.modelcontextprotocol/protocolVersion"
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
/** The extensions the client declares in every request (docs/DESIGN.md, "Tasks"). */
const declaredExtensions = { extensions: { "io.modelcontextprotocol/skills": {}, "io.modelcontextprotocol/tasks": {} } }
const clientInfo = { name: "stateless-e2e", version: "1.2.3" }

/** Loaded with `--import` before the server: records stdin bytes and the process's pid. */
const RECORDER = `
import { appendFileSync } from "node:fs"
appendFileSync(process.env.PHASEBOUND_SPAWN_LOG, process.pid + "\\n")
const stdin = process.stdin
const on = stdin.on.bind(stdin)
stdin.on = (event, listener) =>
  event === "data"
    ? on(event, (chunk) => {
      appendFileSync(process.env.PHASEBOUND_WIRE_LOG, chunk)
      listener(chunk)
    })
    : on(event, listener)
`

interface Recorded {
  readonly f: Testkit.StdioFixture
  /** The command to spawn the fixture's server with the recorder preloaded. */
  readonly command: { readonly command: string; readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }
  /** Every message the client wrote to the child's stdin, in order (all children). */
  readonly wire: () => ReadonlyArray<Record<string, any>>
  /** How many processes were started. */
  readonly spawns: () => number
}

const readLines = (path: string) => {
  try {
    return readFileSync(path, "utf8").split("\n").filter((line) => line.trim() !== "")
  } catch {
    return []
  }
}

const recorded = (options?: Testkit.StdioFixtureOptions) =>
  Effect.acquireRelease(
    Effect.sync((): Recorded => {
      const f = Testkit.makeStdioFixture(options)
      const preload = join(f.dir, "recorder.mjs")
      const wireLog = join(f.dir, "wire.log")
      const spawnLog = join(f.dir, "spawns.log")
      writeFileSync(preload, RECORDER)
      return {
        f,
        command: {
          command: f.command,
          args: ["--import", pathToFileURL(preload).href, ...f.args],
          env: { ...f.env, PHASEBOUND_WIRE_LOG: wireLog, PHASEBOUND_SPAWN_LOG: spawnLog }
        },
        wire: () => readLines(wireLog).map((line) => JSON.parse(line)),
        spawns: () => readLines(spawnLog).length
      }
    }),
    (r) => Effect.sync(() => r.f.cleanup())
  )

const connectTo = (
  r: Recorded,
  options: Omit<McpClient.StdioConnectOptions, "command" | "args" | "env"> = {}
) => McpClient.connectStdio({ ...r.command, clientInfo, ...options })

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) => (result.content[0] as { text: string }).text

describe("stdio, the stateless era", () => {
  scoped(
    "era stateless: server/discover with _meta first, no initialize, tools listed, a call works, the child released on close",
    () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless", ttlMs: 4321 })
        const scope = yield* Scope.make()
        const connection = yield* connectTo(r).pipe(Scope.extend(scope))
        expect(connection.transport).toBe("stdio")
        expect(connection.protocolVersion).toBe("2026-07-28")
        expect(connection.serverInfo).toEqual({ name: "phasebound-testkit", version: "0.1.0" })
        expect(connection.tools.map((t) => t.name)).toEqual(["add", "echo", "increment", "ask_name"])
        expect(connection.toolsCacheHint).toEqual({ ttlMs: 4321, cacheScope: "public" })
        expect(connection.discovery.map((o) => [o.stage, o.outcome, o.attempt?.era])).toEqual([
          ["discover", "ok", "stateless"],
          ["list-tools", "ok", "stateless"]
        ])

        const [first, ...rest] = r.wire()
        expect(first).toMatchObject({ jsonrpc: "2.0", method: "server/discover" })
        expect(first!["params"]["_meta"]).toEqual({
          [META_VERSION]: "2026-07-28",
          [META_CLIENT_INFO]: clientInfo,
          [META_CAPABILITIES]: declaredExtensions
        })
        expect(rest.map((m) => m["method"])).toEqual(["tools/list"])
        expect(rest[0]!["params"]["_meta"][META_VERSION]).toBe("2026-07-28")

        expect(yield* connection.callTool("add", { a: 2, b: 3 })).toMatchObject({ content: [{ type: "text", text: "5" }] })
        const call = r.wire().find((m) => m["method"] === "tools/call")!
        expect(call["params"]).toMatchObject({ name: "add", arguments: { a: 2, b: 3 }, _meta: { [META_VERSION]: "2026-07-28" } })

        expect(r.f.arrivals()).toEqual(["server/discover", "tools/list", "tools/call"])
        expect(r.f.rpcCalls("initialize")).toBe(0)
        expect(r.f.rpcCalls("notifications/initialized")).toBe(0)
        expect(r.spawns()).toBe(1)
        expect(r.f.isAlive()).toBe(true)
        yield* Scope.close(scope, Exit.void)
        expect(r.f.isAlive()).toBe(false)
      })
  )

  scoped("era handshake: the probe answered -32601 falls back to initialize on the same child, at once", () =>
    Effect.gen(function*() {
      const r = yield* recorded()
      const connection = yield* connectTo(r)
      // No bounded probe wait (5 s by default): the -32601 answer is taken at once. The probe's
      // outcome (below) says the answer ended it; a wait that ran out would be a ProtocolViolation.
      expect(connection.discovery[0]!.durationMs).toBeLessThan(5_000)
      expect(connection.protocolVersion).toBe("2025-11-25")
      expect(connection.tools.map((t) => t.name)).toEqual(["add", "echo", "increment"])
      expect(r.spawns()).toBe(1)
      expect(r.f.arrivals()).toEqual(["server/discover", "initialize", "notifications/initialized", "tools/list"])
      const initialize = r.wire().find((m) => m["method"] === "initialize")!
      expect(initialize["params"]).toEqual({
        protocolVersion: "2025-11-25",
        capabilities: { extensions: { "io.modelcontextprotocol/skills": {} } },
        clientInfo
      })
      expect(connection.discovery.map((o) => [o.stage, o.outcome, o.attempt?.era])).toEqual([
        ["discover", "RemoteRefusal", "stateless"],
        ["initialize", "ok", "handshake"],
        ["initialized", "ok", "handshake"],
        ["list-tools", "ok", "handshake"]
      ])
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      expect(r.spawns()).toBe(1)
    }))

  describe("a handshake server that never answers server/discover", () => {
    scoped("falls back after half the discovery timeout (2 s -> about 1 s), on the same child", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ silentOnUnknown: true })
        const started = Date.now()
        const connection = yield* connectTo(r, { policy: { discovery: { timeout: 2_000 } } })
        const elapsed = Date.now() - started
        // The probe's wait ran out (about 1 s); the connection succeeding under the 2 s deadline,
        // the handshake after the wait included, is the upper bound.
        expect(elapsed).toBeGreaterThanOrEqual(950)
        expect(connection.protocolVersion).toBe("2025-11-25")
        expect(r.spawns()).toBe(1)
        expect(r.f.arrivals()).toEqual(["server/discover", "initialize", "notifications/initialized", "tools/list"])
        const probe = connection.discovery[0]!
        expect(probe).toMatchObject({ stage: "discover", outcome: "ProtocolViolation", attempt: { era: "stateless" } })
        expect(probe.durationMs).toBeGreaterThanOrEqual(950)
        // The probe is no request of the caller's: it is not cancelled.
        expect(r.f.rpcCalls("notifications/cancelled")).toBe(0)
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      }))

    scoped("waits at most 5 s when half the discovery timeout is longer", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ silentOnUnknown: true })
        const started = Date.now()
        const connection = yield* connectTo(r, { policy: { discovery: { timeout: 30_000 } } })
        const elapsed = Date.now() - started
        expect(elapsed).toBeGreaterThanOrEqual(4_950)
        expect(elapsed).toBeLessThan(8_000)
        expect(connection.protocolVersion).toBe("2025-11-25")
        expect(r.spawns()).toBe(1)
      }))

    scoped("a stateless server too slow for the probe refuses initialize with -32022: probed once more, connected at 2026-07-28", () =>
      Effect.gen(function*() {
        // The first probe's answer comes after the probe's wait (1.25 s of a 2.5 s discovery): the
        // handshake follows, the stateless server refuses it naming 2026-07-28, and the second
        // probe, answered at once, wins. One child, one deadline.
        const r = yield* recorded({ era: "stateless", faults: [{ on: "server/discover", kind: "delay", ms: 2_000 }] })
        const connection = yield* connectTo(r, { policy: { discovery: { timeout: 2_500 } } })
        expect(connection.protocolVersion).toBe("2026-07-28")
        expect(r.spawns()).toBe(1)
        expect(r.f.arrivals().slice(0, 3)).toEqual(["server/discover", "initialize", "server/discover"])
        expect(connection.discovery.map((o) => [o.stage, o.outcome, o.attempt?.era])).toEqual([
          ["discover", "ProtocolViolation", "stateless"],
          ["initialize", "RemoteRefusal", "handshake"],
          ["discover", "ok", "stateless"],
          ["list-tools", "ok", "stateless"]
        ])
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      }))

    scoped("an answer that comes after the probe gave up never matters: it is dropped", () =>
      Effect.gen(function*() {
        // The -32601 arrives 1.5 s after the probe: 0.5 s after the client stopped waiting.
        const r = yield* recorded({ faults: [{ on: "server/discover", kind: "delay", ms: 1_500 }] })
        const connection = yield* connectTo(r, { policy: { discovery: { timeout: 2_000 } } })
        expect(connection.protocolVersion).toBe("2025-11-25")
        // Whether discovery ended before the late answer came depends on the machine's load:
        // wait for it, then check that it was counted once and taken for nothing else.
        yield* eventually(() => Effect.runSync(connection.diagnostics).droppedFrames === 1)
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
        expect(yield* connection.callTool("add", { a: 1, b: 1 })).toMatchObject({ content: [{ text: "2" }] })
        expect((yield* connection.diagnostics).droppedFrames).toBe(1)
        expect(r.spawns()).toBe(1)
      }))

    scoped("a discovery timeout too short for the probe and the handshake is DeadlineExceeded at initialize", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ silentOnUnknown: true, faults: [{ on: "initialize", kind: "delay", ms: 10_000 }] })
        const { error, elapsedMs } = yield* failureOf(connectTo(r, { policy: { discovery: { timeout: 1_000 } } }))
        expect(error).toMatchObject({
          _tag: "DeadlineExceeded",
          stage: "initialize",
          phase: "discovery",
          limits: { timeoutMs: 1_000 },
          outcome: "unknown"
        })
        expect(elapsedMs).toBeGreaterThanOrEqual(950)
        // Generous: the deadline ended it, not the test's own timeout.
        expect(elapsedMs).toBeLessThan(GENEROUS_MS)
        expect(r.f.arrivals()).toEqual(["server/discover", "initialize"])
        expect(r.spawns()).toBe(1)
        yield* eventually(() => !r.f.isAlive())
        expect(r.f.rpcCalls("notifications/cancelled")).toBe(0)
      }))

    scoped("a discovery timeout that passes during the handshake's listing is DeadlineExceeded at list-tools", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ silentOnUnknown: true, faults: [{ on: "tools/list", kind: "never-answer" }] })
        const { error, elapsedMs } = yield* failureOf(connectTo(r, { policy: { discovery: { timeout: 1_200 } } }))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "list-tools", phase: "discovery" })
        expect(elapsedMs).toBeGreaterThanOrEqual(1_150)
        expect(elapsedMs).toBeLessThan(GENEROUS_MS)
        expect(r.f.arrivals().slice(0, 4)).toEqual(["server/discover", "initialize", "notifications/initialized", "tools/list"])
        yield* eventually(() => !r.f.isAlive())
      }))
  })

  scoped("era dual: the stateless era is chosen", () =>
    Effect.gen(function*() {
      const r = yield* recorded({ era: "dual" })
      const connection = yield* connectTo(r)
      expect(connection.protocolVersion).toBe("2026-07-28")
      expect(connection.tools.map((t) => t.name)).toEqual(["add", "echo", "increment", "ask_name"])
      expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      expect(r.f.arrivals()).toEqual(["server/discover", "tools/list", "tools/call"])
      expect(r.f.rpcCalls("initialize")).toBe(0)
      expect(r.wire().every((m) => m["params"]["_meta"][META_VERSION] === "2026-07-28")).toBe(true)
    }))

  scoped(
    "an interrupted call and a deadline each send notifications/cancelled with the request id; the late answers are dropped",
    () =>
      Effect.gen(function*() {
        // The answers trickle out for about 1.5 s each, whatever the client says meanwhile.
        const trickle = { on: "tools/call", kind: "exact-size", bytes: 600, chunkSize: 10, chunkDelayMs: 25 } as const
        const r = yield* recorded({ era: "stateless", faults: [{ ...trickle, times: 2 }] })
        const connection = yield* connectTo(r, { policy: { call: { timeout: 10_000 } } })
        const calls = () => r.wire().filter((m) => m["method"] === "tools/call")
        const cancels = () => r.wire().filter((m) => m["method"] === "notifications/cancelled")

        const fiber = yield* Effect.fork(connection.callTool("increment"))
        yield* eventually(() => r.f.rpcCalls("tools/call") === 1)
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        yield* eventually(() => r.f.rpcCalls("notifications/cancelled") === 1)
        expect(cancels()[0]!["params"]).toMatchObject({ requestId: calls()[0]!["id"] })
        expect(cancels()[0]).not.toHaveProperty("id")
        yield* eventually(() => Effect.runSync(connection.diagnostics).droppedFrames === 1)

        const { error } = yield* failureOf(connection.callTool("increment", {}, { timeout: 300 }))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call", phase: "call", outcome: "unknown" })
        yield* eventually(() => r.f.rpcCalls("notifications/cancelled") === 2)
        expect(cancels()[1]!["params"]).toMatchObject({ requestId: calls()[1]!["id"] })
        expect(calls()[0]!["id"]).not.toEqual(calls()[1]!["id"])
        yield* eventually(() => Effect.runSync(connection.diagnostics).droppedFrames === 2)

        // Both were applied (the server works on arrival); nothing was re-sent; the session goes on.
        expect(r.f.counter()).toBe(2)
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "3" }] })
        expect(r.f.rpcCalls("tools/call")).toBe(3)
        expect(r.f.rpcCalls("notifications/cancelled")).toBe(2)
        yield* expectReleased(connection)
      })
  )

  describe("-32022 on server/discover", () => {
    scoped("once: retried once with the revision it names", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless", faults: [{ on: "server/discover", kind: "unsupported-version" }] })
        const connection = yield* connectTo(r)
        expect(connection.protocolVersion).toBe("2026-07-28")
        expect(r.f.rpcCalls("server/discover")).toBe(2)
        expect(r.f.rpcCalls("initialize")).toBe(0)
        const probes = r.wire().filter((m) => m["method"] === "server/discover")
        expect(probes.map((m) => m["params"]["_meta"][META_VERSION])).toEqual(["2026-07-28", "2026-07-28"])
        expect(probes[0]!["id"]).not.toEqual(probes[1]!["id"])
        expect(connection.discovery.filter((o) => o.stage === "discover")).toHaveLength(2)
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      }))

    scoped("forever, revisions pinned to 2026-07-28: RemoteRefusal -32022 after 2 probes", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless", faults: [{ on: "server/discover", kind: "unsupported-version", times: Infinity }] })
        const { error } = yield* failureOf(connectTo(r, { revisions: ["2026-07-28"] }))
        expect(error).toMatchObject({
          _tag: "RemoteRefusal",
          code: -32022,
          stage: "discover",
          phase: "discovery",
          retryable: false
        })
        expect(r.f.rpcCalls("server/discover")).toBe(2)
        expect(r.f.rpcCalls("initialize")).toBe(0)
        expect(r.spawns()).toBe(1)
        yield* eventually(() => !r.f.isAlive())
      }))
  })

  describe("resultType and input_required rounds", () => {
    const elicitation = (content: Record<string, unknown>, seen: Array<unknown> = []): ClientHandlers.Handlers => ({
      elicitation: (params) =>
        Effect.sync(() => {
          seen.push(params)
          return { action: "accept", content }
        })
    })

    scoped("an unknown resultType is a ProtocolViolation unknown-result-type", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless", faults: [{ on: "tools/call", kind: "result-type", value: "bogus" }] })
        const connection = yield* connectTo(r)
        const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "unknown-result-type", stage: "call", phase: "call" })
        expect(r.f.rpcCalls("tools/call")).toBe(1)
        expect(yield* connection.callTool("echo", { text: "y" })).toMatchObject({ content: [{ text: "y" }] })
      }))

    scoped("input required forever stops at maxInputRounds (2): LimitExceeded after 3 requests", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless", faults: [{ on: "tools/call", kind: "input-required", times: Infinity }] })
        const seen: Array<unknown> = []
        const connection = yield* connectTo(r, { policy: { maxInputRounds: 2 }, handlers: elicitation({ name: "Ada" }, seen) })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxInputRounds", stage: "call", phase: "call" })
        expect(r.f.rpcCalls("tools/call")).toBe(3)
        expect(seen).toHaveLength(2)
        const calls = r.wire().filter((m) => m["method"] === "tools/call")
        expect(new Set(calls.map((m) => m["id"])).size).toBe(3)
        expect(calls[0]!["params"]).not.toHaveProperty("requestState")
        for (const retry of calls.slice(1)) {
          expect(retry["params"]).toMatchObject({
            name: "increment",
            inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
            requestState: expect.any(String)
          })
        }
      }))

    scoped("ask_name with an elicitation handler greets the name; the schema's default fills an omitted field", () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless" })
        const seen: Array<any> = []
        const connection = yield* connectTo(r, { handlers: elicitation({ name: "Ada" }, seen) })
        expect(r.wire()[0]!["params"]["_meta"][META_CAPABILITIES]).toEqual({ elicitation: {}, ...declaredExtensions })
        expect(textOf(yield* connection.callTool("ask_name"))).toBe("hello Ada")
        expect(seen).toHaveLength(1)
        expect(seen[0]).toMatchObject({ mode: "form", message: "Your name?" })
        const calls = r.wire().filter((m) => m["method"] === "tools/call")
        expect(calls).toHaveLength(2)
        expect(calls[1]!["params"]).toMatchObject({
          name: "ask_name",
          inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
          requestState: expect.any(String)
        })

        const r2 = yield* recorded({ era: "stateless" })
        const defaults = yield* connectTo(r2, { handlers: elicitation({}) })
        expect(textOf(yield* defaults.callTool("ask_name"))).toBe("hello anon")
        const retry = r2.wire().filter((m) => m["method"] === "tools/call")[1]!
        // Filled in by the client (SEP-1034), not left to the server.
        expect(retry["params"]["inputResponses"]).toEqual({ name: { action: "accept", content: { name: "anon" } } })
      }))
  })

  // The answers are padded with multi-byte characters and written 7 bytes at a time, 1 ms apart
  // (`chunkDelayMs`), so that the reads split characters; whether a pipe really delivers them
  // split is up to its scheduling (writes can coalesce). The deterministic proof that a line
  // decodes the same however its bytes are cut is packages/client/test/lineDecoder.test.ts
  // ("decodes multi-byte characters split across chunks", "every chunking yields the same
  // lines"). The call answer one byte over the ceiling, and a complete line over its request's
  // ceiling failing that request only, are the contract suite's (ceilings, overrides).
  describe("exact line ceilings (raw bytes, the newline included)", () => {
    const ceiling = 2_000
    const exactSize = (on: string, bytes: number) => ({ on, kind: "exact-size", bytes, chunkSize: 7, chunkDelayMs: 1 }) as const
    for (const bytes of [ceiling, ceiling + 1]) {
      scoped(`a server/discover line of ${bytes} bytes against a discovery ceiling of ${ceiling}`, () =>
        Effect.gen(function*() {
          const r = yield* recorded({ era: "stateless", faults: [exactSize("server/discover", bytes)] })
          const exit = yield* Effect.exit(connectTo(r, { policy: { discovery: { maxBytes: ceiling }, unsolicited: { maxBytes: 100 } } }))
          if (bytes <= ceiling) {
            expect(Exit.isSuccess(exit)).toBe(true)
            const connection = (exit as Exit.Success<McpClient.Connection, never>).value
            expect(connection.protocolVersion).toBe("2026-07-28")
            expect(connection.discovery[0]).toMatchObject({ stage: "discover", bytes: ceiling, outcome: "ok" })
          } else {
            const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
            expect(error).toMatchObject({
              _tag: "ByteCeilingExceeded",
              stage: "discover",
              phase: "discovery",
              limits: { maxBytes: ceiling }
            })
            // The line is the last thing on stdout: what was read of it is all of it.
            expect((error as { observedBytes: number }).observedBytes).toBe(ceiling + 1)
            // No fall back to the handshake after a ceiling.
            expect(r.f.rpcCalls("initialize")).toBe(0)
            yield* eventually(() => !r.f.isAlive())
          }
        }))
    }

    scoped(`a tools/call line of ${ceiling} bytes against a call ceiling of ${ceiling} is returned and observed whole`, () =>
      Effect.gen(function*() {
        const r = yield* recorded({ era: "stateless", faults: [exactSize("tools/call", ceiling)] })
        const connection = yield* connectTo(r, { policy: { call: { maxBytes: ceiling } } })
        expect(connection.protocolVersion).toBe("2026-07-28")
        yield* connection.callTool("echo", { text: "x" })
        expect((yield* connection.observations).at(-1)).toMatchObject({ operation: "tools/call", bytes: ceiling, outcome: "ok" })
        expect(yield* connection.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      }))
  })
})
