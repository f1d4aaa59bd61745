/**
 * The per-call deadline (`internal/deadline.ts`): the same semantics as `Effect.timeoutFail`
 * with a native timer under the live clock, and Effect's own timer under a `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import { withDeadline } from "../src/internal/deadline.js"

describe("withDeadline", () => {
  it.live("passes the operation's success and failure through", () =>
    Effect.gen(function*() {
      expect(yield* withDeadline(Effect.succeed(1), 1_000, () => "late")).toBe(1)
      expect(yield* Effect.flip(withDeadline(Effect.fail("boom"), 1_000, () => "late"))).toBe("boom")
      const slow = Effect.as(Effect.sleep("20 millis"), "slow")
      expect(yield* withDeadline(slow, 1_000, () => "late")).toBe("slow")
    }))

  it.live("fails with onTimeout at the deadline and interrupts the operation", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const operation = Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      const started = Date.now()
      const error = yield* Effect.flip(withDeadline(operation, 50, () => "late" as const))
      expect(error).toBe("late")
      expect(Date.now() - started).toBeGreaterThanOrEqual(45)
      // The operation is interrupted without being waited for, as Effect.timeoutFail does.
      yield* Deferred.await(interrupted).pipe(Effect.timeout("2 seconds"))
    }))

  it.live("interrupting the caller interrupts the operation and waits for its finalizers", () =>
    Effect.gen(function*() {
      let finalized = false
      const started = yield* Deferred.make<void>()
      const operation = Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.never),
        Effect.ensuring(Effect.sleep("30 millis").pipe(Effect.zipRight(Effect.sync(() => {
          finalized = true
        }))))
      )
      const fiber = yield* Effect.fork(withDeadline(operation, 10_000, () => "late"))
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(finalized).toBe(true)
    }))

  it.live("a deadline past setTimeout's range does not fire at once", () =>
    Effect.gen(function*() {
      const value = yield* withDeadline(Effect.as(Effect.sleep("20 millis"), "done"), 2 ** 31, () => "late")
      expect(value).toBe("done")
    }))

  it.effect("follows a TestClock (virtual time drives the deadline)", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(withDeadline(Effect.never, 60_000, () => "late"))
      yield* TestClock.adjust("59 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      expect(yield* Effect.flip(Fiber.join(fiber))).toBe("late")
    }))
})
