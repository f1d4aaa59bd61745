/**
 * The effect identity of a durable tool call (docs/DURABILITY.md, "How it works"): derived from
 * the workflow execution id and the activity's name, so every execution of the activity (a
 * replay, a retry, a re-execution on another worker after a crash, an explicit retry) sends the
 * same one, and a server that honours it can tell a second sending from a second effect.
 *
 * @since 0.1.0
 */
import * as Activity from "@effect/workflow/Activity"
import type { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type * as Effect from "effect/Effect"

/**
 * The identity of the activity `name` in the current workflow execution: the engine's own
 * idempotency key (a SHA-256 digest of the execution id and the name, without the attempt).
 * The execution id is derived from the workflow's payload, so the identity is stable across
 * replays and restarts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const derive = (name: string): Effect.Effect<string, never, WorkflowInstance> => Activity.idempotencyKey(name)
