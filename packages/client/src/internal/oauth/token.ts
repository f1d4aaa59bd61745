/**
 * The token endpoint: the authorization code grant with PKCE (RFC 6749 §4.1.3,
 * RFC 7636 §4.5), the refresh (RFC 6749 §6) and the client credentials grant (§4.4), as OAuth
 * 2.1 has them, each with the RFC 8707 `resource` of the MCP server.
 *
 * Every request is one exchange of the `authorization` phase (docs/DESIGN.md, "Phases and
 * budgets"), bounded as discovery's are (`discovery.ts`): a `POST` of an
 * `application/x-www-form-urlencoded` form with `Accept: application/json`, under its own
 * deadline, its answer read under its own byte ceiling ("Bytes"). No caller header is sent. A
 * redirect is never followed (`redirect-refused`): the form carries secrets, and a token
 * endpoint has no reason to move.
 *
 * Client authentication (RFC 6749 §2.3.1): `client_secret_basic` sends
 * `Authorization: Basic base64(urlencode(id) ":" urlencode(secret))` and no `client_id` in the
 * form; `client_secret_post` puts `client_id` and `client_secret` in the form; `none` sends only
 * `client_id`; `private_key_jwt` (RFC 7523 §2.2) sends `client_id` and a fresh signed assertion
 * (`clientAssertion.ts`).
 *
 * Failures are `McpConnectionError`s of phase `authorization` (step `token`, or `refresh`),
 * outcome `not-sent`: no MCP request was sent (or re-sent) on the way. An OAuth error response
 * (§5.2) is `AuthorizationFailed` with its HTTP status, its code in `oauthError` when it is one
 * of `oauthErrorCodes`, and the reason `invalid-grant` (the grant is no longer good: start a new
 * authorization, never re-send the MCP request) or `token-refused` (any other code).
 * `error_description` and `error_uri` are dropped: an authorization server may echo what it
 * received, secrets included. An error status without an OAuth body is `UpstreamFailure`.
 *
 * Secrets (the code, the verifier, the client secret, the tokens) are `Redacted` in and out and
 * never reach a public field, a message, JSON or an error's cause: a transport error of the
 * HTTP client is not kept as a cause, since it holds the request (its form and its headers).
 *
 * Retries: the code is single-use and a refresh may rotate the refresh token, so after a request
 * that may have reached the server neither grant is retryable; only a request that never
 * connected is. The client credentials grant is retryable on every transient failure.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import {
  AuthorizationFailed,
  type AuthorizationStep,
  DeadlineExceeded,
  InvalidOption,
  type McpConnectionError,
  ProtocolViolation,
  type Reason,
  type Stage,
  TransportFailure,
  UpstreamFailure
} from "../../McpConnectionError.js"
import type { Budget } from "../../PhasePolicy.js"
import type { Exchange } from "../transport/transport.js"
import { withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import { type Client, contentTypeOf, makeClient, transportError } from "../http.js"
import { type ClientAssertionSigner, clientAssertionParameters } from "./clientAssertion.js"
import { isSecure, parseHttpUrl } from "./discoveryUrls.js"
import { readJsonAnswer } from "./jsonAnswer.js"
import { decodeTokenErrorResponse, decodeTokenResponse, knownErrorCode } from "./metadata.js"

/** How the client authenticates at the token endpoint (RFC 6749 §2.3.1, RFC 7591 §2). */
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt"

/** The client, as registered with the authorization server. */
export interface TokenClient {
  readonly clientId: string
  /** Required by `client_secret_basic` and `client_secret_post`; never sent with `none`. */
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  readonly method: TokenEndpointAuthMethod
  /** Required by `private_key_jwt`: signs a fresh assertion for each request. */
  readonly assertion?: ClientAssertionSigner | undefined
}

/** What a token endpoint issued. */
export interface TokenSet {
  readonly accessToken: Redacted.Redacted<string>
  readonly tokenType: "Bearer"
  /**
   * Epoch milliseconds (Effect `Clock`) at which the access token expires: `expires_in` counted
   * from when the request was sent (so never later than the server's own expiry). Absent when
   * the response has no `expires_in`.
   */
  readonly expiresAt?: number | undefined
  /**
   * The refresh token to use next. On a refresh without a new one (no rotation, RFC 6749 §6),
   * the one presented, which stays valid.
   */
  readonly refreshToken?: Redacted.Redacted<string> | undefined
  /** The scope granted, when the response says (RFC 6749 §5.1: absent when it is the one requested). */
  readonly scope?: string | undefined
}

interface Common {
  /** The token endpoint (from the Authorization Server Metadata): `https`, or `http` on loopback. */
  readonly tokenEndpoint: string | URL
  /** The RFC 8707 resource: the MCP server (`DiscoveredAuthority.resource`). */
  readonly resource: string
  readonly client: TokenClient
  /** The validated `authorization` budget: the exchange's timeout and byte ceiling. */
  readonly budget: Budget
  /** The stage of the operation that needed the token (default `connect`), named in failures. */
  readonly stage?: Stage | undefined
  /** The step named in failures (default `token`, or `refresh` for a refresh). */
  readonly step?: AuthorizationStep | undefined
}

export interface ExchangeCodeOptions extends Common {
  readonly code: Redacted.Redacted<string>
  readonly codeVerifier: Redacted.Redacted<string>
  /** The `redirect_uri` of the authorization request, exactly. */
  readonly redirectUri: string
}

export interface RefreshOptions extends Common {
  readonly refreshToken: Redacted.Redacted<string>
  /** A scope no wider than the original grant; absent: the original scope. */
  readonly scope?: string | undefined
}

export interface ClientCredentialsOptions extends Common {
  readonly scope?: string | undefined
}

type Grant = "authorization_code" | "refresh_token" | "client_credentials"

/** Whether a failure says the grant is no longer good (`invalid_grant`): authorize anew. */
export const isInvalidGrant = (error: McpConnectionError): boolean => error.reason === "invalid-grant"

const exchangeOf = (options: Common, grant: Grant): Exchange => ({
  stage: options.stage ?? "connect",
  phase: "authorization",
  budget: options.budget,
  authorizationStep: options.step ?? (grant === "refresh_token" ? "refresh" : "token")
})

/** RFC 6749 Appendix B: the application/x-www-form-urlencoded form of one value. */
const formEncode = (value: string): string => new URLSearchParams([["", value]]).toString().slice(1)

const base64Utf8 = (text: string): string => {
  let binary = ""
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte)
  return btoa(binary)
}

const transientCodes: ReadonlySet<string> = new Set(["server_error", "temporarily_unavailable"])

const post = (
  http: Client,
  exchange: Exchange,
  grant: Grant,
  endpoint: URL,
  form: URLSearchParams,
  authorization: string | undefined,
  previousRefreshToken: Redacted.Redacted<string> | undefined
): Effect.Effect<TokenSet, McpConnectionError> => {
  const { timeoutMs } = exchange.budget
  // Only the client credentials grant can be repeated without consuming or rotating anything.
  const repeatable = grant === "client_credentials"
  const base = Failures.fields(exchange)
  const violation = (reason: Reason, details: { observedBytes?: number; status?: number } = {}, cause?: unknown) =>
    new ProtocolViolation({ ...base, reason, ...details, outcome: "not-sent", retryable: false }, cause)

  const onRequestError = (error: HttpClientError.HttpClientError) => {
    // The HTTP client's error holds the request (form, Authorization): it is not kept.
    const reason = transportError(exchange, "sending")(error).reason ?? "connection-failed"
    return new TransportFailure({
      ...base,
      reason,
      outcome: "not-sent",
      retryable: repeatable || reason === "connection-failed"
    })
  }

  const readJson = (response: HttpClientResponse.HttpClientResponse) => readJsonAnswer(response, exchange, repeatable)

  const answer = (
    response: HttpClientResponse.HttpClientResponse,
    sentAt: number
  ): Effect.Effect<TokenSet, McpConnectionError> => {
    const status = response.status
    if (status >= 300 && status < 400) return Effect.fail(violation("redirect-refused", { status }))
    const isJson = contentTypeOf(response) === "application/json"
    if (status === 200) {
      if (!isJson) return Effect.fail(violation("unexpected-content-type", { status }))
      return Effect.flatMap(readJson(response), ({ json, observedBytes }) => {
        const decoded = decodeTokenResponse(json)
        if (Either.isLeft(decoded)) {
          // A DocumentProblem names the field and the problem, never a value.
          return Effect.fail(violation("invalid-token-response", { observedBytes, status }, decoded.left))
        }
        const token = decoded.right
        return Effect.succeed<TokenSet>({
          accessToken: token.access_token,
          tokenType: "Bearer",
          expiresAt: token.expires_in === undefined ? undefined : sentAt + token.expires_in * 1000,
          refreshToken: token.refresh_token ?? previousRefreshToken,
          scope: token.scope
        })
      })
    }
    const upstream = (retryable: boolean, observedBytes?: number) => new UpstreamFailure({ ...base, status, observedBytes, outcome: "not-sent", retryable })
    const transientStatus = status >= 500 || status === 429
    if (!isJson) return Effect.fail(upstream(repeatable && transientStatus))
    return Effect.flatMap(readJson(response), ({ json, observedBytes }): Effect.Effect<never, McpConnectionError> => {
      const decoded = decodeTokenErrorResponse(json)
      if (Either.isLeft(decoded)) return Effect.fail(upstream(repeatable && transientStatus, observedBytes))
      // Only the code is kept; error_description and error_uri may echo secrets.
      const code = knownErrorCode(decoded.right.error)
      const reason: Reason = code === "invalid_grant" ? "invalid-grant" : "token-refused"
      const transient = transientStatus || (code !== undefined && transientCodes.has(code))
      return Effect.fail(
        new AuthorizationFailed({
          ...base,
          status,
          reason,
          oauthError: code,
          observedBytes,
          outcome: "not-sent",
          retryable: repeatable && transient
        })
      )
    })
  }

  const request = HttpClientRequest.post(endpoint, {
    headers: authorization === undefined
      ? { accept: "application/json" }
      : { accept: "application/json", authorization }
  }).pipe(HttpClientRequest.bodyText(form.toString(), "application/x-www-form-urlencoded"))

  return withDeadline(
    Effect.flatMap(
      Clock.currentTimeMillis,
      (sentAt) => http.execute(request, onRequestError, (response) => answer(response, sentAt))
    ),
    timeoutMs,
    () => new DeadlineExceeded({ ...base, outcome: "not-sent", retryable: repeatable })
  )
}

const run = (
  grant: Grant,
  options: Common,
  fields: ReadonlyArray<readonly [string, string]>,
  previousRefreshToken?: Redacted.Redacted<string>
): Effect.Effect<TokenSet, McpConnectionError, HttpClient.HttpClient> =>
  Effect.suspend(() => {
    const exchange = exchangeOf(options, grant)
    const base = Failures.fields(exchange)
    const endpoint = parseHttpUrl(String(options.tokenEndpoint))
    if (endpoint === undefined || endpoint.hash !== "" || !isSecure(endpoint)) {
      return Effect.fail(
        new ProtocolViolation({
          ...base,
          reason: endpoint === undefined || endpoint.hash !== "" ? "invalid-url" : "insecure-url",
          outcome: "not-sent",
          retryable: false
        })
      )
    }
    const { client } = options
    const form = new URLSearchParams()
    form.append("grant_type", grant)
    for (const [name, value] of fields) form.append(name, value)
    form.append("resource", options.resource)
    let authorization: string | undefined
    const missing = (option: string) => Effect.fail(new InvalidOption({ ...base, option, reason: "invalid-value", outcome: "not-sent", retryable: false }))
    if (client.method === "none") {
      form.append("client_id", client.clientId)
    } else if (client.method === "private_key_jwt") {
      const signer = client.assertion
      if (signer === undefined) return missing("client.privateKey")
      form.append("client_id", client.clientId)
      // A fresh assertion per request: its `jti` is single-use (RFC 7523 §3).
      return Effect.flatMap(signer.sign, (assertion) => {
        for (const [name, value] of clientAssertionParameters(assertion)) form.append(name, value)
        return Effect.flatMap(makeClient({}), (http) => post(http, exchange, grant, endpoint, form, undefined, previousRefreshToken))
      })
    } else {
      if (client.clientSecret === undefined) return missing("client.clientSecret")
      const secret = Redacted.value(client.clientSecret)
      if (client.method === "client_secret_basic") {
        authorization = `Basic ${base64Utf8(`${formEncode(client.clientId)}:${formEncode(secret)}`)}`
      } else {
        form.append("client_id", client.clientId)
        form.append("client_secret", secret)
      }
    }
    return Effect.flatMap(
      makeClient({}),
      (http) => post(http, exchange, grant, endpoint, form, authorization, previousRefreshToken)
    )
  })

/** The authorization code grant with PKCE (RFC 6749 §4.1.3, RFC 7636 §4.5), with `resource` (RFC 8707). */
export const exchangeCode = (
  options: ExchangeCodeOptions
): Effect.Effect<TokenSet, McpConnectionError, HttpClient.HttpClient> =>
  run("authorization_code", options, [
    ["code", Redacted.value(options.code)],
    ["redirect_uri", options.redirectUri],
    ["code_verifier", Redacted.value(options.codeVerifier)]
  ])

/**
 * A refresh (RFC 6749 §6, OAuth 2.1 §4.3), with `resource`. A failure with the reason
 * `invalid-grant` means the refresh token is no longer good: start a new authorization.
 */
export const refresh = (
  options: RefreshOptions
): Effect.Effect<TokenSet, McpConnectionError, HttpClient.HttpClient> =>
  run(
    "refresh_token",
    options,
    [
      ["refresh_token", Redacted.value(options.refreshToken)],
      ...(options.scope === undefined ? [] : [["scope", options.scope] as const])
    ],
    options.refreshToken
  )

/** The client credentials grant (RFC 6749 §4.4), with `resource`; needs a confidential client. */
export const clientCredentials = (
  options: ClientCredentialsOptions
): Effect.Effect<TokenSet, McpConnectionError, HttpClient.HttpClient> =>
  run("client_credentials", options, options.scope === undefined ? [] : [["scope", options.scope]])
