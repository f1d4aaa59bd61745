/**
 * Where the OAuth documents of an MCP server are looked for, which resource each may name, the
 * issuer's metadata URLs, the 2025-03-26 fallbacks and the origin rule, as pure functions
 * (internal/oauth/discoveryUrls.ts). Examples are the spec's own where it gives them.
 */
import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
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
} from "../../src/internal/oauth/discoveryUrls.js"

const hrefs = (urls: ReadonlyArray<URL> | undefined) => urls?.map((url) => url.href)
const locations = (server: string, challenge?: string) =>
  resourceMetadataLocations(new URL(server), challenge).map((location) => ({
    url: location.url.href,
    source: location.source,
    resources: location.resources
  }))

/** Text the caller put in the MCP server URL that must never reach any URL built from it. */
const secret = "s3cr3t-Canary-9f1e"
const secretServer = `https://user:${secret}@mcp.example.com/public/mcp?api_key=${secret}&x=1#${secret}`

// A URL segment: unreserved and sub-delims characters, percent-encodings, and the odd ones
// a parser treats specially.
const segmentArb = fc.array(
  fc.oneof(
    fc.constantFrom("a", "Z", "0", "-", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", ":", "@"),
    fc.constantFrom("%20", "%2F", "%2e", "%2E%2e", "%3F", "%23", "%5C", "é", " ", "\\", "..", ".")
  ),
  { minLength: 1, maxLength: 6 }
).map((parts) => parts.join(""))
const pathArb = fc.array(segmentArb, { minLength: 1, maxLength: 4 }).chain((segments) =>
  fc.boolean().map((trailing) => `/${segments.join("/")}${trailing ? "/" : ""}`)
)

describe("parseHttpUrl, isSecure and parseIssuer: what an OAuth document may spell as a URL", () => {
  it("accepts absolute http and https URLs, with any case in scheme and host", () => {
    expect(parseHttpUrl("https://as.example.com/t?x=1")?.href).toBe("https://as.example.com/t?x=1")
    expect(parseHttpUrl("HTTPS://AS.Example.COM/Path")?.href).toBe("https://as.example.com/Path")
    expect(parseHttpUrl("http://[::1]:8080/x")?.hostname).toBe("[::1]")
  })

  it("refuses relative references, other schemes, userinfo, and every spelling a parser would repair", () => {
    const refused = [
      "",
      "as.example.com",
      "/token",
      "//as.example.com/token",
      "javascript:alert(1)",
      "data:text/plain,hi",
      "file:///etc/passwd",
      "ftp://as.example.com/x",
      "https:as.example.com/x",
      "https:/as.example.com/x",
      "https:\\\\as.example.com\\x",
      " https://as.example.com/x",
      "https://as.example.com/x ",
      "https://as.example.com/x\n",
      "https://as.exa\tmple.com/x",
      "https://as.example.com/\u0000",
      "https://exämple.com/x",
      "https://as.example.com/ü",
      "https://user@as.example.com/x",
      "https://user:pw@as.example.com/x",
      "https://:pw@as.example.com/x",
      "https://",
      "https:///x",
      "https://as.example.com:99999/x",
      "https://[::1/x",
      "https://as example.com/x"
    ]
    for (const text of refused) expect(parseHttpUrl(text), JSON.stringify(text)).toBeUndefined()
  })

  it("is secure over https anywhere, over http only on loopback: 127.0.0.0/8, ::1 (mapped too), localhost, *.localhost", () => {
    const secure = (text: string) => isSecure(new URL(text))
    expect(secure("https://as.example.com")).toBe(true)
    expect(secure("https://10.0.0.1")).toBe(true)
    expect(secure("http://127.0.0.1:3000/x")).toBe(true)
    expect(secure("http://[::1]/x")).toBe(true)
    expect(secure("http://localhost:1/x")).toBe(true)
    expect(secure("http://LOCALHOST/x")).toBe(true)
    expect(secure("http://127.0.0.2")).toBe(true)
    expect(secure("http://[::ffff:127.0.0.1]")).toBe(true)
    expect(secure("http://app.localhost:8080")).toBe(true)
    expect(secure("http://2130706433/")).toBe(true)
    for (
      const text of [
        "http://as.example.com",
        "http://10.0.0.1",
        "http://0.0.0.0",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil.example",
        "http://evil.example/127.0.0.1",
        "http://evil.example?localhost",
        "http://[::ffff:10.0.0.1]",
        "http://localhost-evil.example",
        "http://[::2]",
        "ws://localhost",
        "file:///localhost"
      ]
    ) expect(secure(text), text).toBe(false)
  })

  it("reads an issuer as RFC 8414 §2 defines it: secure, no query, no fragment", () => {
    expect(parseIssuer("https://auth.example.com")?.href).toBe("https://auth.example.com/")
    expect(parseIssuer("https://auth.example.com/tenant1/")?.pathname).toBe("/tenant1/")
    expect(parseIssuer("http://localhost:9000")?.port).toBe("9000")
    for (
      const issuer of [
        "https://auth.example.com?tenant=1",
        "https://auth.example.com/?",
        "https://auth.example.com/#",
        "https://auth.example.com/t#frag",
        "http://auth.example.com",
        "https://user@auth.example.com",
        "auth.example.com",
        "urn:example:issuer"
      ]
    ) expect(parseIssuer(issuer), issuer).toBeUndefined()
  })
})

describe("resourceMetadataLocations: the Protected Resource Metadata URLs, in the spec's order", () => {
  it("tries the path-aware well-known URL, then the root one (the spec's example)", () => {
    expect(locations("https://example.com/public/mcp")).toEqual([
      {
        url: "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        source: "path",
        resources: ["https://example.com/public/mcp"]
      },
      {
        url: "https://example.com/.well-known/oauth-protected-resource",
        source: "root",
        resources: ["https://example.com", "https://example.com/public/mcp"]
      }
    ])
  })

  it("tries only the root URL for a server at the root, with or without the slash", () => {
    const expected = [{
      url: "https://mcp.example.com/.well-known/oauth-protected-resource",
      source: "root",
      resources: ["https://mcp.example.com"]
    }]
    expect(locations("https://mcp.example.com")).toEqual(expected)
    expect(locations("https://mcp.example.com/")).toEqual(expected)
    expect(locations("https://mcp.example.com/?q=1#f")).toEqual(expected)
  })

  it("uses the challenge's resource_metadata alone when it is present", () => {
    expect(locations("https://mcp.example.com/mcp", "https://mcp.example.com/custom/metadata.json")).toEqual([
      { url: "https://mcp.example.com/custom/metadata.json", source: "challenge", resources: ["https://mcp.example.com/mcp"] }
    ])
    // Even when it names the path-aware URL, or another origin: the spec allows both.
    expect(locations("https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"))
      .toHaveLength(1)
    expect(locations("https://mcp.example.com/mcp", "https://metadata.example.net/prm")).toEqual([
      { url: "https://metadata.example.net/prm", source: "challenge", resources: ["https://mcp.example.com/mcp"] }
    ])
  })

  it("reads a challenge that names the server's root well-known URL as that URL (the origin may be named)", () => {
    for (
      const challenge of [
        "https://mcp.example.com/.well-known/oauth-protected-resource",
        "HTTPS://MCP.EXAMPLE.COM:443/.well-known/oauth-protected-resource",
        "https://mcp.example.com/.well-known/oauth-protected-resource#x"
      ]
    ) {
      expect(locations("https://mcp.example.com/mcp", challenge), challenge).toEqual([{
        url: "https://mcp.example.com/.well-known/oauth-protected-resource",
        source: "challenge",
        resources: ["https://mcp.example.com", "https://mcp.example.com/mcp"]
      }])
    }
    // Another origin's root, or the root URL with a query, is not the server's root URL.
    expect(
      locations("https://mcp.example.com/mcp", "https://other.example.com/.well-known/oauth-protected-resource")[0]
        ?.resources
    ).toEqual(["https://mcp.example.com/mcp"])
    expect(
      locations("https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource?a=1")[0]
        ?.resources
    ).toEqual(["https://mcp.example.com/mcp"])
    expect(
      locations("https://mcp.example.com:8443/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource")[0]
        ?.resources
    ).toEqual(["https://mcp.example.com:8443/mcp"])
  })

  it("drops the challenge URL's fragment, keeps its query", () => {
    expect(locations("https://mcp.example.com/mcp", "https://mcp.example.com/prm?v=2#frag")[0]?.url)
      .toBe("https://mcp.example.com/prm?v=2")
  })

  it("falls back to the well-known URLs when the challenge's URL is not usable", () => {
    const wellKnown = locations("https://mcp.example.com/mcp")
    for (
      const challenge of [
        "",
        "not a url",
        "/.well-known/oauth-protected-resource",
        "//evil.example/prm",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:application/json,{}",
        "http://evil.example/prm",
        "http://mcp.example.com/prm",
        "https://user:pw@mcp.example.com/prm",
        "https://mcp.example.com/prm\r\nX-Injected: 1",
        "https://mcp.example.com/pr m",
        "https://mcp.exämple.com/prm",
        "https:mcp.example.com/prm",
        "https://mcp.example.com:70000/prm"
      ]
    ) expect(locations("https://mcp.example.com/mcp", challenge), JSON.stringify(challenge)).toEqual(wellKnown)
  })

  it("accepts a plain-http challenge URL on a loopback host only", () => {
    expect(locations("http://127.0.0.1:3000/mcp", "http://127.0.0.1:3000/prm")[0]?.source).toBe("challenge")
    expect(locations("http://localhost:3000/mcp", "http://[::1]:3001/prm")[0]?.source).toBe("challenge")
    expect(locations("http://localhost:3000/mcp", "http://127.0.0.1.nip.io/prm")[0]?.source).toBe("path")
  })

  it("never carries the server URL's userinfo, query or fragment into a URL or a resource", () => {
    const built = locations(secretServer)
    expect(JSON.stringify(built)).not.toContain(secret)
    expect(JSON.stringify(built)).not.toContain("user")
    expect(built.map((location) => location.url)).toEqual([
      "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
      "https://mcp.example.com/.well-known/oauth-protected-resource"
    ])
  })

  it("keeps the path as given: a trailing slash, percent-encodings, case; scheme and host in lowercase, a non-default port", () => {
    expect(locations("HTTPS://MCP.Example.COM:8443/Api/MCP/")[0]).toEqual({
      url: "https://mcp.example.com:8443/.well-known/oauth-protected-resource/Api/MCP/",
      source: "path",
      resources: ["https://mcp.example.com:8443/Api/MCP/"]
    })
    expect(locations("https://mcp.example.com:443/a%20b/%2F")[0]?.url)
      .toBe("https://mcp.example.com/.well-known/oauth-protected-resource/a%20b/%2F")
    expect(locations("http://[::1]:3000/mcp")[0]?.url).toBe("http://[::1]:3000/.well-known/oauth-protected-resource/mcp")
  })

  it("inserts the server's path after the well-known prefix, on the server's origin, for any path", () => {
    fc.assert(
      fc.property(pathArb, (path) => {
        const server = new URL(`https://mcp.example.com:8443${path}?k=${secret}#${secret}`)
        const found = resourceMetadataLocations(server)
        if (server.pathname === "/") {
          // Dot segments and backslashes can resolve to the root: then only the root URL is tried.
          expect(found.map((location) => location.source)).toEqual(["root"])
          return
        }
        const [first, second] = found
        expect(first?.url.pathname).toBe(`/.well-known/oauth-protected-resource${server.pathname}`)
        expect(first?.url.origin).toBe(server.origin)
        expect(first?.url.search).toBe("")
        expect(first?.url.hash).toBe("")
        expect(first?.resources).toEqual([canonicalResource(server)])
        expect(second?.url.href).toBe("https://mcp.example.com:8443/.well-known/oauth-protected-resource")
      })
    )
  })
})

describe("canonicalResource: the RFC 8707 resource of a server (\"Canonical Server URI\")", () => {
  it("gives the spec's valid examples as they are", () => {
    for (
      const uri of [
        "https://mcp.example.com/mcp",
        "https://mcp.example.com",
        "https://mcp.example.com:8443",
        "https://mcp.example.com/server/mcp"
      ]
    ) expect(canonicalResource(new URL(uri))).toBe(uri)
  })

  it("uses the form without the trailing slash for a server at the root, as the spec's note asks", () => {
    expect(canonicalResource(new URL("https://mcp.example.com/"))).toBe("https://mcp.example.com")
    expect(encodeURIComponent(canonicalResource(new URL("https://mcp.example.com")))).toBe("https%3A%2F%2Fmcp.example.com")
  })

  it("keeps a trailing slash after a longer path (it may be significant)", () => {
    expect(canonicalResource(new URL("https://mcp.example.com/mcp/"))).toBe("https://mcp.example.com/mcp/")
  })

  it("lowercases scheme and host, not the path; leaves a default port out", () => {
    expect(canonicalResource(new URL("HTTPS://MCP.EXAMPLE.COM/Server/MCP"))).toBe("https://mcp.example.com/Server/MCP")
    expect(canonicalResource(new URL("https://mcp.example.com:443/mcp"))).toBe("https://mcp.example.com/mcp")
    expect(canonicalResource(new URL("http://localhost:80/mcp"))).toBe("http://localhost/mcp")
    expect(canonicalResource(new URL("http://localhost:3000/mcp"))).toBe("http://localhost:3000/mcp")
  })

  it("has no fragment, query or userinfo", () => {
    expect(canonicalResource(new URL(secretServer))).toBe("https://mcp.example.com/public/mcp")
    expect(canonicalResource(new URL("https://mcp.example.com#fragment"))).toBe("https://mcp.example.com")
  })
})

describe("resourceMatches: the resource a Protected Resource Metadata document names (RFC 9728 §3.3)", () => {
  const [atPath, atRoot] = resourceMetadataLocations(new URL("https://mcp.example.com/mcp")) as [
    ResourceMetadataLocation,
    ResourceMetadataLocation
  ]
  const fromChallenge = resourceMetadataLocations(new URL("https://mcp.example.com/mcp"), "https://mcp.example.com/prm")[0]!

  it("accepts the server's canonical URI, in any case of scheme and host, with its default port spelled out", () => {
    for (const location of [atPath, atRoot, fromChallenge]) {
      for (
        const published of [
          "https://mcp.example.com/mcp",
          "HTTPS://MCP.EXAMPLE.COM/mcp",
          "https://Mcp.Example.Com:443/mcp",
          "https://mcp.example.com/./mcp"
        ]
      ) expect(resourceMatches(location, published), `${location.source} ${published}`).toBe(true)
    }
  })

  it("accepts the origin only for the document at the root well-known URL, the identifier that URL is built from", () => {
    expect(resourceMatches(atRoot, "https://mcp.example.com")).toBe(true)
    expect(resourceMatches(atRoot, "https://mcp.example.com/")).toBe(true)
    expect(resourceMatches(atPath, "https://mcp.example.com")).toBe(false)
    expect(resourceMatches(fromChallenge, "https://mcp.example.com")).toBe(false)
  })

  it("has no prefix rule: a shorter or longer path, another case of path, or a trailing slash does not match", () => {
    const server = resourceMetadataLocations(new URL("https://mcp.example.com/tenant/mcp"))[0]!
    for (
      const published of [
        "https://mcp.example.com/tenant",
        "https://mcp.example.com/tenant/",
        "https://mcp.example.com/tenant/mcp/",
        "https://mcp.example.com/tenant/mcp/extra",
        "https://mcp.example.com/tenant/mcpx",
        "https://mcp.example.com/Tenant/mcp",
        "https://mcp.example.com/tenant%2Fmcp"
      ]
    ) expect(resourceMatches(server, published), published).toBe(false)
  })

  it("refuses another origin, scheme or port (the spec's resource-mismatch attack)", () => {
    for (
      const published of [
        "https://evil.example.com/mcp",
        "http://mcp.example.com/mcp",
        "https://mcp.example.com:8443/mcp",
        "https://mcp.example.com.evil.example/mcp",
        "https://evil.example/https://mcp.example.com/mcp"
      ]
    ) {
      for (const location of [atPath, atRoot, fromChallenge]) {
        expect(resourceMatches(location, published), `${location.source} ${published}`).toBe(false)
      }
    }
  })

  it("refuses a resource with a query, a fragment (even empty), userinfo, or one that is no URL", () => {
    for (
      const published of [
        "https://mcp.example.com/mcp?x=1",
        "https://mcp.example.com/mcp?",
        "https://mcp.example.com/mcp#frag",
        "https://mcp.example.com/mcp#",
        "https://user@mcp.example.com/mcp",
        "mcp.example.com/mcp",
        "/mcp",
        "",
        " https://mcp.example.com/mcp",
        "https://mcp.example.com/mcp\n",
        "urn:mcp:example"
      ]
    ) expect(resourceMatches(atRoot, published), JSON.stringify(published)).toBe(false)
  })

  it("accepts what the conformance suite's servers publish: the server at its path, the origin at the root", () => {
    const server = new URL("http://localhost:41237/mcp")
    const [path, root] = resourceMetadataLocations(server)
    expect(resourceMatches(path!, "http://localhost:41237/mcp")).toBe(true)
    expect(resourceMatches(root!, "http://localhost:41237")).toBe(true)
    const custom = resourceMetadataLocations(server, "http://localhost:41237/custom/metadata/location.json")[0]!
    expect(resourceMatches(custom, "http://localhost:41237/mcp")).toBe(true)
    expect(resourceMatches(custom, "https://evil.example.com/mcp")).toBe(false)
  })
})

describe("authorizationServerMetadataUrls: an issuer's metadata URLs, in the spec's priority order", () => {
  it("with a path: RFC 8414 insertion, OpenID insertion, OpenID appending (the spec's example)", () => {
    expect(hrefs(authorizationServerMetadataUrls("https://auth.example.com/tenant1"))).toEqual([
      "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
      "https://auth.example.com/.well-known/openid-configuration/tenant1",
      "https://auth.example.com/tenant1/.well-known/openid-configuration"
    ])
  })

  it("without a path: RFC 8414, then OpenID (the spec's example)", () => {
    const expected = [
      "https://auth.example.com/.well-known/oauth-authorization-server",
      "https://auth.example.com/.well-known/openid-configuration"
    ]
    expect(hrefs(authorizationServerMetadataUrls("https://auth.example.com"))).toEqual(expected)
    expect(hrefs(authorizationServerMetadataUrls("https://auth.example.com/"))).toEqual(expected)
  })

  it("removes the path's terminating slashes before inserting or appending (RFC 8414 §3.1)", () => {
    const withoutSlash = hrefs(authorizationServerMetadataUrls("https://auth.example.com/tenant1"))
    expect(hrefs(authorizationServerMetadataUrls("https://auth.example.com/tenant1/"))).toEqual(withoutSlash)
    expect(hrefs(authorizationServerMetadataUrls("https://auth.example.com/tenant1//"))).toEqual(withoutSlash)
    expect(hrefs(authorizationServerMetadataUrls("https://auth.example.com//"))).toHaveLength(2)
  })

  it("keeps a deeper path, its case and encodings, and the port", () => {
    expect(hrefs(authorizationServerMetadataUrls("https://Auth.Example.com:8443/realms/My%20Realm"))).toEqual([
      "https://auth.example.com:8443/.well-known/oauth-authorization-server/realms/My%20Realm",
      "https://auth.example.com:8443/.well-known/openid-configuration/realms/My%20Realm",
      "https://auth.example.com:8443/realms/My%20Realm/.well-known/openid-configuration"
    ])
  })

  it("allows plain http on loopback (the conformance suite's servers)", () => {
    expect(hrefs(authorizationServerMetadataUrls("http://localhost:41238/tenant1"))?.[0])
      .toBe("http://localhost:41238/.well-known/oauth-authorization-server/tenant1")
  })

  it("has no URLs for what is no issuer identifier", () => {
    for (
      const issuer of [
        "https://auth.example.com?tenant=1",
        "https://auth.example.com/t#f",
        "http://auth.example.com",
        "https://user:pw@auth.example.com",
        "auth.example.com",
        "",
        "https://auth.example.com/\n",
        "javascript:alert(1)"
      ]
    ) expect(authorizationServerMetadataUrls(issuer), JSON.stringify(issuer)).toBeUndefined()
  })

  it("builds every URL on the issuer's origin, without query or fragment, for any path", () => {
    fc.assert(
      fc.property(pathArb, (path) => {
        const issuer = new URL(`https://auth.example.com${path}`).href
        const urls = authorizationServerMetadataUrls(issuer)
        expect(urls).toBeDefined()
        for (const url of urls!) {
          expect(url.origin).toBe("https://auth.example.com")
          expect(url.search + url.hash).toBe("")
          expect(url.pathname).toContain("/.well-known/")
        }
      })
    )
  })
})

describe("the 2025-03-26 fallbacks: the authorization base URL and its default endpoints", () => {
  it("discards the path of the server URL (the spec's example)", () => {
    const server = new URL("https://api.example.com/v1/mcp")
    expect(legacyAuthorizationBase(server)).toBe("https://api.example.com")
    expect(legacyMetadataUrl(server).href).toBe("https://api.example.com/.well-known/oauth-authorization-server")
    expect(legacyDefaultEndpoints(server)).toEqual({
      authorization_endpoint: "https://api.example.com/authorize",
      token_endpoint: "https://api.example.com/token",
      registration_endpoint: "https://api.example.com/register"
    })
  })

  it("keeps a non-default port, drops userinfo, query and fragment", () => {
    const server = new URL(`https://user:${secret}@API.example.com:8443/v1/mcp?key=${secret}#${secret}`)
    expect(legacyAuthorizationBase(server)).toBe("https://api.example.com:8443")
    const everything = JSON.stringify([legacyMetadataUrl(server).href, legacyDefaultEndpoints(server)])
    expect(everything).not.toContain(secret)
    expect(everything).not.toContain("user")
  })

  it("is the same for a server at the root", () => {
    expect(legacyAuthorizationBase(new URL("http://localhost:3000/"))).toBe("http://localhost:3000")
    expect(legacyDefaultEndpoints(new URL("http://localhost:3000")).token_endpoint).toBe("http://localhost:3000/token")
  })

  it("is an issuer identifier with RFC 8414 URLs of its own", () => {
    const base = legacyAuthorizationBase(new URL("https://api.example.com/v1/mcp"))
    expect(parseIssuer(base)).toBeDefined()
    expect(hrefs(authorizationServerMetadataUrls(base))?.[0]).toBe(legacyMetadataUrl(new URL(base)).href)
  })
})

describe("sameOrigin: scheme, host and port", () => {
  const same = (a: string, b: string) => sameOrigin(new URL(a), new URL(b))

  it("holds whatever the path, query, fragment or userinfo, and for a default port spelled out", () => {
    expect(same("https://as.example.com/token", "https://as.example.com/authorize?x=1#y")).toBe(true)
    expect(same("https://AS.example.com", "https://as.example.com:443/")).toBe(true)
    expect(same("http://localhost:80/a", "http://localhost/b")).toBe(true)
    expect(same("https://u:p@as.example.com/", "https://as.example.com/")).toBe(true)
    expect(same("http://[::1]:3000/", "http://[0:0:0:0:0:0:0:1]:3000/x")).toBe(true)
  })

  it("fails for another scheme, host, subdomain or port", () => {
    expect(same("https://as.example.com", "http://as.example.com")).toBe(false)
    expect(same("https://as.example.com", "https://evil.example.com")).toBe(false)
    expect(same("https://as.example.com", "https://sub.as.example.com")).toBe(false)
    expect(same("https://as.example.com", "https://as.example.com.")).toBe(false)
    expect(same("https://as.example.com", "https://as.example.com:8443")).toBe(false)
    expect(same("http://localhost:3000", "http://127.0.0.1:3000")).toBe(false)
    expect(same("http://localhost:3000", "http://localhost:3001")).toBe(false)
  })

  it("never holds for a scheme without a network origin, not even against itself", () => {
    expect(same("data:text/plain,a", "data:text/plain,a")).toBe(false)
    expect(same("file:///a", "file:///a")).toBe(false)
    expect(same("javascript:void(0)", "javascript:void(0)")).toBe(false)
    expect(same("ws://localhost:1/", "ws://localhost:1/")).toBe(false)
  })

  it("is symmetric, and agrees with the URL standard's origin for http and https", () => {
    const hostArb = fc.constantFrom("a.example", "A.example", "b.example", "localhost", "127.0.0.1", "[::1]")
    const urlArb = fc.tuple(fc.constantFrom("http", "https", "HTTPS"), hostArb, fc.constantFrom("", ":80", ":443", ":8443"))
      .map(([scheme, host, port]) => new URL(`${scheme}://${host}${port}/p`))
    fc.assert(
      fc.property(urlArb, urlArb, (a, b) => {
        expect(sameOrigin(a, b)).toBe(sameOrigin(b, a))
        expect(sameOrigin(a, b)).toBe(a.origin === b.origin)
      })
    )
  })
})
