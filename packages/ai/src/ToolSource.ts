/**
 * Where a toolkit's tools come from (docs/DESIGN.md, "AI toolkits"): a current list of tools
 * that may change, and a way to call one of them by the name the source gives it.
 *
 * A `Connection` is one (`fromConnection`); a catalog over several servers is another
 * (`fromCatalog`): its entries already have this shape (`name`, `server`, `tool`).
 *
 * @since 0.1.0
 */
import type { McpCatalog, McpClient, McpConnectionError, McpSchema } from "@phasebound/client"
import * as Effect from "effect/Effect"
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
 * A tool a source resolved (`ToolSource.resolve`), with the call of that very tool: the name is
 * not looked up again, so the tool called is the one resolved.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedTool extends SourceTool {
  readonly call: (
    args: Readonly<Record<string, unknown>>,
    options?: McpClient.CallOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError.McpConnectionError>
}

/**
 * A source of tools for `McpToolkit`.
 *
 * - `toolList.get` is the current list, read each time a toolkit is built and before each call
 *   (a tool no longer listed is not called: see `McpToolkit`). A connection's is read without
 *   I/O; a catalog's connects each server on first use and leaves out the tools of one it cannot
 *   connect. Neither fails (`E` is `never`); a source of another kind may.
 * - `callTool` calls one tool once, under the source's own budgets, and fails only with an
 *   `McpConnectionError`; a result with `isError: true` is a result. What it returns is what
 *   the model reads: a source that knows secrets clears them from it, within the call's
 *   deadline (`fromConnection` and `fromCatalog` call with `redact: true`).
 * - `resolve` (optional) says what one name stands for now without reading the whole list, and
 *   gives its call (used in place of `callTool`, under the same rules): a catalog connects only
 *   the servers that could have the name, so a server that is down never delays a call to
 *   another. Without it, `toolList.get` is read before each call.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSource<E = never> {
  readonly toolList: Subscribable.Subscribable<ReadonlyArray<SourceTool>, E>
  readonly callTool: (
    name: string,
    args: Readonly<Record<string, unknown>>,
    options?: McpClient.CallOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError.McpConnectionError>
  readonly resolve?: ((name: string) => Effect.Effect<ResolvedTool | undefined, McpConnectionError.McpConnectionError>) | undefined
}

const sourceToolsOf = (tools: ReadonlyArray<McpSchema.Tool>): ReadonlyArray<SourceTool> => tools.map((tool) => ({ name: tool.name, tool }))

/**
 * A connection as a tool source: its live tool list (which follows `tools/list_changed`,
 * docs/DESIGN.md, "Live tool lists") and its `callTool`, under the connection's call budget,
 * each result cleared of the connection's secrets (`redact: true`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConnection = (connection: McpClient.Connection): ToolSource => ({
  toolList: Subscribable.map(connection.toolList, sourceToolsOf),
  callTool: (name, args, options) => connection.callTool(name, args, { ...options, redact: true })
})

/**
 * A catalog over several servers as a tool source (docs/DESIGN.md, "Catalog"): its merged, live
 * list (every server's own tools under their catalog names, conflicts and refused tools left
 * out, a server that cannot be connected reported and its tools missing) and its `callTool` by
 * catalog name, each call under its server's own policy, a tool its allow or block lists refuse
 * never sent; each result cleared of the secrets of every server connected (`redact: true`);
 * `resolve` connects only the servers that could have a name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCatalog = (catalog: McpCatalog.Catalog): ToolSource => ({
  toolList: catalog.toolList,
  callTool: (name, args, options) => catalog.callTool(name, args, { ...options, redact: true }),
  resolve: (name) =>
    Effect.map(
      catalog.resolve(name),
      (resolved) => resolved === undefined ? undefined : { ...resolved, call: (args, options) => resolved.call(args, { ...options, redact: true }) }
    )
})
