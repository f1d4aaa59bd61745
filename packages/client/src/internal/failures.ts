/**
 * Builds the public errors of one exchange: stage, phase and limits come from the exchange,
 * outcome and retryability from what is known about the remote effect.
 *
 * Outcome rules (docs/DESIGN.md, "No replay, outcomes"):
 * - nothing reached the server: `not-sent`, retryable;
 * - the server refused before processing (401, 403, 4xx, JSON-RPC error, expired session):
 *   `not-applied`;
 * - a response arrived, even one refused for its size: `applied`;
 * - anything else after the request left (deadline, reset, 5xx, malformed answer): `unknown`.
 * Discovery requests are idempotent, so a transient discovery failure is retryable; a call
 * is retryable only when it was not sent, or when the server refused it for a session it had
 * forgotten (`SessionExpired`: the connection starts a new one, see `liveSession.ts`).
 */
import {
  ByteCeilingExceeded,
  InvalidOption,
  DeadlineExceeded,
  Forbidden,
  InternalError,
  type McpConnectionError,
  type Outcome,
  type Phase,
  ProtocolViolation,
  type PublicFields,
  type Reason,
  RemoteRefusal,
  SessionExpired,
  toRecord,
  TransportFailure,
  Unauthorized,
  UpstreamFailure,
  UrlElicitationRequired
} from "../McpConnectionError.js"
import { refusalElicitations } from "./elicitationUrl.js"
import { defaults } from "../PhasePolicy.js"
import type { Exchange } from "./transport/transport.js"

/**
 * An option refused while the configuration is checked, before any I/O: stage `config`, the
 * default limits (none are in force yet), `not-sent`.
 */
export const invalidConfig = (
  option: string,
  reason: "invalid-url" | "invalid-value" | "invalid-json" = "invalid-value",
  phase: Phase = "discovery"
): InvalidOption =>
  new InvalidOption({
    stage: "config",
    phase,
    limits: { timeoutMs: defaults.timeoutMs, maxBytes: defaults.maxBytes },
    option,
    reason,
    outcome: "not-sent",
    retryable: false
  })

/** The public fields every error of an exchange shares: where, in which phase, under which limits. */
export const fields = (exchange: Exchange) => ({
  stage: exchange.stage,
  phase: exchange.phase,
  limits: exchange.budget.idleTimeoutMs === undefined
    ? { timeoutMs: exchange.budget.timeoutMs, maxBytes: exchange.budget.maxBytes }
    : { timeoutMs: exchange.budget.timeoutMs, maxBytes: exchange.budget.maxBytes, idleTimeoutMs: exchange.budget.idleTimeoutMs },
  authorizationStep: exchange.authorizationStep
})

const transientRetryable = (exchange: Exchange, outcome: Outcome): boolean =>
  outcome === "not-sent" || (exchange.phase === "discovery" && outcome !== "applied")

/** @internal */
export const deadline = (exchange: Exchange, outcome: Outcome, observedBytes?: number): DeadlineExceeded =>
  new DeadlineExceeded({
    ...fields(exchange),
    observedBytes,
    outcome,
    retryable: transientRetryable(exchange, outcome)
  })

/** A call with an idle timeout that saw no progress for that long: like its deadline, `unknown`. */
export const idle = (exchange: Exchange): DeadlineExceeded =>
  new DeadlineExceeded({
    ...fields(exchange),
    reason: "idle-timeout",
    outcome: "unknown",
    retryable: transientRetryable(exchange, "unknown")
  })

/** @internal */
export const ceiling = (exchange: Exchange, observedBytes: number, status?: number, cause?: unknown) =>
  new ByteCeilingExceeded({ ...fields(exchange), observedBytes, status, outcome: "applied", retryable: false }, cause)

/** @internal */
export const protocol = (
  exchange: Exchange,
  reason: Reason,
  details: { readonly observedBytes?: number; readonly status?: number; readonly code?: number } = {},
  cause?: unknown
) =>
  new ProtocolViolation({
    ...fields(exchange),
    reason,
    observedBytes: details.observedBytes,
    status: details.status,
    code: details.code,
    // At readiness (the legacy endpoint) no request has been sent yet.
    outcome: exchange.stage === "endpoint" ? "not-sent" : "unknown",
    retryable: false
  }, cause)

/** @internal */
export const transport = (
  exchange: Exchange,
  reason: Reason,
  outcome: Outcome,
  details: { readonly observedBytes?: number; readonly exitCode?: number; readonly status?: number | undefined } = {},
  cause?: unknown
) =>
  new TransportFailure({
    ...fields(exchange),
    reason,
    observedBytes: details.observedBytes,
    status: details.status,
    exitCode: details.exitCode,
    outcome,
    retryable: transientRetryable(exchange, outcome)
  }, cause)

/**
 * A defect (a bug) that stopped something a request was waiting on: the cause stays in process.
 *
 * @internal
 */
export const internal = (exchange: Exchange, outcome: Outcome, cause: unknown) =>
  new InternalError({ ...fields(exchange), reason: "defect", outcome, retryable: false }, cause)

/** @internal */
export const sessionExpired = (exchange: Exchange, outcome: Outcome, status?: number) =>
  new SessionExpired({ ...fields(exchange), status, outcome, retryable: true })

/**
 * A JSON-RPC error as a public error. `-32042` (URL elicitation required, 2025-11-25; the code
 * is reserved and never reused, so it means this whatever the revision) is
 * `UrlElicitationRequired` when every elicitation it names can be handed on, and a
 * `RemoteRefusal` with `reason: "invalid-elicitation"` when not (docs/DESIGN.md, "Client
 * capabilities", URL mode). Outside discovery only.
 *
 * @internal
 */
export const remoteRefusal = (
  exchange: Exchange,
  code: number,
  remoteMessage: string | undefined,
  details: { readonly status?: number; readonly observedBytes?: number } = {},
  wire?: WireError
): RemoteRefusal | UrlElicitationRequired => {
  const common = {
    ...fields(exchange),
    code,
    remoteMessage,
    status: details.status,
    observedBytes: details.observedBytes,
    outcome: "not-applied" as const
  }
  // Discovery asks for nothing a user completes; there, as before, a refusal steers the negotiation.
  if (code === urlElicitationRequiredCode && exchange.phase !== "discovery") {
    return refusalElicitations(wire?.data) === undefined
      ? new RemoteRefusal({ ...common, reason: "invalid-elicitation", retryable: false }, wire)
      : new UrlElicitationRequired({ ...common, retryable: true }, wire)
  }
  return new RemoteRefusal({ ...common, retryable: false }, wire)
}

/** JSON-RPC `-32042`: the request needs URL elicitations completed first (2025-11-25). */
export const urlElicitationRequiredCode = -32042

/** The JSON-RPC error object as the server sent it: in process only, never in public fields. */
export interface WireError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/**
 * The wire error object behind a `RemoteRefusal` (its cause), for decisions the library makes
 * from its `data` (the versions a server supports); `undefined` for any other error.
 *
 * @internal
 */
export const wireError = (error: McpConnectionError): WireError | undefined => {
  if (error._tag !== "RemoteRefusal" && error._tag !== "UrlElicitationRequired") return undefined
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && typeof (cause as WireError).code === "number"
    ? cause as WireError
    : undefined
}

/**
 * The same error with another outcome: the failure of a step taken after the request itself
 * was refused unprocessed (an authorization after a 401) says what became of that request.
 *
 * @internal
 */
export const withOutcome = <E extends McpConnectionError>(error: E, outcome: Outcome): E => {
  const Class = error.constructor as new(fields: PublicFields, cause?: unknown) => E
  return new Class({ ...toRecord(error), outcome }, error.cause)
}

/** @internal */
export const httpStatus = (
  exchange: Exchange,
  status: number,
  observedBytes?: number,
  cause?: unknown,
  outcome?: Outcome
) => {
  const common = { ...fields(exchange), status, observedBytes }
  if (outcome !== undefined) {
    const known = { ...common, outcome, retryable: false }
    return status === 401
      ? new Unauthorized(known, cause)
      : status === 403
      ? new Forbidden(known, cause)
      : new UpstreamFailure(known, cause)
  }
  if (status === 401) return new Unauthorized({ ...common, outcome: "not-applied", retryable: false }, cause)
  if (status === 403) return new Forbidden({ ...common, outcome: "not-applied", retryable: false }, cause)
  if (status >= 500) {
    // 502/503/504 come from gateways as often as from the server: the effect is unknown.
    return new UpstreamFailure({ ...common, outcome: "unknown", retryable: exchange.phase === "discovery" }, cause)
  }
  return new UpstreamFailure({ ...common, outcome: "not-applied", retryable: false }, cause)
}
