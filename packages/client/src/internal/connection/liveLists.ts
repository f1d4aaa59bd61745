/**
 * The live prompt and resource lists (docs/DESIGN.md, "Subscriptions"): `promptList` and
 * `resourceList`. Lazy: nothing is listed before the first `get` or `changes` (most callers
 * never need them, and discovery lists only tools). From then on, each change the server
 * announces (`notifications/prompts/list_changed`, `notifications/resources/list_changed`) or
 * that a gap may hide is listed again like tools (`internal/relisting.ts`: after `relistDelay`,
 * announcements meanwhile shared), every page under one deadline of the call budget. A listing
 * that fails leaves the list as it was (its failure is observed); `changes` says a new list only
 * when it differs.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.js"
import type { McpConnectionError } from "../../McpConnectionError.js"
import { relistOnChange } from "../relisting.js"
import { type Core, sameList } from "./core.js"

export const make = <A>(
  core: Core,
  list: Effect.Effect<ReadonlyArray<A>, McpConnectionError>,
  changed: Queue.Dequeue<void>
): Effect.Effect<McpClient.LiveList<A>> =>
  Effect.sync(() => {
    // Built at the first `get` or `changes`: most connections never ask, and a connection is
    // made faster without it (two per connection).
    let built: McpClient.LiveList<A> | undefined
    const live = Effect.suspend(() => built !== undefined ? Effect.succeed(built) : Effect.map(build(core, list, changed), (made) => (built ??= made)))
    return {
      get: Effect.flatMap(live, (made) => made.get),
      changes: Stream.unwrap(Effect.map(live, (made) => made.changes))
    }
  })

const build = <A>(
  core: Core,
  list: Effect.Effect<ReadonlyArray<A>, McpConnectionError>,
  changed: Queue.Dequeue<void>
): Effect.Effect<McpClient.LiveList<A>> =>
  Effect.gen(function*() {
    const ref = yield* SubscriptionRef.make<ReadonlyArray<A> | undefined>(undefined)
    const lock = yield* Effect.makeSemaphore(1)
    // Once the list is known only the relisting fiber lists again (before, only `get`, under
    // the lock): one check-and-set at a time.
    const fetch = Effect.flatMap(list, (items) =>
      Effect.flatMap(SubscriptionRef.get(ref), (current) =>
        current !== undefined && sameList(items, current)
          ? Effect.succeed(current)
          : Effect.as(SubscriptionRef.set(ref, items), items)))
    // Changes are listed only once someone asked for the list: its relisting fiber starts with
    // the first listing (under the lock, once), and what was announced before it is dropped
    // (that listing is made after it). A connection that never asks costs no fiber.
    let started = false
    const start = Effect.suspend(() => {
      if (started) return Effect.void
      started = true
      return Effect.zipRight(
        Queue.takeAll(changed),
        Effect.forkIn(
          relistOnChange(
            changed,
            core.policy.relistDelayMs,
            Effect.flatMap(SubscriptionRef.get(ref), (current): Effect.Effect<unknown, McpConnectionError> => current === undefined ? Effect.void : fetch)
          ),
          core.scope
        )
      )
    })
    const known = (otherwise: Effect.Effect<ReadonlyArray<A>, McpConnectionError>) =>
      Effect.flatMap(SubscriptionRef.get(ref), (current) => current !== undefined ? Effect.succeed(current) : otherwise)
    const get = known(lock.withPermits(1)(known(Effect.zipRight(start, fetch))))
    return {
      get,
      changes: Stream.unwrap(Effect.as(get, Stream.filterMap(ref.changes, Option.fromNullable)))
    }
  })
