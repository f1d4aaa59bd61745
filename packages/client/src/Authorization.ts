/**
 * OAuth 2.1 authorization of MCP servers (the MCP specification's "Authorization", 2025-11-25
 * and 2026-07-28): what a connection needs to answer a server's `401` by itself. See
 * docs/AUTHORIZATION.md.
 *
 * A user's authorization (the `authorization_code` grant, the default) needs the interactive
 * step, the `InteractiveAuthorization` service: it shows the authorization URL to the user and
 * returns the redirect that carries the code (the CLI's opens a browser and listens on
 * 127.0.0.1). Tokens are kept in the `TokenStore` service (the CLI's is a file readable only by
 * the user). A connection with `auth` requires both services (`Services`; only the token store
 * for `client_credentials`): `layerDefaults` gives tokens in memory and no interactive step.
 *
 * The authorities an MCP server names are checked before anything is sent to them: `https`
 * (plain `http` only between loopback hosts), on public addresses or names (loopback only for a
 * server on loopback; private and link-local literal addresses only with
 * `allowPrivateAuthority`). Names are not resolved.
 *
 * @example
 * ```ts
 * import { Authorization, McpClient } from "@phasebound/client"
 * import { Effect, Redacted } from "effect"
 *
 * const connect = McpClient.connect({
 *   url: "https://mcp.example.com/mcp",
 *   auth: {
 *     grant: "client_credentials",
 *     clientId: "reporting",
 *     clientSecret: Redacted.make(process.env["REPORTING_CLIENT_SECRET"] ?? ""),
 *     // The secret goes to this authorization server only, whatever the MCP server names.
 *     issuer: "https://auth.example.com"
 *   }
 * }).pipe(Effect.provide(Authorization.layerMemoryTokenStore))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { InvalidOption } from "./McpConnectionError.js"
import type { ClientAssertionAlgorithm } from "./internal/oauth/clientAssertion.js"
import { isSecure } from "./internal/oauth/discoveryUrls.js"
import * as Options_ from "./internal/options.js"
import { layerMemory as memoryStore, type TokenStore } from "./internal/oauth/tokenStore.js"

export {
  /**
   * Where tokens are kept: `layerMemory` (the process's memory), or `layerFile` (one JSON file
   * per user, 0600 in a 0700 directory, written atomically).
   *
   * @since 0.1.0
   * @category services
   */
  TokenStore,
  /**
   * @since 0.1.0
   * @category services
   */
  layerFile as tokenStoreFile,
  /**
   * @since 0.1.0
   * @category services
   */
  layerMemory as tokenStoreMemory,
  /**
   * The default token file of the CLI, under the user's configuration directory.
   *
   * @since 0.1.0
   * @category services
   */
  defaultTokenFile,
  /**
   * The token store key of a configuration: the server's canonical URI (as configured) and its
   * client (the client id, else the metadata document URL, else `dynamic-registration`). What
   * the CLI's `logout` removes, without asking the server.
   *
   * @since 0.1.0
   * @category services
   */
  storeKeyOf,
  /**
   * @since 0.1.0
   * @category errors
   */
  TokenStoreError
} from "./internal/oauth/tokenStore.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Grant = "authorization_code" | "client_credentials"

/**
 * How a connection authorizes itself with an MCP server that asks for OAuth.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * `"authorization_code"` (default): a user authorizes, through the `InteractiveAuthorization`
   * service, with PKCE S256. `"client_credentials"`: a service with no user, identified by
   * `clientId` and `clientSecret` or `privateKey`.
   */
  readonly grant?: Grant | undefined
  /**
   * Where the authorization server sends the user back (authorization code): an http(s) URL.
   * Without it (or without the interactive step) no new authorization is started: stored tokens
   * are used and refreshed, and a 401 that needs a user is returned as it is.
   */
  readonly redirectUri?: string | undefined
  /** A client registered beforehand with the authorization server. */
  readonly clientId?: string | undefined
  /**
   * The issuer identifier of the authorization server the connection may use, exactly as its
   * metadata spells it (`https`, or `http` on a loopback host). A pre-registered client's
   * secret or key is sent to that server only: when the MCP server names another one, the
   * connection fails `AuthorizationFailed` `issuer-mismatch` and nothing is sent to it. Without
   * it, a pre-registered client is bound to the first authorization server it is used with
   * (for the connection, and through the token store for the next ones: docs/AUTHORIZATION.md,
   * "Credentials bound to their authorization server").
   */
  readonly issuer?: string | undefined
  readonly clientSecret?: string | Redacted.Redacted<string> | undefined
  /**
   * The `https` URL of this client's Client ID Metadata Document, used as its `client_id` where
   * the authorization server supports them; else the client registers dynamically (RFC 7591).
   */
  readonly clientMetadataUrl?: string | undefined
  /** `private_key_jwt` client authentication (RFC 7523): a PKCS#8 PEM, or a `CryptoKey` that can sign. */
  readonly privateKey?: string | Redacted.Redacted<string> | CryptoKey | undefined
  /** Default `RS256`. */
  readonly privateKeyAlgorithm?: ClientAssertionAlgorithm | undefined
  readonly keyId?: string | undefined
  /**
   * The scopes to ask for, instead of the spec's choice (the challenge's `scope`, else the
   * resource's `scopes_supported`, else none).
   */
  readonly scope?: string | ReadonlyArray<string> | undefined
  /** The `client_name` sent at dynamic registration (default `phasebound`). */
  readonly clientName?: string | undefined
  /** Bound of the interactive step (default 5 minutes). */
  readonly interactiveTimeout?: Duration.DurationInput | undefined
  /** Most step-ups (a 403 `insufficient_scope` answered with a wider scope) per connection (default 2). */
  readonly maxStepUps?: number | undefined
  /**
   * With `client_credentials` and `scope`: let a 403 `insufficient_scope` widen the scope past
   * `scope` (default `false`: `scope` is the ceiling, and a step-up past it is refused,
   * `AuthorizationFailed` `scope-ceiling`).
   */
  readonly allowScopeStepUp?: boolean | undefined
  /**
   * Allow authority URLs (resource metadata, authorization server, its endpoints) on loopback,
   * private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local, unspecified or
   * reserved literal addresses, whoever names them (default `false`: only an MCP server on
   * loopback may name loopback ones, and nothing may name the others). For an authorization
   * server on a private network. Plain `http` stays refused off loopback.
   */
  readonly allowPrivateAuthority?: boolean | undefined
}

/**
 * The interactive step of the authorization code grant.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interactive {
  /**
   * Shows `authorizationUrl` to the user and succeeds with the URL the authorization server
   * redirected the user agent to (it carries `code` and `state`, or `error`). Interrupted when
   * the interactive timeout passes. What it fails with stays in process.
   */
  readonly authorize: (authorizationUrl: URL) => Effect.Effect<string | URL, unknown>
}

/**
 * @since 0.1.0
 * @category services
 */
export class InteractiveAuthorization extends Context.Tag("@phasebound/client/InteractiveAuthorization")<
  InteractiveAuthorization,
  Interactive
>() {}

/**
 * @since 0.1.0
 * @category services
 */
export const layerInteractive = (authorize: Interactive["authorize"]): Layer.Layer<InteractiveAuthorization> =>
  Layer.succeed(InteractiveAuthorization, { authorize })

/**
 * No interactive step: a connection given this one starts no new authorization of a user (stored
 * tokens are used and refreshed, and a 401 that needs a user is returned as it is), and does not
 * require `redirectUri`. Its `authorize` fails at once, should anyone else call it.
 *
 * @since 0.1.0
 * @category services
 */
export const noInteraction: Interactive = {
  authorize: () => Effect.fail(new Error("no interactive step"))
}

/**
 * `noInteraction` as the `InteractiveAuthorization` service.
 *
 * @since 0.1.0
 * @category services
 */
export const layerNoInteraction: Layer.Layer<InteractiveAuthorization> = Layer.succeed(InteractiveAuthorization, noInteraction)

/**
 * Tokens in memory: one store each time the layer is built, shared by every connection made
 * with it (entries are keyed by server and client, so connections to the same server as the
 * same client use the same tokens). Provided to one connection, it lives and dies with it, as
 * the Promise API does for each `connect`.
 *
 * @since 0.1.0
 * @category services
 */
export const layerMemoryTokenStore: Layer.Layer<TokenStore> = memoryStore

/**
 * What a connection with `auth` requires: the token store and, for the authorization code
 * grant, the interactive step. `client_credentials` needs no user, so no interactive step.
 *
 * @since 0.1.0
 * @category services
 */
export type Services = TokenStore | InteractiveAuthorization

/**
 * The defaults: tokens in memory (`layerMemoryTokenStore`) and no interactive step
 * (`layerNoInteraction`), what a connection had when it was given no services.
 *
 * @since 0.1.0
 * @category services
 */
export const layerDefaults: Layer.Layer<Services> = Layer.merge(layerMemoryTokenStore, layerNoInteraction)

/**
 * Whether `auth` may be used with an MCP server at `url`: `https`, or `http` on a loopback host
 * (127.0.0.0/8, `::1`, `localhost`). Over plain `http` elsewhere the bearer token would travel
 * in clear: `connect` refuses it before any I/O (`InvalidOption` `url`).
 *
 * @since 0.1.0
 * @category validation
 */
export const isSecureServerUrl = (url: URL): boolean => isSecure(url)

/**
 * Refuses, before any I/O, an MCP server URL that `auth` may not be used with
 * (`isSecureServerUrl`): `InvalidOption` naming `url`, reason `insecure-url`.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateServerUrl = (url: URL): Effect.Effect<void, InvalidOption> => Effect.asVoid(Options_.decodeServerUrl(url))

/**
 * The options, validated.
 *
 * @since 0.1.0
 * @category models
 */
export interface Validated {
  readonly grant: Grant
  readonly redirectUri: string | undefined
  readonly clientId: string | undefined
  readonly issuer: string | undefined
  readonly clientSecret: Redacted.Redacted<string> | undefined
  readonly clientMetadataUrl: string | undefined
  readonly privateKey: Redacted.Redacted<string> | CryptoKey | undefined
  readonly privateKeyAlgorithm: ClientAssertionAlgorithm
  readonly keyId: string | undefined
  readonly scope: ReadonlyArray<string> | undefined
  readonly clientName: string
  readonly interactiveTimeoutMs: number
  readonly maxStepUps: number
  readonly allowScopeStepUp: boolean
  readonly allowPrivateAuthority: boolean
}

/** @since 0.1.0 @category defaults */
export const defaultInteractiveTimeoutMs: number = Options_.authDefaults.interactiveTimeoutMs
/** @since 0.1.0 @category defaults */
export const defaultMaxStepUps: number = Options_.authDefaults.maxStepUps

/**
 * Validates the options before any I/O (their Schema, `internal/options.ts`); a problem is an
 * `InvalidOption` naming `auth.<option>` (never its value).
 *
 * @since 0.1.0
 * @category validation
 */
export const validate = (options: Options): Effect.Effect<Validated, InvalidOption> => Options_.decodeAuth(options)
