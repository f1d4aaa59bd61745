/**
 * The one record a failed run leaves on stderr, the exit code that goes with it, and the
 * scrubbing of secrets from it and from the debug output.
 *
 * The record of a library error is `McpConnectionError.toRecord` (its public fields, with
 * `tag`), its `remoteMessage` redacted once more with the run's secrets (`redactRecord`). Two tags belong to the CLI: `Interrupted` (SIGINT, exit 130) and `InternalError` (an
 * unknown defect, exit 8), whose records carry only where the run was and the limits in force.
 */
import { McpConnectionError, PhasePolicy } from "@phasebound/client"
import type { Limits, Phase, Reason, Stage } from "@phasebound/client/McpConnectionError"

export type CliTag = "Interrupted" | "InternalError"

export type RecordBody =
  | McpConnectionError.ErrorRecord
  | {
    readonly tag: CliTag
    readonly stage: Stage
    readonly phase: Phase
    readonly limits: Limits
    readonly outcome: "unknown"
    readonly retryable: false
  }

/** Where the run is: what an interruption or an internal error reports. */
export interface Position {
  readonly stage: Stage
  readonly phase: Phase
  readonly limits: Limits
}

export const defaultLimits: Limits = {
  timeoutMs: PhasePolicy.defaults.timeoutMs,
  maxBytes: PhasePolicy.defaults.maxBytes
}

export const startPosition: Position = { stage: "config", phase: "discovery", limits: defaultLimits }

/** An InvalidOption of the command line (stage config, nothing sent). */
export const invalidOption = (option: string, reason: Reason = "invalid-value"): McpConnectionError.InvalidOption =>
  new McpConnectionError.InvalidOption({
    stage: "config",
    phase: "discovery",
    limits: defaultLimits,
    option,
    reason,
    outcome: "not-sent",
    retryable: false
  })

export const cliRecord = (tag: CliTag, position: Position): RecordBody => ({
  tag,
  stage: position.stage,
  phase: position.phase,
  limits: limitsOf(position.limits),
  outcome: "unknown",
  retryable: false
})

/** The limits of a budget, and nothing else it carries (the structure bound stays out of records). */
const limitsOf = ({ idleTimeoutMs, maxBytes, timeoutMs }: Limits): Limits =>
  idleTimeoutMs === undefined ? { timeoutMs, maxBytes } : { timeoutMs, maxBytes, idleTimeoutMs }

export const exitCodes = {
  success: 0,
  toolError: 1,
  invalid: 2,
  auth: 3,
  deadline: 4,
  ceiling: 5,
  refusal: 6,
  protocol: 7,
  internal: 8,
  interrupted: 130,
  terminated: 143
} as const

export const exitCodeOf = (tag: RecordBody["tag"]): number => {
  switch (tag) {
    case "InvalidOption":
      return exitCodes.invalid
    case "Unauthorized":
    case "Forbidden":
    case "AuthorizationFailed":
      return exitCodes.auth
    case "DeadlineExceeded":
      return exitCodes.deadline
    case "ByteCeilingExceeded":
    case "LimitExceeded":
      return exitCodes.ceiling
    case "RemoteRefusal":
    // A refusal until the user completes URL elicitations (printed beside the record, see call.ts).
    case "UrlElicitationRequired":
      return exitCodes.refusal
    case "ProtocolViolation":
    case "TransportFailure":
    case "UpstreamFailure":
    case "SessionExpired":
    // The CLI gives no handlers; a program that does sees its own handler's failure here.
    case "HandlerFailed":
      return exitCodes.protocol
    case "InternalError":
      return exitCodes.internal
    case "Interrupted":
      return exitCodes.interrupted
  }
}

/**
 * The record with its one field of peer text, `remoteMessage`, redacted of `secrets`, the run's.
 * The library has redacted what the connection was given (header and environment values, URL
 * secrets, its tokens, the credentials of the proxy it went through; through `--catalog`, the
 * values of each config entry's inputs and variables too); the run's secrets add what only the
 * CLI knows: for one server, the values of its entry's inputs and variables wherever they went
 * (an argument, a URL's path: `ConfigImport.secretsOf`), and the credentials of every proxy
 * variable, the ones no request went through too. The other fields are a fixed vocabulary.
 */
export const redactRecord = (body: RecordBody, secrets: ReadonlyArray<string>): RecordBody =>
  "remoteMessage" in body && typeof body.remoteMessage === "string"
    ? { ...body, remoteMessage: McpConnectionError.redact(body.remoteMessage, secrets) }
    : body

/** The single stderr line of a failed run. */
export const recordLine = (body: RecordBody): string => `${JSON.stringify({ error: body })}\n`
