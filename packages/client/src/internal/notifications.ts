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
 * - `notifications/prompts/list_changed`, `notifications/resources/list_changed`: to the live
 *   prompt and resource lists (queues of one, as for tools) and to `changes`;
 * - `notifications/resources/updated`: to the watchers of that URI (a queue of one each: a
 *   flood of updates is one update per watcher) and to `changes`; a URI no one watches is
 *   dropped (docs/DESIGN.md, "Subscriptions");
 * - anything else, or anything malformed, is dropped.
 *
 * `changes` is the connection's one stream of change events (a sliding PubSub): what
 * `Connection.changes` reads. `observeChanges` is the hook an internal consumer that must not
 * miss one (a response cache evicting what a change made stale) registers with: called
 * synchronously with each event, before `changes` has it. A gap (a stream of the server's reopened, a 2026-07-28
 * subscription acknowledged again, a new session) is published there as events with
 * `gap: true` for every list and every watched URI: they may have changed meanwhile.
 *
 * Nothing here blocks the stream's reader: `take` is an Effect the reader runs in its own
 * fiber, in the order the messages came, so that a call's progress is delivered before its
 * answer (which comes later on the same stream) is. A list change only marks the tools changed
 * (`toolsChanged`, a queue of one): the connection's own fiber lists them again
 * (`internal/relisting.ts`).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type { ChangeEvent, ResourceUpdate } from "../McpClient.js"
import type { McpConnectionError } from "../McpConnectionError.js"
import type * as McpSchema from "../McpSchema.js"
import { LogMessage, type Progress } from "../McpSchema.js"
import * as LazyPubSub from "./lazyPubSub.js"
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

/** How many change events `changes` keeps for a subscriber that falls behind (the oldest go first). */
export const changeBuffer = 256

/** The longest URI a `notifications/resources/updated` may name to be routed at all. */
export const maxUriLength = 8_192

/** One watcher of a resource's updates: a queue of one (the latest update), and its end. */
export interface ResourceWatch {
  readonly updates: Queue.Dequeue<ResourceUpdate>
  /**
   * Completes once the updates end for good (`endWatches`): no update will come. With the
   * server's refusal, if it refused; `undefined` when it just ended them.
   */
  readonly ended: Effect.Effect<McpConnectionError | undefined>
  readonly release: Effect.Effect<void>
}

interface Watcher {
  readonly queue: Queue.Queue<ResourceUpdate>
  readonly ended: Deferred.Deferred<McpConnectionError | undefined>
}

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
  readonly logs: LazyPubSub.Subscribable<LogMessage>
  /**
   * Every change event (see the module comment): `Connection.changes`, and the internal hook a
   * consumer that must forget what a change made stale (a response cache) subscribes to.
   */
  readonly changes: LazyPubSub.Subscribable<ChangeEvent>
  /**
   * Observes every change event synchronously, on the reader of the stream that brought it,
   * until the returned function is called: for an internal consumer that must never miss one
   * (a cache's eviction), where `changes` drops the oldest for a reader that falls behind. The
   * observer must be quick and never block; what it throws is ignored.
   */
  readonly observeChanges: (observer: (event: ChangeEvent) => void) => () => void
  /** The prompts changed (announced, or a gap): at most one waiting, as for tools. */
  readonly promptsChanged: Queue.Dequeue<void>
  /** The resources list changed (announced, or a gap): at most one waiting. */
  readonly resourcesChanged: Queue.Dequeue<void>
  /** Watches one URI's updates until released. */
  readonly watch: (uri: string) => Effect.Effect<ResourceWatch>
  /**
   * The updates of every watch open now end for good (a 2026-07-28 subscription the server
   * ended): each watch's `ended` completes, with `refusal` if the server refused. A watch made
   * later is not affected.
   */
  readonly endWatches: (refusal: McpConnectionError | undefined) => Effect.Effect<void>
  /** The URIs watched now. */
  readonly watched: () => ReadonlyArray<string>
  /**
   * A 2025 stream reopened or a new session: the subscriptions must be made again (at most one
   * waiting). Whoever makes them again then calls `missed`.
   */
  readonly resubscribe: Queue.Dequeue<void>
  /**
   * Publishes the gap: every list and every watched URI may have changed (the prompts and
   * resources are marked changed; the tools were marked by whoever saw the gap).
   */
  readonly missed: Effect.Effect<void>
  /** The connection has a new session (docs/DESIGN.md, "Sessions that heal"). */
  readonly renewed: Effect.Effect<void>
  /**
   * The next `notifications/subscriptions/acknowledged` (2026-07-28): the filter the server
   * says it honours. One waiter at a time (a subscription is made after the other).
   */
  readonly nextAcknowledgement: Effect.Effect<Deferred.Deferred<Readonly<Record<string, unknown>>>>
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
    const logs = LazyPubSub.sliding<LogMessage>(logBuffer)
    const changes = yield* Queue.sliding<void>(1)
    const calls = new Map<string, { last: number | undefined; readonly onProgress: (progress: Progress) => void }>()
    let nextToken = 0
    const changed = Queue.offer(changes, undefined)
    const events = LazyPubSub.sliding<ChangeEvent>(changeBuffer)
    const prompts = yield* Queue.sliding<void>(1)
    const resources = yield* Queue.sliding<void>(1)
    const resubscribe = yield* Queue.sliding<void>(1)
    const watchers = new Map<string, Set<Watcher>>()
    let acknowledgement: Deferred.Deferred<Readonly<Record<string, unknown>>> | undefined
    const observers = new Set<(event: ChangeEvent) => void>()
    /** A change event: to the synchronous observers first (nothing is lost there), then to `changes`. */
    const emit = (event: ChangeEvent) =>
      Effect.zipRight(
        Effect.sync(() => {
          for (const observer of observers) {
            try {
              observer(event)
            } catch {
              // An observer's failure is its own: the others and the stream still hear of it.
            }
          }
        }),
        events.publish(event)
      )

    const updated = (uri: string, gap: boolean) =>
      Effect.suspend(() => {
        const watching = watchers.get(uri)
        if (watching === undefined) return Effect.void
        const event = { _tag: "ResourceUpdated", uri, gap } as const
        return Effect.zipRight(
          Effect.forEach(watching, (w) => Queue.offer(w.queue, event), { discard: true }),
          emit(event)
        )
      })
    const listChanged = (
      tag: "PromptsListChanged" | "ResourcesListChanged",
      queue: Queue.Queue<void>,
      gap: boolean
    ) => Effect.zipRight(Queue.offer(queue, undefined), emit({ _tag: tag, gap }))
    const missed = Effect.gen(function*() {
      yield* emit({ _tag: "ToolsListChanged", gap: true })
      yield* listChanged("PromptsListChanged", prompts, true)
      yield* listChanged("ResourcesListChanged", resources, true)
      for (const uri of [...watchers.keys()]) yield* updated(uri, true)
    })
    const acknowledged = (params: unknown) =>
      Effect.suspend(() => {
        const waiting = acknowledgement
        acknowledgement = undefined
        const honoured = isRecord(params) && isRecord(params["notifications"]) ? params["notifications"] : {}
        return waiting === undefined ? Effect.void : Deferred.succeed(waiting, honoured)
      })
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
            return Effect.zipRight(changed, emit({ _tag: "ToolsListChanged", gap: false }))
          case "notifications/prompts/list_changed":
            return listChanged("PromptsListChanged", prompts, false)
          case "notifications/resources/list_changed":
            return listChanged("ResourcesListChanged", resources, false)
          case "notifications/resources/updated": {
            const uri = isRecord(params) ? params["uri"] : undefined
            return typeof uri === "string" && uri.length <= maxUriLength ? updated(uri, false) : Effect.void
          }
          case "notifications/subscriptions/acknowledged":
            return acknowledged(params)
          case "notifications/tasks/status":
          case "notifications/tasks":
            return Effect.sync(() => taskStatus(params))
          case "notifications/message": {
            const decoded = decodeLogMessage(params)
            return decoded._tag === "Some" ? logs.publish(decoded.value) : Effect.void
          }
          default:
            return Effect.void
        }
      },
      // A 2025 stream opened again: the tools are listed again, the subscriptions made again.
      reopened: Effect.asVoid(Effect.zipRight(changed, Queue.offer(resubscribe, undefined))),
      trackProgress: (onProgress) => {
        // Unique among the connection's calls, as the spec requires of active tokens.
        const token = `phasebound-${++nextToken}`
        calls.set(token, { last: undefined, onProgress })
        return { token, release: () => void calls.delete(token) }
      },
      toolsChanged: changes,
      logs,
      changes: events,
      observeChanges: (observer) => {
        // A wrapper per registration: the same function observing twice is two observers.
        const registered = (event: ChangeEvent) => observer(event)
        observers.add(registered)
        return () => void observers.delete(registered)
      },
      promptsChanged: prompts,
      resourcesChanged: resources,
      watch: (uri) =>
        Effect.gen(function*() {
          const watcher: Watcher = {
            queue: yield* Queue.sliding<ResourceUpdate>(1),
            ended: yield* Deferred.make<McpConnectionError | undefined>()
          }
          const watching = watchers.get(uri) ?? new Set()
          watchers.set(uri, watching)
          watching.add(watcher)
          return {
            updates: watcher.queue,
            ended: Deferred.await(watcher.ended),
            release: Effect.suspend(() => {
              watching.delete(watcher)
              if (watching.size === 0 && watchers.get(uri) === watching) watchers.delete(uri)
              return Queue.shutdown(watcher.queue)
            })
          }
        }),
      endWatches: (refusal) =>
        Effect.forEach([...watchers.values()].flatMap((watching) => [...watching]), (w) => Deferred.succeed(w.ended, refusal), {
          discard: true
        }),
      watched: () => [...watchers.keys()],
      resubscribe,
      missed,
      renewed: Queue.offer(resubscribe, undefined).pipe(Effect.asVoid),
      nextAcknowledgement: Effect.flatMap(Deferred.make<Readonly<Record<string, unknown>>>(), (deferred) =>
        Effect.sync(() => {
          acknowledgement = deferred
          return deferred
        })),
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
