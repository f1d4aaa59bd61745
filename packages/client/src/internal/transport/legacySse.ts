/**
 * The legacy HTTP+SSE transport (revision 2024-11-05).
 *
 * A GET opens an SSE stream; its first event, `endpoint`, names the URL to POST messages to;
 * responses arrive on the GET stream. Waiting for the endpoint is the readiness step of
 * discovery. The endpoint must resolve to the configured origin (scheme, host and port), or
 * discovery fails and nothing is sent to it.
 *
 * The GET stream is shared: it lives in the transport's scope (not in discovery's) and every
 * frame on it is bounded by the largest ceiling among `unsolicited.maxBytes` and the pending
 * requests. A frame that passes that bound aborts the stream, releases the session and fails
 * every pending request with `ByteCeilingExceeded`; a completed frame answering a request but
 * over that request's own ceiling fails that request only; a completed unsolicited frame over
 * `unsolicited.maxBytes` is dropped. When the stream ends, every pending request fails at once.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { identity } from "effect/Function"
import * as Scope from "effect/Scope"
import type { McpConnectionError } from "../../McpConnectionError.js"
import { readFrames } from "../bodyReader.js"
import { makeBackground } from "../background.js"
import * as Failures from "../failures.js"
import * as Http from "../http.js"
import * as Messages from "../messages.js"
import * as SharedStream from "../sharedStream.js"
import { type SseEvent, sseParser } from "../sseDecoder.js"
import type { Exchange, Inbound, Transport } from "./transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The SSE URL, without userinfo. */
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  /** The bearer credential of the server's origin, when the connection is authorized (OAuth). */
  readonly credential?: Http.Credential | undefined
  readonly secrets: ReadonlyArray<string>
  readonly releaseTimeoutMs: number
  /** Bound of frames that answer no pending request. */
  readonly unsolicitedMaxBytes: number
  /** Answers the server's requests. */
  readonly inbound: Inbound
}

/**
 * Opens the GET stream and waits for a valid `endpoint` event. The caller bounds the wait (the
 * discovery deadline); `readiness` describes that step for errors (stage `endpoint`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options,
  readiness: Exchange
): Effect.Effect<Transport, McpConnectionError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const client = yield* Http.makeClient(options.headers, options.credential)
    const background = yield* makeBackground(options.releaseTimeoutMs)
    const endpointReady = yield* Deferred.make<HttpClientRequest.HttpClientRequest, McpConnectionError>()
    /** The POST to the endpoint, once it is known. */
    let endpoint: HttpClientRequest.HttpClientRequest | undefined

    /** A best-effort message: nobody waits for it, its answer does not matter. */
    const postNotice = (message: unknown, target: HttpClientRequest.HttpClientRequest) =>
      client.execute(Http.postJson(target, message), identity, Http.ignoreResponse)
    const stream = SharedStream.make({
      unsolicitedMaxBytes: options.unsolicitedMaxBytes,
      secrets: options.secrets,
      inbound: options.inbound,
      streamExchange: readiness,
      // Until the endpoint arrives, the readiness frame is bounded by the discovery ceiling.
      extraBound: () => (endpoint === undefined ? readiness.budget.maxBytes : 0),
      notice: (message) => (endpoint === undefined ? Effect.void : background.run(postNotice(message, endpoint)))
    })

    /**
     * Stops the stream for good: fails the endpoint wait and every pending request. The reader
     * notices at its next event and stops, releasing the GET; a termination decided elsewhere
     * also interrupts it (see `send`).
     */
    const terminate = (termination: SharedStream.Termination) =>
      Effect.flatMap(stream.terminate(termination), (first) => first ? Deferred.fail(endpointReady, termination(readiness)) : Effect.void)

    const acceptEndpoint = (event: SseEvent): Effect.Effect<void> => {
      let url: URL | undefined
      try {
        url = event.data.trim() === "" ? undefined : new URL(event.data.trim(), options.url)
      } catch {
        url = undefined
      }
      if (url === undefined) return terminate((exchange) => Failures.protocol(exchange, "bad-endpoint"))
      // The fence: nothing, credentials above all, goes to another origin.
      if (url.origin !== options.url.origin) {
        return terminate((exchange) => Failures.protocol(exchange, "foreign-endpoint"))
      }
      endpoint = HttpClientRequest.post(url)
      return Deferred.succeed(endpointReady, endpoint)
    }

    const onEvent = (event: SseEvent): Effect.Effect<void> => {
      if (endpoint === undefined) {
        // Before readiness only the endpoint matters; anything else is dropped (documented).
        return event.event === "endpoint" ? acceptEndpoint(event) : Effect.sync(stream.drop)
      }
      if (event.event !== "message" || event.data === "") return Effect.void
      return stream.dispatch(event.data, event.bytes)
    }

    // A request given up with the stream may or may not have been applied.
    const outcomeOf = (exchange: Exchange) => (exchange.stage === "endpoint" ? "not-sent" : "unknown")

    const response = yield* client.open(
      HttpClientRequest.get(options.url).pipe(HttpClientRequest.setHeaders({ accept: "text/event-stream" })),
      Http.transportError(readiness, "readiness"),
      scope
    )
    if (response.status !== 200) {
      return yield* Http.statusFailure(readiness, response, { sentSession: false, secrets: options.secrets })
    }
    if (Http.contentTypeOf(response) !== "text/event-stream") {
      return yield* Effect.fail(Failures.protocol(readiness, "unexpected-content-type", { status: response.status }))
    }

    // The stream is read until it ends or is given up (a corrupt frame, a bad endpoint): the
    // reader then stops, which releases the GET.
    const stopOnceTerminated = () => (stream.isTerminated() ? true : undefined)
    const reader = yield* readFrames(
      response,
      sseParser({ maxFrameBytes: stream.frameBound }),
      (event) => Effect.map(onEvent(event), stopOnceTerminated)
    ).pipe(
      Effect.matchCauseEffect({
        onSuccess: () =>
          terminate((exchange) =>
            exchange.stage === "endpoint"
              ? Failures.protocol(exchange, "missing-endpoint")
              : Failures.transport(exchange, "stream-ended", outcomeOf(exchange))
          ),
        onFailure: (cause) => {
          const termination = SharedStream.readerStopped(cause, {
            onFailure: (exchange) => Failures.transport(exchange, "connection-closed", outcomeOf(exchange)),
            // Interrupted: the connection is closing.
            onInterrupt: (exchange) => Failures.transport(exchange, "session-closed", outcomeOf(exchange)),
            outcome: outcomeOf
          })
          return termination === undefined ? Effect.void : terminate(termination)
        }
      }),
      Effect.interruptible,
      Effect.forkIn(scope)
    )

    const target = yield* Deferred.await(endpointReady)

    /**
     * The answer to a POST: a 2xx means accepted. The answer comes on the stream, and the POST's
     * own body (normally `Accepted`) says nothing, so it is released unread.
     */
    const accepted = (exchange: Exchange) => (answer: HttpClientResponse.HttpClientResponse) =>
      answer.status >= 200 && answer.status < 300
        ? Effect.void
        // The endpoint URL is the session: a 404 there means it is gone.
        : Http.statusFailure(exchange, answer, { sentSession: true, secrets: options.secrets })
    /** POSTs one message to the endpoint. */
    const send = (message: unknown, exchange: Exchange) =>
      client.execute(Http.postJson(target, message), Http.transportError(exchange, "sending"), accepted(exchange)).pipe(
        Effect.tapError((error) =>
          error._tag === "SessionExpired"
            ? Effect.zipRight(terminate((e) => Failures.sessionExpired(e, "not-sent")), Fiber.interruptFork(reader))
            : Effect.void
        )
      )

    return {
      kind: "sse",
      // The endpoint URL is the session (closing the GET stream, the scope, ends it), and the GET
      // stream is already the stream of the server's messages: no session to end, nothing to
      // listen to.
      capabilities: { messageHeaders: false, cancelsByClosing: false, mayIgnoreUnknownRequests: false, forgetfulSessions: true },
      request: (request, exchange) => stream.request(request, exchange, (message) => send(message, exchange)),
      notify: (notification, exchange) =>
        stream.isTerminated()
          ? Effect.fail(Failures.transport(exchange, "stream-ended", "not-sent"))
          : send(Messages.envelope(notification), exchange),
      ended: stream.isTerminated,
      diagnostics: Effect.map(background.size, stream.diagnostics)
    } satisfies Transport
  })
