/**
 * Live tool lists (docs/DESIGN.md, "Notifications", "Live tool lists", "Bytes"), end to end
 * against the testkit servers with `features`: a change the server announces (after a
 * `change_tools` call, or on its own) reaches `toolList.changes`, `connection.tools` and the
 * Promise API's `onToolsChanged`, on every row (Streamable HTTP 2025 with JSON and SSE answers
 * and its standalone GET stream, Streamable HTTP 2026-07-28 with `subscriptions/listen`, legacy
 * HTTP+SSE, stdio in both eras; every HTTP row through `FetchHttpClient` and undici). The relist
 * is debounced, floods and oversized unsolicited frames do not break the connection, a failing
 * relist leaves the tools as they were, and nothing is listed once the connection is closed.
 *
 * Absence ("no more listing", "no new subscription") is never waited out: those tests run under
 * `TestClock`, move it past every delay that could be due, and look at what a woken listing or
 * subscription would have left (a pending request, a request the server counted, an observation).
 */
import { describe, expect, it } from "@effect/vitest"
import diagnostics from "node:diagnostics_channel"
import { Effect, Exit, Fiber, Scope, Stream, TestClock } from "effect"
import type { McpClient, McpSchema } from "../../src/index.js"
import { featureRows, type Live, type Row } from "../support/featureRows.js"
import { eventually, failureOf } from "../support/harness.js"

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

/** Generous: bounds that prove something happened, not how fast. */
const WAIT_MS = 10_000

const until = (predicate: () => boolean) => eventually(predicate, WAIT_MS)
/**
 * The flood is 1,000 writes, one event-loop turn each, read by a client in the same process: a
 * loaded machine (two test workers on two cores, and more) has taken over 10 s. Proof, not pace.
 */
const FLOOD_WAIT_MS = 60_000

// The tests wait for the stream or subscription themselves (`live.listening`).
const { httpRows, rows, stdioRows } = featureRows(
  [["handshake", "json"], ["handshake", "sse"], ["stateless", "sse"], ["stateless", "json"]],
  { connectWaitsForSubscription: false }
)

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const names = (tools: ReadonlyArray<McpSchema.Tool>) => tools.map((tool) => tool.name)

const textOf = (result: McpSchema.CallToolResult) => result.content.map((c) => (c as { text?: string }).text ?? "").join("")

/** Collects every list `toolList.changes` emits (names only), from its first (the current list). */
const watchTools = (connection: McpClient.Connection) =>
  Effect.gen(function*() {
    const lists: Array<ReadonlyArray<string>> = []
    yield* Effect.forkScoped(Stream.runForEach(connection.toolList.changes, (tools) => Effect.sync(() => void lists.push(names(tools)))))
    yield* until(() => lists.length >= 1)
    return lists
  })

/** The outcomes of the connection's relists (`tools/list` observations), read synchronously. */
const listings = (connection: McpClient.Connection) => Effect.runSync(connection.observations).filter((o) => o.operation === "tools/list")

/** The server announces a change on its own where it can, else through a `change_tools` call. */
const announce = (live: Live, connection: McpClient.Connection, count = 1) =>
  live.server !== undefined
    ? Effect.sync(() => void live.server!.changeTools(count))
    : Effect.asVoid(connection.callTool("change_tools", { count }))

/** `diagnostics` at rest: nothing pending; a 2026-07-28 subscription is a standing request. */
const atRest = (row: Row) => ({ pending: 0, standing: row.era === "stateless" ? 1 : 0, background: 0 })

const scoped = (row: Row, name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(row.layer)) as Effect.Effect<void, unknown, never>, timeout)

/**
 * Under `TestClock`: what the connection waits for on its clock (the relist delay, a new
 * subscription's delay) happens only when the test moves it, so that "not yet" and "never" are
 * points the test chooses, not sleeps. The servers and the waits of `until` are in real time.
 */
const onTestClock = (row: Row, name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scoped(name, () => body().pipe(Effect.provide(row.layer)) as Effect.Effect<void, unknown, never>, timeout)

/**
 * Returns once the client has handled every notification the server sent it so far: something
 * the same stream carries after them has arrived. On stdout and the legacy GET stream, a call's
 * answer; on a Streamable HTTP GET stream or subscription, a log message of the server's (sent
 * again at each poll until one is seen: a reader sees only what comes after it subscribed).
 */
const heardSoFar = (row: Row, live: Live, connection: McpClient.Connection) =>
  row.transport !== "streamable-http"
    ? Effect.asVoid(connection.callTool("echo", { text: "marker" }))
    : Effect.gen(function*() {
      let heard = false
      const reader = yield* Effect.fork(Stream.runForEach(connection.logMessages, () => Effect.sync(() => void (heard = true))))
      yield* until(() => {
        if (!heard) live.server!.floodNotifications(1, 8)
        return heard
      })
      yield* Fiber.interrupt(reader)
    })

/**
 * After the clock was moved past everything due: no listing beyond `listed` was started. One
 * woken by the move is in flight (`pending`) or has reached the server by now; one that ran to
 * its end was observed.
 */
const noListingBeyond = (live: Live, connection: McpClient.Connection, listed: number, observed: number) =>
  Effect.gen(function*() {
    expect((yield* connection.diagnostics).pending).toBe(0)
    expect(live.rpcCalls("tools/list")).toBe(listed)
    expect(listings(connection)).toHaveLength(observed)
  })

// ---------------------------------------------------------------------------------------------
// Every row
// ---------------------------------------------------------------------------------------------

describe.concurrent.each(rows.map((row) => [row.name, row] as const))("live tool lists, %s", (_, row) => {
  scoped(row, "a change after change_tools, then one the server makes on its own, reach toolList.changes and tools", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ relistDelay: 50 })
      yield* live.listening
      const before = names(connection.tools)
      expect(before).toContain("change_tools")
      const lists = yield* watchTools(connection)
      // The current list first.
      expect(lists[0]).toEqual(before)

      expect(textOf(yield* connection.callTool("change_tools", { count: 1 }))).toBe("added 1")
      yield* until(() => lists.some((list) => list.includes("added_1")))
      expect(names(connection.tools)).toEqual([...before, "added_1"])
      expect(yield* Effect.map(connection.toolList.get, names)).toEqual([...before, "added_1"])
      // The new tool is callable: the call checks it against the new listing.
      expect(textOf(yield* connection.callTool("added_1", { text: "hi" }))).toBe("hi")

      if (live.server !== undefined) {
        expect(live.server.changeTools(2)).toBe(1)
        yield* until(() => lists.some((list) => list.includes("added_3")))
        expect(names(connection.tools)).toEqual([...before, "added_1", "added_2", "added_3"])
      }
      // Each list emitted differs from the one before it.
      for (let i = 1; i < lists.length; i++) expect(lists[i]).not.toEqual(lists[i - 1])
      expect(live.toolCalls("change_tools")).toBe(1)
      expect(listings(connection).every((o) => o.stage === "list-tools" && o.outcome === "ok")).toBe(true)
      expect(listings(connection).length).toBeGreaterThanOrEqual(live.server === undefined ? 1 : 2)
    }))

  onTestClock(row, "debounced: 5 changes heard within the relist delay cost exactly 1 tools/list request, and nothing after it", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ relistDelay: 100 })
      yield* live.listening
      const discoveryListings = live.rpcCalls("tools/list")
      expect(discoveryListings).toBe(1)
      if (live.server !== undefined) {
        for (let i = 0; i < 5; i++) live.server.changeTools(1)
      } else {
        // Five calls at once: each announces its change right after its answer.
        yield* Effect.all(Array.from({ length: 5 }, () => connection.callTool("change_tools", { count: 1 })), {
          concurrency: "unbounded"
        })
      }
      yield* heardSoFar(row, live, connection)
      // All five heard, the clock still: the relist waits out its delay.
      expect(live.listChangedSent()).toBe(5)
      expect(live.rpcCalls("tools/list")).toBe(discoveryListings)
      yield* TestClock.adjust("100 millis")
      yield* until(() => names(connection.tools).includes("added_5"))
      expect(live.rpcCalls("tools/list")).toBe(discoveryListings + 1)
      // Past any further relist delay: nothing more was due (no change came during the listing).
      yield* TestClock.adjust("1 second")
      yield* noListingBeyond(live, connection, discoveryListings + 1, 1)
      expect(listings(connection).map((o) => o.outcome)).toEqual(["ok"])
    }))

  scoped(row, "a flood of 1,000 unsolicited notifications does not break the connection", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ relistDelay: 50 })
      yield* live.listening
      const dropped = (yield* connection.diagnostics).droppedFrames
      if (live.server !== undefined) live.server.floodNotifications(1_000, 100)
      else yield* connection.callTool("flood_notifications", { count: 1_000, bytes: 100 })
      yield* eventually(() => live.logMessagesSent() >= 1_000, FLOOD_WAIT_MS)
      // A call afterwards works, and a change afterwards is still heard: no reader is stuck.
      expect(textOf(yield* connection.callTool("echo", { text: "after the flood" }))).toBe("after the flood")
      yield* connection.callTool("change_tools", { count: 1 })
      yield* eventually(() => names(connection.tools).includes("added_1"), FLOOD_WAIT_MS)
      const diagnostics = yield* connection.diagnostics
      expect(diagnostics).toMatchObject(atRest(row))
      // Valid log messages: none of them is a dropped frame.
      expect(diagnostics.droppedFrames).toBe(dropped)
      expect(yield* connection.sessions).toBe(1)
    }), 3 * FLOOD_WAIT_MS)

  scoped(row, "the Promise API calls onToolsChanged once per new list; tools reflects it", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const seen: Array<ReadonlyArray<string>> = []
      const connection = yield* Effect.promise(() => live.promise({ policy: { relistDelay: 50 }, onToolsChanged: (tools) => void seen.push(names(tools)) }))
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      yield* live.listening
      const before = names(connection.tools)
      yield* Effect.promise(() => connection.callTool("change_tools", { count: 1 }))
      yield* until(() => seen.length >= 1)
      expect(seen[0]).toEqual([...before, "added_1"])
      expect(names(connection.tools)).toEqual(seen[0])
      if (live.server !== undefined) {
        live.server.changeTools(1)
        yield* until(() => seen.length >= 2)
        expect(seen[1]).toEqual([...before, "added_1", "added_2"])
      }
      // An explicit listing that finds the same list is no new list.
      const count = seen.length
      expect(names(yield* Effect.promise(() => connection.listTools()))).toEqual(seen[count - 1])
      // The next announcement proves nothing was still due: it is the next one seen.
      yield* Effect.promise(() => connection.callTool("change_tools", { count: 1 }))
      yield* until(() => seen.length > count)
      expect(seen).toHaveLength(count + 1)
      expect(seen[count]).toContain(`added_${live.server === undefined ? 2 : 3}`)
    }))
})

// ---------------------------------------------------------------------------------------------
// Oversized unsolicited frames (docs/DESIGN.md, "Bytes"), per transport
// ---------------------------------------------------------------------------------------------

const oversized = { unsolicited: { maxBytes: 65_536 } } as const

describe.concurrent.each(httpRows.filter((row) => row.transport === "streamable-http" && row.era === "handshake").map((r) => [r.name, r] as const))(
  "an unsolicited frame past unsolicited.maxBytes, %s",
  (_, row) => {
    scoped(row, "ends only the standalone GET stream: the session and its calls go on", () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect({ ...oversized, relistDelay: 50 })
        yield* live.listening
        live.server!.floodNotifications(1, 2_000_000)
        // The client gave the stream up (the server sees it closed).
        yield* until(() => live.server!.listChangedListeners() === 0)
        expect(textOf(yield* connection.callTool("echo", { text: "still here" }))).toBe("still here")
        expect(yield* connection.sessions).toBe(1)
        expect(yield* connection.diagnostics).toMatchObject({ pending: 0, background: 0 })
      }))
  }
)

describe.concurrent.each(httpRows.filter((row) => row.transport === "streamable-http" && row.era === "stateless").map((r) => [r.name, r] as const))(
  "an unsolicited frame past unsolicited.maxBytes, %s",
  (_, row) => {
    scoped(row, "ends only that subscription, which is made again (and the tools listed again); calls go on", () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect({ ...oversized, relistDelay: 50 })
        yield* live.listening
        const listed = live.rpcCalls("tools/list")
        live.server!.floodNotifications(1, 2_000_000)
        expect(textOf(yield* connection.callTool("echo", { text: "still here" }))).toBe("still here")
        // The client closed the subscription, subscribes again after a second, and lists the
        // tools again (changes may have been missed meanwhile).
        yield* until(() => live.subscriptionsClosed() === 1)
        yield* until(() => live.rpcCalls("subscriptions/listen") === 2 && live.server!.listChangedListeners() === 1)
        yield* until(() => live.rpcCalls("tools/list") === listed + 1)
        // And it hears changes again.
        live.server!.changeTools(1)
        yield* until(() => names(connection.tools).includes("added_1"))
        expect(yield* connection.diagnostics).toMatchObject({ pending: 0, standing: 1, background: 0 })
      }))
  }
)

describe.concurrent.each(httpRows.filter((row) => row.transport === "sse").map((r) => [r.name, r] as const))(
  "an unsolicited frame past unsolicited.maxBytes, %s (a shared stream)",
  (_, row) => {
    scoped(row, "with no request pending: the GET stream is given up; the next call runs on a new session", () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect({ ...oversized, relistDelay: 50 })
        yield* live.listening
        live.server!.floodNotifications(1, 2_000_000)
        yield* until(() => live.server!.closedStreams!() === 1)
        expect(textOf(yield* connection.callTool("echo", { text: "new session" }))).toBe("new session")
        expect(yield* connection.sessions).toBe(2)
        expect(live.rpcCalls("initialize")).toBe(2)
        expect(yield* connection.diagnostics).toMatchObject({ pending: 0, background: 0 })
      }))

    scoped(row, "while a call with a larger ceiling is pending: the complete frame is dropped and counted; the call succeeds", () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect({ ...oversized, relistDelay: 50 })
        yield* live.listening
        const slow = yield* Effect.fork(connection.callTool("slow_progress", { steps: 1, intervalMs: 800 }))
        yield* until(() => live.toolCalls("slow_progress") === 1)
        live.server!.floodNotifications(1, 2_000_000)
        expect(textOf(yield* Fiber.join(slow))).toBe("done")
        expect((yield* connection.diagnostics).droppedFrames).toBe(1)
        expect(textOf(yield* connection.callTool("echo", { text: "same session" }))).toBe("same session")
        expect(yield* connection.sessions).toBe(1)
        expect(live.server!.closedStreams!()).toBe(0)
      }))
  }
)

describe.concurrent.each(stdioRows.map((r) => [r.name, r] as const))("an unsolicited frame past unsolicited.maxBytes, %s (a shared stream)", (_, row) => {
  scoped(
    row,
    "read with nothing pending, a frame past the bound gives up stdout: the child is released, the next call fails at once",
    () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        // Short release steps: a child blocked writing the rest of a frame nobody reads any more
        // goes through every step of the shutdown (stdin closed, SIGTERM, SIGKILL).
        const connection = yield* live.connect({ ...oversized, relistDelay: 50, releaseTimeout: 500 })
        yield* live.listening
        // Two frames follow the answer on the same stdout. The first may still be read before the
        // call's own request is forgotten, under that request's larger bound (then it is complete,
        // unsolicited, dropped and counted: the case below). The second starts 2 MB after the
        // answer, when nothing is pending: past its bound, the stream is given up.
        expect(textOf(yield* connection.callTool("flood_notifications", { count: 2, bytes: 2_000_000 }))).toBe("flooding 2")
        yield* until(() => !live.alive!())
        const { error } = yield* failureOf(connection.callTool("echo", { text: "after" }))
        expect(error).toMatchObject({ _tag: "TransportFailure", stage: "call", outcome: "not-sent" })
        expect(yield* connection.diagnostics).toMatchObject({ pending: 0, standing: 0 })
        expect((yield* connection.diagnostics).droppedFrames).toBeLessThanOrEqual(1)
        expect(live.rpcCalls("tools/call")).toBe(1)
      })
  )

  scoped(row, "while a call with a larger ceiling is pending: the complete frame is dropped and counted; the call succeeds", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ ...oversized, relistDelay: 50 })
      yield* live.listening
      const slow = yield* Effect.fork(connection.callTool("slow_progress", { steps: 1, intervalMs: 800 }))
      yield* until(() => live.toolCalls("slow_progress") === 1)
      expect(textOf(yield* connection.callTool("flood_notifications", { count: 1, bytes: 2_000_000 }))).toBe("flooding 1")
      expect(textOf(yield* Fiber.join(slow))).toBe("done")
      expect((yield* connection.diagnostics).droppedFrames).toBe(1)
      expect(textOf(yield* connection.callTool("echo", { text: "still here" }))).toBe("still here")
    }))
})

// ---------------------------------------------------------------------------------------------
// 2026-07-28: the subscription's life
// ---------------------------------------------------------------------------------------------

describe.concurrent.each(httpRows.filter((row) => row.era === "stateless").map((r) => [r.name, r] as const))("the subscription, %s", (_, row) => {
  scoped(row, "is open after connect; closing the connection closes it", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const scope = yield* Scope.make()
      yield* live.connect().pipe(Scope.extend(scope))
      yield* until(() => live.server!.listChangedListeners() === 1)
      expect(live.rpcCalls("subscriptions/listen")).toBe(1)
      expect(live.subscriptionsClosed()).toBe(0)
      yield* Scope.close(scope, Exit.void)
      yield* until(() => live.subscriptionsClosed() === 1)
      expect(live.server!.listChangedListeners()).toBe(0)
    }))
})

/**
 * The subscription requests this thread's HTTP clients create (undici publishes each request it
 * creates, `fetch`'s included), from the `Mcp-Method` header of each.
 */
const listenRequestsCreated = Effect.acquireRelease(
  Effect.sync(() => {
    let created = 0
    const onCreate = (message: unknown) => {
      const headers = (message as { readonly request: { readonly headers: unknown } }).request.headers
      const lines = Array.isArray(headers) ? headers.map(String) : String(headers).split("\r\n")
      if (lines.some((line) => /^subscriptions\/listen$|^mcp-method: subscriptions\/listen$/i.test(line))) created++
    }
    diagnostics.subscribe("undici:request:create", onCreate)
    return { created: () => created, stop: () => diagnostics.unsubscribe("undici:request:create", onCreate) }
  }),
  (watch) => Effect.sync(watch.stop)
)

// One row at a time: the requests are counted across the thread.
describe.each(httpRows.filter((row) => row.era === "stateless").map((r) => [r.name, r] as const))("the subscription, %s", (_, row) => {
  scoped(row, "is not sent by a connection closed as soon as it is handed back", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const listens = yield* listenRequestsCreated
      const closedAtOnce = yield* Scope.make()
      yield* live.connect().pipe(Scope.extend(closedAtOnce))
      yield* Scope.close(closedAtOnce, Exit.void)
      // The next connection's subscription is the first request of its kind.
      const scope = yield* Scope.make()
      yield* live.connect().pipe(Scope.extend(scope))
      yield* until(() => live.server!.listChangedListeners() === 1)
      expect(listens.created()).toBe(1)
      expect(live.rpcCalls("subscriptions/listen")).toBe(1)
      yield* Scope.close(scope, Exit.void)
    }))
})

// The subscription is an SSE stream whatever the answer mode: its graceful end is shown on the
// SSE rows (one per HTTP client).
describe.concurrent.each(
  httpRows.filter((row) => row.era === "stateless" && row.name.includes(" sse,")).map((r) => [r.name, r] as const)
)("the subscription, %s", (_, row) => {
  onTestClock(row, "ended by the server gracefully: the client does not subscribe again; calls go on", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      yield* live.listening
      expect(live.server!.endSubscriptions!()).toBe(1)
      yield* until(() => live.server!.listChangedListeners() === 0)
      // The client has taken the end in: its standing request is over.
      yield* until(() => Effect.runSync(connection.diagnostics).standing === 0)
      // Past every delay before subscribing again (1 s, 2 s, ... at most 30 s), then a later exchange.
      yield* TestClock.adjust("1 minute")
      expect(textOf(yield* connection.callTool("echo", { text: "later" }))).toBe("later")
      expect(live.rpcCalls("subscriptions/listen")).toBe(1)
      expect(live.server!.listChangedListeners()).toBe(0)
      // The server ended it: the client closed nothing.
      expect(live.subscriptionsClosed()).toBe(0)
      expect(textOf(yield* connection.callTool("echo", { text: "on" }))).toBe("on")
      expect(yield* connection.diagnostics).toMatchObject({ pending: 0, standing: 0, background: 0 })
    }))
})

describe.concurrent("the subscription, stdio stateless (2026-07-28)", () => {
  const row = stdioRows[1]!
  scoped(row, "is open after connect; closing the connection ends it with a cancellation notice", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const scope = yield* Scope.make()
      yield* live.connect().pipe(Scope.extend(scope))
      yield* live.listening
      expect(live.subscriptionsClosed()).toBe(0)
      yield* Scope.close(scope, Exit.void)
      yield* until(() => live.subscriptionsClosed() === 1)
    }))
})

// ---------------------------------------------------------------------------------------------
// A failing relist (HTTP rows: faults scripted after connect)
// ---------------------------------------------------------------------------------------------

describe.concurrent.each(httpRows.map((r) => [r.name, r] as const))("a relist that fails, %s", (_, row) => {
  scoped(row, "leaves the tools as they were and is observed with its error; the next change lists them", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect({ relistDelay: 50 })
      yield* live.listening
      const lists = yield* watchTools(connection)
      const before = names(connection.tools)
      live.server!.script({ on: "tools/list", kind: "jsonrpc-error", code: -32603, message: "listing refused" })
      live.server!.changeTools(1)
      yield* until(() => listings(connection).length === 1)
      expect(listings(connection).map((o) => [o.operation, o.stage, o.outcome])).toEqual([["tools/list", "list-tools", "RemoteRefusal"]])
      expect(names(connection.tools)).toEqual(before)
      expect(lists).toEqual([before])
      // The next change is listed: both tools.
      live.server!.changeTools(1)
      yield* until(() => names(connection.tools).includes("added_2"))
      expect(names(connection.tools)).toEqual([...before, "added_1", "added_2"])
      expect(listings(connection).map((o) => o.outcome)).toEqual(["RemoteRefusal", "ok"])
      expect(lists).toEqual([before, [...before, "added_1", "added_2"]])
    }))
})

// ---------------------------------------------------------------------------------------------
// Nothing is listed after the connection closed
// ---------------------------------------------------------------------------------------------

const closeRows = [
  ...httpRows.filter((row) => row.name.endsWith("FetchHttpClient")),
  ...stdioRows
].map((r) => [r.name, r] as const)

describe.concurrent.each(closeRows)("after close, %s", (_, row) => {
  onTestClock(row, "a change announced before the close is never listed (Effect API)", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const scope = yield* Scope.make()
      const connection = yield* live.connect({ relistDelay: 400 }).pipe(Scope.extend(scope))
      yield* live.listening
      const listed = live.rpcCalls("tools/list")
      yield* announce(live, connection)
      // Heard, and its relist waits for the delay on a clock that stands still.
      yield* heardSoFar(row, live, connection)
      expect(live.listChangedSent()).toBe(1)
      yield* Scope.close(scope, Exit.void)
      // Past the relist delay: a listing still due would be woken, and in flight or sent now.
      yield* TestClock.adjust("1 second")
      yield* noListingBeyond(live, connection, listed, 0)
      const { error } = yield* failureOf(connection.listTools)
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", outcome: "not-sent" })
      expect(live.rpcCalls("tools/list")).toBe(listed)
    }))

  scoped(row, "a change announced before close() is never listed, onToolsChanged never called (Promise API)", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const seen: Array<ReadonlyArray<string>> = []
      const connection = yield* Effect.promise(() =>
        // A long delay: never waited out, it keeps the relist waiting until well after the close.
        live.promise({ policy: { relistDelay: 5_000 }, onToolsChanged: (tools) => void seen.push(names(tools)) })
      )
      yield* live.listening
      const listed = live.rpcCalls("tools/list")
      if (live.server !== undefined) live.server.changeTools(1)
      else yield* Effect.promise(() => connection.callTool("change_tools", { count: 1 }))
      // Heard: its relist waits for the delay (on the Promise API's own, live clock).
      yield* heardSoFar(row, live, connection.effect)
      expect(live.listChangedSent()).toBe(1)
      yield* Effect.promise(() => connection.close())
      expect(live.rpcCalls("tools/list")).toBe(listed)
      // A relist is a listing, and every listing after close is refused before any I/O: the one
      // still due can neither reach the server nor give onToolsChanged a list.
      const refused = yield* Effect.promise(() => connection.listTools().then(() => undefined, (e: unknown) => e))
      expect(refused).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", outcome: "not-sent" })
      expect(yield* connection.effect.diagnostics).toMatchObject({ pending: 0 })
      expect(live.rpcCalls("tools/list")).toBe(listed)
      expect(seen).toEqual([])
    }))
})
