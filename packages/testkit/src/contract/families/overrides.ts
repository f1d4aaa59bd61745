/**
 * Phase overrides: each phase runs under its own budget, and a call's own budget replaces the
 * call policy for that call only (docs/DESIGN.md, "Phases and budgets"). Every case sets two
 * budgets in opposite directions and makes the exchange land between them, so that only the
 * budget the rules give can explain the outcome:
 *
 * - a short discovery timeout and a long call timeout: a stalled call still runs past the
 *   discovery timeout and fails exactly at its own, a stalled discovery fails exactly at the
 *   discovery timeout; the opposite policy the other way round;
 * - the same with byte ceilings: an answer between the two ceilings is accepted in the phase
 *   with the larger ceiling and refused in the other;
 * - a per-call `{ timeout, maxBytes }` (Effect API, and the Promise API's call options)
 *   overrides the call policy in both directions, for that call only.
 *
 * Every failure's `limits` must show the budget actually in force; the policies set the baseline
 * `maxBytes` explicitly, so `limits` is known exactly. The baseline is also the unsolicited bound,
 * which matters on a shared stream (docs/DESIGN.md, "Bytes"): a frame is bounded by the
 * largest of it and the pending requests' ceilings. Where the baseline is the small ceiling, the
 * larger ceiling in force (the call phase's, a call's own) must lift that bound, and an answer
 * over the small one is refused while it is read, giving up the stream; where the baseline is
 * far above the answers, an answer over its request's ceiling is a complete frame that fails its
 * request only (`observedBytes` its whole size) and the stream goes on. A response of its own is
 * always refused while it is read (`observedBytes` past the ceiling, at most the answer's size,
 * as the 7-byte writes arrive).
 *
 * Timeouts run under the TestClock (see ../virtualTime.ts): once the stalled request has arrived
 * (a sync point at the server) the clock is moved to 1 ms short of the budget in force, the
 * operation must still run after a later exchange with the server, and the last millisecond ends
 * it. "Exactly at its own budget" is then what "outlives the other budget" was, without waiting
 * for either. The one case still waiting on a real deadline is the Promise API's call with its
 * own 1 s timeout: the Promise API runs the client on its own runtime, out of the TestClock's reach.
 *
 * Axes: none beyond the server row. Which budget is in force is the client's own policy
 * arithmetic, settled before any byte is read or timer armed; the timeouts here run under
 * `TestClock` (no runtime timer decides them), and the byte outcomes are checked as ranges every
 * chunking meets. How each HTTP client and runtime reads bodies and aborts is what the ceilings,
 * no-replay and cancellation families prove on every HTTP client.
 */
import { Effect, Fiber, TestClock } from "effect"
import { check, checkFields, checkNextCallAfterStreamGivenUp, failureOf, rejectionOf } from "../assert.js"
import type { Connection, Policy, PromiseConnection } from "../client.js"
import { expectedFailure, expectedFields } from "../expectations.js"
import type { ContractFault, Site } from "../faults.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"
import { failsExactlyAt, laterExchange, stillRunningAfter, underTestClock } from "../virtualTime.js"

/** The short budgets (virtual, under the TestClock, but for the Promise API's live call). */
const SHORT_DISCOVERY = 2_000
const SHORT_CALL = 1_000
/** A budget no exchange of these cases comes near. */
const LONG = 20_000
const SMALL = 4_000
const LARGE = 8_000
/** An answer between the two ceilings. */
const BETWEEN = 6_000
/**
 * The baseline ceiling, and so the unsolicited bound, where a case does not set it to `SMALL`:
 * far above every answer of these cases.
 */
const BASE_BYTES = 1_000_000

const stall: ContractFault = { kind: "stall" }
const between: ContractFault = { kind: "exact-size", bytes: BETWEEN }

const now = () => performance.now()

/** Runs `effect` and measures it in real time. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, number], E, R> =>
  Effect.suspend(() => {
    const started = now()
    return Effect.map(effect, (a) => [a, now() - started] as const)
  })

/**
 * The budgets of a refusal: `limits` in force, and the unsolicited bound (the policy's baseline
 * `maxBytes`) that, with the pending ceilings, bounds a frame on a shared stream.
 */
interface Refused {
  readonly limits: { readonly timeoutMs: number; readonly maxBytes: number }
  readonly unsolicited?: number
}

const checkFailure = <R>(row: Row<R>, error: unknown, site: Site, fault: ContractFault, refused: Refused, what: string) => {
  const { limits } = refused
  checkFields(error, { ...expectedFields(expectedFailure(row, site, fault)), limits }, what)
  if (fault.kind === "exact-size") {
    // A complete frame under the shared stream's bound is read whole; anything else is refused
    // while it is read, past the ceiling and at most the answer.
    const whole = row.sharedStream && fault.bytes <= Math.max(refused.unsolicited ?? BASE_BYTES, limits.maxBytes)
    const observed = (error as { readonly observedBytes?: unknown }).observedBytes
    const least = whole ? fault.bytes : limits.maxBytes + 1
    check(
      typeof observed === "number" && observed >= least && observed <= fault.bytes,
      `${what}: observedBytes is ${observed}, expected ${whole ? fault.bytes : `${least} to ${fault.bytes}`}`
    )
  }
}

/** A tool result, not an error: an object with its content. */
const checkResult = (result: unknown, what: string) => {
  const content = (result as { readonly content?: unknown } | null)?.content
  check(Array.isArray(content), `${what}: the result has no content (${JSON.stringify(result)?.slice(0, 200)})`)
}

const checkCounter = <R>(server: Peer<R>, runs: number, what: string) => {
  check(server.counter() === runs, `${what}: the tool ran ${server.counter()} times, expected ${runs}`)
  check(server.calls("tools/call") === runs, `${what}: tools/call arrived ${server.calls("tools/call")} times, expected ${runs}`)
}

/** A Promise API connection, closed with the program's scope. */
const promiseConnection = <R>(server: Peer<R>, policy: Policy) =>
  Effect.acquireRelease(
    Effect.promise(() => server.connectPromise({ policy })),
    (connection: PromiseConnection) => Effect.promise(() => connection.close())
  )

const callFailure = (connection: Connection, overrides?: { readonly timeout?: number; readonly maxBytes?: number }) =>
  failureOf(connection.callTool("increment", {}, overrides))

// --- One phase against the other ------------------------------------------------------------

/**
 * A stalled discovery under `policy`, under the TestClock: still running 1 ms short of
 * `timeoutMs` (counted from the connect's start), failing at it with those limits.
 */
const discoveryAt = <R>(row: Row<R>, policy: Policy, timeoutMs: number) =>
  underTestClock(Effect.scoped(Effect.gen(function*() {
    const server = yield* peer(row, { faults: [{ site: "discovery", fault: stall }] })
    const what = `the stalled discovery (${timeoutMs} ms)`
    const error = yield* failsExactlyAt(server, "discovery", server.connect(policy), timeoutMs, laterExchange(server, { policy }), what)
    checkFailure(row, error, "discovery", stall, { limits: { timeoutMs, maxBytes: BASE_BYTES } }, what)
    check(server.counter() === 0, `a failed discovery ran the tool ${server.counter()} times`)
  })))

/**
 * A stalled call under `policy` (and `overrides`), under the TestClock: still running 1 ms short
 * of `timeoutMs` (counted from the call's start), failing at it with those limits; the tool ran once.
 */
const callAt = <R>(row: Row<R>, policy: Policy, timeoutMs: number, overrides?: { readonly timeout: number }) =>
  underTestClock(Effect.scoped(Effect.gen(function*() {
    const server = yield* peer(row, { faults: [{ site: "call", fault: stall }] })
    const connection = yield* server.connect(policy)
    const what = `the stalled call (${timeoutMs} ms)`
    const error = yield* failsExactlyAt(server, "call", connection.callTool("increment", {}, overrides), timeoutMs, laterExchange(server, { connection }), what)
    checkFailure(row, error, "call", stall, { limits: { timeoutMs, maxBytes: BASE_BYTES } }, what)
    check(server.counter() === 1, `${what}: the tool ran ${server.counter()} times, expected once`)
  })))

const shortDiscoveryLongCall = <R>(row: Row<R>): CaseSpec => {
  const policy: Policy = { maxBytes: BASE_BYTES, discovery: { timeout: SHORT_DISCOVERY }, call: { timeout: LONG } }
  return {
    name: `discovery ${SHORT_DISCOVERY} ms, call ${LONG} ms: a stalled call runs until its ${LONG} ms, a stalled discovery fails at ${SHORT_DISCOVERY} ms`,
    run: () =>
      row.run(Effect.all([
        // The call outlives the discovery's timeout: the discovery's budget is not the call's.
        callAt(row, policy, LONG),
        // The discovery ends at its own timeout, long before the call's.
        discoveryAt(row, policy, SHORT_DISCOVERY)
      ], { concurrency: 2, discard: true }))
  }
}

const longDiscoveryShortCall = <R>(row: Row<R>): CaseSpec => {
  const policy: Policy = { maxBytes: BASE_BYTES, discovery: { timeout: LONG }, call: { timeout: SHORT_CALL } }
  return {
    name: `discovery ${LONG} ms, call ${SHORT_CALL} ms: a stalled discovery runs until its ${LONG} ms, a stalled call fails at ${SHORT_CALL} ms`,
    run: () =>
      row.run(Effect.all([
        discoveryAt(row, policy, LONG),
        callAt(row, policy, SHORT_CALL)
      ], { concurrency: 2, discard: true }))
  }
}

/** The baseline (and unsolicited bound) is the discovery's small ceiling: the call's must lift it. */
const smallDiscoveryLargeCall = <R>(row: Row<R>): CaseSpec => {
  const policy: Policy = { timeout: LONG, maxBytes: SMALL, call: { maxBytes: LARGE } }
  return {
    name: `discovery ${SMALL} bytes, call ${LARGE} bytes: a ${BETWEEN}-byte call answer is accepted, a ${BETWEEN}-byte discovery answer refused`,
    run: () =>
      row.run(Effect.all([
        Effect.gen(function*() {
          const server = yield* peer(row, { faults: [{ site: "call", fault: between }] })
          const connection = yield* server.connect(policy)
          checkResult(yield* connection.callTool("increment"), `the ${BETWEEN}-byte call answer`)
          checkCounter(server, 1, `the ${BETWEEN}-byte call answer`)
        }),
        Effect.gen(function*() {
          const server = yield* peer(row, { faults: [{ site: "discovery", fault: between }] })
          const error = yield* failureOf(server.connect(policy))
          const refused = { limits: { timeoutMs: LONG, maxBytes: SMALL }, unsolicited: SMALL }
          checkFailure(row, error, "discovery", between, refused, `the ${BETWEEN}-byte discovery answer`)
          check(server.counter() === 0, `a failed discovery ran the tool ${server.counter()} times`)
        })
      ], { concurrency: 2, discard: true }))
  }
}

/**
 * The baseline (and unsolicited bound) is the call's small ceiling: the discovery's must lift it.
 * The refused call answer passes the shared stream's bound while it is read, which gives up the
 * stream (the next call is refused unsent); a response of its own leaves the connection going.
 */
const largeDiscoverySmallCall = <R>(row: Row<R>): CaseSpec => {
  const policy: Policy = { timeout: LONG, maxBytes: SMALL, discovery: { maxBytes: LARGE } }
  return {
    name: `discovery ${LARGE} bytes, call ${SMALL} bytes: a ${BETWEEN}-byte discovery answer is accepted, a ${BETWEEN}-byte call answer refused`,
    run: () =>
      row.run(Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site: "discovery", fault: between }, { site: "call", fault: between }] })
        const connection = yield* server.connect(policy)
        check(connection.tools.some((tool) => tool.name === "increment"), "the discovery did not list the increment tool")
        const error = yield* callFailure(connection)
        const refused = { limits: { timeoutMs: LONG, maxBytes: SMALL }, unsolicited: SMALL }
        checkFailure(row, error, "call", between, refused, `the ${BETWEEN}-byte call answer`)
        checkCounter(server, 1, `the ${BETWEEN}-byte call answer`)
        if (row.sharedStream) {
          yield* checkNextCallAfterStreamGivenUp(row, connection, server.counter)
        } else {
          checkResult(yield* connection.callTool("increment"), "the next call")
          checkCounter(server, 2, "after the next call")
        }
      }))
  }
}

// --- A call's own budget ----------------------------------------------------------------------

/**
 * Two stalled calls on one connection, one with its own timeout of `LONG`, one under the policy's
 * `SHORT_CALL`: the second fails at `SHORT_CALL` while the first still runs, and the first fails
 * only at `LONG` (each exactly, under the TestClock).
 */
const perCallLongerTimeout = <R>(row: Row<R>): CaseSpec => {
  const policy: Policy = { timeout: LONG, maxBytes: BASE_BYTES, call: { timeout: SHORT_CALL } }
  return {
    name: `a call's own timeout of ${LONG} ms outlives the policy's ${SHORT_CALL} ms; a concurrent call without one fails at ${SHORT_CALL} ms`,
    run: () =>
      row.run(underTestClock(Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site: "call", fault: stall, times: 2 }] })
        const connection = yield* server.connect(policy)
        const own = yield* Effect.fork(connection.callTool("increment", {}, { timeout: LONG }))
        const later = laterExchange(server, { connection })
        const underPolicy = yield* failsExactlyAt(server, "call", connection.callTool("increment"), SHORT_CALL, later, "the call under the policy", 2)
        checkFailure(row, underPolicy, "call", stall, { limits: { timeoutMs: SHORT_CALL, maxBytes: BASE_BYTES } }, "the call under the policy")
        // Both calls started before the clock moved: the one with its own timeout has LONG - SHORT_CALL to go.
        yield* TestClock.adjust(LONG - SHORT_CALL - 1)
        yield* stillRunningAfter(own, later, "the call with its own timeout")
        yield* TestClock.adjust(1)
        const ownFailure = yield* failureOf(Fiber.join(own))
        checkFailure(row, ownFailure, "call", stall, { limits: { timeoutMs: LONG, maxBytes: BASE_BYTES } }, "the call with its own timeout")
        check(server.counter() === 2, `two calls: the tool ran ${server.counter()} times, expected twice`)
      })))
  }
}

/**
 * A call's own timeout shorter than the policy's. Effect API: under the TestClock, exactly at
 * `SHORT_CALL`. Promise API: the client runs on its own runtime, out of the TestClock's reach, so
 * the live deadline is waited for (1 s); the bound above it is generous.
 */
const perCallShorterTimeout = <R>(row: Row<R>, api: "effect" | "promise"): CaseSpec => {
  const policy: Policy = { timeout: LONG, maxBytes: BASE_BYTES }
  return {
    name: `${api === "promise" ? "Promise API: " : ""}a call's own timeout of ${SHORT_CALL} ms ends a stalled call the policy would wait ${LONG} ms for`,
    run: () =>
      api === "effect"
        ? row.run(callAt(row, policy, SHORT_CALL, { timeout: SHORT_CALL }))
        : row.run(Effect.gen(function*() {
          const server = yield* peer(row, { faults: [{ site: "call", fault: stall }] })
          const [error, elapsed] = yield* Effect.flatMap(promiseConnection(server, policy), (connection) =>
            timed(Effect.promise(() => rejectionOf(connection.callTool("increment", {}, { timeout: SHORT_CALL })))))
          checkFailure(row, error, "call", stall, { limits: { timeoutMs: SHORT_CALL, maxBytes: BASE_BYTES } }, "the call with its own timeout")
          check(elapsed < LONG, `the call took ${elapsed.toFixed(0)} ms: the policy's ${LONG} ms were applied`)
          checkCounter(server, 1, "the stalled call")
        }))
  }
}

/** Calls the increment tool with a budget of its own (or none), through either API; fails with the client's error. */
const caller = <R>(server: Peer<R>, api: "effect" | "promise", policy: Policy) =>
  api === "effect"
    ? Effect.map(server.connect(policy), (connection) => (budget?: { readonly maxBytes: number }) => connection.callTool("increment", {}, budget))
    : Effect.map(promiseConnection(server, policy), (connection) => (budget?: { readonly maxBytes: number }) =>
      Effect.tryPromise({
        try: () => connection.callTool("increment", {}, budget),
        catch: (error) => error
      }))

/**
 * A larger per-call ceiling accepts the answer, then the same answer without it is refused under
 * the policy's. The baseline (and unsolicited bound) is the policy's small ceiling: on a shared
 * stream the call's own ceiling must lift the frame's bound; the refused answer then passes the
 * bound and gives up the stream. Sequential: two exact-size answers written at once would
 * interleave on a shared stream.
 */
const perCallLargerCeiling = <R>(row: Row<R>, api: "effect" | "promise"): CaseSpec => {
  const policy: Policy = { timeout: LONG, maxBytes: SMALL }
  return {
    name: `${api === "promise" ? "Promise API: " : ""}a call's own ceiling of ${LARGE} bytes accepts a ${BETWEEN}-byte answer the policy's ${SMALL} refuses`,
    run: () =>
      row.run(Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site: "call", fault: between, times: 2 }] })
        const call = yield* caller(server, api, policy)
        checkResult(yield* call({ maxBytes: LARGE }), "the call with its own ceiling")
        const refused = { limits: { timeoutMs: LONG, maxBytes: SMALL }, unsolicited: SMALL }
        checkFailure(row, yield* failureOf(call()), "call", between, refused, "the call under the policy")
        checkCounter(server, 2, "two calls")
      }))
  }
}

/**
 * A smaller per-call ceiling refuses the answer; the next call, under the policy, accepts it (on
 * a shared stream the refused answer was a complete frame under the stream's bound: the stream
 * goes on).
 */
const perCallSmallerCeiling = <R>(row: Row<R>, api: "effect" | "promise"): CaseSpec => {
  const policy: Policy = { timeout: LONG, maxBytes: BASE_BYTES, call: { maxBytes: LARGE } }
  return {
    name: `${api === "promise" ? "Promise API: " : ""}a call's own ceiling of ${SMALL} bytes refuses a ${BETWEEN}-byte answer the policy's ${LARGE} accepts`,
    run: () =>
      row.run(Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site: "call", fault: between, times: 2 }] })
        const call = yield* caller(server, api, policy)
        const refused = { limits: { timeoutMs: LONG, maxBytes: SMALL } }
        checkFailure(row, yield* failureOf(call({ maxBytes: SMALL })), "call", between, refused, "the call with its own ceiling")
        checkResult(yield* call(), "the call under the policy")
        checkCounter(server, 2, "two calls")
      }))
  }
}

export const overrides: Family = {
  name: "phase overrides",
  dependsOn: [],
  promise: "each phase runs under its own budget and a call's own budget replaces the call policy, in both directions; limits show the budget in force",
  cases: (row) => [
    shortDiscoveryLongCall(row),
    longDiscoveryShortCall(row),
    smallDiscoveryLargeCall(row),
    largeDiscoverySmallCall(row),
    perCallLongerTimeout(row),
    perCallShorterTimeout(row, "effect"),
    perCallLargerCeiling(row, "effect"),
    perCallSmallerCeiling(row, "effect"),
    perCallShorterTimeout(row, "promise"),
    perCallLargerCeiling(row, "promise"),
    perCallSmallerCeiling(row, "promise")
  ]
}
