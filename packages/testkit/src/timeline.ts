/**
 * What a request plays out around its answer, with `features`: request-scoped notifications
 * (progress, log messages) at their offsets from the request's arrival, the answer, then
 * notifications for every list-change listener. The transports decide where each part can go.
 */
import type { JsonRpcNotification } from "./jsonrpc.js"

export interface ScheduledNotification {
  /** Milliseconds after the request's arrival. */
  readonly atMs: number
  readonly notification: JsonRpcNotification
}

export interface Timeline {
  /** Request-scoped notifications, in order; they relate to this request only. */
  readonly notifications: ReadonlyArray<ScheduledNotification>
  /** When the answer goes (after the last notification, whatever their offsets). */
  readonly answerAtMs: number
  /** What every list-change listener gets once the answer is out (list changes, floods). */
  readonly broadcast: ReadonlyArray<JsonRpcNotification>
}

export interface TimelineSink {
  readonly notify: (notification: JsonRpcNotification) => void
  /** Sends the answer; the broadcast is the caller's to send after it. */
  readonly answer: () => void
}

/** Whether playing needs time or a stream: anything more than an answer at once. */
export const isImmediate = (timeline: Timeline): boolean => timeline.notifications.length === 0 && timeline.answerAtMs <= 0

/**
 * Plays a timeline: each notification, in order, once its offset has passed, then the answer.
 * What is due goes at once, in the same turn. Returns `cancel`, which stops it (nothing more is
 * sent, the answer included) and says whether it was still playing.
 */
export const playTimeline = (timeline: Timeline, sink: TimelineSink): () => boolean => {
  const start = Date.now()
  let index = 0
  let timer: NodeJS.Timeout | undefined
  let finished = false
  const step = (): void => {
    timer = undefined
    for (;;) {
      const next = timeline.notifications[index]
      const dueAt = start + (next === undefined ? timeline.answerAtMs : next.atMs)
      const wait = dueAt - Date.now()
      if (wait > 0) {
        timer = setTimeout(step, wait)
        return
      }
      if (next === undefined) break
      index += 1
      sink.notify(next.notification)
    }
    finished = true
    sink.answer()
  }
  step()
  return () => {
    if (finished) return false
    finished = true
    if (timer !== undefined) clearTimeout(timer)
    return true
  }
}
