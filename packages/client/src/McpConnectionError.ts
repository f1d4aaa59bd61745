/**
 * The public error family of phasebound (docs/DESIGN.md, "Errors").
 *
 * Every error carries public, typed, finite fields only. A URL, a header, a credential, a
 * response body or a stack never reaches a public field, `message`, `toString()` or
 * `JSON.stringify`. The original cause stays in process as the non-enumerable `cause`.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"
import { invisibleCharacterPattern, redact } from "./internal/secrets.js"

export {
  /**
   * Replaces every given secret (3 characters or more) in a text with `[redacted]`, also
   * percent-encoded (either case), JSON-escaped or split by control characters.
   *
   * @since 0.1.0
   * @category redaction
   */
  redact,
  /**
   * The secret values of an HTTP target: header values (and each cookie or parameter value in
   * them), URL userinfo, query values and path segments of 8 characters or more, with the
   * forms they travel in (parts, percent-decoded, base64 and base64url).
   *
   * @since 0.1.0
   * @category redaction
   */
  secretsOf,
  /**
   * The secret forms of any values (a child's environment values, say).
   *
   * @since 0.1.0
   * @category redaction
   */
  secretValues
} from "./internal/secrets.js"

/**
 * Where the failure happened.
 *
 * @since 0.1.0
 * @category models
 */
export type Stage =
  | "config"
  | "connect"
  | "initialize"
  | "initialized"
  | "endpoint"
  | "discover"
  | "list-tools"
  | "ping"
  | "call"
  | "list-resources"
  | "list-resource-templates"
  | "read-resource"
  | "list-prompts"
  | "get-prompt"
  | "set-log-level"
  | "close"

/**
 * Which budget was in force.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = "discovery" | "call" | "session" | "authorization"

/**
 * Which step of an authorization failed (phase `authorization` only): the discovery of the
 * authority's metadata, the client's registration, the interactive authorization, the token
 * request, a refresh, or a step-up to a wider scope.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthorizationStep = "metadata" | "registration" | "authorization" | "token" | "refresh" | "step-up"

/**
 * The OAuth error codes phasebound repeats in `oauthError`: RFC 6749 §4.1.2.1 and §5.2, RFC 6750
 * §3.1, RFC 7591 §3.2.2 and RFC 8707 §2. Any other code is not repeated (it is the peer's text).
 *
 * @since 0.1.0
 * @category models
 */
export const oauthErrorCodes = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "access_denied",
  "unsupported_response_type",
  "server_error",
  "temporarily_unavailable",
  "invalid_token",
  "insufficient_scope",
  "invalid_redirect_uri",
  "invalid_client_metadata",
  "invalid_software_statement",
  "unapproved_software_statement",
  "invalid_target"
] as const

/**
 * @see oauthErrorCodes
 * @since 0.1.0
 * @category models
 */
export type OAuthError = typeof oauthErrorCodes[number]

/**
 * What is known about the remote effect of the request.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = "not-sent" | "not-applied" | "applied" | "unknown"

/**
 * The budget in force when the error happened (finite numbers).
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly timeoutMs: number
  readonly maxBytes: number
  /** A call given an idle timeout: the longest wait between two signs of progress. */
  readonly idleTimeoutMs?: number | undefined
}

/**
 * The public fields shared by every error of the family.
 *
 * @since 0.1.0
 * @category models
 */
export interface PublicFields {
  readonly stage: Stage
  readonly phase: Phase
  readonly limits: Limits
  readonly outcome: Outcome
  readonly retryable: boolean
  /** Bytes actually read before the client stopped reading. */
  readonly observedBytes?: number | undefined
  /** HTTP status, when one was received. */
  readonly status?: number | undefined
  /** JSON-RPC error code (RemoteRefusal, or a modern refusal inside another failure). */
  readonly code?: number | undefined
  /** RemoteRefusal only: the server's message, sanitized (see `sanitizeRemoteMessage`). */
  readonly remoteMessage?: string | undefined
  /** InvalidOption only: the option's path, such as `discovery.timeout`. */
  readonly option?: string | undefined
  /** A short reason from a fixed vocabulary, such as `invalid-utf8` or `missing-response`. */
  readonly reason?: Reason | undefined
  /** LimitExceeded only: which constraint, and the limit. */
  readonly limit?: Limit | undefined
  /** The client capability a server asked for without it being declared (`undeclared-capability`). */
  readonly capability?: "elicitation" | "sampling" | "roots" | undefined
  /** TransportFailure on stdio: the child's exit code, when it exited. */
  readonly exitCode?: number | undefined
  /** Phase `authorization` only: which step failed. */
  readonly authorizationStep?: AuthorizationStep | undefined
  /** The authority's OAuth error code, when it gave one of `oauthErrorCodes`. */
  readonly oauthError?: OAuthError | undefined
  /**
   * A discovery that tried more than one (era, transport) before it failed: every attempt in
   * order, the last one being this error (docs/DESIGN.md, "Negotiation"). Absent otherwise.
   */
  readonly attempts?: ReadonlyArray<Attempt> | undefined
}

/**
 * One attempt of a negotiation, in public fields only (no URL, header or body): the era and
 * transport tried, and how the attempt failed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Attempt {
  readonly era: "stateless" | "handshake"
  readonly transport: "streamable-http" | "sse" | "stdio"
  readonly tag: McpConnectionError["_tag"]
  readonly stage: Stage
  /** The HTTP status of the attempt's answer, when one was received. */
  readonly status?: number | undefined
  /** The JSON-RPC error code of a refusal. */
  readonly code?: number | undefined
  readonly reason?: Reason | undefined
  /** A stdio child that exited: its exit code. */
  readonly exitCode?: number | undefined
}

/**
 * The separate constraints a `LimitExceeded` names.
 *
 * @since 0.1.0
 * @category models
 */
export type Limit =
  | "maxTools"
  | "maxPages"
  | "maxSchemaBytes"
  | "maxListingBytes"
  | "maxDepth"
  | "maxNodes"
  | "maxInputRounds"
  | "maxSessionRenewals"

/**
 * A fixed vocabulary of reasons: never free text from a peer or an exception.
 *
 * @since 0.1.0
 * @category models
 */
export type Reason =
  | "not-finite"
  | "not-positive"
  | "not-integer"
  | "not-a-duration"
  | "unsafe-integer"
  | "invalid-url"
  | "invalid-value"
  | "invalid-utf8"
  | "invalid-json"
  | "invalid-message"
  | "invalid-result"
  | "unexpected-content-type"
  | "missing-response"
  | "unsupported-protocol-version"
  | "unknown-result-type"
  | "undeclared-capability"
  | "bad-endpoint"
  | "missing-endpoint"
  | "foreign-endpoint"
  | "connection-failed"
  | "connection-closed"
  | "stream-ended"
  | "process-exited"
  | "spawn-failed"
  | "session-closed"
  | "defect"
  /** Authorization discovery: no authorization server metadata at any of its well-known URLs. */
  | "no-authorization-server"
  /** Protected Resource Metadata names a `resource` other than the MCP server (RFC 9728 §3.3). */
  | "resource-mismatch"
  /**
   * Authorization Server Metadata names another `issuer` than the one it was fetched for (RFC
   * 8414 §3.3), or the MCP server names another authorization server than the one the
   * client's credentials are bound to (`auth.issuer`, or their first use).
   */
  | "issuer-mismatch"
  /**
   * An authorization URL that is neither `https` nor `http` on a loopback host (plain `http`
   * only when the MCP server is on loopback too), or, with `auth`, a server URL of that kind.
   */
  | "insecure-url"
  /** A redirect to another origin (or a redirect loop) was refused; nothing was sent there. */
  | "redirect-refused"
  /** An OAuth metadata document that does not decode strictly. */
  | "invalid-metadata"
  /** The token endpoint answered `invalid_grant`: the code, refresh token or credentials are no longer good; authorize anew. */
  | "invalid-grant"
  /** The token endpoint answered another OAuth error (RFC 6749 §5.2); the known code stays in process. */
  | "token-refused"
  /** A token response that does not decode strictly (a missing or non-Bearer `token_type`, say). */
  | "invalid-token-response"
  /** The registration endpoint refused the client (RFC 7591 §3.2.2), or its answer does not decode. */
  | "registration-refused"
  | "invalid-registration-response"
  /** No way to identify the client: no client id, no usable metadata document URL, no registration endpoint. */
  | "no-client-identity"
  /** The authorization server does not advertise PKCE with S256 (required by OAuth 2.1). */
  | "pkce-unsupported"
  /** The grant needs an interactive step (`authorize`) and none was given. */
  | "no-interactive-step"
  /** The interactive step failed or gave up (its cause stays in process). */
  | "interactive-step-failed"
  /** The redirect does not come back to the `redirectUri`, or carries no code. */
  | "invalid-redirect"
  /** The redirect's `state` is not the one sent (RFC 6749 §10.12). */
  | "state-mismatch"
  /** The redirect's `iss` is missing where required, or names another issuer (RFC 9207). */
  | "iss-mismatch"
  /** The authorization server refused at the interactive step (`error` on the redirect). */
  | "authorization-denied"
  /** Step-up to a wider scope was refused: the bound of attempts, or a scope that does not grow. */
  | "step-up-limit"
  /** Step-up past the configured `scope` of a client credentials grant was refused (it is the ceiling). */
  | "scope-ceiling"
  /** An authority URL on a loopback, private, link-local or reserved address that the MCP server may not name. */
  | "private-authority"
  /** A token was obtained but the server refused it again: nothing more is re-sent. */
  | "token-rejected"
  /** A call given an idle timeout saw no progress for that long (its deadline had not passed). */
  | "idle-timeout"
  /** A tool that declares an `outputSchema` returned no `structuredContent` (and no `isError`). */
  | "missing-structured-content"
  /** `structuredContent` does not match the tool's `outputSchema`, or the caller's output `Schema`. */
  | "structured-content-mismatch"
  /** The check of `structuredContent` against the `outputSchema` reached the call's deadline (`DeadlineExceeded`, outcome `applied`). */
  | "output-check"
  /** The check of `structuredContent` would cost more than its ceiling of steps (`ProtocolViolation`, outcome `applied`). */
  | "output-check-too-costly"

/** Fields in the order they appear in the public record. */
const recordKeys = [
  "stage",
  "phase",
  "limits",
  "observedBytes",
  "status",
  "code",
  "remoteMessage",
  "option",
  "reason",
  "limit",
  "capability",
  "exitCode",
  "authorizationStep",
  "oauthError",
  "attempts",
  "outcome",
  "retryable"
] as const

const attemptKeys = ["era", "transport", "tag", "stage", "status", "code", "reason", "exitCode"] as const

/** A copy of a record field: `limits` and `attempts` are copied, never shared. */
const copyField = (key: typeof recordKeys[number], value: unknown): unknown => {
  if (key === "limits") {
    // Only the limits' own fields: a budget handed in as it is carries more than limits.
    const { idleTimeoutMs, maxBytes, timeoutMs } = value as Limits
    return idleTimeoutMs === undefined ? { timeoutMs, maxBytes } : { timeoutMs, maxBytes, idleTimeoutMs }
  }
  if (key === "attempts") {
    return (value as ReadonlyArray<Attempt>).map((attempt) => {
      const copy: Record<string, unknown> = {}
      for (const name of attemptKeys) if (attempt[name] !== undefined) copy[name] = attempt[name]
      return copy as unknown as Attempt
    })
  }
  return value
}

/**
 * The plain record of an error: what `JSON.stringify` and the CLI print.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorRecord extends PublicFields {
  readonly tag: McpConnectionError["_tag"]
}

const describe = (self: PublicFields & { readonly _tag: string }): string => {
  const parts: Array<string> = [`${summary[self._tag as keyof typeof summary] ?? "failure"}`]
  if (self.option !== undefined) parts.push(`option ${self.option}`)
  if (self.reason !== undefined) parts.push(`reason ${self.reason}`)
  if (self.limit !== undefined) parts.push(`limit ${self.limit}`)
  if (self.capability !== undefined) parts.push(`capability ${self.capability}`)
  parts.push(`stage ${self.stage}`, `phase ${self.phase}`)
  if (self.authorizationStep !== undefined) parts.push(`authorization step ${self.authorizationStep}`)
  if (self.oauthError !== undefined) parts.push(`OAuth error ${self.oauthError}`)
  if (self.status !== undefined) parts.push(`HTTP ${self.status}`)
  if (self.code !== undefined) parts.push(`JSON-RPC code ${self.code}`)
  if (self.observedBytes !== undefined) parts.push(`read ${self.observedBytes} bytes`)
  if (self.exitCode !== undefined) parts.push(`exit code ${self.exitCode}`)
  if (self.attempts !== undefined) parts.push(`after ${self.attempts.length} attempts`)
  const idle = self.limits.idleTimeoutMs === undefined ? "" : `, idle ${self.limits.idleTimeoutMs} ms`
  parts.push(`limits ${self.limits.timeoutMs} ms / ${self.limits.maxBytes} bytes${idle}`, `outcome ${self.outcome}`)
  const head = parts.join(", ")
  return self.remoteMessage !== undefined ? `${head}: ${self.remoteMessage}` : head
}

const summary = {
  InvalidOption: "invalid option",
  DeadlineExceeded: "deadline exceeded",
  ByteCeilingExceeded: "byte ceiling exceeded",
  Unauthorized: "unauthorized",
  Forbidden: "forbidden",
  AuthorizationFailed: "authorization failed",
  UpstreamFailure: "upstream failure",
  RemoteRefusal: "the server refused the request",
  ProtocolViolation: "protocol violation",
  TransportFailure: "transport failure",
  SessionExpired: "session expired",
  LimitExceeded: "limit exceeded",
  HandlerFailed: "a client handler failed",
  InternalError: "internal error"
} as const

/**
 * The base of every error: public fields assigned as own enumerable properties, the cause kept
 * non-enumerable, and `message`, `toString` and `toJSON` derived from the public fields only.
 *
 * @since 0.1.0
 * @category errors
 */
export abstract class McpErrorBase extends Data.Error<{}> {
  abstract readonly _tag: keyof typeof summary
  declare readonly stage: Stage
  declare readonly phase: Phase
  declare readonly limits: Limits
  declare readonly outcome: Outcome
  declare readonly retryable: boolean
  declare readonly observedBytes?: number | undefined
  declare readonly status?: number | undefined
  declare readonly code?: number | undefined
  declare readonly remoteMessage?: string | undefined
  declare readonly option?: string | undefined
  declare readonly reason?: Reason | undefined
  declare readonly limit?: Limit | undefined
  declare readonly capability?: "elicitation" | "sampling" | "roots" | undefined
  declare readonly exitCode?: number | undefined
  declare readonly authorizationStep?: AuthorizationStep | undefined
  declare readonly oauthError?: OAuthError | undefined
  declare readonly attempts?: ReadonlyArray<Attempt> | undefined

  constructor(fields: PublicFields, cause?: unknown) {
    super()
    for (const key of recordKeys) {
      const value = fields[key]
      if (value !== undefined) (this as Record<string, unknown>)[key] = copyField(key, value)
    }
    // In process only: never enumerable, so never in a spread or JSON.
    Object.defineProperty(this, "cause", { value: cause, enumerable: false, writable: false, configurable: true })
  }

  override toString(): string {
    return `${this._tag}: ${this.message}`
  }

  override toJSON(): ErrorRecord {
    return toRecord(this as McpConnectionError)
  }
}

// `message` and `name` are derived on read, from typed fields only (never own properties).
Object.defineProperty(McpErrorBase.prototype, "message", {
  get(this: McpErrorBase) {
    return describe(this)
  },
  configurable: true
})
Object.defineProperty(McpErrorBase.prototype, "name", {
  get(this: McpErrorBase) {
    return this._tag
  },
  configurable: true
})

/** @since 0.1.0 @category errors */
export class InvalidOption extends McpErrorBase {
  readonly _tag = "InvalidOption" as const
}
/** @since 0.1.0 @category errors */
export class DeadlineExceeded extends McpErrorBase {
  readonly _tag = "DeadlineExceeded" as const
}
/** @since 0.1.0 @category errors */
export class ByteCeilingExceeded extends McpErrorBase {
  readonly _tag = "ByteCeilingExceeded" as const
}
/** @since 0.1.0 @category errors */
export class Unauthorized extends McpErrorBase {
  readonly _tag = "Unauthorized" as const
}
/** @since 0.1.0 @category errors */
export class Forbidden extends McpErrorBase {
  readonly _tag = "Forbidden" as const
}
/**
 * An authorization that could not be completed (phase `authorization`): the authority refused
 * (an OAuth error, with `oauthError`), its answer broke a rule of the flow (state, issuer), or
 * the configuration cannot authorize (no client identity, no interactive step). `reason` says
 * what, `authorizationStep` where.
 *
 * @since 0.1.0
 * @category errors
 */
export class AuthorizationFailed extends McpErrorBase {
  readonly _tag = "AuthorizationFailed" as const
}
/** @since 0.1.0 @category errors */
export class UpstreamFailure extends McpErrorBase {
  readonly _tag = "UpstreamFailure" as const
}
/** @since 0.1.0 @category errors */
export class RemoteRefusal extends McpErrorBase {
  readonly _tag = "RemoteRefusal" as const
}
/** @since 0.1.0 @category errors */
export class ProtocolViolation extends McpErrorBase {
  readonly _tag = "ProtocolViolation" as const
}
/** @since 0.1.0 @category errors */
export class TransportFailure extends McpErrorBase {
  readonly _tag = "TransportFailure" as const
}
/** @since 0.1.0 @category errors */
export class SessionExpired extends McpErrorBase {
  readonly _tag = "SessionExpired" as const
}
/** @since 0.1.0 @category errors */
export class LimitExceeded extends McpErrorBase {
  readonly _tag = "LimitExceeded" as const
}

/**
 * A handler the caller gave (elicitation, sampling, roots) failed while answering the server:
 * `capability` says which; what it failed with stays in process as the cause.
 *
 * @since 0.1.0
 * @category errors
 */
export class HandlerFailed extends McpErrorBase {
  readonly _tag = "HandlerFailed" as const
}

/**
 * A defect inside the library (a bug, not a remote failure): the defect itself stays in process
 * as the error's `cause`; the public fields say only where it happened (`reason: "defect"`).
 *
 * @since 0.1.0
 * @category errors
 */
export class InternalError extends McpErrorBase {
  readonly _tag = "InternalError" as const
}

/**
 * The union of every public error.
 *
 * @since 0.1.0
 * @category errors
 */
export type McpConnectionError =
  | InvalidOption
  | DeadlineExceeded
  | ByteCeilingExceeded
  | Unauthorized
  | Forbidden
  | AuthorizationFailed
  | UpstreamFailure
  | RemoteRefusal
  | ProtocolViolation
  | TransportFailure
  | SessionExpired
  | LimitExceeded
  | HandlerFailed
  | InternalError

const tags: ReadonlySet<string> = new Set(Object.keys(summary))

/**
 * @since 0.1.0
 * @category guards
 */
export const isMcpConnectionError = (u: unknown): u is McpConnectionError =>
  Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" && tags.has(u._tag) &&
  Predicate.hasProperty(u, "stage") && Predicate.hasProperty(u, "phase")

/**
 * The public record of an error, with only its public fields.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toRecord = (error: McpConnectionError): ErrorRecord => {
  const record: Record<string, unknown> = { tag: error._tag }
  for (const key of recordKeys) {
    const value = error[key]
    if (value !== undefined) record[key] = copyField(key, value)
  }
  return record as unknown as ErrorRecord
}

const classes = {
  InvalidOption,
  DeadlineExceeded,
  ByteCeilingExceeded,
  Unauthorized,
  Forbidden,
  AuthorizationFailed,
  UpstreamFailure,
  RemoteRefusal,
  ProtocolViolation,
  TransportFailure,
  SessionExpired,
  LimitExceeded,
  HandlerFailed,
  InternalError
} as const

/**
 * The attempt an error ends, in public fields only.
 *
 * @since 0.1.0
 * @category conversions
 */
export const attemptOf = (era: Attempt["era"], transport: Attempt["transport"], error: McpConnectionError): Attempt => ({
  era,
  transport,
  tag: error._tag,
  stage: error.stage,
  ...(error.status === undefined ? {} : { status: error.status }),
  ...(error.code === undefined ? {} : { code: error.code }),
  ...(error.reason === undefined ? {} : { reason: error.reason }),
  ...(error.exitCode === undefined ? {} : { exitCode: error.exitCode })
})

/**
 * The same error (same class, fields and cause) with `attempts`: what a negotiation that tried
 * more than one (era, transport) reports.
 *
 * @since 0.1.0
 * @category conversions
 */
export const withAttempts = <E extends McpConnectionError>(error: E, attempts: ReadonlyArray<Attempt>): E => {
  const fields: Record<string, unknown> = {}
  for (const key of recordKeys) if (error[key] !== undefined) fields[key] = error[key]
  fields["attempts"] = attempts
  const Class = classes[error._tag]
  return new Class(fields as unknown as PublicFields, error.cause) as E
}

const REMOTE_MESSAGE_MAX = 512

/**
 * Makes a peer's JSON-RPC error message safe to show: configured secret values are redacted
 * first (so a secret cut by the length limit cannot leak a prefix), also percent-encoded (either
 * case), JSON-escaped or split by control characters; then control and other invisible
 * characters become spaces (the record stays one line), URLs are replaced, and the result is
 * cut to 512 characters (docs/DESIGN.md, "Errors": Redaction).
 *
 * @since 0.1.0
 * @category redaction
 */
export const sanitizeRemoteMessage = (message: unknown, secrets: ReadonlyArray<string>): string | undefined => {
  if (typeof message !== "string") return undefined
  // Only a window of the message is worked on: redaction is linear, but over 16 MiB of a
  // hostile message it would hold the process for a second or more.
  const cut = message.length > REMOTE_MESSAGE_WINDOW
  // The redaction sees through control characters: `SEC\u0000RET` is redacted as `SECRET`; and
  // once they are spaces, again: a secret's space sent as a newline.
  let text = redact(cut ? message.slice(0, REMOTE_MESSAGE_WINDOW) : message, secrets)
  text = redact(text.replace(invisibleCharacterPattern, " "), secrets)
  // A URL can carry userinfo or query tokens that we were not told about.
  text = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, "[url]")
  // What the window cut may end with the start of a secret, which the redaction could not see
  // whole: when the replacements brought that end into view, it is left out.
  if (cut) {
    const guard = windowGuard(secrets)
    if (text.length <= REMOTE_MESSAGE_MAX + guard) text = text.slice(0, Math.max(0, text.length - guard))
  }
  return text.length > REMOTE_MESSAGE_MAX ? text.slice(0, REMOTE_MESSAGE_MAX) : text
}

/** How much of a message is worked on: far more than is ever shown. */
const REMOTE_MESSAGE_WINDOW = 64 * 1024

/** What is left out at the end of a cut window: room for the longest secret, split by a space between each two characters. */
const windowGuard = (secrets: ReadonlyArray<string>): number => 2 * secrets.reduce((longest, secret) => Math.max(longest, secret.length), 0) + 16
