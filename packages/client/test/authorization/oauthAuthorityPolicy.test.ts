/**
 * Which authority URLs the authorization flow may contact (`oauth/addresses.ts`,
 * `oauth/authorityPolicy.ts`): the kind of every literal address as the WHATWG parser spells
 * it, checked against a table and, by property, against an independent octet-wise reading; and
 * the policy for servers on loopback, on a private address and on the Internet, with and
 * without the caller's opt-in. Pure: no I/O.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc } from "effect"
import { type AddressKind, addressKindOf, parseIpv6 } from "../../src/internal/oauth/addresses.js"
import { checkAuthorityUrl } from "../../src/internal/oauth/authorityPolicy.js"
import { Authorization } from "../../src/index.js"

const kindOf = (text: string): AddressKind => addressKindOf(new URL(text).hostname)

const table: Record<AddressKind, ReadonlyArray<string>> = {
  loopback: [
    "http://127.0.0.1",
    "http://127.255.255.254",
    "http://2130706433",
    "http://0x7f000001",
    "http://0177.0.0.1",
    "http://127.1",
    "http://[::1]",
    "http://[0:0:0:0:0:0:0:1]",
    "http://[::ffff:127.0.0.1]",
    "http://[::ffff:7f00:1]",
    "http://[::127.0.0.1]",
    "http://[64:ff9b::127.0.0.1]",
    "http://localhost",
    "http://LOCALHOST:8080",
    "http://localhost.",
    "http://app.localhost",
    "http://a.b.localhost."
  ],
  unspecified: ["http://0.0.0.0", "http://0", "http://[::]", "http://0.1.2.3", "http://[::ffff:0.0.0.0]"],
  private: [
    "http://10.0.0.1",
    "http://10.255.255.255",
    "http://172.16.0.1",
    "http://172.31.255.255",
    "http://192.168.0.1",
    "http://100.64.0.1",
    "http://100.127.255.255",
    "http://[fc00::1]",
    "http://[fd12:3456:789a::1]",
    "http://[fec0::1]",
    "http://[::ffff:10.0.0.1]",
    "http://[::ffff:192.168.1.1]",
    "http://[2002:a00:1::]",
    "http://[64:ff9b:1::1]"
  ],
  "link-local": [
    "http://169.254.169.254",
    "http://169.254.0.0",
    "http://[fe80::1]",
    "http://[febf:ffff::1]",
    "http://[::ffff:169.254.169.254]",
    "http://[64:ff9b::a9fe:a9fe]"
  ],
  reserved: ["http://224.0.0.1", "http://239.255.255.255", "http://240.0.0.1", "http://255.255.255.255", "http://[ff02::1]", "http://[100::1]"],
  public: [
    "http://8.8.8.8",
    "http://9.255.255.255",
    "http://11.0.0.0",
    "http://126.255.255.255",
    "http://128.0.0.0",
    "http://172.15.255.255",
    "http://172.32.0.0",
    "http://192.167.255.255",
    "http://192.169.0.0",
    "http://100.63.255.255",
    "http://100.128.0.0",
    "http://169.253.255.255",
    "http://169.255.0.0",
    "http://223.255.255.255",
    "http://[2001:db8::1]",
    "http://[2606:4700::1111]",
    "http://[fe7f::1]",
    "http://[fbff::1]",
    "http://[::ffff:8.8.8.8]",
    "http://[2002:808:808::]",
    "http://example.com",
    "http://localhost.example.com",
    "http://localhost-1",
    // A name is never resolved: one that points at loopback is not caught (DESIGN.md says so).
    "http://127.0.0.1.nip.io"
  ]
}

/** An independent reading of an IPv4 address, octet by octet. */
const referenceKind = (a: number, b: number): AddressKind =>
  a === 127
    ? "loopback"
    : a === 0
    ? "unspecified"
    : a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)
    ? "private"
    : a === 169 && b === 254
    ? "link-local"
    : a >= 224
    ? "reserved"
    : "public"

const octet = fc.integer({ min: 0, max: 255 })
const ipv4 = fc.tuple(octet, octet, octet, octet)
const group = fc.integer({ min: 0, max: 0xffff })
const hex = (n: number) => n.toString(16)

/** IPv4 literals of every non-public kind. */
const nonPublicIpv4 = fc.oneof(
  fc.tuple(fc.constant(127), octet, octet, octet),
  fc.tuple(fc.constant(0), octet, octet, octet),
  fc.tuple(fc.constant(10), octet, octet, octet),
  fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
  fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
  fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), octet, octet),
  fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
  fc.tuple(fc.integer({ min: 224, max: 255 }), octet, octet, octet)
).map(([a, b, c, d]) => `${a}.${b}.${c}.${d}`)

/** IPv6 literals (bracketed) of every non-public kind. */
const nonPublicIpv6 = fc.oneof(
  fc.tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), fc.array(group, { minLength: 7, maxLength: 7 })),
  fc.tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), fc.array(group, { minLength: 7, maxLength: 7 })),
  fc.tuple(fc.integer({ min: 0xff00, max: 0xffff }), fc.array(group, { minLength: 7, maxLength: 7 }))
).map(([first, rest]) => `[${[first, ...rest].map(hex).join(":")}]`)

/** Literal hosts a remote server may never name. */
const nonPublicHost = fc.oneof(
  nonPublicIpv4,
  nonPublicIpv6,
  nonPublicIpv4.map((v4) => `[::ffff:${v4}]`),
  fc.constantFrom("localhost", "app.localhost", "[::1]", "[::]", "0")
)

const remoteServer = new URL("https://mcp.example.com/mcp")
const loopbackServer = new URL("http://127.0.0.1:4000/mcp")
const policy = (serverUrl: URL, allowPrivateAuthority = false) => ({ serverUrl, allowPrivateAuthority })

describe("the kind of a URL's host", () => {
  for (const [kind, urls] of Object.entries(table)) {
    it(`${kind}: ${urls.length} spellings`, () => {
      for (const url of urls) expect(kindOf(url), url).toBe(kind)
    })
  }

  it.prop(
    "any IPv4 address: its kind is the octet-wise reading, whether dotted, decimal, hex, IPv4-mapped or NAT64",
    [ipv4],
    ([[a, b, c, d]]) => {
      const value = ((a * 256 + b) * 256 + c) * 256 + d
      const expected = referenceKind(a, b)
      const spellings = [
        `http://${a}.${b}.${c}.${d}/`,
        `http://${value}/`,
        `http://0x${value.toString(16)}/`,
        `http://[::ffff:${a}.${b}.${c}.${d}]/`,
        `http://[::ffff:${hex(a * 256 + b)}:${hex(c * 256 + d)}]/`,
        `http://[64:ff9b::${a}.${b}.${c}.${d}]/`
      ]
      for (const spelling of spellings) expect(kindOf(spelling), spelling).toBe(expected)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "any IPv6 address: parsed back from the WHATWG parser's compressed form, group for group",
    [fc.array(fc.oneof(group, fc.constant(0)), { minLength: 8, maxLength: 8 })],
    ([groups]) => {
      const hostname = new URL(`http://[${groups.map(hex).join(":")}]/`).hostname
      expect(parseIpv6(hostname.slice(1, -1))).toEqual(groups)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "IPv6 by prefix: fc00::/7 private, fe80::/10 link-local, ff00::/8 reserved, global unicast public",
    [fc.array(group, { minLength: 7, maxLength: 7 }), fc.integer({ min: 0x2000, max: 0x3fff }).filter((g) => g !== 0x2002)],
    ([rest, global]) => {
      const url = (first: number) => `http://[${[first, ...rest].map(hex).join(":")}]/`
      expect(kindOf(url(0xfc00 + (rest[0]! % 0x200)))).toBe("private")
      expect(kindOf(url(0xfe80 + (rest[0]! % 0x40)))).toBe("link-local")
      expect(kindOf(url(0xff00 + (rest[0]! % 0x100)))).toBe("reserved")
      expect(kindOf(url(global))).toBe("public")
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("an IPv6 text that is not an address is never read as public", () => {
    for (const text of ["[1::2::3]", "[12345::]", "[::1.2.3.999]", "[1:2:3:4:5:6:7:8:9]", "[g::1]"]) {
      expect(addressKindOf(text), text).toBe("reserved")
    }
  })
})

describe("which authority URLs a connection may contact", () => {
  it.prop(
    "a server on the Internet: never a non-public literal address (any port), unless the caller allows it; never plain http",
    [nonPublicHost, fc.integer({ min: 1, max: 65535 })],
    ([host, port]) => {
      const https = new URL(`https://${host}:${port}/token`)
      const http = new URL(`http://${host}:${port}/token`)
      expect(checkAuthorityUrl(https, policy(remoteServer))).toBe("private-authority")
      expect(checkAuthorityUrl(https, policy(remoteServer, true))).toBeUndefined()
      expect(checkAuthorityUrl(http, policy(remoteServer))).toBe("insecure-url")
      expect(checkAuthorityUrl(http, policy(remoteServer, true))).toBe("insecure-url")
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "a server on loopback: loopback authorities on any port, over http too; private, link-local and reserved ones still refused",
    [fc.tuple(octet, octet, octet), fc.integer({ min: 1, max: 65535 }), nonPublicHost],
    ([[b, c, d], port, host]) => {
      for (const loopback of [`127.${b}.${c}.${d}`, "localhost", "[::1]"]) {
        expect(checkAuthorityUrl(new URL(`http://${loopback}:${port}/token`), policy(loopbackServer))).toBeUndefined()
        expect(checkAuthorityUrl(new URL(`https://${loopback}:${port}/token`), policy(loopbackServer))).toBeUndefined()
      }
      const url = new URL(`https://${host}:${port}/token`)
      expect(checkAuthorityUrl(url, policy(loopbackServer))).toBe(kindOf(url.href) === "loopback" ? undefined : "private-authority")
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("public names and addresses over https are allowed from anywhere; over http from nowhere", () => {
    for (const server of [remoteServer, loopbackServer]) {
      for (const host of ["as.example.com", "8.8.8.8", "[2606:4700::1111]"]) {
        expect(checkAuthorityUrl(new URL(`https://${host}/token`), policy(server))).toBeUndefined()
        expect(checkAuthorityUrl(new URL(`http://${host}/token`), policy(server))).toBe("insecure-url")
      }
    }
  })

  it("a server on a private address may name its own origin, not another port or host of the network", () => {
    const server = new URL("https://10.0.0.5/mcp")
    expect(checkAuthorityUrl(new URL("https://10.0.0.5/token"), policy(server))).toBeUndefined()
    expect(checkAuthorityUrl(new URL("https://10.0.0.5:443/.well-known/oauth-authorization-server"), policy(server))).toBeUndefined()
    expect(checkAuthorityUrl(new URL("https://10.0.0.5:8443/token"), policy(server))).toBe("private-authority")
    expect(checkAuthorityUrl(new URL("https://10.0.0.6/token"), policy(server))).toBe("private-authority")
    expect(checkAuthorityUrl(new URL("https://127.0.0.1/token"), policy(server))).toBe("private-authority")
    expect(checkAuthorityUrl(new URL("https://10.0.0.6/token"), policy(server, true))).toBeUndefined()
  })

  it("a server on localhost is on loopback: its authority on 127.0.0.1 over http is allowed", () => {
    const server = new URL("http://localhost:3000/mcp")
    expect(checkAuthorityUrl(new URL("http://127.0.0.1:4000/token"), policy(server))).toBeUndefined()
    expect(checkAuthorityUrl(new URL("http://10.0.0.1/token"), policy(server))).toBe("insecure-url")
    expect(checkAuthorityUrl(new URL("https://169.254.169.254/token"), policy(server))).toBe("private-authority")
  })
})

describe("the options of the binding, the reach and the ceiling", () => {
  const validate = (options: Authorization.Options) => Effect.runSyncExit(Authorization.validate(options))
  const optionOf = (options: Authorization.Options) => {
    const exit = validate(options)
    return Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.option : "valid"
  }

  it("issuer: an issuer identifier, https or http on loopback; else InvalidOption auth.issuer", () => {
    for (const issuer of ["https://as.example.com", "https://as.example.com/tenant/", "http://127.0.0.1:9000", "http://localhost/x"]) {
      expect(optionOf({ issuer }), issuer).toBe("valid")
    }
    for (
      const issuer of ["http://as.example.com", "https://as.example.com?x=1", "https://as.example.com#f", "as.example.com", "", "https://u:p@as.example.com"]
    ) expect(optionOf({ issuer }), issuer).toBe("auth.issuer")
    expect(optionOf({ issuer: 42 as unknown as string })).toBe("auth.issuer")
  })

  it("allowPrivateAuthority and allowScopeStepUp: booleans, default false", () => {
    const exit = validate({})
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ allowPrivateAuthority: false, allowScopeStepUp: false, issuer: undefined })
    expect(optionOf({ allowPrivateAuthority: "yes" as unknown as boolean })).toBe("auth.allowPrivateAuthority")
    expect(optionOf({ allowScopeStepUp: 1 as unknown as boolean })).toBe("auth.allowScopeStepUp")
  })

  it("isSecureServerUrl: https anywhere, http only on loopback", () => {
    expect(Authorization.isSecureServerUrl(new URL("https://mcp.example.com/mcp"))).toBe(true)
    expect(Authorization.isSecureServerUrl(new URL("http://127.0.0.1:3000/mcp"))).toBe(true)
    expect(Authorization.isSecureServerUrl(new URL("http://localhost/mcp"))).toBe(true)
    expect(Authorization.isSecureServerUrl(new URL("http://mcp.example.com/mcp"))).toBe(false)
    expect(Authorization.isSecureServerUrl(new URL("http://10.0.0.1/mcp"))).toBe(false)
  })
})
