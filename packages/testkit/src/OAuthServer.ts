/**
 * A scriptable loopback OAuth 2.1 authorization server for MCP authorization tests, normal by
 * default and hostile on request (`faults` at start, `script(fault)` later). Plain node:http on
 * 127.0.0.1, port 0.
 *
 * - Metadata (RFC 8414 / OpenID discovery) for the issuer `http://127.0.0.1:PORT{issuerPath}`
 *   at the well-known URLs chosen by `serve`:
 *   "oauth"       /.well-known/oauth-authorization-server{issuerPath}
 *   "oidc-insert" /.well-known/openid-configuration{issuerPath}
 *   "oidc-append" {issuerPath}/.well-known/openid-configuration
 *   (with no issuerPath, both OIDC variants are /.well-known/openid-configuration).
 * - `{issuer}/authorize` (GET): authorization code + PKCE S256; consent is granted at once, the
 *   answer is a 302 to redirect_uri with `code`, `state` and `iss` (RFC 9207). An unknown client
 *   or a redirect_uri it did not register is a 400 (never a redirect); any other error is a
 *   redirect with `error`. `authorizeDirect(url)` follows it without a browser.
 * - `{issuer}/token` (POST form): authorization_code, refresh_token, client_credentials; client
 *   auth client_secret_basic / client_secret_post / none / private_key_jwt, each client held to
 *   the method it registered; `resource` (RFC 8707) must equal the one given at /authorize (or at
 *   the first grant, for refresh). Errors per RFC 6749 §5.2: JSON, 400 (401 invalid_client).
 *   Access tokens live `accessTokenTtlSeconds` (default 3600); `expireAll()` expires every one
 *   issued so far (refresh tokens stay valid), `revokeAll()` revokes everything.
 * - private_key_jwt (RFC 7523 §2.2, §3): a client registered with
 *   `tokenEndpointAuthMethod: "private_key_jwt"` and a `publicKey` (JWK, SPKI PEM or KeyObject)
 *   sends `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and
 *   `client_assertion`, a compact JWS, RS256 or ES256 (the `alg` must fit the key; any other,
 *   `none` included, is refused), verified with node:crypto. Its claims must have `iss` = `sub` =
 *   the client id (and `client_id`, when sent, the same), `aud` the issuer or the token endpoint
 *   URL (a string, or an array holding one of them), `exp` in the future, `nbf` (if any) not in
 *   the future, and a `jti` never accepted before for this client; else 401 invalid_client. The
 *   method is supported (advertised, with `token_endpoint_auth_signing_alg_values_supported`)
 *   when `tokenEndpointAuthMethods` names it or, by default, when a pre-registered client uses it.
 *   `/register` accepts it with an inline `jwks` (its first key).
 * - `{issuer}/register` (POST JSON, RFC 7591) when `registration` is on (default).
 * - Client ID Metadata Documents when `clientIdMetadataDocumentSupported`: a client_id that is an
 *   http(s) URL with a path is fetched (5 s bound); its `client_id` must equal the URL and its
 *   `redirect_uris` are the client's.
 *
 * A resource server in a test checks tokens with `checkToken` / `isValidToken`; `checkToken`
 * also gives the 401/403 `WWW-Authenticate` value (`insufficient_scope` for step-up).
 */
import { createHash, createPublicKey, type JsonWebKey, KeyObject, randomBytes, verify } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { headerValue, listenLoopback, parseJson, readBody, waitFor } from "./loopback.js"
import { isGone, jsonHeaders, sendJsonBody, sendText, writeForever } from "./wire.js"

export type MetadataVariant = "oauth" | "oidc-insert" | "oidc-append"
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt"
export type OAuthEndpoint = "metadata" | "authorize" | "token" | "register" | "other"
export type GrantType = "authorization_code" | "refresh_token" | "client_credentials"

/** A client the server knows: pre-registered (`clients`), registered at /register, or a metadata document. */
export interface OAuthClient {
  readonly clientId: string
  /** Absent for a public client (`none`). */
  readonly clientSecret?: string
  /** Default: "client_secret_basic" with a secret, "none" without. */
  readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  /**
   * The key that verifies a `private_key_jwt` client's assertions (required by that method): a
   * public JWK (RSA, or EC P-256), an SPKI PEM, or a KeyObject (a private one gives its public half).
   */
  readonly publicKey?: JsonWebKey | string | KeyObject
  /** Exact redirect URIs accepted at /authorize (default none: client_credentials only). */
  readonly redirectUris?: ReadonlyArray<string>
  /** Grants the client may use (default all three; client_credentials needs a secret anyway). */
  readonly grantTypes?: ReadonlyArray<GrantType>
}

interface FaultBase {
  /** How many matching requests it applies to before it is consumed (default 1; Infinity = always). */
  readonly times?: number
}

/**
 * What a hostile authorization server does instead of the normal answer. The endpoint each fault
 * applies to is given by its kind (`stall` names it).
 */
export type OAuthFault =
  /** Metadata whose `issuer` is not this server's (default "https://attacker.example"). */
  | (FaultBase & { readonly kind: "wrong-issuer"; readonly issuer?: string })
  /** The normal metadata padded (an `x_padding` member) to exactly `bytes` bytes (at least the normal size). */
  | (FaultBase & { readonly kind: "oversized-metadata"; readonly bytes: number })
  /** A 200 metadata body that never ends (`{"issuer":…,"x_padding":"` and then padding forever), until the client leaves. */
  | (FaultBase & { readonly kind: "never-ending-metadata" })
  /**
   * 302 of the metadata to `location` (default: the same path at http://localhost:PORT, another
   * origin that serves the same document, so following it visibly "works").
   */
  | (FaultBase & { readonly kind: "redirect-metadata"; readonly location?: string })
  /** The request is received (recorded, counted) and never answered; only the client's bound (or close) ends it. */
  | (FaultBase & { readonly kind: "stall"; readonly endpoint: "metadata" | "authorize" | "token" | "register" })
  /** The redirect's `iss` is not the issuer (default "https://attacker.example"). */
  | (FaultBase & { readonly kind: "iss-mismatch"; readonly iss?: string })
  /** The redirect carries no `iss`. */
  | (FaultBase & { readonly kind: "omit-iss" })
  /** The redirect does not echo `state`. */
  | (FaultBase & { readonly kind: "drop-state" })
  /** A token response (tokens issued and valid) without `token_type`. */
  | (FaultBase & { readonly kind: "missing-token-type" })
  /** A refresh_token grant answered 400 invalid_grant (the refresh token stays valid). Other grants pass. */
  | (FaultBase & { readonly kind: "invalid-grant-on-refresh" })
  /** The access token is issued with only `scope` (the response says so): the resource server will answer insufficient_scope. */
  | (FaultBase & { readonly kind: "narrow-scope"; readonly scope: string })
  /** Any token request answered with this OAuth error (status default 400). */
  | (FaultBase & {
    readonly kind: "token-error"
    readonly error: string
    readonly status?: number
    readonly description?: string
    /** Only for this grant (default: every grant). */
    readonly grant?: GrantType
  })
  /**
   * A token request answered 400 invalid_grant whose error_description echoes the secrets it
   * received: code, code_verifier, refresh_token, client_secret, client_assertion, and the
   * Authorization header (Basic credentials).
   */
  | (FaultBase & { readonly kind: "echo-secrets-in-error" })
  /**
   * The token request succeeds normally (tokens issued, refresh tokens valid and rotated), but the
   * access token it returns is refused by `checkToken` (401 invalid_token, "token rejected"), so a
   * resource server answers 401 again. Only for `grant` (default: every grant). With
   * `grant: "refresh_token", times: Infinity`: a refresh loop, every refresh "works" and every
   * refreshed token is rejected.
   */
  | (FaultBase & { readonly kind: "rejected-token"; readonly grant?: GrantType })

export type OAuthFaultKind = OAuthFault["kind"]

export interface OAuthServerOptions {
  /** Path of the issuer, e.g. "/tenant1" (default "": the issuer is the origin). */
  readonly issuerPath?: string
  /** Which well-known metadata URLs answer (default ["oauth"]); the others are 404. */
  readonly serve?: ReadonlyArray<MetadataVariant>
  /** `code_challenge_methods_supported` (default ["S256"]); null omits it. /authorize still requires S256. */
  readonly codeChallengeMethodsSupported?: ReadonlyArray<string> | null
  /** `scopes_supported` (absent by default). */
  readonly scopesSupported?: ReadonlyArray<string>
  /**
   * `token_endpoint_auth_methods_supported`, also enforced (default client_secret_basic,
   * client_secret_post and none, plus private_key_jwt when a pre-registered client uses it).
   */
  readonly tokenEndpointAuthMethods?: ReadonlyArray<TokenEndpointAuthMethod>
  /** Serve /register and advertise `registration_endpoint` (default true). */
  readonly registration?: boolean
  /** Advertise and accept Client ID Metadata Documents (default false). */
  readonly clientIdMetadataDocumentSupported?: boolean
  /** Send `iss` on redirects and advertise `authorization_response_iss_parameter_supported` (default true). */
  readonly issParameter?: boolean
  /** Pre-registered clients. */
  readonly clients?: ReadonlyArray<OAuthClient>
  /** Accepted `resource` values (default: any absolute URL without a fragment). */
  readonly resources?: ReadonlyArray<string>
  /** Refuse an /authorize and grants without `resource` (default true). */
  readonly requireResource?: boolean
  /** Refuse an /authorize without `state` (default false). */
  readonly requireState?: boolean
  /**
   * Access tokens' lifetime, `expires_in`, in seconds (default 3600): a short one (e.g. 2) lets a
   * client's refresh-before-expiry be tested. A positive integer.
   */
  readonly accessTokenTtlSeconds?: number
  /**
   * Milliseconds since the epoch, read wherever the server tells time (token expiry, client
   * assertion `exp`/`nbf`, `client_id_issued_at`); default `Date.now`. A test moves it to show a
   * lifetime ending without waiting for it.
   */
  readonly now?: () => number
  /** Issue refresh tokens on authorization_code (default true; never on client_credentials). */
  readonly refreshTokens?: boolean
  /** Rotate refresh tokens: each refresh invalidates the old one and issues a new one (default true). */
  readonly refreshTokenRotation?: boolean
  /** Scope granted when the request names none (default: none, `scope` omitted from the response). */
  readonly defaultScope?: string
  /** Members added to (or replacing) the metadata document. */
  readonly metadataExtra?: Readonly<Record<string, unknown>>
  /** Faults in effect from the start (as `script` would add them). */
  readonly faults?: ReadonlyArray<OAuthFault>
}

/** One received request: the raw request and its body parsed. */
export interface OAuthRecordedRequest {
  readonly method: string
  /** Path and query as received. */
  readonly url: string
  readonly path: string
  readonly endpoint: OAuthEndpoint
  /** Which well-known URL, for a metadata request. */
  readonly variant?: MetadataVariant
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
  /** Query parameters (GET) or the form body (POST application/x-www-form-urlencoded); repeated names keep the first. */
  readonly form: Readonly<Record<string, string>>
  /** The JSON body, when it parses (registration). */
  readonly json?: unknown
}

export interface IssuedToken {
  readonly accessToken: string
  readonly refreshToken?: string
  readonly clientId: string
  readonly grant: GrantType
  /** Space-separated; "" when none. */
  readonly scope: string
  readonly resource?: string
  /** Epoch ms. */
  readonly expiresAt: number
}

export type TokenCheck =
  | { readonly ok: true; readonly token: IssuedToken }
  | {
    readonly ok: false
    readonly status: 401 | 403
    readonly error: "invalid_token" | "insufficient_scope"
    /** The `WWW-Authenticate` value a resource server would send. */
    readonly wwwAuthenticate: string
    /** Why: "unknown token", "token revoked", "token expired", "token rejected", "token is for another resource", "additional scope required". */
    readonly description: string
  }

export interface TokenCheckOptions {
  /** The token must have been issued for exactly this resource. */
  readonly resource?: string
  /** Space-separated scopes the token must all carry (else insufficient_scope). */
  readonly scope?: string
  /** Put into the challenge as `resource_metadata`. */
  readonly resourceMetadata?: string
}

export interface OAuthTestServer {
  /** http://127.0.0.1:PORT */
  readonly origin: string
  /** origin + issuerPath */
  readonly issuer: string
  readonly port: number
  /** The URL of each variant (whether or not it is served). */
  readonly metadataUrls: Readonly<Record<MetadataVariant, string>>
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly registrationEndpoint: string
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<OAuthRecordedRequest>
  /** Requests received per endpoint. */
  calls(endpoint: OAuthEndpoint): number
  /** Every token issued, in order (faulted responses included when tokens were issued). */
  issuedTokens(): ReadonlyArray<IssuedToken>
  /** Every known client (pre-registered, registered, metadata documents). */
  clients(): ReadonlyArray<OAuthClient>
  /** Validity of an access token for a resource server: unknown, revoked, expired, other resource, missing scope. */
  checkToken(token: string, options?: TokenCheckOptions): TokenCheck
  isValidToken(token: string, options?: TokenCheckOptions): boolean
  /** Every access token, refresh token and authorization code becomes invalid. */
  revokeAll(): void
  /** Every access token issued so far is expired (refresh tokens stay valid). */
  expireAll(): void
  /**
   * GETs an authorization URL (redirects not followed) and resolves the 302's Location: the URL a
   * browser would land on. Rejects on any other answer.
   */
  authorizeDirect(url: string | URL): Promise<string>
  script(fault: OAuthFault): void
  clearFaults(): void
  /** Responses whose connection closed before the server finished them (stalls the client ended). */
  abortedResponses(): number
  /** Bytes written by never-ending metadata bodies. */
  bytesWritten(): number
  openConnections(): number
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

const DEFAULT_AUTH_METHODS: ReadonlyArray<TokenEndpointAuthMethod> = ["client_secret_basic", "client_secret_post", "none"]
const ALL_AUTH_METHODS: ReadonlyArray<TokenEndpointAuthMethod> = [...DEFAULT_AUTH_METHODS, "private_key_jwt"]
/** RFC 7523 §2.2. */
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
const ASSERTION_ALGS = ["RS256", "ES256"] as const
const ALL_GRANTS: ReadonlyArray<GrantType> = ["authorization_code", "refresh_token", "client_credentials"]
const ATTACKER = "https://attacker.example"
const FORM_TYPE = "application/x-www-form-urlencoded"

const endpointOfFault = (fault: OAuthFault): OAuthEndpoint => {
  switch (fault.kind) {
    case "wrong-issuer":
    case "oversized-metadata":
    case "never-ending-metadata":
    case "redirect-metadata":
      return "metadata"
    case "iss-mismatch":
    case "omit-iss":
    case "drop-state":
      return "authorize"
    case "stall":
      return fault.endpoint
    default:
      return "token"
  }
}

const validateFault = (fault: OAuthFault): void => {
  if (fault.times !== undefined && !(fault.times >= 1)) throw new TypeError("OAuthFault.times must be >= 1")
  if (fault.kind === "oversized-metadata" && !(Number.isInteger(fault.bytes) && fault.bytes > 0)) {
    throw new TypeError("oversized-metadata needs a positive integer `bytes`")
  }
  if (fault.kind === "stall" && !["metadata", "authorize", "token", "register"].includes(fault.endpoint)) {
    throw new TypeError(`stall: unknown endpoint ${String(fault.endpoint)}`)
  }
}

class OAuthFaultQueue {
  private entries: Array<{ readonly fault: OAuthFault; remaining: number }> = []

  push(fault: OAuthFault): void {
    validateFault(fault)
    this.entries.push({ fault, remaining: fault.times ?? 1 })
  }

  /** Takes one application of the first fault for `endpoint` that `accept` accepts. */
  take(endpoint: OAuthEndpoint, accept: (fault: OAuthFault) => boolean = () => true): OAuthFault | undefined {
    const index = this.entries.findIndex((entry) => endpointOfFault(entry.fault) === endpoint && accept(entry.fault))
    const entry = this.entries[index]
    if (entry === undefined) return undefined
    entry.remaining -= 1
    if (entry.remaining <= 0) this.entries.splice(index, 1)
    return entry.fault
  }

  clear(): void {
    this.entries = []
  }
}

/** base64url without padding. */
const base64url = (bytes: Buffer): string => bytes.toString("base64url")
const secret = (prefix: string): string => `${prefix}_${base64url(randomBytes(24))}`
/** The S256 code challenge of a verifier (RFC 7636 §4.2). */
export const s256 = (verifier: string): string => base64url(createHash("sha256").update(verifier, "ascii").digest())

const formOf = (params: URLSearchParams): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of params) if (!(key in out)) out[key] = value
  return out
}

/** Names that appear more than once (RFC 6749 §3.1: parameters MUST NOT be repeated). */
const repeated = (params: URLSearchParams): string | undefined => {
  const seen = new Set<string>()
  for (const key of params.keys()) {
    if (seen.has(key)) return key
    seen.add(key)
  }
  return undefined
}

const scopeList = (scope: string | undefined): Array<string> => scope === undefined ? [] : scope.split(" ").filter((s) => s.length > 0)

const isAbsoluteUrlWithoutFragment = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.hash === "" && !value.includes("#")
  } catch {
    return false
  }
}

interface CodeGrant {
  readonly clientId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scope: string
  readonly resource: string | undefined
  used: boolean
}

interface RefreshGrant {
  readonly clientId: string
  readonly scope: string
  readonly resource: string | undefined
  valid: boolean
}

interface AccessGrant {
  token: IssuedToken
  revoked: boolean
  expiresAt: number
  /** By the `rejected-token` fault. */
  rejected: boolean
}

/** A compact JWS split and decoded (not verified). */
interface ParsedJws {
  readonly header: Record<string, unknown>
  readonly claims: Record<string, unknown>
  readonly signingInput: string
  readonly signature: Buffer
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const parseJws = (jws: string): ParsedJws | undefined => {
  const parts = jws.split(".")
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) return undefined
  const [h = "", c = "", s = ""] = parts
  try {
    const header: unknown = JSON.parse(Buffer.from(h, "base64url").toString("utf8"))
    const claims: unknown = JSON.parse(Buffer.from(c, "base64url").toString("utf8"))
    if (!isObject(header) || !isObject(claims)) return undefined
    return { header, claims, signingInput: `${h}.${c}`, signature: Buffer.from(s, "base64url") }
  } catch {
    return undefined
  }
}

/** The public KeyObject of a `publicKey` option; throws when it is not one. */
const publicKeyOf = (key: JsonWebKey | string | KeyObject): KeyObject => {
  // A public KeyObject is used as it is (createPublicKey only derives one from a private key).
  const object = key instanceof KeyObject
    ? (key.type === "public" ? key : createPublicKey(key))
    : typeof key === "string"
    ? createPublicKey(key)
    : createPublicKey({ key, format: "jwk" })
  const type = object.asymmetricKeyType
  if (type !== "rsa" && !(type === "ec" && object.asymmetricKeyDetails?.namedCurve === "prime256v1")) {
    throw new TypeError("publicKey must be an RSA or EC P-256 key")
  }
  return object
}

class OAuthError {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: number = 400,
    readonly headers: Readonly<Record<string, string>> = {}
  ) {}
}

const tokenHeaders = { "cache-control": "no-store", pragma: "no-cache" }

const sendOAuthError = (res: ServerResponse, e: OAuthError): void =>
  sendJsonBody(res, e.status, { error: e.error, error_description: e.description }, { ...tokenHeaders, ...e.headers })

export const startOAuthServer = async (options: OAuthServerOptions = {}): Promise<OAuthTestServer> => {
  const issuerPath = options.issuerPath ?? ""
  if (issuerPath !== "" && (!issuerPath.startsWith("/") || issuerPath.endsWith("/") || /[?#]/.test(issuerPath))) {
    throw new TypeError("issuerPath must be \"\" or start with \"/\", not end with \"/\", and have no query or fragment")
  }
  const serve = new Set<MetadataVariant>(options.serve ?? ["oauth"])
  for (const variant of serve) {
    if (!["oauth", "oidc-insert", "oidc-append"].includes(variant)) throw new TypeError(`serve: unknown variant ${variant}`)
  }
  const authMethods = options.tokenEndpointAuthMethods ??
    ((options.clients ?? []).some((c) => c.tokenEndpointAuthMethod === "private_key_jwt") ? ALL_AUTH_METHODS : DEFAULT_AUTH_METHODS)
  for (const method of authMethods) {
    if (!ALL_AUTH_METHODS.includes(method)) throw new TypeError(`tokenEndpointAuthMethods: unknown method ${String(method)}`)
  }
  const registrationOn = options.registration ?? true
  const cimdOn = options.clientIdMetadataDocumentSupported ?? false
  const issParameter = options.issParameter ?? true
  const requireResource = options.requireResource ?? true
  const ttlSeconds = options.accessTokenTtlSeconds ?? 3600
  if (!(Number.isSafeInteger(ttlSeconds) && ttlSeconds > 0)) throw new TypeError("accessTokenTtlSeconds must be a positive integer")
  const refreshOn = options.refreshTokens ?? true
  if (options.now !== undefined && typeof options.now !== "function") throw new TypeError("now must be a function")
  const now = options.now ?? Date.now
  const rotation = options.refreshTokenRotation ?? true

  const faults = new OAuthFaultQueue()
  for (const fault of options.faults ?? []) faults.push(fault)
  const requests: Array<OAuthRecordedRequest> = []
  const counts = new Map<OAuthEndpoint, number>()
  const clients = new Map<string, OAuthClient>()
  /** Verification keys of private_key_jwt clients, by client id. */
  const clientKeys = new Map<string, KeyObject>()
  for (const client of options.clients ?? []) {
    if (client.tokenEndpointAuthMethod === "private_key_jwt") {
      if (client.publicKey === undefined) throw new TypeError(`client ${client.clientId}: private_key_jwt needs a publicKey`)
      clientKeys.set(client.clientId, publicKeyOf(client.publicKey))
    }
    clients.set(client.clientId, client)
  }
  /** `jti`s of accepted client assertions, per client (RFC 7523 §3 item 7: no replay). */
  const usedJtis = new Map<string, Set<string>>()
  const codes = new Map<string, CodeGrant>()
  const refreshes = new Map<string, RefreshGrant>()
  const accesses = new Map<string, AccessGrant>()
  const issued: Array<IssuedToken> = []
  let aborted = 0
  let neverEndingBytes = 0
  let closing = false

  // Filled once listening.
  let origin = ""
  let issuer = ""

  const paths = () => ({
    oauth: `/.well-known/oauth-authorization-server${issuerPath}`,
    "oidc-insert": `/.well-known/openid-configuration${issuerPath}`,
    "oidc-append": `${issuerPath}/.well-known/openid-configuration`
  })
  const authorizePath = `${issuerPath}/authorize`
  const tokenPath = `${issuerPath}/token`
  const registerPath = `${issuerPath}/register`

  /** Which variant a path is (with no issuerPath, both OIDC variants share a path: the first served wins). */
  const variantOf = (path: string): MetadataVariant | undefined => {
    const p = paths()
    for (const variant of ["oauth", "oidc-insert", "oidc-append"] as const) {
      if (p[variant] === path && serve.has(variant)) return variant
    }
    return undefined
  }

  const endpointOf = (path: string): OAuthEndpoint => {
    if (variantOf(path) !== undefined) return "metadata"
    if (path === authorizePath) return "authorize"
    if (path === tokenPath) return "token"
    if (path === registerPath && registrationOn) return "register"
    return "other"
  }

  const metadata = (issuerValue: string): Record<string, unknown> => ({
    issuer: issuerValue,
    authorization_endpoint: `${origin}${authorizePath}`,
    token_endpoint: `${origin}${tokenPath}`,
    ...(registrationOn ? { registration_endpoint: `${origin}${registerPath}` } : {}),
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [...ALL_GRANTS],
    token_endpoint_auth_methods_supported: [...authMethods],
    ...(authMethods.includes("private_key_jwt") ? { token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS] } : {}),
    ...(options.codeChallengeMethodsSupported === null
      ? {}
      : { code_challenge_methods_supported: [...(options.codeChallengeMethodsSupported ?? ["S256"])] }),
    ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
    ...(cimdOn ? { client_id_metadata_document_supported: true } : {}),
    authorization_response_iss_parameter_supported: issParameter,
    ...options.metadataExtra
  })

  // ---- clients -----------------------------------------------------------------------------

  const methodOf = (client: OAuthClient): TokenEndpointAuthMethod =>
    client.tokenEndpointAuthMethod ?? (client.clientSecret === undefined ? "none" : "client_secret_basic")

  const isMetadataDocumentId = (clientId: string): boolean => {
    if (!cimdOn) return false
    try {
      const url = new URL(clientId)
      return (url.protocol === "https:" || url.protocol === "http:") && url.pathname.length > 1 && url.hash === ""
    } catch {
      return false
    }
  }

  /** A known client, else (CIMD) the one its metadata document describes, else undefined. */
  const findClient = async (clientId: string): Promise<OAuthClient | undefined> => {
    const known = clients.get(clientId)
    if (known !== undefined || !isMetadataDocumentId(clientId)) return known
    try {
      const response = await fetch(clientId, { redirect: "error", signal: AbortSignal.timeout(5_000) })
      if (!response.ok) return undefined
      const doc = (await response.json()) as Record<string, unknown>
      if (doc["client_id"] !== clientId) return undefined
      const uris = doc["redirect_uris"]
      // A metadata document has no shared secret: the client is public.
      const client: OAuthClient = {
        clientId,
        tokenEndpointAuthMethod: "none",
        redirectUris: Array.isArray(uris) ? uris.filter((u): u is string => typeof u === "string") : []
      }
      clients.set(clientId, client)
      return client
    } catch {
      return undefined
    }
  }

  // ---- tokens ------------------------------------------------------------------------------

  const issue = (
    clientId: string,
    grant: GrantType,
    scope: string,
    resource: string | undefined,
    refresh: "new" | "none" | string
  ): IssuedToken => {
    const accessToken = secret("at")
    const refreshToken = refresh === "new" ? secret("rt") : refresh === "none" ? undefined : refresh
    if (refresh === "new" && refreshToken !== undefined) refreshes.set(refreshToken, { clientId, scope, resource, valid: true })
    const expiresAt = now() + ttlSeconds * 1000
    const token: IssuedToken = {
      accessToken,
      ...(refreshToken === undefined ? {} : { refreshToken }),
      clientId,
      grant,
      scope,
      ...(resource === undefined ? {} : { resource }),
      expiresAt
    }
    accesses.set(accessToken, { token, revoked: false, expiresAt, rejected: false })
    issued.push(token)
    return token
  }

  const challenge = (fields: Record<string, string | undefined>): string =>
    "Bearer " +
    Object.entries(fields)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([key, value]) => `${key}="${value.replace(/["\\]/g, "\\$&")}"`)
      .join(", ")

  const checkToken = (token: string, check: TokenCheckOptions = {}): TokenCheck => {
    const invalid = (description: string): TokenCheck => ({
      ok: false,
      status: 401,
      error: "invalid_token",
      description,
      wwwAuthenticate: challenge({
        error: "invalid_token",
        error_description: description,
        resource_metadata: check.resourceMetadata
      })
    })
    const access = accesses.get(token)
    if (access === undefined) return invalid("unknown token")
    if (access.revoked) return invalid("token revoked")
    if (access.expiresAt <= now()) return invalid("token expired")
    if (access.rejected) return invalid("token rejected")
    if (check.resource !== undefined && access.token.resource !== check.resource) return invalid("token is for another resource")
    const have = new Set(scopeList(access.token.scope))
    const need = scopeList(check.scope)
    if (need.some((s) => !have.has(s))) {
      return {
        ok: false,
        status: 403,
        error: "insufficient_scope",
        description: "additional scope required",
        wwwAuthenticate: challenge({
          error: "insufficient_scope",
          scope: [...new Set([...have, ...need])].join(" "),
          resource_metadata: check.resourceMetadata,
          error_description: "additional scope required"
        })
      }
    }
    return { ok: true, token: access.token }
  }

  // ---- request handling --------------------------------------------------------------------

  /** Received and recorded, never answered: only the client's bound (or close) ends the socket. */
  const stall = (_res: ServerResponse): void => {}

  const handleMetadata = async (res: ServerResponse, path: string): Promise<void> => {
    const fault = faults.take("metadata")
    if (fault === undefined) return sendJsonBody(res, 200, metadata(issuer))
    switch (fault.kind) {
      case "stall":
        return stall(res)
      case "wrong-issuer":
        return sendJsonBody(res, 200, metadata(fault.issuer ?? ATTACKER))
      case "redirect-metadata": {
        const location = fault.location ?? `http://localhost:${new URL(origin).port}${path}`
        res.writeHead(302, { location })
        res.end()
        return
      }
      case "oversized-metadata": {
        const base = metadata(issuer)
        const empty = Buffer.byteLength(JSON.stringify({ ...base, x_padding: "" }))
        const padding = "x".repeat(Math.max(0, fault.bytes - empty))
        return sendJsonBody(res, 200, { ...base, x_padding: padding })
      }
      case "never-ending-metadata": {
        res.writeHead(200, jsonHeaders())
        const prefix = Buffer.from(`{"issuer":${JSON.stringify(issuer)},"x_padding":"`)
        return writeForever(res, prefix, Buffer.alloc(16 * 1024, "x"), (n) => {
          neverEndingBytes += n
        })
      }
      default:
        return sendJsonBody(res, 200, metadata(issuer))
    }
  }

  const handleAuthorize = async (res: ServerResponse, params: URLSearchParams): Promise<void> => {
    const fault = faults.take("authorize")
    if (fault?.kind === "stall") return stall(res)
    const q = formOf(params)
    const clientId = q["client_id"]
    const redirectUri = q["redirect_uri"]
    if (clientId === undefined) return sendText(res, 400, "testkit oauth: missing client_id")
    const client = await findClient(clientId)
    if (client === undefined) return sendText(res, 400, "testkit oauth: unknown client_id")
    if (redirectUri === undefined || !(client.redirectUris ?? []).includes(redirectUri)) {
      return sendText(res, 400, "testkit oauth: redirect_uri not registered for this client")
    }
    const state = q["state"]
    const redirect = (fields: Record<string, string | undefined>): void => {
      const target = new URL(redirectUri)
      for (const [key, value] of Object.entries(fields)) if (value !== undefined) target.searchParams.set(key, value)
      if (fault?.kind !== "drop-state" && state !== undefined) target.searchParams.set("state", state)
      const iss = fault?.kind === "iss-mismatch" ? (fault.iss ?? ATTACKER) : fault?.kind === "omit-iss" || !issParameter ? undefined : issuer
      if (iss !== undefined) target.searchParams.set("iss", iss)
      res.writeHead(302, { location: target.toString(), "cache-control": "no-store" })
      res.end()
    }
    const refuse = (error: string, description: string) => redirect({ error, error_description: description })
    const dup = repeated(params)
    if (dup !== undefined) return refuse("invalid_request", `parameter repeated: ${dup}`)
    if (q["response_type"] !== "code") return refuse("unsupported_response_type", "response_type must be code")
    if (!(client.grantTypes ?? ALL_GRANTS).includes("authorization_code")) {
      return refuse("unauthorized_client", "client may not use authorization_code")
    }
    const challengeValue = q["code_challenge"]
    if (challengeValue === undefined) return refuse("invalid_request", "code_challenge required")
    if (q["code_challenge_method"] !== "S256") return refuse("invalid_request", "code_challenge_method must be S256")
    if (!/^[A-Za-z0-9_-]{43}$/.test(challengeValue)) return refuse("invalid_request", "code_challenge is not an S256 challenge")
    if (options.requireState === true && state === undefined) return refuse("invalid_request", "state required")
    const resource = q["resource"]
    const resourceError = checkResource(resource)
    if (resourceError !== undefined) return refuse(resourceError.error, resourceError.description)
    const scopeError = checkScope(q["scope"])
    if (scopeError !== undefined) return refuse(scopeError.error, scopeError.description)
    const code = secret("code")
    codes.set(code, {
      clientId,
      redirectUri,
      codeChallenge: challengeValue,
      scope: q["scope"] ?? options.defaultScope ?? "",
      resource,
      used: false
    })
    return redirect({ code })
  }

  const checkResource = (resource: string | undefined): OAuthError | undefined => {
    if (resource === undefined) return requireResource ? new OAuthError("invalid_target", "resource required") : undefined
    if (!isAbsoluteUrlWithoutFragment(resource)) return new OAuthError("invalid_target", "resource must be an absolute URI without fragment")
    if (options.resources !== undefined && !options.resources.includes(resource)) {
      return new OAuthError("invalid_target", "unknown resource")
    }
    return undefined
  }

  const checkScope = (scope: string | undefined): OAuthError | undefined => {
    if (options.scopesSupported === undefined || scope === undefined) return undefined
    const unknown = scopeList(scope).filter((s) => !options.scopesSupported?.includes(s))
    return unknown.length === 0 ? undefined : new OAuthError("invalid_scope", `unknown scope: ${unknown.join(" ")}`)
  }

  /** Client authentication (RFC 6749 §2.3), each client held to its registered method. */
  const authenticate = async (req: IncomingMessage, form: Record<string, string>): Promise<OAuthClient> => {
    const authorization = headerValue(req, "authorization")
    const hasBasic = authorization !== undefined && /^basic /i.test(authorization)
    const hasAssertion = form["client_assertion"] !== undefined || form["client_assertion_type"] !== undefined
    let used: TokenEndpointAuthMethod
    let clientId: string | undefined
    let presented: string | undefined
    let assertion: ParsedJws | undefined
    if (hasAssertion && (hasBasic || form["client_secret"] !== undefined)) {
      throw new OAuthError("invalid_request", "more than one client authentication method")
    }
    if (hasBasic && authorization !== undefined) {
      const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8")
      const colon = decoded.indexOf(":")
      const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, " "))
      try {
        clientId = unform(colon < 0 ? decoded : decoded.slice(0, colon))
        presented = colon < 0 ? undefined : unform(decoded.slice(colon + 1))
      } catch {
        throw new OAuthError("invalid_client", "malformed Basic credentials", 401, { "www-authenticate": "Basic realm=\"testkit\"" })
      }
      if (form["client_secret"] !== undefined) throw new OAuthError("invalid_request", "more than one client authentication method")
      if (form["client_id"] !== undefined && form["client_id"] !== clientId) throw new OAuthError("invalid_request", "client_id differs from Basic credentials")
      used = "client_secret_basic"
    } else if (hasAssertion) {
      if (form["client_assertion_type"] !== JWT_BEARER_ASSERTION_TYPE) {
        throw new OAuthError("invalid_client", `client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`, 401)
      }
      const jws = form["client_assertion"]
      if (jws === undefined) throw new OAuthError("invalid_request", "client_assertion required")
      assertion = parseJws(jws)
      if (assertion === undefined) throw new OAuthError("invalid_client", "malformed client_assertion", 401)
      const sub = assertion.claims["sub"]
      // RFC 7521 §4.2: a client_id, when sent, names the client the assertion is about.
      if (form["client_id"] !== undefined && form["client_id"] !== sub) {
        throw new OAuthError("invalid_client", "client_id differs from the client_assertion's sub", 401)
      }
      clientId = form["client_id"] ?? (typeof sub === "string" ? sub : undefined)
      used = "private_key_jwt"
    } else if (form["client_secret"] !== undefined) {
      clientId = form["client_id"]
      presented = form["client_secret"]
      used = "client_secret_post"
    } else {
      clientId = form["client_id"]
      used = "none"
    }
    const basicChallenge = used === "client_secret_basic" ? { "www-authenticate": "Basic realm=\"testkit\"" } : undefined
    const fail = (description: string) => new OAuthError("invalid_client", description, 401, basicChallenge)
    if (clientId === undefined) throw fail("no client authentication")
    if (!authMethods.includes(used)) throw fail(`${used} is not supported`)
    const client = await findClient(clientId)
    if (client === undefined) throw fail("unknown client")
    if (methodOf(client) !== used) throw fail(`client must authenticate with ${methodOf(client)}`)
    if (assertion !== undefined) verifyAssertion(client, assertion)
    else if (used !== "none" && presented !== client.clientSecret) throw fail("wrong client secret")
    return client
  }

  /** RFC 7523 §3 (see the module comment); throws 401 invalid_client. Records the `jti` once accepted. */
  const verifyAssertion = (client: OAuthClient, jws: ParsedJws): void => {
    const fail = (description: string) => new OAuthError("invalid_client", `client_assertion: ${description}`, 401)
    const key = clientKeys.get(client.clientId)
    if (key === undefined) throw fail("no key registered for this client")
    const alg = jws.header["alg"]
    if (alg !== "RS256" && alg !== "ES256") throw fail(`unsupported alg ${String(alg)}`)
    if ((alg === "RS256") !== (key.asymmetricKeyType === "rsa")) throw fail(`alg ${alg} does not fit the client's key`)
    let valid: boolean
    try {
      valid = verify("sha256", Buffer.from(jws.signingInput, "ascii"), alg === "ES256" ? { key, dsaEncoding: "ieee-p1363" } : key, jws.signature)
    } catch {
      valid = false
    }
    if (!valid) throw fail("bad signature")
    const { iss, sub, aud, exp, nbf, jti } = jws.claims
    if (iss !== client.clientId) throw fail("iss is not the client id")
    if (sub !== client.clientId) throw fail("sub is not the client id")
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : []
    if (!audiences.some((a) => a === issuer || a === `${origin}${tokenPath}`)) throw fail("aud is neither the issuer nor the token endpoint")
    const nowSeconds = now() / 1000
    if (typeof exp !== "number" || !(exp > nowSeconds)) throw fail("expired or no exp")
    if (nbf !== undefined && (typeof nbf !== "number" || nbf > nowSeconds + 5)) throw fail("not yet valid (nbf)")
    if (typeof jti !== "string" || jti === "") throw fail("no jti")
    const seen = usedJtis.get(client.clientId) ?? new Set<string>()
    if (seen.has(jti)) throw fail("jti already used")
    seen.add(jti)
    usedJtis.set(client.clientId, seen)
  }

  const handleToken = async (req: IncomingMessage, res: ServerResponse, body: string): Promise<void> => {
    const stalled = faults.take("token", (f) => f.kind === "stall")
    if (stalled !== undefined) return stall(res)
    const contentType = headerValue(req, "content-type") ?? ""
    if (!contentType.toLowerCase().startsWith(FORM_TYPE)) {
      return sendOAuthError(res, new OAuthError("invalid_request", `content-type must be ${FORM_TYPE}`))
    }
    const params = new URLSearchParams(body)
    const form = formOf(params)
    const grant = form["grant_type"]
    const fault = faults.take("token", (f) => {
      if (f.kind === "invalid-grant-on-refresh") return grant === "refresh_token"
      if (f.kind === "token-error" || f.kind === "rejected-token") return f.grant === undefined || f.grant === grant
      return true
    })
    try {
      if (fault?.kind === "echo-secrets-in-error") {
        const echoed = ["code", "code_verifier", "refresh_token", "client_secret", "client_assertion"]
          .map((name) => form[name] === undefined ? undefined : `${name}=${form[name]}`)
          .filter((s) => s !== undefined)
        const basic = headerValue(req, "authorization")
        throw new OAuthError("invalid_grant", `rejected ${echoed.join(" ")}${basic === undefined ? "" : ` authorization=${basic}`}`)
      }
      if (fault?.kind === "token-error") {
        throw new OAuthError(fault.error, fault.description ?? "scripted error", fault.status ?? 400)
      }
      const dup = repeated(params)
      if (dup !== undefined) throw new OAuthError("invalid_request", `parameter repeated: ${dup}`)
      const client = await authenticate(req, form)
      if (grant === undefined) throw new OAuthError("invalid_request", "grant_type required")
      if (!(ALL_GRANTS as ReadonlyArray<string>).includes(grant)) throw new OAuthError("unsupported_grant_type", `unsupported grant_type ${grant}`)
      if (!(client.grantTypes ?? ALL_GRANTS).includes(grant as GrantType)) {
        throw new OAuthError("unauthorized_client", `client may not use ${grant}`)
      }
      if (fault?.kind === "invalid-grant-on-refresh") throw new OAuthError("invalid_grant", "refresh token rejected")
      let token: IssuedToken
      if (grant === "authorization_code") token = await codeGrant(client, form)
      else if (grant === "refresh_token") token = refreshGrant(client, form)
      else token = credentialsGrant(client, form)
      if (fault?.kind === "narrow-scope") {
        const narrowed: IssuedToken = { ...token, scope: fault.scope }
        const access = accesses.get(token.accessToken)
        if (access !== undefined) access.token = narrowed
        issued[issued.length - 1] = narrowed
        token = narrowed
      }
      if (fault?.kind === "rejected-token") {
        const access = accesses.get(token.accessToken)
        if (access !== undefined) access.rejected = true
      }
      const response: Record<string, unknown> = {
        access_token: token.accessToken,
        ...(fault?.kind === "missing-token-type" ? {} : { token_type: "Bearer" }),
        expires_in: ttlSeconds,
        ...(token.refreshToken === undefined ? {} : { refresh_token: token.refreshToken }),
        ...(token.scope === "" ? {} : { scope: token.scope })
      }
      return sendJsonBody(res, 200, response, tokenHeaders)
    } catch (cause) {
      if (cause instanceof OAuthError) return sendOAuthError(res, cause)
      throw cause
    }
  }

  const codeGrant = async (client: OAuthClient, form: Record<string, string>): Promise<IssuedToken> => {
    const code = form["code"]
    if (code === undefined) throw new OAuthError("invalid_request", "code required")
    const grant = codes.get(code)
    if (grant === undefined || grant.used) throw new OAuthError("invalid_grant", "unknown or used code")
    if (grant.clientId !== client.clientId) throw new OAuthError("invalid_grant", "code was issued to another client")
    if (form["redirect_uri"] !== grant.redirectUri) throw new OAuthError("invalid_grant", "redirect_uri differs from /authorize")
    const verifier = form["code_verifier"]
    if (verifier === undefined) throw new OAuthError("invalid_request", "code_verifier required")
    if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) throw new OAuthError("invalid_grant", "malformed code_verifier")
    if (s256(verifier) !== grant.codeChallenge) throw new OAuthError("invalid_grant", "PKCE verification failed")
    if (form["resource"] !== grant.resource) throw new OAuthError("invalid_target", "resource differs from /authorize")
    grant.used = true
    return issue(client.clientId, "authorization_code", grant.scope, grant.resource, refreshOn ? "new" : "none")
  }

  const refreshGrant = (client: OAuthClient, form: Record<string, string>): IssuedToken => {
    const presented = form["refresh_token"]
    if (presented === undefined) throw new OAuthError("invalid_request", "refresh_token required")
    const grant = refreshes.get(presented)
    if (grant === undefined || !grant.valid) throw new OAuthError("invalid_grant", "unknown, revoked or rotated refresh token")
    if (grant.clientId !== client.clientId) throw new OAuthError("invalid_grant", "refresh token was issued to another client")
    const resource = form["resource"]
    if (resource === undefined ? requireResource : resource !== grant.resource) {
      throw new OAuthError("invalid_target", "resource differs from the original grant")
    }
    const requested = form["scope"]
    const granted = new Set(scopeList(grant.scope))
    if (scopeList(requested).some((s) => !granted.has(s))) throw new OAuthError("invalid_scope", "scope exceeds the original grant")
    const scope = requested ?? grant.scope
    if (rotation) {
      grant.valid = false
      const token = issue(client.clientId, "refresh_token", scope, grant.resource, "new")
      // Keep the original scope on the rotated refresh token.
      if (token.refreshToken !== undefined) {
        refreshes.set(token.refreshToken, { clientId: client.clientId, scope: grant.scope, resource: grant.resource, valid: true })
      }
      return token
    }
    return issue(client.clientId, "refresh_token", scope, grant.resource, presented)
  }

  const credentialsGrant = (client: OAuthClient, form: Record<string, string>): IssuedToken => {
    if (methodOf(client) === "none") throw new OAuthError("unauthorized_client", "public clients may not use client_credentials")
    const resource = form["resource"]
    if (resource !== undefined || requireResource) {
      const error = checkResource(resource)
      if (error !== undefined) throw error
    }
    const scopeError = checkScope(form["scope"])
    if (scopeError !== undefined) throw scopeError
    return issue(client.clientId, "client_credentials", form["scope"] ?? options.defaultScope ?? "", resource, "none")
  }

  const handleRegister = (res: ServerResponse, json: unknown): void => {
    if (faults.take("register")?.kind === "stall") return stall(res)
    const fail = (error: string, description: string) => sendJsonBody(res, 400, { error, error_description: description })
    if (typeof json !== "object" || json === null || Array.isArray(json)) return fail("invalid_client_metadata", "body must be a JSON object")
    const meta = json as Record<string, unknown>
    const uris = meta["redirect_uris"] ?? []
    if (!Array.isArray(uris) || uris.some((u) => typeof u !== "string" || !isAbsoluteUrlWithoutFragment(u))) {
      return fail("invalid_redirect_uri", "redirect_uris must be absolute URIs without fragment")
    }
    const method = meta["token_endpoint_auth_method"] ?? "client_secret_basic"
    if (!ALL_AUTH_METHODS.includes(method as TokenEndpointAuthMethod) || !authMethods.includes(method as TokenEndpointAuthMethod)) {
      return fail("invalid_client_metadata", `unsupported token_endpoint_auth_method ${String(method)}`)
    }
    let publicKey: KeyObject | undefined
    if (method === "private_key_jwt") {
      const jwks = meta["jwks"]
      const first: unknown = isObject(jwks) && Array.isArray(jwks["keys"]) ? jwks["keys"][0] : undefined
      try {
        if (!isObject(first)) throw new TypeError("no key")
        publicKey = publicKeyOf(first as JsonWebKey)
      } catch {
        return fail("invalid_client_metadata", "private_key_jwt needs `jwks` with an RSA or EC P-256 public key")
      }
    }
    const grantTypes = meta["grant_types"] ?? ["authorization_code", "refresh_token"]
    if (!Array.isArray(grantTypes) || grantTypes.some((g) => !(ALL_GRANTS as ReadonlyArray<unknown>).includes(g))) {
      return fail("invalid_client_metadata", "unsupported grant_types")
    }
    const clientId = `client_${base64url(randomBytes(9))}`
    const clientSecret = method === "none" || method === "private_key_jwt" ? undefined : secret("cs")
    const client: OAuthClient = {
      clientId,
      ...(clientSecret === undefined ? {} : { clientSecret }),
      tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
      redirectUris: uris as Array<string>,
      grantTypes: grantTypes as Array<GrantType>,
      ...(publicKey === undefined ? {} : { publicKey })
    }
    if (publicKey !== undefined) clientKeys.set(clientId, publicKey)
    clients.set(clientId, client)
    sendJsonBody(res, 201, {
      ...meta,
      client_id: clientId,
      client_id_issued_at: Math.floor(now() / 1000),
      ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
      redirect_uris: uris,
      token_endpoint_auth_method: method,
      grant_types: grantTypes
    }, tokenHeaders)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.on("close", () => {
      if (!res.writableFinished && !closing) aborted += 1
    })
    res.on("error", () => {})
    let body: string
    try {
      body = await readBody(req)
    } catch {
      return
    }
    const url = new URL(req.url ?? "/", origin)
    const path = url.pathname
    const endpoint = endpointOf(path)
    const variant = variantOf(path)
    const contentType = (headerValue(req, "content-type") ?? "").toLowerCase()
    const form = req.method === "GET" ? formOf(url.searchParams) : contentType.startsWith(FORM_TYPE) ? formOf(new URLSearchParams(body)) : {}
    const parsed = contentType.startsWith("application/json") ? parseJson(body) : { ok: false as const }
    requests.push({
      method: req.method ?? "",
      url: req.url ?? "",
      path,
      endpoint,
      ...(variant === undefined ? {} : { variant }),
      headers: { ...req.headers },
      body,
      form,
      ...(parsed.ok ? { json: parsed.value } : {})
    })
    counts.set(endpoint, (counts.get(endpoint) ?? 0) + 1)
    const allow = (method: string): boolean => {
      if (req.method === method) return true
      sendText(res, 405, "testkit oauth: method not allowed", { allow: method })
      return false
    }
    switch (endpoint) {
      case "metadata":
        return allow("GET") ? handleMetadata(res, path) : undefined
      case "authorize":
        return allow("GET") ? handleAuthorize(res, url.searchParams) : undefined
      case "token":
        return allow("POST") ? handleToken(req, res, body) : undefined
      case "register":
        if (!allow("POST")) return
        if (!parsed.ok) return sendJsonBody(res, 400, { error: "invalid_client_metadata", error_description: "body must be JSON" })
        return handleRegister(res, parsed.value)
      default:
        if (!isGone(res)) sendText(res, 404, "testkit oauth: not found")
    }
  }

  const listener = await listenLoopback(handle)
  const port = listener.port
  origin = `http://127.0.0.1:${port}`
  issuer = `${origin}${issuerPath}`
  const p = paths()

  let closed: Promise<void> | undefined
  const shutdown = async (): Promise<void> => {
    closing = true
    faults.clear()
    await listener.close()
  }

  return {
    origin,
    issuer,
    port,
    metadataUrls: { oauth: origin + p.oauth, "oidc-insert": origin + p["oidc-insert"], "oidc-append": origin + p["oidc-append"] },
    authorizationEndpoint: origin + authorizePath,
    tokenEndpoint: origin + tokenPath,
    registrationEndpoint: origin + registerPath,
    requests,
    calls: (endpoint) => counts.get(endpoint) ?? 0,
    issuedTokens: () => [...issued],
    clients: () => [...clients.values()],
    checkToken,
    isValidToken: (token, check) => checkToken(token, check).ok,
    revokeAll: () => {
      for (const access of accesses.values()) access.revoked = true
      for (const refresh of refreshes.values()) refresh.valid = false
      for (const code of codes.values()) code.used = true
    },
    expireAll: () => {
      const past = now() - 1
      for (const access of accesses.values()) access.expiresAt = Math.min(access.expiresAt, past)
    },
    authorizeDirect: async (target) => {
      const url = new URL(target)
      if (url.origin !== origin || url.pathname !== authorizePath) {
        throw new Error(`testkit oauth: authorizeDirect needs a URL of ${origin}${authorizePath}`)
      }
      const response = await fetch(url, { redirect: "manual" })
      const location = response.headers.get("location")
      const text = await response.text()
      if (response.status !== 302 || location === null) {
        throw new Error(`testkit oauth: /authorize answered ${response.status}: ${text}`)
      }
      return location
    },
    script: (fault) => faults.push(fault),
    clearFaults: () => faults.clear(),
    abortedResponses: () => aborted,
    bytesWritten: () => neverEndingBytes,
    openConnections: listener.openConnections,
    waitFor,
    close: () => (closed ??= shutdown())
  }
}
