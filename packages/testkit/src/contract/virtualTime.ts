/**
 * Deadlines under Effect's `TestClock` (docs/DESIGN.md, "Deadlines"): under any clock but the
 * live one a deadline is `Effect.timeoutFail`, so virtual time drives it. The deadlines family's
 * header says which other waits read the clock during a discovery or a call, and why each row
 * still works under it (none of them has to elapse). These helpers give the other families the
 * same pattern: a sync point at the server (the stalled request arrived), then the virtual clock
 * moved; no live deadline is waited for, and a child's start-up is outside every budget.
 */
import { Effect, Exit, Fiber, Option, type Scope, TestClock, TestContext } from "effect"
import { check, failureOf } from "./assert.js"
import { methodOf, type Site } from "./faults.js"
import { type Peer, peer, type Row } from "./rows.js"
import type { Connection, Policy } from "./client.js"

/** Runs `program` with the `TestClock` (and the rest of Effect's test services). */
export const underTestClock = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.provide(program, TestContext.TestContext)

/** Waits (real time, a sync point) until `site`'s request has arrived at the server `count` times. */
export const arrivedAt = <R>(server: Peer<R>, site: Site, count = 1) =>
  Effect.promise(() => server.waitFor(() => server.calls(methodOf(site)) >= count, `${methodOf(site)} arrived at the server`))

/**
 * Forks `operation`, waits until the server has seen the request the fault stalls (`site`'s
 * method, the `count`-th time), moves the virtual clock by `timeoutMs` and returns the operation's
 * exit. Must run under `underTestClock`. A deadline counted from the operation's start is then
 * reached exactly, whatever real time the steps before the stalled request took.
 */
export const pastVirtualDeadline = <A, E, R, R2>(
  server: Peer<R2>,
  site: Site,
  operation: Effect.Effect<A, E, R>,
  timeoutMs: number,
  count = 1
): Effect.Effect<Exit.Exit<A, E>, never, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(operation)
    yield* arrivedAt(server, site, count)
    yield* TestClock.adjust(timeoutMs)
    return yield* Fiber.await(fiber)
  })

/**
 * Checks that `fiber` has not ended, at a point ordered after anything an earlier deadline would
 * have done: once `laterEvent` (a request answered by the same server, through the same client)
 * has completed. A deadline fires inside `TestClock.adjust` and ends its operation without
 * waiting for the server, so an operation ended early is ended by the time another exchange
 * with the server has made its round trip.
 */
export const stillRunningAfter = <A, E, R>(
  fiber: Fiber.Fiber<unknown, unknown>,
  laterEvent: Effect.Effect<A, E, R>,
  what: string
): Effect.Effect<void, E, R> =>
  Effect.gen(function*() {
    yield* laterEvent
    const early = yield* Fiber.poll(fiber)
    check(
      Option.isNone(early),
      `${what} had ended 1 ms short of its deadline${Option.isSome(early) ? ` (${Exit.isFailure(early.value) ? "failed" : "succeeded"})` : ""}`
    )
  })

/**
 * An exchange after which an operation ended by a deadline would be seen ended: for a call,
 * another call on its connection (`add`: the fault applied to the stalled calls only); for a
 * discovery, a second connection's whole discovery, to the same server over HTTP (the fault
 * applied to its first listing only) and to a healthy child on stdio (a new child of the same
 * fixture would play its faults again).
 */
export const laterExchange = <R>(
  server: Peer<R>,
  over: { readonly connection: Connection } | { readonly policy: Policy }
): Effect.Effect<unknown, unknown, R | Scope.Scope> =>
  "connection" in over
    ? over.connection.callTool("add", { a: 1, b: 2 })
    : server.row.transport === "stdio"
    ? Effect.flatMap(peer(server.row as Row<R>), (healthy) => healthy.connect(over.policy))
    : server.connect(over.policy)

/**
 * Forks `operation` (stalled at `site` by the server), waits until the request has arrived
 * (`count` of them), moves the clock to 1 ms short of `timeoutMs` and checks it still runs after
 * `later` (see `stillRunningAfter`), then moves the last millisecond: returns the typed failure
 * the operation must end with. Must run under `underTestClock`.
 */
export const failsExactlyAt = <A, E, R, R2, R3>(
  server: Peer<R2>,
  site: Site,
  operation: Effect.Effect<A, E, R>,
  timeoutMs: number,
  later: Effect.Effect<unknown, unknown, R3>,
  what: string,
  count = 1
) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(operation)
    yield* arrivedAt(server, site, count)
    yield* TestClock.adjust(timeoutMs - 1)
    yield* stillRunningAfter(fiber, later, what)
    yield* TestClock.adjust(1)
    return yield* failureOf(Fiber.join(fiber))
  })
