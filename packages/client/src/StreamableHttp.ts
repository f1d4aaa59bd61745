/**
 * The Streamable HTTP transport (revisions 2025-03-26, 2025-06-18, 2025-11-25).
 *
 * Each message is POSTed with `Accept: application/json, text/event-stream`; the answer is a
 * JSON body or an SSE stream carrying the response. `Mcp-Session-Id` is captured from the
 * `initialize` answer and echoed; `MCP-Protocol-Version` is sent once a revision is agreed.
 * Every body is read through a byte counter bounded by the exchange's ceiling; every request
 * runs in its own scope, so an interrupted or refused read aborts the HTTP request and the
 * server sees the connection closed. Closing the transport's scope DELETEs the session,
 * bounded by `releaseTimeoutMs`.
 *
 * @since 0.1.0
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
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type McpConnectionError, sanitizeRemoteMessage } from "./McpConnectionError.js"
import * as McpSchema from "./McpSchema.js"
import * as Failures from "./internal/failures.js"
import { readBounded, decodeUtf8 } from "./internal/byteCount.js"
import { FrameTooLarge } from "./internal/frameErrors.js"
import { decodeSse, type SseEvent } from "./internal/sseDecoder.js"
import type { Exchange, Response, Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The MCP endpoint, without userinfo (see `McpClient` for how userinfo becomes a header). */
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  /** Values redacted from remote messages. */
  readonly secrets: ReadonlyArray<string>
  /** Bound of each release step (DELETE, cancellation notice, reply to a server request). */
  readonly releaseTimeoutMs: number
}

/**
 * Most reconnections of one request's resumable SSE stream. The request's deadline bounds them
 * too; this stops a server that closes at once with `retry: 0` from making us spin.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxResumptions = 16

/** Error bodies are read only to find a JSON-RPC error in them; they never need to be big. */
const errorBodyMaxBytes = 64 * 1024

/** Delay before resuming when the server gave no `retry` (the SDKs use 1 s as well). */
const defaultRetryMs = 1_000

type Message = McpSchema.IncomingMessage

/**
 * Opens a Streamable HTTP transport. Nothing is sent until the first request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Transport, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    // Redirects are not followed: a redirect could carry credentials to another origin.
    const httpClient = (yield* HttpClient.HttpClient).pipe(
      HttpClient.withScope,
      HttpClient.mapRequestInput(HttpClientRequest.setHeaders(options.headers))
    )
    const background = yield* FiberSet.make<unknown, never>()
    let nextId = 0
    let sessionId: string | undefined
    let protocolVersion: string | undefined
    let expired = false
    const inFlight = new Set<McpSchema.RequestId>()

    const sessionHeaders = (): Record<string, string> => {
      const headers: Record<string, string> = {}
      if (sessionId !== undefined) headers["mcp-session-id"] = sessionId
      if (protocolVersion !== undefined) headers["mcp-protocol-version"] = protocolVersion
      return headers
    }

    const execute = (request: HttpClientRequest.HttpClientRequest) =>
      httpClient.execute(request).pipe(
        Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" })
      )

    const post = (body: unknown) =>
      execute(
        HttpClientRequest.post(options.url).pipe(
          HttpClientRequest.setHeaders({ accept: "application/json, text/event-stream", ...sessionHeaders() }),
          HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
        )
      )

    /** Runs a best-effort background message (reply, cancellation notice) in the transport's scope. */
    const inBackground = (effect: Effect.Effect<unknown, unknown, Scope.Scope>) =>
      FiberSet.run(background)(
        Effect.scoped(effect).pipe(
          Effect.timeout(Duration.millis(options.releaseTimeoutMs)),
          // Best effort by definition: the exchange it belongs to has already ended.
          Effect.ignore
        )
      ).pipe(Effect.asVoid)

    /** Messages that are not the awaited response: answer requests, ignore the rest. */
    const handleOther = (message: Message): Effect.Effect<void> => {
      if (message._tag !== "Request") return Effect.void
      const { id, method } = message.message
      const reply = method === "ping"
        ? { jsonrpc: "2.0", id, result: {} }
        : { jsonrpc: "2.0", id, error: { code: McpSchema.ErrorCode.MethodNotFound, message: "Method not found" } }
      return inBackground(post(reply))
    }

    const transportError = (exchange: Exchange, outcome: "not-sent" | "unknown") => (error: HttpClientError.HttpClientError) =>
      Failures.transport(exchange, outcome === "unknown" ? "connection-closed" : "connection-failed", outcome, {}, error)

    const parseMessage = (exchange: Exchange, bytes: Uint8Array, status: number) =>
      Effect.gen(function*() {
        const text = decodeUtf8(bytes)
        if (text._tag === "Left") {
          return yield* Effect.fail(Failures.protocol(exchange, "invalid-utf8", { observedBytes: bytes.length, status }))
        }
        let json: unknown
        try {
          json = JSON.parse(text.right)
        } catch (cause) {
          return yield* Effect.fail(
            Failures.protocol(exchange, "invalid-json", { observedBytes: bytes.length, status }, cause)
          )
        }
        const message = McpSchema.classify(json)
        if (message === undefined) {
          return yield* Effect.fail(Failures.protocol(exchange, "invalid-message", { observedBytes: bytes.length, status }))
        }
        return message
      })

    /** The awaited response, a refusal, or `undefined` when the message is something else. */
    const answerOf = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      message: Message,
      details: { readonly status: number; readonly observedBytes: number }
    ): Effect.Effect<Response | undefined, McpConnectionError> => {
      if (message._tag === "Success" && message.message.id === id) {
        return Effect.succeed({ result: message.message.result, bytes: details.observedBytes })
      }
      if (message._tag === "Failure" && message.message.id === id) {
        const error = message.message.error
        return Effect.fail(
          Failures.remoteRefusal(exchange, error.code, sanitizeRemoteMessage(error.message, options.secrets), details)
        )
      }
      return Effect.succeed(undefined)
    }

    const contentTypeOf = (response: HttpClientResponse.HttpClientResponse) =>
      (response.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

    /** A refused status: the body is read (bounded) only to find a JSON-RPC error in it. */
    const statusFailure = (exchange: Exchange, response: HttpClientResponse.HttpClientResponse, sentSession: boolean) =>
      Effect.gen(function*() {
        const status = response.status
        if (status === 404 && sentSession) {
          expired = true
          return yield* Effect.fail(Failures.sessionExpired(exchange, "not-applied", status))
        }
        if (status === 401 || status === 403 || status >= 500) {
          return yield* Effect.fail(Failures.httpStatus(exchange, status))
        }
        const limit = Math.min(errorBodyMaxBytes, exchange.budget.maxBytes)
        const body = yield* readBounded(response.stream, limit).pipe(Effect.option)
        if (Option.isSome(body) && contentTypeOf(response) === "application/json") {
          const message = yield* parseMessage(exchange, body.value, status).pipe(Effect.option)
          if (Option.isSome(message) && message.value._tag === "Failure") {
            const error = message.value.message.error
            return yield* Effect.fail(
              Failures.remoteRefusal(exchange, error.code, sanitizeRemoteMessage(error.message, options.secrets), {
                status,
                observedBytes: body.value.length
              })
            )
          }
        }
        return yield* Effect.fail(Failures.httpStatus(exchange, status))
      })

    const readJson = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      response: HttpClientResponse.HttpClientResponse
    ) =>
      Effect.gen(function*() {
        const status = response.status
        const bytes = yield* readBounded(response.stream, exchange.budget.maxBytes).pipe(
          Effect.catchTags({
            FrameTooLarge: (e: FrameTooLarge) => Effect.fail(Failures.ceiling(exchange, e.observedBytes, status)),
            ResponseError: transportError(exchange, "unknown")
          })
        )
        const message = yield* parseMessage(exchange, bytes, status)
        const answer = yield* answerOf(exchange, id, message, { status, observedBytes: bytes.length })
        if (answer !== undefined) return answer
        yield* handleOther(message)
        // A JSON body is the whole answer: without our id the response is missing, now.
        return yield* Effect.fail(Failures.protocol(exchange, "missing-response", { observedBytes: bytes.length, status }))
      })

    /**
     * Reads SSE events until the response to `id`. Returns the response, or where the stream
     * ended without it, the id of the last event and the server's retry delay (for resumption).
     */
    const readEvents = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      response: HttpClientResponse.HttpClientResponse,
      counted: { bytes: number; lastEventId: string | undefined; retryMs: number | undefined }
    ): Effect.Effect<Response | undefined, McpConnectionError> => {
      const status = response.status
      const onEvent = (event: SseEvent): Effect.Effect<Response | undefined, McpConnectionError> => {
        counted.bytes += event.bytes
        if (event.id !== undefined) counted.lastEventId = event.id
        if (event.retry !== undefined) counted.retryMs = event.retry
        // Priming events and events of other types carry no JSON-RPC message.
        if (event.event !== "message" || event.data === "") return Effect.succeed(undefined)
        return Effect.gen(function*() {
          const message = yield* parseMessage(exchange, new TextEncoder().encode(event.data), status)
          const answer = yield* answerOf(exchange, id, message, { status, observedBytes: counted.bytes })
          if (answer !== undefined) return { ...answer, bytes: counted.bytes }
          yield* handleOther(message)
          return undefined
        })
      }
      return decodeSse(response.stream, { maxFrameBytes: () => exchange.budget.maxBytes }).pipe(
        Stream.mapEffect(onEvent),
        Stream.filter((answer): answer is Response => answer !== undefined),
        Stream.runHead,
        Effect.map(Option.getOrUndefined),
        Effect.catchTags({
          FrameTooLarge: (e: FrameTooLarge) =>
            Effect.fail(Failures.ceiling(exchange, counted.bytes + e.observedBytes, status)),
          InvalidUtf8: (e) => Effect.fail(Failures.protocol(exchange, "invalid-utf8", { observedBytes: counted.bytes + e.observedBytes, status })),
          ResponseError: transportError(exchange, "unknown")
        })
      )
    }

    /** Reads the answer of one POST; resumes an SSE stream that closed early (2025-11-25). */
    const readAnswer = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      response: HttpClientResponse.HttpClientResponse,
      sentSession: boolean
    ): Effect.Effect<Response, McpConnectionError, Scope.Scope> =>
      Effect.gen(function*() {
        if (response.status !== 200) {
          if (response.status === 202 || response.status === 204) {
            return yield* Effect.fail(Failures.protocol(exchange, "missing-response", { status: response.status }))
          }
          return yield* statusFailure(exchange, response, sentSession)
        }
        const contentType = contentTypeOf(response)
        if (contentType === "application/json") return yield* readJson(exchange, id, response)
        if (contentType !== "text/event-stream") {
          return yield* Effect.fail(Failures.protocol(exchange, "unexpected-content-type", { status: response.status }))
        }
        const counted = { bytes: 0, lastEventId: undefined as string | undefined, retryMs: undefined as number | undefined }
        let current = response
        for (let resumptions = 0;; resumptions++) {
          const answer = yield* readEvents(exchange, id, current, counted)
          if (answer !== undefined) return answer
          if (counted.lastEventId === undefined || resumptions >= maxResumptions) {
            return yield* Effect.fail(
              Failures.protocol(exchange, "missing-response", { observedBytes: counted.bytes, status: current.status })
            )
          }
          yield* Effect.sleep(Duration.millis(counted.retryMs ?? defaultRetryMs))
          current = yield* resume(exchange, counted.lastEventId)
        }
      })

    /** GET with `Last-Event-ID`: continues the same response stream (not a replay). */
    const resume = (exchange: Exchange, lastEventId: string) =>
      Effect.gen(function*() {
        const sentSession = sessionId !== undefined
        const response = yield* execute(
          HttpClientRequest.get(options.url).pipe(
            HttpClientRequest.setHeaders({ accept: "text/event-stream", "last-event-id": lastEventId, ...sessionHeaders() })
          )
        ).pipe(Effect.mapError(transportError(exchange, "unknown")))
        if (response.status !== 200) return yield* statusFailure(exchange, response, sentSession)
        if (contentTypeOf(response) !== "text/event-stream") {
          return yield* Effect.fail(Failures.protocol(exchange, "unexpected-content-type", { status: response.status }))
        }
        return response
      })

    const expiredFailure = (exchange: Exchange) => Effect.fail(Failures.sessionExpired(exchange, "not-sent"))

    const request: Transport["request"] = (method, params, exchange) =>
      Effect.gen(function*() {
        if (expired) return yield* expiredFailure(exchange)
        const id = nextId++
        inFlight.add(id)
        const message = params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }
        const sentSession = sessionId !== undefined
        return yield* Effect.scoped(
          Effect.gen(function*() {
            const response = yield* post(message).pipe(Effect.mapError(transportError(exchange, "not-sent")))
            if (method === "initialize" && response.status === 200) {
              const header = response.headers["mcp-session-id"]
              if (header !== undefined && header.length > 0) sessionId = header
            }
            return yield* readAnswer(exchange, id, response, sentSession)
          })
        ).pipe(
          Effect.onInterrupt(() =>
            exchange.cancellable
              ? inBackground(
                post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "interrupted" } })
              )
              : Effect.void
          ),
          Effect.ensuring(Effect.sync(() => inFlight.delete(id)))
        )
      })

    const notify: Transport["notify"] = (method, params, exchange) =>
      Effect.gen(function*() {
        if (expired) return yield* expiredFailure(exchange)
        const sentSession = sessionId !== undefined
        const message = params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }
        yield* Effect.scoped(
          Effect.gen(function*() {
            const response = yield* post(message).pipe(Effect.mapError(transportError(exchange, "not-sent")))
            if (response.status === 202 || response.status === 200 || response.status === 204) return
            return yield* statusFailure(exchange, response, sentSession)
          })
        )
      })

    // Release: end the session on the server, bounded; a server may answer 405 (not allowed).
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        if (sessionId === undefined || expired) return Effect.void
        return Effect.scoped(
          execute(HttpClientRequest.del(options.url).pipe(HttpClientRequest.setHeaders(sessionHeaders())))
        ).pipe(
          Effect.interruptible,
          Effect.timeout(Duration.millis(options.releaseTimeoutMs)),
          Effect.ignore
        )
      })
    )

    return {
      kind: "streamable-http",
      request,
      notify,
      setProtocolVersion: (revision) =>
        Effect.sync(() => {
          protocolVersion = revision
        }),
      diagnostics: Effect.sync(() => ({ pending: inFlight.size, background: 0 })).pipe(
        Effect.zipWith(FiberSet.size(background), (d, background) => ({ ...d, background }))
      )
    } satisfies Transport
  })
