/**
 * A deadline around one operation, cheap enough to put around every tool call.
 *
 * `Effect.timeoutFail` races the operation against a sleeping fiber: two forked fibers and a
 * timer per call, measured at about 100 µs of CPU per call under load (docs/BENCHMARKS.md).
 * Under Effect's live clock this forks the operation once and arms one native timer instead.
 * Under any other `Clock` (a `TestClock` in a user's tests) it is `Effect.timeoutFail`, so
 * virtual time still drives the deadline. The semantics are the same either way:
 *
 * - the operation's own exit wins if it comes first;
 * - at the deadline the operation is interrupted and awaited: its finalizers (its bounded
 *   release) run to completion, and only then is the result the failure `onTimeout()`. The
 *   wait cannot be cut short by interrupting the caller, so a caller's own finalizers never
 *   run before the operation's release;
 * - once the deadline has fired, the result is `onTimeout()` even if the operation finishes
 *   on its own before the interruption reaches it (an uninterruptible region, or a value
 *   that lands in the same instant): that exit is dropped, as `Effect.timeoutFail` drops the
 *   exit of the fiber that lost the race;
 * - interrupting the caller before the deadline interrupts the operation and waits for it to
 *   finish.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"

const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/** `setTimeout` fires at once past this delay; longer deadlines use Effect's own timer. */
const maxNativeDelayMs = 2 ** 31 - 1

/**
 * Forks the operation so that its failure, which the caller receives through the observer, is
 * not also logged by the runtime as an unhandled error of the forked fiber (the library never
 * logs). The operation itself still runs with the caller's level, for its own forks.
 */
const forkQuietly = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(FiberRef.get(FiberRef.unhandledErrorLogLevel), (level) =>
    Effect.locally(
      // Interruptible whatever the caller is, or the deadline could not end it.
      Effect.fork(Effect.interruptible(Effect.locally(effect, FiberRef.unhandledErrorLogLevel, level))),
      FiberRef.unhandledErrorLogLevel,
      Option.none()
    ))

/**
 * Ends operations from outside, at once: the connection closing while a call is in flight.
 * `register` returns the function that unregisters the hook.
 */
export interface Abandon<E3> {
  readonly register: (hook: () => void) => () => void
  readonly failure: () => E3
}

export const withDeadline = <A, E, R, E2, E3 = never>(
  effect: Effect.Effect<A, E, R>,
  timeoutMs: number,
  onTimeout: () => E2,
  abandon?: Abandon<E3>
): Effect.Effect<A, E | E2 | E3, R> =>
  Effect.clockWith((clock) => {
    if (clock !== liveClock || !(timeoutMs <= maxNativeDelayMs)) {
      const bounded = Effect.timeoutFail(effect, { duration: Duration.millis(timeoutMs), onTimeout })
      if (abandon === undefined) return bounded
      const abandoned = Effect.async<never, E3>((resume) => {
        const unregister = abandon.register(() => resume(Effect.failSync(abandon.failure)))
        return Effect.sync(unregister)
      })
      return Effect.raceFirst(bounded, abandoned)
    }
    return Effect.flatMap(forkQuietly(effect), (fiber) =>
      Effect.async<A, E | E2 | E3>((resume) => {
        // Whichever of the timer, the abandonment and the fiber's exit comes first decides the
        // result; the others are ignored, so `resume` is called once.
        let settled = false
        // Interrupt the operation and wait for its finalizers (uninterruptibly, as
        // Effect.timeoutFail does), then fail with `failure()` whatever exit it ended with.
        const giveUp = (failure: () => E2 | E3) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          unregister()
          resume(Effect.zipRight(Effect.uninterruptible(Fiber.interrupt(fiber)), Effect.failSync(failure)))
        }
        const timer = setTimeout(() => giveUp(onTimeout), timeoutMs)
        const unregister = abandon === undefined ? () => {} : abandon.register(() => giveUp(abandon.failure))
        fiber.addObserver((exit) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          unregister()
          resume(exit)
        })
        // The caller is interrupted: stop the timer, interrupt the operation and wait for it
        // (immediate if it has already ended).
        return Effect.suspend(() => {
          settled = true
          clearTimeout(timer)
          unregister()
          return Fiber.interrupt(fiber)
        })
      }))
  })
