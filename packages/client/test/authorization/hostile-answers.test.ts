/**
 * OAuth authorization against hostile authorities, end to end (real loopback servers of the
 * testkit, real HTTP through each HTTP client, `McpClient.connect`): every failure is a typed
 * error of phase `authorization` naming its step, nothing of the MCP request is sent (again),
 * nothing is sent to another origin, and no secret of the flow (client secret, authorization
 * code, PKCE verifier, access and refresh tokens, client assertion) appears in any public view of
 * an error, an observation or a span.
 */
import { describe, expect, it } from "@effect/vitest"
import type { OAuthServerOptions, OAuthTestServer, TestServer } from "@phasebound/testkit"
import { Effect, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { Authorization, McpClient, type PhasePolicy } from "../../src/index.js"
import { eventually, expectReleased, failureOf, httpClients } from "../support/harness.js"
import {
  bystanderServer,
  consentingUser,
  expectNoSecret,
  mcpRequests,
  oauthServer,
  protectedServer,
  redirectUri,
  summaryOf,
  toolCalls
} from "../support/oauth.js"
import { type Recorded, recordingTracer } from "../support/recordingTracer.js"

const ceiling = 2048
const policy: PhasePolicy.Options = { authorization: { timeout: 300, maxBytes: ceiling } }

/**
 * A connection attempt of a protected server: the first discovery request is refused, then the
 * authorization runs into whatever the test scripted. `grant` picks the identity: a user's
 * (authorization code, dynamic registration) or a service's (client credentials).
 */
const attempt = (
  options: {
    readonly oauth?: OAuthServerOptions
    readonly grant?: "authorization_code" | "client_credentials"
    readonly policy?: PhasePolicy.Options
    readonly before?: (oauth: OAuthTestServer, srv: TestServer) => void
    /** Another interactive step than a user who consents at once. */
    readonly interactive?: (oauth: OAuthTestServer) => Authorization.Interactive["authorize"]
    readonly challengeScope?: ReadonlyArray<string>
  } = {}
) =>
  Effect.gen(function*() {
    const grant = options.grant ?? "authorization_code"
    const oauth = yield* oauthServer({
      ...options.oauth,
      clients: [{ clientId: "svc", clientSecret: "svc-secret-value", grantTypes: ["client_credentials"] }]
    })
    const srv = yield* protectedServer(oauth, {
      era: "stateless",
      auth: options.challengeScope === undefined ? {} : { challengeScope: options.challengeScope }
    })
    options.before?.(oauth, srv)
    const user = consentingUser(oauth)
    const interactive = options.interactive === undefined ? user.layer : Authorization.layerInteractive(options.interactive(oauth))
    const auth: Authorization.Options = grant === "client_credentials"
      ? { grant, clientId: "svc", clientSecret: "svc-secret-value" }
      : { redirectUri }
    const started = Date.now()
    const result = yield* Effect.either(
      McpClient.connect({ url: srv.url, auth, policy: options.policy ?? policy }).pipe(Effect.provide(interactive))
    )
    return { oauth, srv, user, result, elapsedMs: Date.now() - started }
  })

/** The attempt failed, before any MCP request but the one refused: its error. */
const failedBeforeAnyCall = (outcome: Effect.Effect.Success<ReturnType<typeof attempt>>) => {
  const { result, srv } = outcome
  if (result._tag === "Right") throw new Error("the connection succeeded")
  expect(toolCalls(srv)).toHaveLength(0)
  expect(mcpRequests(srv).map((r) => r.refused)).toEqual([401])
  expect(srv.rpcCalls("tools/list")).toBe(0)
  return result.left
}

/** After the 401 that asked for it: the refused request reached the server, which did not process it. */
const metadataFailure = { phase: "authorization", stage: "discover", authorizationStep: "metadata", outcome: "not-applied" } as const

describe.each(httpClients)("hostile authorities, through %s", (_, httpClient) => {
  describe("byte ceilings of the authorization phase", () => {
    it.scopedLive("Protected Resource Metadata of exactly the ceiling is accepted", () =>
      Effect.gen(function*() {
        const { result, srv } = yield* attempt({ before: (_, srv) => srv.scriptAuth({ kind: "oversized-metadata", bytes: ceiling }) })
        expect(result._tag).toBe("Right")
        expect(srv.rpcCalls("tools/list")).toBe(1)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("Protected Resource Metadata of the ceiling + 1: ByteCeilingExceeded, the authorization server never asked", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ before: (_, srv) => srv.scriptAuth({ kind: "oversized-metadata", bytes: ceiling + 1 }) })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({
          _tag: "ByteCeilingExceeded",
          ...metadataFailure,
          observedBytes: ceiling + 1,
          limits: { timeoutMs: 300, maxBytes: ceiling },
          retryable: false
        })
        expect(outcome.oauth.requests).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("authorization server metadata: exactly the ceiling accepted, the ceiling + 1 refused", () =>
      Effect.gen(function*() {
        const exact = yield* attempt({ oauth: { faults: [{ kind: "oversized-metadata", bytes: ceiling }] } })
        expect(exact.result._tag).toBe("Right")
        const over = yield* attempt({ oauth: { faults: [{ kind: "oversized-metadata", bytes: ceiling + 1 }] } })
        const error = failedBeforeAnyCall(over)
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", ...metadataFailure, observedBytes: ceiling + 1 })
        expect(over.oauth.calls("register")).toBe(0)
        expect(over.oauth.calls("authorize")).toBe(0)
        expect(over.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("never-ending Protected Resource Metadata: ByteCeilingExceeded just past the ceiling, the server sees the client leave", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ before: (_, srv) => srv.scriptAuth({ kind: "never-ending-metadata" }) })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", ...metadataFailure, limits: { maxBytes: ceiling } })
        expect(error.observedBytes).toBeGreaterThan(ceiling)
        // Read up to the chunk that crossed the ceiling, no further.
        expect(error.observedBytes).toBeLessThanOrEqual(ceiling + 128 * 1024)
        yield* eventually(() => outcome.srv.neverEndingStopped() === 1)
        expect(outcome.oauth.requests).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("never-ending authorization server metadata: ByteCeilingExceeded, the server sees the client leave", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ oauth: { faults: [{ kind: "never-ending-metadata" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", ...metadataFailure })
        expect(error.observedBytes).toBeGreaterThan(ceiling)
        expect(error.observedBytes).toBeLessThanOrEqual(ceiling + 128 * 1024)
        yield* eventually(() => outcome.oauth.abortedResponses() === 1)
        expect(outcome.oauth.calls("register") + outcome.oauth.calls("authorize") + outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })

  describe("documents that name someone else", () => {
    it.scopedLive("a Protected Resource Metadata for another resource: resource-mismatch, no /authorize, no /token", () =>
      Effect.gen(function*() {
        const bystander = yield* bystanderServer()
        const outcome = yield* attempt({ before: (_, srv) => srv.scriptAuth({ kind: "wrong-resource", resource: bystander.url }) })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "resource-mismatch", ...metadataFailure, retryable: false })
        expect(outcome.oauth.requests).toHaveLength(0)
        expect(outcome.oauth.calls("authorize")).toBe(0)
        expect(outcome.oauth.calls("token")).toBe(0)
        expect(bystander.requests).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("authorization server metadata naming another issuer: issuer-mismatch, that issuer never contacted", () =>
      Effect.gen(function*() {
        const bystander = yield* bystanderServer()
        const outcome = yield* attempt({ oauth: { faults: [{ kind: "wrong-issuer", issuer: new URL(bystander.url).origin }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "issuer-mismatch", ...metadataFailure })
        expect(outcome.oauth.requests.map((r) => r.endpoint)).toEqual(["metadata"])
        expect(bystander.requests).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("authorization server metadata redirected to another origin: redirect-refused, the other origin got nothing", () =>
      Effect.gen(function*() {
        const bystander = yield* bystanderServer()
        const outcome = yield* attempt({
          oauth: { faults: [{ kind: "redirect-metadata", location: `${new URL(bystander.url).origin}/.well-known/oauth-authorization-server` }] }
        })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "redirect-refused", status: 302, ...metadataFailure })
        expect(bystander.requests).toHaveLength(0)
        expect(outcome.oauth.requests.map((r) => r.endpoint)).toEqual(["metadata"])
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("Protected Resource Metadata redirected to another origin (the same host by name): redirect-refused, not followed", () =>
      Effect.gen(function*() {
        // The default location is http://localhost:PORT: the same server under another origin.
        const outcome = yield* attempt({ before: (_, srv) => srv.scriptAuth({ kind: "redirect-metadata" }) })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "redirect-refused", status: 302, ...metadataFailure })
        expect(outcome.srv.resourceMetadataRequests()).toBe(1)
        expect(outcome.oauth.requests).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })

  describe("the redirect of the interactive step", () => {
    it.scopedLive("an iss that is not the issuer (RFC 9207): iss-mismatch, the code never exchanged", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ oauth: { faults: [{ kind: "iss-mismatch" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({
          _tag: "AuthorizationFailed",
          reason: "iss-mismatch",
          phase: "authorization",
          authorizationStep: "authorization",
          outcome: "not-applied"
        })
        expect(outcome.user.redirects).toHaveLength(1)
        expect(new URL(outcome.user.redirects[0]!).searchParams.get("code")).not.toBeNull()
        expect(outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("no iss although the server advertises it: iss-mismatch, no token request", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ oauth: { faults: [{ kind: "omit-iss" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "iss-mismatch", authorizationStep: "authorization" })
        expect(outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("the state dropped from the redirect: state-mismatch, no token request", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ oauth: { faults: [{ kind: "drop-state" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "state-mismatch", authorizationStep: "authorization" })
        expect(outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })

  describe("the interactive step itself", () => {
    it.scopedLive("the authorization server refuses (error on the redirect): authorization-denied with the known code, no token request", () =>
      Effect.gen(function*() {
        // The challenge asks for a scope the authorization server does not know: it redirects with invalid_scope.
        const outcome = yield* attempt({ oauth: { scopesSupported: ["mcp"] }, challengeScope: ["unheard-of"] })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({
          _tag: "AuthorizationFailed",
          reason: "authorization-denied",
          oauthError: "invalid_scope",
          phase: "authorization",
          authorizationStep: "authorization"
        })
        expect(new URL(outcome.user.redirects[0]!).searchParams.get("error")).toBe("invalid_scope")
        expect(outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("a redirect that does not come back to the redirect URI: invalid-redirect, its code never exchanged", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({
          interactive: (oauth) => (url) =>
            Effect.promise(async () => {
              const landed = new URL(await oauth.authorizeDirect(url))
              return `http://127.0.0.1:9/elsewhere${landed.search}`
            })
        })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-redirect", authorizationStep: "authorization" })
        expect(outcome.oauth.calls("authorize")).toBe(1)
        expect(outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("an interactive step that fails: interactive-step-failed, what it failed with stays in process", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ interactive: () => () => Effect.fail(new Error("browser crashed at /secret/path")) })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "interactive-step-failed", authorizationStep: "authorization" })
        expect(JSON.stringify(error) + String(error)).not.toContain("browser crashed")
        expect((error.cause as Error).message).toBe("browser crashed at /secret/path")
        expect(outcome.oauth.calls("authorize")).toBe(0)
        expect(outcome.oauth.calls("token")).toBe(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("a token response without token_type: invalid-token-response, nothing sent to the MCP server with it", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ grant: "client_credentials", oauth: { faults: [{ kind: "missing-token-type" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-token-response", phase: "authorization", authorizationStep: "token" })
        expect(outcome.srv.bearerTokens()).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })

  describe("stalls, at the authorization timeout (300 ms)", () => {
    it.scopedLive("a stalled token endpoint (client credentials): DeadlineExceeded step token; the server sees the client leave", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ grant: "client_credentials", oauth: { faults: [{ kind: "stall", endpoint: "token" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({
          _tag: "DeadlineExceeded",
          phase: "authorization",
          stage: "discover",
          authorizationStep: "token",
          limits: { timeoutMs: 300 },
          outcome: "not-applied"
        })
        expect(outcome.elapsedMs).toBeGreaterThanOrEqual(280)
        expect(outcome.elapsedMs).toBeLessThan(3_000)
        expect(outcome.oauth.calls("token")).toBe(1)
        yield* eventually(() => outcome.oauth.abortedResponses() === 1)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("a stalled registration endpoint: DeadlineExceeded step registration, no interactive step", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ oauth: { faults: [{ kind: "stall", endpoint: "register" }] } })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", phase: "authorization", authorizationStep: "registration", limits: { timeoutMs: 300 } })
        expect(outcome.elapsedMs).toBeLessThan(3_000)
        expect(outcome.user.urls).toHaveLength(0)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("stalled Protected Resource Metadata: DeadlineExceeded step metadata", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ before: (_, srv) => srv.scriptAuth({ kind: "stall-metadata" }) })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", ...metadataFailure, limits: { timeoutMs: 300 } })
        expect(outcome.elapsedMs).toBeGreaterThanOrEqual(280)
        expect(outcome.elapsedMs).toBeLessThan(3_000)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("after connecting: a 401 on a call then a stalled token endpoint: DeadlineExceeded step token, the tool never ran", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({ grant: "client_credentials" })
        if (outcome.result._tag === "Left") throw outcome.result.left
        const connection = outcome.result.right
        outcome.oauth.revokeAll()
        outcome.oauth.script({ kind: "stall", endpoint: "token" })
        const { elapsedMs, error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", phase: "authorization", stage: "call", authorizationStep: "token" })
        expect(elapsedMs).toBeLessThan(3_000)
        expect(outcome.srv.counter()).toBe(0)
        expect(toolCalls(outcome.srv).map((c) => c.refused)).toEqual([401])
        expect(summaryOf(yield* connection.observations)).toEqual([
          ["tools/call", "Unauthorized", false],
          ["authorization", "DeadlineExceeded", false]
        ])
        yield* expectReleased(connection)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("after connecting: a 401 on a call then never-ending Protected Resource Metadata: ByteCeilingExceeded step metadata, the tool never ran", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt()
        if (outcome.result._tag === "Left") throw outcome.result.left
        const connection = outcome.result.right
        outcome.oauth.revokeAll()
        outcome.srv.scriptAuth({ kind: "never-ending-metadata" })
        const { error } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", phase: "authorization", stage: "call", authorizationStep: "metadata" })
        expect(error.observedBytes).toBeGreaterThan(ceiling)
        yield* eventually(() => outcome.srv.neverEndingStopped() === 1)
        expect(outcome.srv.counter()).toBe(0)
        expect(toolCalls(outcome.srv).map((c) => c.refused)).toEqual([401])
        expect(outcome.oauth.calls("token")).toBe(1)
        yield* expectReleased(connection)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })

  describe("OAuth errors", () => {
    it.scopedLive("a token error (invalid_client, 401): AuthorizationFailed token-refused with the known code, nothing more asked", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({
          grant: "client_credentials",
          oauth: { faults: [{ kind: "token-error", error: "invalid_client", status: 401, description: "svc-secret-value is wrong" }] }
        })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({
          _tag: "AuthorizationFailed",
          reason: "token-refused",
          oauthError: "invalid_client",
          status: 401,
          authorizationStep: "token",
          phase: "authorization"
        })
        expectNoSecret(error, ["svc-secret-value"])
        expect(outcome.oauth.calls("token")).toBe(1)
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

    it.scopedLive("a token error of an unknown code is not repeated", () =>
      Effect.gen(function*() {
        const outcome = yield* attempt({
          grant: "client_credentials",
          oauth: { faults: [{ kind: "token-error", error: "made_up_by_the_server" }] }
        })
        const error = failedBeforeAnyCall(outcome)
        expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "token-refused", status: 400 })
        expect(error.oauthError).toBeUndefined()
        expect(JSON.stringify(error)).not.toContain("made_up")
      }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
  })
})

// ---- canaries ----------------------------------------------------------------------------------

const canarySecret = "CANARY-CLIENT-SECRET-0b7e41d2"
const canaryClient = {
  clientId: "canary-app",
  clientSecret: canarySecret,
  tokenEndpointAuthMethod: "client_secret_basic",
  redirectUris: [redirectUri]
} as const
const canaryAuth: Authorization.Options = { redirectUri, clientId: "canary-app", clientSecret: Redacted.make(canarySecret) }
const basicOf = (id: string, secret: string) => Buffer.from(`${id}:${secret}`).toString("base64")

/** Every span attribute value, as text. */
const spanText = (spans: ReadonlyArray<Recorded>) => spans.map((span) => `${span.name} ${JSON.stringify(Object.fromEntries(span.attributes))}`).join("\n")

/** The secrets of a code flow, as the authorization server received them (so they surely flowed). */
const codeFlowSecrets = (oauth: OAuthTestServer) => {
  const exchange = oauth.requests.find((r) => r.endpoint === "token" && r.form["grant_type"] === "authorization_code")!
  return [exchange.form["code"]!, exchange.form["code_verifier"]!]
}

describe.each(httpClients)("canaries: no secret of the flow in any error, observation or span, through %s", (_, httpClient) => {
  it.scopedLive("the code exchange answered with an error echoing the code, the verifier and the client's Basic credentials", () => {
    const spans: Array<Recorded> = []
    return Effect.gen(function*() {
      const oauth = yield* oauthServer({ clients: [canaryClient], faults: [{ kind: "echo-secrets-in-error" }] })
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const user = consentingUser(oauth)
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: canaryAuth }).pipe(Effect.provide(user.layer)))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        reason: "invalid-grant",
        oauthError: "invalid_grant",
        status: 400,
        phase: "authorization",
        authorizationStep: "token"
      })
      const [code, verifier] = codeFlowSecrets(oauth)
      expect(code).toBe(new URL(user.redirects[0]!).searchParams.get("code"))
      const secrets = [canarySecret, code!, verifier!, basicOf("canary-app", canarySecret)]
      expectNoSecret(error, secrets)
      expect(spans.some((s) => s.name === "mcp.connect")).toBe(true)
      for (const secret of secrets) expect(spanText(spans)).not.toContain(secret)
      expect(toolCalls(srv)).toHaveLength(0)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults), Effect.withTracer(recordingTracer(spans)))
  })

  it.scopedLive("after tokens flowed: a refresh answered with an echo, a JSON-RPC error and a 500 echoing the tokens", () => {
    const spans: Array<Recorded> = []
    return Effect.gen(function*() {
      const oauth = yield* oauthServer({ clients: [canaryClient] })
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const user = consentingUser(oauth)
      const connection = yield* McpClient.connect({ url: srv.url, auth: canaryAuth }).pipe(Effect.provide(user.layer))
      const [code, verifier] = codeFlowSecrets(oauth)
      const first = oauth.issuedTokens()[0]!
      const secrets = [canarySecret, code!, verifier!, basicOf("canary-app", canarySecret), first.accessToken, first.refreshToken!]
      const errors: Array<unknown> = []

      // The MCP server echoes the bearer token it received (and, had it learnt them, the refresh
      // token and the client secret) in a JSON-RPC error: redacted from remoteMessage. (The code
      // and the verifier only ever go to the authorization server, whose error texts are dropped.)
      srv.script({
        on: "tools/call",
        kind: "jsonrpc-error",
        code: -32000,
        message: `denied: Bearer ${first.accessToken} (refresh ${first.refreshToken}, client ${canarySecret})`,
        data: { token: first.accessToken }
      })
      const refusal = yield* failureOf(connection.callTool("increment"))
      expect(refusal.error).toMatchObject({ _tag: "RemoteRefusal", code: -32000 })
      expect(refusal.error.remoteMessage).toContain("[redacted]")
      errors.push(refusal.error)

      // A 500 whose body is the token.
      srv.script({ on: "tools/call", kind: "status", status: 500, body: `${first.accessToken} ${first.refreshToken}` })
      const upstream = yield* failureOf(connection.callTool("increment"))
      expect(upstream.error).toMatchObject({ _tag: "UpstreamFailure", status: 500 })
      errors.push(upstream.error)

      // The refresh answered with an error echoing the refresh token and the Basic credentials.
      oauth.script({ kind: "echo-secrets-in-error" })
      oauth.expireAll()
      const refresh = yield* failureOf(connection.callTool("increment"))
      expect(refresh.error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-grant", authorizationStep: "refresh" })
      const echoed = oauth.requests.filter((r) => r.endpoint === "token").at(-1)!
      expect(echoed.form["refresh_token"]).toBe(first.refreshToken)
      errors.push(refresh.error)

      for (const error of errors) expectNoSecret(error, secrets)
      expectNoSecret(yield* connection.observations, secrets)
      expectNoSecret(connection.discovery, secrets)
      expect(spans.filter((s) => s.name === "mcp.tools.call").length).toBeGreaterThanOrEqual(3)
      for (const secret of secrets) expect(spanText(spans)).not.toContain(secret)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults), Effect.withTracer(recordingTracer(spans)))
  })

  it.scopedLive("a client assertion (private_key_jwt) echoed by the token endpoint appears nowhere, nor the key", () => {
    const spans: Array<Recorded> = []
    return Effect.gen(function*() {
      const keys = generateKeyPairSync("ec", { namedCurve: "P-256" })
      const pem = keys.privateKey.export({ type: "pkcs8", format: "pem" }) as string
      const oauth = yield* oauthServer({
        clients: [{
          clientId: "signer",
          tokenEndpointAuthMethod: "private_key_jwt",
          publicKey: keys.publicKey.export({ type: "spki", format: "pem" }) as string,
          grantTypes: ["client_credentials"]
        }],
        faults: [{ kind: "echo-secrets-in-error" }]
      })
      const srv = yield* protectedServer(oauth, { era: "stateless" })
      const { error } = yield* failureOf(
        McpClient.connect({
          url: srv.url,
          auth: { grant: "client_credentials", clientId: "signer", privateKey: pem, privateKeyAlgorithm: "ES256" }
        })
      )
      expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-grant", authorizationStep: "token" })
      const assertion = oauth.requests.find((r) => r.endpoint === "token")!.form["client_assertion"]!
      const [, claims, signature] = assertion.split(".")
      const keyBody = pem.split("\n").filter((line) => line !== "" && !line.startsWith("-----")).join("")
      const secrets = [assertion, claims!, signature!, keyBody, keyBody.slice(0, 40)]
      expectNoSecret(error, secrets)
      for (const secret of secrets) expect(spanText(spans)).not.toContain(secret)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults), Effect.withTracer(recordingTracer(spans)))
  })
})
