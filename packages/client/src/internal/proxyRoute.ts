/**
 * Which proxy a request goes through (docs/DESIGN.md, "Proxies"): the proxy settings read from
 * the environment or given, validated before any I/O, and the `NO_PROXY` rule. Pure: the
 * runtimes' HTTP clients (`proxyNode.ts`, `proxyFetch.ts`) ask `route` for every request.
 */
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import type { InvalidOption } from "../McpConnectionError.js"
import { invalidConfig } from "./failures.js"
import { addressKindOf, inIpv4, inIpv6, parseIpv4, parseIpv6 } from "./oauth/addresses.js"

/** One proxy: its URL (userinfo included: a secret), and whether it is on this machine. */
export interface Proxy {
  /** The proxy's URL as given, credentials included: never in a public field, a span or a log. */
  readonly url: Redacted.Redacted<string>
  readonly protocol: "http:" | "https:"
  /** The proxy is on loopback: what is sent to it stays on this machine. */
  readonly loopback: boolean
  /**
   * The values that must never be shown: the user name and password, raw and percent-decoded,
   * and `user:password` as its `Proxy-Authorization: Basic` token encodes it.
   */
  readonly secrets: ReadonlyArray<string>
}

/**
 * One `NO_PROXY` entry: a host name (or a domain and its subdomains), optionally one port; or an
 * address range in CIDR notation (`10.0.0.0/8`, `fd00::/8`), on every port.
 */
export type NoProxyEntry =
  | {
    readonly host: string
    /** 0: every port. */
    readonly port: number
  }
  | { readonly range: { readonly ipv4: number; readonly bits: number } | { readonly ipv6: ReadonlyArray<number>; readonly bits: number } }

/** `address/bits` with an IPv4 or IPv6 address and a prefix length in range, else `undefined`. */
const parseRange = (token: string): Extract<NoProxyEntry, { range: unknown }>["range"] | undefined => {
  const match = /^\[?([0-9a-fA-F.:]+)\]?\/(\d{1,3})$/.exec(token)
  if (match === null) return undefined
  const bits = Number.parseInt(match[2]!, 10)
  const ipv4 = parseIpv4(match[1]!)
  if (ipv4 !== undefined) return bits <= 32 ? { ipv4, bits } : undefined
  const ipv6 = parseIpv6(match[1]!)
  return ipv6 !== undefined && bits <= 128 ? { ipv6, bits } : undefined
}

/** The validated settings: the proxy of each scheme, and the hosts reached directly. */
export interface Settings {
  readonly http: Proxy | undefined
  readonly https: Proxy | undefined
  /** `"*"`: no request goes through a proxy. */
  readonly noProxy: ReadonlyArray<NoProxyEntry> | "*"
}

/** What the settings are made of, raw: a proxy URL per scheme and the `NO_PROXY` list. */
export interface Raw {
  readonly httpProxy?: string | Redacted.Redacted<string> | undefined
  readonly httpsProxy?: string | Redacted.Redacted<string> | undefined
  readonly noProxy?: string | undefined
}

const reveal = (value: string | Redacted.Redacted<string>): string => typeof value === "string" ? value : Redacted.value(value)

const decodeSafely = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/**
 * A proxy URL: `http://` or `https://`, a host, nothing but `/` as its path, no query or
 * fragment. The refusal names the option, never the value (it may carry a password).
 */
export const parseProxy = (value: string, option: string): Either.Either<Proxy, InvalidOption> => {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return Either.left(invalidConfig(option, "invalid-url"))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return Either.left(invalidConfig(option, "invalid-url"))
  if (url.hostname === "" || (url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") {
    return Either.left(invalidConfig(option, "invalid-url"))
  }
  const secrets = [url.username, url.password].filter((part) => part.length > 0).flatMap((part) => {
    const decoded = decodeSafely(part)
    return decoded === part ? [part] : [part, decoded]
  })
  if (url.username !== "" || url.password !== "") secrets.push(`${decodeSafely(url.username)}:${decodeSafely(url.password)}`)
  return Either.right({
    url: Redacted.make(url.href),
    protocol: url.protocol,
    loopback: addressKindOf(url.hostname) === "loopback",
    secrets
  })
}

/**
 * `NO_PROXY`: entries separated by commas or white space; `*` alone means every host; an entry
 * is a host name or address, with an optional `:port`, a leading `.` or `*.` ignored; it matches
 * that host and its subdomains. IPv6 addresses in brackets (`[::1]`, `[::1]:8080`). The same
 * reading as undici's and curl's. An address range in CIDR notation (`10.0.0.0/8`,
 * `fd00::/8`, as curl reads them) matches the addresses in it, whatever the port; a URL's host
 * name is never resolved to match one. A malformed range matches nothing.
 */
export const parseNoProxy = (value: string): ReadonlyArray<NoProxyEntry> | "*" => {
  const entries: Array<NoProxyEntry> = []
  for (const token of value.split(/[\s,]+/)) {
    if (token === "") continue
    if (token === "*") return "*"
    if (token.includes("/")) {
      const range = parseRange(token)
      if (range !== undefined) entries.push({ range })
      continue
    }
    const withPort = /^(.+):(\d+)$/.exec(token)
    let host = withPort === null ? token : withPort[1]!
    // A bare IPv6 address has colons but no brackets: no port in it.
    if (withPort !== null && host.includes(":") && !host.startsWith("[")) host = token
    const port = withPort !== null && host !== token ? Number.parseInt(withPort[2]!, 10) : 0
    host = host.replace(/^\*?\./, "").toLowerCase()
    if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1)
    if (host.endsWith(".")) host = host.slice(0, -1)
    if (host !== "") entries.push({ host, port })
  }
  return entries
}

const defaultPort = (protocol: string): number => protocol === "https:" ? 443 : 80

/** Whether `NO_PROXY` sends this URL directly. */
export const bypasses = (noProxy: Settings["noProxy"], url: URL): boolean => {
  if (noProxy === "*") return true
  if (noProxy.length === 0) return false
  let host = url.hostname.toLowerCase()
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1)
  if (host.endsWith(".")) host = host.slice(0, -1)
  const port = url.port === "" ? defaultPort(url.protocol) : Number.parseInt(url.port, 10)
  const ipv4 = parseIpv4(host)
  const ipv6 = ipv4 === undefined && host.includes(":") ? parseIpv6(host) : undefined
  return noProxy.some((entry) => {
    if ("range" in entry) {
      const range = entry.range
      return "ipv4" in range ? ipv4 !== undefined && inIpv4(ipv4, range.ipv4, range.bits) : ipv6 !== undefined && inIpv6(ipv6, range.ipv6, range.bits)
    }
    return (entry.port === 0 || entry.port === port) && (host === entry.host || host.endsWith(`.${entry.host}`))
  })
}

/** The proxy a request for `url` goes through, or `undefined`: directly. */
export const route = (settings: Settings, url: URL): Proxy | undefined => {
  const proxy = url.protocol === "https:" ? settings.https : url.protocol === "http:" ? settings.http : undefined
  return proxy === undefined || bypasses(settings.noProxy, url) ? undefined : proxy
}

/**
 * The settings from raw values. An empty value is unset. `https` without its own proxy uses the
 * `http` one (undici's and curl's rule: `HTTP_PROXY` alone proxies both schemes).
 */
export const settingsOf = (raw: Raw, names: { readonly http: string; readonly https: string }): Either.Either<Settings, InvalidOption> =>
  Either.gen(function*() {
    const parse = (value: string | Redacted.Redacted<string> | undefined, option: string) => {
      const text = value === undefined ? "" : reveal(value).trim()
      return text === "" ? Either.right(undefined) : parseProxy(text, option)
    }
    const http = yield* parse(raw.httpProxy, names.http)
    const https = (yield* parse(raw.httpsProxy, names.https)) ?? http
    return { http, https, noProxy: parseNoProxy(raw.noProxy ?? "") }
  })

/**
 * The environment's reading: the lower-case name first, then the upper-case one, for each of
 * `http_proxy`, `https_proxy` and `no_proxy` (undici's order; curl's too, which also ignores
 * upper-case `HTTP_PROXY`, a CGI concern). `lookup` returns `undefined` for an unset name.
 */
export const fromLookup = (lookup: (name: string) => string | undefined): Raw & { readonly names: { readonly http: string; readonly https: string } } => {
  const pick = (lower: string) => {
    const upper = lower.toUpperCase()
    const value = lookup(lower)
    if (value !== undefined && value !== "") return { name: lower, value }
    const other = lookup(upper)
    return { name: upper, value: other === undefined || other === "" ? undefined : other }
  }
  const http = pick("http_proxy")
  const https = pick("https_proxy")
  return {
    httpProxy: http.value,
    httpsProxy: https.value,
    noProxy: pick("no_proxy").value,
    names: { http: http.name, https: https.name }
  }
}

/**
 * Every value of an environment's proxy variables that a display must not show: each proxy
 * URL's userinfo (raw, percent-decoded, and `user:password` as its `Proxy-Authorization` token
 * holds it), or the whole value when it is not a proxy URL (it may still hold a password).
 */
export const environmentProxySecrets = (env: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> =>
  ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"].flatMap((name) => {
    const value = (env[name] ?? "").trim()
    if (value === "") return []
    const parsed = parseProxy(value, name)
    return Either.isLeft(parsed) ? [value] : parsed.right.secrets
  })

/** The secrets of the proxies of these settings (see `Proxy.secrets`). */
export const settingsSecrets = (settings: Settings): ReadonlyArray<string> => [settings.http, settings.https].flatMap((proxy) => proxy?.secrets ?? [])

/** Whether an environment names a proxy at all: the cheap test the default clients make before loading any proxy code. */
export const environmentNamesProxy = (env: Readonly<Record<string, string | undefined>>): boolean =>
  ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"].some((name) => (env[name] ?? "").trim() !== "")

/**
 * Whether a request must not go where `route` sends it: a request carrying an `authorization`
 * header to a plain `http` origin, through a proxy off this machine, would hand its credential
 * in clear to another machine (docs/SECURITY.md, "3. The network between").
 */
export const exposesCredential = (proxy: Proxy, url: URL, headers: Readonly<Record<string, string>>): boolean =>
  url.protocol === "http:" && !proxy.loopback && headers["authorization"] !== undefined
