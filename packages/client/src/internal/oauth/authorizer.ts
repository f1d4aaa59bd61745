/**
 * The authorization of one connection (docs/AUTHORIZATION.md, "Where it plugs in"): it holds the bearer
 * credential the HTTP transports send to the server's origin, and answers the server's 401 and
 * 403 `insufficient_scope` by obtaining a new one. The connection decides whether the refused
 * request is sent again (once); this module only says whether it may be.
 *
 * - `prepare` runs before each operation: it loads stored tokens (once), and refreshes a token
 *   about to expire (nothing has been sent yet, so a failure there is `not-sent`).
 * - `recover` runs after a refusal, outside the operation's deadline: a 401 is answered by a
 *   refresh when there is a refresh token, else by a new authorization; a 403
 *   `insufficient_scope` by a step-up (a new authorization for the union of the scopes),
 *   bounded by `maxStepUps` and refused when the scope would not grow (or, for client
 *   credentials, past a configured `scope`, the ceiling, unless `allowScopeStepUp`).
 *   Concurrent refusals share one recovery: a refusal of a credential already replaced needs
 *   none.
 * - A pre-registered client (a configured `clientId`) is bound to one authorization server:
 *   `issuer` when configured, else the first one its credentials are sent to (in memory for the
 *   connection, and with the stored tokens for the next ones). Discovery is told the binding,
 *   and refuses a resource that names another server before anything is sent to it.
 * - Every exchange with the authority is one exchange of the `authorization` phase (its own
 *   deadline and byte ceiling); the interactive step has its own timeout.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Grant, Interactive, Validated } from "../../Authorization.js"
import {
  AuthorizationFailed,
  type AuthorizationStep,
  type McpConnectionError,
  type Reason,
  type Stage
} from "../../McpConnectionError.js"
import type { Budget } from "../../PhasePolicy.js"
import type { Exchange } from "../transport/transport.js"
import { withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import type { AuthChallenge, Credential } from "../http.js"
import { secretValues } from "../secrets.js"
import { parseBearerChallenge, selectScope, stepUpScope } from "./challenge.js"
import { makeClientAssertionSigner } from "./clientAssertion.js"
import { type DiscoveredAuthority, discoverAuthority } from "./discovery.js"
import { parseHttpUrl } from "./discoveryUrls.js"
import { knownErrorCode } from "./metadata.js"
import { makePkce, makeState, requireS256 } from "./pkce.js"
import { registerClient } from "./registration.js"
import * as Token from "./token.js"
import { type StoredClient, storeKeyOf, type TokenStoreEntry, type TokenStoreService } from "./tokenStore.js"

/** A token with less than this left is refreshed before it is used (when it can be). */
export const refreshSkewMs = 30_000

export interface ConnectionAuthorization {
  /** The credential the HTTP transports send, only to the server's origin. */
  readonly credential: Credential
  /** Changes each time the credential does: read when an operation starts. */
  readonly generation: () => number
  /** Before an operation (see the module comment). */
  readonly prepare: (stage: Stage) => Effect.Effect<void, McpConnectionError>
  /**
   * After `refusal` (a 401, or a 403), for an operation that started at `generation`: succeeds
   * when a credential the refusal asks for is in place, so the refused request may be sent once
   * more; fails with the refusal itself when it is not one to act on (a 403 of another kind),
   * or with the failure of the authorization.
   */
  readonly recover: (
    refusal: McpConnectionError,
    challenge: AuthChallenge,
    context: { readonly stage: Stage; readonly generation: number }
  ) => Effect.Effect<void, McpConnectionError>
}

export interface AuthorizerOptions {
  readonly serverUrl: URL
  readonly options: Validated
  readonly budget: Budget
  readonly interactive: Interactive | undefined
  readonly store: TokenStoreService
  /** Secret values redacted from remote messages: tokens are added as they arrive. */
  readonly secrets: Array<string>
}

interface Current {
  readonly tokens: Token.TokenSet
  readonly client: StoredClient
  readonly issuer: string
  /** The scopes asked for when these tokens were obtained. */
  readonly scope: ReadonlyArray<string> | undefined
}

const failure = (
  exchange: Exchange,
  reason: Reason,
  details: { readonly oauthError?: ReturnType<typeof knownErrorCode>; readonly retryable?: boolean } = {},
  cause?: unknown
) =>
  new AuthorizationFailed({
    ...Failures.fields(exchange),
    reason,
    oauthError: details.oauthError,
    outcome: "not-sent",
    retryable: details.retryable ?? false
  }, cause)

export const makeAuthorizer = (
  config: AuthorizerOptions
): Effect.Effect<ConnectionAuthorization, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<HttpClient.HttpClient>()
    const { options, serverUrl, store } = config
    const credential: Credential = { origin: serverUrl.origin, current: undefined }
    const semaphore = yield* Effect.makeSemaphore(1)
    let generation = 0
    let loaded = false
    let current: Current | undefined
    let authority: DiscoveredAuthority | undefined
    /** Dynamic registrations, per issuer: never sent to another authorization server. */
    const registrations = new Map<string, StoredClient>()
    /** A configured client's credentials are its authorization server's only. */
    const preRegistered = options.clientId !== undefined
    /** The only authorization server that may be used (configured, or bound at first use). */
    let bound: string | undefined = options.issuer
    let stepUps = 0

    const exchangeOf = (stage: Stage, step: AuthorizationStep): Exchange => ({
      stage,
      phase: "authorization",
      budget: config.budget,
      authorizationStep: step
    })

    const install = (next: Current | undefined) => {
      current = next
      generation++
      credential.current = next === undefined ? undefined : `Bearer ${Redacted.value(next.tokens.accessToken)}`
      if (next !== undefined) {
        const values = [next.tokens.accessToken, next.tokens.refreshToken, next.client.clientSecret]
          .filter((value) => value !== undefined)
          .map((value) => Redacted.value(value))
        for (const value of secretValues(values)) if (!config.secrets.includes(value)) config.secrets.push(value)
      }
    }

    const storeKey = storeKeyOf(serverUrl, options)
    // A store that fails is not a reason to fail the operation: the tokens live on in memory.
    const save = (entry: TokenStoreEntry) => Effect.ignore(store.set(storeKey, entry))
    /** Drops the stored entry only while it holds `failed`'s tokens (another process may have stored newer ones). */
    const forget = (failed: Current) => Effect.ignore(store.remove(storeKey, { onlyIf: (stored) => holdsTokensOf(stored, failed) }))
    /**
     * `effect` alone among the store's users (across processes, for the file store), its wait
     * bounded by the authorization budget. A store that cannot keep them apart (none offered,
     * or its lock not had in time) does not fail the operation: `effect` runs as it is.
     */
    const exclusively = <A, R>(effect: Effect.Effect<A, McpConnectionError, R>) =>
      store.exclusive === undefined
        ? effect
        : store.exclusive(storeKey, effect, { timeoutMs: config.budget.timeoutMs }).pipe(
          Effect.catchTag("TokenStoreError", () => effect)
        )
    /** The stored entry, when another process has replaced `held`'s tokens there (same issuer). */
    const newerStored = (held: Current) =>
      store.get(storeKey).pipe(
        Effect.map(Option.filter((entry) => entry.issuer === held.issuer && !holdsTokensOf(entry, held, "both"))),
        Effect.map(Option.map((entry): Current => ({
          tokens: entry.tokens,
          client: entry.client,
          issuer: entry.issuer,
          scope: splitScope(entry.tokens.scope) ?? held.scope
        }))),
        Effect.orElseSucceed(() => Option.none<Current>())
      )

    const load = Effect.suspend(() => {
      if (loaded) return Effect.void
      loaded = true
      return store.get(storeKey).pipe(
        Effect.map(Option.map((entry) => {
          // Tokens of another authorization server than the configured one are not used.
          if (options.issuer !== undefined && entry.issuer !== options.issuer) return
          if (entry.issuer !== "") {
            registrations.set(entry.issuer, entry.client)
            // Bind on first use, across connections: the issuer the stored tokens came from.
            if (preRegistered) bound ??= entry.issuer
          }
          install({ tokens: entry.tokens, client: entry.client, issuer: entry.issuer, scope: splitScope(entry.tokens.scope) })
        })),
        Effect.ignore
      )
    })

    const discover = (stage: Stage, wwwAuthenticate: string | undefined) =>
      Effect.tap(
        discoverAuthority({
          serverUrl,
          wwwAuthenticate,
          budget: config.budget,
          stage,
          expectedIssuer: bound,
          allowPrivateAuthority: options.allowPrivateAuthority
        }),
        (found) => Effect.sync(() => void (authority = found))
      )

    /** The client identity, in the spec's order: pre-registered, metadata document, dynamic registration. */
    const resolveClient = (
      stage: Stage,
      found: DiscoveredAuthority
    ): Effect.Effect<Token.TokenClient, McpConnectionError, HttpClient.HttpClient> =>
      Effect.gen(function*() {
        const metadata = found.authorizationServer
        const issuer = metadata.issuer
        if (options.clientId !== undefined) {
          // Discovery already refused another server; the binding is taken before the first sending.
          if (bound !== undefined && bound !== issuer) {
            return yield* Effect.fail(failure(exchangeOf(stage, "metadata"), "issuer-mismatch"))
          }
          bound = issuer
          if (options.privateKey !== undefined) {
            const assertion = yield* makeClientAssertionSigner({
              clientId: options.clientId,
              audience: issuer,
              privateKey: options.privateKey,
              algorithm: options.privateKeyAlgorithm,
              keyId: options.keyId
            })
            return { clientId: options.clientId, method: "private_key_jwt", assertion }
          }
          if (options.clientSecret === undefined) return { clientId: options.clientId, method: "none" }
          const supported = metadata.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]
          const method = supported.includes("client_secret_basic") || !supported.includes("client_secret_post")
            ? "client_secret_basic"
            : "client_secret_post"
          return { clientId: options.clientId, clientSecret: options.clientSecret, method }
        }
        if (options.clientMetadataUrl !== undefined && metadata.client_id_metadata_document_supported === true) {
          return { clientId: options.clientMetadataUrl, method: "none" }
        }
        const registered = registrations.get(issuer)
        if (registered !== undefined) return registered
        const endpoint = metadata.registration_endpoint
        if (endpoint === undefined) return yield* Effect.fail(failure(exchangeOf(stage, "registration"), "no-client-identity"))
        const client = yield* registerClient({
          registrationEndpoint: endpoint,
          redirectUris: options.redirectUri === undefined ? [] : [options.redirectUri],
          clientName: options.clientName,
          grantTypes: grantTypesOf(options.grant),
          tokenEndpointAuthMethod: options.grant === "client_credentials" ? "client_secret_basic" : "none",
          applicationType: applicationTypeOf(options.redirectUri),
          budget: config.budget,
          stage
        })
        const stored = storedClient(client)
        registrations.set(issuer, stored)
        return stored
      })

    /** The interactive step: the authorization URL out, the redirect in, checked; the code. */
    const authorizeInteractively = (
      stage: Stage,
      found: DiscoveredAuthority,
      client: Token.TokenClient,
      scope: ReadonlyArray<string> | undefined
    ) =>
      Effect.gen(function*() {
        const exchange = exchangeOf(stage, "authorization")
        const metadata = found.authorizationServer
        const interactive = config.interactive
        const redirectUri = options.redirectUri
        if (interactive === undefined || redirectUri === undefined) {
          return yield* Effect.fail(failure(exchange, "no-interactive-step"))
        }
        // The 2025-03-26 default endpoints come with no metadata to advertise PKCE: it is used all the same.
        if (found.authorizationServerSource === "metadata" && Either.isLeft(requireS256(metadata))) {
          return yield* Effect.fail(failure(exchange, "pkce-unsupported"))
        }
        const endpoint = metadata.authorization_endpoint === undefined
          ? undefined
          : parseHttpUrl(metadata.authorization_endpoint)
        if (endpoint === undefined) return yield* Effect.fail(failure(exchange, "no-authorization-server"))
        const pkce = yield* makePkce
        const state = yield* makeState
        const url = new URL(endpoint.href)
        url.searchParams.set("response_type", "code")
        url.searchParams.set("client_id", client.clientId)
        url.searchParams.set("redirect_uri", redirectUri)
        url.searchParams.set("code_challenge", pkce.challenge)
        url.searchParams.set("code_challenge_method", pkce.method)
        url.searchParams.set("state", state)
        url.searchParams.set("resource", found.resource)
        if (scope !== undefined) url.searchParams.set("scope", scope.join(" "))
        const redirect = yield* withDeadline(
          interactive.authorize(url).pipe(
            Effect.catchAllDefect((defect) => Effect.fail(defect)),
            Effect.mapError((cause) => failure(exchange, "interactive-step-failed", {}, cause))
          ),
          options.interactiveTimeoutMs,
          () =>
            Failures.deadline(
              { ...exchange, budget: { timeoutMs: options.interactiveTimeoutMs, maxBytes: config.budget.maxBytes } },
              "not-sent"
            )
        )
        const code = yield* Effect.mapError(
          checkRedirect(redirect, { redirectUri, state, metadata }),
          (problem) => failure(exchange, problem.reason, { oauthError: problem.oauthError })
        )
        return { code, verifier: pkce.verifier, redirectUri }
      })

    /** What every token request to `found` shares. */
    const tokenRequest = (stage: Stage, step: AuthorizationStep, found: DiscoveredAuthority, client: Token.TokenClient) => ({
      tokenEndpoint: found.authorizationServer.token_endpoint,
      resource: found.resource,
      client,
      budget: config.budget,
      stage,
      step
    })

    /** A new grant for `scope` from the authority `found` (discovered anew: it may have moved): identity, tokens. */
    const authorize = (
      stage: Stage,
      found: DiscoveredAuthority,
      scope: ReadonlyArray<string> | undefined,
      step: AuthorizationStep
    ) =>
      Effect.gen(function*() {
        const chosen = scope ?? options.scope ?? selectScope({
          challenged: found.challenge.scope,
          resourceScopesSupported: found.resourceMetadata?.scopes_supported,
          authorizationServerScopesSupported: found.authorizationServer.scopes_supported,
          wantsRefreshToken: options.grant === "authorization_code"
        })
        const client = yield* resolveClient(stage, found)
        const common = tokenRequest(stage, step === "step-up" ? "step-up" : "token", found, client)
        let tokens: Token.TokenSet
        if (options.grant === "client_credentials") {
          tokens = yield* Token.clientCredentials({ ...common, scope: chosen?.join(" ") })
        } else {
          const granted = yield* authorizeInteractively(stage, found, client, chosen)
          tokens = yield* Token.exchangeCode({
            ...common,
            code: Redacted.make(granted.code),
            codeVerifier: granted.verifier,
            redirectUri: granted.redirectUri
          })
        }
        const stored = storedClient(client)
        install({ tokens, client: stored, issuer: found.authorizationServer.issuer, scope: chosen })
        yield* save({ tokens, client: stored, issuer: found.authorizationServer.issuer })
      })

    /**
     * A refresh of the current tokens at `found`, the authorization server that issued them (a
     * client credentials client asks anew).
     */
    const refresh = (stage: Stage, found: DiscoveredAuthority, held: Current) =>
      exclusively(Effect.gen(function*() {
        // Re-read under the lock: another process may have refreshed already (its refresh token
        // rotated ours away: sending ours again would be a reuse). Its tokens are adopted, and
        // refreshed only when they too are about to expire.
        const newer = yield* newerStored(held)
        if (Option.isSome(newer)) {
          install(newer.value)
          const expiresAt = newer.value.tokens.expiresAt
          if (expiresAt === undefined || (yield* Clock.currentTimeMillis) < expiresAt - refreshSkewMs) return
        }
        const using = Option.getOrElse(newer, () => held)
        const refreshToken = using.tokens.refreshToken
        const client = yield* clientFor(stage, found, using.client)
        const common = tokenRequest(stage, "refresh", found, client)
        const tokens = refreshToken !== undefined
          ? yield* Token.refresh({ ...common, refreshToken })
          : yield* Token.clientCredentials({ ...common, scope: using.scope?.join(" ") })
        install({ ...using, tokens })
        yield* save({ tokens, client: using.client, issuer: using.issuer })
      }))

    /** The stored client with what the configuration adds (a private key is never stored). */
    const clientFor = (stage: Stage, found: DiscoveredAuthority, stored: StoredClient) =>
      stored.method === "private_key_jwt" ? resolveClient(stage, found) : Effect.succeed<Token.TokenClient>(stored)

    const canRefresh = (held: Current) => held.tokens.refreshToken !== undefined || options.grant === "client_credentials"

    // The tokens that failed are the current ones (a refresh installs what it adopts before it sends).
    const dropTokens = Effect.suspend(() => {
      const failed = current
      install(undefined)
      return failed === undefined ? Effect.void : forget(failed)
    })

    const prepare: ConnectionAuthorization["prepare"] = (stage) =>
      Effect.gen(function*() {
        yield* load
        const held = current
        if (held === undefined || held.tokens.expiresAt === undefined || !canRefresh(held)) return
        const now = yield* Clock.currentTimeMillis
        if (now < held.tokens.expiresAt - refreshSkewMs) return
        yield* semaphore.withPermits(1)(Effect.suspend(() => {
          // Only at the authorization server that issued the refresh token, once the server's
          // challenge has said which it is (its `resource_metadata`): before that, or when it
          // names another one, a token that expired is refreshed after the 401 it gets.
          const found = authority
          if (current !== held || found === undefined || found.authorizationServer.issuer !== held.issuer) {
            return Effect.void
          }
          return refresh(stage, found, held).pipe(
            Effect.catchAll((error) => {
              // Still valid: it is used, and refreshed at the next operation.
              if (now < held.tokens.expiresAt!) return Effect.void
              return error.reason === "invalid-grant" ? Effect.zipRight(dropTokens, Effect.fail(error)) : Effect.fail(error)
            })
          )
        }))
      }).pipe(Effect.provide(context))

    /** Whether a new grant can be obtained without the caller: client credentials, or an interactive step. */
    const canAuthorize = options.grant === "client_credentials" ||
      (config.interactive !== undefined && options.redirectUri !== undefined)

    const recover: ConnectionAuthorization["recover"] = (refusal, challenge, { generation: started, stage }) =>
      semaphore.withPermits(1)(Effect.zipRight(
        load,
        Effect.suspend(() => {
          // Another operation already replaced the refused credential.
          if (generation !== started) return Effect.void
          // Nothing can be obtained: the refusal, as it is (no request to the authority).
          const refreshable = current?.tokens.refreshToken !== undefined && refusal._tag === "Unauthorized"
          if (!canAuthorize && !refreshable) return Effect.fail(refusal)
          const bearer = parseBearerChallenge(challenge.wwwAuthenticate)
          const challenged = bearer._tag === "BearerChallenge" ? bearer : undefined
          if (refusal._tag === "Forbidden") {
            if (challenged?.error !== "insufficient_scope") return Effect.fail(refusal)
            const exchange = exchangeOf(stage, "step-up")
            const previous = current?.scope ?? options.scope
            const wider = stepUpScope(previous, challenged.scope)
            const grows = wider !== undefined && wider.some((scope) => !(previous ?? []).includes(scope))
            if (!grows) return Effect.fail(failure(exchange, "step-up-limit"))
            // A service's configured scope is what it may hold: a server cannot widen it.
            const ceiling = options.grant === "client_credentials" && !options.allowScopeStepUp ? options.scope : undefined
            if (ceiling !== undefined && wider.some((scope) => !ceiling.includes(scope))) {
              return Effect.fail(failure(exchange, "scope-ceiling"))
            }
            if (stepUps >= options.maxStepUps) return Effect.fail(failure(exchange, "step-up-limit"))
            stepUps++
            return Effect.flatMap(discover(stage, challenge.wwwAuthenticate), (found) => authorize(stage, found, wider, "step-up"))
          }
          // Discovered anew at every 401: an authority that moved is seen at once.
          return Effect.flatMap(discover(stage, challenge.wwwAuthenticate), (found) => {
            const held = current
            const sameIssuer = held !== undefined && held.issuer === found.authorizationServer.issuer
            if (held !== undefined && sameIssuer && held.tokens.refreshToken !== undefined) {
              // Refreshed once; a failed refresh ends the operation (nothing is re-sent after it).
              return refresh(stage, found, held).pipe(
                Effect.tapError((error) => error.reason === "invalid-grant" ? dropTokens : Effect.void)
              )
            }
            if (!canAuthorize) return Effect.fail(refusal)
            return authorize(stage, found, undefined, options.grant === "client_credentials" ? "token" : "authorization")
          })
        })
      )).pipe(Effect.provide(context))

    return { credential, generation: () => generation, prepare, recover }
  })

const storedClient = (client: Token.TokenClient): StoredClient =>
  client.clientSecret === undefined
    ? { clientId: client.clientId, method: client.method }
    : { clientId: client.clientId, clientSecret: client.clientSecret, method: client.method }

/**
 * Whether `stored` still holds `held`'s tokens: its refresh token (or, for tokens without one,
 * its access token) is the same; with `"both"`, the access token and the refresh token.
 */
const holdsTokensOf = (stored: TokenStoreEntry, held: Current, compare: "grant" | "both" = "grant"): boolean => {
  const same = (a: Redacted.Redacted | undefined, b: Redacted.Redacted | undefined) =>
    a === undefined || b === undefined ? a === b : Redacted.value(a) === Redacted.value(b)
  const sameAccess = same(stored.tokens.accessToken, held.tokens.accessToken)
  const sameRefresh = same(stored.tokens.refreshToken, held.tokens.refreshToken)
  if (compare === "both") return sameAccess && sameRefresh
  return held.tokens.refreshToken !== undefined ? sameRefresh : sameAccess
}

const splitScope = (scope: string | undefined): ReadonlyArray<string> | undefined =>
  scope === undefined ? undefined : scope.split(" ").filter((token) => token !== "")

/** Grant types to register: a user's client asks for refresh tokens too. */
const grantTypesOf = (grant: Grant) =>
  grant === "client_credentials"
    ? ["client_credentials" as const]
    : ["authorization_code" as const, "refresh_token" as const]

/** OpenID `application_type` (MCP 2026-07-28 registration): a loopback redirect is a native app's. */
const applicationTypeOf = (redirectUri: string | undefined): "native" | "web" => {
  const url = redirectUri === undefined ? undefined : parseHttpUrl(redirectUri)
  return url === undefined || url.protocol === "http:" ? "native" : "web"
}

interface RedirectProblem {
  readonly reason: Reason
  readonly oauthError?: ReturnType<typeof knownErrorCode>
}

/**
 * Checks the redirect that ended the interactive step (OAuth 2.1 §4.1.2, RFC 9207): it comes
 * back to `redirectUri`; its `state` is the one sent; its `iss`, when the server advertises it
 * or sends it, is the issuer exactly (no normalization); then an `error`, or the code.
 */
export const checkRedirect = (
  redirect: string | URL,
  expected: {
    readonly redirectUri: string
    readonly state: string
    readonly metadata: { readonly issuer: string; readonly authorization_response_iss_parameter_supported?: boolean | undefined }
  }
): Effect.Effect<string, RedirectProblem> => {
  const url = typeof redirect === "string" ? parseHttpUrl(redirect) : redirect instanceof URL ? redirect : undefined
  const target = parseHttpUrl(expected.redirectUri)
  if (url === undefined || target === undefined || url.origin !== target.origin || url.pathname !== target.pathname) {
    return Effect.fail({ reason: "invalid-redirect" })
  }
  const params = url.searchParams
  if (params.getAll("state").length !== 1 || params.get("state") !== expected.state) {
    return Effect.fail({ reason: "state-mismatch" })
  }
  const iss = params.getAll("iss")
  if (iss.length > 1) return Effect.fail({ reason: "iss-mismatch" })
  if (iss.length === 1 ? iss[0] !== expected.metadata.issuer : expected.metadata.authorization_response_iss_parameter_supported === true) {
    return Effect.fail({ reason: "iss-mismatch" })
  }
  const error = params.get("error")
  if (error !== null) return Effect.fail({ reason: "authorization-denied", oauthError: knownErrorCode(error) })
  const codes = params.getAll("code")
  if (codes.length !== 1 || codes[0] === "") return Effect.fail({ reason: "invalid-redirect" })
  return Effect.succeed(codes[0]!)
}
