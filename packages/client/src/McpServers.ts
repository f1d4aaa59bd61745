/**
 * A set of named MCP servers as an Effect service (docs/DESIGN.md, "Services"): the servers of a
 * config file (any format `ConfigImport` reads: the one the CLI reads), of the files the search
 * order finds, or of options, each connected on first use (a config file's server is expanded
 * then too: its `${VAR}` and `${input:id}` are read when it is first used, so one that cannot be
 * resolved fails alone), one
 * connection per server shared by every fiber, all released with the layer. The servers use the
 * services the layer is given, the authorization services among them: with
 * `Authorization.layerDefaults`, one token store in memory for all of them (entries are keyed
 * by server and client) and no interactive step.
 *
 * @example
 * ```ts
 * import { Authorization, McpServers } from "@phasebound/client"
 * import { NodeContext, NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * const Live = McpServers.layerFile("./.mcp.json").pipe(
 *   Layer.provide(Layer.mergeAll(NodeContext.layer, NodeHttpClient.layerUndici, Authorization.layerDefaults))
 * )
 * const program = Effect.flatMap(McpServers.McpServers, (servers) => servers.callTool("remote", "add", { a: 1, b: 2 }))
 * ```
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as RcMap from "effect/RcMap"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Authorization from "./Authorization.js"
import type * as McpCatalog from "./McpCatalog.js"
import type * as McpClient from "./McpClient.js"
import * as ConfigImport from "./ConfigImport.js"
import * as McpCache from "./McpCache.js"
import * as McpConnection from "./McpConnection.js"
import { type InvalidOption, type McpConnectionError, withServer } from "./McpConnectionError.js"
import type * as McpSchema from "./McpSchema.js"
import * as PhasePolicy from "./PhasePolicy.js"
import * as ServersFile from "./ServersFile.js"
import * as Expand from "./internal/configFormats/expand.js"
import { placeOf } from "./internal/configFormats/search.js"
import * as Failures from "./internal/failures.js"
import * as Options_ from "./internal/options.js"
import * as ServersScope from "./internal/serversScope.js"

/**
 * The servers by name, and what they share: a server's own `policy` fields win over the shared
 * ones (a shallow merge), its own `revisions`, `clientInfo` and `handlers` replace them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends McpConnection.CommonOptions {
  readonly servers: Readonly<Record<string, McpConnection.ServerOptions | Deferred>>
  /**
   * The servers' catalog rules (prefix, allow and block lists; `McpCatalog`): kept for
   * `McpCatalog.layer`, which lays its own options over them. A servers file's entries give them.
   */
  readonly catalog?: McpCatalog.Options | undefined
}

/**
 * A server whose options are made when it is first used: a config file's entry (`fromFile`,
 * `fromDiscovered`), whose `${VAR}` and `${input:id}` are read then (docs/DESIGN.md, "Config
 * files"). `resolve` failing fails that server's connection, never the others'; the next use
 * tries again. `resolve` gives every option but `policy`: a deferred server runs under the
 * shared policy (`Options.policy`), validated once, before any I/O, when the service is made.
 *
 * @since 0.1.0
 * @category models
 */
export interface Deferred {
  readonly _tag: "Deferred"
  readonly resolve: Effect.Effect<McpConnection.ServerOptions & { readonly policy?: undefined }, InvalidOption>
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isDeferred = (server: McpConnection.ServerOptions | Deferred): server is Deferred =>
  (server as Partial<Deferred>)._tag === "Deferred" && Effect.isEffect((server as Partial<Deferred>).resolve)

/**
 * A server's options: as given, or a `Deferred` one resolved.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolveServer = (server: McpConnection.ServerOptions | Deferred): Effect.Effect<McpConnection.ServerOptions, InvalidOption> =>
  isDeferred(server) ? server.resolve : Effect.succeed(server)

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The configured names, in the order given. */
  readonly names: ReadonlyArray<string>
  /** The catalog rules given with the servers (`Options.catalog`), for `McpCatalog`. */
  readonly catalog?: McpCatalog.Options | undefined
  /** The shared policy (`Options.policy`), validated: the budget of what belongs to no one server. */
  readonly policy: PhasePolicy.PhasePolicy
  /** A server's policy (its own fields over the shared ones), validated; `undefined` for an unknown name. */
  readonly policyOf: (name: string) => PhasePolicy.PhasePolicy | undefined
  /**
   * The server's connection: connected by the first caller (callers meanwhile wait for the same
   * discovery), then shared. A discovery that failed is reported to each caller waiting for it,
   * and the next call tries again. An unknown name is `InvalidOption` (`server`), without I/O.
   *
   * Every failure of an operation on a configured server (here and below) names it: its
   * `server` field is the configured name (`McpConnectionError.withServer`), never its URL.
   */
  readonly connection: (name: string) => Effect.Effect<McpClient.Connection, McpConnectionError>
  /** `connection(server)`, then `callTool`: every rule of a call holds (sent at most once). */
  readonly callTool: (
    server: string,
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpClient.CallToolOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
  /** The server's current tools (its last listing). */
  readonly tools: (server: string) => Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpConnectionError>
  /** `connection(server)`, then `complete`: suggestions for one argument (docs/DESIGN.md, "Completion"). */
  readonly complete: (
    server: string,
    request: McpSchema.CompleteRequest,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<McpSchema.CompleteResult, McpConnectionError>
  /** `connection(server)`, then its change events (docs/DESIGN.md, "Subscriptions"). */
  readonly changes: (server: string) => Stream.Stream<McpClient.ChangeEvent, McpConnectionError>
  /** `connection(server)`, then `resourceUpdates(uri)`: subscribed while the stream runs. */
  readonly resourceUpdates: (
    server: string,
    uri: string,
    options?: PhasePolicy.BudgetOptions
  ) => Stream.Stream<McpClient.ResourceUpdate, McpConnectionError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class McpServers extends Context.Tag("@phasebound/client/McpServers")<McpServers, Service>() {}

const refused = (option: string) => Failures.invalidConfig(option)

/** After the layer was released: nothing is connected any more. */
const releasedFailure = Failures.transport(
  { stage: "connect", phase: "discovery", budget: { timeoutMs: PhasePolicy.defaults.timeoutMs, maxBytes: PhasePolicy.defaults.maxBytes } },
  "session-closed",
  "not-sent"
)

/** A server's options with the shared ones under them. */
const withShared = (shared: McpConnection.CommonOptions, server: McpConnection.ServerOptions): McpConnection.ServerOptions => ({
  ...server,
  policy: shared.policy === undefined ? server.policy : { ...shared.policy, ...server.policy },
  revisions: server.revisions ?? shared.revisions,
  clientInfo: server.clientInfo ?? shared.clientInfo,
  handlers: server.handlers ?? shared.handlers
})

/**
 * The service, in the current scope: closing it releases every connection. Each server's policy
 * is validated here, once, before any I/O (a `Deferred` server's is the shared one); the rest of
 * its options when it is first used, a `Deferred` one resolved then.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Service, InvalidOption, McpConnection.Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    yield* Options_.decodeServers(options)
    const shared = yield* PhasePolicy.make(options.policy)
    // Each server's options as it is connected: given, or a Deferred one resolved, the shared ones under them.
    const servers = new Map<string, Effect.Effect<McpConnection.ServerOptions, InvalidOption>>()
    const policies = new Map<string, PhasePolicy.PhasePolicy>()
    for (const [name, server] of Object.entries(options.servers)) {
      if (isDeferred(server)) {
        // It has no policy of its own: the shared one, validated above (a policy the resolved
        // options carry anyway, against their type, is not taken).
        policies.set(name, shared)
        servers.set(name, Effect.map(server.resolve, (resolved) => withShared(options, { ...resolved, policy: undefined })))
        continue
      }
      const merged = withShared(options, server)
      policies.set(name, yield* PhasePolicy.make(merged.policy))
      servers.set(name, Effect.succeed(merged))
    }
    // The services the layer was built with: a discovery runs with these, never with the
    // first caller's (the map would lay that caller's context over them), in the scope the map
    // gives its entry.
    // One cache for every server (docs/DESIGN.md, "Response cache"): the one provided, else the
    // service's own, so that a server connected again starts with the era it spoke.
    const provided = yield* Effect.serviceOption(McpCache.McpCache)
    const cache = provided._tag === "Some" ? provided.value : yield* McpCache.make()
    const services = Context.add(yield* Effect.context<McpConnection.Requirements>(), McpCache.McpCache, cache)
    // One connection per server, acquired by its first caller in a scope of its own (callers
    // meanwhile share that discovery, and one caller's interruption does not end it for the
    // others: the discovery deadline bounds it), kept until the service is released.
    const connections: RcMap.RcMap<string, McpClient.Connection, McpConnectionError> = yield* RcMap.make({
      lookup: (name: string) =>
        Effect.flatMap(
          Effect.zip(servers.get(name)!, Effect.scope),
          ([server, entry]) => Effect.provide(McpConnection.connect(server), Context.add(services, Scope.Scope, entry))
        ).pipe(
          // What the discovery opened is released already; its waiters get the failure, and the
          // next caller tries again. (Here, not in a caller: the entry is still this one.)
          Effect.tapErrorCause(() => RcMap.invalidate(connections, name))
        ),
      idleTimeToLive: Duration.infinity
    })

    const connected = (name: string): Effect.Effect<McpClient.Connection, McpConnectionError> =>
      Effect.suspend(() => {
        if (!servers.has(name)) return Effect.fail(refused("server"))
        return Effect.scoped(RcMap.get(connections, name)).pipe(
          // The service released (during a discovery, or before the call): the map interrupts
          // its waiters, who learn it at once (a caller's own interruption stays one).
          Effect.catchAllCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.fail(releasedFailure) : Effect.failCause(cause))
        )
      })

    /** A failure of a configured server's operation names the server (an unknown name is the caller's, not a server's). */
    const named = (name: string) => <A, R>(effect: Effect.Effect<A, McpConnectionError, R>): Effect.Effect<A, McpConnectionError, R> =>
      servers.has(name) ? Effect.mapError(effect, (error) => withServer(error, name)) : effect
    const namedStream = (name: string) => <A>(stream: Stream.Stream<A, McpConnectionError>): Stream.Stream<A, McpConnectionError> =>
      servers.has(name) ? Stream.mapError(stream, (error) => withServer(error, name)) : stream

    const service: Service = {
      names: [...servers.keys()],
      catalog: options.catalog,
      policy: shared,
      policyOf: (name) => policies.get(name),
      connection: (server) => named(server)(connected(server)),
      callTool: (server, name, args, callOptions) => named(server)(Effect.flatMap(connected(server), (on) => on.callTool(name, args, callOptions))),
      tools: (server) => named(server)(Effect.map(connected(server), (on) => on.tools)),
      complete: (server, request, options) => named(server)(Effect.flatMap(connected(server), (on) => on.complete(request, options))),
      changes: (server) => namedStream(server)(Stream.unwrap(Effect.map(connected(server), (on) => on.changes))),
      resourceUpdates: (server, uri, options) => namedStream(server)(Stream.unwrap(Effect.map(connected(server), (on) => on.resourceUpdates(uri, options))))
    }
    // A catalog over the service runs its retries in the service's scope.
    ServersScope.register(service, yield* Effect.scope)
    return service
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<McpServers, InvalidOption, McpConnection.Requirements> => Layer.scoped(McpServers, make(options))

/**
 * `layer` with the options read from Effect `Config` (`Config.redacted` for header values,
 * tokens and environment secrets).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options>
): Layer.Layer<McpServers, InvalidOption | ConfigError.ConfigError, McpConnection.Requirements> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))

/**
 * What `fromFile` may add to the file's entries: the shared options, and for an
 * `authorization_code` entry the redirect URI registered for it (an `InteractiveAuthorization`
 * service answers it).
 *
 * @since 0.1.0
 * @category models
 */
export interface FileOptions extends McpConnection.CommonOptions {
  readonly redirectUri?: string | undefined
  /** The file's format, instead of detecting it (`ConfigImport.Format`). */
  readonly format?: ConfigImport.Format | undefined
}

const transportOfType = (type: ServersFile.HttpServer["type"]): McpClient.TransportChoice =>
  type === "sse" ? "sse" : type === undefined ? "auto" : "streamable-http"

/**
 * The values a file's entry references, read from the current `ConfigProvider`: each `${VAR}`
 * (a secret, so `Redacted`), each `${input:id}` from `PHASEBOUND_INPUT_<ID>`, and `HOME`
 * (`USERPROFILE`) for `${userHome}`. An unset one is left out (the expansion then names it).
 */
const referencedValues = (entry: ServersFile.ServerEntry) =>
  Effect.gen(function*() {
    const variables = new Map<string, string>()
    const inputs = new Map<string, string>()
    let home: string | undefined
    for (const value of ServersFile.valuesOf(entry)) {
      for (const reference of ServersFile.referencesOf(value)) {
        if (reference.kind === "variable" && !variables.has(reference.name)) {
          const read = yield* Effect.option(Config.redacted(reference.name))
          if (Option.isSome(read)) variables.set(reference.name, Redacted.value(read.value))
        } else if (reference.kind === "input" && !inputs.has(reference.name)) {
          const read = yield* Effect.option(Config.redacted(Expand.inputVariable(reference.name)))
          if (Option.isSome(read)) inputs.set(reference.name, Redacted.value(read.value))
        } else if (reference.kind === "builtin" && reference.name === "userHome" && home === undefined) {
          home = Option.getOrUndefined(yield* Effect.option(Config.string("HOME").pipe(Config.orElse(() => Config.string("USERPROFILE")))))
        }
      }
    }
    const values: ConfigImport.Values = { env: (name) => variables.get(name), inputs: (id) => inputs.get(id), home }
    return values
  })

/**
 * An entry's OAuth settings as `Authorization.Options`: `clientSecret` already expanded, a
 * `privateKeyFile` read (relative to the file's directory). `redirectPort` is the CLI's.
 */
const authOf = (entry: ServersFile.AuthEntry, directory: string, redirectUri: string | undefined) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const privateKey = entry.privateKeyFile === undefined ? undefined : yield* fs.readFileString(path.resolve(directory, entry.privateKeyFile)).pipe(
      Effect.mapError(() => refused("auth.privateKeyFile")),
      Effect.map(Redacted.make)
    )
    const options: Authorization.Options = {
      grant: entry.grant,
      clientId: entry.clientId,
      clientSecret: entry.clientSecret === undefined ? undefined : Redacted.make(entry.clientSecret),
      clientMetadataUrl: entry.clientMetadataUrl,
      privateKey,
      privateKeyAlgorithm: entry.privateKeyAlg,
      scope: entry.scope,
      issuer: entry.issuer,
      allowPrivateAuthority: entry.allowPrivateAuthority,
      allowScopeStepUp: entry.allowScopeStepUp,
      redirectUri
    }
    return options
  })

const redactedRecord = (values: Readonly<Record<string, string>> | undefined) =>
  values === undefined ? undefined : Object.fromEntries(Object.entries(values).map(([name, value]) => [name, Redacted.make(value)]))

/**
 * One server of a config file as options: its references resolved in one pass under one budget
 * (`ConfigImport.expandEntry`), their values its `secrets` wherever they went
 * (`ConfigImport.secretsOf`). An unset variable fails `InvalidOption` naming the field, a
 * missing input `inputs.<id>`, an expansion past the bound the field too.
 */
const serverOf = (found: ConfigImport.Found, redirectUri: string | undefined) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const values = yield* referencedValues(found.entry)
    const expanded = ConfigImport.expandEntry(found.entry, found.file, values)
    if (Either.isLeft(expanded)) {
      const { field, problem } = expanded.left
      return yield* Effect.fail(refused(problem !== "too-large" && problem.kind === "input" ? `inputs.${problem.name}` : field))
    }
    const entry = expanded.right
    const secrets = ConfigImport.secretsOf(found, values).map(Redacted.make)
    if (ServersFile.isStdioServer(entry)) {
      return { command: entry.command, args: entry.args, env: redactedRecord(entry.env), cwd: entry.cwd, secrets } satisfies McpConnection.ServerOptions
    }
    const directory = path.dirname(path.resolve(found.file.path))
    return {
      url: entry.url,
      headers: redactedRecord(entry.headers),
      transport: transportOfType(entry.type),
      auth: entry.auth === undefined ? undefined : yield* authOf(entry.auth, directory, redirectUri),
      secrets
    } satisfies McpConnection.ServerOptions
  })

/**
 * The servers of config files as options, each `Deferred`: resolved when first used, with the
 * `ConfigProvider` and the file system of this call (see `fromFile`).
 */
const optionsOf = (found: ReadonlyArray<ConfigImport.Found>, options: FileOptions) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const provider = yield* Effect.configProviderWith(Effect.succeed)
    const servers: Record<string, Deferred> = {}
    for (const server of found) {
      servers[server.name] = {
        _tag: "Deferred",
        resolve: serverOf(server, options.redirectUri).pipe(Effect.withConfigProvider(provider), Effect.provide(context))
      }
    }
    const catalog = ServersFile.catalogRulesOf({ mcpServers: Object.fromEntries(found.map(({ entry, name }) => [name, entry])) })
    const { format: _format, redirectUri: _, ...shared } = options
    return catalog === undefined ? { ...shared, servers } : { ...shared, servers, catalog: { servers: catalog } }
  })

/**
 * The servers of a config file of any format `ConfigImport` reads (detected from its name and
 * content, or `format`), each `Deferred`: resolved when it is first used. `${VAR}` (and
 * `${VAR:-default}`) in a URL, a header value, the command, an argument, an environment value,
 * the directory or a client secret is read then from the `ConfigProvider` current when this runs
 * (the process environment by default), `${input:id}` from `PHASEBOUND_INPUT_<ID>` there; an
 * unset one fails that server with `InvalidOption` naming where it was (an input:
 * `inputs.<id>`), never its name or value, and no other server. The values read are the
 * server's `secrets` (`ConfigImport.secretsOf`), redacted from what it says wherever they went
 * (an argument, a URL's path, part of a header value). A refused file is
 * `InvalidOption` `file` (`ConfigImport.read` says why); nothing of the file's content is ever
 * in an error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFile = (
  file: string,
  options: FileOptions = {}
): Effect.Effect<Options, InvalidOption, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const read = yield* Effect.mapError(ConfigImport.read(file, { format: options.format }), () => refused("file"))
    return yield* optionsOf(ConfigImport.serversOf([read]), options)
  })

/**
 * `layer` over the servers of a config file (`fromFile`). The file is read when the layer
 * is built; each server is expanded and connected on first use.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFile = (
  file: string,
  options?: FileOptions
): Layer.Layer<McpServers, InvalidOption, McpConnection.Requirements | FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapEffect(Effect.map(fromFile(file, options), layer))

/**
 * The servers of every config file the search order finds (`ConfigImport.discover`: the
 * project's files, then the user's; a server's first definition wins), each `Deferred` as in
 * `fromFile`. A file that exists but is refused fails `InvalidOption` naming it, `file <scope>
 * <format> <path>` with the path relative to the project or the home directory
 * (`file user claude-code ~/.claude.json`), never its content: a broken file is not skipped
 * silently. `reason` is `invalid-json` for its syntax or structure, else `invalid-value`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromDiscovered = (
  options: FileOptions & ConfigImport.SearchOptions = {}
): Effect.Effect<Options, InvalidOption, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const { cwd, env, platform, ...fileOptions } = options
    const found = yield* ConfigImport.discover({ cwd, env, platform })
    const first = found.refused[0]
    if (first !== undefined) {
      const shown = ConfigImport.shownPath(first.path, placeOf({ cwd, env, platform }))
      return yield* Effect.fail(
        Failures.invalidConfig(`file ${first.scope ?? "file"} ${first.format ?? "unknown"} ${shown}`, ConfigImport.invalidOptionReason(first))
      )
    }
    return yield* optionsOf(ConfigImport.serversOf(found.files), fileOptions)
  })

/**
 * `layer` over the servers the search order finds (`fromDiscovered`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDiscovered = (
  options?: FileOptions & ConfigImport.SearchOptions
): Layer.Layer<McpServers, InvalidOption, McpConnection.Requirements | FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapEffect(Effect.map(fromDiscovered(options), layer))
