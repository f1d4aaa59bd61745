/**
 * Discovery of the authority of an MCP server (MCP authorization, "Authorization Server
 * Discovery"): from the `WWW-Authenticate` of a 401 and the server's URL, the
 * Protected Resource Metadata (RFC 9728), then the Authorization Server Metadata (RFC 8414,
 * OpenID Connect Discovery 1.0), with the 2025-03-26 fallbacks.
 *
 * Every document is one exchange of the `authorization` phase (docs/DESIGN.md, "Phases and
 * budgets"): a `GET` with `Accept: application/json`, under its own deadline and its own byte
 * ceiling from the `authorization` budget. Redirects to the same origin are followed (at most
 * `maxRedirects`, inside the same deadline, each answer under the same ceiling); a redirect to
 * another origin is refused and nothing is sent there. No caller header is ever sent: these
 * documents are public, and a credential belongs to the origin it was issued for.
 *
 * Order (the URLs themselves are built in `discoveryUrls.ts`):
 *
 * 1. Protected Resource Metadata at each of `resourceMetadataLocations` in order. A location
 *    that has no document (404, 405, or a 200 that is not `application/json`, such as a web
 *    application's catch-all page) moves to the next. A document found is decoded strictly and
 *    its `resource` must be one the location may name, else discovery fails (a document that
 *    names another resource MUST NOT be used, RFC 9728 §3.3: moving on would let any path of
 *    the server choose the authority).
 * 2. No document anywhere: the 2025-03-26 fallback. RFC 8414 metadata at the authorization
 *    base (the server's origin), else the default endpoints `/authorize`, `/token`,
 *    `/register` there.
 * 3. Authorization Server Metadata of the first authorization server the resource names (of
 *    the one the connection is bound to, `expectedIssuer`, when there is one), at
 *    `authorizationServerMetadataUrls(issuer)` in order, with the same "no document" rule;
 *    decoded strictly, its `issuer` that identifier exactly. None found: `no-authorization-server`.
 *
 * Binding and reach (docs/AUTHORIZATION.md, "Credentials bound to their authorization server", "Transport security and reach"): with an `expectedIssuer`, a resource
 * (or the 2025-03-26 fallback) that does not name that authorization server is
 * `AuthorizationFailed` `issuer-mismatch` before anything is sent to the one it names. Every
 * URL is checked by `authorityPolicy.ts` before it is fetched (the resource metadata
 * locations, the issuer), and the endpoints of the metadata found before discovery succeeds:
 * `insecure-url` or `private-authority`, and nothing is sent there.
 *
 * Failures are `McpConnectionError`s of phase `authorization`, step `metadata`, outcome
 * `not-sent`: discovery happens before the MCP request is (re)sent, so nothing of it reached
 * the MCP server's tool. Transient failures (a deadline, a connection failure, a 5xx) are
 * retryable, since every exchange here is an idempotent `GET`; a ceiling, a broken document, a
 * mismatch or a refused redirect is not. Public fields never carry a URL, a header or a value
 * of a document; the `DocumentProblem` (document, problem, field name) stays in process as the
 * error's `cause`.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import {
  AuthorizationFailed,
  ByteCeilingExceeded,
  type McpConnectionError,
  ProtocolViolation,
  type Reason,
  type Stage,
  UpstreamFailure
} from "../../McpConnectionError.js"
import type { Budget } from "../../PhasePolicy.js"
import type { Exchange } from "../transport/transport.js"
import { type BodyReadFailed, readBody } from "../bodyReader.js"
import { decodeUtf8 } from "../byteCount.js"
import { withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import { type Client, contentTypeOf, makeClient, transportError } from "../http.js"
import { type AuthorityPolicy, checkAuthorityUrl } from "./authorityPolicy.js"
import { type BearerErrorCode, parseBearerChallenge } from "./challenge.js"
import { parseAuthorityJson } from "./jsonAnswer.js"
import {
  authorizationServerMetadataUrls,
  canonicalResource,
  isSecure,
  legacyAuthorizationBase,
  legacyDefaultEndpoints,
  legacyMetadataUrl,
  parseHttpUrl,
  parseIssuer,
  type ResourceMetadataLocation,
  resourceMatches,
  resourceMetadataLocations,
  sameOrigin
} from "./discoveryUrls.js"
import {
  type AuthorizationServerMetadata,
  decodeAuthorizationServerMetadata,
  decodeProtectedResourceMetadata,
  type DocumentProblem,
  type ProtectedResourceMetadata
} from "./metadata.js"

/** Most same-origin redirects followed for one document (inside its one deadline). */
export const maxRedirects = 5

/** What the 401's Bearer challenge asked for (peer input, already validated by `parseBearerChallenge`). */
export interface ChallengeParameters {
  readonly scope: ReadonlyArray<string> | undefined
  readonly error: BearerErrorCode | (string & {}) | undefined
}

/** The authority of an MCP server, as discovery found it. */
export interface DiscoveredAuthority {
  /**
   * The RFC 8707 `resource` to send on every authorization and token request: the `resource`
   * the Protected Resource Metadata published (it matched the server), or, in the 2025-03-26
   * fallback, the server's canonical URI.
   */
  readonly resource: string
  /** The Protected Resource Metadata; absent in the 2025-03-26 fallback. */
  readonly resourceMetadata: ProtectedResourceMetadata | undefined
  /** The Authorization Server Metadata (in the fallback without metadata: the default endpoints). */
  readonly authorizationServer: AuthorizationServerMetadata
  /** Where `authorizationServer` came from: a metadata document, or the 2025-03-26 default endpoints. */
  readonly authorizationServerSource: "metadata" | "default-endpoints"
  /** The `scope` and `error` of the 401's Bearer challenge (both absent without one). */
  readonly challenge: ChallengeParameters
}

export interface DiscoverOptions {
  /** The MCP server's URL (its query, fragment and userinfo are never used nor sent). */
  readonly serverUrl: URL
  /** The `WWW-Authenticate` of the 401 (one value or its field lines), or none. */
  readonly wwwAuthenticate: string | ReadonlyArray<string> | undefined
  /** The validated `authorization` budget: each exchange gets its timeout and its byte ceiling. */
  readonly budget: Budget
  /** The stage of the operation that needed authorization (default `connect`), named in failures. */
  readonly stage?: Stage | undefined
  /** The issuer of the only authorization server that may be used (the credentials' binding). */
  readonly expectedIssuer?: string | undefined
  /** Allow authorities on non-public literal addresses (`authorityPolicy.ts`); default false. */
  readonly allowPrivateAuthority?: boolean | undefined
}

/** One document fetched: found (its JSON), or not at this URL. */
type Fetched =
  | { readonly _tag: "Found"; readonly json: unknown; readonly observedBytes: number }
  | { readonly _tag: "NotHere" }

const notHere: Fetched = { _tag: "NotHere" }

const exchangeOf = (budget: Budget, stage: Stage): Exchange => ({
  stage,
  phase: "authorization",
  budget,
  authorizationStep: "metadata"
})

/** A failure about what a peer sent (a document, a redirect): not retryable, nothing of the MCP request sent. */
const violation = (
  exchange: Exchange,
  reason: Reason,
  details: { readonly observedBytes?: number; readonly status?: number } = {},
  cause?: unknown
) =>
  new ProtocolViolation({
    ...Failures.fields(exchange),
    reason,
    observedBytes: details.observedBytes,
    status: details.status,
    outcome: "not-sent",
    retryable: false
  }, cause)

/** The resource names another authorization server than the one the connection is bound to. */
const boundElsewhere = (exchange: Exchange) =>
  new AuthorizationFailed({
    ...Failures.fields(exchange),
    reason: "issuer-mismatch",
    outcome: "not-sent",
    retryable: false
  })

/** `url` may be contacted, or the refusal of the policy. */
const reachable = (exchange: Exchange, policy: AuthorityPolicy, url: URL | undefined): Effect.Effect<void, McpConnectionError> => {
  const refusal = url === undefined ? "insecure-url" : checkAuthorityUrl(url, policy)
  return refusal === undefined ? Effect.void : Effect.fail(violation(exchange, refusal))
}

/** Every endpoint of `metadata` may be contacted (checked before anything is sent to any). */
const endpointsReachable = (exchange: Exchange, policy: AuthorityPolicy, metadata: AuthorizationServerMetadata) =>
  Effect.forEach(
    [metadata.token_endpoint, metadata.registration_endpoint, metadata.authorization_endpoint],
    (endpoint) => endpoint === undefined ? Effect.void : reachable(exchange, policy, parseHttpUrl(endpoint)),
    { discard: true }
  )

const reasonOf = (problem: DocumentProblem): Reason =>
  problem.problem === "issuer-mismatch"
    ? "issuer-mismatch"
    : problem.problem === "insecure-url"
    ? "insecure-url"
    : "invalid-metadata"

const redirectStatuses: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/**
 * One document: a `GET` of `url` (and of its same-origin redirects) under the exchange's own
 * deadline, its body read under the exchange's ceiling and decoded as strict UTF-8 JSON.
 */
const fetchDocument = (
  client: Client,
  exchange: Exchange,
  url: URL
): Effect.Effect<Fetched, McpConnectionError> => {
  const { maxBytes, timeoutMs } = exchange.budget
  const onRequestError = (error: HttpClientError.HttpClientError) => {
    // The reason says whether the connection opened; the outcome is the MCP request's.
    const reason = transportError(exchange, "sending")(error).reason ?? "connection-failed"
    return Failures.transport(exchange, reason, "not-sent", {}, error)
  }
  const answer = (
    current: URL,
    response: HttpClientResponse.HttpClientResponse,
    hops: number
  ): Effect.Effect<Fetched | URL, McpConnectionError> => {
    const status = response.status
    if (redirectStatuses.has(status)) {
      const location = response.headers["location"]
      const target = location === undefined ? undefined : parseRelative(location, current)
      if (target === undefined || !sameOrigin(current, target) || hops >= maxRedirects) {
        return Effect.fail(violation(exchange, "redirect-refused", { status }))
      }
      // Followed once this answer is released.
      return Effect.succeed(target)
    }
    if (status === 404 || status === 405) return Effect.succeed(notHere)
    if (status !== 200) {
      return Effect.fail(
        new UpstreamFailure({
          ...Failures.fields(exchange),
          status,
          outcome: "not-sent",
          retryable: status >= 500
        })
      )
    }
    if (contentTypeOf(response) !== "application/json") return Effect.succeed(notHere)
    return readBody(response, maxBytes).pipe(
      Effect.catchTags({
        FrameTooLarge: (tooLarge) =>
          Effect.fail(
            new ByteCeilingExceeded({
              ...Failures.fields(exchange),
              observedBytes: tooLarge.observedBytes,
              status,
              outcome: "not-sent",
              retryable: false
            })
          ),
        BodyReadFailed: (failed: BodyReadFailed) => Effect.fail(Failures.transport(exchange, "connection-closed", "not-sent", {}, failed.cause)),
        ResponseError: (error) => Effect.fail(Failures.transport(exchange, "connection-closed", "not-sent", {}, error))
      }),
      Effect.flatMap((bytes) => {
        const observedBytes = bytes.length
        const text = decodeUtf8(bytes)
        if (Either.isLeft(text)) return Effect.fail(violation(exchange, "invalid-utf8", { observedBytes, status }))
        return Either.match(parseAuthorityJson(exchange, text.right, { observedBytes, status }), {
          onLeft: (refused) => Effect.fail(refused === "invalid-json" ? violation(exchange, "invalid-json", { observedBytes, status }) : refused),
          onRight: (json) => Effect.succeed<Fetched>({ _tag: "Found", json, observedBytes })
        })
      })
    )
  }
  const get = (current: URL, hops: number): Effect.Effect<Fetched, McpConnectionError> =>
    Effect.flatMap(
      client.execute(
        HttpClientRequest.get(current, { headers: { accept: "application/json" } }),
        onRequestError,
        (response) => answer(current, response, hops)
      ),
      (next) => next instanceof URL ? get(next, hops + 1) : Effect.succeed(next)
    )
  return withDeadline(get(url, 0), timeoutMs, () => Failures.deadline(exchange, "not-sent"))
}

/** A `Location` resolved against the URL it answered; `undefined` when it is no usable http(s) URL. */
const parseRelative = (location: string, base: URL): URL | undefined => {
  let resolved: URL
  try {
    resolved = new URL(location, base)
  } catch {
    return undefined
  }
  resolved.hash = ""
  return parseHttpUrl(resolved.href)
}

/**
 * Discovers the authority of the MCP server at `serverUrl` (see the module comment). Needs an
 * `HttpClient`; redirects are never followed by it (`internal/http.ts`).
 */
export const discoverAuthority = (
  options: DiscoverOptions
): Effect.Effect<DiscoveredAuthority, McpConnectionError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const exchange = exchangeOf(options.budget, options.stage ?? "connect")
    const http = yield* makeClient({})
    const policy: AuthorityPolicy = {
      serverUrl: options.serverUrl,
      allowPrivateAuthority: options.allowPrivateAuthority ?? false
    }
    const expected = options.expectedIssuer
    const fetch = (url: URL) => Effect.zipRight(reachable(exchange, policy, url), fetchDocument(http, exchange, url))

    const bearer = parseBearerChallenge(options.wwwAuthenticate)
    const challenge: ChallengeParameters = bearer._tag === "BearerChallenge"
      ? { scope: bearer.scope, error: bearer.error }
      : { scope: undefined, error: undefined }
    const resourceMetadataUrl = bearer._tag === "BearerChallenge" ? bearer.resourceMetadata : undefined

    // 1. Protected Resource Metadata.
    let found: { readonly metadata: ProtectedResourceMetadata; readonly location: ResourceMetadataLocation } | undefined
    for (const location of resourceMetadataLocations(options.serverUrl, resourceMetadataUrl)) {
      const fetched = yield* fetch(location.url)
      if (fetched._tag === "NotHere") continue
      const decoded = decodeProtectedResourceMetadata(fetched.json)
      if (Either.isLeft(decoded)) {
        return yield* Effect.fail(
          violation(exchange, reasonOf(decoded.left), { observedBytes: fetched.observedBytes }, decoded.left)
        )
      }
      if (!resourceMatches(location, decoded.right.resource)) {
        return yield* Effect.fail(violation(exchange, "resource-mismatch", { observedBytes: fetched.observedBytes }))
      }
      found = { metadata: decoded.right, location }
      break
    }

    // 2. The 2025-03-26 fallback: the server's origin is its authorization server.
    if (found === undefined) {
      if (!isSecure(options.serverUrl)) return yield* Effect.fail(violation(exchange, "insecure-url"))
      const issuer = legacyAuthorizationBase(options.serverUrl)
      if (expected !== undefined && expected !== issuer) return yield* Effect.fail(boundElsewhere(exchange))
      const resource = canonicalResource(options.serverUrl)
      const fetched = yield* fetch(legacyMetadataUrl(options.serverUrl))
      if (fetched._tag === "Found") {
        const metadata = yield* decodeServer(exchange, fetched, issuer)
        yield* endpointsReachable(exchange, policy, metadata)
        return {
          resource,
          resourceMetadata: undefined,
          authorizationServer: metadata,
          authorizationServerSource: "metadata",
          challenge
        } satisfies DiscoveredAuthority
      }
      return {
        resource,
        resourceMetadata: undefined,
        authorizationServer: { issuer, ...legacyDefaultEndpoints(options.serverUrl) },
        authorizationServerSource: "default-endpoints",
        challenge
      } satisfies DiscoveredAuthority
    }

    // 3. Authorization Server Metadata of the first authorization server (or of the bound one).
    const servers = found.metadata.authorization_servers
    const issuer = expected === undefined ? servers[0]! : servers.find((server) => server === expected)
    if (issuer === undefined) return yield* Effect.fail(boundElsewhere(exchange))
    yield* reachable(exchange, policy, parseIssuer(issuer))
    const urls = authorizationServerMetadataUrls(issuer)
    // The decoder only accepts issuers `parseIssuer` accepts; this is a second guard.
    if (urls === undefined) return yield* Effect.fail(violation(exchange, "insecure-url"))
    for (const url of urls) {
      const fetched = yield* fetch(url)
      if (fetched._tag === "NotHere") continue
      const metadata = yield* decodeServer(exchange, fetched, issuer)
      yield* endpointsReachable(exchange, policy, metadata)
      return {
        resource: found.metadata.resource,
        resourceMetadata: found.metadata,
        authorizationServer: metadata,
        authorizationServerSource: "metadata",
        challenge
      } satisfies DiscoveredAuthority
    }
    return yield* Effect.fail(violation(exchange, "no-authorization-server"))
  })

const decodeServer = (
  exchange: Exchange,
  fetched: Extract<Fetched, { _tag: "Found" }>,
  issuer: string
): Effect.Effect<AuthorizationServerMetadata, McpConnectionError> => {
  const decoded = decodeAuthorizationServerMetadata(fetched.json, issuer)
  return Either.isLeft(decoded)
    ? Effect.fail(violation(exchange, reasonOf(decoded.left), { observedBytes: fetched.observedBytes }, decoded.left))
    : Effect.succeed(decoded.right)
}
