/**
 * Interruption and abort versus deadline (docs/DESIGN.md, "Deadlines" and "Release"): the
 * caller's interruption is an interruption, never a `DeadlineExceeded` or any typed failure; in
 * the Promise API an aborted signal rejects with the signal's own `reason`; a deadline is a
 * `DeadlineExceeded`, never an interruption. Either way the server sees the abandoned request
 * released (the row's `abandoned()`: the answer closed over Streamable HTTP, a
 * `notifications/cancelled` on a shared stream), the tool ran once, and the connection holds
 * nothing afterwards and serves the next call. In the discovery phase, an interrupted or aborted
 * discovery releases what it opened (the row's `released()`).
 *
 * Every interruption or abort waits until the server has seen the request (a sync point), under
 * deadlines (30 s) that no such case reaches: the interruption is what ends it. The deadline
 * cases set a short deadline (1 s for a call, 2 s for a discovery) in one phase only. The Effect
 * API's discovery deadline is reached under the TestClock once tools/list arrived (no start-up
 * counts, so the stage is asserted); the others still wait on live deadlines (a call's 1 s; the
 * Promise API's connect, 2 s, runs the client on its own runtime, where the TestClock cannot
 * reach, so its stage, which a slow start-up can move, is not asserted).
 *
 * Axes: the HTTP client and the runtime: an interruption or an abort reaches the server as a
 * closed response only through the HTTP client's own abort, and the runtime's sockets.
 */
import { Cause, Effect, Exit, Fiber } from "effect"
import { check, checkFields, ContractFailure, expectReleased, rejectionOf, summary } from "../assert.js"
import type { ClientError, Connection, Policy, PromiseConnection } from "../client.js"
import { expectedFailure, expectedFields, withoutStage } from "../expectations.js"
import { methodOf, type Site } from "../faults.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"
import { pastVirtualDeadline, underTestClock } from "../virtualTime.js"

/** A deadline no case reaches: only the interruption (or the abort) can end the request. */
const LONG_MS = 30_000
/** What "promptly" means against LONG_MS: a third of it, far above any loaded machine's latency. */
const PROMPT_MS = 10_000
/** The deadline of the deadline cases: far above loopback latency, short enough to keep the suite fast. */
const DEADLINE_MS = { call: 1_000, discovery: 2_000 } as const
/** Sync points: generous waits for what the server must see, not timing claims. */
const SYNC_MS = 15_000

const STALL = { kind: "stall" } as const
const stallAt = (site: Site) => ({ faults: [{ site, fault: STALL }] })
/** A policy whose deadlines no case reaches. */
const LONG_POLICY = { timeout: LONG_MS }
/** A short deadline in `site`'s phase only; the other phase keeps the long one. */
const deadlinePolicy = (site: Site): Policy =>
  site === "call"
    ? { timeout: LONG_MS, call: { timeout: DEADLINE_MS.call } }
    : { timeout: LONG_MS, discovery: { timeout: DEADLINE_MS.discovery } }

/** The stalled request arrived: the server has seen it (so interrupting it abandons a sent request). */
const arrived = <R>(server: Peer<R>, site: Site) => server.waitFor(() => server.calls(methodOf(site)) === 1, `${methodOf(site)} arrived at the server`, SYNC_MS)

/** The server saw the abandoned request released: its answer closed, or a cancellation notice. */
const abandonedSeen = <R>(server: Peer<R>, what: string) =>
  server.waitFor(
    () => server.abandoned() >= 1,
    `the server saw the ${what} released (${server.row.sharedStream ? "a notifications/cancelled" : "its answer closed by the client"})`,
    SYNC_MS
  )

/**
 * The cancellation notice the rules give for a call given up after it was sent (docs/DESIGN.md,
 * "Protocol eras", "The stateless era"; docs/GUIDE.md, "Decisions"): over stateless Streamable HTTP
 * none, the closed answer stream is the signal; everywhere else one `notifications/cancelled`.
 * Over HTTP a notice travels in the connection's background, so once the background is empty a
 * notice sent is a notice that arrived: the absence is checked at that sync point.
 */
const checkNoticeRule = <R>(server: Peer<R>, connection: Connection) =>
  Effect.gen(function*() {
    const row = server.row
    if (row.transport === "streamable-http" && row.era === "stateless") {
      yield* expectReleased(connection)
      const notices = server.calls("notifications/cancelled")
      check(notices === 0, `${notices} cancellation notices over stateless HTTP, where closing the answer stream is the signal`)
      return
    }
    yield* Effect.promise(() => server.waitFor(() => server.calls("notifications/cancelled") >= 1, "a notifications/cancelled arrived", SYNC_MS))
    yield* expectReleased(connection)
    const notices = server.calls("notifications/cancelled")
    check(notices === 1, `${notices} cancellation notices for one call`)
  })

/** The exit is an interruption and nothing else: no typed failure (a deadline above all), no defect. */
const checkInterruptedOnly = (exit: Exit.Exit<unknown, unknown>, what: string): void => {
  if (Exit.isSuccess(exit)) throw new ContractFailure(`${what} succeeded where an interruption was expected`)
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") throw new ContractFailure(`${what} failed with ${summary(failure.value)} where an interruption was expected`)
  check(Cause.isInterruptedOnly(exit.cause), `${what}: a defect where an interruption was expected: ${Cause.pretty(exit.cause).split("\n")[0]}`)
}

/** The exit is a typed failure whose cause holds no interruption (and no defect); returns the failure. */
const deadlineFailureOf = (exit: Exit.Exit<unknown, unknown>, what: string): ClientError => {
  if (Exit.isSuccess(exit)) throw new ContractFailure(`${what} succeeded where a DeadlineExceeded was expected`)
  check(!Cause.isInterrupted(exit.cause), `${what}: the deadline was reported as an interruption (${Cause.pretty(exit.cause).split("\n")[0]})`)
  check(!Cause.isDie(exit.cause), `${what}: a defect where a DeadlineExceeded was expected: ${Cause.pretty(exit.cause).split("\n")[0]}`)
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "None") throw new ContractFailure(`${what}: no typed failure where a DeadlineExceeded was expected`)
  return failure.value as ClientError
}

/** The caller's abort reason: an object no client could make up, so identity proves it is the one given. */
const abortReason = (what: string) => ({ name: "CallerAbort", what, token: Symbol("caller-abort") })

/** Runs `body` against a fresh server of the row, closed afterwards whatever happens. */
const withPeer = async <R>(row: Row<R>, setup: Parameters<Row<R>["start"]>[0], body: (server: Peer<R>) => Promise<void>) => {
  const server = await row.start(setup)
  try {
    await body(server)
  } finally {
    await server.close()
  }
}

/** Runs `body` with a Promise-API connection, closed afterwards whatever happens. */
const withConnection = async (connection: PromiseConnection, body: (connection: PromiseConnection) => Promise<void>) => {
  try {
    await body(connection)
  } finally {
    await connection.close()
  }
}

/** (a) Effect interruption of a stalled call. */
const interruptedCall = <R>(row: Row<R>): CaseSpec => ({
  name: "an interrupted call is an interruption only, prompt, released at the server, and the connection serves the next call",
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, stallAt("call"))
      const connection = yield* server.connect(LONG_POLICY)
      const fiber = yield* Effect.fork(connection.callTool("increment"))
      yield* Effect.promise(() => arrived(server, "call"))
      const started = Date.now()
      const exit = yield* Fiber.interrupt(fiber)
      const elapsed = Date.now() - started
      checkInterruptedOnly(exit, "the interrupted call")
      check(elapsed < PROMPT_MS, `the interrupted call took ${elapsed} ms to end, under a ${LONG_MS} ms deadline`)
      yield* Effect.promise(() => abandonedSeen(server, "interrupted call"))
      check(server.counter() === 1, `the tool ran ${server.counter()} times, expected once`)
      yield* checkNoticeRule(server, connection)
      yield* connection.callTool("increment")
      check(server.counter() === 2, `after a next call the tool ran ${server.counter()} times, expected twice`)
      check(server.calls("tools/call") === 2, `tools/call arrived ${server.calls("tools/call")} times, expected twice`)
    }))
})

/** (b) The same through the Promise API: an aborted signal. */
const abortedCall = <R>(row: Row<R>): CaseSpec => ({
  name: "an aborted call (Promise API) rejects with the signal's own reason, is released at the server, and the connection serves the next call",
  run: () =>
    withPeer(row, stallAt("call"), async (server) => {
      const connection = await server.connectPromise({ policy: LONG_POLICY })
      await withConnection(connection, async (connection) => {
        const controller = new AbortController()
        const reason = abortReason("call")
        const pending = connection.callTool("increment", {}, { signal: controller.signal })
        await arrived(server, "call")
        const started = Date.now()
        controller.abort(reason)
        const rejection = await rejectionOf(pending)
        const elapsed = Date.now() - started
        check(rejection === reason, `the aborted call rejected with ${summary(rejection)}, not with the signal's reason`)
        check(elapsed < PROMPT_MS, `the aborted call took ${elapsed} ms to reject, under a ${LONG_MS} ms deadline`)
        await abandonedSeen(server, "aborted call")
        check(server.counter() === 1, `the tool ran ${server.counter()} times, expected once`)
        await Effect.runPromise(checkNoticeRule(server, connection.effect))
        await connection.callTool("increment", {}, { signal: new AbortController().signal })
        check(server.counter() === 2, `after a next call the tool ran ${server.counter()} times, expected twice`)
      })
    })
})

/**
 * (c) Effect interruption of a discovery in progress. A discovery that does not complete
 * releases what it opened (docs/DESIGN.md, "Release"), which `released()` sees: the 2025
 * session that `initialize` named is DELETEd (the handshake era ends its session whenever the
 * connection's scope closes, a failed discovery's included), the legacy GET stream is closed,
 * the stdio child is gone; a stateless HTTP discovery holds nothing but its listing's answer.
 */
const interruptedDiscovery = <R>(row: Row<R>): CaseSpec => ({
  name: "an interrupted discovery is an interruption only, prompt, and releases what it opened",
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, stallAt("discovery"))
      const fiber = yield* Effect.fork(server.connect(LONG_POLICY))
      yield* Effect.promise(() => arrived(server, "discovery"))
      const started = Date.now()
      const exit = yield* Fiber.interrupt(fiber)
      const elapsed = Date.now() - started
      checkInterruptedOnly(exit, "the interrupted discovery")
      check(elapsed < PROMPT_MS, `the interrupted discovery took ${elapsed} ms to end, under a ${LONG_MS} ms deadline`)
      yield* Effect.promise(() => server.released(SYNC_MS))
      // Over Streamable HTTP the listing's own answer is closed too; on a shared stream the
      // whole session is released, which `released()` sees.
      if (!row.sharedStream) yield* Effect.promise(() => abandonedSeen(server, "interrupted tools/list"))
      check(server.counter() === 0, `an interrupted discovery ran the tool ${server.counter()} times`)
    }))
})

/** (b) in the discovery phase: connect's signal aborted while the listing stalls. */
const abortedDiscovery = <R>(row: Row<R>): CaseSpec => ({
  name: "an aborted connect (Promise API) rejects with the signal's own reason and releases what it opened",
  run: () =>
    withPeer(row, stallAt("discovery"), async (server) => {
      const controller = new AbortController()
      const reason = abortReason("discovery")
      const pending = server.connectPromise({ policy: LONG_POLICY, signal: controller.signal })
      await arrived(server, "discovery")
      const started = Date.now()
      controller.abort(reason)
      const rejection = await rejectionOf(pending)
      const elapsed = Date.now() - started
      check(rejection === reason, `the aborted connect rejected with ${summary(rejection)}, not with the signal's reason`)
      check(elapsed < PROMPT_MS, `the aborted connect took ${elapsed} ms to reject, under a ${LONG_MS} ms deadline`)
      await server.released(SYNC_MS)
      if (!row.sharedStream) await abandonedSeen(server, "aborted tools/list")
      check(server.counter() === 0, `an aborted discovery ran the tool ${server.counter()} times`)
    })
})

/** (d) A deadline is a DeadlineExceeded, never an interruption (Effect API). */
const deadlineEffect = <R>(row: Row<R>, site: Site): CaseSpec => ({
  name: `a ${site} deadline is a DeadlineExceeded, never an interruption (Effect API)`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, stallAt(site))
      const expected = expectedFields(expectedFailure(row, site, STALL))
      const policy = deadlinePolicy(site)
      if (site === "discovery") {
        // Under the TestClock, once tools/list arrived: no start-up counts, the stage is list-tools.
        const exit = yield* underTestClock(pastVirtualDeadline(server, "discovery", server.connect(policy), DEADLINE_MS.discovery))
        checkFields(deadlineFailureOf(exit, "the discovery past its deadline"), expected)
        yield* Effect.promise(() => server.released(SYNC_MS))
      } else {
        const connection = yield* server.connect(policy)
        const exit = yield* Effect.exit(connection.callTool("increment"))
        checkFields(deadlineFailureOf(exit, "the call past its deadline"), expected)
        yield* Effect.promise(() => abandonedSeen(server, "call past its deadline"))
        yield* checkNoticeRule(server, connection)
        check(server.counter() === 1, `the tool ran ${server.counter()} times, expected once`)
      }
    }))
})

/** (d) The same through the Promise API, with a signal that is never aborted. */
const deadlinePromise = <R>(row: Row<R>, site: Site): CaseSpec => ({
  name: `a ${site} deadline is a DeadlineExceeded, never the signal's abort (Promise API)`,
  run: () =>
    withPeer(row, stallAt(site), async (server) => {
      const expected = expectedFields(expectedFailure(row, site, STALL))
      const controller = new AbortController()
      if (site === "discovery") {
        // Live (the Promise API runs the client on its own runtime): the stage is not asserted.
        const rejection = await rejectionOf(server.connectPromise({ policy: deadlinePolicy(site), signal: controller.signal }))
        checkFields(rejection, withoutStage(expected), "the connect past its deadline")
        await server.released(SYNC_MS)
        check(server.counter() === 0, `a failed discovery ran the tool ${server.counter()} times`)
        // The deadline left the caller's signal alone: a connect with it now succeeds (over HTTP to
        // the same server, whose stall applied once; on stdio to a healthy child, as a new child of
        // this fixture would stall again).
        const again = row.transport === "stdio" ? await row.start() : server
        try {
          await withConnection(await again.connectPromise({ policy: LONG_POLICY, signal: controller.signal }), async () => {})
          const listings = again.calls("tools/list")
          check(listings === (again === server ? 2 : 1), `tools/list arrived ${listings} times at the second connect's server`)
        } finally {
          if (again !== server) await again.close()
        }
      } else {
        const connection = await server.connectPromise({ policy: LONG_POLICY })
        await withConnection(connection, async (connection) => {
          const rejection = await rejectionOf(
            connection.callTool("increment", {}, { signal: controller.signal, timeout: DEADLINE_MS.call })
          )
          checkFields(rejection, expected, "the call past its deadline")
          await abandonedSeen(server, "call past its deadline")
          await Effect.runPromise(checkNoticeRule(server, connection.effect))
          check(server.counter() === 1, `the tool ran ${server.counter()} times, expected once`)
          // The deadline left the caller's signal alone: the next call with it is answered.
          await connection.callTool("increment", {}, { signal: controller.signal })
          check(server.counter() === 2, `after a next call the tool ran ${server.counter()} times, expected twice`)
        })
      }
    })
})

export const cancellation: Family = {
  name: "interruption and abort versus deadline",
  dependsOn: ["http-client", "runtime"],
  promise:
    "in both phases, the caller's interruption is an interruption and an aborted signal rejects with its own reason, the abandoned request released at the server; a deadline is a DeadlineExceeded, never an interruption",
  cases: (row) => [
    interruptedCall(row),
    abortedCall(row),
    interruptedDiscovery(row),
    abortedDiscovery(row),
    deadlineEffect(row, "call"),
    deadlinePromise(row, "call"),
    deadlineEffect(row, "discovery"),
    deadlinePromise(row, "discovery")
  ]
}
