/**
 * One merged, live tool list over the servers of `McpServers` (docs/DESIGN.md, "Catalog"). Each
 * server keeps its own policy and authorization and is connected on first use; the catalog names
 * each tool after its server (`server__tool` by default), leaves out what a server's allow and
 * block lists refuse, never lets one tool shadow another (two tools of one catalog name are both
 * left out and reported as a conflict), and routes a call by catalog name to the server that owns
 * the tool: a name that is blocked, conflicted or unknown is refused (`InvalidOption`, option
 * `tool`, outcome `not-sent`) before anything is sent. A server that cannot be connected holds
 * back no other server's tools: the listing reports it (`failures`), and a call connects only the
 * servers that could have its name.
 *
 * @example
 * ```ts
 * import { Authorization, McpCatalog, McpServers } from "@phasebound/client"
 * import { NodeContext, NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * const Servers = McpServers.layer({
 *   servers: { github: { url: "https://example.com/github/mcp" }, local: { command: "npx", args: ["-y", "some-server"] } }
 * }).pipe(Layer.provide(Layer.mergeAll(NodeContext.layer, NodeHttpClient.layerUndici, Authorization.layerDefaults)))
 *
 * const Live = McpCatalog.layer({ servers: { github: { blockTools: ["delete_*"] } } }).pipe(Layer.provide(Servers))
 *
 * const program = Effect.gen(function*() {
 *   const catalog = yield* McpCatalog.McpCatalog
 *   const tools = yield* catalog.listTools // [{ name: "github__search", server: "github", tool: { name: "search", ... } }, ...]
 *   return yield* catalog.callTool("github__search", { query: "effect" })
 * }).pipe(Effect.provide(Live))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import type * as Subscribable from "effect/Subscribable"
import type * as McpClient from "./McpClient.js"
import type { InvalidOption, McpConnectionError } from "./McpConnectionError.js"
import type * as McpSchema from "./McpSchema.js"
import * as McpServers from "./McpServers.js"
import * as Internal from "./internal/catalog/catalog.js"
import * as Rules from "./internal/catalog/rules.js"

/**
 * A tool of the catalog: its catalog name, the server it belongs to, and that server's tool with
 * its own name unchanged (the name the server is called with).
 *
 * @since 0.1.0
 * @category models
 */
export interface CatalogTool {
  readonly name: string
  readonly server: string
  readonly tool: McpSchema.Tool
}

/**
 * A catalog name resolved to its tool (`resolve`), with the call of that very tool on its server:
 * `call` does not route the name again (what `callTool` does), so the tool called is the one
 * resolved, even if the listing has changed since.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedTool extends CatalogTool {
  readonly call: (
    args?: Readonly<Record<string, unknown>>,
    options?: McpClient.CallToolOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
}

/**
 * Tools that map to one catalog name (of two servers, or of one under a naming function): none
 * of them is listed, and calling the name is refused (`tool-conflict`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Conflict {
  readonly name: string
  readonly tools: ReadonlyArray<{ readonly server: string; readonly tool: string }>
}

/**
 * A tool left out because its catalog name would not be a valid MCP tool name (1 to 128
 * characters of `A-Z a-z 0-9 _ . -`): a server's own name with other characters, a name made too
 * long by its prefix, a naming function's answer that is not one (or a throw).
 *
 * @since 0.1.0
 * @category models
 */
export interface Rejected {
  readonly server: string
  readonly tool: string
  readonly reason: "invalid-name"
}

/**
 * A server that could not be connected (its discovery failed, or it failed lately and waits for
 * its next try): its configured name, and its typed error (which names it too, `server`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerFailure {
  readonly server: string
  readonly error: McpConnectionError
}

/**
 * A tool held back: a server that could not be connected (`failed`) could give its catalog name
 * too, so offering it could shadow that server's tool. It is listed once those servers are.
 *
 * @since 0.1.0
 * @category models
 */
export interface Unresolved {
  readonly name: string
  readonly server: string
  readonly tool: string
  readonly failed: ReadonlyArray<string>
}

/**
 * The merged list and what it left out for a reason the caller should see. Tools refused by an
 * allow or block list are left out without a mention: that is what the lists are for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listing {
  readonly tools: ReadonlyArray<CatalogTool>
  readonly conflicts: ReadonlyArray<Conflict>
  readonly rejected: ReadonlyArray<Rejected>
  /** The servers that could not be connected, in their order: their tools are not in `tools`. */
  readonly failures: ReadonlyArray<ServerFailure>
  /** Tools of the servers listed whose name a failed server could give too: not in `tools`. */
  readonly unresolved: ReadonlyArray<Unresolved>
}

/**
 * One server's rules. `prefix`: its tools are named `prefix + separator + tool`, or, with
 * `false`, by their own names (the default prefix is the server's name). `allowTools`: when
 * given, only the tools one of these glob patterns matches are listed and called; `blockTools`:
 * the tools one of these matches never are. Block wins over allow. Patterns match the server's
 * own tool name, whole and case-sensitively: `*` any run of characters, `?` one, `[a-z]`,
 * `[!a-z]` (or `[^a-z]`) one of a class or outside it, `\` before a character for itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerRules {
  readonly prefix?: string | false | undefined
  readonly allowTools?: ReadonlyArray<string> | undefined
  readonly blockTools?: ReadonlyArray<string> | undefined
}

/**
 * The catalog's options. `prefix`: `false` names every tool by its own name, a function
 * `(server, tool) => name` names each tool (its answer must be a valid tool name, or the tool is
 * rejected); a server's own `prefix` wins over either. `separator` goes between a prefix and the
 * tool's name (default `__`). `servers`: rules per server, laid field by field over those of the
 * servers file (`McpServers.Options.catalog`); a server that is not configured is refused.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly prefix?: false | ((server: string, tool: string) => string) | undefined
  readonly separator?: string | undefined
  readonly servers?: Readonly<Record<string, ServerRules>> | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Catalog {
  /** The servers of the catalog, in their order. */
  readonly servers: ReadonlyArray<string>
  /**
   * The merged listing of the servers' current tools (each server's last listing), connecting
   * each server on first use, side by side. It does not fail: a server that cannot be connected
   * is in `failures` with its error, and a tool of another server whose name it could give too
   * is held back (`unresolved`), so a partial listing never lets one tool stand for another. A
   * server that failed is tried again by the first listing or call after its backoff (1, 2, 4 ...
   * at most 30 seconds after each failure in a row); until then its last failure is reported.
   */
  readonly listing: Effect.Effect<Listing>
  /** `listing`'s tools. */
  readonly listTools: Effect.Effect<ReadonlyArray<CatalogTool>>
  /**
   * The current listing, then each new one when a server's tools changed (its
   * `tools/list_changed`, followed by the connection; docs/DESIGN.md, "Live tool lists"), or a
   * server failed or came back, and the listing differs. It never fails: a server that could not
   * be connected is tried again after its backoff, and its tools join the listing once it is.
   */
  readonly listings: Stream.Stream<Listing>
  /** The current tools and their changes (`listings`' tools). */
  readonly toolList: Subscribable.Subscribable<ReadonlyArray<CatalogTool>>
  /**
   * Calls the tool of that catalog name on its server, under the server's own policy and every
   * rule of a call (sent at most once). Only the servers that could have the name are connected
   * (all of them, so that a name two of them give is a conflict). Refused before anything is
   * sent, `InvalidOption` option `tool`, with the call budget in force in `limits`:
   * `tool-blocked` (the server's allow or block list refuses it, `server` naming it; known from
   * the name alone where the naming allows, so without connecting), `tool-conflict`,
   * `unknown-tool` (also any name that is not a valid tool name). A name that a server which
   * cannot be connected could have fails with that server's error (its `server` names it).
   * With `redact: true`, the result is cleared of the secrets of every server connected so far
   * (those of `redact`), merged once for the result.
   */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpClient.CallToolOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
  /**
   * What a catalog name stands for now, found as `callTool` finds it (connecting only the servers
   * that could have it): its tool and the call of it, or `undefined` when it is not listed
   * (blocked, conflicted, unknown). Fails with the error of a server that could have the name
   * but cannot be connected.
   */
  readonly resolve: (name: string) => Effect.Effect<ResolvedTool | undefined, McpConnectionError>
  /** The catalog name a server's tool has (or would have), `undefined` when it would be invalid or the server is unknown. */
  readonly nameOf: (server: string, tool: string) => string | undefined
  /**
   * A text with the secrets of every server connected so far (merged: a secret that holds
   * another is replaced whole) replaced by `[redacted]` (`McpClient.Connection.redact`): for
   * what a server's answer hands on to a third party.
   */
  readonly redact: (text: string) => string
}

/**
 * @since 0.1.0
 * @category tags
 */
export class McpCatalog extends Context.Tag("@phasebound/client/McpCatalog")<McpCatalog, Catalog>() {}

/**
 * The default separator between a prefix and a tool's name.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSeparator: string = Rules.defaultSeparator

/**
 * Whether a name is a valid MCP tool name (1 to 128 characters of `A-Z a-z 0-9 _ . -`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isValidToolName: (name: string) => boolean = Rules.isValidName

/**
 * A catalog over a `McpServers` service. The options (over the servers' own rules) are
 * validated here, before any I/O: `InvalidOption` naming `prefix`, `separator`, `allowTools`,
 * `blockTools`, `catalog.servers` or `catalog`. A server's name is its default prefix, so it
 * must be made of tool-name characters (at most 64) unless the server has a prefix of its own,
 * `false`, or a naming function applies.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromServers: (servers: McpServers.Service, options?: Options) => Effect.Effect<Catalog, InvalidOption> = Internal.make

/**
 * `fromServers` over the `McpServers` of the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): Effect.Effect<Catalog, InvalidOption, McpServers.McpServers> =>
  Effect.flatMap(McpServers.McpServers, (servers) => Internal.make(servers, options))

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<McpCatalog, InvalidOption, McpServers.McpServers> => Layer.effect(McpCatalog, make(options))
