/**
 * The routing of the server's notifications (`internal/notifications.ts`) and a call's idle
 * timeout (`internal/idle.ts`): pure parts, no transport.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Option, PubSub, Queue, TestClock } from "effect"
import { withIdleTimeout } from "../../src/internal/idle.js"
import * as Notifications from "../../src/internal/notifications.js"
import type { Progress } from "../../src/McpSchema.js"

const notification = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: "2.0" as const, method, params })

describe("notifications", () => {
  it("gives a call the progress of its own token, only when it grows, until released", () => {
    const router = Notifications.make(10)
    const first: Array<Progress> = []
    const second: Array<Progress> = []
    const a = router.trackProgress((p) => first.push(p))
    const b = router.trackProgress((p) => second.push(p))
    expect(a.token).not.toBe(b.token)
    router.take(notification("notifications/progress", { progressToken: a.token, progress: 1, total: 3, message: "one" }))
    router.take(notification("notifications/progress", { progressToken: a.token, progress: 1 }))
    router.take(notification("notifications/progress", { progressToken: a.token, progress: 0.5 }))
    router.take(notification("notifications/progress", { progressToken: b.token, progress: 7 }))
    router.take(notification("notifications/progress", { progressToken: a.token, progress: 2.5 }))
    router.take(notification("notifications/progress", { progressToken: "someone-else", progress: 9 }))
    router.take(notification("notifications/progress", { progressToken: a.token, progress: "lots" }))
    router.take(notification("notifications/progress", { progressToken: a.token, progress: Number.POSITIVE_INFINITY }))
    a.release()
    router.take(notification("notifications/progress", { progressToken: a.token, progress: 3 }))
    expect(first).toEqual([{ progress: 1, total: 3, message: "one" }, { progress: 2.5 }])
    expect(second).toEqual([{ progress: 7 }])
    // The repeat, the decrease, the stranger's token, the string, the infinity (not JSON, but a
    // decoder may produce one) and the report after the release.
    expect(router.dropped()).toBe(6)
  })

  it("announces tool list changes, and every subscription acknowledged after the first", () => {
    const router = Notifications.make(10)
    let changes = 0
    router.onToolsChanged(() => changes++)
    router.take(notification("notifications/tools/list_changed"))
    router.take(notification("notifications/subscriptions/acknowledged", { notifications: { toolsListChanged: true } }))
    expect(changes).toBe(1)
    router.take(notification("notifications/subscriptions/acknowledged", { notifications: { toolsListChanged: true } }))
    expect(changes).toBe(2)
  })

  it.effect("keeps the newest log messages for a reader that falls behind, and drops malformed ones", () =>
    Effect.gen(function*() {
      const router = Notifications.make(2)
      const reader = yield* PubSub.subscribe(router.logs)
      for (const data of ["a", "b", "c"]) router.take(notification("notifications/message", { level: "info", data }))
      router.take(notification("notifications/message", { level: "loud", data: "x" }))
      router.take(notification("notifications/message", { data: "no level" }))
      router.take(notification("notifications/unknown"))
      const kept = yield* Queue.takeAll(reader)
      expect(Chunk.toReadonlyArray(kept).map((m) => m.data)).toEqual(["b", "c"])
      expect(router.dropped()).toBe(3)
    }).pipe(Effect.scoped))
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
