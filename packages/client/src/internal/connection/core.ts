/**
 * What every operation of a connection runs on, once its discovery is done: the current session
 * (renewed when the server forgot the last, `internal/liveSession.ts`), the record of what each
 * operation cost, the release of what is in flight when the connection closes, and ONE primitive,
 * `observed`: a request on the current session under a deadline, recorded and traced. Each
 * operation (`callTool.ts`, `tools.ts`, `resources.ts`, `prompts.ts`, `logLevel.ts`, `ping.ts`)
 * is built on it (docs/DESIGN.md, "Release", "Observation").
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as ScopedRef from "effect/ScopedRef"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.js"
import { InvalidOption, type McpConnectionError, type Reason, type Stage } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import type { Exchange, Response } from "../transport/transport.js"
import { type Abandon, withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import { invalidResult, type Listing } from "../listing.js"
import * as LiveSession from "../liveSession.js"
import type { Discovered } from "../liveSession.js"
import type * as Notifications from "../notifications.js"
import type * as UrlElicitations from "../urlElicitations.js"
import type { ConnectionAuthorization } from "../oauth/authorizer.js"
import { clientSpan } from "../tracing.js"
import type { ConnectionCache } from "../cacheService.js"
import { sameJson } from "../sameJson.js"
import type { Responder } from "../inbound.js"
import { authorized } from "./authorized.js"

const spanNames = {
  "tools/call": "mcp.tools.call",
  "tools/list": "mcp.tools.list",
  ping: "mcp.ping",
  "resources/list": "mcp.resources.list",
  "resources/templates/list": "mcp.resources.templates.list",
  "resources/read": "mcp.resources.read",
  "prompts/list": "mcp.prompts.list",
  "prompts/get": "mcp.prompts.get",
  "logging/setLevel": "mcp.logging.set_level",
  "completion/complete": "mcp.completion.complete",
  "resources/subscribe": "mcp.resources.subscribe",
  "resources/unsubscribe": "mcp.resources.unsubscribe",
  "tasks/get": "mcp.tasks.get",
  "tasks/result": "mcp.tasks.result",
  "tasks/update": "mcp.tasks.update",
  "tasks/cancel": "mcp.tasks.cancel",
  "tasks/list": "mcp.tasks.list",
  "skills/list": "mcp.skills.list",
  "skills/get": "mcp.skills.get"
} as const

/** The operations of a connection after its discovery. */
export type Operation = keyof typeof spanNames

/** What a connection's operations are given. */
export interface Setup {
  /** The current session (`internal/liveSession.ts`). */
  readonly session: ScopedRef.ScopedRef<Discovered<Listing>>
  readonly policy: PhasePolicy.PhasePolicy
  /** The connection's scope: closing it closes the connection. */
  readonly scope: Scope.Scope
  readonly auth: ConnectionAuthorization | undefined
  /** A new discovery, in the scope it is given, for a new session. */
  readonly renew: Effect.Effect<Discovered<Listing>, McpConnectionError, Scope.Scope>
  readonly notifications: Notifications.Notifications
  /** The server's requests dropped because the connection's answering queue was full. */
  readonly droppedRequests: () => number
  /** The log level the connection asked for (`setLogLevel`), for every session it has. */
  readonly logLevel: { current: McpSchema.LogLevel | undefined }
  /** The URL elicitations the server may say are complete (`internal/urlElicitations.ts`). */
  readonly elicitations: UrlElicitations.UrlElicitations
  /** The response cache the connection's listings and reads go through (docs/DESIGN.md, "Response cache"). */
  readonly cache?: ConnectionCache | undefined
  /** Answers one input request with the caller's handlers (a 2026-07-28 task's `inputRequests`). */
  readonly fulfil?: Responder["fulfil"] | undefined
  /** The configured secrets, which a refusal the connection builds itself is redacted against (a failed task's error). */
  readonly secrets?: ReadonlyArray<string> | undefined
}

export interface Core extends Setup {
  readonly live: LiveSession.LiveSession<Listing>
  /** Records one operation's cost (the last 100 are kept). */
  readonly observe: (observation: McpClient.Observation) => void
  readonly observations: () => ReadonlyArray<McpClient.Observation>
  /** The tools and their changes, said when they differ (a new listing, a new session). */
  readonly toolList: SubscriptionRef.SubscriptionRef<ReadonlyArray<McpSchema.Tool>>
  readonly publish: (tools: ReadonlyArray<McpSchema.Tool>) => Effect.Effect<void>
  /**
   * Runs one operation on the current session (a new one first when the last was lost) under
   * its exchange's deadline, recording its cost and its span.
   */
  readonly observed: <A extends { readonly bytes: number }>(
    operation: Operation,
    exchange: Exchange,
    effect: (on: Discovered<Listing>) => Effect.Effect<A, McpConnectionError>,
    resent?: boolean,
    effectIdentity?: string
  ) => Effect.Effect<A, McpConnectionError>
  /**
   * An operation of the call phase, under the call budget or its validated overrides, sent a
   * second time only after a 401 or 403 refused it unprocessed. `refused` names an input found
   * invalid: refused before any I/O (a new session included).
   */
  /**
   * The hook that ends an operation at once when the connection closes (`withDeadline`'s
   * `Abandon`): `TransportFailure` `session-closed`, outcome `unknown`.
   */
  readonly abandonOnClose: (exchange: Exchange) => Abandon<McpConnectionError>
  readonly callPhase: <A>(
    operation: Operation,
    stage: Stage,
    options: PhasePolicy.BudgetOptions | undefined,
    refused: string | undefined,
    run: (on: Discovered<Listing>, exchange: Exchange) => Effect.Effect<{ readonly value: A; readonly bytes: number }, McpConnectionError>
  ) => Effect.Effect<A, McpConnectionError>
}

/** Whether two lists (of tools, prompts, resources) are the same, as the server sent them. */
export const sameList = <A>(a: ReadonlyArray<A>, b: ReadonlyArray<A>) => sameJson(a, b)

/** An input found invalid: refused before any I/O. */
export const refusedOption = (exchange: Exchange, option: string) =>
  Effect.fail(new InvalidOption({ ...Failures.fields(exchange), option, reason: "invalid-value", outcome: "not-sent", retryable: false }))

/** A result the server sent that is not what it must be: its fault, and it was applied. */
export const resultViolation = (exchange: Exchange, reason: Reason, bytes: number, cause?: unknown) =>
  Failures.withOutcome(Failures.protocol(exchange, reason, { observedBytes: bytes }, cause), "applied")

/** A request's result decoded strictly: the server's answer, or `invalid-result`. */
export const decodedAs = <A>(decode: (u: unknown) => Either.Either<A, unknown>, exchange: Exchange) => (response: Response) => {
  const decoded = decode(response.result)
  return Either.isRight(decoded)
    ? Effect.succeed({ value: decoded.right, bytes: response.bytes })
    : Effect.fail(invalidResult(exchange, response.bytes)(decoded.left))
}

const closedFailure = (exchange: Exchange) => Failures.transport(exchange, "session-closed", "not-sent")

export const make = (setup: Setup): Effect.Effect<Core> =>
  Effect.gen(function*() {
    const { auth, policy, scope } = setup
    const discovered = yield* ScopedRef.get(setup.session)
    const toolList = yield* SubscriptionRef.make(discovered.listing.tools)
    const kept: Array<McpClient.Observation> = []
    let closed = false
    const observe = (observation: McpClient.Observation) => {
      kept.push(observation)
      if (kept.length > 100) kept.shift()
    }
    let published = discovered.listing.tools
    const publish = (tools: ReadonlyArray<McpSchema.Tool>) =>
      Effect.suspend(() => {
        if (sameList(tools, published)) return Effect.void
        published = tools
        return SubscriptionRef.set(toolList, tools)
      })
    const live = yield* LiveSession.make(setup.session, {
      renew: setup.renew,
      maxRenewals: policy.maxSessionRenewals,
      scope,
      onRenewal: ({ durationMs, outcome }, renewed) =>
        Effect.suspend(() => {
          observe({ operation: "new-session", stage: "connect", durationMs, bytes: 0, outcome })
          // The new session has none of the last one's resource subscriptions: they are made
          // again (docs/DESIGN.md, "Subscriptions").
          return renewed === undefined ? Effect.void : Effect.zipRight(publish(renewed.listing.tools), setup.notifications.renewed)
        }),
      closedFailure
    })
    // Operations in flight, ended at once when the connection closes (docs/DESIGN.md, "Release").
    const inFlight = new Set<() => void>()
    // Closing the connection's scope marks it closed first, so later calls fail without I/O, and
    // fails what is in flight (its requests released) before the sessions are released.
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        closed = true
        for (const abandon of [...inFlight]) abandon()
      })
    )

    /** A request in flight when the connection closed may have reached the server: `unknown`. */
    const abandonOnClose = (exchange: Exchange): Abandon<McpConnectionError> => ({
      register: (hook) => {
        inFlight.add(hook)
        return () => void inFlight.delete(hook)
      },
      failure: () => Failures.transport(exchange, "session-closed", "unknown")
    })

    const observed: Core["observed"] = (operation, exchange, effect, resent = false, effectIdentity) =>
      Effect.flatMap(
        Effect.suspend(() => closed ? Effect.fail(closedFailure(exchange)) : live.ready(exchange)),
        (on) =>
          clientSpan(spanNames[operation], {
            "mcp.phase": exchange.phase,
            "mcp.stage": exchange.stage,
            "mcp.transport": on.kind,
            "mcp.protocol.version": on.session.protocolVersion,
            ...(effectIdentity === undefined ? {} : { "mcp.effect_identity": effectIdentity })
          }, (annotate) =>
            Effect.clockWith((clock) => {
              if (closed) return Effect.fail(closedFailure(exchange))
              const started = clock.unsafeCurrentTimeMillis()
              return Effect.onExit(
                withDeadline(effect(on), exchange.budget.timeoutMs, () => Failures.deadline(exchange, "unknown"), abandonOnClose(exchange)),
                (exit) =>
                  Effect.sync(() => {
                    const durationMs = clock.unsafeCurrentTimeMillis() - started
                    const record = (outcome: McpClient.Observation["outcome"], bytes: number) => {
                      observe({
                        operation,
                        stage: exchange.stage,
                        durationMs,
                        bytes,
                        outcome,
                        ...(resent ? { resent } : {}),
                        ...(effectIdentity === undefined ? {} : { effectIdentity })
                      })
                      annotate({ "mcp.outcome": outcome, "mcp.observed_bytes": bytes })
                    }
                    if (Exit.isSuccess(exit)) {
                      live.settle(on, undefined)
                      // Answered by the response cache (docs/DESIGN.md, "Response cache").
                      if ((exit.value as { readonly cached?: boolean }).cached === true) {
                        observe({ operation, stage: exchange.stage, durationMs, bytes: 0, outcome: "ok", cached: true })
                        return annotate({ "mcp.outcome": "ok", "mcp.observed_bytes": 0, "mcp.cache": "hit" })
                      }
                      return record("ok", exit.value.bytes)
                    }
                    const failure = Cause.failureOption(exit.cause)
                    if (failure._tag === "Some") {
                      // A -32042 names elicitations the server may then say are complete.
                      if (failure.value._tag === "UrlElicitationRequired") {
                        for (const { elicitationId } of failure.value.elicitations) setup.elicitations.expect(elicitationId!)
                      }
                      live.settle(on, failure.value)
                      record(failure.value._tag, failure.value.observedBytes ?? 0)
                    }
                    // Interrupted or a defect: nothing to record.
                  })
              )
            }))
      )

    const callPhase: Core["callPhase"] = (operation, stage, options, refused, run) =>
      Effect.flatMap(PhasePolicy.callBudget(policy, options), (budget) => {
        const exchange: Exchange = { stage, phase: "call", budget }
        if (refused !== undefined) return refusedOption(exchange, refused)
        return Effect.map(
          authorized(auth, stage, 1, (resent) => observed(operation, exchange, (on) => run(on, exchange), resent), observe),
          (done) => done.value
        )
      })

    return { ...setup, live, observe, observations: () => [...kept], toolList, publish, observed, callPhase, abandonOnClose }
  })
