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
 * - at the deadline the operation is interrupted (without waiting for its finalizers, like
 *   `Effect.timeoutFail`) and the result is the failure `onTimeout()`;
 * - interrupting the caller interrupts the operation and waits for it to finish.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/** `setTimeout` fires at once past this delay; longer deadlines use Effect's own timer. */
const maxNativeDelayMs = 2 ** 31 - 1

export const withDeadline = <A, E, R, E2>(
  effect: Effect.Effect<A, E, R>,
  timeoutMs: number,
  onTimeout: () => E2
): Effect.Effect<A, E | E2, R> =>
  Effect.clockWith((clock) => {
    if (clock !== liveClock || !(timeoutMs <= maxNativeDelayMs)) {
      return Effect.timeoutFail(effect, { duration: Duration.millis(timeoutMs), onTimeout })
    }
    return Effect.flatMap(Effect.fork(effect), (fiber) =>
      Effect.async<A, E | E2>((resume) => {
        const timer = setTimeout(() => resume(Effect.zipRight(Fiber.interruptFork(fiber), Effect.fail(onTimeout()))), timeoutMs)
        fiber.addObserver((exit) => {
          clearTimeout(timer)
          resume(exit)
        })
        return Effect.suspend(() => {
          clearTimeout(timer)
          return Fiber.interrupt(fiber)
        })
      }))
  })
