/**
 * Negotiation as data: an ordered list of (era, transport) candidates, tried one after the other
 * under the caller's single discovery deadline (docs/DESIGN.md, "Negotiation").
 *
 * Candidates that name the same `Opener` share one transport: over stdio the handshake era
 * follows the stateless probe on the same child, over Streamable HTTP on the same client. Each
 * transport is opened in a scope of its own and each era attempt in a scope inside it, forked
 * from the connection's: what the winning attempt opened lives as long as the connection; an
 * attempt that fails is released before the next starts (its transport too, when the next
 * candidate uses another). A candidate is tried after a failure only when its `follows` rule
 * accepts that failure; anything else ends the negotiation with that failure. Only discovery
 * requests are sent here, so nothing here can replay a call. When more than one candidate was
 * tried, the failure that ends the negotiation carries every attempt (`attempts`: era,
 * transport, tag, stage, status, code, reason, exit code; never a URL, header or body), so a
 * fallback's failure does not hide the first answer.
 */
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { type Attempt, attemptOf, type McpConnectionError, type Stage, withAttempts } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type { Era, EraName, OpenContext, Session } from "./era.js"
import type { SessionHeaders, Transport, TransportKind } from "./transport/transport.js"
import { era as handshakeEra } from "./handshakeEra.js"
import { era as statelessEra, supportedByRefusal } from "./statelessEra.js"

/** How to open one transport; candidates that share an opener share the transport. */
export interface Opener<R> {
  readonly kind: TransportKind
  /** The discovery stage that opening is, when it is one of its own (legacy: `endpoint`). */
  readonly readiness?: Stage | undefined
  /** Opens the transport in the current scope; `session` is what an HTTP transport sends along. */
  readonly open: (session: SessionHeaders) => Effect.Effect<Transport, McpConnectionError, R | Scope.Scope>
}

/** One way of reaching the server: an era over a transport. */
export interface Candidate<R> {
  readonly era: Era
  readonly opener: Opener<R>
  /** Whether this candidate may be tried after the one before it failed with `error`. */
  readonly follows: (error: McpConnectionError) => boolean
}

/** The candidate that won, its transport and its session. */
export interface Negotiated {
  readonly kind: TransportKind
  readonly transport: Transport
  readonly session: Session
}

/** Hears of each attempt as it starts and, when it does, as it fails. */
export interface AttemptObserver {
  readonly started: (era: EraName, transport: TransportKind) => void
  readonly failed: (error: McpConnectionError) => void
}

const modernCodes: ReadonlySet<number> = new Set([
  McpSchema.ErrorCode.HeaderMismatch,
  McpSchema.ErrorCode.MissingRequiredClientCapability,
  McpSchema.ErrorCode.UnsupportedProtocolVersion
])

/**
 * Whether the handshake era may follow a failed stateless attempt: the server refused
 * `server/discover` in a way no stateless server would (a JSON-RPC error that is not one of
 * the stateless revision's own, or, over HTTP, a 400, 404 or 405 without a JSON-RPC body), or
 * said with `-32022` that it supports a handshake revision among `allowed`; or answered with something
 * that is no discovery result, or nothing (over stdio, within the probe's bounded wait). Never
 * after 401, 403, 5xx, a deadline, a transport failure or a broken answer (bad UTF-8, JSON or
 * content type).
 */
export const handshakeFallback = (allowed: ReadonlyArray<McpSchema.Revision>) => (error: McpConnectionError): boolean => {
  if (error.stage !== "discover") return false
  if (error._tag === "RemoteRefusal") {
    if (error.code === McpSchema.ErrorCode.UnsupportedProtocolVersion) {
      return supportedByRefusal(error).some((revision) =>
        McpSchema.handshakeRevisions.includes(revision as McpSchema.Revision) &&
        allowed.includes(revision as McpSchema.Revision)
      )
    }
    return !modernCodes.has(error.code ?? 0)
  }
  if (error._tag === "UpstreamFailure") return error.status === 400 || error.status === 404 || error.status === 405
  // An answer that is no discovery result, or none at all (over stdio: none within the probe's
  // bounded wait): a server that does not know the method.
  return error._tag === "ProtocolViolation" && (error.reason === "missing-response" || error.reason === "invalid-result")
}

/**
 * Whether the stateless era may be tried once more after the handshake, over stdio: the first
 * probe got no answer within its bounded wait (a stateless server still starting, as one run
 * by `npx` often is), then `initialize` was refused with `-32022` naming a stateless revision
 * the client may speak. The child is the same; the server is up by now.
 */
export const statelessRetry = (allowed: ReadonlyArray<McpSchema.Revision>) => (error: McpConnectionError): boolean =>
  error._tag === "RemoteRefusal" && error.stage === "initialize" &&
  supportedByRefusal(error).some((revision) =>
    McpSchema.statelessRevisions.includes(revision as McpSchema.Revision) &&
    allowed.includes(revision as McpSchema.Revision)
  )

/**
 * Whether legacy HTTP+SSE may follow a failed Streamable HTTP attempt: the first POST of the
 * handshake (`initialize`) was answered 400, 404 or 405 with a body that is not a JSON-RPC
 * error (a JSON-RPC error proves a Streamable HTTP server that refused: a `RemoteRefusal`, not
 * an `UpstreamFailure`). 401, 403, 5xx, deadlines, transport failures and anything after the
 * first POST never fall back.
 */
export const legacyHttpFallback = (error: McpConnectionError): boolean =>
  error._tag === "UpstreamFailure" && error.stage === "initialize" &&
  (error.status === 400 || error.status === 404 || error.status === 405)

/**
 * The order over HTTP: the stateless revision first (`server/discover`), then the handshake on
 * the same Streamable HTTP client, then legacy HTTP+SSE (`"auto"`); a transport chosen by the
 * caller keeps only its own candidates.
 */
export const httpCandidates = <R>(
  choice: "auto" | "streamable-http" | "sse",
  revisions: ReadonlyArray<McpSchema.Revision>,
  openers: { readonly streamable: Opener<R>; readonly legacy: Opener<R> }
): ReadonlyArray<Candidate<R>> => {
  const overStreamable: ReadonlyArray<Candidate<R>> = [
    { era: statelessEra, opener: openers.streamable, follows: () => false },
    { era: handshakeEra, opener: openers.streamable, follows: handshakeFallback(revisions) }
  ]
  const overLegacy: Candidate<R> = { era: handshakeEra, opener: openers.legacy, follows: legacyHttpFallback }
  return choice === "auto" ? [...overStreamable, overLegacy] : choice === "sse" ? [overLegacy] : overStreamable
}

/**
 * The order over stdio, all on the same child: the stateless probe, the handshake, and the
 * stateless era once more when the handshake's refusal names it (`statelessRetry`).
 */
export const stdioCandidates = <R>(revisions: ReadonlyArray<McpSchema.Revision>, child: Opener<R>): ReadonlyArray<Candidate<R>> => [
  { era: statelessEra, opener: child, follows: () => false },
  { era: handshakeEra, opener: child, follows: handshakeFallback(revisions) },
  { era: statelessEra, opener: child, follows: statelessRetry(revisions) }
]

/**
 * Tries the candidates in order until one opens a session. `observer` hears of every attempt
 * (for the discovery observations); `scope` is the connection's. Each failed attempt is added
 * to `failures`, which the caller owns: a deadline that ends the negotiation from outside
 * reports them too.
 */
export const negotiate = <R>(
  candidates: ReadonlyArray<Candidate<R>>,
  context: Omit<OpenContext, "sessionHeaders" | "revisions">,
  revisions: ReadonlyArray<McpSchema.Revision>,
  scope: Scope.Scope,
  observer: AttemptObserver,
  failures: Array<Attempt>
): Effect.Effect<Negotiated, McpConnectionError, R> => {
  interface Opened {
    readonly opener: Opener<R>
    readonly scope: Scope.CloseableScope
    readonly transport: Transport
    readonly sessionHeaders: SessionHeaders
  }
  const openTransport = (opener: Opener<R>) =>
    Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (transportScope) => {
      const sessionHeaders: SessionHeaders = { current: {} }
      return opener.open(sessionHeaders).pipe(
        Scope.extend(transportScope),
        Effect.tap(() => (opener.readiness === undefined ? Effect.void : Effect.sync(() => context.record(opener.readiness!, 0)))),
        Effect.map((transport): Opened => ({ opener, scope: transportScope, transport, sessionHeaders })),
        Effect.tapError((error) => Scope.close(transportScope, Exit.fail(error)))
      )
    })

  const usable = usableCandidates(candidates, revisions)
  const attempt = (index: number, previous: Opened | undefined): Effect.Effect<Negotiated, McpConnectionError, R> => {
    const candidate = usable[index]!
    const next = usable[index + 1]
    /** Goes on with the next candidate if it follows `error`, releasing what it will not share. */
    const orNext = (error: McpConnectionError, opened: Opened | undefined, eraScope: Scope.CloseableScope | undefined) => {
      observer.failed(error)
      failures.push(attemptOf(candidate.era.name, candidate.opener.kind, error))
      if (next === undefined || !next.follows(error)) {
        return Effect.fail(failures.length > 1 ? withAttempts(error, [...failures]) : error)
      }
      const shared = opened !== undefined && next.opener === opened.opener ? opened : undefined
      const release = Effect.zipRight(
        eraScope === undefined ? Effect.void : Scope.close(eraScope, Exit.fail(error)),
        shared === undefined && opened !== undefined ? Scope.close(opened.scope, Exit.fail(error)) : Effect.void
      )
      return Effect.zipRight(release, attempt(index + 1, shared))
    }
    observer.started(candidate.era.name, candidate.opener.kind)
    const opening = previous !== undefined && previous.opener === candidate.opener
      ? Effect.succeed(previous)
      : openTransport(candidate.opener)
    return Effect.matchEffect(opening, {
      onFailure: (error) => orNext(error, undefined, undefined),
      onSuccess: (opened) =>
        Effect.flatMap(Scope.fork(opened.scope, ExecutionStrategy.sequential), (eraScope) => {
          const eraRevisions = candidate.era.revisions.filter((revision) => revisions.includes(revision))
          return candidate.era.open(opened.transport, {
            ...context,
            revisions: eraRevisions,
            sessionHeaders: opened.sessionHeaders
          }).pipe(
            Scope.extend(eraScope),
            Effect.matchEffect({
              onFailure: (error) => orNext(error, opened, eraScope),
              onSuccess: (session) => Effect.succeed({ kind: candidate.opener.kind, transport: opened.transport, session })
            })
          )
        })
    })
  }
  // The caller checks before any I/O that some candidate is usable (an InvalidOption if not).
  return usable.length === 0 ? Effect.dieMessage("no candidate speaks an allowed revision") : attempt(0, undefined)
}

/** The candidates whose era may speak one of `revisions`, in order. */
export const usableCandidates = <R>(
  candidates: ReadonlyArray<Candidate<R>>,
  revisions: ReadonlyArray<McpSchema.Revision>
): ReadonlyArray<Candidate<R>> => candidates.filter((candidate) => candidate.era.revisions.some((revision) => revisions.includes(revision)))
