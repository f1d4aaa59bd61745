/**
 * phasebound workflow: MCP tool calls as durable `@effect/workflow` activities, with a stable
 * effect identity, a sent marker in the engine's own storage, and retries only where phasebound
 * knows they are safe (docs/DURABILITY.md, "How it works").
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as EffectIdentity from "./EffectIdentity.js"

/** @since 0.1.0 */
export * as SentMarker from "./SentMarker.js"

/** @since 0.1.0 */
export * as TaskMarker from "./TaskMarker.js"

/** @since 0.1.0 */
export * as ToolCall from "./ToolCall.js"

/** @since 0.1.0 */
export * as ToolCallError from "./ToolCallError.js"
