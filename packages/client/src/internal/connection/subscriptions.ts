/**
 * Resource subscriptions (docs/DESIGN.md, "Subscriptions"): `subscribeResource` and
 * `resourceUpdates`, the connection's `changes`, and the fiber that makes the subscriptions
 * again after a gap.
 *
 * - **Counted.** Several subscribers of one URI share one subscription of the server's: the
 *   first makes it, the last ends it. One change of the set at a time (a semaphore held inside
 *   the operation's deadline), so that a subscribe and an unsubscribe of one URI never cross on
 *   the wire.
 * - **Per era.** 2025 revisions: `resources/subscribe` and `resources/unsubscribe`, each under the
 *   call budget (every subscriber sends its own `resources/subscribe`: the server keeps one);
 *   2026-07-28: the set of URIs becomes the filter of a new `subscriptions/listen`
 *   (`internal/listen.ts`), the subscribe done once it is acknowledged.
 * - **Refused before I/O** when the current session's server does not declare
 *   `resources.subscribe`: `InvalidOption` (`undeclared-capability`, `not-sent`).
 * - **Made again.** After a 2025 stream reopened or a new session, every URI still subscribed is
 *   subscribed again (2026-07-28: the subscription made again carries them), then a gap is
 *   published: every list and every subscribed URI, `gap: true`.
 * - **Ended.** Closing the subscriber's scope unsubscribes, under the call budget capped at the
 *   release timeout, and the whole of it (the lock, a new session) within the release timeout:
 *   a server that does not answer cannot hold a scope open; its failure is observed, not raised.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import { InvalidOption } from "../../McpConnectionError.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import type { Exchange } from "../transport/transport.js"
import * as Failures from "../failures.js"
import * as Listen from "../listen.js"
import type { Discovered } from "../liveSession.js"
import type { Listing } from "../listing.js"
// The longest URI one may subscribe to: as long as the router accepts in an update.
import { maxUriLength } from "../notifications.js"
import { relistOnChange } from "../relisting.js"
import type { Core } from "./core.js"

export interface Subscriptions {
  readonly changes: McpClient.Connection["changes"]
  readonly subscribeResource: McpClient.Connection["subscribeResource"]
  readonly resourceUpdates: McpClient.Connection["resourceUpdates"]
}

/** Whether the session's server declares `resources.subscribe`. */
const canSubscribe = (on: Discovered<Listing>) => Listen.announcesOf(on.session.capabilities).subscribe

const unsupported = (exchange: Exchange, outcome: "not-sent" | "not-applied") =>
  new InvalidOption({ ...Failures.fields(exchange), option: "uri", reason: "undeclared-capability", outcome, retryable: false })

export const make = (core: Core): Effect.Effect<Subscriptions> =>
  Effect.gen(function*() {
    const { notifications, policy } = core
    /** Subscribers by URI: the server's subscription lives while the count is above 0. */
    const counts = new Map<string, number>()
    const lock = yield* Effect.makeSemaphore(1)
    const subscribed = () => new Set(counts.keys())

    /** The 2025 request of one URI on `on`'s session. */
    const send = (on: Discovered<Listing>, method: "resources/subscribe" | "resources/unsubscribe", uri: string, exchange: Exchange) =>
      Effect.map(on.session.request(method, { uri }, exchange), (response) => ({ value: undefined, bytes: response.bytes }))

    const add = (uri: string, options: PhasePolicy.BudgetOptions | undefined) =>
      core.callPhase(
        "resources/subscribe",
        "subscribe-resource",
        options,
        typeof uri !== "string" || uri.length === 0 || uri.length > maxUriLength ? "uri" : undefined,
        (on, exchange) =>
          lock.withPermits(1)(Effect.gen(function*() {
            const count = counts.get(uri) ?? 0
            if (on.session.listener === undefined) {
              const sent = yield* send(on, "resources/subscribe", uri, exchange)
              counts.set(uri, count + 1)
              return sent
            }
            counts.set(uri, count + 1)
            if (count > 0) return { value: undefined, bytes: 0 }
            const listener = on.session.listener
            // Failed or not honoured: not subscribed, and the next subscription leaves it out.
            const withdraw = Effect.sync(() => {
              counts.delete(uri)
              listener.retract(subscribed())
            })
            const honoured = yield* Effect.onError(listener.update(subscribed(), exchange), () => withdraw)
            if (honoured.has(uri)) return { value: undefined, bytes: 0 }
            yield* withdraw
            return yield* Effect.fail(unsupported(exchange, "not-applied"))
          }))
      )

    /**
     * One subscriber gone; the last of a URI ends the server's subscription, under the call
     * budget capped at the release timeout. Never fails (a failure is observed).
     */
    const remove = (uri: string) =>
      lock.withPermits(1)(Effect.suspend(() => {
        const count = counts.get(uri) ?? 0
        if (count > 1) {
          counts.set(uri, count - 1)
          return Effect.void
        }
        counts.delete(uri)
        const timeout = Duration.millis(Math.min(policy.call.timeoutMs, policy.releaseTimeoutMs))
        return core.callPhase("resources/unsubscribe", "unsubscribe-resource", { timeout }, undefined, (on, exchange) =>
          on.session.listener === undefined
            ? send(on, "resources/unsubscribe", uri, exchange)
            : Effect.as(on.session.listener.update(subscribed(), exchange), { value: undefined, bytes: 0 }))
      })).pipe(
        Effect.ignore,
        // The whole of it, a wait for the lock or for a new session included: a closing scope is
        // held no longer than the release timeout.
        Effect.timeoutOption(Duration.millis(policy.releaseTimeoutMs)),
        Effect.asVoid
      )

    /**
     * The updates of one URI until the scope closes; once the server ends them for good (a
     * 2026-07-28 subscription ended), the stream fails with its refusal or `TransportFailure`
     * (`stream-ended`, `not-applied`).
     */
    const subscribe = (uri: string, options: PhasePolicy.BudgetOptions | undefined) =>
      Effect.gen(function*() {
        const budget = yield* PhasePolicy.callBudget(policy, options)
        const exchange: Exchange = { stage: "subscribe-resource", phase: "call", budget }
        // Refused before any I/O when the server cannot: the session's own capabilities say so.
        if (!canSubscribe(core.live.current())) return yield* Effect.fail(unsupported(exchange, "not-sent"))
        // Watched first: an update that comes right after the subscription is not lost.
        const watch = yield* Effect.acquireRelease(notifications.watch(uri), (w) => w.release)
        yield* Effect.acquireRelease(add(uri, options), () => remove(uri))
        const ended = Effect.flatMap(watch.ended, (refusal) => Effect.fail(refusal ?? Failures.transport(exchange, "stream-ended", "not-applied")))
        return Stream.interruptWhen(Stream.fromQueue(watch.updates), ended)
      })

    // Its stream (no error channel) ends when the updates end for good.
    const subscribeResource: Subscriptions["subscribeResource"] = (uri, options) => Effect.map(subscribe(uri, options), Stream.catchAll(() => Stream.empty))

    // After a gap: the subscriptions made again (2025), then the gap published.
    const again = Effect.gen(function*() {
      const on = core.live.current()
      if (on.session.listener === undefined && canSubscribe(on)) {
        const budget = yield* PhasePolicy.callBudget(policy, undefined)
        const exchange: Exchange = { stage: "subscribe-resource", phase: "call", budget }
        yield* lock.withPermits(1)(Effect.forEach(
          subscribed(),
          (uri) => Effect.ignore(core.observed("resources/subscribe", exchange, (current) => send(current, "resources/subscribe", uri, exchange))),
          { discard: true }
        ))
      }
      yield* notifications.missed
    }).pipe(Effect.catchAllCause(() => Effect.void))
    yield* Effect.forkIn(relistOnChange(notifications.resubscribe, 0, again), core.scope)

    return {
      changes: notifications.changes.stream,
      subscribeResource,
      resourceUpdates: (uri, options) => Stream.unwrapScoped(subscribe(uri, options))
    }
  })
