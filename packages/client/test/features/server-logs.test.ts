/**
 * Server log messages (docs/DESIGN.md, "Server log messages", "Observation"), end to end against
 * the testkit servers with `features`: `setLogLevel` sends `logging/setLevel` once in the 2025
 * revisions (Streamable HTTP with JSON and SSE answers, legacy HTTP+SSE, stdio) and nothing in
 * 2026-07-28, where the level travels in the `_meta` of later requests and messages come only on
 * a request's own answer stream (Streamable HTTP with SSE answers, stdio); only the messages at or
 * above the level arrive on `logMessages` and the Promise API's `onLogMessage`; an invalid level
 * is refused before any I/O; `logBuffer` keeps the newest messages for a reader that falls
 * behind. Every HTTP row runs through `FetchHttpClient` and undici.
 *
 * The library prints nothing: every test of this file runs with `console` and the process's
 * `stdout` and `stderr` watched, and fails if anything was written there.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule, Stream } from "effect"
import { type MockInstance, vi } from "vitest"
import type { McpClient, McpSchema } from "../../src/index.js"
import { featureRows, type Row } from "../support/featureRows.js"
import { eventually, failureOf } from "../support/harness.js"

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

// 2026-07-28 with JSON answers has no stream to carry a request's messages: not a row here.
// `connect` returns once a 2026-07-28 subscription reached the server: counts of what it received are stable.
const { rows } = featureRows([["handshake", "json"], ["handshake", "sse"], ["stateless", "sse"]], { connectWaitsForSubscription: true })

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

/** Generous: bounds that prove something happened, not how fast. */
const until = (predicate: () => boolean) => eventually(predicate, 10_000)

/**
 * Reads `logMessages` in a fiber of the test's scope, into the array returned. A subscriber sees
 * what arrives after it subscribed, so this returns once the reader is suspended: its first wait
 * is the take from its subscription, which it holds from then on.
 */
const collectLogs = (connection: McpClient.Connection, each: (message: McpSchema.LogMessage) => Effect.Effect<void> = () => Effect.void) =>
  Effect.gen(function*() {
    const seen: Array<McpSchema.LogMessage> = []
    const reader = yield* Effect.forkScoped(
      Stream.runForEach(connection.logMessages, (message) => Effect.zipRight(Effect.sync(() => void seen.push(message)), each(message)))
    )
    yield* untilSuspended(reader)
    return seen
  })

/** Polls the fiber's status until it waits (Suspended); fails after a generous bound. */
const untilSuspended = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
  Fiber.status(fiber).pipe(
    Effect.repeat({ until: (status) => status._tag === "Suspended", schedule: Schedule.spaced("1 millis") }),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the log reader never subscribed") })
  )

const log = (connection: McpClient.Connection, level: McpSchema.LogLevel, message: string, count = 1) => connection.callTool("log", { level, message, count })

const scoped = (name: string, row: Row, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(row.layer)) as Effect.Effect<void, unknown, never>, timeout)

// ---------------------------------------------------------------------------------------------
// The library prints nothing
// ---------------------------------------------------------------------------------------------

let printed: ReadonlyArray<readonly [string, MockInstance]> = []

beforeEach(() => {
  printed = [
    ["console.log", vi.spyOn(console, "log")],
    ["console.info", vi.spyOn(console, "info")],
    ["console.warn", vi.spyOn(console, "warn")],
    ["console.error", vi.spyOn(console, "error")],
    ["console.debug", vi.spyOn(console, "debug")],
    ["console.trace", vi.spyOn(console, "trace")],
    ["process.stderr.write", vi.spyOn(process.stderr, "write")],
    ["process.stdout.write", vi.spyOn(process.stdout, "write")]
  ]
})

afterEach(() => {
  const calls = printed.flatMap(([name, spy]) => spy.mock.calls.map((args) => `${name}: ${String(args[0]).slice(0, 200)}`))
  for (const [, spy] of printed) spy.mockRestore()
  expect(calls).toEqual([])
})

// ---------------------------------------------------------------------------------------------
// Every row
// ---------------------------------------------------------------------------------------------

describe.each(rows.map((row) => [row.name, row] as const))("server log messages, %s", (_, row) => {
  scoped("setLogLevel(warning), then log at info and at error: only the error message arrives", row, () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const seen = yield* collectLogs(connection)
      const before = live.received()
      yield* connection.setLogLevel("warning")
      if (row.era === "handshake") {
        expect(live.rpcCalls("logging/setLevel")).toBe(1)
        expect(live.received()).toBe(before + 1)
      } else {
        // 2026-07-28 deprecated logging/setLevel: nothing is sent now.
        expect(live.rpcCalls("logging/setLevel")).toBe(0)
        expect(live.received()).toBe(before)
      }
      expect((yield* log(connection, "info", "quiet")).content).toEqual([{ type: "text", text: "logged 0" }])
      expect((yield* log(connection, "error", "loud")).content).toEqual([{ type: "text", text: "logged 1" }])
      yield* until(() => seen.length >= 1)
      // The info message was never sent; had it been, it would have come first on its stream.
      expect(seen).toEqual([{ level: "error", logger: "testkit", data: "loud" }])
      expect(live.logMessagesSent()).toBe(1)
      if (row.era === "stateless" && live.metasOf !== undefined) {
        // The level travels in the next requests' _meta.
        expect(live.metasOf("tools/call").map((meta) => meta[LOG_LEVEL_KEY])).toEqual(["warning", "warning"])
      }
      const observed = (yield* connection.observations).filter((o) => o.operation === "logging/setLevel")
      expect(observed.map((o) => [o.stage, o.outcome])).toEqual([["set-log-level", "ok"]])
      if (row.era === "stateless") expect(observed[0]!.bytes).toBe(0)
      else expect(observed[0]!.bytes).toBeGreaterThan(0)
    }))

  scoped("an invalid level: InvalidOption (level) before any I/O; the level in force stays", row, () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      yield* connection.setLogLevel("error")
      const before = live.received()
      for (const level of ["loud", "", "WARNING", 3, undefined]) {
        const { error } = yield* failureOf(connection.setLogLevel(level as never))
        expect(error).toMatchObject({
          _tag: "InvalidOption",
          option: "level",
          stage: "set-log-level",
          phase: "call",
          outcome: "not-sent",
          retryable: false
        })
      }
      expect(live.received()).toBe(before)
      expect(live.rpcCalls("logging/setLevel")).toBe(row.era === "handshake" ? 1 : 0)
      // Still "error": a warning is not sent.
      expect((yield* log(connection, "warning", "not wanted")).content).toEqual([{ type: "text", text: "logged 0" }])
    }))

  scoped("a flood of log messages reaches a reader and prints nothing", row, () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ logBuffer: 2_000 })
      const seen = yield* collectLogs(connection)
      yield* connection.setLogLevel("debug")
      yield* log(connection, "emergency", "\u001b[31mred\u001b[0m and a bell \u0007", 3)
      yield* connection.callTool("flood_notifications", { count: 500, bytes: 100 })
      // The flood goes to every listener (in 2026-07-28 on the subscription, where a server must
      // not send log messages): the connection takes them whatever stream brought them.
      yield* until(() => seen.length >= 503)
      expect(seen.slice(0, 3).map((m) => m.level)).toEqual(["emergency", "emergency", "emergency"])
      // A call afterwards works.
      expect((yield* connection.callTool("echo", { text: "after" })).content).toEqual([{ type: "text", text: "after" }])
    }))

  scoped("the Promise API's onLogMessage gets the messages at or above the level", row, () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const seen: Array<McpSchema.LogMessage> = []
      const connection = yield* Effect.promise(() => live.promise({ onLogMessage: (message) => void seen.push(message) }))
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      // The callback's reader subscribes in the background: a first message that reached the
      // callback shows it in place (one it missed would fail this wait).
      yield* Effect.promise(async () => {
        await connection.setLogLevel("warning")
        await connection.callTool("log", { level: "critical", message: "reader in place" })
      })
      yield* until(() => seen.length >= 1)
      yield* Effect.promise(async () => {
        await connection.callTool("log", { level: "info", message: "quiet" })
        await connection.callTool("log", { level: "critical", message: "loud" })
        await expect(connection.setLogLevel("loud" as never)).rejects.toMatchObject({ _tag: "InvalidOption", option: "level" })
      })
      yield* until(() => seen.length >= 2)
      // The info message was never sent; had it been, it would have come before "loud".
      expect(seen).toEqual([
        { level: "critical", logger: "testkit", data: "reader in place" },
        { level: "critical", logger: "testkit", data: "loud" }
      ])
      expect(live.rpcCalls("logging/setLevel")).toBe(row.era === "handshake" ? 1 : 0)
    }))
})

// ---------------------------------------------------------------------------------------------
// logBuffer: a reader that falls behind loses the oldest
// ---------------------------------------------------------------------------------------------

describe.each(rows.filter((row) => row.inOrder).map((row) => [row.name, row] as const))("logBuffer, %s", (_, row) => {
  scoped("logBuffer 3: a reader that falls behind gets the newest 3, never blocks a stream", row, () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ logBuffer: 3 })
      yield* connection.setLogLevel("debug")
      const gate = yield* Deferred.make<void>()
      // The reader takes the first message, then stops at the gate until the test opens it.
      const seen = yield* collectLogs(connection, (message) => message.data === "first" ? Deferred.await(gate) : Effect.void)
      yield* log(connection, "error", "first")
      yield* until(() => seen.length === 1)
      // Ten messages while it is stopped; each arrives before its call's answer, on the same stream.
      for (let i = 1; i <= 10; i++) yield* log(connection, "error", `m${i}`)
      yield* Deferred.succeed(gate, undefined)
      yield* until(() => seen.length >= 4)
      yield* log(connection, "error", "last")
      yield* until(() => seen.some((m) => m.data === "last"))
      expect(seen.map((m) => m.data)).toEqual(["first", "m8", "m9", "m10", "last"])
      expect(live.logMessagesSent()).toBe(12)
    }))
})

// ---------------------------------------------------------------------------------------------
// 2026-07-28: the level is per request
// ---------------------------------------------------------------------------------------------

describe.each(rows.filter((row) => row.era === "stateless").map((row) => [row.name, row] as const))(
  "the log level in 2026-07-28, %s",
  (_, row) => {
    scoped("without a level no message is sent; once set, messages come on the call's own answer stream", row, () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        const seen = yield* collectLogs(connection)
        expect((yield* log(connection, "emergency", "unasked")).content).toEqual([{ type: "text", text: "logged 0" }])
        expect(live.logMessagesSent()).toBe(0)
        yield* connection.setLogLevel("info")
        expect((yield* log(connection, "info", "asked")).content).toEqual([{ type: "text", text: "logged 1" }])
        // On the call's own answer stream, before its answer.
        yield* until(() => seen.length >= 1)
        expect(seen).toEqual([{ level: "info", logger: "testkit", data: "asked" }])
        if (live.metasOf !== undefined) {
          expect(live.metasOf("tools/call").map((meta) => meta[LOG_LEVEL_KEY])).toEqual([undefined, "info"])
        }
      }))
  }
)

describe.each(rows.filter((row) => row.era === "stateless" && row.transport === "streamable-http").map((row) => [row.name, row] as const))(
  "the log level in every later request, %s",
  (_, row) => {
    scoped("tools/call, resources/read and prompts/get carry it", row, () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        yield* connection.setLogLevel("notice")
        yield* connection.callTool("echo", { text: "x" })
        yield* connection.readResource("test://docs/1")
        yield* connection.getPrompt("plain")
        for (const method of ["tools/call", "resources/read", "prompts/get"]) {
          expect(live.metasOf!(method).map((meta) => meta[LOG_LEVEL_KEY]), method).toEqual(["notice"])
        }
      }))

    // docs/DESIGN.md, "Server log messages": in 2026-07-28 "the level travels in each later
    // request's `_meta`", listings and the liveness check included.
    scoped("listings and ping carry it too", row, () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        yield* connection.setLogLevel("notice")
        yield* connection.listResources()
        yield* connection.listResourceTemplates()
        yield* connection.listPrompts()
        yield* connection.listTools
        yield* connection.ping
        for (const method of ["resources/list", "resources/templates/list", "prompts/list"]) {
          expect(live.metasOf!(method).map((meta) => meta[LOG_LEVEL_KEY]), method).toEqual(["notice"])
        }
        // The first of each was discovery's, before any level was set.
        expect(live.metasOf!("tools/list").map((meta) => meta[LOG_LEVEL_KEY]), "tools/list").toEqual([undefined, "notice"])
        expect(live.metasOf!("server/discover").map((meta) => meta[LOG_LEVEL_KEY]), "server/discover").toEqual([undefined, "notice"])
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// Before any I/O, even when the session must be renewed (Streamable HTTP 2025)
// ---------------------------------------------------------------------------------------------

describe.each(rows.filter((row) => row.transport === "streamable-http" && row.era === "handshake").map((row) => [row.name, row] as const))(
  "an invalid level on a lost session, %s",
  (_, row) => {
    // "Everything is validated before any I/O" (docs/DESIGN.md, "Phases and budgets").

    scoped("is refused without starting a new session", row, () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        live.expireSession!()
        yield* failureOf(connection.callTool("echo", { text: "lost" }))
        expect(live.rpcCalls("initialize")).toBe(1)
        const { error } = yield* failureOf(connection.setLogLevel("loud" as never))
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "level", outcome: "not-sent" })
        expect(live.rpcCalls("initialize")).toBe(1)
        expect(yield* connection.sessions).toBe(1)
      }))
  }
)

describe.each(rows.filter((row) => row.transport === "streamable-http" && row.era === "handshake").map((row) => [row.name, row] as const))(
  "the log level on a new session, %s",
  (_, row) => {
    scoped("a session the server forgot is replaced by one that is asked for the same level", row, () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        const seen = yield* collectLogs(connection)
        yield* connection.setLogLevel("error")
        live.expireSession!()
        yield* failureOf(connection.callTool("echo", { text: "lost" }))
        // The next call runs on a new session, which was asked for "error" during its discovery.
        expect((yield* log(connection, "warning", "quiet")).content).toEqual([{ type: "text", text: "logged 0" }])
        expect(yield* connection.sessions).toBe(2)
        expect(live.rpcCalls("logging/setLevel")).toBe(2)
        expect((yield* log(connection, "critical", "loud")).content).toEqual([{ type: "text", text: "logged 1" }])
        yield* until(() => seen.length >= 1)
        expect(seen.map((m) => m.data)).toEqual(["loud"])
      }))
  }
)
