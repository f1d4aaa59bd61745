/**
 * Argument completion (docs/DESIGN.md, "Completion"), end to end against the testkit servers with
 * `features` (which declare `completions`), in both eras and over every transport (Streamable
 * HTTP 2025 and 2026-07-28 with JSON and SSE answers, legacy HTTP+SSE, stdio in both eras; every
 * HTTP row through each HTTP client): prompt and resource template arguments, context arguments
 * of a template with several variables, exactly what is sent, the spec's bound of 100 values
 * (100 accepted, 101 refused), malformed results, the call budget's ceiling and deadline,
 * inputs refused before any I/O, the Promise API; then servers that did not declare
 * `completions` (never asked), the 2026-07-28 headers of the request, and the services.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Context, Effect, Exit, Fiber, Layer, Option, TestClock } from "effect"
import { Authorization, McpClient, McpConnection, McpServers } from "../../src/index.js"
import { featureRows, type Row, subscribed } from "../support/featureRows.js"
import { eventually, failureOf, httpClients } from "../support/harness.js"
import { type Recorded, recordingTracer } from "../support/recordingTracer.js"

const { rows } = featureRows(
  [["handshake", "json"], ["handshake", "sse"], ["stateless", "json"], ["stateless", "sse"]],
  { connectWaitsForSubscription: true }
)

const scoped = (row: Row, name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(row.layer)) as Effect.Effect<void, unknown, never>, timeout)

const operationsOf = (connection: McpClient.Connection) =>
  Effect.map(connection.observations, (all) => all.map((o) => [o.operation, o.stage, o.outcome] as const))

const expectReleased = (connection: McpClient.Connection) =>
  eventually(() => {
    const diagnostics = Effect.runSync(connection.diagnostics)
    return diagnostics.pending === 0 && diagnostics.background === 0
  }, 10_000)

const greet = (value: string) => ({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value } }) as const
const fault = (name: string, value = "") => ({ ref: { type: "ref/prompt", name: "completion_faults" }, argument: { name, value } }) as const
const repos = "test://repos/{owner}/{repo}"

describe.concurrent.each(rows.map((row) => [row.name, row] as const))("completion, %s", (_, row) => {
  scoped(row, "prompt and template arguments, with context arguments; each request once, observed, exactly the spec's params", () =>
    Effect.gen(function*() {
      const live = yield* row.start({ resources: 12 })
      const connection = yield* live.connect()
      expect(connection.capabilities).toMatchObject({ completions: {} })

      const names = yield* connection.complete(greet("a"))
      expect(names.completion).toEqual({ values: ["Ada", "Alan", "Alonzo"], total: 3, hasMore: false })
      // An empty value: everything (what a client shows before anything is typed).
      expect((yield* connection.complete(greet(""))).completion.values).toEqual(Testkit.COMPLETION_NAMES)

      const ids = yield* connection.complete({ ref: { type: "ref/resource", uri: "test://docs/{id}" }, argument: { name: "id", value: "1" } })
      expect(ids.completion.values).toEqual(["1", "10", "11", "12"])

      // A template with several variables: the second is completed from the first's value.
      const owners = yield* connection.complete({ ref: { type: "ref/resource", uri: repos }, argument: { name: "owner", value: "e" } })
      expect(owners.completion.values).toEqual(["effect"])
      const withContext = yield* connection.complete({
        ref: { type: "ref/resource", uri: repos },
        argument: { name: "repo", value: "e" },
        context: { arguments: { owner: "effect" } }
      })
      expect(withContext.completion.values).toEqual(["effect", "effect-ts.github.io", "examples"])
      const otherOwner = yield* connection.complete({
        ref: { type: "ref/resource", uri: repos },
        argument: { name: "repo", value: "" },
        context: { arguments: { owner: "modelcontextprotocol" } }
      })
      expect(otherOwner.completion.values).toEqual(["modelcontextprotocol", "typescript-sdk", "inspector"])

      // What went: the spec's fields only (a prompt reference's title included), nothing of the
      // caller's object besides.
      const echoed = yield* connection.complete({
        ref: { type: "ref/prompt", name: "completion_faults", title: "Faults", extra: "not sent" } as never,
        argument: { name: "echo", value: "v" },
        context: { arguments: { a: "1" } }
      })
      expect(JSON.parse(echoed.completion.values[0]!)).toEqual({
        ref: { type: "ref/prompt", name: "completion_faults", title: "Faults" },
        argument: { name: "echo", value: "v" },
        context: { arguments: { a: "1" } }
      })

      expect(live.rpcCalls("completion/complete")).toBe(7)
      const observed = yield* connection.observations
      expect(observed.map((o) => [o.operation, o.stage, o.outcome])).toEqual(
        Array.from({ length: 7 }, () => ["completion/complete", "complete", "ok"])
      )
      for (const o of observed) expect(o.bytes).toBeGreaterThan(0)
      if (live.metasOf !== undefined && row.era === "stateless") {
        // 2026-07-28: the request carries the era's _meta like every other.
        for (const meta of live.metasOf("completion/complete")) {
          expect(meta).toMatchObject({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" })
          expect(meta["io.modelcontextprotocol/clientCapabilities"]).toBeDefined()
        }
      }
    }))

  scoped(
    row,
    "hostile results: 100 values accepted, 101 refused; wrong types and a missing completion refused; the connection goes on",
    () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        const hundred = yield* connection.complete(fault("too-many", "100"))
        expect(hundred.completion.values).toHaveLength(100)

        for (const [name, value] of [["too-many", "101"], ["too-many", "10000"], ["wrong-type", ""], ["no-completion", ""]] as const) {
          const { error } = yield* failureOf(connection.complete(fault(name, value)))
          expect(error, name).toMatchObject({
            _tag: "ProtocolViolation",
            reason: "invalid-result",
            stage: "complete",
            phase: "call",
            outcome: "applied",
            retryable: false
          })
          expect((error as { observedBytes?: number }).observedBytes).toBeGreaterThan(0)
        }
        // An unknown prompt: the server's refusal, typed.
        const unknown = yield* failureOf(connection.complete({ ref: { type: "ref/prompt", name: "nope" }, argument: { name: "x", value: "" } }))
        expect(unknown.error).toMatchObject({ _tag: "RemoteRefusal", code: -32602, stage: "complete", outcome: "not-applied" })
        expect(live.rpcCalls("completion/complete")).toBe(6)
        expect((yield* connection.complete(greet("G"))).completion.values).toEqual(["Grace"])
      })
  )

  scoped(
    row,
    "a value past the call ceiling: ByteCeilingExceeded (complete, call), released; a deadline: DeadlineExceeded, never re-sent",
    () =>
      Effect.gen(function*() {
        const live = yield* row.start({ faults: [{ on: "completion/complete", kind: "delay", ms: 3_000 }] })
        const connection = yield* live.connect()
        const late = yield* failureOf(connection.complete(greet("A"), { timeout: 200 }))
        expect(late.error).toMatchObject({ _tag: "DeadlineExceeded", stage: "complete", phase: "call", limits: { timeoutMs: 200 }, outcome: "unknown" })
        expect(late.elapsedMs).toBeGreaterThanOrEqual(180)
        expect(late.elapsedMs).toBeLessThan(2_500)
        yield* expectReleased(connection)
        expect(live.rpcCalls("completion/complete")).toBe(1)

        const big = yield* failureOf(connection.complete(fault("huge", "200000"), { maxBytes: 65_536 }))
        expect(big.error).toMatchObject({ _tag: "ByteCeilingExceeded", stage: "complete", phase: "call", limits: { maxBytes: 65_536 }, retryable: false })
        expect((big.error as { observedBytes?: number }).observedBytes).toBeGreaterThan(65_536)
        yield* expectReleased(connection)
        // The same answer under a ceiling that holds it.
        const held = yield* connection.complete(fault("huge", "200000"), { maxBytes: 1_000_000 })
        expect(Buffer.byteLength(held.completion.values[0]!, "utf8")).toBe(200_000)
        expect(live.rpcCalls("completion/complete")).toBe(3)
        expect(yield* operationsOf(connection)).toEqual([
          ["completion/complete", "complete", "DeadlineExceeded"],
          ["completion/complete", "complete", "ByteCeilingExceeded"],
          ["completion/complete", "complete", "ok"]
        ])
      })
  )

  scoped(row, "invalid requests and budgets are refused before any I/O: InvalidOption naming the part", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const before = live.received()
      const refused = [
        [{ ref: { type: "ref/prompt", name: "" }, argument: { name: "a", value: "" } }, "ref"],
        [{ ref: { type: "ref/tool", name: "x" }, argument: { name: "a", value: "" } }, "ref"],
        [{ ref: { type: "ref/resource", uri: 7 }, argument: { name: "a", value: "" } }, "ref"],
        [{ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "", value: "" } }, "argument"],
        [{ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name" } }, "argument"],
        [{ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "" }, context: { arguments: { a: 1 } } }, "context"],
        [{ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "" }, context: "x" }, "context"],
        [{ argument: { name: "name", value: "" } }, "ref"],
        [null, "request"],
        ["greet", "request"]
      ] as const
      for (const [request, option] of refused) {
        const { error } = yield* failureOf(connection.complete(request as never))
        expect(error, JSON.stringify(request)).toMatchObject({ _tag: "InvalidOption", option, stage: "complete", outcome: "not-sent", retryable: false })
      }
      for (const [budget, option] of [[{ timeout: 0 }, "call.timeout"], [{ maxBytes: 1.5 }, "call.maxBytes"]] as const) {
        const { error } = yield* failureOf(connection.complete(greet("a"), budget))
        expect(error).toMatchObject({ _tag: "InvalidOption", option, outcome: "not-sent" })
      }
      expect(live.received()).toBe(before)
      expect(live.rpcCalls("completion/complete")).toBe(0)
    }))

  scoped(row, "the Promise API resolves and rejects the same way", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* Effect.promise(() => live.promise())
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      yield* subscribed(row.era, live.rpcCalls)()
      yield* Effect.promise(async () => {
        expect((await connection.complete(greet("b"))).completion).toEqual({ values: ["Barbara"], total: 1, hasMore: false })
        expect(
          (await connection.complete({
            ref: { type: "ref/resource", uri: repos },
            argument: { name: "repo", value: "i" },
            context: { arguments: { owner: "modelcontextprotocol" } }
          }))
            .completion.values
        ).toEqual(["inspector"])
        await expect(connection.complete(fault("too-many", "101"))).rejects.toMatchObject({
          _tag: "ProtocolViolation",
          reason: "invalid-result",
          stage: "complete"
        })
        await expect(connection.complete(fault("huge", "100000"), { maxBytes: 4_096 })).rejects.toMatchObject({
          _tag: "ByteCeilingExceeded",
          stage: "complete"
        })
        const before = live.received()
        await expect(connection.complete({ ref: { type: "ref/prompt", name: "" }, argument: { name: "a", value: "" } })).rejects.toMatchObject({
          _tag: "InvalidOption",
          option: "ref"
        })
        const reason = new Error("not wanted")
        await expect(connection.complete(greet("a"), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
        expect(live.received()).toBe(before)
      })
      expect(live.rpcCalls("completion/complete")).toBe(4)
    }))
})

// ---------------------------------------------------------------------------------------------
// Servers that did not declare `completions`
// ---------------------------------------------------------------------------------------------

const [clientName, httpLayer] = httpClients[0]!

describe.concurrent.each([["handshake", "json"], ["handshake", "sse"], ["stateless", "json"], ["stateless", "sse"]] as const)(
  "a server without completions (%s, %s)",
  (era, mode) => {
    it.scopedLive(`is never asked: InvalidOption completions, undeclared-capability, not-sent (${clientName})`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped({ mode, era })
        const connection = yield* McpClient.connect({ url: srv.url })
        expect(connection.capabilities["completions"]).toBeUndefined()
        const before = srv.requests.length
        const { error } = yield* failureOf(connection.complete(greet("a")))
        expect(error).toMatchObject({
          _tag: "InvalidOption",
          option: "completions",
          reason: "undeclared-capability",
          stage: "complete",
          phase: "call",
          outcome: "not-sent",
          retryable: false
        })
        expect(srv.requests.length).toBe(before)
        expect(srv.rpcCalls("completion/complete")).toBe(0)
        expect(yield* operationsOf(connection)).toEqual([["completion/complete", "complete", "InvalidOption"]])
      }).pipe(Effect.provide(httpLayer)), 30_000)
  }
)

describe("a stdio server without completions", () => {
  for (const era of ["handshake", "stateless"] as const) {
    it.scopedLive(`is never asked (${era})`, () =>
      Effect.gen(function*() {
        const f = yield* Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture({ era })), (f) => Effect.sync(() => f.cleanup()))
        const connection = yield* McpClient.connectStdio({ command: f.command, args: f.args, env: f.env })
        const before = f.arrivals().length
        const { error } = yield* failureOf(connection.complete(greet("a")))
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "completions", reason: "undeclared-capability", outcome: "not-sent" })
        expect(f.arrivals().length).toBe(before)
      }).pipe(Effect.provide(rows.at(-1)!.layer)), 30_000)
  }
})

// ---------------------------------------------------------------------------------------------
// 2026-07-28 headers
// ---------------------------------------------------------------------------------------------

describe.concurrent.each([["json"], ["sse"]] as const)("2026-07-28 headers of completion/complete (%s)", (mode) => {
  it.scopedLive("Mcp-Method names it, no Mcp-Name (the spec gives it none), MCP-Protocol-Version as in _meta", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ mode, era: "stateless", features: true })
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.complete(greet("A"))
      const [request] = srv.requests.filter((r) => r.rpcMethod === "completion/complete")
      expect(request!.headers["mcp-method"]).toBe("completion/complete")
      expect(request!.headers["mcp-name"]).toBeUndefined()
      expect(request!.headers["mcp-protocol-version"]).toBe("2026-07-28")
    }).pipe(Effect.provide(httpLayer)), 30_000)
})

// ---------------------------------------------------------------------------------------------
// The span
// ---------------------------------------------------------------------------------------------

describe("the span of a completion", () => {
  it.scopedLive("mcp.completion.complete: phase, stage, transport, revision, outcome and bytes; no URL, no argument", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ era: "stateless", features: true })
      const spans: Array<Recorded> = []
      yield* Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: srv.url })
        yield* connection.complete(greet("secret-typed-text"))
        yield* Effect.flip(connection.complete(fault("too-many", "101")))
      }).pipe(Effect.withTracer(recordingTracer(spans)), Effect.provide(httpLayer))
      const mine = spans.filter((span) => span.name === "mcp.completion.complete")
      expect(mine).toHaveLength(2)
      expect(Object.fromEntries(mine[0]!.attributes)).toEqual({
        "mcp.phase": "call",
        "mcp.stage": "complete",
        "mcp.transport": "streamable-http",
        "mcp.protocol.version": "2026-07-28",
        "mcp.outcome": "ok",
        "mcp.observed_bytes": expect.any(Number)
      })
      expect(mine[1]!.attributes.get("mcp.outcome")).toBe("ProtocolViolation")
      for (const span of mine) {
        expect(span.ended).toBe(true)
        const text = JSON.stringify([...span.attributes])
        expect(text).not.toContain("127.0.0.1")
        expect(text).not.toContain("secret-typed-text")
      }
    }), 30_000)
})

// ---------------------------------------------------------------------------------------------
// The services
// ---------------------------------------------------------------------------------------------

describe("completion through the services", () => {
  it.scopedLive("McpConnection's connection and McpServers.complete, by name, each server on first use", () =>
    Effect.gen(function*() {
      const modern = yield* Testkit.scoped({ era: "stateless", features: true })
      const handshake = yield* Testkit.scoped({ features: true })
      // Built in the test's scope: the services live until it closes.
      const built = yield* Layer.build(McpServers.layer({ servers: { modern: { url: modern.url }, handshake: { url: handshake.url } } }))
      const servers = Context.get(built, McpServers.McpServers)
      const names = yield* servers.complete("modern", greet("Gr"))
      expect(names.completion.values).toEqual(["Grace"])
      expect(handshake.requests.length).toBe(0)
      const repos = yield* servers.complete("handshake", {
        ref: { type: "ref/resource", uri: "test://repos/{owner}/{repo}" },
        argument: { name: "repo", value: "ty" },
        context: { arguments: { owner: "modelcontextprotocol" } }
      }, { timeout: 5_000 })
      expect(repos.completion.values).toEqual(["typescript-sdk"])
      const unknown = yield* failureOf(servers.complete("nowhere", greet("a")))
      expect(unknown.error).toMatchObject({ _tag: "InvalidOption", option: "server", outcome: "not-sent" })

      const connection = Context.get(yield* Layer.build(McpConnection.layerHttp({ url: modern.url })), McpConnection.McpConnection)
      expect((yield* connection.complete(greet("Ed"))).completion.values).toEqual(["Edsger"])
      expect(modern.rpcCalls("completion/complete") + handshake.rpcCalls("completion/complete")).toBe(3)
    }).pipe(Effect.provide(Layer.mergeAll(httpLayer, rows.at(-1)!.layer, NodeFileSystem.layer, NodePath.layer, Authorization.layerDefaults))), 30_000)
})

// ---------------------------------------------------------------------------------------------
// The deadline under TestClock
// ---------------------------------------------------------------------------------------------

describe.concurrent.each([["handshake", "json"], ["stateless", "sse"]] as const)("completion under TestClock (%s, %s)", (era, mode) => {
  // Virtual time drives the deadline; the server holds its answer in real time.
  it.scoped("a stalled answer has not failed at the deadline minus 1 ms, and has failed at the deadline; sent once", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode, era })
      srv.script({ on: "completion/complete", kind: "delay", ms: 30_000 })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(httpLayer))
      const completing = yield* Effect.fork(connection.complete(greet("A"), { timeout: 1_000 }))
      // The sync point: the request reached the server.
      yield* eventually(() => srv.rpcCalls("completion/complete") === 1, 10_000)
      yield* TestClock.adjust("999 millis")
      expect(Option.isNone(yield* Fiber.poll(completing))).toBe(true)
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(completing))
      expect(error).toMatchObject({
        _tag: "DeadlineExceeded",
        stage: "complete",
        phase: "call",
        limits: { timeoutMs: 1_000 },
        outcome: "unknown",
        retryable: false
      })
      expect(srv.rpcCalls("completion/complete")).toBe(1)
    }), 20_000)

  it.scoped("the caller's interruption is an interruption, never a DeadlineExceeded; the request is released", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode, era })
      srv.script({ on: "completion/complete", kind: "delay", ms: 30_000 })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(httpLayer))
      const completing = yield* Effect.fork(connection.complete(greet("A"), { timeout: 1_000 }))
      yield* eventually(() => srv.rpcCalls("completion/complete") === 1, 10_000)
      const exit = yield* Fiber.interrupt(completing)
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* expectReleased(connection)
      // Past the deadline now: nothing more happens to the interrupted request.
      yield* TestClock.adjust("2 seconds")
      expect((yield* connection.observations).filter((o) => o.operation === "completion/complete")).toEqual([])
      expect(srv.rpcCalls("completion/complete")).toBe(1)
    }), 20_000)
})
