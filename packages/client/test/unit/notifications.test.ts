/**
 * The routing of the server's notifications (`internal/notifications.ts`), the relisting of
 * changed tools (`internal/relisting.ts`) and a call's idle timeout (`internal/idle.ts`): pure
 * parts, no transport.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Option, Queue, TestClock } from "effect"
import { withIdleTimeout } from "../../src/internal/idle.js"
import * as Notifications from "../../src/internal/notifications.js"
import { relistOnChange } from "../../src/internal/relisting.js"
import type { Progress } from "../../src/McpSchema.js"

const notification = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: "2.0" as const, method, params })

describe("notifications", () => {
  it.effect("gives a call the progress of its own token, only when it grows, until released", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const first: Array<Progress> = []
      const second: Array<Progress> = []
      const a = router.trackProgress((p) => first.push(p))
      const b = router.trackProgress((p) => second.push(p))
      expect(a.token).not.toBe(b.token)
      const progress = (token: string, params: Record<string, unknown>) =>
        router.take(notification("notifications/progress", { progressToken: token, ...params }))
      yield* progress(a.token, { progress: 1, total: 3, message: "one" })
      // A repeat and a decrease: dropped.
      yield* progress(a.token, { progress: 1 })
      yield* progress(a.token, { progress: 0.5 })
      yield* progress(b.token, { progress: 7 })
      yield* progress(a.token, { progress: 2.5 })
      // A stranger's token, a string, an infinity (not JSON, but a decoder may produce one).
      yield* progress("someone-else", { progress: 9 })
      yield* progress(a.token, { progress: "lots" })
      yield* progress(a.token, { progress: Number.POSITIVE_INFINITY })
      a.release()
      yield* progress(a.token, { progress: 3 })
      expect(first).toEqual([{ progress: 1, total: 3, message: "one" }, { progress: 2.5 }])
      expect(second).toEqual([{ progress: 7 }])
    }))

  it.effect("marks the tools changed on a list change and a stream reopened; one mark for changes not yet listed; an acknowledgement goes to its waiter, not to the tools", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const marks = () => Effect.map(Queue.takeAll(router.toolsChanged), Chunk.size)
      const acknowledged = notification("notifications/subscriptions/acknowledged", { notifications: { toolsListChanged: true } })
      // Nobody waits: dropped.
      yield* router.take(acknowledged)
      expect(yield* marks()).toBe(0)
      const waiting = yield* router.nextAcknowledgement
      yield* router.take(acknowledged)
      expect(yield* Deferred.await(waiting)).toEqual({ toolsListChanged: true })
      expect(yield* marks()).toBe(0)
      yield* router.take(notification("notifications/tools/list_changed"))
      yield* router.take(notification("notifications/tools/list_changed"))
      expect(yield* marks()).toBe(1)
      yield* router.reopened
      expect(yield* marks()).toBe(1)
      // A 2025 stream reopened: the subscriptions are to be made again, once.
      expect(Chunk.size(yield* Queue.takeAll(router.resubscribe))).toBe(1)
      yield* router.take(notification("notifications/unknown"))
      expect(yield* marks()).toBe(0)
    }))

  it.effect("keeps the newest log messages for a reader that falls behind, and drops malformed ones", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(2)
      const reader = yield* router.logs.subscribe
      for (const data of ["a", "b", "c"]) yield* router.take(notification("notifications/message", { level: "info", data }))
      yield* router.take(notification("notifications/message", { level: "loud", data: "x" }))
      yield* router.take(notification("notifications/message", { data: "no level" }))
      const kept = yield* Queue.takeAll(reader)
      expect(Chunk.toReadonlyArray(kept).map((m) => m.data)).toEqual(["b", "c"])
    }).pipe(Effect.scoped))
})

describe("relistOnChange", () => {
  it.scoped("lists once a change has waited the delay; changes during the wait or the listing share one listing more", () =>
    Effect.gen(function*() {
      const changes = yield* Queue.sliding<void>(1)
      const listings = yield* Queue.unbounded<Deferred.Deferred<void>>()
      let listed = 0
      // Each listing waits until the test lets it end.
      const list = Effect.flatMap(Deferred.make<void>(), (done) =>
        Effect.zipRight(Queue.offer(listings, done), Effect.ensuring(Deferred.await(done), Effect.sync(() => listed++))))
      yield* Effect.forkScoped(relistOnChange(changes, 1_000, list))
      yield* Queue.offer(changes, undefined)
      yield* TestClock.adjust("999 millis")
      expect(yield* Queue.size(listings)).toBe(0)
      // Announced during the wait: the same listing.
      yield* Queue.offer(changes, undefined)
      yield* TestClock.adjust("1 millis")
      const first = yield* Queue.take(listings)
      // Two changes during the listing: one listing more, after the delay.
      yield* Queue.offer(changes, undefined)
      yield* Queue.offer(changes, undefined)
      yield* Deferred.succeed(first, undefined)
      yield* TestClock.adjust("1 second")
      const second = yield* Queue.take(listings)
      yield* Deferred.succeed(second, undefined)
      yield* TestClock.adjust("1 minute")
      expect(yield* Queue.size(listings)).toBe(0)
      expect(listed).toBe(2)
    }))

  it.scoped("a listing that fails leaves the loop listening", () =>
    Effect.gen(function*() {
      const changes = yield* Queue.sliding<void>(1)
      const attempts = yield* Queue.unbounded<number>()
      let attempt = 0
      const failing = Effect.suspend(() => Effect.zipRight(Queue.offer(attempts, ++attempt), Effect.fail("refused")))
      yield* Effect.forkScoped(relistOnChange(changes, 10, failing))
      for (const expected of [1, 2]) {
        yield* Queue.offer(changes, undefined)
        yield* TestClock.adjust("10 millis")
        expect(yield* Queue.take(attempts)).toBe(expected)
      }
    }))
})

describe("withIdleTimeout", () => {
  it.effect("fails when no progress comes for the idle time, each touch starting the wait anew", () =>
    Effect.gen(function*() {
      const touched = yield* Deferred.make<() => void>()
      const released = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(withIdleTimeout(1_000, () => "idle" as const, (touch) =>
        Effect.zipRight(
          Deferred.succeed(touched, touch),
          Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(released, undefined)))
        )))
      const touch = yield* Deferred.await(touched)
      yield* TestClock.adjust("900 millis")
      touch()
      yield* TestClock.adjust("900 millis")
      touch()
      yield* TestClock.adjust("900 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("100 millis")
      expect(yield* Effect.flip(Fiber.join(fiber))).toBe("idle")
      // The operation was interrupted (its release ran) before the failure came back.
      expect(yield* Deferred.isDone(released)).toBe(true)
    }))

  it.effect("passes the operation's own result through", () =>
    Effect.gen(function*() {
      expect(yield* withIdleTimeout(1_000, () => "idle", () => Effect.succeed(42))).toBe(42)
      expect(yield* Effect.flip(withIdleTimeout(1_000, () => "idle", () => Effect.fail("boom")))).toBe("boom")
    }))
})
