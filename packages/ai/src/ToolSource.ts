/**
 * Where a toolkit's tools come from (docs/DESIGN.md, "AI toolkits"): a current list of tools
 * that may change, and a way to call one of them by the name the source gives it.
 *
 * A `Connection` is one (`fromConnection`); a catalog of several servers is another: its entries
 * already have this shape (`name`, `server`, `tool`), so an adapter is a record of its
 * `toolList` and `callTool`.
 *
 * @since 0.1.0
 */
import type { McpClient, McpConnectionError, McpSchema } from "@phasebound/client"
import type * as Effect from "effect/Effect"
import * as Subscribable from "effect/Subscribable"

/**
 * One tool of a source: the name the source calls it by (`callTool`'s `name`), the server it
 * lives on when the source spans several, and the tool as that server listed it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SourceTool {
  /** The name `ToolSource.callTool` takes: a connection's is the tool's own name. */
  readonly name: string
  /** The server the tool lives on, for a source over several servers. */
  readonly server?: string | undefined
  /** The tool as its server listed it; `inputSchema` is given to the model unchanged. */
  readonly tool: McpSchema.Tool
}

/**
 * A source of tools for `McpToolkit`.
 *
 * - `toolList.get` is the current list, read without I/O each time a toolkit is built and
 *   before each call (a tool no longer listed is not called: see `McpToolkit`).
 * - `callTool` calls one tool once, under the source's own budgets, and fails only with an
 *   `McpConnectionError`; a result with `isError: true` is a result.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSource {
  readonly toolList: Subscribable.Subscribable<ReadonlyArray<SourceTool>>
  readonly callTool: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    options?: McpClient.CallOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError.McpConnectionError>
}

const sourceToolsOf = (tools: ReadonlyArray<McpSchema.Tool>): ReadonlyArray<SourceTool> => tools.map((tool) => ({ name: tool.name, tool }))

/**
 * A connection as a tool source: its live tool list (which follows `tools/list_changed`,
 * docs/DESIGN.md, "Live tool lists") and its `callTool`, under the connection's call budget.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConnection = (connection: McpClient.Connection): ToolSource => ({
  toolList: Subscribable.map(connection.toolList, sourceToolsOf),
  callTool: (name, args, options) => connection.callTool(name, args, options)
})
