/**
 * HTTP plumbing shared by the Streamable HTTP and legacy HTTP+SSE transports: a scoped client
 * that never follows redirects, content types, refused statuses, and best-effort background
 * messages bounded in time.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { McpConnectionError, Outcome } from "../McpConnectionError.js"
import type { Exchange } from "./transport/transport.js"
import { type BodyReadFailed, readBody, releaseBody } from "./bodyReader.js"
import * as Failures from "./failures.js"
import { parseMessage, refusal } from "./messages.js"
import { proxyRefusalOf, SetupFailed } from "./proxyErrors.js"

/** Error bodies are read only to find a JSON-RPC error in them; they never need to be big. */
const errorBodyMaxBytes = 64 * 1024

/**
 * The configured client: user headers on every request, redirects refused, and every response
 * released when its handler ends (`execute`) or when a given scope closes (`open`).
 *
 * Why not `HttpClient.withScope` and a scope per request: measured under load, that costs about
 * 100-170 µs of CPU per request (a scope opened and closed, and an `AbortController` aborted at
 * its close, which builds a `DOMException`), a tenth of a legacy tool call (docs/BENCHMARKS.md,
 * round 4). Releasing the body
 * when its handler ends gives the same guarantee with one finalizer: the body is read (and
 * released by the reader) or released unread, however the handler ends, interruption included.
 */
export interface Client {
  /**
   * Sends `request` and runs `use` on its response; `onError` maps a request that got no
   * response. The response's body is released when `use` ends, read or not; the request is cut
   * if interrupted before its response.
   */
  readonly execute: <A, E, R, E2>(
    request: HttpClientRequest.HttpClientRequest,
    onError: (error: HttpClientError.HttpClientError) => E2,
    use: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | E2, R>
  /** Sends `request`; its response's body is released when `scope` closes (a long-lived stream). */
  readonly open: <E2>(
    request: HttpClientRequest.HttpClientRequest,
    onError: (error: HttpClientError.HttpClientError) => E2,
    scope: Scope.Scope
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, E2>
}

/**
 * The bearer credential of the MCP server, written by the connection's authorization
 * (`oauth/authorizer.ts`) and read at each request: it is added only to requests for `origin`,
 * the origin it was issued for.
 */
export interface Credential {
  readonly origin: string
  current: string | undefined
}

export const makeClient = (headers: Readonly<Record<string, string>>, credential?: Credential) =>
  Effect.map(HttpClient.HttpClient, (client): Client => {
    // The HTTP client's own spans carry the full URL (query tokens included) and headers: our
    // spans (mcp.*) are the observation channel, without them.
    const untraced = HttpClient.withTracerDisabledWhen(client, () => true)
    const withHeaders = Object.keys(headers).length === 0
      ? untraced
      : HttpClient.mapRequestInput(untraced, HttpClientRequest.setHeaders(headers))
    // A request's URL is a serialized absolute URL: its origin is what comes before the path's "/".
    const originPrefix = credential === undefined ? "" : `${credential.origin}/`
    const configured = credential === undefined ? withHeaders : HttpClient.mapRequestInput(withHeaders, (request) => {
      const value = credential.current
      return value !== undefined && request.url.startsWith(originPrefix)
        ? HttpClientRequest.setHeader(request, "authorization", value)
        : request
    })
    const send = <E2>(
      request: HttpClientRequest.HttpClientRequest,
      onError: (error: HttpClientError.HttpClientError) => E2
    ) =>
      configured.execute(request).pipe(
        // Redirects are not followed: a redirect could carry credentials to another origin.
        Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
        Effect.mapError(onError)
      )
    const release = (response: HttpClientResponse.HttpClientResponse) => Effect.sync(() => releaseBody(response))
    return {
      execute: (request, onError, use) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(
            restore(send(request, onError)),
            (response) => Effect.ensuring(restore(use(response)), release(response))
          )
        ),
      open: (request, onError, scope) =>
        Effect.uninterruptibleMask((restore) => Effect.tap(restore(send(request, onError)), (response) => Scope.addFinalizer(scope, release(response))))
    }
  })

/** A handler for responses whose content does not matter (acknowledgements, best-effort messages). */
export const ignoreResponse = (_: HttpClientResponse.HttpClientResponse) => Effect.void

/**
 * A POST of one JSON-RPC message to `target`, a `HttpClientRequest.post(url)` built once per
 * URL: building it parses and copies the URL, a few percent of a call's CPU when done per call.
 */
export const postJson = (
  target: HttpClientRequest.HttpClientRequest,
  body: unknown,
  headers?: Readonly<Record<string, string>>
) =>
  HttpClientRequest.bodyText(
    headers === undefined ? target : HttpClientRequest.setHeaders(target, headers),
    JSON.stringify(body),
    "application/json"
  )

export const contentTypeOf = (response: HttpClientResponse.HttpClientResponse): string =>
  (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

/**
 * Error codes of a connection that was never established (Node, undici, Bun): nothing of the
 * request left the process. Any other transport error may come after the request was written.
 */
const NEVER_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "ConnectionRefused",
  "FailedToOpenSocket"
])

/**
 * Whether an error (searched through its causes, and every error of an AggregateError) says the
 * connection never opened, or broke while it was being set up (`SetupFailed`: a proxy's tunnel).
 */
const neverConnected = (error: unknown, depth = 0): boolean => {
  if (depth > 8 || error === null || typeof error !== "object") return false
  if (error instanceof SetupFailed) return true
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown }
  if (typeof code === "string" && NEVER_CONNECTED.has(code)) return true
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => neverConnected(e, depth + 1))) return true
  return neverConnected(cause, depth + 1)
}

/**
 * A request that never got an answer (docs/DESIGN.md, "No replay, outcomes"):
 * - "readiness": a GET that carries no request: nothing can have been applied (`not-sent`);
 * - "sending": `not-sent` only when the connection never opened, or broke while it was being
 *   set up (a proxy's tunnel: `proxyErrors.ts`, `SetupFailed`); a reset or a close after it
 *   opened may come after the server received the whole request (`unknown`);
 * - "reading": the answer was being read: `unknown`.
 */
export const transportError = (exchange: Exchange, when: "readiness" | "sending" | "reading") => (error: HttpClientError.HttpClientError) => {
  // A proxy that refused the request, or a request kept from a proxy: it never reached the server
  // (docs/DESIGN.md, "Proxies").
  const proxy = proxyRefusalOf(error.cause)
  if (proxy !== undefined) return Failures.transport(exchange, proxy.reason, "not-sent", { status: proxy.status }, error)
  const outcome: Outcome = when === "readiness" || (when === "sending" && neverConnected(error.cause))
    ? "not-sent"
    : "unknown"
  return Failures.transport(exchange, outcome === "unknown" ? "connection-closed" : "connection-failed", outcome, {}, error)
}

/** An answer's body broke off while being read: the request may have been applied. */
export const bodyReadFailed = (exchange: Exchange) => (error: BodyReadFailed) =>
  Effect.fail(Failures.transport(exchange, "connection-closed", "unknown", {}, error.cause))

/**
 * The challenge of a 401 or 403 that refused a request before it was processed: the cause of
 * its `Unauthorized` or `Forbidden`, read by the connection's authorization (in process only).
 */
export interface AuthChallenge {
  readonly _tag: "AuthChallenge"
  /** The `WWW-Authenticate` field (several field lines arrive joined by ", "). */
  readonly wwwAuthenticate: string | undefined
}

/** The challenge behind a 401 or 403 that refused the request itself; `undefined` for any other failure. */
export const authChallengeOf = (error: McpConnectionError): AuthChallenge | undefined => {
  if (error._tag !== "Unauthorized" && error._tag !== "Forbidden") return undefined
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && (cause as AuthChallenge)._tag === "AuthChallenge"
    ? cause as AuthChallenge
    : undefined
}

/**
 * A refused status. The body is read (bounded) only to find a JSON-RPC error in it; a 404 for a
 * known session is `SessionExpired` (the live session reads it as the session gone). `answered`: the
 * request was already answered (a resumption): whatever this status, its outcome is unknown
 * and a 401 or 403 carries no challenge to act on.
 */
export const statusFailure = (
  exchange: Exchange,
  response: HttpClientResponse.HttpClientResponse,
  options: {
    readonly sentSession: boolean
    readonly secrets: ReadonlyArray<string>
    readonly answered?: boolean | undefined
  }
): Effect.Effect<never, McpConnectionError> =>
  Effect.gen(function*() {
    const status = response.status
    if (options.answered === true) return yield* Effect.fail(Failures.httpStatus(exchange, status, undefined, undefined, "unknown"))
    // Only a proxy answers 407: it did not forward the request (docs/DESIGN.md, "Proxies").
    if (status === 407) return yield* Effect.fail(Failures.transport(exchange, "proxy-auth-required", "not-sent", { status }))
    if (status === 404 && options.sentSession) return yield* Effect.fail(Failures.sessionExpired(exchange, "not-applied", status))
    if (status === 401 || status === 403) {
      const challenge: AuthChallenge = { _tag: "AuthChallenge", wwwAuthenticate: response.headers["www-authenticate"] }
      return yield* Effect.fail(Failures.httpStatus(exchange, status, undefined, challenge))
    }
    if (status >= 500) return yield* Effect.fail(Failures.httpStatus(exchange, status))
    const limit = Math.min(errorBodyMaxBytes, exchange.budget.maxBytes)
    const body = yield* readBody(response, limit).pipe(Effect.option)
    if (Option.isSome(body) && contentTypeOf(response) === "application/json") {
      const message = yield* parseMessage(exchange, body.value, { status }).pipe(Effect.option)
      if (Option.isSome(message) && message.value._tag === "Failure") {
        return yield* Effect.fail(
          refusal(exchange, message.value.message.error, options.secrets, { status, observedBytes: body.value.length })
        )
      }
    }
    return yield* Effect.fail(Failures.httpStatus(exchange, status))
  })
