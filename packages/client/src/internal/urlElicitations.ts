/**
 * The URL elicitations of one connection that the server may say are complete (docs/DESIGN.md,
 * "Client capabilities", URL mode): those its URL handler was asked (2025-11-25 requests on a
 * stream), those a `-32042` refusal named, and those a caller awaits. A
 * `notifications/elicitation/complete` for one of them completes it once: its waiters resume and
 * the completion stream says so; a notification naming any other id (unknown, or already
 * completed) is ignored, as the spec requires.
 *
 * Bounded, since the server chooses the ids: at most `maxPending` ids are expected (the oldest
 * is forgotten first) and `maxCompleted` completions remembered (for a caller who awaits an id
 * after its completion came); a subscriber to the stream keeps at most `completionBuffer`
 * completions it has not read (the oldest go first). Plain maps and callbacks: the notification
 * reader never waits on a subscriber.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { McpConnectionError } from "../McpConnectionError.js"

/** Ids expected at once. */
export const maxPending = 256
/** Completions remembered for a later `await`. */
export const maxCompleted = 256
/** Completions a subscriber may leave unread. */
export const completionBuffer = 64

export interface UrlElicitations {
  /** An id the server may complete: one it asked about, or named in a refusal. */
  readonly expect: (elicitationId: string) => void
  /** Takes the params of a `notifications/elicitation/complete` (never blocks). */
  readonly complete: (params: unknown) => Effect.Effect<void>
  /**
   * Resumes when the server says `elicitationId` is complete (at once when it already did);
   * fails with `closed()` when the connection closes first. Unbounded here: the caller's budget
   * bounds it.
   */
  readonly completion: (elicitationId: string, closed: () => McpConnectionError) => Effect.Effect<void, McpConnectionError>
  /** The ids completed from now on, in the order the server said so; it ends when the connection closes. */
  readonly completions: Stream.Stream<string>
  /** How many read the stream now (a stream is subscribed to once it runs). */
  readonly subscribers: () => number
  /** The connection closed: every waiter fails, later ones at once. */
  readonly close: Effect.Effect<void>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Adds `key` to an insertion-ordered set, forgetting the oldest past `bound`. */
const remember = (set: Set<string>, key: string, bound: number) => {
  set.delete(key)
  set.add(key)
  if (set.size > bound) set.delete(set.values().next().value!)
}

export const make = (): UrlElicitations => {
  const pending = new Set<string>()
  const completed = new Set<string>()
  const waiters = new Map<string, Set<(closed: boolean) => void>>()
  const subscribers = new Set<{ readonly single: (id: string) => void; readonly end: () => void }>()
  let closed = false

  const complete = (id: string) => {
    pending.delete(id)
    remember(completed, id, maxCompleted)
    const waiting = waiters.get(id)
    waiters.delete(id)
    if (waiting !== undefined) { for (const resume of waiting) resume(false) }
    for (const subscriber of subscribers) subscriber.single(id)
  }

  return {
    expect: (id) => {
      if (!closed && !completed.has(id)) remember(pending, id, maxPending)
    },
    complete: (params) =>
      Effect.sync(() => {
        const id = isRecord(params) ? params["elicitationId"] : undefined
        // Only an id expected (each one checked, `isElicitationId`) completes; one someone waits
        // for is expected, even once newer ones pushed it out of `pending`.
        if (typeof id !== "string" || !(pending.has(id) || waiters.has(id))) return
        complete(id)
      }),
    completion: (id, closedFailure) =>
      Effect.suspend(() => {
        if (completed.has(id)) return Effect.void
        if (closed) return Effect.fail(closedFailure())
        // A caller who awaits an id expects it, whether or not the library saw it first.
        remember(pending, id, maxPending)
        return Effect.async<void, McpConnectionError>((resume) => {
          // Checked again where the wait starts: the fiber may have yielded since.
          if (completed.has(id)) return resume(Effect.void)
          if (closed) return resume(Effect.fail(closedFailure()))
          const waiting = waiters.get(id) ?? new Set()
          // Completed, or closed: each waiter builds its own failure (with its own exchange).
          const onEnd = (byClose: boolean) => resume(byClose ? Effect.fail(closedFailure()) : Effect.void)
          waiting.add(onEnd)
          waiters.set(id, waiting)
          return Effect.sync(() => {
            waiting.delete(onEnd)
            if (waiting.size === 0 && waiters.get(id) === waiting) waiters.delete(id)
          })
        })
      }),
    completions: Stream.async<string>((emit) => {
      if (closed) return void emit.end()
      const subscriber = { single: (id: string) => void emit.single(id), end: () => void emit.end() }
      subscribers.add(subscriber)
      return Effect.sync(() => void subscribers.delete(subscriber))
    }, { bufferSize: completionBuffer, strategy: "sliding" }),
    subscribers: () => subscribers.size,
    close: Effect.sync(() => {
      if (closed) return
      closed = true
      pending.clear()
      const all = [...waiters.values()]
      waiters.clear()
      for (const waiting of all) for (const resume of waiting) resume(true)
      // The stream ends with the connection.
      for (const subscriber of [...subscribers]) subscriber.end()
      subscribers.clear()
    })
  }
}
