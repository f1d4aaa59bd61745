/**
 * The task marker of a durable tool call made as a task (docs/DURABILITY.md, "Tasks"): the
 * handle of the task the server created for the call (its id, and who the server said it was),
 * recorded in the engine's own storage BEFORE the activity waits for the task. An execution that
 * finds it (a worker died while the task ran, or an earlier attempt's wait failed) polls that
 * same task for its result and never calls the tool again.
 *
 * Recorded and read like the sent marker (`SentMarker`: a `DurableDeferred` on the companion
 * execution `<executionId>/sent`, confirmed before the activity goes on), but named after the
 * activity alone, not its attempt: every attempt of the activity is the same call, whose one task
 * they all wait for.
 *
 * @since 0.1.0
 */
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SentMarker from "./SentMarker.js"

/**
 * What the marker holds: the task's id, the name the server gave itself when the task was
 * created (`serverInfo.name`, `null` if it gave none), the tool and the effect identity of the
 * call that created it.
 *
 * @since 0.1.0
 * @category models
 */
export const Stored = Schema.Struct({
  taskId: Schema.String,
  server: Schema.NullOr(Schema.String),
  tool: Schema.String,
  effectIdentity: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type Stored = typeof Stored.Type

/**
 * The task marker of one activity (every attempt shares it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (activity: string): DurableDeferred.DurableDeferred<typeof Stored> =>
  DurableDeferred.make(`phasebound/task/${activity}`, { success: Stored })

/**
 * The marker, if an execution recorded it.
 *
 * @since 0.1.0
 * @category reading
 */
export const find = (
  marker: DurableDeferred.DurableDeferred<typeof Stored>
): Effect.Effect<Option.Option<Stored>, never, WorkflowEngine | WorkflowInstance> => SentMarker.find(marker)

/**
 * Records the marker and waits until the engine returns it (as `SentMarker.record`); a marker not
 * confirmed in `timeout` is a defect, and the activity does not wait for the task.
 *
 * @since 0.1.0
 * @category recording
 */
export const record = (
  marker: DurableDeferred.DurableDeferred<typeof Stored>,
  stored: Stored,
  timeout?: Duration.DurationInput
): Effect.Effect<void, never, WorkflowEngine | WorkflowInstance> => SentMarker.record(marker, stored, timeout)
