/**
 * The proxy rules of `internal/proxyRoute.ts` (docs/DESIGN.md, "Proxies"): `NO_PROXY` matching
 * (a host, its subdomains, a port, `*`), the precedence of the lower-case variables, `https`
 * falling back to the `http` proxy, and proxy URLs refused without their value ever showing.
 * FastCheck over generated host names and lists, and over arbitrary proxy values.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { HttpProxy, McpConnectionError } from "../../src/index.js"
import { bypasses, exposesCredential, fromLookup, parseNoProxy, parseProxy, route, settingsOf } from "../../src/internal/proxyRoute.js"

// Names, not addresses: the URL parser reads an all-digit last label as an IPv4 address.
const label = fc.stringMatching(/^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$/)
const hostname = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join("."))
/** An entry for `host` as people write it: a leading dot or `*.`, upper case. */
const spelled = (host: string) => fc.constantFrom(host, `.${host}`, `*.${host}`, host.toUpperCase())
const separator = fc.constantFrom(",", ", ", " ", "\t", ",,", " , ")

const url = (text: string) => new URL(text)

describe("NO_PROXY", () => {
  it.prop("a listed host and its subdomains bypass the proxy, on any port; others do not", [
    hostname.chain((host) => spelled(host).map((entry) => [host, entry] as const)),
    fc.array(hostname, { maxLength: 4 }),
    label,
    separator,
    fc.integer({ min: 1, max: 65_535 })
  ], ([[host, entry], others, sub, sep, port]) => {
    const list = parseNoProxy([...others, entry].join(sep))
    expect(bypasses(list, url(`http://${host}:${port}/`))).toBe(true)
    expect(bypasses(list, url(`https://${sub}.${host}/`))).toBe(true)
    // A name that only ends with the host's text, without a dot, is another host.
    const lookalike = `${sub}${host}`
    const covered = [...others, host].some((entry) => lookalike === entry || lookalike.endsWith(`.${entry}`))
    expect(bypasses(list, url(`http://${lookalike}/`))).toBe(covered)
  })

  it.prop("an entry with a port bypasses only that port (default ports included)", [hostname, fc.integer({ min: 1, max: 65_534 })], ([host, port]) => {
    const list = parseNoProxy(`${host}:${port}`)
    expect(bypasses(list, url(`http://${host}:${port}/`))).toBe(true)
    expect(bypasses(list, url(`http://${host}:${port + 1}/`))).toBe(false)
    expect(bypasses(parseNoProxy(`${host}:443`), url(`https://${host}/`))).toBe(true)
    expect(bypasses(parseNoProxy(`${host}:80`), url(`https://${host}/`))).toBe(false)
  })

  it("`*` bypasses every host; an empty list none; IPv6 and trailing dots", () => {
    expect(parseNoProxy(" * ")).toBe("*")
    expect(bypasses(parseNoProxy("*"), url("https://anything.example/"))).toBe(true)
    expect(bypasses(parseNoProxy(""), url("http://127.0.0.1/"))).toBe(false)
    expect(bypasses(parseNoProxy("[::1]"), url("http://[::1]:8080/"))).toBe(true)
    expect(bypasses(parseNoProxy("::1"), url("http://[::1]/"))).toBe(true)
    expect(bypasses(parseNoProxy("[::1]:8080"), url("http://[::1]:8081/"))).toBe(false)
    expect(bypasses(parseNoProxy("example.com."), url("http://api.example.com/"))).toBe(true)
  })

  it("CIDR ranges: IPv4 and IPv6 addresses in the range bypass, on any port; names are never resolved; malformed ranges match nothing", () => {
    const list = parseNoProxy("10.0.0.0/8, 192.168.4.0/22 [fd00::]/8,2001:db8::/32")
    expect(
      ["http://10.1.2.3/", "https://10.255.0.1:8443/", "http://192.168.7.255/", "http://[fd12::1]/", "http://[2001:db8:ffff::1]:81/"].map((u) =>
        bypasses(list, url(u))
      )
    )
      .toEqual([true, true, true, true, true])
    expect(["http://11.0.0.1/", "http://192.168.8.0/", "http://[fe00::1]/", "http://[2001:db9::1]/", "http://ten.example/"].map((u) => bypasses(list, url(u))))
      .toEqual([false, false, false, false, false])
    expect(bypasses(parseNoProxy("0.0.0.0/0"), url("http://8.8.8.8/"))).toBe(true)
    expect(bypasses(parseNoProxy("::/0"), url("http://[2001:db8::1]/"))).toBe(true)
    for (const bad of ["10.0.0.0/33", "::/129", "10.0.0/8", "host.example/8", "10.0.0.0/", "/8"]) {
      expect(parseNoProxy(bad), bad).toEqual([])
    }
  })

  const bitsOf4 = (octets: ReadonlyArray<number>) => octets.map((o) => o.toString(2).padStart(8, "0")).join("")
  const bitsOf6 = (groups: ReadonlyArray<number>) => groups.map((g) => g.toString(2).padStart(16, "0")).join("")

  it.prop("an IPv4 range holds exactly the addresses that share its first bits (a bit-string reference)", [
    fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }),
    fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }),
    fc.integer({ min: 0, max: 32 })
  ], ([base, address, bits]) => {
    const expected = bitsOf4(base).slice(0, bits) === bitsOf4(address).slice(0, bits)
    expect(bypasses(parseNoProxy(`${base.join(".")}/${bits}`), url(`http://${address.join(".")}/`))).toBe(expected)
  })

  it.prop("an IPv6 range holds exactly the addresses that share its first bits (a bit-string reference)", [
    fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }),
    fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }),
    fc.integer({ min: 0, max: 128 })
  ], ([base, address, bits]) => {
    const text = (groups: ReadonlyArray<number>) => groups.map((g) => g.toString(16)).join(":")
    const expected = bitsOf6(base).slice(0, bits) === bitsOf6(address).slice(0, bits)
    expect(bypasses(parseNoProxy(`[${text(base)}]/${bits}`), url(`http://[${text(address)}]/`))).toBe(expected)
  })

  it.prop("reading any text never throws", [fc.string({ maxLength: 200 })], ([text]) => {
    const list = parseNoProxy(text)
    expect(list === "*" || Array.isArray(list)).toBe(true)
  })
})

describe("the environment", () => {
  const variables = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"] as const
  const value = fc.option(fc.constantFrom("", "http://a.example:1", "http://b.example:2"), { nil: undefined })

  it.prop(
    "the lower-case name wins when it is set and not empty; else the upper-case one",
    [fc.tuple(value, value, value, value, value, value)],
    ([values]) => {
      const env: Record<string, string | undefined> = Object.fromEntries(variables.map((name, i) => [name, values[i]]))
      const raw = fromLookup((name) => env[name])
      const expected = (lower: string) => {
        const l = env[lower]
        if (l !== undefined && l !== "") return l
        const u = env[lower.toUpperCase()]
        return u === "" ? undefined : u
      }
      expect(raw.httpProxy).toBe(expected("http_proxy"))
      expect(raw.httpsProxy).toBe(expected("https_proxy"))
      expect(raw.noProxy).toBe(expected("no_proxy"))
    }
  )

  it("https falls back to the http proxy; each scheme keeps its own when both are set", () => {
    const only = Either.getOrThrow(settingsOf({ httpProxy: "http://proxy.example:3128" }, { http: "HTTP_PROXY", https: "HTTPS_PROXY" }))
    expect(route(only, url("https://mcp.example/"))).toBe(only.http)
    const both = Either.getOrThrow(settingsOf({ httpProxy: "http://a.example:1", httpsProxy: "http://b.example:2" }, { http: "h", https: "s" }))
    expect(route(both, url("http://mcp.example/"))).toBe(both.http)
    expect(route(both, url("https://mcp.example/"))).toBe(both.https)
    expect(both.http).not.toBe(both.https)
    const https = Either.getOrThrow(settingsOf({ httpsProxy: "http://b.example:2" }, { http: "h", https: "s" }))
    expect(route(https, url("http://mcp.example/"))).toBeUndefined()
  })
})

describe("proxy URLs", () => {
  const canary = "canary-secret-7d1e"

  it.prop("any value is accepted or refused with InvalidOption naming the option; the refusal never holds the value", [
    fc.oneof(fc.string({ maxLength: 80 }), fc.webUrl(), fc.webUrl().map((u) => u.replace("://", `://u:${canary}@`)))
  ], ([value]) => {
    const parsed = parseProxy(value, "HTTPS_PROXY")
    if (Either.isLeft(parsed)) {
      expect(parsed.left).toMatchObject({ _tag: "InvalidOption", option: "HTTPS_PROXY", reason: "invalid-url", outcome: "not-sent" })
      expect(JSON.stringify(parsed.left)).not.toContain(canary)
      expect(parsed.left.message).not.toContain(canary)
    } else {
      expect(["http:", "https:"]).toContain(parsed.right.protocol)
      // The credentials are kept as secrets, out of the printed form.
      expect(String(parsed.right.url)).not.toContain(canary)
    }
  })

  it("credentials are kept as secrets, raw and decoded; loopback is recognised", () => {
    const proxy = Either.getOrThrow(parseProxy("http://us%40er:p%3Ass@127.0.0.1:3128", "HTTP_PROXY"))
    expect(proxy.secrets).toEqual(expect.arrayContaining(["us%40er", "us@er", "p%3Ass", "p:ss"]))
    expect(proxy.loopback).toBe(true)
    expect(Either.getOrThrow(parseProxy("http://[::1]:3128", "p")).loopback).toBe(true)
    expect(Either.getOrThrow(parseProxy("https://proxy.example", "p")).loopback).toBe(false)
  })

  it("a credential to a plain-http origin through a proxy off this machine is exposed; https or a loopback proxy is not", () => {
    const remote = Either.getOrThrow(parseProxy("http://proxy.example:3128", "p"))
    const local = Either.getOrThrow(parseProxy("http://127.0.0.1:3128", "p"))
    const bearer = { authorization: "Bearer x" }
    expect(exposesCredential(remote, url("http://127.0.0.1:3000/mcp"), bearer)).toBe(true)
    expect(exposesCredential(remote, url("https://mcp.example/mcp"), bearer)).toBe(false)
    expect(exposesCredential(remote, url("http://mcp.example/mcp"), {})).toBe(false)
    expect(exposesCredential(local, url("http://mcp.example/mcp"), bearer)).toBe(false)
  })
})

describe("HttpProxy.secretsOf", () => {
  it("every proxy variable's credentials, in the forms redact must find; a value that is not a URL whole", () => {
    const secrets = HttpProxy.secretsOf({
      http_proxy: "http://us%40er:p%3Ass@127.0.0.1:3128",
      HTTPS_PROXY: "not a url canary-secret",
      no_proxy: "localhost",
      HTTP_PROXY: "http://proxy.example:8080"
    })
    expect(secrets).toEqual(expect.arrayContaining(["us%40er", "us@er", "p%3Ass", "p:ss", "us@er:p:ss", "not a url canary-secret"]))
    expect(secrets).toContain(Buffer.from("us@er:p:ss").toString("base64"))
    const text = McpConnectionError.redact(
      `Proxy-Authorization: Basic ${Buffer.from("us@er:p:ss").toString("base64")} via HTTPS_PROXY=not a url canary-secret`,
      secrets
    )
    expect(text).not.toContain(Buffer.from("us@er:p:ss").toString("base64"))
    expect(text).not.toContain("canary-secret")
    expect(HttpProxy.secretsOf({ HTTP_PROXY: "http://proxy.example:8080", NO_PROXY: "*" })).toEqual([])
  })
})
