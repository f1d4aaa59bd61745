/**
 * Release bounds (docs/DESIGN.md, "Release"): closing a connection releases everything it owns
 * (the 2025 session DELETEd, the legacy GET stream closed, the stdio child gone; a stateless
 * HTTP connection holds nothing between requests), a call still in flight fails at once, later
 * calls fail without being sent, and every release step is bounded by `releaseTimeout` even when the server never completes it
 * (`stubbornRelease`, see rows.ts):
 *
 * - Streamable HTTP 2025: a DELETE never answered ends the close at the bound; a
 *   cancellation notice never answered is given up at the bound, its POST closed;
 * - Streamable HTTP 2026: the cancellation is the closed answer stream, nothing is left in the
 *   background (no notice, no DELETE: there is no step to stall);
 * - legacy HTTP+SSE: a cancellation notice never answered is given up at the bound;
 * - stdio: a child that ignores SIGTERM and outlives its stdin is still gone after close, within
 *   the documented shutdown (stdin closed, a wait, SIGTERM, a wait, SIGKILL: each step at most
 *   `releaseTimeout`, about three in all).
 *
 * Timings: a lower bound proves that the bound is what ended the step (the client waited for
 * the server before giving up); the upper bounds are generous (5 s), as this machine may be
 * loaded: they prove the step ended without the server, not how fast.
 *
 * Axes: the HTTP client and the runtime: a DELETE or a notice given up is the HTTP client's
 * abort; a child's shutdown is the runtime's process handling. The stubborn cases wait on the
 * live `releaseTimeout` (500 ms, a few times for a child): that a real bound ends a step the
 * server never completes is the promise itself.
 */
import { Effect, Exit, Fiber, Scope } from "effect"
import { check, checkFields, ContractFailure, expectReleased, failureOf, rejectionOf, summary } from "../assert.js"
import type { Connection } from "../client.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"

/** A deadline no case reaches. */
const LONG_MS = 30_000
/** The release bound of the stubborn cases. */
const RELEASE_MS = 500
/** Timers never fire early, but clocks read in milliseconds round: a small allowance below a bound. */
const BOUND_FLOOR = 0.8
/** Generous upper bound for what must end without the server's help. */
const ENDS_WITHIN_MS = 5_000
/** The call deadline of a call in flight at close: long enough that only the close can end it soon. */
const IN_FLIGHT_DEADLINE_MS = 10_000
/** Sync points: generous waits for what the server must see, not timing claims. */
const SYNC_MS = 15_000

const STALL = { kind: "stall" } as const

/** What a closed connection answers to a call: refused before sending. */
const CLOSED = { _tag: "TransportFailure", reason: "session-closed", outcome: "not-sent" }

/** Waits until the connection holds nothing in the background; returns when that was seen. */
const backgroundEmptied = (connection: Connection) =>
  Effect.promise(async () => {
    const started = Date.now()
    for (;;) {
      const diagnostics = await Effect.runPromise(connection.diagnostics)
      if (diagnostics.background === 0 && diagnostics.pending === 0) return Date.now()
      if (Date.now() - started > SYNC_MS) throw new ContractFailure(`the connection still holds ${JSON.stringify(diagnostics)}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

const wait = <R>(server: Peer<R>, predicate: () => boolean, what: string) => Effect.promise(() => server.waitFor(predicate, what, SYNC_MS))

/** (a) Closing a healthy connection (Effect API): released at the server; later calls are not sent. */
const closedEffect = <R>(row: Row<R>): CaseSpec => ({
  name: `closing a connection releases it (${row.transport === "stdio" ? "the child gone" : "server side"}) and later calls are not sent (Effect API)`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row)
      const scope = yield* Scope.make()
      const connection = yield* server.connect({ timeout: LONG_MS }).pipe(Scope.extend(scope))
      yield* connection.callTool("increment")
      yield* Scope.close(scope, Exit.void)
      yield* Effect.promise(() => server.released(SYNC_MS))
      const after = yield* failureOf(connection.callTool("increment"))
      checkFields(after, CLOSED, "a call after close")
      check(server.counter() === 1, `after close the tool ran ${server.counter()} times, expected once`)
      check(server.calls("tools/call") === 1, `tools/call arrived ${server.calls("tools/call")} times, expected once`)
    }))
})

/** (a) The same through the Promise API: `close()` resolves once released, and is safe twice. */
const closedPromise = <R>(row: Row<R>): CaseSpec => ({
  name: "close() releases the connection, later calls reject without being sent, and a second close() is harmless (Promise API)",
  run: async () => {
    const server = await row.start()
    try {
      const connection = await server.connectPromise({ policy: { timeout: LONG_MS } })
      try {
        await connection.callTool("increment")
      } finally {
        await connection.close()
      }
      await server.released(SYNC_MS)
      checkFields(await rejectionOf(connection.callTool("increment")), CLOSED, "a call after close()")
      await connection.close()
      check(server.counter() === 1, `after close the tool ran ${server.counter()} times, expected once`)
    } finally {
      await server.close()
    }
  }
})

/**
 * (a) Closing a connection with a call in flight: the call is the connection's (its diagnostics
 * count it pending), so the close ends it at once, as a closed session
 * (`TransportFailure`, `session-closed`, outcome `unknown`: it was sent), and its request is
 * released; it is not left to run to its deadline (docs/DESIGN.md, "Release": closing a
 * connection's scope releases everything it owns, bounded in time; docs/GUIDE.md, "Shared streams":
 * when the stream ends, every pending request fails at once). The call's own deadline is long
 * (10 s) so that a call left to it fails this case clearly, and soon.
 */
const closedInFlight = <R>(row: Row<R>): CaseSpec => ({
  name: "closing a connection with a call in flight fails that call at once as session-closed and releases its request",
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site: "call", fault: STALL }] })
      const scope = yield* Scope.make()
      const connection = yield* server.connect({ timeout: LONG_MS, call: { timeout: IN_FLIGHT_DEADLINE_MS } }).pipe(Scope.extend(scope))
      const fiber = yield* Effect.fork(connection.callTool("increment"))
      yield* wait(server, () => server.calls("tools/call") === 1, "tools/call arrived")
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.await(fiber)
      const elapsed = Date.now() - started
      const failure = yield* failureOf(exit)
      check(
        elapsed < ENDS_WITHIN_MS,
        `the call in flight ended ${elapsed} ms after the close (${summary(failure)}): the close left it to its ${IN_FLIGHT_DEADLINE_MS} ms deadline`
      )
      checkFields(failure, { _tag: "TransportFailure", reason: "session-closed", outcome: "unknown" }, "the call in flight at close")
      yield* Effect.promise(() => server.released(SYNC_MS))
      if (!row.sharedStream) yield* wait(server, () => server.abandoned() >= 1, "the call's answer closed by the client")
      check(server.counter() === 1, `the tool ran ${server.counter()} times, expected once`)
    }))
})

/** (b) Streamable HTTP 2025: a DELETE the server never answers ends the close at releaseTimeout. */
const stalledDelete = <R>(row: Row<R>): CaseSpec => ({
  name: `a DELETE the server never answers is given up at releaseTimeout (${RELEASE_MS} ms)`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { stubbornRelease: true })
      const scope = yield* Scope.make()
      yield* server.connect({ timeout: LONG_MS, releaseTimeout: RELEASE_MS }).pipe(Scope.extend(scope))
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = Date.now() - started
      // The DELETE arrived (it is never answered: only the client's bound ended the close).
      yield* Effect.promise(() => server.released(SYNC_MS))
      check(elapsed >= BOUND_FLOOR * RELEASE_MS, `the close took ${elapsed} ms: it did not wait for the DELETE up to releaseTimeout (${RELEASE_MS} ms)`)
      check(elapsed < ENDS_WITHIN_MS, `the close took ${elapsed} ms with releaseTimeout ${RELEASE_MS} ms: the DELETE was not given up`)
      // Given up: the server sees the DELETE closed by the client.
      yield* wait(server, () => server.abandoned() >= 1, "the unanswered DELETE closed by the client")
    }))
})

/**
 * (b) A cancellation notice the server never answers (Streamable HTTP 2025, legacy HTTP+SSE)
 * is given up at releaseTimeout: the connection's background returns to empty after about that
 * long, and the server sees the notice's POST closed by the client.
 */
const stalledNotice = <R>(row: Row<R>): CaseSpec => ({
  name: `a cancellation notice the server never answers is given up at releaseTimeout (${RELEASE_MS} ms)`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { stubbornRelease: true, faults: [{ site: "call", fault: STALL }] })
      const connection = yield* server.connect({ timeout: LONG_MS, releaseTimeout: RELEASE_MS })
      const fiber = yield* Effect.fork(connection.callTool("increment"))
      yield* wait(server, () => server.calls("tools/call") === 1, "tools/call arrived")
      const interrupted = Date.now()
      yield* Fiber.interrupt(fiber)
      yield* wait(server, () => server.calls("notifications/cancelled") === 1, "the cancellation notice arrived")
      const emptied = yield* backgroundEmptied(connection)
      const elapsed = emptied - interrupted
      check(elapsed >= BOUND_FLOOR * RELEASE_MS, `the notice was dropped after ${elapsed} ms, before releaseTimeout (${RELEASE_MS} ms)`)
      check(elapsed < ENDS_WITHIN_MS, `the notice was held ${elapsed} ms with releaseTimeout ${RELEASE_MS} ms`)
      // The notice's POST closed by the client (over Streamable HTTP, the call's answer too).
      const closedAtLeast = row.transport === "streamable-http" ? 2 : 1
      yield* wait(server, () => server.unansweredClosed() >= closedAtLeast, "the unanswered notice's POST closed by the client")
      // The connection goes on: the next call is answered.
      yield* connection.callTool("increment")
      check(server.counter() === 2, `after a next call the tool ran ${server.counter()} times, expected twice`)
    }))
})

/**
 * (b) Streamable HTTP 2026, against the same stubborn server: the cancellation is the closed
 * answer stream, so nothing is left in the background and no notice is sent (a notice would
 * have been answered at once here: an empty background means none is on its way).
 */
const nothingToStall = <R>(row: Row<R>): CaseSpec => ({
  name: "an interrupted call leaves nothing to stall: its answer stream closed, no notice, an empty background",
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { stubbornRelease: true, faults: [{ site: "call", fault: STALL }] })
      const connection = yield* server.connect({ timeout: LONG_MS, releaseTimeout: RELEASE_MS })
      const fiber = yield* Effect.fork(connection.callTool("increment"))
      yield* wait(server, () => server.calls("tools/call") === 1, "tools/call arrived")
      yield* Fiber.interrupt(fiber)
      yield* wait(server, () => server.abandoned() >= 1, "the call's answer stream closed by the client")
      yield* expectReleased(connection)
      check(server.calls("notifications/cancelled") === 0, `${server.calls("notifications/cancelled")} cancellation notices sent over stateless HTTP`)
    }))
})

/** (b) stdio: a child that ignores SIGTERM and outlives its stdin is gone after close, within the documented shutdown. */
const stubbornChild = <R>(row: Row<R>): CaseSpec => ({
  name: `a child that ignores SIGTERM and outlives its stdin is gone after close, within the shutdown's bound (releaseTimeout ${RELEASE_MS} ms)`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { stubbornRelease: true })
      const scope = yield* Scope.make()
      const connection = yield* server.connect({ timeout: LONG_MS, releaseTimeout: RELEASE_MS }).pipe(Scope.extend(scope))
      yield* connection.callTool("increment")
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      const elapsed = Date.now() - started
      // Nothing but the client's SIGKILL ends this child (the peer's own clean-up comes later).
      yield* Effect.promise(() => server.released(SYNC_MS))
      // Two full waits (after stdin closed, after SIGTERM), then SIGKILL: the child was stubborn
      // and the close escalated; about three bounds in all (docs/GUIDE.md, "stdio": "Release").
      check(elapsed >= 2 * BOUND_FLOOR * RELEASE_MS, `the close took ${elapsed} ms: it did not wait after stdin closed and after SIGTERM`)
      check(elapsed < ENDS_WITHIN_MS, `the close took ${elapsed} ms with releaseTimeout ${RELEASE_MS} ms (documented: about ${3 * RELEASE_MS} ms)`)
    }))
})

const stubbornCases = <R>(row: Row<R>): ReadonlyArray<CaseSpec> => {
  switch (row.transport) {
    case "streamable-http":
      return row.era === "handshake" ? [stalledDelete(row), stalledNotice(row)] : [nothingToStall(row)]
    case "legacy-sse":
      // Closing the GET stream is the client's own act: only the notice can be stalled.
      return [stalledNotice(row)]
    case "stdio":
      // A notice is a line written to stdin: only the child's end can be stalled.
      return [stubbornChild(row)]
  }
}

export const release: Family = {
  name: "release bounds",
  dependsOn: ["http-client", "runtime"],
  promise:
    "closing a connection releases what it holds and later calls are not sent; every release step (a DELETE, a cancellation notice, a child's shutdown) is bounded by releaseTimeout even when the server never completes it",
  cases: (row) => [closedEffect(row), closedPromise(row), closedInFlight(row), ...stubbornCases(row)]
}
