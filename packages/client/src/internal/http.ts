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
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { McpConnectionError, Outcome } from "../McpConnectionError.js"
import type { Exchange } from "../Transport.js"
import { type BodyReadFailed, readBody } from "./bodyReader.js"
import * as Failures from "./failures.js"
import { parseMessage, refusal } from "./messages.js"

/** Error bodies are read only to find a JSON-RPC error in them; they never need to be big. */
const errorBodyMaxBytes = 64 * 1024

/** The configured client: user headers on every request, each request tied to a scope. */
export const makeClient = (headers: Readonly<Record<string, string>>) =>
  Effect.map(HttpClient.HttpClient, (client) => {
    const scopedClient = client.pipe(
      // The HTTP client's own spans carry the full URL (query tokens included) and headers:
      // our spans (mcp.*) are the observation channel, without them.
      HttpClient.withTracerDisabledWhen(() => true),
      HttpClient.withScope,
      HttpClient.mapRequestInput(HttpClientRequest.setHeaders(headers))
    )
    // Redirects are not followed: a redirect could carry credentials to another origin.
    return (request: HttpClientRequest.HttpClientRequest) =>
      scopedClient.execute(request).pipe(Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }))
  })

export type Execute = (
  request: HttpClientRequest.HttpClientRequest
) => Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, Scope.Scope>

/**
 * A POST of one JSON-RPC message to `target`, a `HttpClientRequest.post(url)` built once per
 * URL: building it parses and copies the URL, a few percent of a call's CPU when done per call.
 */
export const postJson = (
  target: HttpClientRequest.HttpClientRequest,
  body: unknown,
  headers: Readonly<Record<string, string>>
) =>
  target.pipe(
    HttpClientRequest.setHeaders(headers),
    HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
  )

export const contentTypeOf = (response: HttpClientResponse.HttpClientResponse): string =>
  (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

/** A request that never got an answer: refused before sending, or lost after. */
export const transportError = (exchange: Exchange, outcome: Extract<Outcome, "not-sent" | "unknown">) =>
(error: HttpClientError.HttpClientError) =>
  Failures.transport(exchange, outcome === "unknown" ? "connection-closed" : "connection-failed", outcome, {}, error)

/** An answer's body broke off while being read: the request may have been applied. */
export const bodyReadFailed = (exchange: Exchange) => (error: BodyReadFailed) =>
  Effect.fail(Failures.transport(exchange, "connection-closed", "unknown", {}, error.cause))

/**
 * A refused status. The body is read (bounded) only to find a JSON-RPC error in it; a 404 for a
 * known session is `SessionExpired` (`onExpired` marks the session gone).
 */
export const statusFailure = (
  exchange: Exchange,
  response: HttpClientResponse.HttpClientResponse,
  options: { readonly sentSession: boolean; readonly secrets: ReadonlyArray<string>; readonly onExpired: () => void }
): Effect.Effect<never, McpConnectionError> =>
  Effect.gen(function*() {
    const status = response.status
    if (status === 404 && options.sentSession) {
      options.onExpired()
      return yield* Effect.fail(Failures.sessionExpired(exchange, "not-applied", status))
    }
    if (status === 401 || status === 403 || status >= 500) {
      return yield* Effect.fail(Failures.httpStatus(exchange, status))
    }
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

/**
 * Runs best-effort messages (replies, cancellation notices) in the background of a transport,
 * each bounded by `releaseTimeoutMs`. By definition nobody waits for them: a failure is dropped.
 */
export const makeBackground = (releaseTimeoutMs: number) =>
  Effect.map(FiberSet.make<unknown, never>(), (set) => ({
    run: (effect: Effect.Effect<unknown, unknown, Scope.Scope>) =>
      FiberSet.run(set)(
        // Started from interruption handlers, which are uninterruptible, the fiber would inherit
        // that and its timeout could never cut the message short: make it interruptible.
        Effect.scoped(effect).pipe(
          Effect.interruptible,
          Effect.timeout(Duration.millis(releaseTimeoutMs)),
          Effect.ignore,
          Effect.interruptible
        )
      ).pipe(Effect.asVoid),
    size: FiberSet.size(set)
  }))
