/**
 * The server's notifications, routed to whoever waits for them (docs/DESIGN.md,
 * "Notifications"), whatever stream they came on (a call's own answer stream, the standalone
 * GET stream, a 2026-07-28 subscription, a legacy GET stream, stdout):
 *
 * - `notifications/progress`: to the call that holds the token, when its progress grows; a
 *   token no call holds, or a value that does not grow, is dropped;
 * - `notifications/tools/list_changed`: to the connection, which lists the tools again; so does
 *   the acknowledgement of a 2026-07-28 subscription made again after the first, and a 2025
 *   standalone stream opened again (changes may have been missed while there was none);
 * - `notifications/tasks/status` (2025-11-25) and `notifications/tasks` (2026-07-28): to the
 *   waits on that task (`trackTask`), whose poll they wake; a task no wait tracks is dropped;
 * - `notifications/message`: to the log stream, a sliding buffer (the oldest messages go first
 *   when readers fall behind); the library never prints them;
 * - anything else, or anything malformed, is dropped.
 *
 * Nothing here blocks the stream's reader: `take` is an Effect the reader runs in its own
 * fiber, in the order the messages came, so that a call's progress is delivered before its
 * answer (which comes later on the same stream) is. A list change only marks the tools changed
 * (`toolsChanged`, a queue of one): the connection's own fiber lists them again
 * (`internal/relisting.ts`).
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as McpSchema from "../McpSchema.js"
import { LogMessage, type Progress } from "../McpSchema.js"
import { notifiedTaskId } from "./taskWire.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The params of a progress report, checked by hand: it is on the hot path of a call that asks
 * for progress, where a Schema decode costs more than the rest of the routing.
 */
const progressOf = (params: unknown): { readonly token: string; readonly progress: Progress } | undefined => {
  if (!isRecord(params)) return undefined
  const { message, progress, progressToken, total } = params
  if (typeof progressToken !== "string" && typeof progressToken !== "number") return undefined
  if (typeof progress !== "number" || !Number.isFinite(progress)) return undefined
  if (total !== undefined && (typeof total !== "number" || !Number.isFinite(total))) return undefined
  if (message !== undefined && typeof message !== "string") return undefined
  return {
    token: String(progressToken),
    progress: { progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) }
  }
}
const decodeLogMessage = Schema.decodeUnknownOption(LogMessage)

/** A call's progress: its token (for `_meta.progressToken`), and its end. */
export interface ProgressTracking {
  readonly token: string
  readonly release: () => void
}

export interface Notifications {
  /** Takes one notification of the server's (see the module comment); never blocks. */
  readonly take: (notification: typeof McpSchema.JsonRpcNotification.Type) => Effect.Effect<void>
  /** A stream of the server's was opened again: a change may have been missed, so it counts as one. */
  readonly reopened: Effect.Effect<void>
  /** A new progress token for one call, whose progress goes to `onProgress` until released. */
  readonly trackProgress: (onProgress: (progress: Progress) => void) => ProgressTracking
  /**
   * The tools changed (a `tools/list_changed`, a subscription acknowledged again, a stream
   * reopened): at most one waiting, since changes not yet listed are one change.
   */
  readonly toolsChanged: Queue.Dequeue<void>
  /** The server's log messages; a subscriber sees those that arrive after it subscribed. */
  readonly logs: PubSub.PubSub<LogMessage>
  /**
   * The status notifications of one task, to `onStatus` (their params, unchecked) until released.
   * At most `maxTrackedTasks` waits at once: past that a wait polls without being woken.
   */
  readonly trackTask: (taskId: string, onStatus: (params: unknown) => void) => () => void
}

/** The most task waits status notifications are routed to at once (docs/DESIGN.md, "Tasks"). */
export const maxTrackedTasks = 1_024

export const make = (logBuffer: number): Effect.Effect<Notifications> =>
  Effect.gen(function*() {
    const logs = yield* PubSub.sliding<LogMessage>(logBuffer)
    const changes = yield* Queue.sliding<void>(1)
    const calls = new Map<string, { last: number | undefined; readonly onProgress: (progress: Progress) => void }>()
    let nextToken = 0
    let subscriptions = 0
    const changed = Queue.offer(changes, undefined)
    const tasks = new Map<string, Set<(params: unknown) => void>>()
    let trackedTasks = 0
    const taskStatus = (params: unknown) => {
      const taskId = notifiedTaskId(params)
      const waits = taskId === undefined ? undefined : tasks.get(taskId)
      if (waits !== undefined) { for (const onStatus of [...waits]) onStatus(params) }
    }

    const progress = (params: unknown) => {
      const report = progressOf(params)
      const call = report === undefined ? undefined : calls.get(report.token)
      // The spec requires progress to grow: a value that does not is a repeat or a lie.
      if (report === undefined || call === undefined || (call.last !== undefined && report.progress.progress <= call.last)) {
        return
      }
      call.last = report.progress.progress
      call.onProgress(report.progress)
    }

    return {
      take: ({ method, params }) => {
        switch (method) {
          case "notifications/progress":
            return Effect.sync(() => progress(params))
          case "notifications/tools/list_changed":
            return changed
          case "notifications/subscriptions/acknowledged":
            return Effect.suspend(() => ++subscriptions > 1 ? changed : Effect.void)
          case "notifications/tasks/status":
          case "notifications/tasks":
            return Effect.sync(() => taskStatus(params))
          case "notifications/message": {
            const decoded = decodeLogMessage(params)
            return decoded._tag === "Some" ? Effect.asVoid(PubSub.publish(logs, decoded.value)) : Effect.void
          }
          default:
            return Effect.void
        }
      },
      reopened: changed,
      trackProgress: (onProgress) => {
        // Unique among the connection's calls, as the spec requires of active tokens.
        const token = `phasebound-${++nextToken}`
        calls.set(token, { last: undefined, onProgress })
        return { token, release: () => void calls.delete(token) }
      },
      toolsChanged: changes,
      logs,
      trackTask: (taskId, onStatus) => {
        if (trackedTasks >= maxTrackedTasks) return () => {}
        trackedTasks++
        const waits = tasks.get(taskId) ?? new Set()
        tasks.set(taskId, waits)
        waits.add(onStatus)
        let released = false
        return () => {
          if (released) return
          released = true
          trackedTasks--
          waits.delete(onStatus)
          if (waits.size === 0) tasks.delete(taskId)
        }
      }
    }
  })
