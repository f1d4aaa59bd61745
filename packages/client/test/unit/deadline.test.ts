/**
 * The per-call deadline (`internal/deadline.ts`): the same semantics as `Effect.timeoutFail`
 * with a native timer under the live clock, and Effect's own timer under a `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberId, TestClock } from "effect"
import { withDeadline } from "../../src/internal/deadline.js"

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
      // The operation was interrupted and waited for before the deadline failure came back.
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))

  it.live("at the deadline, the operation's release finishes before the deadline failure (live clock)", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      // A resource whose bounded release takes ~100 ms, held by an operation that never ends.
      const operation = Effect.scoped(
        Effect.addFinalizer(() =>
          Effect.sleep("100 millis").pipe(Effect.zipRight(Effect.sync(() => {
            events.push("released")
          })))
        ).pipe(Effect.zipRight(Effect.never))
      )
      const error = yield* Effect.flip(withDeadline(operation, 30, () => "late" as const))
      events.push("deadline")
      expect(error).toBe("late")
      expect(events).toEqual(["released", "deadline"])
    }))

  it.effect("at the deadline, the operation's release finishes before the deadline failure (TestClock)", () =>
    Effect.gen(function*() {
      const releasing = yield* Deferred.make<void>()
      let released = false
      const operation = Effect.never.pipe(Effect.onInterrupt(() =>
        Deferred.succeed(releasing, undefined).pipe(
          Effect.zipRight(Effect.sleep("100 millis")),
          Effect.zipRight(Effect.sync(() => {
            released = true
          }))
        )
      ))
      const fiber = yield* Effect.fork(withDeadline(operation, 60_000, () => "late"))
      yield* TestClock.adjust("60 seconds")
      yield* Deferred.await(releasing)
      // The deadline has passed, but the release is still under way: no result yet.
      expect(released).toBe(false)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("100 millis")
      expect(yield* Effect.flip(Fiber.join(fiber))).toBe("late")
      expect(released).toBe(true)
    }))

  // An operation that cannot be interrupted finishes on its own after the deadline; it is
  // waited for, and the result is still the deadline failure (its value is dropped), as with
  // Effect.timeoutFail.
  it.live("an operation that finishes while being interrupted is waited for; the deadline still fails (live clock)", () =>
    Effect.gen(function*() {
      let finished = false
      const operation = Effect.uninterruptible(
        Effect.sleep("100 millis").pipe(Effect.zipRight(Effect.sync(() => {
          finished = true
          return "done"
        })))
      )
      const error = yield* Effect.flip(withDeadline(operation, 20, () => "late" as const))
      expect(error).toBe("late")
      expect(finished).toBe(true)
    }))

  it.effect("an operation that finishes while being interrupted is waited for; the deadline still fails (TestClock)", () =>
    Effect.gen(function*() {
      let finished = false
      const operation = Effect.uninterruptible(
        Effect.sleep("2 minutes").pipe(Effect.zipRight(Effect.sync(() => {
          finished = true
          return "done"
        })))
      )
      const fiber = yield* Effect.fork(withDeadline(operation, 60_000, () => "late"))
      yield* TestClock.adjust("60 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("60 seconds")
      expect(yield* Effect.flip(Fiber.join(fiber))).toBe("late")
      expect(finished).toBe(true)
    }))

  // Once the deadline has fired, interrupting the caller does not cut the wait for the
  // operation's release short: the caller's own finalizers run after that release.
  const interruptDuringRelease = (timeoutMs: number, passDeadline: Effect.Effect<void>) => {
    const gate = Deferred.unsafeMake<void>(FiberId.none)
    return Effect.gen(function*() {
      const events: Array<string> = []
      const releasing = yield* Deferred.make<void>()
      const operation = Effect.never.pipe(Effect.onInterrupt(() =>
        Deferred.succeed(releasing, undefined).pipe(
          Effect.zipRight(Deferred.await(gate)),
          Effect.zipRight(Effect.sync(() => {
            events.push("released")
          }))
        )
      ))
      const caller = withDeadline(operation, timeoutMs, () => "late").pipe(
        Effect.ensuring(Effect.sync(() => {
          events.push("caller finalized")
        }))
      )
      const fiber = yield* Effect.fork(caller)
      yield* passDeadline
      yield* Deferred.await(releasing)
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      expect(events).toEqual([])
      expect(fiber.unsafePoll()).toBeNull()
      yield* Deferred.succeed(gate, undefined)
      const exit = yield* Fiber.join(interrupting)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(events).toEqual(["released", "caller finalized"])
    }).pipe(
      // A failed assertion must not leave the release blocked (the test would hang).
      Effect.ensuring(Deferred.succeed(gate, undefined))
    )
  }

  it.live("interrupting the caller while the operation is being released still waits for it (live clock)", () => interruptDuringRelease(20, Effect.void))

  it.effect("interrupting the caller while the operation is being released still waits for it (TestClock)", () =>
    interruptDuringRelease(60_000, TestClock.adjust("60 seconds")))

  it.live("interrupting the caller interrupts the operation and waits for its finalizers", () =>
    Effect.gen(function*() {
      let finalized = false
      const started = yield* Deferred.make<void>()
      const operation = Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.never),
        Effect.ensuring(
          Effect.sleep("30 millis").pipe(Effect.zipRight(Effect.sync(() => {
            finalized = true
          })))
        )
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
