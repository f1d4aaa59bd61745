/**
 * The public error family of phasebound (docs/DESIGN.md, "Errors").
 *
 * Every error carries public, typed, finite fields only. A URL, a header, a credential, a
 * response body or a stack never reaches a public field, `message`, `toString()` or
 * `JSON.stringify`. The original cause stays in process as the non-enumerable `cause`.
 *
 * Every error is a `Schema.TaggedError` over one struct of public fields (`PublicFields`), and
 * `McpConnectionError` is also the Schema of their union: encoding an error gives its `_tag` and
 * public fields, never its cause; decoding gives back an instance of its class.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { UrlElicitation } from "./ClientHandlers.js"
import { refusalElicitations } from "./internal/elicitationUrl.js"
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
   * Lists of secrets as one, without repeats or empty values, longest first (a secret that
   * holds another is redacted whole).
   *
   * @since 0.1.0
   * @category redaction
   */
  mergeSecrets,
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
export const Stage = Schema.Literal(
  "config",
  "connect",
  "initialize",
  "initialized",
  "endpoint",
  "discover",
  "list-tools",
  "ping",
  "call",
  "list-resources",
  "list-resource-templates",
  "read-resource",
  "list-prompts",
  "get-prompt",
  "set-log-level",
  "list-skills",
  "get-skill",
  "read-skill",
  "complete",
  /** Awaiting the completion of a URL elicitation (`awaitElicitation`). */
  "elicitation",
  "subscribe-resource",
  "unsubscribe-resource",
  "close",
  // Tasks (docs/DESIGN.md, "Tasks")
  "get-task",
  "task-result",
  "update-task",
  "cancel-task",
  "list-tasks"
)

/** @since 0.1.0 @category models */
export type Stage = typeof Stage.Type

/**
 * Which budget was in force.
 *
 * @since 0.1.0
 * @category models
 */
export const Phase = Schema.Literal("discovery", "call", "session", "authorization")

/** @since 0.1.0 @category models */
export type Phase = typeof Phase.Type

/**
 * Which step of an authorization failed (phase `authorization` only): the discovery of the
 * authority's metadata, the client's registration, the interactive authorization, the token
 * request, a refresh, or a step-up to a wider scope.
 *
 * @since 0.1.0
 * @category models
 */
export const AuthorizationStep = Schema.Literal("metadata", "registration", "authorization", "token", "refresh", "step-up")

/** @since 0.1.0 @category models */
export type AuthorizationStep = typeof AuthorizationStep.Type

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
export const OAuthError = Schema.Literal(...oauthErrorCodes)

/**
 * @see oauthErrorCodes
 * @since 0.1.0
 * @category models
 */
export type OAuthError = typeof OAuthError.Type

/**
 * What is known about the remote effect of the request.
 *
 * @since 0.1.0
 * @category models
 */
export const Outcome = Schema.Literal("not-sent", "not-applied", "applied", "unknown")

/** @since 0.1.0 @category models */
export type Outcome = typeof Outcome.Type

/**
 * The separate constraints a `LimitExceeded` names.
 *
 * @since 0.1.0
 * @category models
 */
export const Limit = Schema.Literal(
  "maxTools",
  "maxPages",
  "maxSchemaBytes",
  "maxListingBytes",
  "maxDepth",
  "maxNodes",
  "maxInputRounds",
  "maxSessionRenewals"
)

/** @since 0.1.0 @category models */
export type Limit = typeof Limit.Type

/**
 * A fixed vocabulary of reasons: never free text from a peer or an exception.
 *
 * @since 0.1.0
 * @category models
 */
export const Reason = Schema.Literal(
  "not-finite",
  "not-positive",
  "not-integer",
  "not-a-duration",
  "unsafe-integer",
  "invalid-url",
  "invalid-value",
  "invalid-utf8",
  "invalid-json",
  "invalid-message",
  "invalid-result",
  "unexpected-content-type",
  "missing-response",
  "unsupported-protocol-version",
  "unknown-result-type",
  "undeclared-capability",
  "bad-endpoint",
  "missing-endpoint",
  "foreign-endpoint",
  "connection-failed",
  "connection-closed",
  "stream-ended",
  "process-exited",
  "spawn-failed",
  "session-closed",
  "defect",
  /** Authorization discovery: no authorization server metadata at any of its well-known URLs. */
  "no-authorization-server",
  /** Protected Resource Metadata names a `resource` other than the MCP server (RFC 9728 §3.3). */
  "resource-mismatch",
  /**
   * Authorization Server Metadata names another `issuer` than the one it was fetched for (RFC
   * 8414 §3.3), or the MCP server names another authorization server than the one the
   * client's credentials are bound to (`auth.issuer`, or their first use).
   */
  "issuer-mismatch",
  /**
   * An authorization URL that is neither `https` nor `http` on a loopback host (plain `http`
   * only when the MCP server is on loopback too), or, with `auth`, a server URL of that kind.
   */
  "insecure-url",
  /** A redirect to another origin (or a redirect loop) was refused; nothing was sent there. */
  "redirect-refused",
  /** An OAuth metadata document that does not decode strictly. */
  "invalid-metadata",
  /** The token endpoint answered `invalid_grant`: the code, refresh token or credentials are no longer good; authorize anew. */
  "invalid-grant",
  /** The token endpoint answered another OAuth error (RFC 6749 §5.2); the known code stays in process. */
  "token-refused",
  /** A token response that does not decode strictly (a missing or non-Bearer `token_type`, say). */
  "invalid-token-response",
  /** The registration endpoint refused the client (RFC 7591 §3.2.2), or its answer does not decode. */
  "registration-refused",
  "invalid-registration-response",
  /** No way to identify the client: no client id, no usable metadata document URL, no registration endpoint. */
  "no-client-identity",
  /** The authorization server does not advertise PKCE with S256 (required by OAuth 2.1). */
  "pkce-unsupported",
  /** The grant needs an interactive step (`authorize`) and none was given. */
  "no-interactive-step",
  /** The interactive step failed or gave up (its cause stays in process). */
  "interactive-step-failed",
  /** The redirect does not come back to the `redirectUri`, or carries no code. */
  "invalid-redirect",
  /** The redirect's `state` is not the one sent (RFC 6749 §10.12). */
  "state-mismatch",
  /** The redirect's `iss` is missing where required, or names another issuer (RFC 9207). */
  "iss-mismatch",
  /** The authorization server refused at the interactive step (`error` on the redirect). */
  "authorization-denied",
  /** Step-up to a wider scope was refused: the bound of attempts, or a scope that does not grow. */
  "step-up-limit",
  /** Step-up past the configured `scope` of a client credentials grant was refused (it is the ceiling). */
  "scope-ceiling",
  /** An authority URL on a loopback, private, link-local or reserved address that the MCP server may not name. */
  "private-authority",
  /** A token was obtained but the server refused it again: nothing more is re-sent. */
  "token-rejected",
  /** A call given an idle timeout saw no progress for that long (its deadline had not passed). */
  "idle-timeout",
  /** A tool that declares an `outputSchema` returned no `structuredContent` (and no `isError`). */
  "missing-structured-content",
  /** `structuredContent` does not match the tool's `outputSchema`, or the caller's output `Schema`. */
  "structured-content-mismatch",
  /**
   * The check of `structuredContent` against the `outputSchema` reached the call's deadline, or
   * the caller's decoding of it (`callToolDecoded`) ended past it (`DeadlineExceeded`, outcome `applied`).
   */
  "output-check",
  /** The check of `structuredContent` would cost more than its ceiling of steps (`ProtocolViolation`, outcome `applied`). */
  "output-check-too-costly",
  /** The redaction of a result's secrets (`redact: true`) reached the call's deadline (`DeadlineExceeded`, outcome `applied`). */
  "redaction",
  /**
   * A URL elicitation phasebound would not hand on (docs/SECURITY.md, "1. The MCP server"): not
   * `https` (nor `http` to loopback), userinfo, invisible characters, too long, no
   * `elicitationId` where the revision requires one, or a `-32042` whose elicitations are not
   * all of that kind.
   */
  "invalid-elicitation",
  /** A task ended `cancelled` where its result was awaited (2026-07-28: a cancelled task has none). */
  "task-cancelled",
  /**
   * A proxy refused to carry the request (`TransportFailure`, outcome `not-sent`): its `CONNECT`
   * answered with a status other than 200 (in `status`), docs/DESIGN.md, "Proxies".
   */
  "proxy-refused",
  /** The proxy asked for credentials (`407`), or refused the ones in the proxy URL. */
  "proxy-auth-required",
  /** A skill file whose byte length is not the size its skill entry lists (docs/DESIGN.md, "Skills"). */
  "skill-size-mismatch",
  /** A skill file whose SHA-256 is not the digest its skill entry lists. */
  "skill-digest-mismatch",
  /** A `SKILL.md` whose frontmatter differs from its skill entry's, field by field. */
  "skill-frontmatter-mismatch",
  /** A `SKILL.md` without frontmatter, or whose YAML is outside what the reader accepts (anchors, aliases, tags, duplicate keys, ...). */
  "skill-frontmatter-invalid",
  /** A `SKILL.md` frontmatter past the reader's ceilings of bytes, depth or nodes (`McpSkills.frontmatterLimits`). */
  "skill-frontmatter-too-large",
  /** A catalog name whose tool the server's allow or block list refuses (docs/DESIGN.md, "Catalog"): nothing was sent. */
  "tool-blocked",
  /** A catalog name that more than one tool maps to (docs/DESIGN.md, "Catalog"): none of them is called. */
  "tool-conflict",
  /** A catalog name that no listed tool has (docs/DESIGN.md, "Catalog"): nothing was sent. */
  "unknown-tool"
)

/** @since 0.1.0 @category models */
export type Reason = typeof Reason.Type

/**
 * The tags of the family: one error class each (below), and `McpConnectionError` their union.
 *
 * @since 0.1.0
 * @category models
 */
export const Tag = Schema.Literal(
  "InvalidOption",
  "DeadlineExceeded",
  "ByteCeilingExceeded",
  "Unauthorized",
  "Forbidden",
  "AuthorizationFailed",
  "UpstreamFailure",
  "RemoteRefusal",
  "ProtocolViolation",
  "TransportFailure",
  "SessionExpired",
  "LimitExceeded",
  "HandlerFailed",
  "InternalError",
  "UrlElicitationRequired"
)

/** @since 0.1.0 @category models */
export type Tag = typeof Tag.Type

/** The client capability a server asked for without it being declared, or whose handler failed. */
const Capability = Schema.Literal("elicitation", "sampling", "roots")

/**
 * The budget in force when the error happened (finite numbers).
 *
 * @since 0.1.0
 * @category models
 */
export const Limits = Schema.Struct({
  timeoutMs: Schema.Number,
  maxBytes: Schema.Number,
  /** A call given an idle timeout: the longest wait between two signs of progress. */
  idleTimeoutMs: Schema.optional(Schema.Number)
})

/** @since 0.1.0 @category models */
export interface Limits extends Schema.Schema.Type<typeof Limits> {}

/**
 * One attempt of a negotiation, in public fields only (no URL, header or body): the era and
 * transport tried, and how the attempt failed.
 *
 * @since 0.1.0
 * @category models
 */
export const Attempt = Schema.Struct({
  era: Schema.Literal("stateless", "handshake"),
  transport: Schema.Literal("streamable-http", "sse", "stdio"),
  tag: Tag,
  stage: Stage,
  /** The HTTP status of the attempt's answer, when one was received. */
  status: Schema.optional(Schema.Number),
  /** The JSON-RPC error code of a refusal. */
  code: Schema.optional(Schema.Number),
  reason: Schema.optional(Reason),
  /** A stdio child that exited: its exit code. */
  exitCode: Schema.optional(Schema.Number)
})

/** @since 0.1.0 @category models */
export interface Attempt extends Schema.Schema.Type<typeof Attempt> {}

/**
 * The public fields shared by every error of the family, in the order of its record.
 *
 * @since 0.1.0
 * @category models
 */
export const PublicFields = Schema.Struct({
  stage: Stage,
  phase: Phase,
  limits: Limits,
  /** Bytes actually read before the client stopped reading. */
  observedBytes: Schema.optional(Schema.Number),
  /** HTTP status, when one was received. */
  status: Schema.optional(Schema.Number),
  /** JSON-RPC error code (RemoteRefusal, or a modern refusal inside another failure). */
  code: Schema.optional(Schema.Number),
  /** RemoteRefusal only: the server's message, sanitized (see `sanitizeRemoteMessage`). */
  remoteMessage: Schema.optional(Schema.String),
  /** InvalidOption only: the option's path, such as `discovery.timeout`. */
  option: Schema.optional(Schema.String),
  /** A short reason from a fixed vocabulary, such as `invalid-utf8` or `missing-response`. */
  reason: Schema.optional(Reason),
  /** LimitExceeded only: which constraint, and the limit. */
  limit: Schema.optional(Limit),
  /** The client capability a server asked for without it being declared (`undeclared-capability`). */
  capability: Schema.optional(Capability),
  /** TransportFailure on stdio: the child's exit code, when it exited. */
  exitCode: Schema.optional(Schema.Number),
  /** Phase `authorization` only: which step failed. */
  authorizationStep: Schema.optional(AuthorizationStep),
  /** The authority's OAuth error code, when it gave one of `oauthErrorCodes`. */
  oauthError: Schema.optional(OAuthError),
  /**
   * A discovery that tried more than one (era, transport) before it failed: every attempt in
   * order, the last one being this error (docs/DESIGN.md, "Negotiation"). Absent otherwise.
   */
  attempts: Schema.optional(Schema.Array(Attempt)),
  /**
   * The configured name of the server the error is about, where a set of named servers reported
   * it (`McpServers`, `McpCatalog`): the name the caller gave, never its URL or command.
   */
  server: Schema.optional(Schema.String),
  outcome: Outcome,
  retryable: Schema.Boolean
})

/** @since 0.1.0 @category models */
export interface PublicFields extends Schema.Schema.Type<typeof PublicFields> {}

/**
 * The plain record of an error: what `JSON.stringify` and the CLI print.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorRecord extends PublicFields {
  readonly tag: Tag
}

/** The keys a struct defines, in its order. */
const keysOf = <A>(struct: { readonly fields: { readonly [K in keyof A]: unknown } }): ReadonlyArray<keyof A> => Object.keys(struct.fields) as Array<keyof A>

const recordKeys = keysOf<PublicFields>(PublicFields)
const limitsKeys = keysOf<Limits>(Limits)
const attemptKeys = keysOf<Attempt>(Attempt)

/** The defined fields of `value` among `keys`, in their order: a new object. */
const pick = <A extends object>(keys: ReadonlyArray<keyof A>, value: A): A => {
  const copy: Partial<Record<keyof A, unknown>> = {}
  for (const key of keys) if (value[key] !== undefined) copy[key] = value[key]
  return copy as A
}

/**
 * The public fields of `fields` in record order; `limits` and `attempts` are copied, never
 * shared, and only their own fields are kept (a budget handed in as it is carries more than
 * limits).
 */
const publicFieldsOf = (fields: PublicFields): PublicFields => {
  const copy = pick(recordKeys, fields) as { -readonly [K in keyof PublicFields]: PublicFields[K] }
  copy.limits = pick(limitsKeys, fields.limits)
  if (fields.attempts !== undefined) copy.attempts = fields.attempts.map((attempt) => pick(attemptKeys, attempt))
  return copy
}

const describe = (summary: string, self: PublicFields): string => {
  const parts: Array<string> = [summary]
  if (self.server !== undefined) parts.push(`server ${self.server.replace(invisibleCharacterPattern, " ")}`)
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

/**
 * What every error of the family is: a yieldable error whose own enumerable properties are its
 * `_tag` and public fields, whose `message` and `toString()` are derived from them, and whose
 * `toJSON()` is its record. Its cause stays in process as the non-enumerable `cause`.
 *
 * @since 0.1.0
 * @category errors
 */
export interface McpErrorBase<T extends Tag = Tag> extends Cause.YieldableError, PublicFields {
  readonly _tag: T
  toJSON(): ErrorRecord
}

/**
 * The class of an error of the family: a Schema of it (its encoded form is its `_tag` and
 * public fields) built with the public fields and, in process only, the cause.
 *
 * @since 0.1.0
 * @category errors
 */
export interface McpErrorClass<Self, T extends Tag> extends Schema.Schema<Self, Schema.Schema.Encoded<typeof PublicFields> & { readonly _tag: T }> {
  new(fields: PublicFields, cause?: unknown): McpErrorBase<T>
  readonly _tag: T
  readonly identifier: string
}

const recordOf = (error: McpErrorBase): ErrorRecord => ({ tag: error._tag, ...publicFieldsOf(error) })

/**
 * An error class of the family: a `Schema.TaggedError` over `PublicFields`, `summary` the start of
 * its `message`.
 *
 * Construction does not validate the fields: they are typed where they are built, a check would
 * cost on every failure path, and a check failing inside an error's constructor would be a defect
 * where a typed failure was due. Decoding does validate (it reads what was persisted). The Schema
 * machinery constructs with its make option as the second argument, `true`, when it decodes: that
 * `true` is not a cause (a decoded error has none).
 */
const McpError = <Self>() => <T extends Tag>(tag: T, summary: string): McpErrorClass<Self, T> => {
  const TaggedError = Schema.TaggedError<Self>(`@phasebound/client/${tag}`)(tag, PublicFields) as unknown as new(
    fields: PublicFields,
    disableValidation: true
  ) => McpErrorBase<T>
  class McpError extends TaggedError {
    constructor(fields: PublicFields, cause?: unknown) {
      super(publicFieldsOf(fields), true)
      // In process only: never enumerable, so never in a spread, JSON or an encoded form.
      Object.defineProperty(this, "cause", {
        value: cause === true ? undefined : cause,
        enumerable: false,
        writable: false,
        configurable: true
      })
    }

    override toString(): string {
      return `${this._tag}: ${this.message}`
    }

    override toJSON(): ErrorRecord {
      return recordOf(this)
    }
  }
  // `message` is derived on read, from typed fields only (never an own property); `name` is the
  // tag (Schema.TaggedError's).
  Object.defineProperty(McpError.prototype, "message", {
    get(this: McpErrorBase<T>) {
      return describe(summary, this)
    },
    configurable: true
  })
  return McpError as unknown as McpErrorClass<Self, T>
}

/** @since 0.1.0 @category errors */
export class InvalidOption extends McpError<InvalidOption>()("InvalidOption", "invalid option") {}
/** @since 0.1.0 @category errors */
export class DeadlineExceeded extends McpError<DeadlineExceeded>()("DeadlineExceeded", "deadline exceeded") {}
/** @since 0.1.0 @category errors */
export class ByteCeilingExceeded extends McpError<ByteCeilingExceeded>()("ByteCeilingExceeded", "byte ceiling exceeded") {}
/** @since 0.1.0 @category errors */
export class Unauthorized extends McpError<Unauthorized>()("Unauthorized", "unauthorized") {}
/** @since 0.1.0 @category errors */
export class Forbidden extends McpError<Forbidden>()("Forbidden", "forbidden") {}
/**
 * An authorization that could not be completed (phase `authorization`): the authority refused
 * (an OAuth error, with `oauthError`), its answer broke a rule of the flow (state, issuer), or
 * the configuration cannot authorize (no client identity, no interactive step). `reason` says
 * what, `authorizationStep` where.
 *
 * @since 0.1.0
 * @category errors
 */
export class AuthorizationFailed extends McpError<AuthorizationFailed>()("AuthorizationFailed", "authorization failed") {}
/** @since 0.1.0 @category errors */
export class UpstreamFailure extends McpError<UpstreamFailure>()("UpstreamFailure", "upstream failure") {}
/** @since 0.1.0 @category errors */
export class RemoteRefusal extends McpError<RemoteRefusal>()("RemoteRefusal", "the server refused the request") {}
/** @since 0.1.0 @category errors */
export class ProtocolViolation extends McpError<ProtocolViolation>()("ProtocolViolation", "protocol violation") {}
/** @since 0.1.0 @category errors */
export class TransportFailure extends McpError<TransportFailure>()("TransportFailure", "transport failure") {}
/** @since 0.1.0 @category errors */
export class SessionExpired extends McpError<SessionExpired>()("SessionExpired", "session expired") {}
/** @since 0.1.0 @category errors */
export class LimitExceeded extends McpError<LimitExceeded>()("LimitExceeded", "limit exceeded") {}

/**
 * A handler the caller gave (elicitation, sampling, roots) failed while answering the server:
 * `capability` says which; what it failed with stays in process as the cause.
 *
 * @since 0.1.0
 * @category errors
 */
export class HandlerFailed extends McpError<HandlerFailed>()("HandlerFailed", "a client handler failed") {}

/**
 * A defect inside the library (a bug, not a remote failure): the defect itself stays in process
 * as the error's `cause`; the public fields say only where it happened (`reason: "defect"`).
 *
 * @since 0.1.0
 * @category errors
 */
export class InternalError extends McpError<InternalError>()("InternalError", "internal error") {}

/**
 * The server refused a request until the user completes one or more URL elicitations
 * (JSON-RPC `-32042`, 2025-11-25): `code` is `-32042`, `remoteMessage` the server's message
 * (sanitized, URLs removed), outcome `not-applied` (the server did nothing), `retryable` (once
 * the elicitations are complete, the same request may be sent again; it is not a second
 * effect).
 *
 * What to complete is never a public field: `elicitations` (a getter, not enumerable, never in
 * `toJSON()`, the record or an encoded form) gives each one's `elicitationId`, `message` and
 * checked `url` (see `ClientHandlers.UrlElicitation`); `urlElicitationsOf` does the same for any
 * error. Show them to the user, await each with `Connection.awaitElicitation` (or let the user
 * say they are done), then call again. A decoded error (from a workflow's storage) has none.
 *
 * @since 0.1.0
 * @category errors
 */
export class UrlElicitationRequired extends McpError<UrlElicitationRequired>()("UrlElicitationRequired", "URL elicitation required") {
  /** The elicitations to complete (in process only: see the class comment). */
  get elicitations(): ReadonlyArray<UrlElicitation> {
    return urlElicitationsOf(this)
  }
}

/**
 * The URL elicitations a `UrlElicitationRequired` asks the user to complete: read from the
 * refusal kept in process (its cause), every one checked as a URL handler's would be; empty for
 * any other error, and for one decoded from storage.
 *
 * @since 0.1.0
 * @category conversions
 */
export const urlElicitationsOf = (error: unknown): ReadonlyArray<UrlElicitation> => {
  if (!Predicate.hasProperty(error, "_tag") || error._tag !== "UrlElicitationRequired") return []
  const cause: unknown = (error as { readonly cause?: unknown }).cause
  return (Predicate.hasProperty(cause, "data") ? refusalElicitations(cause.data) : undefined) ?? []
}

/**
 * The union of every public error, and its Schema: what a workflow persists. Encoding an error
 * gives its `_tag` and public fields (never its cause); decoding gives back an instance of its
 * class, with the same `message` and `toJSON()`.
 *
 * @since 0.1.0
 * @category errors
 */
export const McpConnectionError = Schema.Union(
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
  InternalError,
  UrlElicitationRequired
)

/** @since 0.1.0 @category errors */
export type McpConnectionError = typeof McpConnectionError.Type

const isTag = Schema.is(Tag)

/**
 * @since 0.1.0
 * @category guards
 */
export const isMcpConnectionError = (u: unknown): u is McpConnectionError =>
  Predicate.hasProperty(u, "_tag") && isTag(u._tag) && Predicate.hasProperty(u, "stage") && Predicate.hasProperty(u, "phase")

/**
 * The public record of an error, with only its public fields.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toRecord = (error: McpConnectionError): ErrorRecord => recordOf(error)

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
  const Class = error.constructor as new(fields: PublicFields, cause?: unknown) => E
  return new Class({ ...publicFieldsOf(error), attempts }, error.cause)
}

/**
 * The same error (same class, fields and cause) naming the server it is about, by its configured
 * name (`server`): what `McpServers` and `McpCatalog` report for a server of theirs. An error
 * that names a server already keeps that name.
 *
 * @since 0.1.0
 * @category conversions
 */
export const withServer = <E extends McpConnectionError>(error: E, server: string): E => {
  if (error.server !== undefined) return error
  const Class = error.constructor as new(fields: PublicFields, cause?: unknown) => E
  return new Class({ ...publicFieldsOf(error), server }, error.cause)
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
