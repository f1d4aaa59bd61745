/**
 * What the model reads when a tool call does not succeed (docs/DESIGN.md, "AI toolkits"): the
 * failure schema of every MCP tool of a toolkit, and the conversions into it.
 *
 * Every failure is a value the model can read, never a failure of `generateText`:
 *
 * - `ToolReturnedError`: the server's result with `isError: true`, as the server sent it.
 * - `CallFailed`: a typed failure of the call (`McpConnectionError`, any tag): its `_tag`, its
 *   `message` and its public fields, nothing else. Those never carry a URL, a header, a
 *   credential, a body or a stack, and `remoteMessage` is already sanitized.
 * - `UnknownTool`: the tool is no longer in the source's current list; it was not called.
 * - `InvalidArguments`: the model's arguments were not a JSON object; the tool was not called.
 * - `InternalFailure`: a defect (a bug, here or in a caller's callback). The model learns only
 *   that it happened; the cause stays in process (`McpToolkit`'s `onDefect`).
 *
 * @since 0.1.0
 */
import { McpConnectionError, McpSchema } from "@phasebound/client"
import * as Schema from "effect/Schema"

const preserve = { onExcessProperty: "preserve" } as const

/**
 * A result the tool itself marked as an error (`isError: true`): the server's result, with
 * every field it sent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolReturnedError = Schema.Struct({
  content: Schema.Array(McpSchema.ContentBlock),
  structuredContent: Schema.optional(Schema.Unknown),
  isError: Schema.Literal(true)
}).annotations({ identifier: "ToolReturnedError", parseOptions: preserve })

/**
 * @since 0.1.0
 * @category models
 */
export type ToolReturnedError = typeof ToolReturnedError.Type

/**
 * A typed failure of the call: the error's `_tag`, its `message` (built from its public fields
 * only) and its public fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CallFailed = Schema.Struct({
  _tag: McpConnectionError.Tag,
  message: Schema.String,
  ...McpConnectionError.PublicFields.fields
}).annotations({ identifier: "CallFailed" })

/**
 * @since 0.1.0
 * @category models
 */
export type CallFailed = typeof CallFailed.Type

/**
 * A call to a tool that the source no longer lists (the server's list changed after the model
 * saw it): refused before anything was sent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UnknownTool = Schema.TaggedStruct("UnknownTool", {
  message: Schema.String,
  tool: Schema.String,
  outcome: Schema.Literal("not-sent")
}).annotations({ identifier: "UnknownTool" })

/**
 * @since 0.1.0
 * @category models
 */
export type UnknownTool = typeof UnknownTool.Type

/**
 * A call whose arguments are not a JSON object (an array, a string, a number, `null`): MCP
 * arguments are an object, so nothing was sent; the model may call again with one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InvalidArguments = Schema.TaggedStruct("InvalidArguments", {
  message: Schema.String,
  tool: Schema.String,
  outcome: Schema.Literal("not-sent")
}).annotations({ identifier: "InvalidArguments" })

/**
 * @since 0.1.0
 * @category models
 */
export type InvalidArguments = typeof InvalidArguments.Type

/**
 * A defect while handling the call. Whether the call reached the server is unknown.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InternalFailure = Schema.TaggedStruct("InternalError", {
  message: Schema.String,
  reason: Schema.Literal("defect"),
  outcome: Schema.Literal("unknown"),
  retryable: Schema.Literal(false)
}).annotations({ identifier: "InternalFailure" })

/**
 * @since 0.1.0
 * @category models
 */
export type InternalFailure = typeof InternalFailure.Type

/**
 * The failure schema of every MCP tool of a toolkit.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolFailure = Schema.Union(ToolReturnedError, CallFailed, UnknownTool, InvalidArguments, InternalFailure)

/**
 * @since 0.1.0
 * @category models
 */
export type ToolFailure = typeof ToolFailure.Type

/**
 * The readable form of a typed failure: `_tag`, `message` and the public fields (copied from
 * the error's record, so nothing else of the error comes along).
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromError = (error: McpConnectionError.McpConnectionError): CallFailed => {
  const { tag, ...fields } = McpConnectionError.toRecord(error)
  return { _tag: tag, message: error.message, ...fields }
}

/**
 * The failure of a call to a tool the source no longer lists.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownTool = (tool: string): UnknownTool => ({
  _tag: "UnknownTool",
  message: `unknown tool: ${tool} is no longer listed by its server; it was not called`,
  tool,
  outcome: "not-sent"
})

/**
 * The failure of a call whose arguments are not a JSON object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalidArguments = (tool: string): InvalidArguments => ({
  _tag: "InvalidArguments",
  message: `invalid arguments: ${tool} takes a JSON object of arguments; it was not called`,
  tool,
  outcome: "not-sent"
})

/**
 * The failure the model reads for a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const internalFailure: InternalFailure = {
  _tag: "InternalError",
  message: "internal error: the call failed unexpectedly; whether it reached the server is unknown",
  reason: "defect",
  outcome: "unknown",
  retryable: false
}
