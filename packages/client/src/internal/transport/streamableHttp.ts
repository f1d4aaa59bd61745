/**
 * The Streamable HTTP transport: each message is POSTed with
 * `Accept: application/json, text/event-stream`; the answer is a JSON body or an SSE stream
 * carrying the response (with, before it, notifications and server requests that relate to it).
 *
 * It moves messages and nothing more: the era that builds each message decides its headers
 * (the session's and the message's own), whether an interrupted request is announced with a
 * notice, and whether an SSE answer that ends early may be resumed (`GET` + `Last-Event-ID`).
 * Sessions, their expiry and their end (`endSession`: `DELETE` with the session headers) are
 * the era's (see docs/DESIGN.md). Every body is read through a byte counter bounded by the
 * exchange's ceiling, and the body is released when its handler ends, so an interrupted or
 * refused read aborts the HTTP request and the server sees the connection closed.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import { identity } from "effect/Function"
import * as Scope from "effect/Scope"
import type { McpConnectionError } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import { readBody, readFrames, releaseBody } from "../bodyReader.js"
import { makeBackground } from "../background.js"
import * as Failures from "../failures.js"
import { backoffMs } from "../backoff.js"
import type { FrameTooLarge } from "../frameErrors.js"
import * as Http from "../http.js"
import * as Messages from "../messages.js"
import { type SseEvent, sseParser } from "../sseDecoder.js"
import type { Exchange, Inbound, Listening, Outgoing, Request, Response, SessionHeaders, Transport } from "./transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The MCP endpoint, without userinfo (see `McpClient` for how userinfo becomes a header). */
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  /** The bearer credential of the server's origin, when the connection is authorized (OAuth). */
  readonly credential?: Http.Credential | undefined
  /** Values redacted from remote messages (the connection adds tokens as it obtains them). */
  readonly secrets: ReadonlyArray<string>
  /** Bound of each release step (DELETE, cancellation notice, reply to a server request). */
  readonly releaseTimeoutMs: number
  /** Answers the server's requests. */
  readonly inbound: Inbound
  /** Headers of the session, sent with everything (written by the era; none by default). */
  readonly session?: SessionHeaders | undefined
  /** Bound of each frame on the standalone stream (frames that answer no request). */
  readonly unsolicitedMaxBytes: number
}

/**
 * Most reconnections of one request's resumable SSE stream. The request's deadline bounds them
 * too; this stops a server that closes at once with `retry: 0` from making us spin.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxResumptions = 16

/** What has been read of one answer's SSE stream, across its resumptions. */
interface Counted {
  bytes: number
  lastEventId: string | undefined
  retryMs: number | undefined
  /** The headers of the POST's answer, given with the response. */
  readonly headers: Response["headers"]
}

/** A standalone GET's answer that offers no stream, with its status. */
const isRefusal = <A>(stream: A | { readonly refused: number }): stream is { readonly refused: number } =>
  typeof stream === "object" && stream !== null && "refused" in stream

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
    const client = yield* Http.makeClient(options.headers, options.credential)
    const background = yield* makeBackground(options.releaseTimeoutMs)
    const session: SessionHeaders = options.session ?? { current: {} }
    let nextId = 0
    const inFlight = new Set<McpSchema.RequestId>()
    const standing = new Set<McpSchema.RequestId>()

    const postTarget = HttpClientRequest.post(options.url)
    const accept = { accept: "application/json, text/event-stream" }
    /** A POST of one message, with the session's headers and the message's own. */
    const post = (body: unknown, headers: Outgoing["headers"]) => Http.postJson(postTarget, body, { ...accept, ...session.current, ...headers })
    /** A best-effort message: nobody waits for it, its answer does not matter. */
    const postNotice = (body: unknown, headers: Outgoing["headers"]) => client.execute(post(body, headers), identity, Http.ignoreResponse)

    const statusFailure = (exchange: Exchange, response: HttpClientResponse.HttpClientResponse) =>
      Http.statusFailure(exchange, response, { sentSession: false, secrets: options.secrets })

    /** Messages that are not the awaited response: answer requests, hand notifications on, ignore the rest. */
    const handleOther = (message: McpSchema.IncomingMessage): Effect.Effect<void> =>
      Messages.routeIncoming(options.inbound, message, (reply) => background.run(postNotice(reply, undefined)))

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
            ResponseError: Http.transportError(exchange, "reading"),
            BodyReadFailed: Http.bodyReadFailed(exchange)
          })
        )
        const message = yield* Messages.parseMessage(exchange, bytes, { status })
        const answer = yield* Messages.answerOf(exchange, id, message, options.secrets, {
          status,
          observedBytes: bytes.length,
          headers: response.headers
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
      counted: Counted
    ): Effect.Effect<Response | undefined, McpConnectionError> => {
      const status = response.status
      const onEvent = (event: SseEvent): Effect.Effect<Response | undefined, McpConnectionError> => {
        counted.bytes += event.bytes
        if (event.id !== undefined) counted.lastEventId = event.id
        if (event.retry !== undefined) counted.retryMs = event.retry
        // Priming events and events of other types carry no JSON-RPC message.
        if (event.event !== "message" || event.data === "") return Effect.succeed(undefined)
        return Effect.gen(function*() {
          const details = { status, observedBytes: counted.bytes, headers: counted.headers }
          const message = yield* Messages.parseText(exchange, event.data, details)
          const answer = yield* Messages.answerOf(exchange, id, message, options.secrets, details)
          if (answer !== undefined) return answer
          yield* handleOther(message)
          return undefined
        })
      }
      return readFrames(response, sseParser({ maxFrameBytes: () => exchange.budget.maxBytes }), onEvent).pipe(
        Effect.catchTags({
          FrameTooLarge: (e: FrameTooLarge) => Effect.fail(Failures.ceiling(exchange, counted.bytes + e.observedBytes, status)),
          InvalidUtf8: (e) =>
            Effect.fail(
              Failures.protocol(exchange, "invalid-utf8", { observedBytes: counted.bytes + e.observedBytes, status })
            ),
          ResponseError: Http.transportError(exchange, "reading"),
          BodyReadFailed: Http.bodyReadFailed(exchange)
        })
      )
    }

    /** Reads the answer of one POST; resumes an SSE stream that closed early when allowed. */
    const readAnswer = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      response: HttpClientResponse.HttpClientResponse,
      request: Request
    ): Effect.Effect<Response, McpConnectionError> =>
      Effect.gen(function*() {
        if (response.status !== 200) {
          if (response.status === 202 || response.status === 204) {
            return yield* Effect.fail(Failures.protocol(exchange, "missing-response", { status: response.status }))
          }
          return yield* statusFailure(exchange, response)
        }
        const contentType = Http.contentTypeOf(response)
        if (contentType === "application/json") return yield* readJson(exchange, id, response)
        if (contentType !== "text/event-stream") {
          return yield* Effect.fail(Failures.protocol(exchange, "unexpected-content-type", { status: response.status }))
        }
        const counted: Counted = { bytes: 0, lastEventId: undefined, retryMs: undefined, headers: response.headers }
        let answer = yield* readEvents(exchange, id, response, counted)
        for (let resumptions = 0; answer === undefined; resumptions++) {
          if (request.resumable !== true || counted.lastEventId === undefined || resumptions >= maxResumptions) {
            return yield* Effect.fail(
              Failures.protocol(exchange, "missing-response", { observedBytes: counted.bytes, status: response.status })
            )
          }
          yield* Effect.sleep(Duration.millis(counted.retryMs ?? defaultRetryMs))
          answer = yield* resume(exchange, id, counted.lastEventId, counted, request.headers)
        }
        return answer
      })

    /** GET with `Last-Event-ID`: continues the same response stream (not a replay). */
    const resume = (
      exchange: Exchange,
      id: McpSchema.RequestId,
      lastEventId: string,
      counted: Counted,
      headers: Outgoing["headers"]
    ) => {
      const request = HttpClientRequest.get(options.url).pipe(
        HttpClientRequest.setHeaders({ accept: "text/event-stream", ...session.current, ...headers, "last-event-id": lastEventId })
      )
      return client.execute(request, Http.transportError(exchange, "reading"), (response) => {
        if (response.status !== 200) {
          return Http.statusFailure(exchange, response, { sentSession: false, secrets: options.secrets, answered: true })
        }
        if (Http.contentTypeOf(response) !== "text/event-stream") {
          return Effect.fail(Failures.protocol(exchange, "unexpected-content-type", { status: response.status }))
        }
        return readEvents(exchange, id, response, counted)
      })
    }

    const request: Transport["request"] = (request, exchange) =>
      Effect.suspend(() => {
        const id = nextId++
        const held = request.standing === true ? standing : inFlight
        held.add(id)
        const { cancelNotice } = request
        return client.execute(
          post(Messages.envelope(request, id), request.headers),
          Http.transportError(exchange, "sending"),
          (response) => readAnswer(exchange, id, response, request)
        ).pipe(
          Effect.onInterrupt(() => {
            if (cancelNotice === undefined) return Effect.void
            const notice = cancelNotice(id)
            return background.run(postNotice(Messages.envelope(notice), notice.headers))
          }),
          Effect.ensuring(Effect.sync(() => held.delete(id)))
        )
      })

    const notify: Transport["notify"] = (notification, exchange) =>
      client.execute(
        post(Messages.envelope(notification), notification.headers),
        Http.transportError(exchange, "sending"),
        (response) =>
          response.status === 202 || response.status === 200 || response.status === 204
            ? Effect.void
            : statusFailure(exchange, response)
      )

    /**
     * The standalone stream: the server's requests are answered, its notifications handed on,
     * responses dropped. The wait for its answer's headers belongs to the caller (discovery,
     * under its deadline, and at most one release step), so the stream is open before the first
     * call: a server may route a call's requests to it. A server that answers with anything but
     * an SSE stream offers none (405 is the usual answer); a frame past the unsolicited bound,
     * or a read that fails, ends it, and it is opened again (see `keep`).
     */
    let droppedFrames = 0
    const listen: Transport["listen"] = Effect.flatMap(Effect.scope, (scope) => {
      const exchange: Exchange = {
        stage: "initialized",
        phase: "session",
        budget: { timeoutMs: options.releaseTimeoutMs, maxBytes: options.unsolicitedMaxBytes }
      }
      const onEvent = (event: SseEvent): Effect.Effect<undefined> => {
        if (event.event !== "message" || event.data === "") return Effect.succeed(undefined)
        return Messages.parseText(exchange, event.data).pipe(
          Effect.flatMap((message) => {
            // A response on this stream answers nothing the client asked here.
            if (message._tag === "Success" || message._tag === "Failure") droppedFrames++
            return handleOther(message)
          }),
          Effect.catchAll(() => Effect.sync(() => void droppedFrames++)),
          Effect.as(undefined)
        )
      }
      /**
       * One GET, in a scope of its own: its headers awaited at most one release step (a server
       * that stalls them offers no stream this time), then the reading of its stream; or the
       * status of a refusal when the server offers none (405, or anything but an SSE stream).
       */
      const open = Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (attempt) => {
        const request = HttpClientRequest.get(options.url).pipe(
          HttpClientRequest.setHeaders({ accept: "text/event-stream", ...session.current })
        )
        return client.open(request, identity, attempt).pipe(
          Effect.timeout(Duration.millis(options.releaseTimeoutMs)),
          Effect.map((response) => {
            if (response.status !== 200 || Http.contentTypeOf(response) !== "text/event-stream") {
              releaseBody(response)
              return { refused: response.status }
            }
            // Nobody waits on this stream: how it ends changes nothing for any request.
            return readFrames(response, sseParser({ maxFrameBytes: () => options.unsolicitedMaxBytes }), onEvent).pipe(
              Effect.catchAllCause(() => Effect.void)
            )
          }),
          // No answer in time, or none at all.
          Effect.catchAll(() => Effect.succeed("unanswered" as const)),
          Effect.map((stream) => ({ stream, attempt }))
        )
      })
      /**
       * The stream for the session's life: opened again when it ends or went unanswered, after
       * 1 s, 2 s, 4 s... at most 30 s (1 s again once a stream was open), until the server
       * offers none (docs/DESIGN.md, "Live tool lists").
       */
      const keep = (first: Effect.Effect.Success<typeof open>) =>
        Effect.gen(function*() {
          let current = first
          let failures = 0
          while (!isRefusal(current.stream)) {
            if (current.stream === "unanswered") failures++
            else {
              yield* current.stream
              failures = 0
            }
            yield* Scope.close(current.attempt, Exit.void)
            yield* Effect.sleep(Duration.millis(backoffMs(failures)))
            current = yield* open
            if (Effect.isEffect(current.stream) && options.inbound.reopened !== undefined) yield* options.inbound.reopened
          }
          yield* Scope.close(current.attempt, Exit.void)
        })
      // The first answer's headers are awaited (by discovery), the rest happens in the background.
      return Effect.flatMap(open, (first): Effect.Effect<Listening> => {
        const stream = first.stream
        return isRefusal(stream)
          ? Effect.as(Scope.close(first.attempt, Exit.void), { _tag: "Refused", status: stream.refused })
          : Effect.as(Effect.forkIn(Effect.interruptible(keep(first)), scope), { _tag: "Listening" })
      })
    })

    // A server may answer 405 (it does not allow clients to end sessions): nothing to do then.
    const endSession = Effect.suspend(() => {
      const request = HttpClientRequest.del(options.url).pipe(HttpClientRequest.setHeaders(session.current))
      return client.execute(request, identity, Http.ignoreResponse).pipe(
        Effect.interruptible,
        Effect.timeout(Duration.millis(options.releaseTimeoutMs)),
        Effect.ignore
      )
    })

    return {
      kind: "streamable-http",
      capabilities: { messageHeaders: true, cancelsByClosing: true, mayIgnoreUnknownRequests: false, forgetfulSessions: true },
      request,
      notify,
      endSession,
      listen,
      diagnostics: Effect.map(background.size, (size) => ({ pending: inFlight.size, standing: standing.size, background: size, droppedFrames }))
    } satisfies Transport
  })
