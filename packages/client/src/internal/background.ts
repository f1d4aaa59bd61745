/**
 * What a transport runs in its background, in its own scope: best-effort messages nobody waits
 * for (cancellation notices), each bounded by the release timeout, and answers to server
 * requests (the answer bounded by whoever built it, its sending by the release timeout). A
 * failure is dropped: by definition nobody waits for these.
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
    const start = (effect: Effect.Effect<unknown>) => Effect.asVoid(FiberSet.run(set)(Effect.interruptible(effect)))
    return {
      /** A best-effort message, bounded by the release timeout. */
      run: (effect: Effect.Effect<unknown, unknown>) => start(bounded(effect)),
      /** Works out an answer (bounded by its builder), then sends it (bounded by the release timeout). */
      answer: <A>(answer: Effect.Effect<A>, send: (reply: A) => Effect.Effect<unknown, unknown>) =>
        start(Effect.flatMap(answer, (reply) => bounded(send(reply)))),
      size: FiberSet.size(set)
    }
  })
