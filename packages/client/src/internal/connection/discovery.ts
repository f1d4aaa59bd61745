/**
 * The discovery (docs/DESIGN.md, "Negotiation", "Sessions that heal"), under ONE deadline:
 * negotiate an (era, transport) candidate (opening the transport and running the era's own
 * steps), then every `tools/list` page. When it fails, everything it opened is released before
 * the failure is returned (and before an authorization runs: a discovery refused with a 401 is
 * run again from its start). The connection's first session and every new one are discovered
 * the same way; each run records the observations of its stages.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as McpClient from "../../McpClient.js"
import { type Attempt, attemptOf, type McpConnectionError, type Outcome, type Stage, withAttempts } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as PhasePolicy from "../../PhasePolicy.js"
import type { EraName, OpenContext } from "../era.js"
import type { Exchange, Inbound, TransportKind } from "../transport/transport.js"
import { withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import type { Responder } from "../inbound.js"
import { type Listing, listAllTools } from "../listing.js"
import * as LiveSession from "../liveSession.js"
import type { Discovered } from "../liveSession.js"
import type { ConnectionCache } from "../cacheService.js"
import * as EraCache from "../eraCache.js"
import * as Negotiation from "../negotiation.js"
import * as Notifications from "../notifications.js"
import * as ServerRequests from "../serverRequests.js"
import type { ConnectionAuthorization } from "../oauth/authorizer.js"
import { type Annotate, clientSpan } from "../tracing.js"
import { authorized, maxDiscoveryAuthorizations } from "./authorized.js"
import { cached, evictingInbound } from "./cached.js"
import * as ConnectionRuntime from "./connection.js"

/** What a discovery needs, validated (before any I/O). */
export interface Input<R> {
  readonly policy: PhasePolicy.PhasePolicy
  readonly clientInfo: McpSchema.Implementation
  readonly revisions: ReadonlyArray<McpSchema.Revision>
  readonly responder: Responder
  readonly auth: ConnectionAuthorization | undefined
  /**
   * The candidates in order; `exchange` names the discovery stage an opening belongs to, and
   * `inbound` is what every transport of the connection hands the server's messages to.
   */
  readonly candidates: (context: CandidateContext) => ReadonlyArray<Negotiation.Candidate<R>>
  /**
   * The connection's cache: its responses, and the era per origin, which starts the negotiation
   * (docs/DESIGN.md, "Response cache", "The era per origin").
   */
  readonly cache?: ConnectionCache | undefined
  /**
   * Whether the era negotiated is remembered for the origin: only when the negotiation could
   * have chosen the stateless era, over a transport the default order tries first.
   */
  readonly remembersEra?: boolean | undefined
  /** The configured secrets (tokens join them as they are obtained), for what the connection redacts itself. */
  readonly secrets?: ReadonlyArray<string> | undefined
}

/** What a transport of the connection is opened with. */
export interface CandidateContext extends Pick<OpenContext, "exchange"> {
  readonly inbound: Inbound
}

/**
 * A deadline that ends a negotiation after a failed attempt (a fallback) lists the attempts, the
 * one the deadline ended last, as a negotiation that failed does.
 */
const deadlineAfterAttempts = (
  deadline: McpConnectionError,
  current: McpClient.Observation["attempt"],
  failed: ReadonlyArray<Attempt>
): McpConnectionError =>
  failed.length === 0 || current === undefined
    ? deadline
    : withAttempts(deadline, [...failed, attemptOf(current.era, current.transport, deadline)])

/** What is known about the remote effect when a deadline passes at a stage. */
const deadlineOutcome = (stage: Stage): Outcome => stage === "config" || stage === "connect" || stage === "endpoint" ? "not-sent" : "unknown"

/**
 * The record of one pass of a discovery (a whole pass runs again after an authorization): its
 * stages as observations (in `into`), the stage it is at (what a deadline names), the
 * negotiation's attempt running and those that failed.
 */
const makeRecorder = (clock: Clock.Clock, budget: PhasePolicy.Budget, into: Array<McpClient.Observation>, resent: boolean) => {
  let stage: Stage = "connect"
  let stageStarted = clock.unsafeCurrentTimeMillis()
  let attempt: { readonly era: EraName; readonly transport: TransportKind } | undefined
  /** How each attempt of the negotiation failed, in order; none once a candidate was chosen. */
  const failedAttempts: Array<Attempt> = []
  let negotiated = false
  const observe = (at: Stage, bytes: number, outcome: McpClient.Observation["outcome"], more?: Partial<McpClient.Observation>) => {
    const now = clock.unsafeCurrentTimeMillis()
    into.push({
      operation: "discovery",
      stage: at,
      durationMs: now - stageStarted,
      bytes,
      outcome,
      attempt,
      ...(resent ? { resent: true } : {}),
      ...more
    })
    stageStarted = now
  }
  const exchange = (at: Stage): Exchange => {
    stage = at
    return { stage: at, phase: "discovery", budget }
  }
  return {
    stage: () => stage,
    exchange,
    observe,
    record: (at: Stage, bytes: number, failure?: McpConnectionError) => observe(at, bytes, failure?._tag ?? "ok"),
    failedAttempts,
    observer: {
      started: (era: EraName, transport: TransportKind) => {
        attempt = { era, transport }
      },
      failed: (failure: McpConnectionError) => observe(failure.stage, failure.observedBytes ?? 0, failure._tag)
    },
    /** A later failure (tools/list) is the session's, not the negotiation's: it has no attempts. */
    negotiated: () => {
      negotiated = true
    },
    deadline: () => deadlineAfterAttempts(Failures.deadline(exchange(stage), deadlineOutcome(stage)), attempt, negotiated ? [] : failedAttempts)
  }
}

/**
 * Discovers, then makes the connection on what it found, in the current scope. `renew` (a new
 * session) runs the same discovery again.
 */
export const connect = <R>(input: Input<R>): Effect.Effect<McpClient.Connection, McpConnectionError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const { auth, policy, responder } = input
    // Checked before any I/O: the transport and the revisions must leave something to try.
    const notifications = yield* Notifications.make(policy.logBuffer)
    // The server's messages, whatever stream brings them: requests to the connection's answering
    // fiber, notifications to whoever waits for them.
    const serverRequests = yield* ServerRequests.make(responder.answer)
    const cache = input.cache
    // What the server says changed leaves the response cache first.
    const inbound: Inbound = evictingInbound(cache, {
      request: serverRequests.request,
      // A URL elicitation's completion goes to those who expect it (`internal/urlElicitations.ts`).
      notification: (message) =>
        message.method === "notifications/elicitation/complete" ? responder.elicitations.complete(message.params) : notifications.take(message),
      reopened: notifications.reopened
    }, notifications.observeChanges)
    const plain = (stage: Stage): Exchange => ({ stage, phase: "discovery", budget: policy.discovery })
    if (Negotiation.usableCandidates(input.candidates({ exchange: plain, inbound }), input.revisions).length === 0) {
      return yield* Effect.fail(Failures.invalidConfig("revisions", "invalid-value"))
    }
    /** The log level the connection asked for (`setLogLevel`), for every session it has. */
    const logLevel: { current: McpSchema.LogLevel | undefined } = { current: undefined }
    const outerScope = yield* Effect.scope

    const discovery = (recorder: ReturnType<typeof makeRecorder>, annotate: Annotate, connectionScope: Scope.CloseableScope) =>
      Effect.gen(function*() {
        // The era remembered for the origin goes first (docs/DESIGN.md, "The era per origin").
        const now = yield* Clock.currentTimeMillis
        const remembered = cache?.internals.eras.get(cache.origin, now)
        let forgotten = false
        const candidates = EraCache.ordered(
          input.candidates({ exchange: recorder.exchange, inbound }),
          remembered,
          input.revisions,
          () => {
            forgotten = true
            cache?.internals.eras.forget(cache.origin)
          }
        )
        const negotiated = yield* Negotiation.negotiate(
          candidates,
          {
            clientInfo: input.clientInfo,
            exchange: recorder.exchange,
            record: recorder.record,
            maxInputRounds: policy.maxInputRounds,
            unsolicitedMaxBytes: policy.unsolicitedMaxBytes,
            logLevel: () => logLevel.current,
            capabilities: responder.capabilities,
            listening: { nextAcknowledgement: notifications.nextAcknowledgement, reopened: notifications.reopened, ended: notifications.endWatches },
            fulfil: responder.fulfil
          },
          input.revisions,
          connectionScope,
          recorder.observer,
          recorder.failedAttempts
        )
        recorder.negotiated()
        // Recorded when learnt, not each time it holds: the entry ages from the discovery that
        // learnt it, so a server connected to often is still probed again after `maxEraAge`.
        const held = remembered !== undefined && !forgotten && remembered.era === negotiated.session.era &&
          remembered.transport === negotiated.kind
        if (cache !== undefined && input.remembersEra === true && !held) {
          cache.internals.eras.set(cache.origin, { era: negotiated.session.era, transport: negotiated.kind }, yield* Clock.currentTimeMillis)
        }
        annotate({ "mcp.transport": negotiated.kind, "mcp.protocol.version": negotiated.session.protocolVersion })
        recorder.exchange("list-tools")
        const { cached: hit, value: listing } = yield* cached(
          cache,
          negotiated,
          "tools",
          undefined,
          "use",
          Effect.map(listAllTools(negotiated.session, policy, recorder.record), (listing) => ({
            value: listing,
            bytes: listing.bytes,
            hint: listing.cacheable
          }))
        )
        // Served by the cache: the stage is recorded, with nothing read.
        if (hit === true) recorder.observe("list-tools", 0, "ok", { cached: true })
        // The 2026-07-28 subscription is made now that the listing is answered (`internal/listen.ts`).
        if (negotiated.session.listener !== undefined) yield* negotiated.session.listener.start
        if (listing.excluded.size > 0) recorder.observe("list-tools", 0, "ok", { excludedTools: listing.excluded.size })
        // A new session of the 2025 revisions starts without the log level the connection asked
        // for (docs/DESIGN.md, "Server log messages"): it is asked for again.
        const level = logLevel.current
        if (level !== undefined && negotiated.session.era === "handshake") {
          const response = yield* negotiated.session.request("logging/setLevel", { level }, recorder.exchange("set-log-level"))
          recorder.record("set-log-level", response.bytes)
        }
        const discovered: Discovered<Listing> = { ...negotiated, listing }
        return discovered
      })

    /**
     * One pass under ONE deadline, in a scope of its own within the session's, closed if it fails
     * (before an authorization runs and the pass is made again).
     */
    const passScope = Effect.flatMap(Effect.scope, (session) => Scope.fork(session, ExecutionStrategy.sequential))
    const once = (into: Array<McpClient.Observation>, annotate: Annotate, resent: boolean, last: { stage: Stage }) =>
      Effect.flatMap(Effect.zip(Effect.clock, passScope), ([clock, connectionScope]) => {
        const recorder = makeRecorder(clock, policy.discovery, into, resent)
        last.stage = "connect"
        return withDeadline(discovery(recorder, annotate, connectionScope), policy.discovery.timeoutMs, recorder.deadline).pipe(
          Effect.ensuring(Effect.sync(() => {
            last.stage = recorder.stage()
          })),
          Effect.onExit((exit) => Exit.isFailure(exit) ? Scope.close(connectionScope, exit) : Effect.void)
        )
      })

    /**
     * A whole discovery (with the authorizations it needs), in the session's scope; the
     * observations of its stages go into `observations`.
     */
    const run = (observations: Array<McpClient.Observation>) =>
      clientSpan("mcp.connect", { "mcp.phase": "discovery" }, (annotate) => {
        const last = { stage: "connect" as Stage }
        return authorized(
          auth,
          "connect",
          maxDiscoveryAuthorizations,
          (resent) => once(observations, annotate, resent, last),
          (observation) => observations.push(observation)
        ).pipe(
          Effect.onExit((exit) => {
            // The span says where discovery ended, how it ended and what it read, as the call and
            // list spans do (docs/DESIGN.md, "Observation").
            const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
            const failed = failure?._tag === "Some" ? failure.value : undefined
            annotate({
              "mcp.stage": failed?.stage ?? last.stage,
              "mcp.outcome": failed?._tag ?? (Exit.isSuccess(exit) ? "ok" : "interrupted"),
              "mcp.observed_bytes": observations.reduce((sum, o) => sum + o.bytes, 0)
            })
            return Effect.void
          })
        )
      })

    const observations: Array<McpClient.Observation> = []
    // The sessions' scopes are made before the connection's own finalizer (`core.ts`), which
    // therefore runs first when the connection closes.
    const session = yield* LiveSession.first(run(observations))
    // A new session: the same discovery with the connection's services, in the scope the session
    // ref gives it; its observations its own (the connection records the renewal as one
    // `new-session` observation).
    const platform = yield* Effect.context<R>()
    const renew = Effect.flatMap(Effect.scope, (scope) => Effect.provide(run([]), Context.add(platform, Scope.Scope, scope)))
    return yield* ConnectionRuntime.make(
      {
        session,
        policy,
        scope: outerScope,
        auth,
        renew,
        notifications,
        droppedRequests: serverRequests.dropped,
        logLevel,
        elicitations: responder.elicitations,
        cache,
        fulfil: responder.fulfil,
        secrets: input.secrets ?? []
      },
      observations
    )
  })
