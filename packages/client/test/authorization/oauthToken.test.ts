/**
 * The token endpoint (internal/oauth/token.ts) against the testkit's loopback authorization
 * server, through each HTTP client: the code flow with PKCE, each client authentication method,
 * refresh with rotation, client credentials, and hostile answers (an error echoing secrets, a
 * stall, an oversized or malformed response), every failure of phase `authorization` without a
 * secret in any public view.
 */
import { describe, expect, it } from "@effect/vitest"
import { type OAuthClient, type OAuthTestServer, startOAuthServer } from "@phasebound/testkit"
import { Effect, Redacted } from "effect"
import {
  clientCredentials,
  exchangeCode,
  isInvalidGrant,
  refresh,
  type TokenClient
} from "../../src/internal/oauth/token.js"
import type { Budget } from "../../src/PhasePolicy.js"
import { httpClients } from "../support/harness.js"
import { authorizationCode } from "../support/oauth.js"
import { publicViews } from "../support/publicViews.js"
import { rawHttpServer } from "../support/rawMcpServer.js"

const budget: Budget = { timeoutMs: 5_000, maxBytes: 64 * 1024 }
const resource = "http://127.0.0.1:9/mcp"
const redirectUri = "http://127.0.0.1:9/callback"

const clients: ReadonlyArray<OAuthClient> = [
  { clientId: "basic client", clientSecret: "s3cret:with/odd+chars é", tokenEndpointAuthMethod: "client_secret_basic", redirectUris: [redirectUri] },
  { clientId: "post-client", clientSecret: "post-secret-value", tokenEndpointAuthMethod: "client_secret_post", redirectUris: [redirectUri] },
  { clientId: "public-client", tokenEndpointAuthMethod: "none", redirectUris: [redirectUri] }
]

const tokenClientOf = (client: OAuthClient): TokenClient => ({
  clientId: client.clientId,
  clientSecret: client.clientSecret === undefined ? undefined : Redacted.make(client.clientSecret),
  method: client.tokenEndpointAuthMethod ?? "none"
})
const basic = tokenClientOf(clients[0]!)
const post = tokenClientOf(clients[1]!)
const publicClient = tokenClientOf(clients[2]!)

const oauthServer = (options: Parameters<typeof startOAuthServer>[0] = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startOAuthServer({ clients, ...options })),
    (server) => Effect.promise(() => server.close())
  )

const codeFlow = (server: OAuthTestServer, client: TokenClient, options: { budget?: Budget } = {}) =>
  Effect.flatMap(authorizationCode(server, client.clientId, { redirectUri, resource }), ({ code, codeVerifier }) =>
    exchangeCode({
      tokenEndpoint: server.tokenEndpoint,
      code,
      codeVerifier,
      redirectUri,
      resource,
      client,
      budget: options.budget ?? budget
    }))

const tokenRequests = (server: OAuthTestServer) => server.requests.filter((request) => request.endpoint === "token")

describe.each(httpClients)("token endpoint through %s", (_, layer) => {
  it.scopedLive("the code flow with PKCE and client_secret_basic (form-urlencoded id and secret)", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const before = Date.now()
      const tokens = yield* codeFlow(server, basic)
      const issued = server.issuedTokens()
      expect(issued).toHaveLength(1)
      expect(Redacted.value(tokens.accessToken)).toBe(issued[0]!.accessToken)
      expect(Redacted.value(tokens.refreshToken!)).toBe(issued[0]!.refreshToken)
      expect(tokens.tokenType).toBe("Bearer")
      expect(tokens.expiresAt).toBeGreaterThanOrEqual(before + 3_600_000)
      expect(tokens.expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000)
      expect(server.isValidToken(Redacted.value(tokens.accessToken), { resource })).toBe(true)
      expect(String(tokens.accessToken)).not.toContain(issued[0]!.accessToken)

      const [request] = tokenRequests(server)
      expect(request!.method).toBe("POST")
      expect(request!.headers["content-type"]).toBe("application/x-www-form-urlencoded")
      expect(request!.headers["accept"]).toBe("application/json")
      const expected = Buffer.from(
        `${new URLSearchParams({ a: "basic client" }).toString().slice(2)}:${new URLSearchParams({ a: "s3cret:with/odd+chars é" }).toString().slice(2)}`
      ).toString("base64")
      expect(request!.headers["authorization"]).toBe(`Basic ${expected}`)
      expect(request!.form).toMatchObject({ grant_type: "authorization_code", redirect_uri: redirectUri, resource })
      expect(request!.form["client_id"]).toBeUndefined()
      expect(request!.form["client_secret"]).toBeUndefined()
    }).pipe(Effect.provide(layer)))

  it.scopedLive("client_secret_post puts id and secret in the form; none sends only client_id", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const viaPost = yield* codeFlow(server, post)
      const viaNone = yield* codeFlow(server, publicClient)
      expect(server.isValidToken(Redacted.value(viaPost.accessToken), { resource })).toBe(true)
      expect(server.isValidToken(Redacted.value(viaNone.accessToken), { resource })).toBe(true)
      const [postRequest, noneRequest] = tokenRequests(server)
      expect(postRequest!.headers["authorization"]).toBeUndefined()
      expect(postRequest!.form).toMatchObject({ client_id: "post-client", client_secret: "post-secret-value", resource })
      expect(noneRequest!.headers["authorization"]).toBeUndefined()
      expect(noneRequest!.form["client_id"]).toBe("public-client")
      expect(noneRequest!.form["client_secret"]).toBeUndefined()
      expect(noneRequest!.form["resource"]).toBe(resource)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("refresh with rotation: a new refresh token, the old one refused as invalid-grant", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const first = yield* codeFlow(server, post)
      const second = yield* refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: post,
        budget
      })
      expect(Redacted.value(second.refreshToken!)).not.toBe(Redacted.value(first.refreshToken!))
      expect(Redacted.value(second.refreshToken!)).toBe(server.issuedTokens()[1]!.refreshToken)
      expect(server.isValidToken(Redacted.value(second.accessToken), { resource })).toBe(true)
      const third = yield* refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: second.refreshToken!,
        resource,
        client: post,
        budget
      })
      expect(server.isValidToken(Redacted.value(third.accessToken), { resource })).toBe(true)
      // The rotated-out token is refused.
      const error = yield* Effect.flip(refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: post,
        budget
      }))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        reason: "invalid-grant",
        status: 400,
        phase: "authorization",
        outcome: "not-sent",
        retryable: false
      })
      expect(isInvalidGrant(error)).toBe(true)
      expect(error.oauthError).toBe("invalid_grant")
      for (const request of tokenRequests(server)) expect(request.form["resource"]).toBe(resource)
      expect(tokenRequests(server).map((r) => r.form["grant_type"])).toEqual([
        "authorization_code",
        "refresh_token",
        "refresh_token",
        "refresh_token"
      ])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("refresh without rotation keeps the presented refresh token", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer({ refreshTokenRotation: false })
      const first = yield* codeFlow(server, basic)
      const second = yield* refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: basic,
        budget
      })
      expect(Redacted.value(second.refreshToken!)).toBe(Redacted.value(first.refreshToken!))
    }).pipe(Effect.provide(layer)))

  it.scopedLive("client credentials with a scope and the resource", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const tokens = yield* clientCredentials({
        tokenEndpoint: server.tokenEndpoint,
        resource,
        scope: "read write",
        client: basic,
        budget
      })
      expect(tokens.scope).toBe("read write")
      expect(tokens.refreshToken).toBeUndefined()
      expect(server.isValidToken(Redacted.value(tokens.accessToken), { resource, scope: "read" })).toBe(true)
      const [request] = tokenRequests(server)
      expect(request!.form).toEqual({ grant_type: "client_credentials", scope: "read write", resource })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("invalid_grant on refresh is distinguishable from other OAuth errors", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const first = yield* codeFlow(server, post)
      server.script({ kind: "invalid-grant-on-refresh" })
      const error = yield* Effect.flip(refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: post,
        budget
      }))
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-grant", outcome: "not-sent" })
      server.script({ kind: "token-error", error: "invalid_scope", description: "nope" })
      const other = yield* Effect.flip(refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: post,
        budget
      }))
      expect(other).toMatchObject({ _tag: "AuthorizationFailed", reason: "token-refused", status: 400 })
      expect(isInvalidGrant(other)).toBe(false)
      expect(other.oauthError).toBe("invalid_scope")
      server.script({ kind: "token-error", error: "x_custom_secretish", description: "nope" })
      const unknown = yield* Effect.flip(refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: post,
        budget
      }))
      expect(unknown).toMatchObject({ reason: "token-refused" })
      expect(unknown.oauthError).toBeUndefined()
      for (const view of publicViews(unknown)) expect(view).not.toContain("x_custom_secretish")
      // The refresh token is still good after the scripted refusals.
      const again = yield* refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken: first.refreshToken!,
        resource,
        client: post,
        budget
      })
      expect(server.isValidToken(Redacted.value(again.accessToken), { resource })).toBe(true)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an error echoing every secret shows none of them in any public view", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const { code, codeVerifier } = yield* authorizationCode(server, basic.clientId, { redirectUri, resource })
      server.script({ kind: "echo-secrets-in-error", times: 2 })
      const codeError = yield* Effect.flip(exchangeCode({
        tokenEndpoint: server.tokenEndpoint,
        code,
        codeVerifier,
        redirectUri,
        resource,
        client: basic,
        budget
      }))
      const refreshToken = Redacted.make("rt_my-refresh-token-value")
      const refreshError = yield* Effect.flip(refresh({
        tokenEndpoint: server.tokenEndpoint,
        refreshToken,
        resource,
        client: post,
        budget
      }))
      const secrets = [
        Redacted.value(code),
        Redacted.value(codeVerifier),
        Redacted.value(refreshToken),
        "post-secret-value",
        server.requests.find((r) => r.endpoint === "token")!.headers["authorization"] as string,
        "rejected"
      ]
      for (const error of [codeError, refreshError]) {
        expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-grant", phase: "authorization" })
        expect(error.oauthError).toBe("invalid_grant")
        for (const view of publicViews(error)) {
          for (const secret of secrets) expect(view).not.toContain(secret)
        }
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a stalled token endpoint fails at the authorization deadline", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer({ faults: [{ kind: "stall", endpoint: "token" }] })
      const started = Date.now()
      const error = yield* Effect.flip(codeFlow(server, basic, { budget: { timeoutMs: 300, maxBytes: 64 * 1024 } }))
      const elapsed = Date.now() - started
      expect(error).toMatchObject({
        _tag: "DeadlineExceeded",
        stage: "connect",
        phase: "authorization",
        limits: { timeoutMs: 300, maxBytes: 64 * 1024 },
        outcome: "not-sent",
        retryable: false
      })
      expect(elapsed).toBeGreaterThanOrEqual(290)
      expect(elapsed).toBeLessThan(3_000)
      expect(server.calls("token")).toBe(1)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a token response over the ceiling: ByteCeilingExceeded with the exact bytes read", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const error = yield* Effect.flip(clientCredentials({
        tokenEndpoint: server.tokenEndpoint,
        resource,
        client: post,
        budget: { timeoutMs: 5_000, maxBytes: 40 }
      }))
      const issued = server.issuedTokens()[0]!
      const body = JSON.stringify({ access_token: issued.accessToken, token_type: "Bearer", expires_in: 3600 })
      expect(error).toMatchObject({
        _tag: "ByteCeilingExceeded",
        phase: "authorization",
        status: 200,
        observedBytes: Buffer.byteLength(body),
        outcome: "not-sent",
        retryable: false
      })
      // Exactly the ceiling is accepted.
      const exact = yield* clientCredentials({
        tokenEndpoint: server.tokenEndpoint,
        resource,
        client: post,
        budget: { timeoutMs: 5_000, maxBytes: Buffer.byteLength(body) }
      })
      expect(server.isValidToken(Redacted.value(exact.accessToken))).toBe(true)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a token response without token_type is refused", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer({ faults: [{ kind: "missing-token-type" }] })
      const error = yield* Effect.flip(codeFlow(server, post))
      expect(error).toMatchObject({
        _tag: "ProtocolViolation",
        reason: "invalid-token-response",
        phase: "authorization",
        status: 200,
        outcome: "not-sent",
        retryable: false
      })
      expect(error.cause).toEqual({
        _tag: "DocumentProblem",
        document: "token-response",
        problem: "missing-field",
        field: "token_type"
      })
      const issued = server.issuedTokens()[0]!
      for (const view of publicViews(error)) {
        expect(view).not.toContain(issued.accessToken)
        expect(view).not.toContain(issued.refreshToken!)
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a token endpoint that redirects is refused; nothing is sent to the target", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const redirector = yield* rawHttpServer((_, res) => {
        res.writeHead(307, { location: server.tokenEndpoint }).end()
      })
      const error = yield* Effect.flip(clientCredentials({
        tokenEndpoint: `${redirector.origin}/token`,
        resource,
        client: post,
        budget
      }))
      expect(error).toMatchObject({
        _tag: "ProtocolViolation",
        reason: "redirect-refused",
        status: 307,
        phase: "authorization",
        outcome: "not-sent"
      })
      expect(server.calls("token")).toBe(0)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a wrong client secret is token-refused (invalid_client, 401)", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const error = yield* Effect.flip(clientCredentials({
        tokenEndpoint: server.tokenEndpoint,
        resource,
        client: { ...basic, clientSecret: Redacted.make("wrong-secret-value") },
        budget
      }))
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "token-refused", status: 401 })
      expect(error.oauthError).toBe("invalid_client")
      for (const view of publicViews(error)) expect(view).not.toContain("wrong-secret-value")
    }).pipe(Effect.provide(layer)))
})

describe("token endpoint without I/O", () => {
  it.effect("a confidential method without a secret is an InvalidOption", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(clientCredentials({
        tokenEndpoint: "https://as.example/token",
        resource,
        client: { clientId: "c", method: "client_secret_post" },
        budget
      }))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "client.clientSecret", phase: "authorization" })
    }).pipe(Effect.provide(httpClients[0]![1])))

  it.effect("an insecure token endpoint is refused before any request", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(clientCredentials({
        tokenEndpoint: "http://as.example/token",
        resource,
        client: post,
        budget
      }))
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "insecure-url", phase: "authorization" })
    }).pipe(Effect.provide(httpClients[0]![1])))
})
