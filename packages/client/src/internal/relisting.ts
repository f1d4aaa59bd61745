/**
 * Live tool lists (docs/DESIGN.md, "Live tool lists"): a change the server announces is listed
 * after `delayMs`; the changes announced meanwhile, or during that listing, share one listing
 * more. A listing that fails leaves the tools as they were (`list` observes it).
 *
 * The announced changes are read by one fiber per connection, in the connection's scope:
 * closing the connection ends it.
 * It is interruptible whatever the fiber that connected was (a connection made inside an
 * `acquireRelease` acquisition, say), or the close would wait for it for ever. A failure or a
 * defect of one listing ends nothing: the next change is listed again.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"

export const relistOnChange = (
  changes: Queue.Dequeue<void>,
  delayMs: number,
  list: Effect.Effect<unknown, unknown>
): Effect.Effect<never> =>
  // A loop rather than a `Stream` over the queue: the same coalescing, and starting it and
  // interrupting it, once per connection, costs a fifth of the CPU (two of these run per connection).
  Queue.take(changes).pipe(
    Effect.zipRight(Effect.sleep(Duration.millis(delayMs))),
    // What was announced during the wait is what this listing lists; the queue holds at most one
    // change, so what is announced during the listing makes one listing more.
    Effect.zipRight(Queue.takeAll(changes)),
    Effect.zipRight(Effect.catchAllCause(list, () => Effect.void)),
    Effect.forever,
    Effect.interruptible
  )
