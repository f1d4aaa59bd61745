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
        // Whichever of the timer and the fiber's exit comes first decides the result; the
        // other is ignored, so `resume` is called once.
        let settled = false
        const timer = setTimeout(() => {
          if (settled) return
          settled = true
          // Interrupt the operation and wait for its finalizers (uninterruptibly, as
          // Effect.timeoutFail does), then fail with onTimeout() whatever exit it ended with.
          resume(Effect.zipRight(Effect.uninterruptible(Fiber.interrupt(fiber)), Effect.failSync(onTimeout)))
        }, timeoutMs)
        fiber.addObserver((exit) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(exit)
        })
        // The caller is interrupted: stop the timer, interrupt the operation and wait for it
        // (immediate if it has already ended).
        return Effect.suspend(() => {
          settled = true
          clearTimeout(timer)
          return Fiber.interrupt(fiber)
        })
      }))
  })
