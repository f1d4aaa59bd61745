/**
 * Progress (docs/DESIGN.md, "Progress"): a call that asks for progress gets
 * the server's reports, in both APIs and as a Stream; an idle timeout reset by each report,
 * under the call's deadline, which stays the hard cap. On every transport and era that can
 * carry a report, against the testkit's `slow_progress` tool, under the live clock and under
 * `TestClock`.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Chunk, Deferred, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"
import { McpClient, type McpSchema } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { expectReleased, failureOf, httpClients } from "../support/harness.js"

/** A connection to a server with the `features` tools, its count of `slow_progress` runs and of reports sent. */
interface Opened {
  readonly connection: McpClient.Connection
  readonly runs: () => number
  readonly reportsSent: () => number
  /**
   * Runs a call so that its reports reach the client before its answer. Where they travel on
   * another stream than the answer (JSON answers: the session's GET stream) nothing on the wire
   * orders them, so the server holds the answer until `delivered` holds (the client has handed
   * over every report); elsewhere the call runs as is.
   */
  readonly reportsFirst: <A, E, R>(call: Effect.Effect<A, E, R>, delivered: () => boolean) => Effect.Effect<A, E, R>
}

/** One way to reach a server with the `features` tools. */
interface Row {
  readonly name: string
  readonly open: (policy?: McpClient.ConnectOptions["policy"]) => Effect.Effect<Opened, unknown, any>
}

const asIs = <A, E, R>(call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => call

/** `reportsFirst` over a server whose answers can be held. */
const answerAfterDelivery = (srv: Testkit.TestServer) => <A, E, R>(call: Effect.Effect<A, E, R>, delivered: () => boolean): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => srv.holdAnswers()),
    (release) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(call)
        yield* Effect.promise(() => srv.waitFor(delivered, 15_000))
        release()
        return yield* Fiber.join(fiber)
      }),
    (release) => Effect.sync(release)
  )

/** The reports `slow_progress` sends for `steps` steps. */
const reportsOf = (steps: number) => Array.from({ length: steps }, (_, i) => ({ progress: i + 1, total: steps, message: `step ${i + 1} of ${steps}` }))

const stdioPlatform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

const httpRow = (name: string, options: Testkit.TestServerOptions, layer: Layer.Layer<any>): Row => ({
  name,
  open: (policy) =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, ...options })
      // Built in the test's scope: the client outlives the connect.
      const client = yield* Layer.build(layer)
      const connection = yield* McpClient.connect({ url: srv.url, policy }).pipe(Effect.provide(client))
      // JSON answers: a report sent before the GET stream is open goes nowhere; wait for it.
      if (options.mode === "json") yield* Effect.promise(() => srv.waitFor(() => srv.listChangedListeners() === 1))
      return {
        connection,
        runs: () => srv.toolCalls("slow_progress"),
        reportsSent: srv.progressSent,
        reportsFirst: options.mode === "json" ? answerAfterDelivery(srv) : asIs
      }
    })
})

const rows: ReadonlyArray<Row> = [
  ...httpClients.flatMap(([client, layer]) => [
    httpRow(`Streamable HTTP 2025, SSE answers, ${client}`, { mode: "sse" }, layer),
    // JSON answers cannot carry a report: the server sends them on the standalone GET stream.
    httpRow(`Streamable HTTP 2025, JSON answers, ${client}`, { mode: "json" }, layer),
    httpRow(`Streamable HTTP 2026-07-28, SSE answers, ${client}`, { mode: "sse", era: "stateless" }, layer)
  ]),
  {
    name: "legacy HTTP+SSE",
    open: (policy) =>
      Effect.gen(function*() {
        const srv = yield* Effect.acquireRelease(
          Effect.promise(() => Testkit.startLegacyServer({ features: true })),
          (s) => Effect.promise(() => s.close())
        )
        const connection = yield* McpClient.connect({ url: srv.url, transport: "sse", policy }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        return { connection, runs: () => srv.toolCalls("slow_progress"), reportsSent: srv.progressSent, reportsFirst: asIs }
      })
  },
  ...(["handshake", "stateless"] as const).map((era): Row => ({
    name: `stdio, ${era}`,
    open: (policy) =>
      Effect.gen(function*() {
        const f = yield* Effect.acquireRelease(
          Effect.sync(() => Testkit.makeStdioFixture({ features: true, era })),
          (f) => Effect.sync(() => f.cleanup())
        )
        const connection = yield* McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, policy }).pipe(
          Effect.provide(stdioPlatform)
        )
        return { connection, runs: () => f.toolCalls("slow_progress"), reportsSent: f.progressSent, reportsFirst: asIs }
      })
  }))
]

describe.concurrent.each(rows)("progress, $name", (row) => {
  it.scopedLive("onProgress gets each report in order, then the call returns its result; the tool ran once", () =>
    Effect.gen(function*() {
      const { connection, reportsFirst, reportsSent, runs } = yield* row.open()
      const reports: Array<McpSchema.Progress> = []
      const result = yield* reportsFirst(
        connection.callTool("slow_progress", { steps: 3, intervalMs: 20 }, { onProgress: (p) => reports.push(p) }),
        () => reports.length === 3
      )
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      // Every report, once each, in order, before the result.
      expect(reports).toEqual(reportsOf(3))
      expect(reportsSent()).toBe(3)
      expect(runs()).toBe(1)
    }), 20_000)

  it.scopedLive("callToolStream: the reports, then the result, then the end", () =>
    Effect.gen(function*() {
      const { connection, reportsFirst } = yield* row.open()
      let delivered = 0
      const stream = connection.callToolStream("slow_progress", { steps: 2, intervalMs: 20 }).pipe(
        Stream.tap((event) =>
          Effect.sync(() => {
            if (event._tag === "Progress") delivered++
          })
        )
      )
      const events = Chunk.toReadonlyArray(yield* reportsFirst(Stream.runCollect(stream), () => delivered === 2))
      expect(events.map((e) => e._tag)).toEqual(["Progress", "Progress", "Result"])
      expect(events.slice(0, -1).map((e) => (e as { progress?: unknown }).progress)).toEqual(reportsOf(2))
      expect(events.at(-1)).toMatchObject({ _tag: "Result", result: { content: [{ type: "text", text: "done" }] } })
    }), 20_000)

  it.scopedLive("an idle timeout shorter than the silence: DeadlineExceeded idle-timeout, long before the deadline; released", () =>
    Effect.gen(function*() {
      const { connection, runs } = yield* row.open()
      const reports: Array<number> = []
      // One report (at 150 ms), then silence until the answer (at 3 s): the idle timeout (1 s)
      // fires, not the deadline (20 s). The idle timeout is over six times the wait for the
      // report, so that a loaded machine's pauses do not end the call before it.
      const { elapsedMs, error } = yield* failureOf(
        connection.callTool("slow_progress", { steps: 20, intervalMs: 150, silentAfter: 1 }, {
          timeout: 20_000,
          idleTimeout: 1_000,
          onProgress: (p) => reports.push(p.progress)
        })
      )
      expect(error).toMatchObject({
        _tag: "DeadlineExceeded",
        reason: "idle-timeout",
        stage: "call",
        phase: "call",
        outcome: "unknown",
        limits: { timeoutMs: 20_000, idleTimeoutMs: 1_000 }
      })
      expect(String(error)).toContain("idle 1000 ms")
      expect(reports).toEqual([1])
      // 150 ms to the first report, then 1 s without one; long before the answer (3 s).
      expect(elapsedMs).toBeGreaterThanOrEqual(1_140)
      expect(elapsedMs).toBeLessThan(3_000)
      expect(runs()).toBe(1)
      yield* expectReleased(connection)
      // The connection goes on.
      expect((yield* connection.callTool("slow_progress", { steps: 1, intervalMs: 1 })).content).toHaveLength(1)
    }), 20_000)

  it.scopedLive("reports keep an idle timeout from firing: each one starts the wait anew", () =>
    Effect.gen(function*() {
      const { connection } = yield* row.open()
      // 10 reports 100 ms apart (1 s in all) against a 1.5 s idle timeout: fifteen times the gap,
      // so that a loaded machine's pauses do not end it; longer than the whole call is not needed.
      const result = yield* connection.callTool("slow_progress", { steps: 10, intervalMs: 100 }, { idleTimeout: 1_500 })
      expect(result.isError).toBeUndefined()
    }), 20_000)

  it.scopedLive("the deadline stays the hard cap: reports flow, the deadline fires anyway (no idle reason)", () =>
    Effect.gen(function*() {
      const { connection } = yield* row.open()
      // Reports every 100 ms for 4 s; the deadline (2 s) comes long before; the idle timeout (1 s)
      // only for a pause ten times the gap.
      const { error } = yield* failureOf(
        connection.callTool("slow_progress", { steps: 40, intervalMs: 100 }, { timeout: 2_000, idleTimeout: 1_000 })
      )
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call", limits: { timeoutMs: 2_000, idleTimeoutMs: 1_000 } })
      expect((error as { reason?: string }).reason).toBeUndefined()
      yield* expectReleased(connection)
    }), 20_000)
})

describe.concurrent("progress under TestClock", () => {
  // Virtual time drives the idle timeout and the deadline; the server works in real time.
  it.scoped("the idle timeout fires when virtual time passes it after the last report, and not before", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode: "sse" })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(FetchHttpClient.layer))
      const first = yield* Deferred.make<void>()
      const call = yield* Effect.fork(
        // One report at 50 ms, then silence until the answer, 50 s later in real time: a loaded
        // machine cannot bring the answer before virtual time passes the idle timeout.
        connection.callTool("slow_progress", { steps: 1_000, intervalMs: 50, silentAfter: 1 }, {
          timeout: 60_000,
          idleTimeout: 1_000,
          onProgress: () => Deferred.unsafeDone(first, Effect.void)
        })
      )
      yield* Deferred.await(first)
      yield* TestClock.adjust("900 millis")
      expect(Option.isNone(yield* Fiber.poll(call))).toBe(true)
      yield* TestClock.adjust("100 millis")
      const error = yield* Effect.flip(Fiber.join(call))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", reason: "idle-timeout", limits: { idleTimeoutMs: 1_000 } })
      expect(srv.toolCalls("slow_progress")).toBe(1)
    }), 20_000)

  it.scoped("the deadline fires first when it comes first, whatever the idle timeout", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode: "sse" })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(FetchHttpClient.layer))
      const call = yield* Effect.fork(
        connection.callTool("slow_progress", { steps: 3, intervalMs: 5_000 }, { timeout: 1_000, idleTimeout: 5_000 })
      )
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(call))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", limits: { timeoutMs: 1_000, idleTimeoutMs: 5_000 } })
      expect((error as { reason?: string }).reason).toBeUndefined()
    }), 20_000)
})

describe.concurrent("progress, validation and the Promise API", () => {
  it.scopedLive("an invalid idle timeout or onProgress is refused before any I/O", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode: "sse" })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(FetchHttpClient.layer))
      for (
        const [options, option, reason] of [
          [{ idleTimeout: 0 }, "call.idleTimeout", "not-positive"],
          [{ idleTimeout: Number.POSITIVE_INFINITY }, "call.idleTimeout", "not-finite"],
          [{ onProgress: "yes" as never }, "onProgress", "invalid-value"]
        ] as const
      ) {
        const { error } = yield* failureOf(connection.callTool("slow_progress", {}, options))
        expect(error).toMatchObject({ _tag: "InvalidOption", option, reason, outcome: "not-sent", stage: "call" })
      }
      expect(srv.toolCalls("slow_progress")).toBe(0)
    }))

  it.scopedLive("a callback that throws changes nothing for the call", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode: "sse" })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(FetchHttpClient.layer))
      let calls = 0
      const result = yield* connection.callTool("slow_progress", { steps: 2, intervalMs: 10 }, {
        onProgress: () => {
          calls++
          throw new Error("a caller's bug")
        }
      })
      expect(result.content).toHaveLength(1)
      expect(calls).toBe(2)
    }))

  it.live("callTool(name, args, { onProgress, idleTimeout }) in the Promise API", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true, mode: "sse" })
      const { error, reports } = yield* Effect.promise(async () => {
        const connection = await connect({ url: srv.url, httpClient: Layer.orDie(FetchHttpClient.layer) })
        try {
          const reports: Array<number> = []
          await connection.callTool("slow_progress", { steps: 2, intervalMs: 10 }, { onProgress: (p) => reports.push(p.progress) })
          const error = await connection.callTool("slow_progress", { steps: 3, intervalMs: 300, silentAfter: 1 }, { idleTimeout: 100 })
            .then(() => undefined, (e: unknown) => e)
          return { error, reports }
        } finally {
          await connection.close()
        }
      })
      expect(reports).toEqual([1, 2])
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", reason: "idle-timeout" })
    }).pipe(Effect.scoped))
})
