/**
 * OAuth authorization of a connection, end to end (packages/client/src/internal/oauth/authorizer.ts
 * wired by McpClient.ts): real loopback servers of the testkit (a protected MCP server of each
 * era, an OAuth 2.1 authorization server), real HTTP through each HTTP client, the public Effect
 * API `McpClient.connect` and the Promise API `connect`.
 *
 * What is proved: each way of obtaining a token works and the token reaches only the MCP server;
 * a refused request is sent again at most once, after a new credential, and a tool runs at most
 * once; a failed refresh re-sends nothing; a refresh loop and step-ups are bounded; a token about
 * to expire is refreshed before it is sent; concurrent refusals share one refresh; options are
 * validated before any I/O; the Promise API's interactive step is bounded and abortable.
 * Hostile authorities and redaction are in authorization-hostile.e2e.test.ts.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import {
  JWT_BEARER_ASSERTION_TYPE,
  type OAuthServerOptions,
  type OAuthTestServer,
  startOAuthServer,
  type TestServer
} from "@phasebound/testkit"
import { Effect, Layer, Redacted, TestClock } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { Authorization, McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { failureOf, httpClients } from "../support/harness.js"
import {
  bearerOf,
  bystanderServer,
  consentingUser,
  everythingReceivedBy,
  mcpRequests,
  oauthServer,
  protectedServer,
  redirectUri,
  summaryOf,
  textOf,
  tokenRequests,
  toolCalls
} from "../support/oauth.js"

const eras = [["2025 (handshake)", "handshake"], ["2026 (stateless)", "stateless"]] as const

const clientSecret = "s3cret-of-the-pre-registered-client"
const metadataDocumentUrl = "https://client.example/phasebound/client.json"
const es256 = generateKeyPairSync("ec", { namedCurve: "P-256" })
const es256Pem = es256.privateKey.export({ type: "pkcs8", format: "pem" }) as string
const es256PublicPem = es256.publicKey.export({ type: "spki", format: "pem" }) as string

const decodeJwtPart = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, "base64url").toString("utf8"))

/** One way of obtaining a token: the authorization server's setup, the options, what the exchange must show. */
interface Setup {
  readonly name: string
  readonly oauth: OAuthServerOptions
  readonly auth: Authorization.Options
  /** The authorization code grant: the interactive step is provided. */
  readonly interactive: boolean
  readonly check: (oauth: OAuthTestServer, server: TestServer) => void
}

const setups: ReadonlyArray<Setup> = [
  {
    name: "authorization code, dynamic registration",
    oauth: {},
    auth: { redirectUri },
    interactive: true,
    check: (oauth) => {
      expect(oauth.calls("register")).toBe(1)
      const registration = oauth.requests.find((r) => r.endpoint === "register")!.json as Record<string, unknown>
      expect(registration["redirect_uris"]).toEqual([redirectUri])
      expect(registration["token_endpoint_auth_method"]).toBe("none")
      const [token] = tokenRequests(oauth)
      expect(token!.form["grant_type"]).toBe("authorization_code")
      expect(token!.form["client_id"]).toBe(oauth.clients().find((c) => c.clientId.startsWith("client_"))!.clientId)
      expect(token!.headers["authorization"]).toBeUndefined()
    }
  },
  {
    name: "authorization code, pre-registered client, client_secret_basic",
    oauth: { clients: [{ clientId: "app-basic", clientSecret, tokenEndpointAuthMethod: "client_secret_basic", redirectUris: [redirectUri] }] },
    auth: { redirectUri, clientId: "app-basic", clientSecret: Redacted.make(clientSecret) },
    interactive: true,
    check: (oauth) => {
      expect(oauth.calls("register")).toBe(0)
      const [token] = tokenRequests(oauth)
      expect(token!.headers["authorization"]).toBe(`Basic ${Buffer.from(`app-basic:${clientSecret}`).toString("base64")}`)
      expect(token!.form["client_secret"]).toBeUndefined()
    }
  },
  {
    name: "authorization code, pre-registered client, client_secret_post",
    oauth: {
      tokenEndpointAuthMethods: ["client_secret_post", "none"],
      clients: [{ clientId: "app-post", clientSecret, tokenEndpointAuthMethod: "client_secret_post", redirectUris: [redirectUri] }]
    },
    auth: { redirectUri, clientId: "app-post", clientSecret },
    interactive: true,
    check: (oauth) => {
      expect(oauth.calls("register")).toBe(0)
      const [token] = tokenRequests(oauth)
      expect(token!.headers["authorization"]).toBeUndefined()
      expect(token!.form["client_id"]).toBe("app-post")
      expect(token!.form["client_secret"]).toBe(clientSecret)
    }
  },
  {
    // The document itself is not fetched here (the authorization server would need https on
    // loopback): the server already knows the client the URL names. What is proved is the
    // client's side: the URL is its client_id, and nothing is registered.
    name: "authorization code, Client ID Metadata Document",
    oauth: { clientIdMetadataDocumentSupported: true, clients: [{ clientId: metadataDocumentUrl, redirectUris: [redirectUri] }] },
    auth: { redirectUri, clientMetadataUrl: metadataDocumentUrl },
    interactive: true,
    check: (oauth) => {
      expect(oauth.calls("register")).toBe(0)
      const authorize = oauth.requests.find((r) => r.endpoint === "authorize")!
      expect(authorize.form["client_id"]).toBe(metadataDocumentUrl)
      const [token] = tokenRequests(oauth)
      expect(token!.form["client_id"]).toBe(metadataDocumentUrl)
      expect(token!.headers["authorization"]).toBeUndefined()
    }
  },
  {
    name: "client credentials, client secret",
    oauth: { clients: [{ clientId: "reporting", clientSecret, grantTypes: ["client_credentials"] }] },
    auth: { grant: "client_credentials", clientId: "reporting", clientSecret: Redacted.make(clientSecret) },
    interactive: false,
    check: (oauth) => {
      expect(oauth.calls("authorize")).toBe(0)
      expect(oauth.calls("register")).toBe(0)
      const [token] = tokenRequests(oauth)
      expect(token!.form["grant_type"]).toBe("client_credentials")
      expect(token!.headers["authorization"]).toBe(`Basic ${Buffer.from(`reporting:${clientSecret}`).toString("base64")}`)
    }
  },
  {
    name: "client credentials, private_key_jwt (ES256)",
    oauth: {
      clients: [{ clientId: "signer", tokenEndpointAuthMethod: "private_key_jwt", publicKey: es256PublicPem, grantTypes: ["client_credentials"] }]
    },
    auth: { grant: "client_credentials", clientId: "signer", privateKey: Redacted.make(es256Pem), privateKeyAlgorithm: "ES256" },
    interactive: false,
    check: (oauth) => {
      expect(oauth.calls("authorize")).toBe(0)
      const [token] = tokenRequests(oauth)
      expect(token!.form["grant_type"]).toBe("client_credentials")
      expect(token!.form["client_assertion_type"]).toBe(JWT_BEARER_ASSERTION_TYPE)
      expect(token!.form["client_secret"]).toBeUndefined()
      expect(token!.headers["authorization"]).toBeUndefined()
      const [header, claims] = token!.form["client_assertion"]!.split(".")
      expect(decodeJwtPart(header!)).toMatchObject({ alg: "ES256", typ: "JWT" })
      expect(decodeJwtPart(claims!)).toMatchObject({ iss: "signer", sub: "signer", aud: oauth.issuer })
    }
  }
]

describe.each(httpClients)("authorization through %s", (_, httpClient) => {
  describe.each(eras)("%s server", (_, era) => {
    for (const setup of setups) {
      it.scopedLive(`${setup.name}: tools listed, a call works, the token reaches only the MCP server`, () =>
        Effect.gen(function*() {
          const bystander = yield* bystanderServer()
          const bystanderOrigin = new URL(bystander.url).origin
          // The bystander is named in both documents (a second authorization server, a
          // revocation endpoint): the connection has no reason to contact it.
          const oauth = yield* oauthServer({ ...setup.oauth, metadataExtra: { revocation_endpoint: `${bystanderOrigin}/revoke` } })
          const srv = yield* protectedServer(oauth, {
            era,
            auth: { metadataExtra: { authorization_servers: [oauth.issuer, bystanderOrigin] } }
          })
          const user = consentingUser(oauth)
          const connect = McpClient.connect({ url: srv.url, auth: setup.auth })
          // The HTTP client is provided around the whole test: the connection keeps using it.
          const connection = yield* (setup.interactive ? Effect.provide(connect, user.layer) : connect)

          expect(connection.protocolVersion).toBe(era === "stateless" ? "2026-07-28" : "2025-11-25")
          expect(connection.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["add", "echo", "increment"]))
          expect(textOf(yield* connection.callTool("add", { a: 2, b: 3 }))).toBe("5")
          expect(textOf(yield* connection.callTool("increment"))).toBe("1")
          expect(srv.counter()).toBe(1)

          // One request refused (the first, without a token), then the discovery run again with one.
          const requests = mcpRequests(srv)
          expect(srv.unauthorizedCount()).toBe(1)
          expect(requests.filter((r) => r.refused !== undefined)).toEqual([requests[0]])
          expect(requests[0]!.refused).toBe(401)
          expect(requests[0]!.headers["authorization"]).toBeUndefined()
          expect(requests[1]!.rpcMethod).toBe(requests[0]!.rpcMethod)
          expect(requests.slice(1).every((r) => r.refused === undefined)).toBe(true)
          expect(srv.rpcCalls("tools/list")).toBe(1)
          expect(srv.rpcCalls("tools/call")).toBe(2)
          expect(toolCalls(srv).every((r) => r.refused === undefined)).toBe(true)

          // The discovery's observations: the refusal, the authorization, the discovery again.
          const authorizations = connection.discovery.filter((o) => o.operation === "authorization")
          expect(authorizations).toHaveLength(1)
          expect(authorizations[0]).toMatchObject({ operation: "authorization", outcome: "ok" })
          const at = connection.discovery.indexOf(authorizations[0]!)
          expect(connection.discovery[at - 1]).toMatchObject({ operation: "discovery", outcome: "Unauthorized" })
          // Then the discovery ran to its end without another refusal (a 2025 server first refuses
          // the 2026 discovery with a 400: the negotiation's own fallback).
          const after = connection.discovery.slice(at + 1)
          expect(after.some((o) => o.outcome === "Unauthorized" || o.operation === "authorization")).toBe(false)
          expect(after.at(-1)).toMatchObject({ operation: "discovery", stage: "list-tools", outcome: "ok" })
          expect(summaryOf(yield* connection.observations)).toEqual([
            ["tools/call", "ok", false],
            ["tools/call", "ok", false]
          ])

          // One token, sent on every request after the refusal, and only to the MCP server.
          const issued = oauth.issuedTokens()
          expect(issued).toHaveLength(1)
          const token = issued[0]!.accessToken
          expect(issued[0]!.resource).toBe(srv.url)
          expect(requests.slice(1).every((r) => bearerOf(r) === token)).toBe(true)
          expect(new Set(srv.bearerTokens())).toEqual(new Set([token]))
          expect(oauth.requests.every((r) => bearerOf(r) === undefined)).toBe(true)
          expect(everythingReceivedBy(oauth.requests)).not.toContain(token)
          expect(bystander.requests).toHaveLength(0)
          // The Protected Resource Metadata was read without a credential.
          const metadataRequests = srv.requests.filter((r) => new URL(r.url, "http://x").pathname !== "/mcp")
          expect(metadataRequests.length).toBeGreaterThan(0)
          expect(metadataRequests.every((r) => r.headers["authorization"] === undefined)).toBe(true)

          // Every token request named the MCP server as its resource (RFC 8707).
          expect(tokenRequests(oauth).every((r) => r.form["resource"] === srv.url)).toBe(true)
          if (setup.interactive) {
            expect(user.urls).toHaveLength(1)
            const url = user.urls[0]!
            expect(url.origin + url.pathname).toBe(oauth.authorizationEndpoint)
            expect(url.searchParams.get("code_challenge_method")).toBe("S256")
            expect(url.searchParams.get("resource")).toBe(srv.url)
            expect(url.searchParams.get("redirect_uri")).toBe(redirectUri)
          } else {
            expect(user.urls).toHaveLength(0)
          }
          setup.check(oauth, srv)
        }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
    }
  })
})

describe("the discovery's observation of the re-sent request", () => {
  it.scopedLive("2025 server: the re-sent server/discover (refused 400 by the era's negotiation) is marked resent", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "handshake" })
      const connection = yield* McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(consentingUser(oauth).layer))
      const at = connection.discovery.findIndex((o) => o.operation === "authorization")
      // Every stage of the discovery run again after the authorization is a second sending.
      expect(connection.discovery[at + 1]).toMatchObject({ operation: "discovery", stage: "discover", resent: true })
      const after = connection.discovery.slice(at + 1)
      expect(after.map((o) => o.stage)).toEqual(["discover", "initialize", "initialized", "list-tools"])
      expect(after.every((o) => o.resent === true)).toBe(true)
      expect(connection.discovery.slice(0, at).some((o) => o.resent === true)).toBe(false)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("2026 server: the re-sent server/discover, answered, is marked resent", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const connection = yield* McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(consentingUser(oauth).layer))
      const at = connection.discovery.findIndex((o) => o.operation === "authorization")
      expect(connection.discovery[at + 1]).toMatchObject({ operation: "discovery", stage: "discover", outcome: "ok", resent: true })
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})

describe("a 2025 client (revisions 2025-11-25 only)", () => {
  it.scopedLive("the refused request is initialize, sent again with the token; the session goes on", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "handshake" })
      const user = consentingUser(oauth)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"], auth: { redirectUri } }).pipe(
        Effect.provide(user.layer)
      )
      const requests = mcpRequests(srv)
      expect(requests.slice(0, 2).map((r) => [r.rpcMethod, r.refused])).toEqual([["initialize", 401], ["initialize", undefined]])
      expect(srv.rpcCalls("initialize")).toBe(1)
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      // The session the second initialize opened carries every later request, with the token.
      const later = mcpRequests(srv).slice(2).filter((r) => r.method === "POST")
      expect(later.length).toBeGreaterThan(0)
      expect(new Set(later.map((r) => r.headers["mcp-session-id"])).size).toBe(1)
      expect(later[0]!.headers["mcp-session-id"]).toBeDefined()
      expect(later.every((r) => bearerOf(r) === oauth.issuedTokens()[0]!.accessToken)).toBe(true)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})

/** A connected client of a protected server (authorization code, dynamic registration, refresh tokens). */
const connected = (
  options: {
    readonly era?: "handshake" | "stateless"
    readonly oauth?: OAuthServerOptions
    readonly toolScopes?: Readonly<Record<string, ReadonlyArray<string>>>
    readonly requiredScopes?: ReadonlyArray<string>
    readonly auth?: Omit<Authorization.Options, "redirectUri">
  } = {}
) =>
  Effect.gen(function*() {
    const oauth = yield* oauthServer(options.oauth)
    const srv = yield* protectedServer(oauth, {
      era: options.era ?? "stateless",
      auth: {
        ...(options.toolScopes === undefined ? {} : { toolScopes: options.toolScopes }),
        ...(options.requiredScopes === undefined ? {} : { requiredScopes: options.requiredScopes })
      }
    })
    const user = consentingUser(oauth)
    const connection = yield* McpClient.connect({ url: srv.url, auth: { redirectUri, ...options.auth } }).pipe(
      Effect.provide(user.layer)
    )
    return { oauth, srv, user, connection }
  })

describe.each(httpClients)("re-sending after a new credential, through %s", (_, httpClient) => {
  describe.each(eras)("%s server", (_, era) => {
    it.scopedLive("an expired token: 401, one refresh, the call sent once more, the tool ran once", () =>
      Effect.gen(function*() {
        const { connection, oauth, srv } = yield* connected({ era })
        const first = oauth.issuedTokens()[0]!
        expect(first.refreshToken).toBeDefined()
        oauth.expireAll()

        const result = yield* connection.callTool("increment")
        expect(textOf(result)).toBe("1")
        expect(srv.counter()).toBe(1)

        const refreshes = tokenRequests(oauth, "refresh_token")
        expect(refreshes).toHaveLength(1)
        expect(refreshes[0]!.form["refresh_token"]).toBe(first.refreshToken)
        expect(oauth.calls("authorize")).toBe(1)
        const refreshed = oauth.issuedTokens()[1]!
        expect(refreshed.grant).toBe("refresh_token")

        const calls = toolCalls(srv)
        expect(calls.map((c) => c.refused)).toEqual([401, undefined])
        expect(bearerOf(calls[0]!)).toBe(first.accessToken)
        expect(bearerOf(calls[1]!)).toBe(refreshed.accessToken)
        // The same request (a new JSON-RPC id).
        expect((calls[1]!.json as { params: unknown }).params).toEqual((calls[0]!.json as { params: unknown }).params)
        expect(srv.rpcCalls("tools/call")).toBe(1)

        const observations = yield* connection.observations
        expect(summaryOf(observations)).toEqual([
          ["tools/call", "Unauthorized", false],
          ["authorization", "ok", false],
          ["tools/call", "ok", true]
        ])
        expect(observations.map((o) => o.stage)).toEqual(["call", "call", "call"])
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })

  it.scopedLive("client credentials (private_key_jwt), token expired: a new token with a fresh assertion, the call re-sent once", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer({
        clients: [{ clientId: "signer", tokenEndpointAuthMethod: "private_key_jwt", publicKey: es256PublicPem, grantTypes: ["client_credentials"] }]
      })
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const connection = yield* McpClient.connect({
        url: srv.url,
        auth: { grant: "client_credentials", clientId: "signer", privateKey: es256Pem, privateKeyAlgorithm: "ES256" }
      })
      oauth.expireAll()
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(srv.counter()).toBe(1)
      const grants = tokenRequests(oauth)
      expect(grants.map((r) => r.form["grant_type"])).toEqual(["client_credentials", "client_credentials"])
      const jtiOf = (assertion: string) => decodeJwtPart(assertion.split(".")[1]!)["jti"]
      expect(jtiOf(grants[0]!.form["client_assertion"]!)).not.toBe(jtiOf(grants[1]!.form["client_assertion"]!))
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([401, undefined])
      expect(summaryOf(yield* connection.observations)).toEqual([
        ["tools/call", "Unauthorized", false],
        ["authorization", "ok", false],
        ["tools/call", "ok", true]
      ])
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a discovery refused again after every new token is bounded: at most 3 authorizations, then Unauthorized", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer({ faults: [{ kind: "rejected-token", times: Infinity }] })
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const user = consentingUser(oauth)
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(user.layer)))
      expect(error).toMatchObject({ _tag: "Unauthorized", phase: "discovery", status: 401 })
      // The code, then a refresh at each later refusal: three authorizations for four attempts.
      expect(tokenRequests(oauth).map((r) => r.form["grant_type"])).toEqual(["authorization_code", "refresh_token", "refresh_token"])
      expect(mcpRequests(srv).map((r) => r.refused)).toEqual([401, 401, 401, 401])
      expect(user.urls).toHaveLength(1)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a refresh refused invalid_grant: AuthorizationFailed, nothing re-sent, the tool never ran", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv, user } = yield* connected()
      oauth.script({ kind: "invalid-grant-on-refresh" })
      oauth.expireAll()

      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        phase: "authorization",
        stage: "call",
        reason: "invalid-grant",
        authorizationStep: "refresh",
        oauthError: "invalid_grant",
        status: 400,
        retryable: false
      })
      expect(srv.counter()).toBe(0)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([401])
      expect(srv.rpcCalls("tools/call")).toBe(0)
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(summaryOf(yield* connection.observations)).toEqual([
        ["tools/call", "Unauthorized", false],
        ["authorization", "AuthorizationFailed", false]
      ])

      // The refused tokens were dropped: the next call needs a new authorization, and gets it.
      expect(user.urls).toHaveLength(1)
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(user.urls).toHaveLength(2)
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(srv.counter()).toBe(1)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a refresh loop (every refreshed token rejected): one refresh and one re-send per call, then Unauthorized", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv, user } = yield* connected({
        oauth: { faults: [{ kind: "rejected-token", grant: "refresh_token", times: Infinity }] }
      })
      oauth.expireAll()
      const started = Date.now()

      const first = yield* failureOf(connection.callTool("increment"))
      expect(first.error).toMatchObject({ _tag: "Unauthorized", phase: "call", stage: "call", status: 401, outcome: "not-applied" })
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([401, 401])

      const second = yield* failureOf(connection.callTool("increment"))
      expect(second.error).toMatchObject({ _tag: "Unauthorized", phase: "call", status: 401 })
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(2)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([401, 401, 401, 401])

      expect(srv.counter()).toBe(0)
      expect(oauth.calls("token")).toBe(3) // the code, then one refresh per call
      expect(user.urls).toHaveLength(1) // no new authorization either
      expect(summaryOf(yield* connection.observations)).toEqual([
        ["tools/call", "Unauthorized", false],
        ["authorization", "ok", false],
        ["tools/call", "Unauthorized", true],
        ["tools/call", "Unauthorized", false],
        ["authorization", "ok", false],
        ["tools/call", "Unauthorized", true]
      ])
      expect(Date.now() - started).toBeLessThan(5_000)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("5 concurrent calls refused with an expired token share ONE refresh; each ran exactly once", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected()
      oauth.expireAll()

      const results = yield* Effect.all(
        Array.from({ length: 5 }, () => connection.callTool("increment")),
        { concurrency: "unbounded" }
      )
      expect(results.map(textOf).sort()).toEqual(["1", "2", "3", "4", "5"])
      expect(srv.counter()).toBe(5)
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(oauth.calls("authorize")).toBe(1)
      expect(srv.rpcCalls("tools/call")).toBe(5)
      // Each call sent at most twice: refused once (expired token), then once with the new one.
      const calls = toolCalls(srv)
      expect(calls.filter((c) => c.refused === undefined)).toHaveLength(5)
      const refused = calls.filter((c) => c.refused !== undefined).length
      expect(refused).toBeGreaterThanOrEqual(1)
      expect(refused).toBeLessThanOrEqual(5)
      const refreshed = oauth.issuedTokens()[1]!.accessToken
      expect(calls.filter((c) => c.refused === undefined).every((c) => bearerOf(c) === refreshed)).toBe(true)
      const observations = yield* connection.observations
      expect(observations.filter((o) => o.operation === "tools/call" && o.outcome === "ok")).toHaveLength(5)
      const authorizations = observations.filter((o) => o.operation === "authorization")
      expect(authorizations).toHaveLength(refused)
      expect(authorizations.every((o) => o.outcome === "ok")).toBe(true)
      expect(observations.filter((o) => o.resent === true)).toHaveLength(refused)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
})

describe("refresh before expiry (less than 30 s left)", () => {
  it.scopedLive("a token issued for 20 s is refreshed before the next operation sends it: no 401", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected({ oauth: { accessTokenTtlSeconds: 20 } })
      expect(srv.unauthorizedCount()).toBe(1)
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(0)

      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(srv.unauthorizedCount()).toBe(1)
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      const refreshed = oauth.issuedTokens()[1]!
      expect(refreshed.grant).toBe("refresh_token")
      expect(toolCalls(srv).map(bearerOf)).toEqual([refreshed.accessToken])
      // A refresh before sending is no refusal: nothing recorded but the call.
      expect(summaryOf(yield* connection.observations)).toEqual([["tools/call", "ok", false]])
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("5 concurrent calls with a token about to expire share ONE refresh before sending", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected({ oauth: { accessTokenTtlSeconds: 20 } })
      const results = yield* Effect.all(Array.from({ length: 5 }, () => connection.callTool("increment")), { concurrency: "unbounded" })
      expect(results.map(textOf).sort()).toEqual(["1", "2", "3", "4", "5"])
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(srv.unauthorizedCount()).toBe(1)
      expect(new Set(toolCalls(srv).map(bearerOf))).toEqual(new Set([oauth.issuedTokens()[1]!.accessToken]))
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a refresh before expiry that fails while the token is still valid: the call goes on with that token", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected({ oauth: { accessTokenTtlSeconds: 20 } })
      oauth.script({ kind: "token-error", error: "temporarily_unavailable", status: 503, grant: "refresh_token" })
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(srv.unauthorizedCount()).toBe(1)
      expect(toolCalls(srv).map(bearerOf)).toEqual([oauth.issuedTokens()[0]!.accessToken])
      // And it is tried again at the next operation.
      expect(textOf(yield* connection.callTool("increment"))).toBe("2")
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(2)
      expect(bearerOf(toolCalls(srv)[1]!)).toBe(oauth.issuedTokens()[1]!.accessToken)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scoped("a refresh before sending refused invalid_grant, the token expired: AuthorizationFailed, the call never sent (TestClock)", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv, user } = yield* connected()
      yield* TestClock.adjust("3601 seconds")
      oauth.script({ kind: "invalid-grant-on-refresh" })
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        reason: "invalid-grant",
        authorizationStep: "refresh",
        oauthError: "invalid_grant",
        stage: "call",
        outcome: "not-sent"
      })
      expect(toolCalls(srv)).toHaveLength(0)
      expect(srv.counter()).toBe(0)
      // The tokens were dropped: the next call is refused, and authorized anew.
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(user.urls).toHaveLength(2)
      expect(toolCalls(srv).map((c) => [c.refused, bearerOf(c) === undefined])).toEqual([[401, true], [undefined, false]])
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("client credentials (private_key_jwt) about to expire: a new token, with a fresh assertion, before sending", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer({
        accessTokenTtlSeconds: 20,
        clients: [{ clientId: "signer", tokenEndpointAuthMethod: "private_key_jwt", publicKey: es256PublicPem, grantTypes: ["client_credentials"] }]
      })
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const connection = yield* McpClient.connect({
        url: srv.url,
        auth: { grant: "client_credentials", clientId: "signer", privateKey: es256Pem, privateKeyAlgorithm: "ES256" }
      })
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(tokenRequests(oauth, "client_credentials")).toHaveLength(2)
      expect(srv.unauthorizedCount()).toBe(1)
      expect(toolCalls(srv).map(bearerOf)).toEqual([oauth.issuedTokens()[1]!.accessToken])
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a token with an hour left is not refreshed", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected()
      yield* connection.callTool("increment")
      yield* connection.listTools
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(0)
      expect(srv.unauthorizedCount()).toBe(1)
      expect(new Set(srv.bearerTokens())).toEqual(new Set([oauth.issuedTokens()[0]!.accessToken]))
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scoped("the skew is measured with Effect's Clock: 40 s token, no refresh at once, a refresh 11 s later (TestClock)", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected({ oauth: { accessTokenTtlSeconds: 40 } })
      yield* connection.callTool("increment")
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(0)

      yield* TestClock.adjust("11 seconds")
      yield* connection.callTool("increment")
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(srv.unauthorizedCount()).toBe(1)
      expect(toolCalls(srv).map(bearerOf)).toEqual([oauth.issuedTokens()[0]!.accessToken, oauth.issuedTokens()[1]!.accessToken])
      expect(srv.counter()).toBe(2)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})

describe.each(httpClients)("step-up (403 insufficient_scope), through %s", (_, httpClient) => {
  it.scopedLive("a wider scope is authorized (the union), the call sent once more, the tool ran once", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv, user } = yield* connected({ requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] } })
      expect(user.urls.map((u) => u.searchParams.get("scope"))).toEqual(["mcp"])

      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(srv.counter()).toBe(1)
      expect(srv.forbiddenCount()).toBe(1)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([403, undefined])
      const authorizes = oauth.requests.filter((r) => r.endpoint === "authorize")
      expect(authorizes).toHaveLength(2)
      expect(authorizes[1]!.form["scope"]!.split(" ").sort()).toEqual(["admin", "mcp"])
      expect(oauth.issuedTokens()[1]!.scope.split(" ").sort()).toEqual(["admin", "mcp"])
      expect(bearerOf(toolCalls(srv)[1]!)).toBe(oauth.issuedTokens()[1]!.accessToken)
      expect(summaryOf(yield* connection.observations)).toEqual([
        ["tools/call", "Forbidden", false],
        ["authorization", "ok", false],
        ["tools/call", "ok", true]
      ])
      // Calls that need only the first scope still work with the wider token.
      expect(textOf(yield* connection.callTool("add", { a: 1, b: 1 }))).toBe("2")
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("two concurrent calls refused 403 share ONE step-up; each ran once", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv, user } = yield* connected({ requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] } })
      const results = yield* Effect.all([connection.callTool("increment"), connection.callTool("increment")], { concurrency: "unbounded" })
      expect(results.map(textOf).sort()).toEqual(["1", "2"])
      expect(srv.counter()).toBe(2)
      expect(user.urls).toHaveLength(2)
      expect(oauth.calls("authorize")).toBe(2)
      expect(srv.rpcCalls("tools/call")).toBe(2)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("client credentials step up too (a new token for the union scope)", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer({ clients: [{ clientId: "svc", clientSecret, grantTypes: ["client_credentials"] }] })
      const srv = yield* protectedServer(oauth, { era: "stateless", auth: { requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] } } })
      const connection = yield* McpClient.connect({ url: srv.url, auth: { grant: "client_credentials", clientId: "svc", clientSecret } })
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(srv.counter()).toBe(1)
      const grants = tokenRequests(oauth)
      expect(grants.map((r) => r.form["scope"])).toEqual(["mcp", "mcp admin"])
      expect(grants.every((r) => r.form["grant_type"] === "client_credentials")).toBe(true)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("maxStepUps: 0: AuthorizationFailed step-up-limit, no new authorization, the tool never ran", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected({ requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] }, auth: { maxStepUps: 0 } })
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        phase: "authorization",
        stage: "call",
        reason: "step-up-limit",
        authorizationStep: "step-up",
        retryable: false
      })
      expect(srv.counter()).toBe(0)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([403])
      expect(oauth.calls("authorize")).toBe(1)
      expect(oauth.calls("token")).toBe(1)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a scope that cannot grow (already asked for, never granted): step-up-limit, nothing asked again", () =>
    Effect.gen(function*() {
      // The client asks for "mcp admin" from the start; the authority only ever grants "mcp".
      const { connection, oauth, srv } = yield* connected({
        toolScopes: { increment: ["admin"] },
        oauth: { faults: [{ kind: "narrow-scope", scope: "mcp", times: Infinity }] },
        auth: { scope: ["mcp", "admin"] }
      })
      expect(oauth.issuedTokens()[0]!.scope).toBe("mcp")
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "step-up-limit", authorizationStep: "step-up" })
      expect(srv.counter()).toBe(0)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([403])
      expect(oauth.calls("authorize")).toBe(1)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("maxStepUps bounds the connection, not the call: a second step-up past the bound is refused", () =>
    Effect.gen(function*() {
      const { connection, oauth, srv } = yield* connected({
        requiredScopes: ["mcp"],
        toolScopes: { increment: ["admin"], echo: ["write"] },
        auth: { maxStepUps: 1 }
      })
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      const { error } = yield* failureOf(connection.callTool("echo", { text: "hi" }))
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "step-up-limit", authorizationStep: "step-up" })
      expect(oauth.calls("authorize")).toBe(2)
      expect(srv.rpcCalls("tools/call")).toBe(1)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
})

describe("without a way to authorize", () => {
  it.scopedLive("authorization code without a redirect URI nor an interactive step: the 401 returned as it is, nothing asked of the authority", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: {} }))
      expect(error).toMatchObject({ _tag: "Unauthorized", phase: "discovery", status: 401, outcome: "not-applied" })
      expect(oauth.requests).toHaveLength(0)
      expect(srv.resourceMetadataRequests()).toBe(0)
      expect(mcpRequests(srv).map((r) => r.refused)).toEqual([401])
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("an interactive step without a redirect URI: InvalidOption auth.redirectUri, before any I/O", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const user = consentingUser(oauth)
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: {} }).pipe(Effect.provide(user.layer)))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "auth.redirectUri", stage: "config", outcome: "not-sent" })
      expect(srv.requests).toHaveLength(0)
      expect(oauth.requests).toHaveLength(0)
      expect(user.urls).toHaveLength(0)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a redirect URI but no interactive step provided: the 401 returned as it is", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: { redirectUri } }))
      expect(error).toMatchObject({ _tag: "Unauthorized", phase: "discovery", status: 401 })
      expect(oauth.requests).toHaveLength(0)
      expect(mcpRequests(srv)).toHaveLength(1)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})

describe("the authorization runs outside the operation's deadline", () => {
  /** A user who takes `ms` to consent. */
  const slowUser = (oauth: OAuthTestServer, ms: number) =>
    Authorization.layerInteractive((url) => Effect.zipRight(Effect.sleep(ms), Effect.promise(() => oauth.authorizeDirect(url))))

  it.scopedLive("a discovery timeout of 300 ms and a user who takes 600 ms: connected", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const connection = yield* McpClient.connect({
        url: srv.url,
        auth: { redirectUri },
        policy: { discovery: { timeout: 300 } }
      }).pipe(Effect.provide(slowUser(oauth, 600)))
      expect(connection.tools.length).toBeGreaterThan(0)
      const authorization = connection.discovery.find((o) => o.operation === "authorization")!
      expect(authorization.outcome).toBe("ok")
      expect(authorization.durationMs).toBeGreaterThanOrEqual(590)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("a call timeout of 300 ms and a step-up whose user takes 600 ms: the call succeeds, once", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless", auth: { requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] } } })
      const connection = yield* McpClient.connect({ url: srv.url, auth: { redirectUri }, policy: { call: { timeout: 300 } } }).pipe(
        Effect.provide(slowUser(oauth, 600))
      )
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(srv.counter()).toBe(1)
      expect(summaryOf(yield* connection.observations)).toEqual([
        ["tools/call", "Forbidden", false],
        ["authorization", "ok", false],
        ["tools/call", "ok", true]
      ])
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})

describe("the token store", () => {
  it.scopedLive("a second connection with the same store sends the stored token at once: no 401, nothing asked of the authority", () =>
    Effect.gen(function*() {
      const store = yield* Layer.build(Authorization.tokenStoreMemory)
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const user = consentingUser(oauth)
      yield* McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(user.layer), Effect.provide(store))
      const requestsToAuthority = oauth.requests.length
      const second = yield* McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(
        Effect.provide(user.layer),
        Effect.provide(store)
      )
      expect(srv.unauthorizedCount()).toBe(1)
      expect(oauth.requests).toHaveLength(requestsToAuthority)
      expect(user.urls).toHaveLength(1)
      expect(second.discovery.some((o) => o.operation === "authorization")).toBe(false)
      expect(textOf(yield* second.callTool("increment"))).toBe("1")
      expect(new Set(srv.bearerTokens())).toEqual(new Set([oauth.issuedTokens()[0]!.accessToken]))
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("stored tokens all revoked: the refresh is refused, the store cleared, the next connection authorizes anew", () =>
    Effect.gen(function*() {
      const store = yield* Layer.build(Authorization.tokenStoreMemory)
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const user = consentingUser(oauth)
      const connectWithStore = McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(
        Effect.provide(user.layer),
        Effect.provide(store)
      )
      yield* connectWithStore
      oauth.revokeAll()

      const { error } = yield* failureOf(connectWithStore)
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-grant", authorizationStep: "refresh", stage: "discover" })
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(user.urls).toHaveLength(1)

      const third = yield* connectWithStore
      expect(user.urls).toHaveLength(2)
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
      expect(textOf(yield* third.callTool("increment"))).toBe("1")
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})

describe("stored tokens whose access token has expired (by the client's Clock), in a new connection", () => {
  /** Connects once (tokens stored), lets an hour pass on the TestClock, and connects again with the same store. */
  const reconnectAnHourLater = (metadata: "header" | "path-aware") =>
    Effect.gen(function*() {
      const store = yield* Layer.build(Authorization.tokenStoreMemory)
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless", auth: { metadata } })
      const user = consentingUser(oauth)
      const connectWithStore = McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(
        Effect.provide(user.layer),
        Effect.provide(store)
      )
      yield* connectWithStore
      // Expired for both: the client's Clock and the server's.
      yield* TestClock.adjust("3601 seconds")
      oauth.expireAll()
      const second = yield* Effect.either(connectWithStore)
      return { oauth, srv, user, second }
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults))

  // A new connection does not know the authority yet (it is announced in the 401's challenge,
  // or at a well-known URL the challenge leads to): the expired token is sent, refused, and
  // refreshed at the authority the challenge names; the refused request is sent once more.
  for (const metadata of ["path-aware", "header"] as const) {
    it.scoped(`Protected Resource Metadata ${metadata === "header" ? "announced only in the challenge" : "at the well-known URL"}: refreshed after the 401, connected, the user not asked again`, () =>
      Effect.gen(function*() {
        const { oauth, second, srv, user } = yield* reconnectAnHourLater(metadata)
        expect(second._tag).toBe("Right")
        expect(tokenRequests(oauth, "refresh_token")).toHaveLength(1)
        // One 401 per connection: the first asked for the authorization, the second for the refresh.
        expect(srv.unauthorizedCount()).toBe(2)
        expect(user.urls).toHaveLength(1)
      }))
  }
})

describe("validation before any I/O", () => {
  it.scopedLive("auth with an authorization header, or with URL userinfo: InvalidOption auth, nothing sent", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const withHeader = yield* failureOf(
        McpClient.connect({ url: srv.url, headers: { Authorization: "Bearer caller-token" }, auth: { redirectUri } })
      )
      expect(withHeader.error).toMatchObject({ _tag: "InvalidOption", option: "auth", stage: "config", outcome: "not-sent" })
      const userinfo = new URL(srv.url)
      userinfo.username = "user"
      userinfo.password = "password"
      const withUserinfo = yield* failureOf(McpClient.connect({ url: userinfo.href, auth: { redirectUri } }))
      expect(withUserinfo.error).toMatchObject({ _tag: "InvalidOption", option: "auth" })
      expect(srv.requests).toHaveLength(0)
      expect(oauth.requests).toHaveLength(0)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  const bad: ReadonlyArray<readonly [string, Authorization.Options, string]> = [
    ["an http client metadata document URL", { redirectUri, clientMetadataUrl: "http://client.example/client.json" }, "auth.clientMetadataUrl"],
    ["a scope of spaces only", { redirectUri, scope: "   " }, "auth.scope"],
    ["a scope token that is a space", { redirectUri, scope: ["mcp", " "] }, "auth.scope"],
    ["client credentials without a client id", { grant: "client_credentials", clientSecret }, "auth.clientId"],
    ["client credentials without a secret or a key", { grant: "client_credentials", clientId: "svc" }, "auth.clientSecret"],
    ["a redirect URI with a fragment", { redirectUri: `${redirectUri}#x` }, "auth.redirectUri"],
    ["maxStepUps below zero", { redirectUri, maxStepUps: -1 }, "auth.maxStepUps"],
    ["an unknown grant", { grant: "password" as "client_credentials", clientId: "svc", clientSecret }, "auth.grant"]
  ]
  for (const [name, auth, option] of bad) {
    it.scopedLive(`${name}: InvalidOption ${option}, nothing sent`, () =>
      Effect.gen(function*() {
        const oauth = yield* oauthServer()
        const srv = yield* protectedServer(oauth)
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth }))
        expect(error).toMatchObject({ _tag: "InvalidOption", option, stage: "config", outcome: "not-sent", retryable: false })
        // The option is named, its value is not repeated.
        expect(JSON.stringify(error)).not.toContain("client.example")
        expect(srv.requests).toHaveLength(0)
        expect(oauth.requests).toHaveLength(0)
      }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
  }

  it.scopedLive("Promise API: bad auth options reject with the same InvalidOption, nothing sent", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const error = yield* Effect.promise(() =>
        connect({ url: srv.url, auth: { grant: "client_credentials", clientSecret } }).then(
          () => undefined,
          (e: unknown) => e
        )
      )
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "auth.clientId", outcome: "not-sent" })
      expect(srv.requests).toHaveLength(0)
    }))
})

describe("Promise API", () => {
  const httpClientsForPromise = [["the default client (undici)", undefined], ["FetchHttpClient", FetchHttpClient.layer]] as const
  for (const [name, httpClient] of httpClientsForPromise) {
    it.scopedLive(`connect with auth.authorize (${name}): the code flow, a call, the token only at the MCP server`, () =>
      Effect.gen(function*() {
        const oauth = yield* oauthServer()
        const srv = yield* protectedServer(oauth, { era: "stateless" })
        const signals: Array<AbortSignal> = []
        const connection = yield* Effect.acquireRelease(
          Effect.promise(() =>
            connect({
              url: srv.url,
              httpClient,
              auth: {
                redirectUri,
                authorize: (url, { signal }) => {
                  signals.push(signal)
                  return oauth.authorizeDirect(url)
                }
              }
            })
          ),
          (c) => Effect.promise(() => c.close())
        )
        expect(signals).toHaveLength(1)
        expect(signals[0]!.aborted).toBe(false)
        expect(connection.tools.map((t) => t.name)).toContain("increment")
        const result = yield* Effect.promise(() => connection.callTool("increment"))
        expect(textOf(result)).toBe("1")
        expect(srv.counter()).toBe(1)
        expect(srv.unauthorizedCount()).toBe(1)
        expect(connection.effect.discovery.filter((o) => o.operation === "authorization")).toEqual([
          expect.objectContaining({ outcome: "ok" })
        ])
        const token = oauth.issuedTokens()[0]!.accessToken
        expect(new Set(srv.bearerTokens())).toEqual(new Set([token]))
        expect(everythingReceivedBy(oauth.requests)).not.toContain(token)
      }))
  }

  it.scopedLive("the caller aborts during the interactive step: rejects with the signal's reason; the step's signal aborts", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const controller = new AbortController()
      const reason = new Error("the user closed the window")
      let seen: AbortSignal | undefined
      const started = Date.now()
      const outcome = yield* Effect.promise(() =>
        connect({
          url: srv.url,
          signal: controller.signal,
          auth: {
            redirectUri,
            authorize: (_url, { signal }) => {
              seen = signal
              setTimeout(() => controller.abort(reason), 20)
              return new Promise<string>(() => {})
            }
          }
        }).then(() => "resolved", (e: unknown) => e)
      )
      expect(outcome).toBe(reason)
      expect(seen).toBeDefined()
      expect(seen!.aborted).toBe(true)
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(oauth.calls("token")).toBe(0)
      expect(srv.rpcCalls("tools/list")).toBe(0)
    }))

  it.scopedLive("the caller aborts a call during its step-up's interactive step: rejects with the reason, the tool never ran", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless", auth: { requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] } } })
      const signals: Array<AbortSignal> = []
      const controller = new AbortController()
      const reason = new Error("cancelled by the caller")
      const connection = yield* Effect.acquireRelease(
        Effect.promise(() =>
          connect({
            url: srv.url,
            auth: {
              redirectUri,
              authorize: (url, { signal }) => {
                signals.push(signal)
                if (signals.length === 1) return oauth.authorizeDirect(url)
                setTimeout(() => controller.abort(reason), 20)
                return new Promise<string>(() => {})
              }
            }
          })
        ),
        (c) => Effect.promise(() => c.close())
      )
      const outcome = yield* Effect.promise(() => connection.callTool("increment", {}, { signal: controller.signal }).then(() => "resolved", (e: unknown) => e))
      expect(outcome).toBe(reason)
      expect(signals).toHaveLength(2)
      expect(signals[1]!.aborted).toBe(true)
      expect(srv.counter()).toBe(0)
      expect(toolCalls(srv).map((c) => c.refused)).toEqual([403])
      // The connection is still usable.
      expect(textOf(yield* Effect.promise(() => connection.callTool("add", { a: 1, b: 2 })))).toBe("3")
    }))

  it.scopedLive("interactiveTimeout 200 ms and an authorize that never answers: DeadlineExceeded, step authorization; its signal aborts", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      let seen: AbortSignal | undefined
      const started = Date.now()
      const error = yield* Effect.promise(() =>
        connect({
          url: srv.url,
          auth: {
            redirectUri,
            interactiveTimeout: 200,
            authorize: (_url, { signal }) => {
              seen = signal
              return new Promise<string>(() => {})
            }
          }
        }).then(() => undefined, (e: unknown) => e)
      )
      const elapsed = Date.now() - started
      expect(error).toMatchObject({
        _tag: "DeadlineExceeded",
        phase: "authorization",
        stage: "discover",
        authorizationStep: "authorization",
        limits: { timeoutMs: 200 },
        outcome: "not-applied"
      })
      expect(elapsed).toBeGreaterThanOrEqual(190)
      expect(elapsed).toBeLessThan(3_000)
      expect(seen?.aborted).toBe(true)
      expect(oauth.calls("token")).toBe(0)
      expect(srv.rpcCalls("tools/list")).toBe(0)
    }))
})

describe("testkit OAuth server (what these suites stand on)", () => {
  // BUG (packages/testkit/src/OAuthServer.ts, `publicKeyOf`): `OAuthClient.publicKey` is documented
  // as "a public JWK, an SPKI PEM, or a KeyObject (a private one gives its public half)", but a
  // public KeyObject is passed to `createPublicKey`, which only accepts a private KeyObject: it
  // throws "Invalid key object type public, expected private". Expected: a public KeyObject is used as is.
  it.effect("a private_key_jwt client registered with a public KeyObject", () =>
    Effect.gen(function*() {
      const keys = generateKeyPairSync("ec", { namedCurve: "P-256" })
      const oauth = yield* Effect.promise(() =>
        startOAuthServer({ clients: [{ clientId: "k", tokenEndpointAuthMethod: "private_key_jwt", publicKey: keys.publicKey }] })
      )
      yield* Effect.promise(() => oauth.close())
    }))
})
