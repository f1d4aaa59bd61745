/**
 * Which authority URLs a connection's authorization may contact (docs/AUTHORIZATION.md,
 * "Transport security and reach"): the Protected Resource Metadata, the
 * authorization server's metadata and its endpoints are named by the MCP server (or by
 * documents it points to), so a hostile server could otherwise make the client GET and POST
 * (with its client secret) to any service the client can reach.
 *
 * An authority URL is allowed when:
 *
 * 1. it is `https`, or `http` on a loopback host while the MCP server is on a loopback host
 *    too (else `insecure-url`); and
 * 2. it is on the MCP server's own origin (the client talks to it already), or its host is a
 *    public address or a name, or it is on a loopback host while the MCP server is (any port:
 *    a local server and its local authorization server), or the caller allowed private
 *    authorities (`allowPrivateAuthority`). Anything else (a loopback host named by a remote
 *    server, a private, link-local, unspecified or reserved literal address) is
 *    `private-authority`.
 *
 * Names are not resolved (`addresses.ts`): a name whose DNS answer is a private address is
 * not caught here. A caller who needs that provides an `HttpClient` that checks the address
 * it connects to.
 */
import { addressKindOf, isLoopbackHost } from "./addresses.js"
import { sameOrigin } from "./discoveryUrls.js"

export interface AuthorityPolicy {
  /** The MCP server's URL. */
  readonly serverUrl: URL
  /** The caller allows authorities on loopback, private, link-local and other non-public addresses. */
  readonly allowPrivateAuthority: boolean
}

export type AuthorityRefusal = "insecure-url" | "private-authority"

/** `undefined` when `url` may be contacted under `policy`; else why not. */
export const checkAuthorityUrl = (url: URL, policy: AuthorityPolicy): AuthorityRefusal | undefined => {
  const serverLoopback = isLoopbackHost(policy.serverUrl)
  const kind = addressKindOf(url.hostname)
  if (url.protocol !== "https:" && !(url.protocol === "http:" && kind === "loopback" && serverLoopback)) {
    return "insecure-url"
  }
  if (sameOrigin(url, policy.serverUrl) || kind === "public" || policy.allowPrivateAuthority) return undefined
  if (kind === "loopback" && serverLoopback) return undefined
  return "private-authority"
}
