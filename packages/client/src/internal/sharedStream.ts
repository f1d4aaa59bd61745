/**
 * The shared-stream rule (docs/DESIGN.md, "Bytes"), in one place, for every transport whose
 * answers arrive on one stream shared by all requests (legacy HTTP+SSE's GET stream, stdio's
 * stdout):
 *
 * - a frame being read is bounded by the largest ceiling among `unsolicited.maxBytes` and the
 *   pending requests (`frameBound`);
 * - a complete frame answering request R but over R's ceiling fails R only;
 * - a complete unsolicited frame over `unsolicited.maxBytes` is dropped (and counted), as are
 *   late answers to requests given up;
 * - when the stream is given up, every pending request fails at once (`terminate`), and later
 *   requests fail without being sent.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { McpConnectionError, Outcome } from "../McpConnectionError.js"
import type * as McpSchema from "../McpSchema.js"
import type { Diagnostics, Exchange, Inbound, Request, Response } from "./transport/transport.js"
import * as Failures from "./failures.js"
import { FrameTooLarge, InvalidUtf8 } from "./frameErrors.js"
import * as Messages from "./messages.js"

/** Why the stream stopped: each pending request gets its own error from it. */
export type Termination = (exchange: Exchange) => McpConnectionError

/**
 * The termination for a failure of the stream's reader: a frame past its bound, invalid UTF-8,
 * or (`otherwise`) the transport's own read failure.
 */
export const readFailure = <E>(
  error: FrameTooLarge | InvalidUtf8 | E,
  otherwise: Termination
): Termination => {
  if (error instanceof FrameTooLarge) return (exchange) => Failures.ceiling(exchange, error.observedBytes)
  if (error instanceof InvalidUtf8) {
    return (exchange) => Failures.protocol(exchange, "invalid-utf8", { observedBytes: error.observedBytes })
  }
  return otherwise
}

/**
 * The termination for a stream reader that stopped with `cause`: its typed failure (through
 * `readFailure`), `onInterrupt` when it was interrupted (the connection is closing; `undefined`:
 * nothing to do), or, for a defect, an `InternalError` for every pending request at once, the
 * defect kept in process as its cause.
 */
export const readerStopped = <E>(
  cause: Cause.Cause<FrameTooLarge | InvalidUtf8 | E>,
  options: {
    readonly onFailure: Termination
    readonly onInterrupt: Termination | undefined
    readonly outcome: (exchange: Exchange) => Outcome
  }
): Termination | undefined => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") return readFailure(failure.value, options.onFailure)
  if (Cause.isInterruptedOnly(cause)) return options.onInterrupt
  return (exchange) => Failures.internal(exchange, options.outcome(exchange), cause)
}

interface Pending {
  readonly exchange: Exchange
  readonly deferred: Deferred.Deferred<Response, McpConnectionError>
  /** A standing request (`Request.standing`): not counted as pending. */
  readonly standing: boolean
}

export interface SharedStream {
  /** The bound of the frame about to be read. */
  readonly frameBound: () => number
  /** Routes one complete frame's text; a frame that is not JSON-RPC gives up the stream. */
  readonly dispatch: (text: string, bytes: number) => Effect.Effect<void>
  /** Gives up the stream; `true` the first time. */
  readonly terminate: (termination: Termination) => Effect.Effect<boolean>
  readonly isTerminated: () => boolean
  /** Counts a frame dropped by the transport itself (a banner, an event before readiness). */
  readonly drop: () => void
  /**
   * Sends a request with `send` and waits for its answer on the stream. The request is
   * registered before sending (the answer may overtake the send's own acknowledgement).
   */
  readonly request: (
    request: Request,
    exchange: Exchange,
    send: (message: Record<string, unknown>) => Effect.Effect<void, McpConnectionError>
  ) => Effect.Effect<Response, McpConnectionError>
  readonly diagnostics: (background: number) => Diagnostics
}

export const make = (options: {
  readonly unsolicitedMaxBytes: number
  readonly secrets: ReadonlyArray<string>
  /** Takes the server's requests and notifications. */
  readonly inbound: Inbound
  /** The exchange used to describe stream-level failures that belong to no request. */
  readonly streamExchange: Exchange
  /** A bound that applies before any request is pending (e.g. the readiness frame). */
  readonly extraBound?: () => number
  /**
   * Sends a best-effort message nobody waits for (a reply to a server request, a cancellation
   * notice), bounded by the transport.
   */
  readonly notice: (message: Record<string, unknown>) => Effect.Effect<void>
}): SharedStream => {
  const pending = new Map<McpSchema.RequestId, Pending>()
  let terminated: Termination | undefined
  let nextId = 0
  let droppedFrames = 0

  const frameBound = () => {
    let bound = Math.max(options.unsolicitedMaxBytes, options.extraBound?.() ?? 0)
    for (const { exchange } of pending.values()) bound = Math.max(bound, exchange.budget.maxBytes)
    return bound
  }

  const terminate = (termination: Termination) =>
    Effect.gen(function*() {
      if (terminated !== undefined) return false
      terminated = termination
      for (const { deferred, exchange } of pending.values()) yield* Deferred.fail(deferred, termination(exchange))
      return true
    })

  const dispatch = (text: string, bytes: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      const decoded = yield* Effect.either(Messages.parseText(options.streamExchange, text, { observedBytes: bytes }))
      if (decoded._tag === "Left") {
        // A corrupt frame, or one past the structure bound, belongs to no one in particular
        // (its id is inside it): the stream is given up.
        const failure = decoded.left
        if (failure._tag === "LimitExceeded" && (failure.limit === "maxDepth" || failure.limit === "maxNodes")) {
          const limit = failure.limit
          yield* terminate((exchange) => Messages.structureExceeded(exchange, limit, { observedBytes: bytes }))
          return
        }
        const reason = failure.reason ?? "invalid-message"
        yield* terminate((exchange) => Failures.protocol(exchange, reason, { observedBytes: bytes }))
        return
      }
      const message = decoded.right
      if (message._tag === "Success" || message._tag === "Failure") {
        const entry = message.message.id === null ? undefined : pending.get(message.message.id)
        if (entry === undefined) {
          // A late answer to a request given up (deadline, interruption): nobody waits for it.
          droppedFrames++
          return
        }
        const { deferred, exchange } = entry
        if (bytes > exchange.budget.maxBytes) {
          yield* Deferred.fail(deferred, Failures.ceiling(exchange, bytes))
        } else if (message._tag === "Success") {
          yield* Deferred.succeed(deferred, {
            result: message.message.result,
            bytes,
            nodes: message.nodes,
            headers: Messages.noHeaders
          })
        } else {
          yield* Deferred.fail(
            deferred,
            Messages.refusal(exchange, message.message.error, options.secrets, { observedBytes: bytes })
          )
        }
        return
      }
      if (bytes > options.unsolicitedMaxBytes) {
        droppedFrames++
        return
      }
      yield* Messages.routeIncoming(options.inbound, message, options.notice)
    })

  const request: SharedStream["request"] = (request, exchange, send) =>
    Effect.flatMap(Deferred.make<Response, McpConnectionError>(), (deferred) => {
      if (terminated !== undefined) return Effect.fail(Failures.transport(exchange, "stream-ended", "not-sent"))
      const id = nextId++
      pending.set(id, { exchange, deferred, standing: request.standing === true })
      const { cancelNotice } = request
      return send(Messages.envelope(request, id)).pipe(
        Effect.zipRight(Deferred.await(deferred)),
        Effect.onInterrupt(() =>
          cancelNotice !== undefined && terminated === undefined
            ? options.notice(Messages.envelope(cancelNotice(id)))
            : Effect.void
        ),
        Effect.ensuring(Effect.sync(() => pending.delete(id)))
      )
    })

  return {
    frameBound,
    dispatch,
    terminate,
    isTerminated: () => terminated !== undefined,
    drop: () => {
      droppedFrames++
    },
    request,
    diagnostics: (background) => {
      let standing = 0
      for (const entry of pending.values()) if (entry.standing) standing++
      return { pending: pending.size - standing, standing, background, droppedFrames }
    }
  }
}
