/**
 * The catalog over `McpServers` (docs/DESIGN.md, "Catalog"): the servers' current tools merged
 * by the rules of `rules.ts`, their changes followed, and a call routed by catalog name to the
 * server that owns the tool, refused before anything is sent when the name is blocked,
 * conflicted or unknown. A server that cannot be connected is reported beside the others' tools
 * and tried again after a backoff; a call connects only the servers that could have its name.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Subscribable from "effect/Subscribable"
import type * as McpCatalog from "../../McpCatalog.js"
import type * as McpClient from "../../McpClient.js"
import { InvalidOption, type McpConnectionError, type Reason, toRecord } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as McpServers from "../../McpServers.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import { backoffMs } from "../backoff.js"
import { sameJson } from "../sameJson.js"
import * as Secrets from "../secrets.js"
import * as ServersScope from "../serversScope.js"
import * as Rules from "./rules.js"

/** A call refused by the catalog: nothing was sent, and repeating it cannot help. */
const refusedCall = (
  reason: Extract<Reason, "tool-blocked" | "tool-conflict" | "unknown-tool">,
  limits: PhasePolicy.Budget,
  server: string | undefined
): InvalidOption =>
  new InvalidOption({
    stage: "call",
    phase: "call",
    limits,
    option: "tool",
    reason,
    ...(server === undefined ? {} : { server }),
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

export const sameTools = (a: ReadonlyArray<McpCatalog.CatalogTool>, b: ReadonlyArray<McpCatalog.CatalogTool>): boolean =>
  a.length === b.length && a.every((entry, i) => entry.name === b[i]!.name && entry.server === b[i]!.server && sameJson(entry.tool, b[i]!.tool))

/** What tells two failures of a server apart: their public records. */
export const failureKey = (error: McpConnectionError): string => JSON.stringify(toRecord(error))

const sameFailures = (a: ReadonlyArray<McpCatalog.ServerFailure>, b: ReadonlyArray<McpCatalog.ServerFailure>): boolean =>
  a.length === b.length && a.every((failure, i) => failure.server === b[i]!.server && failureKey(failure.error) === failureKey(b[i]!.error))

/** Two listings with the same tools, conflicts, rejected and unresolved names and failures (a list announced again unchanged). */
const sameListing = (a: McpCatalog.Listing, b: McpCatalog.Listing): boolean =>
  a.conflicts.length === b.conflicts.length && a.rejected.length === b.rejected.length && a.unresolved.length === b.unresolved.length &&
  sameTools(a.tools, b.tools) && sameFailures(a.failures, b.failures) &&
  a.conflicts.every((conflict, i) => {
    const other = b.conflicts[i]!
    return conflict.name === other.name && conflict.tools.length === other.tools.length &&
      conflict.tools.every((tool, j) => tool.server === other.tools[j]!.server && tool.tool === other.tools[j]!.tool)
  }) &&
  a.rejected.every((rejected, i) => rejected.server === b.rejected[i]!.server && rejected.tool === b.rejected[i]!.tool) &&
  a.unresolved.every((held, i) => {
    const other = b.unresolved[i]!
    return held.name === other.name && held.server === other.server && held.tool === other.tool && held.failed.join("\u0000") === other.failed.join("\u0000")
  })

/** One server as the catalog last found it: its current tools, or why it could not be connected. */
interface ServerState {
  readonly rules: Rules.ServerRules
  readonly result: Either.Either<ReadonlyArray<McpSchema.Tool>, McpConnectionError>
}

/** The listing of the servers' states: the merge of those listed, the others reported. */
const listingOf = (states: ReadonlyArray<ServerState>): McpCatalog.Listing => {
  const lists: Array<{ readonly rules: Rules.ServerRules; readonly tools: ReadonlyArray<McpSchema.Tool> }> = []
  const failed: Array<Rules.ServerRules> = []
  const failures: Array<McpCatalog.ServerFailure> = []
  for (const { result, rules } of states) {
    if (Either.isRight(result)) lists.push({ rules, tools: result.right })
    else {
      failed.push(rules)
      failures.push({ server: rules.server, error: result.left })
    }
  }
  return { ...Rules.merge(lists, failed), failures }
}

/** What a catalog name stands for: its tool, or a refusal (naming the server the name belongs to, when one does). */
type Route = { readonly _tag: "Found"; readonly entry: McpCatalog.CatalogTool } | Refused

interface Refused {
  readonly _tag: "Refused"
  readonly reason: Extract<Reason, "tool-blocked" | "tool-conflict" | "unknown-tool">
  readonly server?: string | undefined
}

const refused = (reason: Refused["reason"], server?: string): Refused => ({ _tag: "Refused", reason, server })

/** Why a name that is not listed was refused: blocked by a server's filter, or unknown. */
const notListed = (name: string, states: ReadonlyArray<ServerState>): Refused => {
  for (const { result, rules } of states) {
    if (Either.isLeft(result)) continue
    for (const tool of result.right) {
      if (tool.name.length <= Rules.maxNameLength && !Rules.admits(rules, tool.name) && Rules.nameOf(rules, tool.name) === name) {
        return refused("tool-blocked", rules.server)
      }
    }
  }
  return refused("unknown-tool")
}

/** A server's last failure to connect, and when it may be tried again. */
interface Failed {
  readonly error: McpConnectionError
  readonly failures: number
  readonly at: number
  readonly retryAt: number
}

export const make = (
  servers: McpServers.Service,
  options: McpCatalog.Options | undefined
): Effect.Effect<McpCatalog.Catalog, InvalidOption> =>
  Effect.suspend(() => {
    const validated = Rules.validate(servers.names, combine(servers.catalog, options))
    if (!Array.isArray(validated)) return Effect.fail(validated as InvalidOption)
    const rules = validated as ReadonlyArray<Rules.ServerRules>
    const rulesOf = new Map(rules.map((server) => [server.server, server]))

    // A service made otherwise than by `McpServers.make` has none: its retries are daemons,
    // bounded by the server's discovery deadline.
    const serversScope = ServersScope.scopeOf(servers)
    const failed = new Map<string, Failed>()
    const retrying = new Set<string>()
    const connected = new Map<string, McpClient.Connection>()

    /** The server's connection (connected on first use by `McpServers`), or why it cannot be had; the outcome recorded. */
    const connect = (server: Rules.ServerRules): Effect.Effect<Either.Either<McpClient.Connection, McpConnectionError>> =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const result = yield* Effect.either(servers.connection(server.server))
        if (Either.isRight(result)) {
          failed.delete(server.server)
          connected.set(server.server, result.right)
          return result
        }
        const now = yield* Clock.currentTimeMillis
        const current = failed.get(server.server)
        // A failure recorded since this attempt started was that of the discovery it shared.
        if (current !== undefined && current.at >= started) return result
        const failures = (current?.failures ?? 0) + 1
        failed.set(server.server, { error: result.left, failures, at: now, retryAt: now + backoffMs(failures) })
        return result
      })

    /**
     * The server's connection, or why it cannot be had. A server that failed is not tried again
     * before its backoff has passed: its last failure is the answer meanwhile. Then `wait` tries
     * again and waits for the outcome (a call that needs the server, the live listing); otherwise
     * the server is tried again in the background and its last failure is the answer now, so
     * that a server that stalls never holds back a listing twice. A server not tried yet is
     * always waited for: nothing is known of it.
     */
    const attempt = (server: Rules.ServerRules, wait: boolean): Effect.Effect<Either.Either<McpClient.Connection, McpConnectionError>> =>
      Effect.gen(function*() {
        const known = failed.get(server.server)
        if (known === undefined) return yield* connect(server)
        if ((yield* Clock.currentTimeMillis) < known.retryAt) return Either.left(known.error)
        if (wait) return yield* connect(server)
        if (!retrying.has(server.server)) {
          retrying.add(server.server)
          // Not a child of this listing, which ends first: a fiber of the servers' own scope,
          // which ends it when it closes; bounded meanwhile by the server's discovery deadline.
          const retry = Effect.ensuring(connect(server), Effect.sync(() => retrying.delete(server.server)))
          yield* serversScope === undefined ? Effect.forkDaemon(retry) : Effect.forkIn(retry, serversScope)
        }
        return Either.left(known.error)
      })

    const stateOf = (server: Rules.ServerRules, wait: boolean): Effect.Effect<ServerState> =>
      Effect.map(attempt(server, wait), (result) => ({ rules: server, result: Either.map(result, (connection) => connection.tools) }))

    const statesOf = (subset: ReadonlyArray<Rules.ServerRules>, wait: boolean) =>
      Effect.forEach(subset, (server) => stateOf(server, wait), { concurrency: "unbounded" })

    const listing: Effect.Effect<McpCatalog.Listing> = Effect.map(statesOf(rules, false), listingOf).pipe(
      Effect.tap((merged) => Effect.annotateCurrentSpan("mcp.catalog.failed", merged.failures.length)),
      Effect.withSpan("mcp.catalog.list", { attributes: { "mcp.catalog.servers": rules.length }, captureStackTrace: false })
    )

    /** Until a failed server may be tried again (none, when it is no longer failed). */
    const untilRetry = (server: Rules.ServerRules) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(Math.max(0, (failed.get(server.server)?.retryAt ?? now) - now))))

    /** One server's states: its live tool list once connected; until then each failure, tried again after its backoff. */
    const serverStates = (server: Rules.ServerRules): Stream.Stream<ServerState> =>
      Stream.unwrap(Effect.map(attempt(server, true), (result) =>
        Either.isRight(result)
          ? Stream.map(result.right.toolList.changes, (tools): ServerState => ({ rules: server, result: Either.right(tools) }))
          : Stream.concat(
            Stream.succeed<ServerState>({ rules: server, result: Either.left(result.left) }),
            Stream.unwrap(Effect.map(untilRetry(server), () => serverStates(server)))
          )))

    const listings: Stream.Stream<McpCatalog.Listing> = rules.length === 0
      ? Stream.make(listingOf([]))
      : Stream.zipLatestAll(...rules.map(serverStates)).pipe(
        // Each server's stream starts with its first state: the first listing waits for all of them.
        Stream.map(listingOf),
        Stream.changesWith(sameListing)
      )

    const listTools = Effect.map(listing, (merged) => merged.tools)

    /**
     * What `name` stands for now: its tool, or why it is refused (the server the name belongs
     * to, when one does). Only the servers that could have the name are connected, and every one
     * of them, so that a name two of them give is a conflict, never one of them silently. Fails
     * with the error of a server that could have the name but cannot be connected.
     */
    const route = (name: string): Effect.Effect<Route, McpConnectionError> =>
      Effect.suspend(() => {
        // No catalog name is anything but a valid tool name.
        if (!Rules.isValidName(name)) return Effect.succeed(refused("unknown-tool"))
        // What the name alone tells, with no connection made: the servers that could have it (a
        // server named by a function could have any name).
        const { found } = Rules.candidates(rules, name)
        const admitted = new Set(found.filter((candidate) => Rules.admits(candidate.rules, candidate.tool)).map((candidate) => candidate.rules))
        const relevant = rules.filter((server) => server.naming._tag === "Function" || admitted.has(server))
        if (relevant.length === 0) return Effect.succeed(found.length > 0 ? refused("tool-blocked", found[0]!.rules.server) : refused("unknown-tool"))
        return Effect.flatMap(statesOf(relevant, true), (states): Effect.Effect<Route, McpConnectionError> => {
          const merged = listingOf(states)
          const entry = merged.tools.find((tool) => tool.name === name)
          if (entry !== undefined) return Effect.succeed({ _tag: "Found", entry })
          if (merged.conflicts.some((conflict) => conflict.name === name)) return Effect.succeed(refused("tool-conflict"))
          // A server that could not be connected could have it (every server here could: `relevant`
          // is those `couldName` admits): its failure is why it cannot be called.
          const failure = merged.failures[0]
          if (failure !== undefined) return Effect.fail(failure.error)
          return Effect.succeed(notListed(name, states))
        })
      })

    /** The refusal of a call, with the call budget in force: the server's the name belongs to, else the shared one. */
    const refuse = (route: Refused, callOptions: McpClient.CallOptions | undefined): Effect.Effect<never, InvalidOption> => {
      const policy = (route.server === undefined ? undefined : servers.policyOf(route.server)) ?? servers.policy
      const overrides = callOptions === undefined
        ? undefined
        : { timeout: callOptions.timeout, maxBytes: callOptions.maxBytes, idleTimeout: callOptions.idleTimeout }
      return Effect.flatMap(PhasePolicy.callBudget(policy, overrides), (budget) => Effect.fail(refusedCall(route.reason, budget, route.server)))
    }

    /** The secrets of every server connected so far, as one list (read when a result is redacted: tokens join them). */
    const secrets = () => Secrets.mergeSecrets(...Array.from(connected.values(), Secrets.secretsOfConnection))

    /** The call of a routed tool on its server. */
    const callEntry = (
      entry: McpCatalog.CatalogTool,
      args: Readonly<Record<string, unknown>> | undefined,
      callOptions: McpClient.CallToolOptions | undefined
    ): Effect.Effect<McpSchema.CallToolResult, McpConnectionError> => {
      // The result is redacted with every connected server's secrets, not only its own server's.
      const options = callOptions?.redact === true ? { ...callOptions, [Secrets.redactWith]: secrets } : callOptions
      return servers.callTool(entry.server, entry.tool.name, args, options)
    }

    const callSpan = Effect.withSpan("mcp.catalog.call", { attributes: { "mcp.catalog.servers": rules.length }, captureStackTrace: false })

    const callTool = (
      name: string,
      args?: Readonly<Record<string, unknown>>,
      callOptions?: McpClient.CallToolOptions
    ): Effect.Effect<McpSchema.CallToolResult, McpConnectionError> =>
      Effect.flatMap(route(name), (found) => found._tag === "Found" ? callEntry(found.entry, args, callOptions) : refuse(found, callOptions)).pipe(
        callSpan
      )

    const catalog: McpCatalog.Catalog = {
      servers: rules.map((server) => server.server),
      listing,
      listTools,
      listings,
      // A new listing whose tools are the same (only its conflicts, failures or other names changed) is no new list.
      toolList: Subscribable.make({
        get: listTools,
        changes: Stream.map(listings, (merged) => merged.tools).pipe(Stream.changesWith(sameTools))
      }),
      callTool,
      resolve: (name) =>
        Effect.map(route(name), (found): McpCatalog.ResolvedTool | undefined =>
          found._tag === "Found"
            ? { ...found.entry, call: (args, callOptions) => callSpan(callEntry(found.entry, args, callOptions)) }
            : undefined),
      nameOf: (server, tool) => {
        const found = rulesOf.get(server)
        return found === undefined ? undefined : Rules.nameOf(found, tool)
      },
      redact: (text) => Secrets.redact(text, secrets())
    }
    return Effect.succeed(catalog)
  })
