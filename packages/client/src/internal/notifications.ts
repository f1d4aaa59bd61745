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
 * - `notifications/message`: to the log stream, a sliding buffer (the oldest messages go first
 *   when readers fall behind); the library never prints them;
 * - anything else, or anything malformed, is dropped.
 *
 * Dropped notifications are counted. Nothing here blocks the stream's reader.
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as McpSchema from "../McpSchema.js"
import { LogMessage, type Progress } from "../McpSchema.js"

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
  /** Takes one notification of the server's (see the module comment). */
  readonly take: (notification: typeof McpSchema.JsonRpcNotification.Type) => void
  /** A stream of the server's was opened again: a change may have been missed, so it counts as one. */
  readonly reopened: () => void
  /** A new progress token for one call, whose progress goes to `onProgress` until released. */
  readonly trackProgress: (onProgress: (progress: Progress) => void) => ProgressTracking
  /** What a `tools/list_changed` does (the connection sets it once it exists). */
  readonly onToolsChanged: (listener: () => void) => void
  /** The server's log messages; a subscriber sees those that arrive after it subscribed. */
  readonly logs: PubSub.PubSub<LogMessage>
  /** Notifications dropped so far. */
  readonly dropped: () => number
}

export const make = (logBuffer: number): Notifications => {
  const logs = Effect.runSync(PubSub.sliding<LogMessage>(logBuffer))
  const calls = new Map<string, { last: number | undefined; readonly onProgress: (progress: Progress) => void }>()
  let toolsChanged: () => void = () => {}
  let nextToken = 0
  let dropped = 0
  let subscriptions = 0

  const progress = (params: unknown) => {
    const report = progressOf(params)
    const call = report === undefined ? undefined : calls.get(report.token)
    // The spec requires progress to grow: a value that does not is a repeat or a lie.
    if (report === undefined || call === undefined || (call.last !== undefined && report.progress.progress <= call.last)) {
      dropped++
      return
    }
    call.last = report.progress.progress
    call.onProgress(report.progress)
  }

  return {
    take: ({ method, params }) => {
      switch (method) {
        case "notifications/progress":
          return progress(params)
        case "notifications/tools/list_changed":
          return toolsChanged()
        case "notifications/subscriptions/acknowledged":
          if (++subscriptions > 1) toolsChanged()
          return
        case "notifications/message": {
          const decoded = decodeLogMessage(params)
          // `publish`, not `unsafeOffer`: only it applies the sliding strategy (synchronously).
          if (decoded._tag === "Some") Effect.runSync(PubSub.publish(logs, decoded.value))
          else dropped++
          return
        }
        default:
          dropped++
      }
    },
    reopened: () => toolsChanged(),
    trackProgress: (onProgress) => {
      // Unique among the connection's calls, as the spec requires of active tokens.
      const token = `phasebound-${++nextToken}`
      calls.set(token, { last: undefined, onProgress })
      return { token, release: () => void calls.delete(token) }
    },
    onToolsChanged: (listener) => {
      toolsChanged = listener
    },
    logs,
    dropped: () => dropped
  }
}
