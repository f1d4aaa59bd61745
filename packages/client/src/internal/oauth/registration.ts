/**
 * Dynamic Client Registration (RFC 7591), as MCP authorization has it ("Dynamic Client
 * Registration"): the client registers itself at the authorization server's
 * `registration_endpoint` and gets the `client_id` (and, for a confidential client, the
 * `client_secret`) it then uses at the token endpoint (`token.ts`).
 *
 * The request is one exchange of the `authorization` phase, step `registration`, bounded as the
 * token endpoint's are (`token.ts`): a `POST` of the client metadata as `application/json` with
 * `Accept: application/json`, under its own deadline, its answer read under its own byte
 * ceiling. No caller header is sent (no initial access token, RFC 7591 §3). A redirect is never
 * followed (`redirect-refused`). The endpoint must be `https`, or `http` on loopback, and is
 * checked before any I/O (`invalid-url`, `insecure-url`).
 *
 * The metadata sent (RFC 7591 §2): `redirect_uris` (empty for a client of the client credentials
 * grant only), `client_name`, `grant_types`, `response_types` `["code"]` only when
 * `authorization_code` is among the grants, `token_endpoint_auth_method`, and `scope` when given,
 * with OpenID's `application_type` when given (OpenID Connect Dynamic Client Registration 1.0 §2).
 *
 * The answer (§3.2.1), `201` (or `200`) with `application/json`, is decoded strictly
 * (`metadata.ts`'s `RegistrationResponse`): a `client_id` of visible ASCII, at most
 * `maxClientCredentialLength` characters; the other fields the server echoes are allowed and
 * dropped. The server may register another method than the one asked for (§3.2.1): the answer's
 * `token_endpoint_auth_method` is the one used, the one requested when the answer has none. A
 * method that needs a secret (`client_secret_basic`, `client_secret_post`) without a
 * `client_secret` in the answer is `invalid-registration-response`; a secret issued to a client
 * whose method is `none` is ignored (a public client never sends one), with its expiry. Any
 * other `2xx` is `invalid-registration-response` too.
 *
 * Failures are `McpConnectionError`s of phase `authorization`, step `registration`, outcome
 * `not-sent` (no MCP request was sent on the way). An error response (§3.2.2) is
 * `AuthorizationFailed` with the reason `registration-refused`, its HTTP status and its code in
 * `oauthError` when it is one of `oauthErrorCodes`; `error_description` is dropped (a server may
 * echo what it received or issued). An error status without such a body is `UpstreamFailure`.
 *
 * Retries: a registration that reached the server may have been applied (a client registered
 * whose answer was lost), so nothing is retryable but a request whose connection never opened.
 *
 * The issued secret is `Redacted` from the moment it is decoded and never reaches a public
 * field, a message, JSON or an error's cause: decode problems name the field and the kind of
 * problem only, parser messages and the HTTP client's errors are not kept.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import {
  AuthorizationFailed,
  DeadlineExceeded,
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
import { isSecure, parseHttpUrl } from "./discoveryUrls.js"
import { readJsonAnswer } from "./jsonAnswer.js"
import {
  decodeRegistrationResponse,
  decodeTokenErrorResponse,
  type DocumentProblem,
  knownErrorCode,
  type RegistrationResponse
} from "./metadata.js"
import type { TokenEndpointAuthMethod } from "./token.js"

/** The client authentication methods a client registers with (`private_key_jwt` needs a key registered otherwise). */
export type RegistrationMethod = Exclude<TokenEndpointAuthMethod, "private_key_jwt">

/** The grants a client registers for. */
export type RegistrationGrant = "authorization_code" | "refresh_token" | "client_credentials"

export interface RegistrationRequest {
  /** The `registration_endpoint` of the Authorization Server Metadata: `https`, or `http` on loopback. */
  readonly registrationEndpoint: string | URL
  /** Exact redirect URIs; empty for a client of the client credentials grant only. */
  readonly redirectUris: ReadonlyArray<string>
  readonly clientName: string
  readonly grantTypes: ReadonlyArray<RegistrationGrant>
  /** What the client asks for; the server may assign another (the answer's method is used). */
  readonly tokenEndpointAuthMethod: RegistrationMethod
  /** The scopes the client may ask for (RFC 7591 §2), space-separated. */
  readonly scope?: string | undefined
  /**
   * OpenID Connect Dynamic Client Registration 1.0 §2 `application_type`: `native` for a client
   * whose redirect is on loopback or a custom scheme, `web` otherwise. Sent only when given.
   */
  readonly applicationType?: "native" | "web" | undefined
  /** The validated `authorization` budget: the exchange's timeout and byte ceiling. */
  readonly budget: Budget
  /** The stage of the operation that needed the registration (default `connect`), named in failures. */
  readonly stage?: Stage | undefined
}

/** The client, as the authorization server registered it: a `TokenClient` for `token.ts`. */
export interface RegisteredClient {
  readonly clientId: string
  /** Issued for `client_secret_basic` and `client_secret_post`; never with `none`. */
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  /** The method registered: the answer's, or the one requested when the answer has none. */
  readonly method: RegistrationMethod
  /** Epoch milliseconds at which the secret expires; absent when it does not (or there is none). */
  readonly clientSecretExpiresAt?: number | undefined
}

const needsSecret = (method: RegistrationMethod): boolean => method !== "none"

/** The registered client from a decoded answer, or why the answer cannot be used. */
const registeredClient = (
  answer: RegistrationResponse,
  requested: RegistrationMethod
): Either.Either<RegisteredClient, DocumentProblem> => {
  const method = answer.token_endpoint_auth_method ?? requested
  if (!needsSecret(method)) return Either.right({ clientId: answer.client_id, method })
  if (answer.client_secret === undefined) {
    return Either.left({
      _tag: "DocumentProblem",
      document: "registration-response",
      problem: "missing-field",
      field: "client_secret"
    })
  }
  const expiresAt = answer.client_secret_expires_at
  return Either.right({
    clientId: answer.client_id,
    clientSecret: answer.client_secret,
    method,
    // 0: the secret does not expire (RFC 7591 §3.2.1).
    clientSecretExpiresAt: expiresAt === undefined || expiresAt === 0 ? undefined : expiresAt * 1000
  })
}

const post = (
  http: Client,
  exchange: Exchange,
  endpoint: URL,
  body: string,
  requested: RegistrationMethod
): Effect.Effect<RegisteredClient, McpConnectionError> => {
  const base = Failures.fields(exchange)
  const violation = (reason: Reason, details: { observedBytes?: number; status?: number } = {}, cause?: unknown) =>
    new ProtocolViolation({ ...base, reason, ...details, outcome: "not-sent", retryable: false }, cause)

  const onRequestError = (error: HttpClientError.HttpClientError) => {
    // The HTTP client's error holds the request: it is not kept.
    const reason = transportError(exchange, "sending")(error).reason ?? "connection-failed"
    return new TransportFailure({ ...base, reason, outcome: "not-sent", retryable: reason === "connection-failed" })
  }

  const answer = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<RegisteredClient, McpConnectionError> => {
    const status = response.status
    if (status >= 300 && status < 400) return Effect.fail(violation("redirect-refused", { status }))
    const isJson = contentTypeOf(response) === "application/json"
    if (status === 200 || status === 201) {
      if (!isJson) return Effect.fail(violation("unexpected-content-type", { status }))
      return Effect.flatMap(readJsonAnswer(response, exchange, false), ({ json, observedBytes }) => {
        // A DocumentProblem names the field and the problem, never a value.
        const registered = Either.flatMap(decodeRegistrationResponse(json), (decoded) => registeredClient(decoded, requested))
        return Either.isLeft(registered)
          ? Effect.fail(violation("invalid-registration-response", { observedBytes, status }, registered.left))
          : Effect.succeed(registered.right)
      })
    }
    // Another 2xx: not an answer RFC 7591 gives (and the client may or may not be registered).
    if (status >= 200 && status < 300) return Effect.fail(violation("invalid-registration-response", { status }))
    const upstream = (observedBytes?: number) => new UpstreamFailure({ ...base, status, observedBytes, outcome: "not-sent", retryable: false })
    if (!isJson) return Effect.fail(upstream())
    return Effect.flatMap(readJsonAnswer(response, exchange, false), ({ json, observedBytes }): Effect.Effect<never, McpConnectionError> => {
      // RFC 7591 §3.2.2 has the shape of RFC 6749 §5.2: `error`, `error_description`.
      const decoded = decodeTokenErrorResponse(json)
      if (Either.isLeft(decoded)) return Effect.fail(upstream(observedBytes))
      // Only a known code is kept; error_description may echo what the server received or issued.
      return Effect.fail(
        new AuthorizationFailed({
          ...base,
          status,
          reason: "registration-refused",
          oauthError: knownErrorCode(decoded.right.error),
          observedBytes,
          outcome: "not-sent",
          retryable: false
        })
      )
    })
  }

  const request = HttpClientRequest.post(endpoint, { headers: { accept: "application/json" } }).pipe(
    HttpClientRequest.bodyText(body, "application/json")
  )

  return withDeadline(
    http.execute(request, onRequestError, answer),
    exchange.budget.timeoutMs,
    // The registration may have been applied: not retryable.
    () => new DeadlineExceeded({ ...base, outcome: "not-sent", retryable: false })
  )
}

/** Registers a client at an authorization server's registration endpoint (RFC 7591 §3). */
export const registerClient = (
  request: RegistrationRequest
): Effect.Effect<RegisteredClient, McpConnectionError, HttpClient.HttpClient> =>
  Effect.suspend(() => {
    const exchange: Exchange = {
      stage: request.stage ?? "connect",
      phase: "authorization",
      budget: request.budget,
      authorizationStep: "registration"
    }
    const endpoint = parseHttpUrl(String(request.registrationEndpoint))
    if (endpoint === undefined || endpoint.hash !== "" || !isSecure(endpoint)) {
      return Effect.fail(
        new ProtocolViolation({
          ...Failures.fields(exchange),
          reason: endpoint === undefined || endpoint.hash !== "" ? "invalid-url" : "insecure-url",
          outcome: "not-sent",
          retryable: false
        })
      )
    }
    const metadata: Record<string, unknown> = {
      redirect_uris: [...request.redirectUris],
      client_name: request.clientName,
      grant_types: [...request.grantTypes],
      ...(request.grantTypes.includes("authorization_code") ? { response_types: ["code"] } : {}),
      token_endpoint_auth_method: request.tokenEndpointAuthMethod,
      ...(request.scope === undefined ? {} : { scope: request.scope }),
      ...(request.applicationType === undefined ? {} : { application_type: request.applicationType })
    }
    return Effect.flatMap(
      makeClient({}),
      (http) => post(http, exchange, endpoint, JSON.stringify(metadata), request.tokenEndpointAuthMethod)
    )
  })
