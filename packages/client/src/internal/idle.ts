/**
 * A call's idle timeout (docs/DESIGN.md, "Progress"): the call fails with `onIdle()` when no
 * sign of progress came for `idleMs`, each `touch` starting the wait anew. The call's own
 * deadline, around this, stays the hard cap. At the idle timeout the call is interrupted and
 * awaited (its request released, as at a deadline) before the failure is returned. Time is the
 * fiber's `Clock`, so a `TestClock` drives it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

export const withIdleTimeout = <A, E, R, E2>(
  idleMs: number,
  onIdle: () => E2,
  run: (touch: () => void) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | E2, R> =>
  Effect.clockWith((clock) =>
    Effect.suspend(() => {
      let last = clock.unsafeCurrentTimeMillis()
      const touch = () => {
        last = clock.unsafeCurrentTimeMillis()
      }
      const watch: Effect.Effect<never, E2> = Effect.suspend(() => {
        const wait = last + idleMs - clock.unsafeCurrentTimeMillis()
        return wait <= 0 ? Effect.fail(onIdle()) : Effect.zipRight(Effect.sleep(Duration.millis(wait)), watch)
      })
      return Effect.raceFirst(run(touch), watch)
    })
  )
