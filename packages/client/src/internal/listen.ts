/**
 * The 2026-07-28 subscription of a connection (docs/DESIGN.md, "Subscriptions"): ONE
 * `subscriptions/listen` request at a time, whose filter asks for every change the server can
 * announce (`toolsListChanged`, `promptsListChanged`, `resourcesListChanged`, as its
 * capabilities declare `listChanged`) and for the updates of the resources subscribed now
 * (`resourceSubscriptions`, when it declares `resources.subscribe`).
 *
 * - **A new set of URIs is a new subscription.** The filter of a standing request cannot be
 *   changed: the new one is made, and once the server acknowledges it, the old one is closed
 *   (no gap between the two: an update both carry is one update to each watcher's queue).
 * - **Acknowledged.** A subscription counts once its `notifications/subscriptions/acknowledged`
 *   arrives, within the exchange's timeout; it says which part of the filter the server honours.
 *   Who waits for a set of URIs (`update`) learns which of them were honoured. An
 *   acknowledgement is not matched to its request (the transports keep JSON-RPC ids to
 *   themselves): the first after a subscription is sent is its own; a server that acknowledges
 *   again is believed, as it would be if it lied the first time.
 * - **Dropped, made again.** A stream that drops (or is never acknowledged in time) is made
 *   again after 1, 2, 4 ... at most 30 s; its acknowledgement is a gap (`reopened`): every list
 *   and every subscribed resource may have changed meanwhile.
 * - **A replacement that fails** (refused, dropped, never acknowledged) while an older one
 *   stands: the older one still serves; who waited for the new set fails at once, with the
 *   refusal or a `TransportFailure` (`stream-ended`, `not-applied`).
 * - **Ended.** The server's own end (a result) or refusal ends the subscription for the life of
 *   the session: who waits then fails.
 * - **Made after the discovery's listing.** The first subscription is sent once discovery's
 *   `tools/list` is answered: a server may spend as much on a subscription as on a listing, and
 *   the two at once make discovery wait for both. It goes out one turn of the event loop after
 *   that, once the connection is handed back: building it no longer delays the connect, and
 *   what the caller does at once (its first call) goes first; a connection closed at once (a
 *   CLI run, a catalog's one call) never sends it, and keeps its socket for the next connect. A
 *   change the server announces between the listing's snapshot and the subscription's start
 *   is not heard, as it would not be from a subscription sent beside the listing that the
 *   server took after it.
 *
 * One fiber in the session's scope runs it: closing the session closes the stream.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { McpConnectionError } from "../McpConnectionError.js"
import { backoffMs } from "./backoff.js"
import * as Failures from "./failures.js"
import type { Exchange, Response } from "./transport/transport.js"

/** What the connection's notifications give the subscription (`internal/notifications.ts`). */
export interface ListenHooks {
  /** The next acknowledgement's honoured filter. */
  readonly nextAcknowledgement: Effect.Effect<Deferred.Deferred<Readonly<Record<string, unknown>>>>
  /** A subscription made again after a drop: what the server said meanwhile is lost. */
  readonly reopened: Effect.Effect<void>
  /** The subscription ended for good (with the server's refusal, if it refused): the resources' watchers end. */
  readonly ended?: (refusal: McpConnectionError | undefined) => Effect.Effect<void>
}

/** What the server declares it can announce. */
export interface Announces {
  readonly tools: boolean
  readonly prompts: boolean
  readonly resources: boolean
  readonly subscribe: boolean
}

/** The session's subscription, as the connection's resource subscriptions see it. */
export interface Listener {
  /**
   * Lets the first subscription be made. Discovery calls it once its listing is answered, so
   * that the subscription does not compete with the listing at the server (see the module
   * comment); until then an `update` waits.
   */
  readonly start: Effect.Effect<void>
  /**
   * Subscribes to exactly `uris` from now on; succeeds once a subscription with them is
   * acknowledged, with the URIs the server honours. Fails when the subscription ended.
   */
  readonly update: (uris: ReadonlySet<string>, exchange: Exchange) => Effect.Effect<ReadonlySet<string>, McpConnectionError>
  /**
   * The URIs of the next subscription, without making one now: after an `update` that failed or
   * was not honoured, the one open may ask for more than is subscribed (its updates reach no
   * watcher); the next one made (a drop, another `update`) asks for these.
   */
  readonly retract: (uris: ReadonlySet<string>) => void
}

/**
 * One turn of the event loop (not a delay): the connection is handed back, and what its caller
 * does at once (a first call, or closing it) goes first.
 */
const nextTurn: Effect.Effect<void> = Effect.async((resume) => {
  if (typeof setImmediate !== "function") {
    const timer = setTimeout(() => resume(Effect.void), 0)
    return Effect.sync(() => clearTimeout(timer))
  }
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The filter a subscription asks for. */
const filterOf = (announces: Announces, uris: ReadonlySet<string>): Record<string, unknown> => ({
  ...(announces.tools ? { toolsListChanged: true } : {}),
  ...(announces.prompts ? { promptsListChanged: true } : {}),
  ...(announces.resources ? { resourcesListChanged: true } : {}),
  ...(announces.subscribe && uris.size > 0 ? { resourceSubscriptions: [...uris] } : {})
})

/** The URIs an acknowledgement honours. */
const honouredUris = (honoured: Readonly<Record<string, unknown>>): ReadonlySet<string> => {
  const uris = honoured["resourceSubscriptions"]
  return new Set(Array.isArray(uris) ? uris.filter((u): u is string => typeof u === "string") : [])
}

interface Waiter {
  readonly generation: number
  readonly done: Deferred.Deferred<ReadonlySet<string>, McpConnectionError>
  readonly exchange: Exchange
}

export const make = (options: {
  readonly subscribe: (params: Record<string, unknown>) => Effect.Effect<Response, McpConnectionError>
  readonly hooks: ListenHooks
  readonly announces: Announces
  /** How long an acknowledgement may take. */
  readonly acknowledgementTimeoutMs: number
}): Effect.Effect<Listener, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { announces, hooks } = options
    let uris: ReadonlySet<string> = new Set()
    /** Bumped by each `update`; a subscription made at generation g serves the waiters up to g. */
    let generation = 0
    let ended = false
    const waiters: Array<Waiter> = []
    const wanted = yield* Queue.sliding<void>(1)
    const started = yield* Deferred.make<void>()

    const settle = (upTo: number, honoured: ReadonlySet<string>) =>
      Effect.forEach(
        waiters.splice(0).filter((w) => {
          if (w.generation <= upTo) return true
          waiters.push(w)
          return false
        }),
        (w) => Deferred.succeed(w.done, honoured),
        { discard: true }
      )
    /** The server ended it for good (`failure`: its refusal, if it refused). */
    const endAll = (failure: McpConnectionError | undefined) =>
      Effect.suspend(() => {
        ended = true
        return Effect.zipRight(
          Effect.forEach(
            waiters.splice(0),
            (w) => Deferred.fail(w.done, Failures.transport(w.exchange, "stream-ended", "not-applied")),
            { discard: true }
          ),
          hooks.ended?.(failure) ?? Effect.void
        )
      })
    const refusalOf = (exit: Either.Either<unknown, McpConnectionError>) => Either.isLeft(exit) ? exit.left : undefined

    type Ending = "dropped" | "ended"
    /** How a subscription's request ended: the server's own end or refusal is final. */
    const endingOf = (exit: Either.Either<unknown, McpConnectionError>): Ending =>
      Either.isRight(exit) || exit.left._tag === "RemoteRefusal" || exit.left._tag === "ProtocolViolation" ? "ended" : "dropped"

    type Subscription = Fiber.RuntimeFiber<Either.Either<Response, McpConnectionError>>
    /** The wait before the next subscription, `failures` of them having failed in a row since. */
    const delayOf = (failures: number) => Duration.millis(backoffMs(failures + 1))
    /**
     * Who waits up to `upTo` fails: their subscription was refused, dropped or never
     * acknowledged while the previous one still serves (its URIs, not theirs).
     */
    const fail = (upTo: number, failure: (exchange: Exchange) => McpConnectionError) =>
      Effect.forEach(
        waiters.splice(0).filter((w) => {
          if (w.generation <= upTo) return true
          waiters.push(w)
          return false
        }),
        (w) => Deferred.fail(w.done, failure(w.exchange)),
        { discard: true }
      )

    /**
     * One loop over explicit state (no recursion: a session's subscribes and drops add no
     * frames). Each turn makes one subscription; the previous one (if any) is closed once this
     * one is acknowledged. Then it waits for the one standing to end, or for another set of URIs.
     */
    const loop = Effect.gen(function*() {
      yield* Deferred.await(started)
      yield* nextTurn
      let previous: Subscription | undefined = undefined
      let failures = 0
      let gap = false
      while (true) {
        yield* Queue.takeAll(wanted)
        const at = generation
        const filter = filterOf(announces, uris)
        if (Object.keys(filter).length === 0) {
          // Nothing to ask for (no URI subscribed, nothing else announced): no subscription.
          if (previous !== undefined) yield* Fiber.interrupt(previous)
          yield* settle(at, new Set())
          yield* Queue.take(wanted)
          previous = undefined
          failures = 0
          gap = false
          continue
        }
        const ack = yield* hooks.nextAcknowledgement
        const fiber = yield* Effect.fork(Effect.either(options.subscribe({ notifications: filter })))
        const first = yield* Effect.raceFirst(
          Effect.map(Deferred.await(ack), (honoured) => ({ _tag: "acknowledged", honoured }) as const),
          Effect.map(Fiber.join(fiber), (exit) => ({ _tag: "over", exit }) as const)
        ).pipe(Effect.timeoutTo({
          duration: Duration.millis(options.acknowledgementTimeoutMs),
          onSuccess: (x) => x,
          onTimeout: () => ({ _tag: "late" }) as const
        }))
        let standing: Subscription
        if (first._tag !== "acknowledged") {
          yield* Fiber.interrupt(fiber)
          const final = first._tag === "over" && endingOf(first.exit) === "ended"
          if (previous === undefined) {
            if (final && first._tag === "over") return yield* endAll(refusalOf(first.exit))
            yield* Effect.sleep(delayOf(failures))
            failures++
            gap = true
            continue
          }
          // The previous one still serves; who waited for this one fails: with the server's
          // refusal, or (dropped, never acknowledged) a transport failure, not applied.
          const refusal = first._tag === "over" && final ? refusalOf(first.exit) : undefined
          yield* fail(at, (exchange) => refusal ?? Failures.transport(exchange, "stream-ended", "not-applied"))
          if (!final) failures++
          standing = previous
        } else {
          if (previous !== undefined) yield* Fiber.interrupt(previous)
          yield* settle(at, honouredUris(first.honoured))
          if (gap) yield* hooks.reopened
          failures = 0
          standing = fiber
        }
        // Waits for the subscription to end (made again after a drop) or for another set of URIs.
        gap = false
        previous = standing
        if (generation !== at) continue
        const next = yield* Effect.raceFirst(
          Effect.map(Queue.take(wanted), () => ({ _tag: "wanted" }) as const),
          Effect.map(Fiber.join(standing), (exit) => ({ _tag: "over", exit }) as const)
        )
        if (next._tag === "wanted") continue
        if (endingOf(next.exit) === "ended") return yield* endAll(refusalOf(next.exit))
        yield* Effect.sleep(delayOf(failures))
        previous = undefined
        failures++
        gap = true
      }
    })

    yield* Effect.forkScoped(Effect.interruptible(loop))

    const listener: Listener = {
      start: Effect.asVoid(Deferred.succeed(started, undefined)),
      update: (next, exchange) =>
        Effect.gen(function*() {
          if (ended) return yield* Effect.fail(Failures.transport(exchange, "stream-ended", "not-sent"))
          uris = new Set(next)
          const done = yield* Deferred.make<ReadonlySet<string>, McpConnectionError>()
          waiters.push({ generation: ++generation, done, exchange })
          yield* Queue.offer(wanted, undefined)
          return yield* Deferred.await(done)
        }),
      retract: (next) => {
        uris = new Set(next)
      }
    }
    return listener
  })

/** What a server's capabilities say it can announce. */
export const announcesOf = (capabilities: Readonly<Record<string, unknown>>): Announces => {
  const flag = (name: string, key: string) => {
    const entry = capabilities[name]
    return isRecord(entry) && entry[key] === true
  }
  return {
    tools: flag("tools", "listChanged"),
    prompts: flag("prompts", "listChanged"),
    resources: flag("resources", "listChanged"),
    subscribe: flag("resources", "subscribe")
  }
}
