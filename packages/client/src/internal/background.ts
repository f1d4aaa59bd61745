/**
 * What a transport runs in its background, in its own scope: best-effort messages nobody waits
 * for (cancellation notices, replies to the server's requests), each bounded by the release
 * timeout. A failure is dropped: by definition nobody waits for these.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"

export const makeBackground = (releaseTimeoutMs: number) =>
  Effect.map(FiberSet.make<unknown, never>(), (set) => {
    const bounded = (effect: Effect.Effect<unknown, unknown>) =>
      // Started from interruption handlers, which are uninterruptible, the fiber would inherit
      // that and its timeout could never cut the message short: make it interruptible.
      effect.pipe(Effect.interruptible, Effect.timeout(Duration.millis(releaseTimeoutMs)), Effect.ignore)
    return {
      /** A best-effort message, bounded by the release timeout. */
      run: (effect: Effect.Effect<unknown, unknown>) => Effect.asVoid(FiberSet.run(set)(Effect.interruptible(bounded(effect)))),
      size: FiberSet.size(set)
    }
  })
