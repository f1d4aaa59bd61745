/**
 * The token endpoint (issue 15): the authorization code grant with PKCE (RFC 6749 §4.1.3,
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
 * `client_id`.
 *
 * Failures are `McpConnectionError`s of stage `connect`, phase `authorization`, outcome
 * `not-sent`: no MCP request was sent (or re-sent) on the way. An OAuth error response (§5.2)
 * is an `UpstreamFailure` with its HTTP status and the reason `invalid-grant` (the grant is no
 * longer good: start a new authorization, never re-send the MCP request) or `token-refused`
 * (any other code); its cause (non-enumerable, `tokenErrorCodeOf`) carries only the error code
 * when it is one of `oauthErrorCodes`. `error_description` and `error_uri` are dropped: an
 * authorization server may echo what it received, secrets included.
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
  ByteCeilingExceeded,
  DeadlineExceeded,
  InvalidOption,
  type McpConnectionError,
  ProtocolViolation,
  type Reason,
  TransportFailure,
  UpstreamFailure
} from "../../McpConnectionError.js"
import type { Budget } from "../../PhasePolicy.js"
import type { Exchange } from "../../Transport.js"
import { readBody } from "../bodyReader.js"
import { decodeUtf8 } from "../byteCount.js"
import { withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import { type Client, contentTypeOf, makeClient, transportError } from "../http.js"
import { isSecure, parseHttpUrl } from "./discoveryUrls.js"
import { decodeTokenErrorResponse, decodeTokenResponse, knownErrorCode, type OAuthErrorCode } from "./metadata.js"

/** How the client authenticates at the token endpoint (RFC 6749 §2.3.1, RFC 7591 §2). */
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "none"

/** The client, as registered with the authorization server. */
export interface TokenClient {
  readonly clientId: string
  /** Required by `client_secret_basic` and `client_secret_post`; never sent with `none`. */
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  readonly method: TokenEndpointAuthMethod
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

/** The cause of an OAuth error response's failure: its code when known, nothing else of the body. */
export interface TokenErrorCause {
  readonly _tag: "TokenErrorResponse"
  readonly error: OAuthErrorCode | undefined
}

/**
 * The OAuth error code behind a failure of the token endpoint (`invalid-grant` or
 * `token-refused`), when it is one of `oauthErrorCodes`; `undefined` otherwise.
 */
export const tokenErrorCodeOf = (error: McpConnectionError): OAuthErrorCode | undefined => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && (cause as TokenErrorCause)._tag === "TokenErrorResponse"
    ? (cause as TokenErrorCause).error
    : undefined
}

/** Whether a failure says the grant is no longer good (`invalid_grant`): authorize anew. */
export const isInvalidGrant = (error: McpConnectionError): boolean => error.reason === "invalid-grant"

const exchangeOf = (budget: Budget): Exchange => ({ stage: "connect", phase: "authorization", budget })

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
  const { maxBytes, timeoutMs } = exchange.budget
  // Only the client credentials grant can be repeated without consuming or rotating anything.
  const repeatable = grant === "client_credentials"
  const base = Failures.fields(exchange)
  const violation = (reason: Reason, details: { observedBytes?: number; status?: number } = {}, cause?: unknown) =>
    new ProtocolViolation({ ...base, reason, ...details, outcome: "not-sent", retryable: false }, cause)
  const closed = (observedBytes?: number) =>
    new TransportFailure({ ...base, reason: "connection-closed", observedBytes, outcome: "not-sent", retryable: repeatable })

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

  const readJson = (response: HttpClientResponse.HttpClientResponse, status: number) =>
    readBody(response, maxBytes).pipe(
      Effect.catchTags({
        FrameTooLarge: (tooLarge) =>
          Effect.fail(
            new ByteCeilingExceeded({
              ...base,
              observedBytes: tooLarge.observedBytes,
              status,
              outcome: "not-sent",
              retryable: false
            })
          ),
        // Neither is kept as a cause: a ResponseError holds the request.
        BodyReadFailed: () => Effect.fail(closed()),
        ResponseError: () => Effect.fail(closed())
      }),
      Effect.flatMap((bytes) => {
        const observedBytes = bytes.length
        const text = decodeUtf8(bytes)
        if (Either.isLeft(text)) return Effect.fail(violation("invalid-utf8", { observedBytes, status }))
        try {
          return Effect.succeed({ json: JSON.parse(text.right) as unknown, observedBytes })
        } catch {
          // The parser's message quotes the body (a token, maybe): not kept.
          return Effect.fail(violation("invalid-json", { observedBytes, status }))
        }
      })
    )

  const answer = (
    response: HttpClientResponse.HttpClientResponse,
    sentAt: number
  ): Effect.Effect<TokenSet, McpConnectionError> => {
    const status = response.status
    if (status >= 300 && status < 400) return Effect.fail(violation("redirect-refused", { status }))
    const isJson = contentTypeOf(response) === "application/json"
    if (status === 200) {
      if (!isJson) return Effect.fail(violation("unexpected-content-type", { status }))
      return Effect.flatMap(readJson(response, status), ({ json, observedBytes }) => {
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
    const upstream = (reason: Reason | undefined, retryable: boolean, observedBytes?: number, cause?: TokenErrorCause) =>
      new UpstreamFailure({ ...base, status, reason, observedBytes, outcome: "not-sent", retryable }, cause)
    const transientStatus = status >= 500 || status === 429
    if (!isJson) return Effect.fail(upstream(undefined, repeatable && transientStatus))
    return Effect.flatMap(readJson(response, status), ({ json, observedBytes }) => {
      const decoded = decodeTokenErrorResponse(json)
      if (Either.isLeft(decoded)) return Effect.fail(upstream(undefined, repeatable && transientStatus, observedBytes))
      // Only the code is kept; error_description and error_uri may echo secrets.
      const code = knownErrorCode(decoded.right.error)
      const cause: TokenErrorCause = { _tag: "TokenErrorResponse", error: code }
      const reason: Reason = code === "invalid_grant" ? "invalid-grant" : "token-refused"
      const transient = transientStatus || (code !== undefined && transientCodes.has(code))
      return Effect.fail(upstream(reason, repeatable && transient, observedBytes, cause))
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
    const exchange = exchangeOf(options.budget)
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
    if (client.method === "none") {
      form.append("client_id", client.clientId)
    } else {
      if (client.clientSecret === undefined) {
        return Effect.fail(
          new InvalidOption({
            ...base,
            option: "client.clientSecret",
            reason: "invalid-value",
            outcome: "not-sent",
            retryable: false
          })
        )
      }
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
