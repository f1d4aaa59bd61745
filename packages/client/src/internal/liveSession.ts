/**
 * The session a connection works on, and its renewal (docs/DESIGN.md, "Sessions that heal").
 *
 * A server may forget a session: a 404 on a request that carried `Mcp-Session-Id` (Streamable
 * HTTP, 2025 era), or the end of a legacy HTTP+SSE connection's GET stream. The operation that
 * met it fails as it did (`SessionExpired`, or the stream's `TransportFailure`), and is never
 * sent again by the library. The connection then starts a new session before its next
 * operation: a whole discovery (`initialize` without the old id, `tools/list`) under the
 * discovery budget, shared by every operation waiting for it.
 *
 * The session lives in a `ScopedRef`: a renewal closes the lost session's scope (its expired
 * session is not ended: the server has forgotten it) and discovers the new one in a scope of its
 * own; a renewal that fails leaves nothing open. `Connection`'s getters are synchronous, so the
 * session the ref holds is mirrored in `latest` each time it changes.
 *
 * Bounded: `maxSessionRenewals` new sessions in a row without an operation succeeding in
 * between; past that, the connection fails every operation with `LimitExceeded`
 * (`maxSessionRenewals`) without I/O.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as ScopedRef from "effect/ScopedRef"
import { LimitExceeded, type McpConnectionError } from "../McpConnectionError.js"
import type { Transport, TransportKind } from "./transport/transport.js"
import type { Exchange } from "./transport/transport.js"
import type { Session } from "./era.js"
import * as Failures from "./failures.js"

/** One session: what a discovery opened (held open by the scope the `ScopedRef` gave it). */
export interface Discovered<Listing> {
  readonly kind: TransportKind
  readonly transport: Transport
  readonly session: Session
  /** The session's tools, replaced when they are listed again (`LiveSession.relisted`). */
  listing: Listing
}

/** A new session, as the connection records it. */
export interface Renewal {
  readonly durationMs: number
  readonly outcome: "ok" | McpConnectionError["_tag"]
}

export interface LiveSession<Listing> {
  /** The session operations run on now. */
  readonly current: () => Discovered<Listing>
  /** How many sessions the connection has had (1 after its discovery). */
  readonly sessions: () => number
  /** Before an operation: the session, a new one first when the last was lost (see the module comment). */
  readonly ready: (exchange: Exchange) => Effect.Effect<Discovered<Listing>, McpConnectionError>
  /**
   * After an operation on `on`: whether it succeeded, or failed in a way that says the session
   * is gone (an operation that ran on an older session says nothing of the current one).
   */
  readonly settle: (on: Discovered<Listing>, failure: McpConnectionError | undefined) => void
  /**
   * After a listing on `on`: its tools become the session's (a listing of an older session says
   * nothing of the current one). Whether they did.
   */
  readonly relisted: (on: Discovered<Listing>, listing: Listing) => boolean
}

/**
 * A failure that says the server no longer has the session (a legacy stream that ended says so
 * itself: `Transport.ended`).
 */
const isLost = (transport: Transport, failure: McpConnectionError): boolean => transport.capabilities.forgetfulSessions && failure._tag === "SessionExpired"

/**
 * The first session, discovered in the current scope: closing that scope releases whichever
 * session is current then. Interruptible, as every discovery is.
 */
export const first = <A, E, R>(discovery: Effect.Effect<A, E, R>): Effect.Effect<ScopedRef.ScopedRef<A>, E, R | Scope.Scope> =>
  ScopedRef.fromAcquire(Effect.interruptible(discovery))

export const make = <Listing>(
  ref: ScopedRef.ScopedRef<Discovered<Listing>>,
  options: {
    /** A new discovery, in the scope it is given (`Scope.Scope`). */
    readonly renew: Effect.Effect<Discovered<Listing>, McpConnectionError, Scope.Scope>
    readonly maxRenewals: number
    /** Where a renewal runs: it goes on when the operation that started it is interrupted. */
    readonly scope: Scope.Scope
    readonly onRenewal: (renewal: Renewal, renewed: Discovered<Listing> | undefined) => Effect.Effect<void>
    /** What an operation waiting for a new session fails with when the connection closes. */
    readonly closedFailure: (exchange: Exchange) => McpConnectionError
  }
): Effect.Effect<LiveSession<Listing>> =>
  Effect.map(ScopedRef.get(ref), (initial) => {
    let latest = initial
    let sessions = 1
    let lost = false
    let renewalsInARow = 0
    let renewing: Deferred.Deferred<Discovered<Listing>, McpConnectionError> | undefined
    let exhausted = false

    const exhaustedFailure = (exchange: Exchange) =>
      new LimitExceeded({
        ...Failures.fields(exchange),
        limit: "maxSessionRenewals",
        outcome: "not-sent",
        retryable: false
      })

    // The ref closes the lost session's scope, then runs the discovery in a new one.
    const renewed = Effect.zipRight(ScopedRef.set(ref, Effect.interruptible(options.renew)), ScopedRef.get(ref))

    const renew = Effect.gen(function*() {
      const deferred = yield* Deferred.make<Discovered<Listing>, McpConnectionError>()
      renewing = deferred
      renewalsInARow++
      const started = yield* Clock.currentTimeMillis
      const run = Effect.onExit(renewed, (exit) =>
        Effect.gen(function*() {
          renewing = undefined
          if (Exit.isSuccess(exit)) {
            latest = exit.value
            sessions++
            lost = false
          }
          yield* options.onRenewal({
            durationMs: (yield* Clock.currentTimeMillis) - started,
            outcome: Exit.isSuccess(exit) ? "ok" : exit.cause._tag === "Fail" ? exit.cause.error._tag : "InternalError"
          }, Exit.isSuccess(exit) ? exit.value : undefined)
          yield* Deferred.complete(deferred, exit)
        }))
      yield* Effect.forkIn(Effect.interruptible(run), options.scope)
      return deferred
    })

    /** The new session; interrupted (the connection closing): the operation's closed failure. */
    const awaitRenewal = (deferred: Deferred.Deferred<Discovered<Listing>, McpConnectionError>, exchange: Exchange) =>
      Effect.catchAllCause(
        Deferred.await(deferred),
        (cause) => Cause.isInterruptedOnly(cause) ? Effect.fail(options.closedFailure(exchange)) : Effect.failCause(cause)
      )

    const live: LiveSession<Listing> = {
      current: () => latest,
      sessions: () => sessions,
      ready: (exchange) => {
        if (!lost && latest.transport.ended?.() !== true) return Effect.succeed(latest)
        lost = true
        if (exhausted) return Effect.fail(exhaustedFailure(exchange))
        if (renewing !== undefined) return awaitRenewal(renewing, exchange)
        if (renewalsInARow >= options.maxRenewals) {
          exhausted = true
          return Effect.fail(exhaustedFailure(exchange))
        }
        return Effect.flatMap(renew, (deferred) => awaitRenewal(deferred, exchange))
      },
      relisted: (on, listing) => {
        if (on !== latest) return false
        latest.listing = listing
        return true
      },
      settle: (on, failure) => {
        if (on !== latest) return
        if (failure === undefined) renewalsInARow = 0
        else if (isLost(latest.transport, failure)) lost = true
      }
    }
    return live
  })
