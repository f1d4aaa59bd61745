/**
 * `--catalog`: `tools` and `call` over every server of the config file at once, through the
 * client's `McpCatalog` (docs/DESIGN.md, "Catalog"). `tools --catalog` lists the merged catalog
 * (catalog names, servers, conflicts and rejected names); `call --catalog <name>` calls the tool
 * of that catalog name on its server. The servers, their prefixes and allow and block lists come
 * from the file (`--config`, default ./.mcp.json); the budget and revision flags are the shared
 * policy under each server's own; OAuth tokens come from the token file as for one server.
 * Flags that name one server (`--stdio`, `--header`, `--transport`, `--env`, `--env-pass`,
 * `--server-stderr`, the OAuth flags) mean nothing here: refused rather than ignored.
 */
import type { McpSchema } from "@phasebound/client"
import * as Authorization from "@phasebound/client/Authorization"
import * as McpCatalog from "@phasebound/client/McpCatalog"
import * as McpConnection from "@phasebound/client/McpConnection"
import * as McpConnectionError from "@phasebound/client/McpConnectionError"
import * as McpServers from "@phasebound/client/McpServers"
import * as PhasePolicy from "@phasebound/client/PhasePolicy"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { authSecrets, givenAuthFlag, tokenFileOf, tokenStoreLayer } from "./auth.js"
import type { CallInput } from "./call.js"
import type { Use } from "./command.js"
import { closing, enter, policyOf, type Requirements, revisionsOf, testDefect } from "./connection.js"
import { flag, type Flags } from "./flags.js"
import { json, renderCall, table } from "./output.js"
import { withProgressBar } from "./progressBar.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"
import { formatOf } from "./config.js"

/** The flags that name one server: refused with `--catalog`. */
const oneServerFlags = ["stdio", "transport", "serverStderr"] as const
const oneServerRepeated = ["header", "env", "envPass"] as const

/** The client's option names, as the CLI names them: the file's, after `--config`. */
const renamed = (error: McpConnectionError.McpConnectionError): McpConnectionError.McpConnectionError =>
  error._tag === "InvalidOption" && error.stage === "config" && error.option !== undefined
    ? invalidOption(error.option === "file" ? flag("config") : `${flag("config")} ${error.option}`, error.reason ?? "invalid-value")
    : error

const unwrap = (value: string | Redacted.Redacted<string>): string => Redacted.isRedacted(value) ? Redacted.value(value) : value

/**
 * Every secret a server's options hold (header values, URL secrets, environment values, the
 * OAuth client secret and private key, as for one server, its `secrets`: a config entry's
 * variables and inputs), for scrubbing the run's output.
 */
const secretsOf = (server: McpConnection.ServerOptions): ReadonlyArray<string> => {
  const given = McpConnectionError.secretValues((server.secrets ?? []).map(unwrap))
  if (McpConnection.isStdio(server)) return McpConnectionError.mergeSecrets(McpConnectionError.secretValues(Object.values(server.env ?? {}).map(unwrap)), given)
  const headers = Object.fromEntries(Object.entries(server.headers ?? {}).map(([name, value]) => [name, unwrap(value)]))
  let url: URL | undefined
  try {
    url = new URL(server.url)
  } catch {
    url = undefined
  }
  const { clientSecret, privateKey } = server.auth ?? {}
  // A `CryptoKey` has no text to leak.
  const keyText = typeof privateKey === "string" || Redacted.isRedacted(privateKey) ? unwrap(privateKey) : undefined
  return McpConnectionError.mergeSecrets(
    McpConnectionError.secretsOf(url, headers),
    authSecrets(clientSecret === undefined ? undefined : unwrap(clientSecret), keyText),
    given
  )
}

/**
 * The servers, each one's secrets joining the run's as it is resolved (a config file's server is
 * expanded on first use: its secrets are known then, and only then can anything quote them).
 */
const tracked = (ctx: RunContext, options: McpServers.Options): McpServers.Options => {
  const record = (server: McpConnection.ServerOptions) =>
    Effect.zipRight(
      Effect.sync(() => {
        ctx.state.secrets = McpConnectionError.mergeSecrets(ctx.state.secrets, secretsOf(server))
      }),
      testDefect(ctx, server)
    )
  const servers = Object.fromEntries(
    Object.entries(options.servers).map(([name, server]) =>
      [name, McpServers.isDeferred(server) ? { _tag: "Deferred", resolve: Effect.tap(server.resolve, record) } as const : server] as const
    )
  )
  for (const server of Object.values(options.servers)) {
    if (!McpServers.isDeferred(server)) ctx.state.secrets = McpConnectionError.mergeSecrets(ctx.state.secrets, secretsOf(server))
  }
  return { ...options, servers }
}

/** Refuses the flags that name one server (see the module comment). */
const refuseOneServerFlags = (flags: Flags): Effect.Effect<void, McpConnectionError.McpConnectionError> => {
  for (const key of oneServerFlags) if (Option.isSome(flags[key])) return Effect.fail(invalidOption(flag(key), "invalid-value"))
  for (const key of oneServerRepeated) if (flags[key].length > 0) return Effect.fail(invalidOption(flag(key), "invalid-value"))
  const auth = givenAuthFlag(flags)
  return auth === undefined ? Effect.void : Effect.fail(invalidOption(auth, "invalid-value"))
}

/**
 * Reads the file's servers, makes the catalog over them (every rule checked before any I/O) and
 * runs `use` with it; the servers connected are released when the command's scope closes.
 */
export const withCatalog = <A>(
  ctx: RunContext,
  flags: Flags,
  use: (catalog: McpCatalog.Catalog, policy: PhasePolicy.PhasePolicy) => Effect.Effect<A, McpConnectionError.McpConnectionError>
): Effect.Effect<A, McpConnectionError.McpConnectionError, Requirements> =>
  Effect.gen(function*() {
    yield* refuseOneServerFlags(flags)
    const policyOptions = yield* policyOf(flags)
    const revisions = yield* revisionsOf(flags.revision)
    const policy = yield* PhasePolicy.make(policyOptions)
    const configPath = Option.getOrUndefined(flags.config)
    const format = yield* formatOf(Option.getOrUndefined(flags.format))
    // `${VAR}` in the file comes from this run's environment, as for one server.
    const provider = ConfigProvider.fromMap(new Map(Object.entries(ctx.env).filter((entry): entry is [string, string] => entry[1] !== undefined)))
    const fileOptions = { policy: policyOptions, revisions }
    // Without `--config`, the servers of the search order (docs/GUIDE.md, "Search order").
    const options = yield* (configPath === undefined
      ? McpServers.fromDiscovered({ ...fileOptions, env: ctx.env })
      : McpServers.fromFile(configPath, { ...fileOptions, format })).pipe(
        Effect.withConfigProvider(provider),
        Effect.mapError(renamed)
      )
    ctx.state.secrets = []
    const tokenFile = yield* tokenFileOf(flags.tokenFile, ctx.env)
    const authorization = Layer.merge(
      tokenFile === undefined ? Authorization.layerMemoryTokenStore : tokenStoreLayer(tokenFile),
      Authorization.layerNoInteraction
    )
    const servers = yield* McpServers.make(tracked(ctx, options)).pipe(Effect.provide(authorization), Effect.mapError(renamed))
    const catalog = yield* McpCatalog.fromServers(servers).pipe(Effect.mapError(renamed))
    ctx.state.position = { stage: "connect", phase: "discovery", limits: policy.discovery }
    return yield* use(catalog, policy)
  })

/**
 * `tools --catalog`: the merged listing; JSON: `tools` (catalog name, server, the server's tool),
 * `conflicts`, `rejected`, `failures` (each server that could not be connected, with its error
 * record) and `unresolved` (tools held back because a failed server could have their name).
 */
export const renderCatalog = (listing: McpCatalog.Listing, machine: boolean): string => {
  if (machine) return json(listing)
  const tools = listing.tools.length === 0
    ? "no tools\n"
    : table(["TOOL", "SERVER", "DESCRIPTION"], listing.tools.map((entry) => [entry.name, entry.server, entry.tool.description ?? ""]))
  const conflicts = listing.conflicts.map((conflict) =>
    `conflict: ${conflict.name} (${conflict.tools.map((tool) => `${tool.server}: ${tool.tool}`).join(", ")}): not listed\n`
  )
  const rejected = listing.rejected.map((entry) => `rejected: ${entry.server}: ${JSON.stringify(entry.tool.slice(0, 80))} (not a valid tool name)\n`)
  const failures = listing.failures.map((failure) => `failed: ${failure.server}: ${failure.error._tag}: ${failure.error.message}\n`)
  const unresolved = listing.unresolved.map((entry) =>
    `unresolved: ${entry.name} (${entry.server}: ${JSON.stringify(entry.tool.slice(0, 80))}; ${entry.failed.join(", ")} could have it too): not listed\n`
  )
  return [tools, ...conflicts, ...rejected, ...unresolved, ...failures].join("")
}

/** `tools --catalog`. */
export const listCatalog = (ctx: RunContext, flags: Flags): Effect.Effect<string, McpConnectionError.McpConnectionError, Requirements> =>
  withCatalog(ctx, flags, (catalog) =>
    Effect.gen(function*() {
      const machine = ctx.machine(flags.json)
      const listing = yield* ctx.progress("discovering", machine, catalog.listing)
      // A partial listing is printed with its failures; when no server answered there is no
      // listing to print, and the first server's error is the command's.
      const [first] = listing.failures
      if (first !== undefined && listing.failures.length === catalog.servers.length) return yield* Effect.fail(first.error)
      closing(ctx)
      return renderCatalog(listing, machine)
    }))

/** `call --catalog <name>`: the call itself, as `call` makes it (never retried); `--task` and `--server-log-level` need one server. */
export const callCatalog = (
  ctx: RunContext,
  { flags, input, machine, rest }: Use<CallInput>
): Effect.Effect<string, McpConnectionError.McpConnectionError, Requirements> =>
  Effect.gen(function*() {
    if (input.task) return yield* Effect.fail(invalidOption(flag("task"), "invalid-value"))
    if (input.logLevel !== undefined) return yield* Effect.fail(invalidOption(flag("serverLogLevel"), "invalid-value"))
    return yield* withCatalog(ctx, flags, (catalog, policy) =>
      Effect.gen(function*() {
        const { args, effectIdentity, idleTimeoutMs } = input
        enter(ctx, "call", idleTimeoutMs === undefined ? policy.call : { ...policy.call, idleTimeoutMs })
        const result: McpSchema.CallToolResult = yield* withProgressBar(ctx.terminal(machine), (onProgress) =>
          catalog.callTool(
            rest[0]!,
            args,
            onProgress === undefined && idleTimeoutMs === undefined && effectIdentity === undefined
              ? undefined
              : { onProgress, idleTimeout: idleTimeoutMs, effectIdentity }
          ))
        closing(ctx)
        ctx.state.exitCode = result.isError === true ? 1 : 0
        return renderCall(result, machine)
      }))
  })
