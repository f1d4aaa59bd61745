/**
 * A proxy's refusal, recognised in the cause of a request that got no answer (docs/DESIGN.md,
 * "Proxies"): the `CONNECT` answered with another status than 200, a 407 to an absolute-form
 * request, or a request phasebound itself kept from a proxy. Each means the request never
 * reached the MCP server: `not-sent`.
 *
 * The runtimes say it only in their errors' text, so the text is read here, and only here:
 * - undici 7: `RequestAbortedError` "Proxy response (407) !== 200 when HTTP Tunneling", and
 *   `InvalidArgumentError` "Proxy Authentication Required (407)" (absolute form);
 * - Bun 1.x: `ERR_PROXY_TUNNEL` "Proxy refused to open a tunnel: 407 ..." and, for an
 *   absolute-form request, the 407 itself as an answer (the transport maps that status).
 * `test/transport/proxy.test.ts` pins both texts: a new version that changes them fails there.
 *
 * A request whose connection failed while it was being set up (the proxy's answer to the
 * `CONNECT` was not HTTP, its head too long, the proxy reset before its `200`, or the TLS
 * handshake inside the tunnel failed) is marked by the Node client (`proxyNode.ts`) as
 * `SetupFailed`: undici had not written a byte of it. Bun's fetch does not say which phase failed.
 */

/** What phasebound kept from a proxy: a credential bound for a plain-http origin through a proxy off this machine. */
export class ProxyCredentialRefused extends Error {
  readonly _tag = "ProxyCredentialRefused"
  constructor() {
    super("an authorization header to a plain http origin is not sent through a proxy off this machine")
  }
}

/**
 * A request that failed before undici wrote any of it: its connection (a tunnel through the
 * proxy, TLS inside it) was still being set up. The runtime's error is the cause.
 */
export class SetupFailed extends Error {
  readonly _tag = "SetupFailed"
  constructor(cause: unknown) {
    super("the connection failed while it was being set up; nothing of the request was written", { cause })
  }
}

/** A recognised refusal: the public reason, and the proxy's status when it gave one. */
export interface ProxyRefusal {
  readonly reason: "proxy-refused" | "proxy-auth-required" | "insecure-url"
  readonly status: number | undefined
}

const tunnelStatus = /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling$/
const bunTunnel = /^Proxy refused to open a tunnel: (\d{3})\b/
const absoluteAuth = /^Proxy Authentication Required \(407\)$/

const ofStatus = (status: number): ProxyRefusal => ({ reason: status === 407 ? "proxy-auth-required" : "proxy-refused", status })

/** The refusal in an error or its causes (at most 8 deep), or `undefined`. */
export const proxyRefusalOf = (error: unknown, depth = 0): ProxyRefusal | undefined => {
  if (depth > 8 || error === null || typeof error !== "object") return undefined
  if (error instanceof ProxyCredentialRefused) return { reason: "insecure-url", status: undefined }
  const { cause, code, message } = error as { cause?: unknown; code?: unknown; message?: unknown }
  if (typeof message === "string") {
    const tunnel = (code === undefined || code === "UND_ERR_ABORTED" ? tunnelStatus.exec(message) : null) ??
      (code === undefined || code === "ERR_PROXY_TUNNEL" ? bunTunnel.exec(message) : null)
    if (tunnel !== null) return ofStatus(Number.parseInt(tunnel[1]!, 10))
    if ((code === undefined || code === "UND_ERR_INVALID_ARG") && absoluteAuth.test(message)) return ofStatus(407)
  }
  return proxyRefusalOf(cause, depth + 1)
}
