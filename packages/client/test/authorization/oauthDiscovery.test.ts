/**
 * Discovery of the authority of an MCP server (internal/oauth/discovery.ts) over real loopback
 * HTTP, through each HTTP client: two servers on two ports (two origins), the MCP resource
 * server and an authorization server, each recording what it receives into one shared log, so
 * that every case asserts the exact order of the requests. Happy paths follow the spec's order
 * of URLs; hostile servers get typed failures of phase `authorization` that never show a URL
 * or a value of a document.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as http from "node:http"
import { McpConnectionError } from "../../src/index.js"
import { discoverAuthority, type DiscoverOptions } from "../../src/internal/oauth/discovery.js"
import type { Budget } from "../../src/PhasePolicy.js"
import { eventually, httpClients } from "../support/harness.js"
import { publicViews } from "../support/publicViews.js"
import { type RawRequest, rawHttpServer } from "../support/rawMcpServer.js"

type Route = (res: http.ServerResponse, request: RawRequest) => void

/** A loopback server whose answers are set after it starts (they name the other server's origin). */
const site = (name: string, log: Array<string>) => {
  const routes = new Map<string, Route>()
  return Effect.map(
    rawHttpServer((_, res, request) => {
      log.push(`${name} ${request.method} ${request.url}`)
      const route = routes.get(request.path)
      if (route === undefined) res.writeHead(404).end()
      else route(res, request)
    }),
    (server) => ({ ...server, routes })
  )
}

const json = (body: unknown): Route => (res) =>
  res.writeHead(200, { "content-type": "application/json" }).end(typeof body === "string" ? body : JSON.stringify(body))

const status = (code: number, headers: Record<string, string> = {}): Route => (res) => res.writeHead(code, headers).end()

const budget: Budget = { timeoutMs: 5_000, maxBytes: 64 * 1024 }

const asMetadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  code_challenge_methods_supported: ["S256"]
})

/** The MCP server, an authorization server and the log of what both received, in order. */
const setup = Effect.gen(function*() {
  const log: Array<string> = []
  const mcp = yield* site("mcp", log)
  const as = yield* site("as", log)
  const serverUrl = new URL(`${mcp.origin}/mcp`)
  const discover = (options: Partial<DiscoverOptions> = {}) => discoverAuthority({ serverUrl, wwwAuthenticate: undefined, budget, ...options })
  return { log, mcp, as, serverUrl, discover }
})

const prmPath = "/.well-known/oauth-protected-resource/mcp"
const prmRoot = "/.well-known/oauth-protected-resource"
const oauthAs = "/.well-known/oauth-authorization-server"
const openId = "/.well-known/openid-configuration"

describe.each(httpClients)("authority discovery through %s", (_, layer) => {
  it.scopedLive("the challenge's resource_metadata, then RFC 8414 at the issuer; nothing but Accept is sent", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      mcp.routes.set("/meta/prm", json({ resource: serverUrl.href, authorization_servers: [as.origin], scopes_supported: ["a"] }))
      as.routes.set(oauthAs, json(asMetadata(as.origin)))
      const found = yield* discover({
        wwwAuthenticate: `Bearer resource_metadata="${mcp.origin}/meta/prm", scope="read write", error="invalid_token"`
      })
      expect(log).toEqual(["mcp GET /meta/prm", `as GET ${oauthAs}`])
      expect(found.resource).toBe(serverUrl.href)
      expect(found.resourceMetadata?.scopes_supported).toEqual(["a"])
      expect(found.authorizationServer.token_endpoint).toBe(`${as.origin}/token`)
      expect(found.authorizationServerSource).toBe("metadata")
      expect(found.challenge).toEqual({ scope: ["read", "write"], error: "invalid_token" })
      for (const request of [...mcp.received, ...as.received]) {
        expect(request.headers.accept).toBe("application/json")
        expect(request.headers.authorization).toBeUndefined()
        expect(request.headers.cookie).toBeUndefined()
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("no challenge: the path-aware well-known URL first", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [as.origin] }))
      as.routes.set(oauthAs, json(asMetadata(as.origin)))
      const found = yield* discover({ wwwAuthenticate: "Basic realm=\"x\"" })
      expect(log).toEqual([`mcp GET ${prmPath}`, `as GET ${oauthAs}`])
      expect(found.resource).toBe(serverUrl.href)
      expect(found.challenge).toEqual({ scope: undefined, error: undefined })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a non-JSON answer at the path-aware URL moves to the root one, which may name the origin", () =>
    Effect.gen(function*() {
      const { log, mcp, as, discover } = yield* setup
      mcp.routes.set(prmPath, (res) => res.writeHead(200, { "content-type": "text/html" }).end("<html></html>"))
      mcp.routes.set(prmRoot, json({ resource: mcp.origin, authorization_servers: [as.origin] }))
      as.routes.set(oauthAs, json(asMetadata(as.origin)))
      const found = yield* discover()
      expect(log).toEqual([`mcp GET ${prmPath}`, `mcp GET ${prmRoot}`, `as GET ${oauthAs}`])
      // The published resource is what is sent as RFC 8707 `resource`.
      expect(found.resource).toBe(mcp.origin)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an issuer with a path: RFC 8414 insertion, OpenID insertion, OpenID appending, in that order", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      const issuer = `${as.origin}/tenant/one`
      mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [issuer] }))
      as.routes.set(`${openId}/tenant/one`, status(405))
      as.routes.set(`/tenant/one${openId}`, json(asMetadata(issuer)))
      const found = yield* discover()
      expect(log).toEqual([
        `mcp GET ${prmPath}`,
        `as GET ${oauthAs}/tenant/one`,
        `as GET ${openId}/tenant/one`,
        `as GET /tenant/one${openId}`
      ])
      expect(found.authorizationServer.issuer).toBe(issuer)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an issuer without a path: OpenID Connect discovery after RFC 8414", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [as.origin, "https://second.example"] }))
      as.routes.set(openId, json(asMetadata(as.origin)))
      const found = yield* discover()
      expect(log).toEqual([`mcp GET ${prmPath}`, `as GET ${oauthAs}`, `as GET ${openId}`])
      expect(found.authorizationServer.issuer).toBe(as.origin)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a same-origin redirect is followed", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      mcp.routes.set(prmPath, status(307, { location: "/moved/prm" }))
      mcp.routes.set("/moved/prm", json({ resource: serverUrl.href, authorization_servers: [as.origin] }))
      as.routes.set(oauthAs, json(asMetadata(as.origin)))
      yield* discover()
      expect(log).toEqual([`mcp GET ${prmPath}`, "mcp GET /moved/prm", `as GET ${oauthAs}`])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("no Protected Resource Metadata: the 2025-03-26 metadata at the server's origin", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      mcp.routes.set(oauthAs, json(asMetadata(mcp.origin)))
      const found = yield* discover()
      expect(log).toEqual([`mcp GET ${prmPath}`, `mcp GET ${prmRoot}`, `mcp GET ${oauthAs}`])
      expect(as.received).toEqual([])
      expect(found).toMatchObject({
        resource: serverUrl.href,
        resourceMetadata: undefined,
        authorizationServerSource: "metadata",
        authorizationServer: { issuer: mcp.origin, token_endpoint: `${mcp.origin}/token` }
      })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("no metadata at all: the 2025-03-26 default endpoints", () =>
    Effect.gen(function*() {
      const { log, mcp, serverUrl, discover } = yield* setup
      const found = yield* discover({ wwwAuthenticate: "Bearer scope=\"tools\"" })
      expect(log).toEqual([`mcp GET ${prmPath}`, `mcp GET ${prmRoot}`, `mcp GET ${oauthAs}`])
      expect(found).toEqual({
        resource: serverUrl.href,
        resourceMetadata: undefined,
        authorizationServerSource: "default-endpoints",
        authorizationServer: {
          issuer: mcp.origin,
          authorization_endpoint: `${mcp.origin}/authorize`,
          token_endpoint: `${mcp.origin}/token`,
          registration_endpoint: `${mcp.origin}/register`
        },
        challenge: { scope: ["tools"], error: undefined }
      })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("each exchange has its own deadline: two slow answers inside theirs add up past one", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      const slow = (route: Route): Route => (res, request) => setTimeout(() => route(res, request), 250)
      mcp.routes.set(prmPath, slow(json({ resource: serverUrl.href, authorization_servers: [as.origin] })))
      as.routes.set(oauthAs, slow(json(asMetadata(as.origin))))
      const started = Date.now()
      yield* discover({ budget: { timeoutMs: 400, maxBytes: 4096 } })
      expect(Date.now() - started).toBeGreaterThanOrEqual(490)
      expect(log).toHaveLength(2)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a body of exactly the ceiling is accepted", () =>
    Effect.gen(function*() {
      const { mcp, as, serverUrl, discover } = yield* setup
      const body = JSON.stringify({ resource: serverUrl.href, authorization_servers: [as.origin] })
      mcp.routes.set(prmPath, json(body + " ".repeat(1000 - body.length)))
      as.routes.set(oauthAs, json(asMetadata(as.origin)))
      const found = yield* discover({ budget: { timeoutMs: 5_000, maxBytes: 1000 } })
      expect(found.resource).toBe(serverUrl.href)
    }).pipe(Effect.provide(layer)))

  describe("hostile servers", () => {
    const failing = <A, R>(effect: Effect.Effect<A, McpConnectionError.McpConnectionError, R>) => Effect.flip(effect)

    it.scopedLive("a resource other than the server's is refused; the authorization server is never asked", () =>
      Effect.gen(function*() {
        const { log, mcp, as, discover } = yield* setup
        mcp.routes.set(prmPath, json({ resource: `${mcp.origin}/other`, authorization_servers: [as.origin] }))
        const error = yield* failing(discover())
        expect(error).toMatchObject({
          _tag: "ProtocolViolation",
          reason: "resource-mismatch",
          stage: "connect",
          phase: "authorization",
          outcome: "not-sent",
          retryable: false
        })
        expect(log).toEqual([`mcp GET ${prmPath}`])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("an issuer other than the one asked for is refused (no normalization)", () =>
      Effect.gen(function*() {
        const { log, mcp, as, serverUrl, discover } = yield* setup
        mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [as.origin] }))
        as.routes.set(oauthAs, json(asMetadata(`${as.origin}/`)))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "issuer-mismatch", phase: "authorization" })
        expect(error.cause).toEqual({
          _tag: "DocumentProblem",
          document: "authorization-server-metadata",
          problem: "issuer-mismatch",
          field: "issuer"
        })
        // A mismatch is a refusal, not a reason to try the next URL.
        expect(log).toEqual([`mcp GET ${prmPath}`, `as GET ${oauthAs}`])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("an authorization server over plain http to another host is refused", () =>
      Effect.gen(function*() {
        const { log, mcp, serverUrl, discover } = yield* setup
        mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: ["http://as.example.com"] }))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "insecure-url", outcome: "not-sent" })
        expect(log).toEqual([`mcp GET ${prmPath}`])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("an authorization server without metadata at any URL", () =>
      Effect.gen(function*() {
        const { log, mcp, as, serverUrl, discover } = yield* setup
        mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [as.origin] }))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "no-authorization-server" })
        expect(log).toEqual([`mcp GET ${prmPath}`, `as GET ${oauthAs}`, `as GET ${openId}`])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("a stalled metadata endpoint fails at the authorization deadline", () =>
      Effect.gen(function*() {
        const { log, mcp, discover } = yield* setup
        let closed = false
        mcp.routes.set(prmPath, (res) => res.on("close", () => (closed = true)))
        const started = Date.now()
        const error = yield* failing(discover({ budget: { timeoutMs: 300, maxBytes: 4096 } }))
        expect(Date.now() - started).toBeGreaterThanOrEqual(295)
        expect(error).toMatchObject({
          _tag: "DeadlineExceeded",
          stage: "connect",
          phase: "authorization",
          limits: { timeoutMs: 300, maxBytes: 4096 },
          outcome: "not-sent",
          retryable: true
        })
        expect(log).toEqual([`mcp GET ${prmPath}`])
        // Released: the server sees the request closed.
        yield* eventually(() => closed)
      }).pipe(Effect.provide(layer)))

    it.scopedLive("a body one byte over the ceiling is refused with the bytes read", () =>
      Effect.gen(function*() {
        const { mcp, discover } = yield* setup
        // A lying Content-Length would be refused by the server's own HTTP stack; a chunked body has none.
        mcp.routes.set(prmPath, (res) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.write(`{"resource":"${"x".repeat(500)}`)
          res.end(`${"y".repeat(1001 - 515)}"}`)
        })
        const error = yield* failing(discover({ budget: { timeoutMs: 5_000, maxBytes: 1000 } }))
        expect(error).toMatchObject({
          _tag: "ByteCeilingExceeded",
          phase: "authorization",
          observedBytes: 1001,
          status: 200,
          outcome: "not-sent",
          retryable: false
        })
      }).pipe(Effect.provide(layer)))

    it.scopedLive("a redirect to another origin is refused and the other origin receives nothing", () =>
      Effect.gen(function*() {
        const { log, mcp, as, serverUrl, discover } = yield* setup
        as.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [as.origin] }))
        mcp.routes.set(prmPath, status(302, { location: `${as.origin}${prmPath}` }))
        const error = yield* failing(discover())
        expect(error).toMatchObject({
          _tag: "ProtocolViolation",
          reason: "redirect-refused",
          status: 302,
          phase: "authorization",
          outcome: "not-sent"
        })
        expect(log).toEqual([`mcp GET ${prmPath}`])
        expect(as.received).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("a redirect loop on one origin ends after the bound", () =>
      Effect.gen(function*() {
        const { log, mcp, discover } = yield* setup
        mcp.routes.set(prmPath, status(308, { location: prmPath }))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "redirect-refused", status: 308 })
        expect(log).toEqual(Array.from({ length: 6 }, () => `mcp GET ${prmPath}`))
      }).pipe(Effect.provide(layer)))

    it.scopedLive("invalid JSON is a protocol violation, not a reason to try the next URL", () =>
      Effect.gen(function*() {
        const { log, mcp, discover } = yield* setup
        mcp.routes.set(prmPath, json("{\"resource\": "))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-json", observedBytes: 13, status: 200 })
        expect(log).toEqual([`mcp GET ${prmPath}`])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("metadata nested past the structure bound is LimitExceeded maxDepth, and nothing more is asked", () =>
      Effect.gen(function*() {
        const { as, log, mcp, discover } = yield* setup
        // 60 KB, under the byte ceiling, nested 30,000 deep (JSON.parse would accept it).
        const deep = `{"resource":${"[".repeat(30_000)}${"]".repeat(30_000)}}`
        mcp.routes.set(prmPath, json(deep))
        const error = yield* failing(discover())
        expect(error).toMatchObject({
          _tag: "LimitExceeded",
          limit: "maxDepth",
          phase: "authorization",
          observedBytes: deep.length,
          status: 200,
          outcome: "not-sent"
        })
        expect(log).toEqual([`mcp GET ${prmPath}`])
        expect(as.received).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.scopedLive("a 503 is a retryable upstream failure", () =>
      Effect.gen(function*() {
        const { mcp, discover } = yield* setup
        mcp.routes.set(prmPath, status(503))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 503, phase: "authorization", retryable: true })
      }).pipe(Effect.provide(layer)))

    it.scopedLive("a document echoing a canary never shows it, nor any URL, in a public view", () =>
      Effect.gen(function*() {
        const { log, mcp, discover } = yield* setup
        const canary = "CANARY-9f3b2c7d"
        mcp.routes.set("/prm", json({ resource: `${mcp.origin}/mcp`, authorization_servers: [`https://x.example/${canary} ${canary}`] }))
        const error = yield* failing(
          discover({ wwwAuthenticate: `Bearer resource_metadata="${mcp.origin}/prm?token=${canary}"` })
        )
        expect(log).toEqual([`mcp GET /prm?token=${canary}`])
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-metadata", outcome: "not-sent" })
        // Which document and field, in process only.
        expect(error.cause).toEqual({
          _tag: "DocumentProblem",
          document: "protected-resource-metadata",
          problem: "invalid-value",
          field: "authorization_servers"
        })
        for (const view of [...publicViews(error), JSON.stringify(error.cause)]) {
          expect(view).not.toContain(canary)
          expect(view).not.toContain("127.0.0.1")
          expect(view).not.toContain("x.example")
        }
      }).pipe(Effect.provide(layer)))
  })
})

describe.each(httpClients)("binding and reach of discovery through %s", (_, layer) => {
  const failing = <A, R>(effect: Effect.Effect<A, McpConnectionError.McpConnectionError, R>) => Effect.flip(effect)

  it.scopedLive("an expected issuer: the one the resource names among several is used, the others never contacted", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      const rogue = yield* site("rogue", log)
      mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [rogue.origin, as.origin] }))
      as.routes.set(oauthAs, json(asMetadata(as.origin)))
      rogue.routes.set(oauthAs, json(asMetadata(rogue.origin)))
      const found = yield* discover({ expectedIssuer: as.origin })
      expect(found.authorizationServer.issuer).toBe(as.origin)
      expect(log).toEqual([`mcp GET ${prmPath}`, `as GET ${oauthAs}`])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an expected issuer the resource does not name: AuthorizationFailed issuer-mismatch, the named one never contacted", () =>
    Effect.gen(function*() {
      const { log, mcp, as, serverUrl, discover } = yield* setup
      const rogue = yield* site("rogue", log)
      mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [rogue.origin] }))
      rogue.routes.set(oauthAs, json(asMetadata(rogue.origin)))
      const error = yield* failing(discover({ expectedIssuer: as.origin }))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        reason: "issuer-mismatch",
        phase: "authorization",
        authorizationStep: "metadata",
        outcome: "not-sent",
        retryable: false
      })
      expect(log).toEqual([`mcp GET ${prmPath}`])
      for (const view of publicViews(error)) expect(view).not.toContain("127.0.0.1")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an expected issuer and no resource metadata: the 2025-03-26 fallback to the server's origin is refused before its metadata", () =>
    Effect.gen(function*() {
      const { log, as, discover } = yield* setup
      const error = yield* failing(discover({ expectedIssuer: as.origin }))
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "issuer-mismatch" })
      expect(log).toEqual([`mcp GET ${prmPath}`, `mcp GET ${prmRoot}`])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("the expected issuer is the server's origin: the fallback goes on", () =>
    Effect.gen(function*() {
      const { log, mcp, discover } = yield* setup
      const found = yield* discover({ expectedIssuer: mcp.origin })
      expect(found.authorizationServerSource).toBe("default-endpoints")
      expect(log).toEqual([`mcp GET ${prmPath}`, `mcp GET ${prmRoot}`, `mcp GET ${oauthAs}`])
    }).pipe(Effect.provide(layer)))

  for (
    const [field, value] of [
      ["token_endpoint", "https://10.0.0.1/token"],
      ["registration_endpoint", "https://[fe80::1]/register"],
      ["authorization_endpoint", "https://169.254.169.254/authorize"]
    ] as const
  ) {
    it.scopedLive(`a ${field} on a non-public address: private-authority once the metadata is read; allowPrivateAuthority lets it through`, () =>
      Effect.gen(function*() {
        const { log, mcp, as, serverUrl, discover } = yield* setup
        mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: [as.origin] }))
        as.routes.set(oauthAs, json({ ...asMetadata(as.origin), [field]: value }))
        const error = yield* failing(discover())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "private-authority", authorizationStep: "metadata", outcome: "not-sent" })
        expect(log).toEqual([`mcp GET ${prmPath}`, `as GET ${oauthAs}`])
        for (const view of publicViews(error)) expect(view).not.toMatch(/10\.0\.0\.1|fe80|169\.254/)
        const found = yield* discover({ allowPrivateAuthority: true })
        expect(found.authorizationServer[field]).toBe(value)
      }).pipe(Effect.provide(layer)))
  }

  it.scopedLive("a resource naming an authorization server on a private address: refused before its metadata is asked", () =>
    Effect.gen(function*() {
      const { log, mcp, serverUrl, discover } = yield* setup
      mcp.routes.set(prmPath, json({ resource: serverUrl.href, authorization_servers: ["https://192.168.1.1/tenant"] }))
      const error = yield* failing(discover())
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "private-authority" })
      expect(log).toEqual([`mcp GET ${prmPath}`])
    }).pipe(Effect.provide(layer)))
})
