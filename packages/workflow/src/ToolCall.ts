/**
 * An MCP tool call as a durable `@effect/workflow` activity (docs/DESIGN.md, "Durable tool
 * calls").
 *
 * - The call carries an effect identity derived from the execution id and the activity's name
 *   (`EffectIdentity`): the same for every execution, retry and explicit retry of that effect.
 * - Its result (a `CallToolResult`, `isError` included) or its typed failure is persisted by the
 *   engine: a replayed workflow gets it back and never calls the tool again.
 * - Before the request leaves, a sent marker is recorded in the engine's own storage
 *   (`SentMarker`); an execution that finds the marker of an earlier one (a worker that died
 *   mid-call) sends again only to a read-only or idempotent tool, and otherwise fails with
 *   `ToolCallOutcomeUnknown` without sending.
 * - Retries under `retry` (same identity) only where `isRetriedByItself` (`isRetrySafe`, but not a URL elicitation the user must complete first); an `unknown` outcome on any
 *   other tool is `ToolCallOutcomeUnknown`, for the workflow to handle; `applied` is final.
 * - Budgets stay the client's (`callOptions`): the activity adds no timeout of its own.
 * - With `task`, the call is made as a task where the server allows it (docs/DURABILITY.md,
 *   "Tasks"): the task's handle is recorded in the engine's storage (`TaskMarker`) before the
 *   activity waits for it, and an execution that finds it polls that task, never calling the tool
 *   again.
 *
 * @example
 * ```ts
 * import { Workflow } from "@effect/workflow"
 * import { ToolCall, ToolCallError } from "@phasebound/workflow"
 * import { Effect, Schema } from "effect"
 *
 * const Checkout = Workflow.make({
 *   name: "Checkout",
 *   payload: { order: Schema.String },
 *   idempotencyKey: ({ order }) => order,
 *   error: ToolCallError.ToolCallError
 * })
 *
 * const CheckoutLive = Checkout.toLayer((payload) =>
 *   Effect.asVoid(ToolCall.call({
 *     name: "charge",                       // the activity: unique within the workflow
 *     connection: ToolCall.server("payments"), // McpServers, or McpConnection.McpConnection
 *     tool: "charge_card",
 *     arguments: { order: payload.order, cents: 1250 }
 *   }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Activity from "@effect/workflow/Activity"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type { McpClient, McpConnectionError, McpTask } from "@phasebound/client"
import { McpSchema, McpServers } from "@phasebound/client"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as EffectIdentity from "./EffectIdentity.js"
import * as SentMarker from "./SentMarker.js"
import * as TaskMarker from "./TaskMarker.js"
import { fromConnectionError, isRetriedByItself, ToolCallError, ToolCallOutcomeUnknown } from "./ToolCallError.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  /**
   * The activity's name: unique within the workflow and stable across its versions (the effect
   * identity and what the engine persists are keyed by it).
   */
  readonly name: string
  /**
   * Where the server is reached: `server("payments")` (a named server of `McpServers`),
   * `McpConnection.McpConnection` (a Tag is an Effect), or any other Effect of a
   * `McpClient.Connection`. Its failure is a `ToolCallFailed` like any other (outcome
   * `not-sent`).
   */
  readonly connection: Effect.Effect<McpClient.Connection, McpConnectionError.McpConnectionError, R>
  readonly tool: string
  readonly arguments?: Readonly<Record<string, unknown>> | undefined
  /**
   * The call's own options (budget overrides, `meta`, `onProgress`), validated by the client. The
   * effect identity is the activity's.
   */
  readonly callOptions?: Omit<McpClient.CallOptions, "effectIdentity"> | undefined
  /**
   * When to send again a failure that `isRetriedByItself` allows (default `defaultRetry`). Every sending
   * carries the same identity. `Schedule.stop` never retries.
   */
  readonly retry?: Schedule.Schedule<unknown, ToolCallError> | undefined
  /** How long to wait for the engine to confirm the sent marker (default 30 seconds). */
  readonly markerTimeout?: Duration.DurationInput | undefined
  /**
   * Makes the call as a task where the server allows it (docs/DURABILITY.md, "Tasks"): `ttl` the
   * lifetime asked of the task, `wait` the wait's budget overrides (the client's task budget
   * otherwise). A server that answers at once gives its result as a plain call would.
   */
  readonly task?: TaskOptions | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskOptions {
  readonly ttl?: Duration.DurationInput | undefined
  readonly wait?: McpTask.WaitOptions | undefined
}

/**
 * The connection of a named server of `McpServers` (connected by its first user, then shared).
 *
 * @since 0.1.0
 * @category connections
 */
export const server = (
  name: string
): Effect.Effect<McpClient.Connection, McpConnectionError.McpConnectionError, McpServers.McpServers> =>
  Effect.flatMap(McpServers.McpServers, (servers) => servers.connection(name))

/**
 * The default `retry`: three more sendings at most, 200 ms apart, then 400 ms and 800 ms.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaultRetry: Schedule.Schedule<unknown, ToolCallError> = Schedule.exponential("200 millis").pipe(
  Schedule.intersect(Schedule.recurs(3))
)

/**
 * The activity that sends the call: `call(options)`, or the `round`-th explicit retry.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolCallActivity<R> = Activity.Activity<typeof McpSchema.CallToolResult, typeof ToolCallError, R>

/**
 * What a tool call needs besides the engine: the connection's requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<R> = Exclude<R, WorkflowEngine | WorkflowInstance | Scope.Scope>

/**
 * The name of the activity of the `round`-th explicit retry (0: the call itself).
 *
 * @since 0.1.0
 * @category naming
 */
export const activityName = (name: string, round: number): string => round === 0 ? name : `${name}/retry-${round}`

/**
 * Whether the tool, as the connection lists it, says sending it twice is safe: `readOnlyHint`
 * or `idempotentHint` (MCP tool annotations). A tool the connection does not list is not.
 *
 * @since 0.1.0
 * @category retry
 */
export const isIdempotent = (tools: ReadonlyArray<McpSchema.Tool>, name: string): boolean => {
  const annotations = tools.find((tool) => tool.name === name)?.annotations
  return annotations?.["readOnlyHint"] === true || annotations?.["idempotentHint"] === true
}

/**
 * The wait for a task whose handle is stored: `taskResult` (polls, never `tools/call`), polled
 * again under `retry` after a failure that leaves the task where it was (`retryable`, or an
 * `unknown` outcome: a deadline, a transport failure), since polling has no effect to repeat.
 * The server's answers (a failed task, a refusal, a cancelled task, a malformed task) are final,
 * whatever their outcome.
 */
const awaitTask = <R>(
  options: Options<R>,
  connection: McpClient.Connection,
  taskId: string,
  about: { readonly tool: string; readonly activity: string; readonly effectIdentity: string }
): Effect.Effect<McpSchema.CallToolResult, ToolCallError> =>
  connection.taskResult(taskId, { ...options.task?.wait, tool: options.tool }).pipe(
    Effect.mapError((error) => fromConnectionError(error, { ...about, idempotent: true })),
    Effect.retry({
      schedule: options.retry ?? defaultRetry,
      while: (error: ToolCallError) =>
        error._tag === "ToolCallFailed" &&
        (error.retryable || (error.outcome === "unknown" && error.tag !== "ProtocolViolation" && error.tag !== "RemoteRefusal"))
    })
  )

const execute = <R>(options: Options<R>, name: string, round: number) =>
  Effect.gen(function*() {
    const effectIdentity = yield* EffectIdentity.derive(options.name)
    const attempt = yield* Activity.CurrentAttempt
    const marker = SentMarker.make(name, attempt)
    const about = { tool: options.tool, activity: name, effectIdentity }
    yield* Effect.annotateCurrentSpan({ "mcp.tool.name": options.tool, "mcp.effect_identity": effectIdentity })

    // A task already created for this call (an earlier execution stored its handle): wait for it.
    const taskMarker = TaskMarker.make(name)
    const stored = options.task === undefined ? undefined : Option.getOrUndefined(yield* TaskMarker.find(taskMarker))
    if (stored !== undefined) {
      yield* Effect.annotateCurrentSpan({ "phasebound.resumed": true, "mcp.task.id": stored.taskId })
      const connection = yield* Effect.mapError(options.connection, (error) => fromConnectionError(error, { ...about, idempotent: true }))
      // Another server cannot know the task: nothing is polled there, nothing is called.
      if ((connection.serverInfo?.name ?? null) !== stored.server) {
        return yield* new ToolCallOutcomeUnknown({ ...about, source: "resumed", retry: round })
      }
      return yield* awaitTask(options, connection, stored.taskId, about)
    }

    // A marker already there: an earlier execution of this attempt may have sent the call.
    let sent = Option.getOrUndefined(yield* SentMarker.find(marker))
    if (sent !== undefined) {
      yield* Effect.annotateCurrentSpan("phasebound.resumed", true)
      if (!sent.idempotent) {
        return yield* new ToolCallOutcomeUnknown({ ...about, source: "resumed", retry: round })
      }
    }

    const once: Effect.Effect<Sent, ToolCallError, R | WorkflowEngine | WorkflowInstance> = Effect
      .gen(function*() {
        const connection = yield* Effect.mapError(
          options.connection,
          (error) => fromConnectionError(error, { ...about, idempotent: sent?.idempotent ?? false })
        )
        if (sent === undefined) {
          sent = { effectIdentity, idempotent: isIdempotent(connection.tools, options.tool) }
          yield* SentMarker.record(marker, sent, options.markerTimeout)
        }
        const idempotent = sent.idempotent
        const callOptions = { ...options.callOptions, effectIdentity }
        const call: Effect.Effect<Sent, McpConnectionError.McpConnectionError> = options.task === undefined
          ? Effect.map(connection.callTool(options.tool, options.arguments, callOptions), (result): Sent => ({ _tag: "Result", result }))
          : connection.callToolTask(options.tool, options.arguments, {
            ...(callOptions.timeout === undefined ? {} : { timeout: callOptions.timeout }),
            ...(callOptions.maxBytes === undefined ? {} : { maxBytes: callOptions.maxBytes }),
            ...(callOptions.meta === undefined ? {} : { meta: callOptions.meta }),
            ...(options.task.ttl === undefined ? {} : { ttl: options.task.ttl }),
            effectIdentity
          })
        return yield* call.pipe(
          Effect.mapError((error): ToolCallError => {
            const failed = fromConnectionError(error, { ...about, idempotent })
            return failed.outcome === "unknown" && !failed.retryable && !idempotent
              ? new ToolCallOutcomeUnknown({
                ...about,
                source: "call",
                retry: round,
                tag: failed.tag,
                stage: failed.stage,
                ...(failed.reason === undefined ? {} : { reason: failed.reason })
              })
              : failed
          })
        )
      })

    const answered = yield* Effect.retry(once, {
      schedule: options.retry ?? defaultRetry,
      while: (error: ToolCallError) => error._tag === "ToolCallFailed" && isRetriedByItself(error)
    })
    if (answered._tag === "Result") return answered.result
    // The task exists: its handle goes into the engine's storage before any wait, so that whoever
    // executes this activity next polls it instead of calling the tool.
    const { handle } = answered
    const connection = yield* Effect.mapError(options.connection, (error) => fromConnectionError(error, { ...about, idempotent: true }))
    yield* TaskMarker.record(
      taskMarker,
      { taskId: handle.taskId, server: connection.serverInfo?.name ?? null, tool: options.tool, effectIdentity },
      options.markerTimeout
    )
    yield* Effect.annotateCurrentSpan("mcp.task.id", handle.taskId)
    return yield* awaitTask(options, connection, handle.taskId, about)
  })

/** What the sending gave: the result, or a task. */
type Sent = McpTask.TaskCall

const make = <R>(options: Options<R>, round: number): ToolCallActivity<Requirements<R>> => {
  const name = activityName(options.name, round)
  return Activity.make({
    name,
    success: McpSchema.CallToolResult,
    error: ToolCallError,
    execute: execute(options, name, round)
  })
}

/**
 * The tool call as an activity: yield it in a workflow. Succeeds with the tool's result
 * (`isError: true` included: a tool error is an answer, not a failure); fails with
 * `ToolCallFailed` or `ToolCallOutcomeUnknown`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const call = <R>(options: Options<R>): ToolCallActivity<Requirements<R>> => make(options, 0)

/**
 * Sends the call again after a `ToolCallOutcomeUnknown`, with the same effect identity, as a new
 * activity (`<name>/retry-<n>`: the failure that came before stays persisted as it was). The
 * workflow's explicit decision: use it when the server honours effect identities, or when a
 * person said so. Under the same rules as `call`: it may end `ToolCallOutcomeUnknown` again
 * (with `retry` one higher).
 *
 * `failure` must come from this call (same `options.name`): anything else is a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const retryUnknown = <R>(
  options: Options<R>,
  failure: ToolCallOutcomeUnknown
): Effect.Effect<McpSchema.CallToolResult, ToolCallError, Requirements<R> | WorkflowEngine | WorkflowInstance> =>
  failure.activity === activityName(options.name, failure.retry)
    ? make(options, failure.retry + 1)
    : Effect.dieMessage(`phasebound: retryUnknown of ${options.name} was given the failure of ${failure.activity}`)
