/**
 * phasebound ai: MCP tools as an `@effect/ai` toolkit, every call under phasebound's budgets,
 * every failure a tool result the model can read (docs/DESIGN.md, "AI toolkits").
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as McpToolkit from "./McpToolkit.js"

/** @since 0.1.0 */
export * as ToolFailure from "./ToolFailure.js"

/** @since 0.1.0 */
export * as ToolSource from "./ToolSource.js"
