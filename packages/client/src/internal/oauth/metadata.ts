/**
 * The OAuth documents phasebound reads, as strict `effect` Schemas: Protected Resource Metadata
 * (RFC 9728 §2), Authorization Server Metadata (RFC 8414 §2, OpenID Connect Discovery 1.0 §3),
 * the token response (RFC 6749 §5.1), the token error response (RFC 6749 §5.2, whose shape the
 * registration error response of RFC 7591 §3.2.2 shares) and the client information response
 * of a dynamic registration (RFC 7591 §3.2.1).
 *
 * Each field phasebound uses is checked for its type and its form; other fields are allowed
 * and dropped. Every list is bounded (its length is checked before its items are). A document
 * that does not decode is a `DocumentProblem`: which document, which field, what kind of
 * problem, from a fixed vocabulary. It never carries a value of the document nor the parse
 * error (whose message would quote one, and a token may be in it), so it maps to a
 * `ProtocolViolation` as it is (docs/DESIGN.md, "Errors").
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import { isScopeToken } from "./challenge.js"
import { isSecure, parseHttpUrl, parseIssuer } from "./discoveryUrls.js"
import { type OAuthError, oauthErrorCodes } from "../../McpConnectionError.js"

/** Most authorization servers accepted from one Protected Resource Metadata document. */
export const maxAuthorizationServers = 16
/** Most scopes accepted in a `scopes_supported`. */
export const maxScopes = 1_024
/** Most entries accepted in any other list (`grant_types_supported`, ...). */
export const maxListEntries = 256

/** The documents decoded here. */
export type Document =
  | "protected-resource-metadata"
  | "authorization-server-metadata"
  | "token-response"
  | "token-error-response"
  | "registration-response"

/** What is wrong with a document, from a fixed vocabulary. */
export type Problem =
  /** The document is not a JSON object. */
  | "not-an-object"
  | "missing-field"
  | "wrong-type"
  /** The right type, not the right form: a malformed URL, scope or token, a negative `expires_in`, an empty list. */
  | "invalid-value"
  /** A URL that is neither `https` nor `http` on a loopback host. */
  | "insecure-url"
  | "too-many-items"
  /** The `issuer` is not the one the metadata was fetched for (RFC 8414 §3.3). */
  | "issuer-mismatch"
  /** A `token_type` other than `Bearer`. */
  | "unsupported-token-type"

/** Why a document was refused; never a value from it. */
export interface DocumentProblem {
  readonly _tag: "DocumentProblem"
  readonly document: Document
  readonly problem: Problem
  /** The top-level field at fault (a name of the schema, never of the document); absent for the whole document. */
  readonly field?: string | undefined
}

const ProblemAnnotationId: unique symbol = Symbol.for("@phasebound/client/internal/oauth/metadata/Problem")

const problem = (kind: Problem) => ({ [ProblemAnnotationId]: kind })

// RFC 6749 §3.3: scope = scope-token *( SP scope-token ). Read as the scope-tokens between
// spaces: extra spaces do not change which scopes are meant, and an empty scope names none.
const isScopeList = (value: string): boolean => value.split(" ").every((token) => token === "" || isScopeToken(token))
// Tokens travel in a header (`Authorization: Bearer ...`) or a form: visible ASCII, no space
// (RFC 6749 Appendix A.12 and A.17 without the space, which would split the header value).
const tokenCharacters = /^[\x21-\x7e]+$/
// RFC 6749 §5.2: error = 1*( %x20-21 / %x23-5B / %x5D-7E )
const errorCode = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/

/** An optional field; `null` is read as absent (a common serialization of "none"). */
const optional = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { exact: true, nullable: true })

/** A list whose length is checked before any item is looked at. */
const boundedList = <A>(item: Schema.Schema<A, string>, maxItems: number) =>
  Schema.Unknown.pipe(
    Schema.filter((u) => !Array.isArray(u) || u.length <= maxItems, problem("too-many-items")),
    Schema.compose(Schema.Array(item), { strict: false })
  )

const ScopeToken = Schema.String.pipe(Schema.filter(isScopeToken, problem("invalid-value")))

/** An issuer identifier (RFC 8414 §2): a URL without query or fragment, served securely. */
const Issuer = Schema.String.pipe(
  Schema.filter((s) => {
    const url = parseHttpUrl(s)
    return url !== undefined && !s.includes("?") && !s.includes("#")
  }, problem("invalid-value")),
  Schema.filter((s) => parseIssuer(s) !== undefined, problem("insecure-url"))
)

/** An endpoint (RFC 6749 §3.1, §3.2): a URL that may have a query but no fragment, served securely. */
const Endpoint = Schema.String.pipe(
  Schema.filter((s) => parseHttpUrl(s) !== undefined && !s.includes("#"), problem("invalid-value")),
  Schema.filter((s) => isSecure(parseHttpUrl(s)!), problem("insecure-url"))
)

/** A resource identifier (RFC 9728 §1.2, RFC 8707 §2): an absolute URL without fragment. */
const ResourceIdentifier = Schema.String.pipe(
  Schema.filter((s) => parseHttpUrl(s) !== undefined && !s.includes("#"), problem("invalid-value"))
)

const Strings = boundedList(Schema.String, maxListEntries)

/**
 * Protected Resource Metadata (RFC 9728 §2). `authorization_servers` is required and not empty
 * (MCP authorization, "Authorization Server Location"); each is an issuer identifier.
 */
export const ProtectedResourceMetadata = Schema.Struct({
  resource: ResourceIdentifier,
  authorization_servers: boundedList(Issuer, maxAuthorizationServers).pipe(
    Schema.minItems(1, problem("invalid-value"))
  ),
  scopes_supported: optional(boundedList(ScopeToken, maxScopes)),
  bearer_methods_supported: optional(Strings)
})

/** @see ProtectedResourceMetadata */
export type ProtectedResourceMetadata = Schema.Schema.Type<typeof ProtectedResourceMetadata>

/**
 * Authorization Server Metadata (RFC 8414 §2; OpenID Connect Discovery 1.0 §3 shares these
 * fields). `token_endpoint` is required: OAuth 2.1 has no grant without one. Every endpoint is
 * served securely ("Communication Security").
 */
export const AuthorizationServerMetadata = Schema.Struct({
  issuer: Issuer,
  authorization_endpoint: optional(Endpoint),
  token_endpoint: Endpoint,
  registration_endpoint: optional(Endpoint),
  scopes_supported: optional(boundedList(ScopeToken, maxScopes)),
  response_types_supported: optional(Strings),
  grant_types_supported: optional(Strings),
  token_endpoint_auth_methods_supported: optional(Strings),
  code_challenge_methods_supported: optional(Strings),
  authorization_response_iss_parameter_supported: optional(Schema.Boolean),
  client_id_metadata_document_supported: optional(Schema.Boolean)
})

/** @see AuthorizationServerMetadata */
export type AuthorizationServerMetadata = Schema.Schema.Type<typeof AuthorizationServerMetadata>

/** `token_type` is matched without regard to case (RFC 6749 §5.1) and read as `Bearer`. */
const BearerTokenType = Schema.transform(
  Schema.String.pipe(Schema.filter((s) => /^bearer$/i.test(s), problem("unsupported-token-type"))),
  Schema.Literal("Bearer"),
  { strict: true, decode: () => "Bearer" as const, encode: (bearer) => bearer }
)

/** A token: a secret, decoded as `Redacted` so that printing it, by mistake or not, shows nothing. */
const SecretToken = Schema.Redacted(
  Schema.String.pipe(Schema.filter((s) => tokenCharacters.test(s), problem("invalid-value")))
)

/** A successful token response (RFC 6749 §5.1). */
export const TokenResponse = Schema.Struct({
  access_token: SecretToken,
  token_type: BearerTokenType,
  expires_in: optional(Schema.Number.pipe(Schema.int(problem("invalid-value")), Schema.nonNegative(problem("invalid-value")))),
  refresh_token: optional(SecretToken),
  scope: optional(Schema.String.pipe(Schema.filter(isScopeList, problem("invalid-value"))))
})

/** @see TokenResponse */
export type TokenResponse = Schema.Schema.Type<typeof TokenResponse>

/**
 * A token error response (RFC 6749 §5.2). `error` must have the form §5.2 gives it; the
 * description and URI only need to be strings (they are never shown as they are, and a
 * malformed description must not hide the code).
 */
export const TokenErrorResponse = Schema.Struct({
  error: Schema.String.pipe(Schema.filter((s) => errorCode.test(s), problem("invalid-value"))),
  error_description: optional(Schema.String),
  error_uri: optional(Schema.String)
})

/** @see TokenErrorResponse */
export type TokenErrorResponse = Schema.Schema.Type<typeof TokenErrorResponse>

/** Most characters accepted in a `client_id` or a `client_secret`. */
export const maxClientCredentialLength = 2_048

/** The latest `client_secret_expires_at` accepted: the last second a `Date` can hold. */
const maxExpirySeconds = 8_640_000_000_000

// RFC 6749 Appendix A.1 and A.2: client-id = *VSCHAR, client-secret = *VSCHAR (%x20-7E); an
// empty one identifies or proves nothing.
const vschars = /^[\x20-\x7e]+$/
const ClientCredential = Schema.String.pipe(
  Schema.filter((s) => s.length <= maxClientCredentialLength && vschars.test(s), problem("invalid-value"))
)

/** The client authentication methods a registration may end with (RFC 7591 §2): those phasebound registers with. */
export const registrationAuthMethods = ["none", "client_secret_basic", "client_secret_post"] as const

/** @see registrationAuthMethods */
export type RegistrationAuthMethod = typeof registrationAuthMethods[number]

const RegistrationAuthMethod = Schema.String.pipe(
  Schema.filter(
    (s): s is RegistrationAuthMethod => (registrationAuthMethods as ReadonlyArray<string>).includes(s),
    problem("invalid-value")
  )
)

/**
 * The client information response of a dynamic registration (RFC 7591 §3.2.1). The server
 * echoes the metadata it registered: the other fields are allowed and dropped. The secret is
 * decoded as `Redacted`; `client_secret_expires_at` is in seconds, 0 for never. Whether the
 * method needs a secret that is missing is decided with the method requested
 * (`registration.ts`), since the server may leave the method out.
 */
export const RegistrationResponse = Schema.Struct({
  client_id: ClientCredential,
  client_secret: optional(Schema.Redacted(ClientCredential)),
  token_endpoint_auth_method: optional(RegistrationAuthMethod),
  client_secret_expires_at: optional(
    Schema.Number.pipe(
      Schema.int(problem("invalid-value")),
      Schema.between(0, maxExpirySeconds, problem("invalid-value"))
    )
  )
})

/** @see RegistrationResponse */
export type RegistrationResponse = Schema.Schema.Type<typeof RegistrationResponse>

/** @see McpConnectionError.OAuthError */
export type OAuthErrorCode = OAuthError

const knownCodes: ReadonlySet<string> = new Set(oauthErrorCodes)

/** The error code when it is one of `oauthErrorCodes` (exactly, case included); else `undefined`. */
export const knownErrorCode = (error: string): OAuthErrorCode | undefined => knownCodes.has(error) ? (error as OAuthErrorCode) : undefined

const annotatedProblem = (ast: AST.AST): Problem | undefined => ast.annotations[ProblemAnnotationId] as Problem | undefined

/** The first issue's top-level field and kind; only schema names and the issue's tag are read. */
const locate = (issue: ParseResult.ParseIssue, field: string | undefined): { problem: Problem; field?: string | undefined } => {
  switch (issue._tag) {
    case "Pointer": {
      const key = Array.isArray(issue.path) ? issue.path[0] : issue.path
      return locate(issue.issue, field ?? (typeof key === "string" ? key : undefined))
    }
    case "Composite":
      return locate(Array.isArray(issue.issues) ? issue.issues[0] : issue.issues, field)
    case "Refinement":
      return issue.kind === "From"
        ? locate(issue.issue, field)
        : { problem: annotatedProblem(issue.ast) ?? "invalid-value", field }
    case "Transformation":
      return locate(issue.issue, field)
    case "Missing":
      return { problem: "missing-field", field }
    case "Type":
      return { problem: field === undefined ? "not-an-object" : "wrong-type", field }
    case "Unexpected":
    case "Forbidden":
      return { problem: "invalid-value", field }
  }
}

const isPlainObject = (u: unknown): boolean => typeof u === "object" && u !== null && !Array.isArray(u)

const refuse = (document: Document, problem: Problem, field?: string): DocumentProblem =>
  field === undefined ? { _tag: "DocumentProblem", document, problem } : { _tag: "DocumentProblem", document, problem, field }

/**
 * A document's decoder, compiled on its first use: a run that never authorizes (most CLI runs)
 * does not pay for compiling them at start-up.
 */
const decoder = <A, I>(schema: Schema.Schema<A, I>, document: Document) => {
  let decode: ((u: unknown) => Either.Either<A, ParseResult.ParseError>) | undefined
  return (json: unknown): Either.Either<A, DocumentProblem> => {
    if (!isPlainObject(json)) return Either.left(refuse(document, "not-an-object"))
    decode ??= Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "ignore" })
    return Either.mapLeft(decode(json), (error) => {
      const found = locate(error.issue, undefined)
      return refuse(document, found.problem, found.field)
    })
  }
}

/** Decodes a Protected Resource Metadata document (whether its `resource` names the server is `resourceMatches`). */
export const decodeProtectedResourceMetadata: (json: unknown) => Either.Either<ProtectedResourceMetadata, DocumentProblem> = decoder(
  ProtectedResourceMetadata,
  "protected-resource-metadata"
)

const decodeAuthorizationServer = decoder(AuthorizationServerMetadata, "authorization-server-metadata")

/**
 * Decodes Authorization Server Metadata fetched for `expectedIssuer`, whose `issuer` must be
 * that identifier exactly, by simple string comparison (RFC 8414 §3.3, OpenID Connect
 * Discovery §4.3): no case folding, no trailing-slash or port normalization.
 */
export const decodeAuthorizationServerMetadata = (
  json: unknown,
  expectedIssuer: string
): Either.Either<AuthorizationServerMetadata, DocumentProblem> =>
  Either.flatMap(decodeAuthorizationServer(json), (metadata) =>
    metadata.issuer === expectedIssuer
      ? Either.right(metadata)
      : Either.left(refuse("authorization-server-metadata", "issuer-mismatch", "issuer")))

/** Decodes a successful token response. */
export const decodeTokenResponse: (json: unknown) => Either.Either<TokenResponse, DocumentProblem> = decoder(
  TokenResponse,
  "token-response"
)

/** Decodes a token error response. */
export const decodeTokenErrorResponse: (json: unknown) => Either.Either<TokenErrorResponse, DocumentProblem> = decoder(
  TokenErrorResponse,
  "token-error-response"
)

/** Decodes the client information response of a dynamic registration. */
export const decodeRegistrationResponse: (json: unknown) => Either.Either<RegistrationResponse, DocumentProblem> = decoder(
  RegistrationResponse,
  "registration-response"
)
