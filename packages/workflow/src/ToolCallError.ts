/**
 * The typed failures of a durable tool call (docs/DURABILITY.md, "How it works"). Both are
 * Schemas because the engine persists them: a replayed workflow gets the same failure back
 * without calling the tool again. They carry the public, safe fields of the client's errors
 * only: never a URL, a header, a body or a server's message.
 *
 * @since 0.1.0
 */
import { McpConnectionError } from "@phasebound/client"
import * as Schema from "effect/Schema"

/**
 * Who the failure is about: the tool, the activity that called it and the effect identity the
 * call carried (the same for every sending of that effect).
 */
const CallFields = {
  tool: Schema.String,
  activity: Schema.String,
  effectIdentity: Schema.String
}

/**
 * The client's error, as persisted: its tag and public fields, with what the tool's annotations
 * said when it was called (`idempotent`: `readOnlyHint` or `idempotentHint`). The fields are the
 * client's own Schemas (`McpConnectionError.Tag`, `PublicFields`): a persisted failure decodes
 * only with a tag, stage, phase, outcome and reason the client knows.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolCallFailed extends Schema.TaggedError<ToolCallFailed>("@phasebound/workflow/ToolCallFailed")(
  "ToolCallFailed",
  {
    ...CallFields,
    /** The client error's `_tag`. */
    tag: McpConnectionError.Tag,
    ...McpConnectionError.PublicFields.pick("outcome", "retryable", "stage", "phase", "reason", "status", "code").fields,
    idempotent: Schema.Boolean
  }
) {}

/**
 * The outcome of a call to a tool that is neither read-only nor idempotent is unknown: it may
 * have been applied. Never retried by phasebound: the workflow decides (compensate, ask a
 * person, or `ToolCall.retryUnknown`, which sends it again with the same effect identity).
 *
 * `source`: `"call"` when the call itself ended so (a deadline, a reset, a 5xx after it was
 * sent; `tag`, `stage` and `reason` say which); `"resumed"` when an execution of the activity
 * found the sent marker of an earlier one (a worker that died mid-call) and did not send.
 * `retry` is 0 for the call, n for its n-th explicit retry.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolCallOutcomeUnknown extends Schema.TaggedError<ToolCallOutcomeUnknown>(
  "@phasebound/workflow/ToolCallOutcomeUnknown"
)("ToolCallOutcomeUnknown", {
  ...CallFields,
  source: Schema.Literal("call", "resumed"),
  retry: Schema.Number,
  tag: Schema.optional(McpConnectionError.Tag),
  stage: Schema.optional(McpConnectionError.Stage),
  reason: Schema.optional(McpConnectionError.Reason)
}) {}

/**
 * @since 0.1.0
 * @category errors
 */
export const ToolCallError = Schema.Union(ToolCallFailed, ToolCallOutcomeUnknown)

/**
 * @since 0.1.0
 * @category errors
 */
export type ToolCallError = typeof ToolCallError.Type

/**
 * The persisted form of a client error: its public fields only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConnectionError = (
  error: McpConnectionError.McpConnectionError,
  call: { readonly tool: string; readonly activity: string; readonly effectIdentity: string; readonly idempotent: boolean }
): ToolCallFailed => {
  const record = McpConnectionError.toRecord(error)
  return new ToolCallFailed({
    tool: call.tool,
    activity: call.activity,
    effectIdentity: call.effectIdentity,
    tag: record.tag,
    outcome: record.outcome,
    retryable: record.retryable,
    stage: record.stage,
    phase: record.phase,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    ...(record.status === undefined ? {} : { status: record.status }),
    ...(record.code === undefined ? {} : { code: record.code }),
    idempotent: call.idempotent
  })
}

/**
 * Whether phasebound may send the call again, with the same effect identity: never when it was
 * `applied`; when the client says it is `retryable` (nothing reached the server, or the server
 * refused it unprocessed); when its outcome is `unknown` and the tool is read-only or idempotent.
 *
 * @since 0.1.0
 * @category retry
 */
export const isRetrySafe = (failure: ToolCallFailed): boolean =>
  failure.outcome !== "applied" && (failure.retryable || (failure.outcome === "unknown" && failure.idempotent))

/**
 * Whether `ToolCall.call` sends the call again by itself, under its `retry` schedule: where
 * `isRetrySafe` allows it, except a refusal that waits on a person (`UrlElicitationRequired`:
 * the server asks the user to complete an elicitation at a URL first). Sending that again
 * before the user has done so is refused the same way, so the workflow fails with it at once;
 * the caller shows the elicitations (`McpConnectionError.urlElicitationsOf` of the connection's
 * error, outside the workflow: the stored failure keeps only public fields) and runs it again.
 *
 * @since 0.1.0
 * @category retry
 */
export const isRetriedByItself = (failure: ToolCallFailed): boolean => isRetrySafe(failure) && failure.tag !== "UrlElicitationRequired"
