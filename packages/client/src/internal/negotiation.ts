/**
 * Negotiation as data: an ordered list of (era, transport) candidates, tried one after the other
 * under the caller's single discovery deadline (docs/DESIGN.md, "Negotiation").
 *
 * Each attempt runs in a scope of its own, forked from the connection's: the attempt that wins
 * keeps what it opened for the life of the connection; one that fails is released before the
 * next starts. A candidate is tried after a failure only when its `follows` rule accepts that
 * failure; anything else (401, 403, 5xx, a deadline, a transport failure) ends the negotiation.
 * Only discovery requests are ever sent during negotiation, so nothing here can replay a call.
 */
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { McpConnectionError } from "../McpConnectionError.js"
import type { Era, OpenContext, Session } from "../ProtocolEra.js"
import type { SessionHeaders, Transport, TransportKind } from "../Transport.js"

/** One way of reaching the server: an era over a transport. */
export interface Candidate<R> {
  readonly era: Era
  readonly kind: TransportKind
  /** Opens the transport in the current scope (the attempt's); `session` is what it sends. */
  readonly open: (session: SessionHeaders) => Effect.Effect<Transport, McpConnectionError, R | Scope.Scope>
  /** Whether this candidate may be tried after the one before it failed with `error`. */
  readonly follows: (error: McpConnectionError) => boolean
}

/**
 * Whether legacy HTTP+SSE may follow a failed Streamable HTTP attempt: the first POST of the
 * discovery (`initialize`) was answered 400, 404 or 405 with a body that is not a JSON-RPC
 * error (a JSON-RPC error proves a Streamable HTTP server that refused, which is a
 * `RemoteRefusal`, not an `UpstreamFailure`). 401, 403, 5xx, deadlines, transport failures and
 * anything after the first POST never fall back.
 */
export const legacyHttpFallback = (error: McpConnectionError): boolean =>
  error._tag === "UpstreamFailure" && error.stage === "initialize" &&
  (error.status === 400 || error.status === 404 || error.status === 405)

/** The candidate that won, its transport and its session. */
export interface Negotiated {
  readonly kind: TransportKind
  readonly transport: Transport
  readonly session: Session
}

/**
 * Tries the candidates in order until one opens a session. `context` is given to each era
 * with the revisions it may speak, `scope` is the connection's.
 */
export const negotiate = <R>(
  candidates: ReadonlyArray<Candidate<R>>,
  context: Omit<OpenContext, "sessionHeaders" | "revisions">,
  revisions: ReadonlyArray<string>,
  scope: Scope.Scope
): Effect.Effect<Negotiated, McpConnectionError, R> => {
  const attempt = (index: number): Effect.Effect<Negotiated, McpConnectionError, R> => {
    const candidate = candidates[index]!
    return Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (attemptScope) => {
      const sessionHeaders: SessionHeaders = { current: {} }
      const eraRevisions = candidate.era.revisions.filter((revision) => revisions.includes(revision))
      return Effect.gen(function*() {
        const transport = yield* candidate.open(sessionHeaders)
        const session = yield* candidate.era.open(transport, { ...context, revisions: eraRevisions, sessionHeaders })
        return { kind: candidate.kind, transport, session }
      }).pipe(
        Scope.extend(attemptScope),
        Effect.catchAll((error) => {
          const next = candidates[index + 1]
          if (next === undefined || !next.follows(error)) return Effect.fail(error)
          return Effect.zipRight(Scope.close(attemptScope, Exit.fail(error)), attempt(index + 1))
        })
      )
    })
  }
  return attempt(0)
}
