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
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Scope from "effect/Scope"
import type { McpConnectionError } from "./McpConnectionError.js"
import type * as McpSchema from "./McpSchema.js"
import { readBody, readFrames } from "./internal/bodyReader.js"
import * as Failures from "./internal/failures.js"
import type { FrameTooLarge } from "./internal/frameErrors.js"
import * as Http from "./internal/http.js"
import * as Messages from "./internal/messages.js"
import { type SseEvent, sseParser } from "./internal/sseDecoder.js"
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

/** Delay before resuming when the server gave no `retry` (the SDKs use 1 s as well). */
const defaultRetryMs = 1_000

/**
 * Opens a Streamable HTTP transport. Nothing is sent until the first request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Transport, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const client = yield* Http.makeClient(options.headers)
    const background = yield* Http.makeBackground(options.releaseTimeoutMs)
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

    const postTarget = HttpClientRequest.post(options.url)
    const post = (body: unknown) =>
      Http.postJson(postTarget, body, { accept: "application/json, text/event-stream", ...sessionHeaders() })
    /** A best-effort message: nobody waits for it, its answer does not matter. */
    const postNotice = (message: unknown) => client.execute(post(message), identity, Http.ignoreResponse)

    const statusFailure = (exchange: Exchange, response: HttpClientResponse.HttpClientResponse, sentSession: boolean) =>
      Http.statusFailure(exchange, response, {
        sentSession,
        secrets: options.secrets,
        onExpired: () => {
          expired = true
        }
      })

    /** Messages that are not the awaited response: answer requests, ignore the rest. */
    const handleOther = (message: McpSchema.IncomingMessage): Effect.Effect<void> => {
      const reply = Messages.replyTo(message)
      return reply === undefined ? Effect.void : background.run(postNotice(reply))
    }

    const readJson = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      response: HttpClientResponse.HttpClientResponse
    ) =>
      Effect.gen(function*() {
        const status = response.status
        const bytes = yield* readBody(response, exchange.budget.maxBytes).pipe(
          Effect.catchTags({
            FrameTooLarge: (e: FrameTooLarge) => Effect.fail(Failures.ceiling(exchange, e.observedBytes, status)),
            ResponseError: Http.transportError(exchange, "unknown"),
            BodyReadFailed: Http.bodyReadFailed(exchange)
          })
        )
        const message = yield* Messages.parseMessage(exchange, bytes, { status })
        const answer = yield* Messages.answerOf(exchange, id, message, options.secrets, {
          status,
          observedBytes: bytes.length
        })
        if (answer !== undefined) return answer
        yield* handleOther(message)
        // A JSON body is the whole answer: without our id the response is missing, now.
        return yield* Effect.fail(Failures.protocol(exchange, "missing-response", { observedBytes: bytes.length, status }))
      })

    /**
     * Reads SSE events until the response to `id`, or `undefined` when the stream ended
     * without it (`counted` keeps the last event id and retry delay, for resumption).
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
          const details = { status, observedBytes: counted.bytes }
          const message = yield* Messages.parseText(exchange, event.data, details)
          const answer = yield* Messages.answerOf(exchange, id, message, options.secrets, details)
          if (answer !== undefined) return answer
          yield* handleOther(message)
          return undefined
        })
      }
      return readFrames(response, sseParser({ maxFrameBytes: () => exchange.budget.maxBytes }), onEvent).pipe(
        Effect.catchTags({
          FrameTooLarge: (e: FrameTooLarge) =>
            Effect.fail(Failures.ceiling(exchange, counted.bytes + e.observedBytes, status)),
          InvalidUtf8: (e) =>
            Effect.fail(
              Failures.protocol(exchange, "invalid-utf8", { observedBytes: counted.bytes + e.observedBytes, status })
            ),
          ResponseError: Http.transportError(exchange, "unknown"),
          BodyReadFailed: Http.bodyReadFailed(exchange)
        })
      )
    }

    /** Reads the answer of one POST; resumes an SSE stream that closed early (2025-11-25). */
    const readAnswer = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      response: HttpClientResponse.HttpClientResponse,
      sentSession: boolean
    ): Effect.Effect<Response, McpConnectionError> =>
      Effect.gen(function*() {
        if (response.status !== 200) {
          if (response.status === 202 || response.status === 204) {
            return yield* Effect.fail(Failures.protocol(exchange, "missing-response", { status: response.status }))
          }
          return yield* statusFailure(exchange, response, sentSession)
        }
        const contentType = Http.contentTypeOf(response)
        if (contentType === "application/json") return yield* readJson(exchange, id, response)
        if (contentType !== "text/event-stream") {
          return yield* Effect.fail(Failures.protocol(exchange, "unexpected-content-type", { status: response.status }))
        }
        const counted = { bytes: 0, lastEventId: undefined as string | undefined, retryMs: undefined as number | undefined }
        let answer = yield* readEvents(exchange, id, response, counted)
        for (let resumptions = 0; answer === undefined; resumptions++) {
          if (counted.lastEventId === undefined || resumptions >= maxResumptions) {
            return yield* Effect.fail(
              Failures.protocol(exchange, "missing-response", { observedBytes: counted.bytes, status: response.status })
            )
          }
          yield* Effect.sleep(Duration.millis(counted.retryMs ?? defaultRetryMs))
          answer = yield* resume(exchange, id, counted.lastEventId, counted)
        }
        return answer
      })

    /** GET with `Last-Event-ID`: continues the same response stream (not a replay). */
    const resume = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      lastEventId: string,
      counted: { bytes: number; lastEventId: string | undefined; retryMs: number | undefined }
    ) => {
      const sentSession = sessionId !== undefined
      const request = HttpClientRequest.get(options.url).pipe(
        HttpClientRequest.setHeaders({ accept: "text/event-stream", "last-event-id": lastEventId, ...sessionHeaders() })
      )
      return client.execute(request, Http.transportError(exchange, "unknown"), (response) => {
        if (response.status !== 200) return statusFailure(exchange, response, sentSession)
        if (Http.contentTypeOf(response) !== "text/event-stream") {
          return Effect.fail(Failures.protocol(exchange, "unexpected-content-type", { status: response.status }))
        }
        return readEvents(exchange, id, response, counted)
      })
    }

    const expiredFailure = (exchange: Exchange) => Effect.fail(Failures.sessionExpired(exchange, "not-sent"))

    const request: Transport["request"] = (method, params, exchange) =>
      Effect.gen(function*() {
        if (expired) return yield* expiredFailure(exchange)
        const id = nextId++
        inFlight.add(id)
        const sentSession = sessionId !== undefined
        return yield* client.execute(
          post(Messages.outgoing(method, params, id)),
          Http.transportError(exchange, "not-sent"),
          (response) => {
            if (method === "initialize" && response.status === 200) {
              const header = response.headers["mcp-session-id"]
              if (header !== undefined && header.length > 0) sessionId = header
            }
            return readAnswer(exchange, id, response, sentSession)
          }
        ).pipe(
          Effect.onInterrupt(() => (exchange.cancellable ? background.run(postNotice(Messages.cancelled(id))) : Effect.void)),
          Effect.ensuring(Effect.sync(() => inFlight.delete(id)))
        )
      })

    const notify: Transport["notify"] = (method, params, exchange) =>
      Effect.gen(function*() {
        if (expired) return yield* expiredFailure(exchange)
        const sentSession = sessionId !== undefined
        yield* client.execute(
          post(Messages.outgoing(method, params)),
          Http.transportError(exchange, "not-sent"),
          (response) =>
            response.status === 202 || response.status === 200 || response.status === 204
              ? Effect.void
              : statusFailure(exchange, response, sentSession)
        )
      })

    // Release: end the session on the server, bounded; a server may answer 405 (not allowed).
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        if (sessionId === undefined || expired) return Effect.void
        const request = HttpClientRequest.del(options.url).pipe(HttpClientRequest.setHeaders(sessionHeaders()))
        return client.execute(request, identity, Http.ignoreResponse).pipe(
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
      diagnostics: Effect.map(background.size, (size) => ({ pending: inFlight.size, background: size, droppedFrames: 0 }))
    } satisfies Transport
  })
