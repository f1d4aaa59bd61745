/**
 * The sent marker of a durable tool call (docs/DURABILITY.md, "How it works"): a record, in the
 * engine's own storage, that an execution of an activity attempt is about to send its
 * `tools/call`. An execution that finds one knows an earlier execution of the same attempt may
 * have sent it (the worker died before the engine persisted the activity's result), and that
 * its outcome is unknown.
 *
 * The marker is a `DurableDeferred` completed with `WorkflowEngine.deferredDone`, read with
 * `WorkflowEngine.deferredResult`. It lives on a companion execution id (`<executionId>/sent`)
 * of the same workflow, not on the workflow's own execution: `ClusterWorkflowEngine` handles a
 * workflow entity's messages one at a time, so a deferred sent to the running workflow would
 * wait for the workflow itself (which waits for the activity), and the marker could never be
 * confirmed before the call. The companion entity has no `run` to wait for.
 *
 * @since 0.1.0
 */
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

/**
 * What the marker holds: the identity the call carried and whether the tool was read-only or
 * idempotent when it was sent (so a re-execution decides from what was known then, even if the
 * server's annotations changed since).
 *
 * @since 0.1.0
 * @category models
 */
export const Sent = Schema.Struct({
  effectIdentity: Schema.String,
  idempotent: Schema.Boolean
})

/**
 * @since 0.1.0
 * @category models
 */
export type Sent = typeof Sent.Type

/**
 * The marker of one attempt of one activity (`Activity.CurrentAttempt`: attempts of an
 * `Activity.retry` are persisted apart, so each has its own).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (activity: string, attempt: number): DurableDeferred.DurableDeferred<typeof Sent> =>
  DurableDeferred.make(`phasebound/sent/${activity}/${attempt}`, { success: Sent })

/**
 * The companion execution id the markers of an execution are recorded under.
 *
 * @since 0.1.0
 * @category constructors
 */
export const executionIdOf = (executionId: string): string => `${executionId}/sent`

/** The current instance, seen as its companion execution (what `deferredResult` reads from). */
const companion = Effect.map(
  WorkflowInstance,
  (instance) => WorkflowInstance.of({ ...instance, executionId: executionIdOf(instance.executionId) })
)

/**
 * The marker, if an execution recorded it.
 *
 * @since 0.1.0
 * @category reading
 */
export const find = <S extends Schema.Schema.AnyNoContext = typeof Sent>(
  marker: DurableDeferred.DurableDeferred<S>
): Effect.Effect<Option.Option<S["Type"]>, never, WorkflowEngine | WorkflowInstance> =>
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine
    const instance = yield* companion
    const exit = yield* Effect.provideService(engine.deferredResult(marker), WorkflowInstance, instance)
    return exit !== undefined && Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none()
  })

/**
 * How long `record` waits, by default, for the engine to confirm the marker.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaultConfirmTimeout: Duration.Duration = Duration.seconds(30)

/**
 * Records the marker (or any record of the same kind: `TaskMarker`) and waits until the engine returns it (`deferredDone` of the cluster engine
 * returns once the message is stored; the marker is readable once its entity has handled it).
 * Only then may the call leave: a re-execution after a crash then always finds it. A marker not
 * confirmed in `timeout` is a defect (the engine's storage is not answering), and nothing is sent.
 *
 * @since 0.1.0
 * @category recording
 */
export const record = <S extends Schema.Schema.AnyNoContext = typeof Sent>(
  marker: DurableDeferred.DurableDeferred<S>,
  sent: S["Type"],
  timeout: Duration.DurationInput = defaultConfirmTimeout
): Effect.Effect<void, never, WorkflowEngine | WorkflowInstance> =>
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine
    const instance = yield* WorkflowInstance
    yield* engine.deferredDone(marker, {
      workflowName: instance.workflow.name,
      executionId: executionIdOf(instance.executionId),
      deferredName: marker.name,
      exit: Exit.succeed(sent)
    })
    const confirmed = find(marker).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail("unconfirmed" as const),
        onSome: () => Effect.void
      })),
      Effect.retry(Schedule.exponential("5 millis", 2).pipe(Schedule.union(Schedule.spaced("250 millis"))))
    )
    yield* confirmed.pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: () => "unconfirmed" as const }),
      Effect.catchAll(() => Effect.dieMessage(`phasebound: the sent marker ${marker.name} was not confirmed by the engine`))
    )
  })
