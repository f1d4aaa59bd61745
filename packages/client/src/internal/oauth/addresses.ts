/**
 * What kind of address the host of a URL names (docs/AUTHORIZATION.md,
 * "Transport security and reach"): loopback, private, link-local, unspecified, reserved, or
 * public. Pure: it reads `URL.hostname` as the WHATWG parser normalized it (decimal, octal, hex
 * and short IPv4 spellings are already dotted decimal; IPv6 is in brackets, lowercase,
 * compressed), and never resolves a name.
 *
 * - IPv4: 127/8 loopback; 0/8 unspecified; 10/8, 172.16/12, 192.168/16 and 100.64/10 (shared
 *   address space, carrier NAT and overlay networks) private; 169.254/16 link-local; 224/4
 *   (multicast) and 240/4 (reserved, the broadcast address) reserved; anything else public.
 * - IPv6: `::1` loopback; `::` unspecified; fc00::/7 (unique local) and fec0::/10 (the old
 *   site-local) private; fe80::/10 link-local; ff00::/8 (multicast) and 100::/64 (discard)
 *   reserved. An IPv4 address carried inside one (IPv4-mapped `::ffff:0:0/96`, the old
 *   IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is that IPv4 address's
 *   kind; the local NAT64 prefix 64:ff9b:1::/48 is private. Teredo (2001::/32) hides its IPv4
 *   address and is read as public.
 * - Names: `localhost` and any name under `.localhost` (RFC 6761: they resolve to loopback),
 *   with or without a final dot, are loopback; any other name is `public`, whatever it resolves
 *   to (no resolution is done here).
 */

export type AddressKind = "loopback" | "private" | "link-local" | "unspecified" | "reserved" | "public"

const ipv4Pattern = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

/** The 32-bit value of a dotted-decimal IPv4 address, else `undefined`. */
export const parseIpv4 = (text: string): number | undefined => {
  const match = ipv4Pattern.exec(text)
  if (match === null) return undefined
  let value = 0
  for (let i = 1; i <= 4; i++) {
    const octet = Number(match[i])
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

/** Whether `address` is in `base/bits` (32-bit values). */
export const inIpv4 = (address: number, base: number, bits: number): boolean => {
  const size = 2 ** (32 - bits)
  return Math.floor(address / size) === Math.floor(base / size)
}

const ipv4 = (a: number, b: number, c: number, d: number) => ((a * 256 + b) * 256 + c) * 256 + d

const ipv4Ranges: ReadonlyArray<readonly [number, number, AddressKind]> = [
  [ipv4(127, 0, 0, 0), 8, "loopback"],
  [ipv4(0, 0, 0, 0), 8, "unspecified"],
  [ipv4(10, 0, 0, 0), 8, "private"],
  [ipv4(172, 16, 0, 0), 12, "private"],
  [ipv4(192, 168, 0, 0), 16, "private"],
  [ipv4(100, 64, 0, 0), 10, "private"],
  [ipv4(169, 254, 0, 0), 16, "link-local"],
  [ipv4(224, 0, 0, 0), 4, "reserved"],
  [ipv4(240, 0, 0, 0), 4, "reserved"]
]

/** The kind of a 32-bit IPv4 address. */
export const ipv4Kind = (address: number): AddressKind => ipv4Ranges.find(([base, bits]) => inIpv4(address, base, bits))?.[2] ?? "public"

/**
 * The eight 16-bit groups of an IPv6 address (without brackets, without a zone), else
 * `undefined`. Accepts `::` compression and a final dotted-decimal IPv4 part.
 */
export const parseIpv6 = (text: string): ReadonlyArray<number> | undefined => {
  let body = text
  const lastColon = body.lastIndexOf(":")
  if (lastColon !== -1 && body.slice(lastColon + 1).includes(".")) {
    // A final IPv4 part is two groups.
    const v4 = parseIpv4(body.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    body = `${body.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`
  }
  const halves = body.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const groups: Array<number> = []
    for (const group of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined
      groups.push(parseInt(group, 16))
    }
    return groups
  }
  const head = groupsOf(halves[0]!)
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === undefined || rest === undefined) return undefined
  const explicit = head.length + rest.length
  if (halves.length === 2 ? explicit > 7 : explicit !== 8) return undefined
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest]
}

/** Whether the IPv6 `address` is in `base/bits` (each eight 16-bit groups). */
export const inIpv6 = (address: ReadonlyArray<number>, base: ReadonlyArray<number>, bits: number): boolean => {
  for (let group = 0; group < 8 && bits > 0; group++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff
    if ((address[group]! & mask) !== (base[group]! & mask)) return false
  }
  return true
}

const embeddedIpv4 = (high: number, low: number): number => high * 65536 + low

/** The kind of an IPv6 address given as its eight groups. */
export const ipv6Kind = (groups: ReadonlyArray<number>): AddressKind => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number]
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0
  if (zeroPrefix && g5 === 0) {
    if (g6 === 0 && g7 === 0) return "unspecified"
    if (g6 === 0 && g7 === 1) return "loopback"
    // IPv4-compatible (deprecated): read as the IPv4 address it carries.
    return ipv4Kind(embeddedIpv4(g6, g7))
  }
  // IPv4-mapped.
  if (zeroPrefix && g5 === 0xffff) return ipv4Kind(embeddedIpv4(g6, g7))
  // NAT64, well-known prefix; its local-use prefix is private.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Kind(embeddedIpv4(g6, g7))
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "private"
  // 6to4: the IPv4 address is in the second and third groups.
  if (g0 === 0x2002) return ipv4Kind(embeddedIpv4(g1, g2))
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return "reserved"
  if ((g0 & 0xfe00) === 0xfc00) return "private"
  if ((g0 & 0xffc0) === 0xfe80) return "link-local"
  if ((g0 & 0xffc0) === 0xfec0) return "private"
  if ((g0 & 0xff00) === 0xff00) return "reserved"
  return "public"
}

/** The kind of address a URL's `hostname` names (see the module comment). */
export const addressKindOf = (hostname: string): AddressKind => {
  const host = hostname.toLowerCase()
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseIpv6(host.slice(1, -1))
    // Not an address the WHATWG parser would give: never trusted as public.
    return groups === undefined ? "reserved" : ipv6Kind(groups)
  }
  const v4 = parseIpv4(host)
  if (v4 !== undefined) return ipv4Kind(v4)
  const name = host.endsWith(".") ? host.slice(0, -1) : host
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback"
  return "public"
}

/** Whether the URL's host is a loopback address or name. */
export const isLoopbackHost = (url: URL): boolean => addressKindOf(url.hostname) === "loopback"
