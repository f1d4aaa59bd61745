/**
 * Tasks (docs/DESIGN.md, "Tasks"): a tool call the server runs in the background, answered with
 * a task handle instead of its result, whose state the client polls (`tasks/get`) until it ends,
 * then reads the result. Two protocols carry it: the experimental tasks of 2025-11-25 (the client
 * asks for a task with `params.task`; `tasks/result` gives the result) and the tasks extension
 * of 2026-07-28 (`io.modelcontextprotocol/tasks`: the server decides, a `tasks/get` of an ended
 * task carries its result or error). Both are one model here: `Task`, `TaskHandle`, `TaskCall`.
 *
 * @example
 * ```ts
 * import { McpClient } from "@phasebound/client"
 * import { Effect } from "effect"
 *
 * const research = (connection: McpClient.Connection) =>
 *   Effect.gen(function*() {
 *     const call = yield* connection.callToolTask("simulate-research-query", { topic: "tasks" })
 *     if (call._tag === "Result") return call.result // the server answered at once
 *     // Keep call.handle.taskId somewhere durable: `connection.taskResult(taskId)` resumes.
 *     const statuses: Array<string> = []
 *     return yield* call.handle.result({ onStatus: (task) => void statuses.push(task.status) })
 *   })
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { McpConnectionError } from "./McpConnectionError.js"
import type * as McpSchema from "./McpSchema.js"
import type * as PhasePolicy from "./PhasePolicy.js"

/**
 * A task's status: `working` and `input_required` go on; `completed`, `failed` and `cancelled`
 * are terminal.
 *
 * @since 0.1.0
 * @category models
 */
export const TaskStatus = Schema.Literal("working", "input_required", "completed", "failed", "cancelled")

/**
 * @since 0.1.0
 * @category models
 */
export type TaskStatus = typeof TaskStatus.Type

/**
 * Whether a status is terminal (`completed`, `failed`, `cancelled`): a task there never changes.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (status: TaskStatus): boolean => status === "completed" || status === "failed" || status === "cancelled"

/**
 * A task's state, whichever revision brought it (2025-11-25's `ttl` and `pollInterval` are read
 * as `ttlMs` and `pollIntervalMs`, the names of 2026-07-28). `statusMessage` is the server's
 * text: show it, do not trust it.
 *
 * @since 0.1.0
 * @category models
 */
export const Task = Schema.Struct({
  taskId: Schema.String,
  status: TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.optional(Schema.String),
  lastUpdatedAt: Schema.optional(Schema.String),
  /** The task's lifetime from its creation, `null` for unlimited, as the server last said. */
  ttlMs: Schema.NullOr(Schema.Number),
  /** The interval the server suggests between polls (clamped by the policy when polled). */
  pollIntervalMs: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Task = typeof Task.Type

/**
 * How a wait for a task's result may be shaped: the task budget's overrides (`timeout` the whole
 * wait, `maxBytes` each answer), and a callback for each new state seen (a poll, a status
 * notification), which runs on the waiting fiber: keep it short; what it throws is ignored.
 *
 * @since 0.1.0
 * @category models
 */
export interface WaitOptions extends PhasePolicy.BudgetOptions {
  readonly onStatus?: ((task: Task) => void) | undefined
  /**
   * The tool the task's call called, for a task id from elsewhere (`taskResult`): its result is
   * then checked against that tool's `outputSchema`, as the call's would be. A handle knows it.
   */
  readonly tool?: string | undefined
}

/**
 * A task-augmented call's options: those of a call (its budget covers the creating `tools/call`),
 * and the lifetime asked of the task (`ttl`, 2025-11-25: the server may choose another; the
 * 2026-07-28 extension has the server choose alone).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskCallOptions extends Omit<PhasePolicy.CallBudgetOptions, "idleTimeout"> {
  readonly ttl?: Duration.DurationInput | undefined
  /** The request's `_meta`, as `McpClient.CallOptions.meta`. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /** The call's effect identity, as `McpClient.CallOptions.effectIdentity`. */
  readonly effectIdentity?: string | undefined
}

/**
 * A task the server created: its id (what to keep to come back to it, after a restart too), the
 * state it was created in, and what can be done with it. Each operation is one of the
 * connection's (`getTask`, `taskResult`, `cancelTask`) on this id.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskHandle {
  readonly taskId: string
  /** The state the server created the task in. */
  readonly created: Task
  /** The task's state now: one `tasks/get`, under the call budget. */
  readonly status: Effect.Effect<Task, McpConnectionError>
  /**
   * Waits for the task's end and gives its result, under the task budget: polls `tasks/get` at
   * the server's interval (clamped by the policy), wakes early on a status notification, then
   * reads the result (`tasks/result` in 2025-11-25; the ended task's own `result` in 2026-07-28).
   * A task that failed fails as the server's refusal (`RemoteRefusal`); a tool error
   * (`isError: true`) is a result. Never sends the tool call again.
   */
  readonly result: (options?: WaitOptions) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
  /** Asks the server to cancel the task (`tasks/cancel`, under the call budget); cooperative. */
  readonly cancel: Effect.Effect<void, McpConnectionError>
}

/**
 * What a task-augmented call gives: a task, or the result itself when the server answered at
 * once (a 2026-07-28 server decides per call).
 *
 * @since 0.1.0
 * @category models
 */
export type TaskCall =
  | { readonly _tag: "Task"; readonly handle: TaskHandle }
  | { readonly _tag: "Result"; readonly result: McpSchema.CallToolResult }

/**
 * The extension identifier of the 2026-07-28 tasks extension, declared in the client's
 * capabilities (`extensions`) of every request of that revision.
 *
 * @since 0.1.0
 * @category constants
 */
export const extensionId = "io.modelcontextprotocol/tasks" as const
