/**
 * Where the OAuth documents of an MCP server are, and which identities they must carry
 * (MCP authorization, "Authorization Server Discovery"): the Protected Resource Metadata URLs
 * to try (RFC 9728) with the `resource` each may name, the metadata URLs of an authorization
 * server (RFC 8414, OpenID Connect Discovery 1.0), the 2025-03-26 fallbacks, the RFC 8707
 * `resource` of a server, and the origin rule that keeps redirects and tokens where they
 * belong. Pure: URLs in, URLs out, no I/O.
 *
 * Nothing built here keeps the query, fragment or userinfo of the MCP server URL: they may
 * carry the caller's secrets, and none of them identifies the server to OAuth.
 */
import { isLoopbackHost } from "./addresses.js"

/** The characters RFC 3986 allows in a URI: anything else (spaces, controls, non-ASCII) is refused, never repaired. */
const uriCharacters = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/
// `scheme://` and an authority right after it (a WHATWG parser would read `https:///x` as host `x`).
const httpScheme = /^https?:\/\/[^/]/i

/**
 * An absolute `http`/`https` URL as an OAuth document must spell it: only URI characters, an
 * explicit `scheme://`, no userinfo. `undefined` for anything else (relative references,
 * other schemes, the lenient spellings a WHATWG parser would repair).
 */
export const parseHttpUrl = (text: string): URL | undefined => {
  if (!uriCharacters.test(text) || !httpScheme.test(text)) return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.username !== "" || url.password !== "" || url.hostname === "") return undefined
  return url
}

/**
 * A loopback host (127.0.0.0/8, `::1`, `localhost` and names under `.localhost`, see
 * `addresses.ts`): the only hosts plain `http` is allowed on (local servers, tests).
 */
export const isLoopback = (url: URL): boolean => isLoopbackHost(url)

/**
 * Served over a secure channel: `https`, or `http` on a loopback host (MCP authorization,
 * "Communication Security": every authorization server endpoint is HTTPS).
 */
export const isSecure = (url: URL): boolean => url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url))

/**
 * An issuer identifier (RFC 8414 §2): an absolute URL without query or fragment, served
 * securely. `undefined` otherwise. The identifier itself is the text, compared as is.
 */
export const parseIssuer = (issuer: string): URL | undefined => {
  const url = parseHttpUrl(issuer)
  if (url === undefined || issuer.includes("?") || issuer.includes("#") || !isSecure(url)) return undefined
  return url
}

/**
 * Same origin (scheme, host and port, RFC 6454), for `http`/`https` URLs only: a redirect is
 * followed, and a token sent, only where this holds. A default port and its explicit spelling
 * are the same origin; a URL of any other scheme is never the same origin as anything.
 */
export const sameOrigin = (a: URL, b: URL): boolean =>
  (a.protocol === "https:" || a.protocol === "http:") &&
  a.protocol === b.protocol &&
  a.hostname === b.hostname &&
  a.port === b.port

const originOf = (url: URL): string => `${url.protocol}//${url.host}`

/**
 * The canonical URI of an MCP server, its RFC 8707 `resource` (MCP authorization, "Canonical
 * Server URI"): scheme and host in lowercase, a default port left out, the path kept as
 * given, a path that is only `/` left out (the spec's form without the trailing slash; a
 * trailing slash after a longer path may be significant and is kept). No userinfo, query or
 * fragment.
 */
export const canonicalResource = (serverUrl: URL): string => originOf(serverUrl) + (serverUrl.pathname === "/" ? "" : serverUrl.pathname)

const protectedResourceSuffix = "/.well-known/oauth-protected-resource"

/** Where a Protected Resource Metadata document may be, and what its `resource` may be. */
export interface ResourceMetadataLocation {
  readonly url: URL
  /** `challenge`: the `resource_metadata` of the 401; `path`: the path-aware well-known URL; `root`: the root one. */
  readonly source: "challenge" | "path" | "root"
  /**
   * The canonical resource identifiers the document found here may name (RFC 9728 §3.3): the
   * identifier the well-known URL was built from, and for the server's own URL the server.
   */
  readonly resources: ReadonlyArray<string>
}

/**
 * The Protected Resource Metadata URLs to try, in order (MCP authorization, "Protected Resource
 * Metadata Discovery Requirements"): the challenge's `resource_metadata` alone when it is
 * present and usable; otherwise the path-aware well-known URL (not for a server at the root),
 * then the root one (RFC 9728 §3.1).
 *
 * A `resource_metadata` that is not a secure absolute URL without userinfo is not usable, and
 * discovery falls back to the well-known URLs on the server's own origin. Its fragment is
 * dropped (never sent); its query is the server's and kept.
 *
 * What each document may name (RFC 9728 §3.3): at the challenge's URL, the server; at the
 * path-aware URL, the server; at the root URL, the origin (the identifier the root URL is
 * built from) or the server itself (the most specific identifier, "Canonical Server URI"). A
 * challenge that points at the server's own root well-known URL is read as that URL.
 */
export const resourceMetadataLocations = (
  serverUrl: URL,
  resourceMetadata?: string | undefined
): ReadonlyArray<ResourceMetadataLocation> => {
  const server = canonicalResource(serverUrl)
  const origin = originOf(serverUrl)
  const root = new URL(origin + protectedResourceSuffix)
  const rootResources = server === origin ? [origin] : [origin, server]
  const challenge = resourceMetadata === undefined ? undefined : parseHttpUrl(resourceMetadata)
  if (challenge !== undefined && isSecure(challenge)) {
    challenge.hash = ""
    const resources = challenge.href === root.href ? rootResources : [server]
    return [{ url: challenge, source: "challenge", resources }]
  }
  const rootLocation: ResourceMetadataLocation = { url: root, source: "root", resources: rootResources }
  if (serverUrl.pathname === "/") return [rootLocation]
  return [
    { url: new URL(origin + protectedResourceSuffix + serverUrl.pathname), source: "path", resources: [server] },
    rootLocation
  ]
}

/**
 * Whether the `resource` a Protected Resource Metadata document names is one the document at
 * `location` may name (RFC 9728 §3.3: otherwise the document MUST NOT be used). The comparison
 * is between canonical forms: scheme and host without regard to case ("Canonical Server URI":
 * uppercase SHOULD be accepted), a default port and a lone `/` path as the canonical form
 * writes them; the path otherwise exactly. The MCP specification has no prefix or origin
 * rule: a resource that only shares a path prefix or the origin does not match. A resource
 * with a query, fragment or userinfo never matches.
 *
 * When it matches, the `resource` sent to the authorization server is the published value.
 */
export const resourceMatches = (location: ResourceMetadataLocation, published: string): boolean => {
  const url = parseHttpUrl(published)
  if (url === undefined || published.includes("?") || published.includes("#")) return false
  return location.resources.includes(canonicalResource(url))
}

const oauthSuffix = "/.well-known/oauth-authorization-server"
const openIdSuffix = "/.well-known/openid-configuration"

/**
 * The metadata URLs of an authorization server, in the spec's priority order (MCP
 * authorization, "Authorization Server Metadata Discovery"). With a path: RFC 8414 path
 * insertion, OpenID Connect path insertion (RFC 8414 §5), OpenID Connect path appending.
 * Without one: RFC 8414, then OpenID Connect. Terminating slashes of the path are removed
 * before inserting or appending (RFC 8414 §3.1, OpenID Connect Discovery §4), so an issuer
 * whose path is only `/` has no path. `undefined` when `issuer` is no issuer identifier
 * (`parseIssuer`).
 */
export const authorizationServerMetadataUrls = (issuer: string): ReadonlyArray<URL> | undefined => {
  const url = parseIssuer(issuer)
  if (url === undefined) return undefined
  const origin = originOf(url)
  const path = url.pathname.replace(/\/+$/, "")
  if (path === "") return [new URL(origin + oauthSuffix), new URL(origin + openIdSuffix)]
  return [
    new URL(origin + oauthSuffix + path),
    new URL(origin + openIdSuffix + path),
    new URL(origin + path + openIdSuffix)
  ]
}

/**
 * The authorization base URL of the 2025-03-26 revision ("Authorization Base URL"), used when
 * no Protected Resource Metadata is found: the MCP server URL with its path discarded. It is
 * also the issuer its metadata must name (RFC 8414 §3.3).
 */
export const legacyAuthorizationBase = (serverUrl: URL): string => originOf(serverUrl)

/** The one metadata URL of the 2025-03-26 fallback: RFC 8414 at the authorization base. */
export const legacyMetadataUrl = (serverUrl: URL): URL => new URL(legacyAuthorizationBase(serverUrl) + oauthSuffix)

/** The endpoints of an authorization server that publishes no metadata. */
export interface DefaultEndpoints {
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly registration_endpoint: string
}

/**
 * The default endpoints of the 2025-03-26 revision ("Fallbacks for Servers without Metadata
 * Discovery"), used only when its metadata URL has none: `/authorize`, `/token` and
 * `/register` on the authorization base.
 */
export const legacyDefaultEndpoints = (serverUrl: URL): DefaultEndpoints => {
  const base = legacyAuthorizationBase(serverUrl)
  return {
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`
  }
}
