/**
 * One MCP connection as an Effect service (docs/DESIGN.md, "Services"): a `Context.Tag` whose
 * service is an `McpClient.Connection`, with layers built from options or from Effect `Config`,
 * where header values, environment values and OAuth secrets may be `Redacted`.
 *
 * @example
 * ```ts
 * import { McpConnection } from "@phasebound/client"
 * import { Config, Effect } from "effect"
 *
 * const Live = McpConnection.layerHttpConfig({
 *   url: Config.string("MCP_URL"),
 *   headers: Config.all({ authorization: Config.redacted("MCP_AUTHORIZATION") })
 * })
 * const program = Effect.flatMap(McpConnection.McpConnection, (connection) => connection.callTool("add", { a: 1, b: 2 }))
 * ```
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Authorization from "./Authorization.js"
import type * as ClientHandlers from "./ClientHandlers.js"
import { GivenSecrets } from "./internal/givenSecrets.js"
import { secretValues } from "./internal/secrets.js"
import * as McpClient from "./McpClient.js"
import type { McpConnectionError } from "./McpConnectionError.js"
import type * as McpSchema from "./McpSchema.js"
import type * as PhasePolicy from "./PhasePolicy.js"

/**
 * A value that may be a secret: given plainly or `Redacted` (it is unwrapped only to be sent).
 *
 * @since 0.1.0
 * @category models
 */
export type Secret = string | Redacted.Redacted<string>

/**
 * What a set of servers shares (`McpServers.Options`), and each server may give for itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommonOptions {
  readonly policy?: PhasePolicy.Options | undefined
  readonly revisions?: ReadonlyArray<string> | undefined
  readonly clientInfo?: McpSchema.Implementation | undefined
  readonly handlers?: ClientHandlers.Handlers | undefined
}

/**
 * An HTTP server (Streamable HTTP, or legacy HTTP+SSE by negotiation or choice): the options of
 * `McpClient.connect`, header values possibly `Redacted`, and `secrets`.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpServerOptions extends Omit<McpClient.ConnectOptions, "headers"> {
  readonly headers?: Readonly<Record<string, Secret>> | undefined
  /**
   * Values that are secrets wherever they went, beside the header and URL secrets every
   * connection redacts (a token put into the URL's path, or into part of a header value):
   * redacted from the server's texts (`remoteMessage`, `Connection.redact`) like those, and never
   * sent by themselves. A config file's server gives the values of its `${VAR}`s and inputs
   * (`ConfigImport.secretsOf`).
   */
  readonly secrets?: ReadonlyArray<Secret> | undefined
}

/**
 * A server run as a child process over stdio (no shell; the safe environment plus `env`): the
 * options of `McpClient.connectStdio`, environment values possibly `Redacted`, and `secrets`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioServerOptions extends Omit<McpClient.StdioConnectOptions, "env"> {
  readonly env?: Readonly<Record<string, Secret>> | undefined
  /**
   * Values that are secrets wherever they went, beside the environment values every connection
   * redacts (a token put into an argument): as `HttpServerOptions.secrets`.
   */
  readonly secrets?: ReadonlyArray<Secret> | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type ServerOptions = HttpServerOptions | StdioServerOptions

/**
 * @since 0.1.0
 * @category guards
 */
export const isStdio = (options: ServerOptions): options is StdioServerOptions => "command" in options

const revealOne = (value: Secret): string => Redacted.isRedacted(value) ? Redacted.value(value) : value

const reveal = (values: Readonly<Record<string, Secret>> | undefined): Record<string, string> | undefined =>
  values === undefined ? undefined : Object.fromEntries(Object.entries(values).map(([name, value]) => [name, revealOne(value)]))

/**
 * Connects to one server in the current scope, with `McpClient.connect` or `connectStdio`: every
 * rule of a connection holds (one discovery deadline, sessions that heal, release on close).
 * Every header and environment value is treated as a secret in error texts, as it always is, and
 * so is every value of `secrets`. It requires what the server's kind needs: an `HttpClient` for a
 * URL (and the authorization services with `auth`: `Authorization.layerDefaults`), a
 * `CommandExecutor` for a command (all of them when the kind is known only at run time).
 *
 * @since 0.1.0
 * @category constructors
 */
export function connect(
  options: HttpServerOptions & { readonly auth?: undefined }
): Effect.Effect<McpClient.Connection, McpConnectionError, HttpClient.HttpClient | Scope.Scope>
export function connect(
  options: HttpServerOptions
): Effect.Effect<McpClient.Connection, McpConnectionError, HttpClient.HttpClient | Authorization.Services | Scope.Scope>
export function connect(
  options: StdioServerOptions
): Effect.Effect<McpClient.Connection, McpConnectionError, CommandExecutor.CommandExecutor | Scope.Scope>
export function connect(
  options: ServerOptions
): Effect.Effect<McpClient.Connection, McpConnectionError, Requirements | Scope.Scope>
export function connect(
  options: ServerOptions
): Effect.Effect<McpClient.Connection, McpConnectionError, Requirements | Scope.Scope> {
  const connection: Effect.Effect<McpClient.Connection, McpConnectionError, Requirements | Scope.Scope> = isStdio(options)
    ? McpClient.connectStdio({ ...options, env: reveal(options.env) })
    : McpClient.connect({ ...options, headers: reveal(options.headers) })
  const secrets = options.secrets ?? []
  return secrets.length === 0 ? connection : Effect.provideService(connection, GivenSecrets, secretValues(secrets.map(revealOne)))
}

/**
 * What a connection of either kind may require: an `HttpClient` and the authorization services
 * for a URL, a `CommandExecutor` for a command.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = HttpClient.HttpClient | Authorization.Services | CommandExecutor.CommandExecutor

/**
 * The connection service.
 *
 * @since 0.1.0
 * @category tags
 */
export class McpConnection extends Context.Tag("@phasebound/client/McpConnection")<McpConnection, McpClient.Connection>() {}

/**
 * A layer that connects to an HTTP server when it is built and releases the connection (its
 * session) when it is released. Building fails with the discovery's `McpConnectionError`. With
 * `auth` it requires the authorization services.
 *
 * @since 0.1.0
 * @category layers
 */
export function layerHttp(
  options: HttpServerOptions & { readonly auth?: undefined }
): Layer.Layer<McpConnection, McpConnectionError, HttpClient.HttpClient>
export function layerHttp(
  options: HttpServerOptions
): Layer.Layer<McpConnection, McpConnectionError, HttpClient.HttpClient | Authorization.Services>
export function layerHttp(
  options: HttpServerOptions
): Layer.Layer<McpConnection, McpConnectionError, HttpClient.HttpClient | Authorization.Services> {
  return Layer.scoped(McpConnection, connect(options))
}

/**
 * A layer that starts a server as a child process when it is built and ends it (stdin closed,
 * then SIGTERM, then SIGKILL, each bounded) when it is released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStdio = (
  options: StdioServerOptions
): Layer.Layer<McpConnection, McpConnectionError, CommandExecutor.CommandExecutor> => Layer.scoped(McpConnection, connect(options))

/**
 * `layerHttp` or `layerStdio`, for options whose kind is known only at run time (a command, or a
 * URL): it requires what both need.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServerOptions): Layer.Layer<McpConnection, McpConnectionError, Requirements> => Layer.scoped(McpConnection, connect(options))

/**
 * `layerHttp` with the options read from Effect `Config` (`Config.redacted` for a header value
 * or a token). A missing or malformed value fails with its `ConfigError`. It requires the
 * authorization services, which the options may need.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpConfig = (
  config: Config.Config.Wrap<HttpServerOptions>
): Layer.Layer<McpConnection, McpConnectionError | ConfigError.ConfigError, HttpClient.HttpClient | Authorization.Services> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), (options) => layerHttp(options)))

/**
 * `layerStdio` with the options read from Effect `Config` (`Config.redacted` for an environment
 * secret).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStdioConfig = (
  config: Config.Config.Wrap<StdioServerOptions>
): Layer.Layer<McpConnection, McpConnectionError | ConfigError.ConfigError, CommandExecutor.CommandExecutor> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layerStdio))
