/**
 * The catalog over `McpServers` (docs/DESIGN.md, "Catalog"): the servers' current tools merged
 * by the rules of `rules.ts`, their changes followed, and a call routed by catalog name to the
 * server that owns the tool, refused before anything is sent when the name is blocked,
 * conflicted or unknown.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Subscribable from "effect/Subscribable"
import type * as McpCatalog from "../../McpCatalog.js"
import type * as McpClient from "../../McpClient.js"
import { InvalidOption, type McpConnectionError, type Reason } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as McpServers from "../../McpServers.js"
import { defaults } from "../../PhasePolicy.js"
import * as Rules from "./rules.js"

/** A call refused by the catalog: nothing was sent, and repeating it cannot help. */
export const refusedCall = (reason: Extract<Reason, "tool-blocked" | "tool-conflict" | "unknown-tool">): InvalidOption =>
  new InvalidOption({
    stage: "call",
    phase: "call",
    limits: { timeoutMs: defaults.timeoutMs, maxBytes: defaults.maxBytes },
    option: "tool",
    reason,
    outcome: "not-sent",
    retryable: false
  })

/** The options given laid over the servers' own (a servers file's entries): a server's fields, one by one. */
export const combine = (own: McpCatalog.Options | undefined, given: McpCatalog.Options | undefined): McpCatalog.Options => {
  if (own === undefined) return given ?? {}
  if (given === undefined) return own
  const servers: Record<string, McpCatalog.ServerRules> = { ...own.servers }
  for (const [name, rules] of Object.entries(given.servers ?? {})) servers[name] = { ...servers[name], ...rules }
  return { ...own, ...given, servers }
}

const sameTool = (a: McpSchema.Tool, b: McpSchema.Tool) => a === b || JSON.stringify(a) === JSON.stringify(b)

const sameTools = (a: ReadonlyArray<McpCatalog.CatalogTool>, b: ReadonlyArray<McpCatalog.CatalogTool>): boolean =>
  a.length === b.length && a.every((entry, i) => entry.name === b[i]!.name && entry.server === b[i]!.server && sameTool(entry.tool, b[i]!.tool))

/** Two listings with the same tools, conflicts and rejected names (a list announced again unchanged). */
const sameListing = (a: McpCatalog.Listing, b: McpCatalog.Listing): boolean =>
  a.conflicts.length === b.conflicts.length && a.rejected.length === b.rejected.length && sameTools(a.tools, b.tools) &&
  a.conflicts.every((conflict, i) => {
    const other = b.conflicts[i]!
    return conflict.name === other.name && conflict.tools.length === other.tools.length &&
      conflict.tools.every((tool, j) => tool.server === other.tools[j]!.server && tool.tool === other.tools[j]!.tool)
  }) &&
  a.rejected.every((rejected, i) => rejected.server === b.rejected[i]!.server && rejected.tool === b.rejected[i]!.tool)

export const make = (
  servers: McpServers.Service,
  options: McpCatalog.Options | undefined
): Effect.Effect<McpCatalog.Catalog, InvalidOption> =>
  Effect.suspend(() => {
    const validated = Rules.validate(servers.names, combine(servers.catalog, options))
    if (!Array.isArray(validated)) return Effect.fail(validated as InvalidOption)
    const rules = validated as ReadonlyArray<Rules.ServerRules>

    /** Every server's connection (each connected on first use, side by side). */
    const connections: Effect.Effect<ReadonlyArray<readonly [Rules.ServerRules, McpClient.Connection]>, McpConnectionError> = Effect.forEach(
      rules,
      (server) => Effect.map(servers.connection(server.server), (connection) => [server, connection] as const),
      { concurrency: "unbounded" }
    )

    const lists = Effect.map(connections, (pairs) => pairs.map(([server, connection]) => ({ rules: server, tools: connection.tools })))

    const listing: Effect.Effect<McpCatalog.Listing, McpConnectionError> = Effect.map(lists, Rules.merge).pipe(
      Effect.withSpan("mcp.catalog.list", { attributes: { "mcp.catalog.servers": rules.length }, captureStackTrace: false })
    )

    const listings: Stream.Stream<McpCatalog.Listing, McpConnectionError> = Stream.unwrap(Effect.map(connections, (pairs) => {
      if (pairs.length === 0) return Stream.make(Rules.merge([]))
      const each = pairs.map(([server, connection]) => Stream.map(connection.toolList.changes, (tools) => ({ rules: server, tools })))
      // Each server's stream starts with its current list: the first listing waits for all of them.
      return Stream.zipLatestAll(...each).pipe(
        Stream.map((current) => Rules.merge(current)),
        Stream.changesWith(sameListing)
      )
    }))

    const listTools = Effect.map(listing, (merged) => merged.tools)

    /** Why a name that is not listed was refused: blocked by a server's filter, or unknown. */
    const notListed = (name: string, current: ReadonlyArray<{ readonly rules: Rules.ServerRules; readonly tools: ReadonlyArray<McpSchema.Tool> }>) => {
      for (const { rules: server, tools } of current) {
        for (const tool of tools) {
          if (tool.name.length <= Rules.maxNameLength && !Rules.admits(server, tool.name) && Rules.nameOf(server, tool.name) === name) {
            return refusedCall("tool-blocked")
          }
        }
      }
      const { found } = Rules.candidates(rules, name)
      return refusedCall(found.length > 0 && found.every((candidate) => !Rules.admits(candidate.rules, candidate.tool)) ? "tool-blocked" : "unknown-tool")
    }

    const callTool = (
      name: string,
      args?: Readonly<Record<string, unknown>>,
      callOptions?: McpClient.CallOptions
    ): Effect.Effect<McpSchema.CallToolResult, McpConnectionError> =>
      Effect.suspend(() => {
        // What the name alone tells, with no connection made: every server it could belong to
        // refuses that tool, or none could have it.
        const { complete, found } = Rules.candidates(rules, name)
        if (complete && found.length === 0) return Effect.fail(refusedCall("unknown-tool"))
        if (complete && found.every((candidate) => !Rules.admits(candidate.rules, candidate.tool))) return Effect.fail(refusedCall("tool-blocked"))
        return Effect.flatMap(lists, (current) => {
          const merged = Rules.merge(current)
          const entry = merged.tools.find((tool) => tool.name === name)
          if (entry !== undefined) return servers.callTool(entry.server, entry.tool.name, args, callOptions)
          if (merged.conflicts.some((conflict) => conflict.name === name)) return Effect.fail(refusedCall("tool-conflict"))
          return Effect.fail(notListed(name, current))
        })
      }).pipe(Effect.withSpan("mcp.catalog.call", { attributes: { "mcp.catalog.servers": rules.length }, captureStackTrace: false }))

    const catalog: McpCatalog.Catalog = {
      servers: rules.map((server) => server.server),
      listing,
      listTools,
      listings,
      // A new listing whose tools are the same (only its conflicts or rejected names changed) is no new list.
      toolList: Subscribable.make({
        get: listTools,
        changes: Stream.map(listings, (merged) => merged.tools).pipe(Stream.changesWith(sameTools))
      }),
      callTool,
      nameOf: (server, tool) => {
        const found = rules.find((candidate) => candidate.server === server)
        return found === undefined ? undefined : Rules.nameOf(found, tool)
      }
    }
    return Effect.succeed(catalog)
  })
