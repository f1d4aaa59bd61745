/**
 * HTTP(S) proxies (docs/DESIGN.md, "Proxies"): an `HttpClient` whose requests go through the
 * proxy the environment or the caller names, with `NO_PROXY` honoured.
 *
 * `https` MCP servers are reached through a `CONNECT` tunnel (TLS end to end, the proxy sees
 * only the host and port); `http` ones in absolute form. Credentials in a proxy URL
 * (`http://user:pass@proxy:3128`) become a `Proxy-Authorization: Basic` header sent to the
 * proxy alone, never to the MCP server, and never appear in an error, a span or a record: the
 * layers provide them as `Secrets` beside the client, and every connection made with that client
 * redacts them from what a peer says (a proxy answers for the server in absolute form). A
 * proxy that stalls is bounded by the phase's deadline like any peer; one that refuses (`407`,
 * `403`, `502` to the `CONNECT`) is a `TransportFailure` with reason `proxy-auth-required` or
 * `proxy-refused` and outcome `not-sent`.
 *
 * The Promise API and the CLI use it by themselves when the environment names a proxy; with the
 * Effect API it is opt-in: provide `HttpProxy.layerEnv` (or `HttpProxy.layer`) where a
 * connection's `HttpClient` would be.
 *
 * @example
 * ```ts
 * import { HttpProxy, McpClient } from "@phasebound/client"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const connection = yield* McpClient.connect({ url: "https://mcp.example.com/mcp" })
 *   return connection.tools
 * }).pipe(Effect.scoped, Effect.provide(HttpProxy.layerEnv))
 * ```
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { invalidConfig } from "./internal/failures.js"
import { make } from "./internal/proxyClient.js"
import { Secrets } from "./internal/proxySecrets.js"
import { environmentNamesProxy, environmentProxySecrets, fromLookup, type Settings, settingsOf, settingsSecrets } from "./internal/proxyRoute.js"
import { secretValues } from "./internal/secrets.js"
import type { InvalidOption } from "./McpConnectionError.js"

/**
 * The proxies of `layer`. A proxy URL is `http://` or `https://` with a host and optional
 * userinfo, no path, query or fragment. `httpsProxy` unset: `https` requests use `httpProxy`.
 * `noProxy`: hosts reached directly, as `NO_PROXY` lists them (comma- or space-separated host
 * names, addresses, `.domain` or `*.domain` for a domain and its subdomains, an optional
 * `:port`, `*` for every host). An empty string is unset.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly httpsProxy?: string | Redacted.Redacted<string> | undefined
  readonly httpProxy?: string | Redacted.Redacted<string> | undefined
  readonly noProxy?: string | undefined
}

export {
  /**
   * The credentials of the proxies an `HttpClient` goes through, in every form a peer could echo
   * them (the user name and password raw and percent-decoded, `user:password`, and their base64
   * forms, as a `Proxy-Authorization: Basic` header carries them). `layer` and `layerEnv` provide
   * it beside their client; `McpClient.connect` adds what it holds to the connection's redaction
   * set, so a proxy that answers for the server (absolute form) and quotes the header in a
   * JSON-RPC error finds it redacted in `remoteMessage`. Provide it yourself beside an `HttpClient`
   * of your own that goes through a proxy.
   *
   * @since 0.1.0
   * @category tags
   */
  Secrets
}

/** The client of these settings, and their credentials as `Secrets`. */
const contextOf = (settings: Settings) =>
  Effect.map(make(settings), (client) => Context.make(HttpClient.HttpClient, client).pipe(Context.add(Secrets, secretValues(settingsSecrets(settings)))))

/**
 * An `HttpClient` through the given proxies, with their credentials as `Secrets`. A malformed
 * proxy URL fails the layer with `InvalidOption` naming `httpsProxy` or `httpProxy` (never its
 * value), before any I/O.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<HttpClient.HttpClient | Secrets, InvalidOption> =>
  Layer.scopedContext(Effect.flatMap(settingsOf(options, { http: "httpProxy", https: "httpsProxy" }), contextOf))

const names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"] as const

/**
 * The proxy variables as an effect `Config` (so a `ConfigProvider` can supply them): each name's
 * value, `undefined` when unset.
 *
 * @since 0.1.0
 * @category config
 */
export const environment: Config.Config<Readonly<Record<(typeof names)[number], string | undefined>>> = Config.all(
  Object.fromEntries(names.map((name) => [name, Config.map(Config.option(Config.string(name)), Option.getOrUndefined)])) as {
    readonly [K in (typeof names)[number]]: Config.Config<string | undefined>
  }
)

/**
 * An `HttpClient` through the proxies the environment names (with their credentials as
 * `Secrets`), read through effect's `Config`:
 * `https_proxy` / `HTTPS_PROXY` for `https` servers, `http_proxy` / `HTTP_PROXY` for `http` ones
 * (and for `https` ones when no https proxy is set), `no_proxy` / `NO_PROXY` for the hosts
 * reached directly. When both cases of a name are set, the lower-case one wins (undici's and
 * curl's order). Unset or empty: no proxy, every request direct. A malformed value fails the
 * layer with `InvalidOption` naming the variable (never its value).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEnv: Layer.Layer<HttpClient.HttpClient | Secrets, InvalidOption> = Layer.scopedContext(
  Effect.gen(function*() {
    const env = yield* Effect.mapError(environment, () => invalidConfig("proxy environment"))
    const raw = fromLookup((name) => env[name as (typeof names)[number]])
    const settings = yield* settingsOf(raw, raw.names)
    return yield* contextOf(settings)
  })
)

/**
 * Whether an environment (`process.env`, say) names a proxy: one of `http_proxy`,
 * `HTTP_PROXY`, `https_proxy`, `HTTPS_PROXY` set and not empty. The default clients of the
 * Promise API and the CLI ask this first, and load no proxy code when it is `false`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isConfigured = (env: Readonly<Record<string, string | undefined>>): boolean => environmentNamesProxy(env)

/**
 * The secrets an environment's proxy variables hold, in every form `McpConnectionError.redact`
 * should find them: each proxy URL's user name and password (raw, percent-decoded, base64 as a
 * `Proxy-Authorization` header carries them), or a whole value that is not a proxy URL. No
 * public field ever holds them; this is for text that is not one, such as a debug dump.
 *
 * @since 0.1.0
 * @category secrets
 */
export const secretsOf = (env: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> => secretValues(environmentProxySecrets(env))
