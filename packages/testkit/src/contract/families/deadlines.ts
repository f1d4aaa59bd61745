/**
 * Deadlines under Effect's `TestClock` (docs/DESIGN.md, "Deadlines"): under any clock but the
 * live one a deadline is `Effect.timeoutFail`, so virtual time drives it. In both phases, with a
 * stall: the request reaches the server (a real-time sync point), the clock is moved to one
 * millisecond short of the timeout and the operation must still be running, then the last
 * millisecond ends it with `DeadlineExceeded`, `limits.timeoutMs` the timeout and the right phase.
 * The timeout is a virtual 30 s: no real time of that order passes, so only the `TestClock` can
 * have ended the operation.
 *
 * The discovery's deadline counts from the connect's start, whatever negotiation does: the
 * earlier steps (the stateless probe, `initialize`, the 2025 standalone GET, a child's start) take
 * real time, which the `TestClock` does not see, so the case moves the clock by hand once the
 * first request has arrived (`EARLY`), and the deadline must fall `EARLY` sooner after
 * `tools/list`. A call's deadline is its own: virtual time spent before the call does not count.
 *
 * What else reads the clock during these cases, and why every row still works under it:
 * - the stdio stateless probe's wait (at most 5 s or half the discovery timeout): the 2025 child
 *   refuses `server/discover` at once (-32601), the 2026 child answers it, so that wait never
 *   has to elapse;
 * - the 2025 standalone GET's wait for its headers (the release timeout): the server answers it
 *   at once;
 * - release steps bounded by the release timeout (a cancellation notice, the DELETE of a failed
 *   discovery's session, a child's stdin close, SIGTERM, SIGKILL): each finishes on its own (the
 *   servers answer, the child exits when its stdin closes), so none waits for virtual time. The
 *   connection opened for the call is released when the row's scope closes, after this program
 *   and its `TestContext` are gone, under the live clock.
 * No row is left out.
 *
 * One millisecond short of the deadline the operation must still be running. That absence is
 * checked at an observable later event, not after a pause: another exchange with the same server
 * through the same client (for a call, another call on its connection; for a discovery, a second
 * connection's whole discovery, of a healthy child on stdio) has been answered, and a deadline that fired during the clock's
 * move would have ended the operation by then (`stillRunningAfter`).
 *
 * Live-timer cases (the one promise about real time: the runtime's timers meet the deadline)
 * keep only generous bounds: a stall under a real 1 s deadline fails after at least 1 s (the
 * deadline ended it; Node's timers count whole milliseconds, so 1 ms of slack) and well before
 * 10 s. They are the cases of this family that still wait on a real deadline, once per row. A
 * live discovery's deadline counts from the connect's start, so a slow start-up (a child, a
 * handshake on a loaded machine) may move the stage it falls at: the stage is not asserted there
 * (the TestClock case asserts it).
 *
 * Axes: the runtime, not the HTTP client. The `TestClock` cases prove that the client's own
 * deadline arithmetic is exact; the live cases prove the runtime's timers meet it (Node and Bun
 * differ there). Whether an HTTP client gives up a stalled request when a deadline interrupts
 * it is proven on every HTTP client by the no-replay (a stall, a late answer) and cancellation
 * (the deadline cases) families.
 */
import { Effect, Fiber, type Scope, TestClock, TestContext } from "effect"
import { check, checkFields, ContractFailure, failureOf } from "../assert.js"
import { forCallSite } from "../client.js"
import { expectedFailure, expectedFields, withoutStage } from "../expectations.js"
import { type ContractFault, methodOf, type Site } from "../faults.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"
import { laterExchange, stillRunningAfter } from "../virtualTime.js"

/** Virtual: only the TestClock ever gets there. */
const VIRTUAL_TIMEOUT = 30_000
/**
 * Virtual time spent early: in discovery after its first request (it counts), before a call (it
 * does not). Below every other wait on the clock that may be pending then (the stdio probe's,
 * the 2025 standalone GET's release timeout), so it ends none of them.
 */
const EARLY = 1_000
const LIVE_TIMEOUT = 1_000
/** Node's timers fire on whole milliseconds of the loop's clock: up to 1 ms early by `performance.now()`. */
const TIMER_SLACK_MS = 1
const LIVE_UPPER_BOUND = 10_000
const MAX_BYTES = 1_000_000

const stall: ContractFault = { kind: "stall" }

/** The fields of the deadline's failure; a live discovery's stage is left out (see `withoutStage`). */
const checkDeadline = <R>(row: Row<R>, site: Site, error: unknown, timeoutMs: number, clock: "test" | "live" = "test") => {
  const fields = expectedFields(expectedFailure(row, site, stall))
  checkFields(error, { ...(clock === "live" && site === "discovery" ? withoutStage(fields) : fields), limits: { timeoutMs, maxBytes: MAX_BYTES } })
}

/** Fails the case (a defect, with `what`) if `effect` has not completed within `ms` of real time. */
const withinRealTime = <A, E, R>(effect: Effect.Effect<A, E, R>, ms: number, what: string) =>
  Effect.raceFirst(
    effect,
    // A real timer (the TestClock would never fire it), cleared when the race is decided: a
    // program that ran the case exits by itself, with no timer left behind.
    Effect.flatMap(
      Effect.async<void>((resume) => {
        const timer = setTimeout(() => resume(Effect.void), ms)
        return Effect.sync(() => clearTimeout(timer))
      }),
      () => Effect.die(new ContractFailure(`not within ${ms} ms of real time: ${what}`))
    )
  )

/** The first request of any discovery: the stateless probe, else `initialize` (legacy HTTP+SSE). */
const discoveryStarted = <R>(server: Peer<R>) => server.calls("server/discover") + server.calls("initialize") >= 1

const testClockCase = <R>(row: Row<R>, site: Site): CaseSpec => ({
  name: site === "discovery"
    ? `under TestClock a stalled discovery, ${EARLY} ms of it spent before tools/list, runs until 1 ms before its ${VIRTUAL_TIMEOUT} ms deadline and fails at it`
    : `under TestClock a stalled call, started ${EARLY} ms after the connection, runs until 1 ms before its own ${VIRTUAL_TIMEOUT} ms deadline and fails at it`,
  run: () =>
    row.run(
      Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site, fault: stall }] })
        const policy = { timeout: VIRTUAL_TIMEOUT, maxBytes: MAX_BYTES }
        const method = methodOf(site)
        let fiber: Fiber.RuntimeFiber<void, unknown>
        /** An exchange after the clock was moved to 1 ms short (see `laterExchange`, `stillRunningAfter`). */
        let later: Effect.Effect<unknown, unknown, R | Scope.Scope>
        if (site === "discovery") {
          fiber = yield* Effect.fork(Effect.asVoid(server.connect(policy)))
          // The deadline is armed before the first request: time spent from here counts.
          yield* Effect.promise(() => server.waitFor(() => discoveryStarted(server), "the discovery's first request arrived"))
          yield* TestClock.adjust(EARLY)
          yield* Effect.promise(() => server.waitFor(() => server.calls(method) === 1, `${method} arrived`))
          yield* TestClock.adjust(VIRTUAL_TIMEOUT - EARLY - 1)
          later = laterExchange(server, { policy })
        } else {
          // A discovery with nothing to wait for needs no virtual time; time before the call does not count.
          const connection = yield* server.connect(policy)
          yield* TestClock.adjust(EARLY)
          fiber = yield* Effect.fork(Effect.asVoid(connection.callTool("increment")))
          yield* Effect.promise(() => server.waitFor(() => server.calls(method) === 1, `${method} arrived`))
          yield* TestClock.adjust(VIRTUAL_TIMEOUT - 1)
          later = laterExchange(server, { connection })
        }
        yield* stillRunningAfter(fiber, later, `the ${site}`)
        yield* TestClock.adjust(1)
        const error = yield* withinRealTime(failureOf(Fiber.join(fiber)), 10_000, `the ${site} ended at its deadline`)
        checkDeadline(row, site, error, VIRTUAL_TIMEOUT)
        check(server.counter() === (site === "call" ? 1 : 0), `the tool ran ${server.counter()} times`)
      }).pipe(Effect.provide(TestContext.TestContext))
    )
})

const liveCase = <R>(row: Row<R>, site: Site): CaseSpec => ({
  name: `under the live clock a stalled ${site} fails at its ${LIVE_TIMEOUT} ms deadline, not before`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site, fault: stall }] })
      const policy = { timeout: LIVE_TIMEOUT, maxBytes: MAX_BYTES }
      const connection = site === "call" ? yield* server.connect(forCallSite(policy)) : undefined
      const started = performance.now()
      const error = yield* failureOf(connection === undefined ? server.connect(policy) : connection.callTool("increment"))
      const elapsed = performance.now() - started
      checkDeadline(row, site, error, LIVE_TIMEOUT, "live")
      check(elapsed >= LIVE_TIMEOUT - TIMER_SLACK_MS, `the ${site} failed after ${elapsed.toFixed(1)} ms, before its ${LIVE_TIMEOUT} ms deadline`)
      check(elapsed < LIVE_UPPER_BOUND, `the ${site} failed after ${elapsed.toFixed(0)} ms`)
    }))
})

export const deadlines: Family = {
  name: "deadlines under TestClock",
  dependsOn: ["runtime"],
  promise: "in both phases a TestClock drives the deadline: not a millisecond early, DeadlineExceeded at it with the phase's limits; live timers meet it too",
  cases: (row) => [
    testClockCase(row, "discovery"),
    testClockCase(row, "call"),
    liveCase(row, "discovery"),
    liveCase(row, "call")
  ]
}
