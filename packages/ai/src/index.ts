/**
 * MCP tools as an `@effect/ai` Toolkit (see the package README).
 *
 * @since 0.1.0
 */
export {}
