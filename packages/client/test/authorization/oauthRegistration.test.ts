/**
 * Dynamic Client Registration (internal/oauth/registration.ts) against the testkit's loopback
 * authorization server and raw loopback servers, through each HTTP client: public and
 * confidential registrations that then work at the token endpoint, the method the server
 * assigns, and hostile answers (a stall, an oversized or malformed answer, a redirect, refusals
 * echoing secrets), every failure of phase `authorization`, step `registration`, without the
 * issued secret in any public view.
 */
import { HttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { type OAuthTestServer, startOAuthServer } from "@phasebound/testkit"
import { Effect, Layer, Redacted } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { maxClientCredentialLength } from "../../src/internal/oauth/metadata.js"
import { type RegisteredClient, registerClient, type RegistrationRequest } from "../../src/internal/oauth/registration.js"
import { clientCredentials, exchangeCode } from "../../src/internal/oauth/token.js"
import type { Budget } from "../../src/PhasePolicy.js"
import { httpClients } from "../support/harness.js"
import { authorizationCode } from "../support/oauth.js"
import { publicViews } from "../support/publicViews.js"
import { rawHttpServer } from "../support/rawMcpServer.js"

const budget: Budget = { timeoutMs: 5_000, maxBytes: 64 * 1024 }
const resource = "http://127.0.0.1:9/mcp"
const redirectUri = "http://127.0.0.1:9/callback"

const oauthServer = (options: Parameters<typeof startOAuthServer>[0] = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startOAuthServer(options)),
    (server) => Effect.promise(() => server.close())
  )

/** A public client of the code flow, at `endpoint`. */
const publicRequest = (endpoint: string, overrides: Partial<RegistrationRequest> = {}): RegistrationRequest => ({
  registrationEndpoint: endpoint,
  redirectUris: [redirectUri],
  clientName: "phasebound test",
  grantTypes: ["authorization_code", "refresh_token"],
  tokenEndpointAuthMethod: "none",
  budget,
  ...overrides
})

/** A confidential client of the client credentials grant only, at `endpoint`. */
const machineRequest = (endpoint: string, overrides: Partial<RegistrationRequest> = {}): RegistrationRequest => ({
  registrationEndpoint: endpoint,
  redirectUris: [],
  clientName: "phasebound machine",
  grantTypes: ["client_credentials"],
  tokenEndpointAuthMethod: "client_secret_basic",
  budget,
  ...overrides
})

/** The registered client's code flow at `server`'s token endpoint. */
const codeFlow = (server: OAuthTestServer, client: RegisteredClient) =>
  Effect.flatMap(
    authorizationCode(server, client.clientId, { redirectUri, resource }),
    ({ code, codeVerifier }) => exchangeCode({ tokenEndpoint: server.tokenEndpoint, code, codeVerifier, redirectUri, resource, client, budget })
  )

const registrations = (server: OAuthTestServer) => server.requests.filter((request) => request.endpoint === "register")

/** What every registration failure shares. */
const registrationFailure = { phase: "authorization", stage: "connect", authorizationStep: "registration", outcome: "not-sent" }

/**
 * A raw registration endpoint whose answer each test sets (`answer`): a status, a body (an
 * object is sent as JSON, a string or bytes as they are) and a content type.
 */
const registrar = Effect.gen(function*() {
  let reply = (res: http.ServerResponse) => void res.writeHead(500).end()
  const server = yield* rawHttpServer((_, res) => reply(res))
  return {
    endpoint: `${server.origin}/register`,
    received: server.received,
    answer: (status: number, body: unknown, contentType = "application/json") => {
      const bytes = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body)
      reply = (res) => void res.writeHead(status, { "content-type": contentType }).end(bytes)
    }
  }
})

const leaked = "cs_leaked-secret-value-0123456789"

describe.each(httpClients)("registration endpoint through %s", (_, layer) => {
  it.scopedLive("a public client: the metadata sent as JSON, no secret, and the code flow works with it", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const client = yield* registerClient(publicRequest(server.registrationEndpoint, { scope: "read write" }))
      expect(client.method).toBe("none")
      expect(client.clientSecret).toBeUndefined()
      expect(client.clientSecretExpiresAt).toBeUndefined()
      const known = server.clients().find((c) => c.clientId === client.clientId)
      expect(known).toMatchObject({ tokenEndpointAuthMethod: "none", redirectUris: [redirectUri] })

      const [request] = registrations(server)
      expect(registrations(server)).toHaveLength(1)
      expect(request!.method).toBe("POST")
      expect(request!.headers["content-type"]).toBe("application/json")
      expect(request!.headers["accept"]).toBe("application/json")
      expect(request!.headers["authorization"]).toBeUndefined()
      expect(request!.json).toEqual({
        redirect_uris: [redirectUri],
        client_name: "phasebound test",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        scope: "read write"
      })

      const tokens = yield* codeFlow(server, client)
      expect(server.isValidToken(Redacted.value(tokens.accessToken), { resource })).toBe(true)
      const token = server.requests.find((r) => r.endpoint === "token")!
      expect(token.form["client_id"]).toBe(client.clientId)
      expect(token.form["client_secret"]).toBeUndefined()
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a confidential client: the secret is Redacted, never printed, and works with client_secret_basic", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const client = yield* registerClient(
        publicRequest(server.registrationEndpoint, { tokenEndpointAuthMethod: "client_secret_basic" })
      )
      const issued = server.clients().find((c) => c.clientId === client.clientId)!.clientSecret!
      expect(issued).toMatch(/^cs_/)
      expect(client.method).toBe("client_secret_basic")
      expect(Redacted.value(client.clientSecret!)).toBe(issued)
      // client_secret_expires_at 0: the secret does not expire.
      expect(client.clientSecretExpiresAt).toBeUndefined()
      expect(String(client.clientSecret)).not.toContain(issued)
      expect(JSON.stringify(client)).not.toContain(issued)

      const tokens = yield* codeFlow(server, client)
      expect(server.isValidToken(Redacted.value(tokens.accessToken), { resource })).toBe(true)
      const token = server.requests.find((r) => r.endpoint === "token")!
      expect(token.headers["authorization"]).toMatch(/^Basic /)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a client of the client credentials grant: no redirect, no response_types; its token works", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const client = yield* registerClient(
        machineRequest(server.registrationEndpoint, { tokenEndpointAuthMethod: "client_secret_post" })
      )
      expect(client.method).toBe("client_secret_post")
      expect(client.clientSecret).toBeDefined()
      expect(registrations(server)[0]!.json).toEqual({
        redirect_uris: [],
        client_name: "phasebound machine",
        grant_types: ["client_credentials"],
        token_endpoint_auth_method: "client_secret_post"
      })
      const tokens = yield* clientCredentials({
        tokenEndpoint: server.tokenEndpoint,
        resource,
        scope: "read",
        client,
        budget
      })
      expect(server.isValidToken(Redacted.value(tokens.accessToken), { resource, scope: "read" })).toBe(true)
      const token = server.requests.find((r) => r.endpoint === "token")!
      expect(token.form).toMatchObject({ client_id: client.clientId, client_secret: Redacted.value(client.clientSecret!) })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("the server's method wins; an absent one is the one requested; a secret given to `none` is ignored", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      // Another method than requested, a secret expiry, 200 rather than 201, echoed metadata.
      raw.answer(200, {
        client_id: "assigned-id",
        client_secret: leaked,
        client_secret_expires_at: 1_893_456_000,
        client_id_issued_at: 1_700_000_000,
        token_endpoint_auth_method: "client_secret_post",
        redirect_uris: [],
        grant_types: ["client_credentials"],
        x_vendor: { nested: true }
      })
      const assigned = yield* registerClient(machineRequest(raw.endpoint, { applicationType: "web" }))
      expect(assigned).toMatchObject({ clientId: "assigned-id", method: "client_secret_post", clientSecretExpiresAt: 1_893_456_000_000 })
      expect(Redacted.value(assigned.clientSecret!)).toBe(leaked)
      expect(raw.received[0]!.message).toMatchObject({ token_endpoint_auth_method: "client_secret_basic", application_type: "web" })

      raw.answer(201, { client_id: "plain-id", client_secret: leaked })
      const requested = yield* registerClient(machineRequest(raw.endpoint))
      expect(requested).toMatchObject({ clientId: "plain-id", method: "client_secret_basic" })
      expect(Redacted.value(requested.clientSecret!)).toBe(leaked)
      expect(raw.received[1]!.message).not.toHaveProperty("application_type")

      raw.answer(201, { client_id: "public-id", client_secret: leaked, client_secret_expires_at: 5, token_endpoint_auth_method: "none" })
      const downgraded = yield* registerClient(machineRequest(raw.endpoint))
      expect(downgraded).toEqual({ clientId: "public-id", method: "none" })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a stalled registration endpoint fails at the authorization deadline, not retryable", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer({ faults: [{ kind: "stall", endpoint: "register" }] })
      const started = Date.now()
      const error = yield* Effect.flip(registerClient(publicRequest(server.registrationEndpoint, {
        budget: { timeoutMs: 300, maxBytes: 64 * 1024 },
        stage: "call"
      })))
      const elapsed = Date.now() - started
      expect(error).toMatchObject({
        ...registrationFailure,
        _tag: "DeadlineExceeded",
        stage: "call",
        limits: { timeoutMs: 300, maxBytes: 64 * 1024 },
        retryable: false
      })
      expect(elapsed).toBeGreaterThanOrEqual(290)
      expect(elapsed).toBeLessThan(3_000)
      expect(server.calls("register")).toBe(1)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an answer one byte over the ceiling is ByteCeilingExceeded; exactly the ceiling is accepted", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      const body = JSON.stringify({ client_id: "sized-client", client_secret: leaked, token_endpoint_auth_method: "client_secret_basic" })
      const size = Buffer.byteLength(body)
      raw.answer(201, body)
      const error = yield* Effect.flip(registerClient(machineRequest(raw.endpoint, { budget: { timeoutMs: 5_000, maxBytes: size - 1 } })))
      expect(error).toMatchObject({
        ...registrationFailure,
        _tag: "ByteCeilingExceeded",
        status: 201,
        observedBytes: size,
        limits: { maxBytes: size - 1 },
        retryable: false
      })
      for (const view of publicViews(error)) expect(view).not.toContain(leaked)
      const exact = yield* registerClient(machineRequest(raw.endpoint, { budget: { timeoutMs: 5_000, maxBytes: size } }))
      expect(exact.clientId).toBe("sized-client")
      expect(Redacted.value(exact.clientSecret!)).toBe(leaked)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a registration endpoint that redirects is refused; nothing is sent to the target", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const redirector = yield* rawHttpServer((_, res) => {
        res.writeHead(302, { location: server.registrationEndpoint }).end()
      })
      const error = yield* Effect.flip(registerClient(publicRequest(`${redirector.origin}/register`)))
      expect(error).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "redirect-refused", status: 302 })
      expect(redirector.received).toHaveLength(1)
      expect(server.requests).toHaveLength(0)
      expect(server.clients()).toHaveLength(0)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a refused registration is AuthorizationFailed registration-refused with the known code", () =>
    Effect.gen(function*() {
      const server = yield* oauthServer()
      const error = yield* Effect.flip(registerClient(publicRequest(server.registrationEndpoint, { redirectUris: ["not a uri"] })))
      expect(error).toMatchObject({
        ...registrationFailure,
        _tag: "AuthorizationFailed",
        reason: "registration-refused",
        oauthError: "invalid_redirect_uri",
        status: 400,
        retryable: false
      })
      expect(error.message).toContain("OAuth error invalid_redirect_uri")
      expect(server.clients()).toHaveLength(0)
      // The server's description is not kept.
      for (const view of publicViews(error)) expect(view).not.toContain("absolute URIs")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an error body echoing a secret, or an unknown code, shows neither in any public view", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      raw.answer(400, {
        error: "invalid_client_metadata",
        error_description: `client_secret=${leaked} was refused`,
        error_uri: `https://as.example/errors?secret=${leaked}`
      })
      const echoed = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(echoed).toMatchObject({
        ...registrationFailure,
        _tag: "AuthorizationFailed",
        reason: "registration-refused",
        oauthError: "invalid_client_metadata",
        status: 400
      })
      raw.answer(403, { error: `x_vendor_${leaked}` })
      const unknown = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(unknown).toMatchObject({ _tag: "AuthorizationFailed", reason: "registration-refused", status: 403 })
      expect(unknown.oauthError).toBeUndefined()
      for (const error of [echoed, unknown]) {
        expect(error.cause).toBeUndefined()
        for (const view of publicViews(error)) {
          expect(view).not.toContain(leaked)
          expect(view).not.toContain("x_vendor")
        }
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("an error status without an OAuth error body is UpstreamFailure, not retryable", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      raw.answer(503, `overloaded ${leaked}`, "text/plain")
      const text = yield* Effect.flip(registerClient(publicRequest(raw.endpoint)))
      expect(text).toMatchObject({ ...registrationFailure, _tag: "UpstreamFailure", status: 503, retryable: false })
      expect(text.observedBytes).toBeUndefined()
      raw.answer(500, { message: `failed for ${leaked}` })
      const json = yield* Effect.flip(registerClient(publicRequest(raw.endpoint)))
      expect(json).toMatchObject({ ...registrationFailure, _tag: "UpstreamFailure", status: 500, retryable: false })
      expect(json.observedBytes).toBe(Buffer.byteLength(JSON.stringify({ message: `failed for ${leaked}` })))
      for (const error of [text, json]) for (const view of publicViews(error)) expect(view).not.toContain(leaked)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("answers that do not decode are invalid-registration-response, naming the field, never a value", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      const cases: ReadonlyArray<readonly [unknown, { problem: string; field?: string }]> = [
        [{ client_secret: leaked }, { problem: "missing-field", field: "client_id" }],
        [{ client_id: 42, client_secret: leaked }, { problem: "wrong-type", field: "client_id" }],
        [{ client_id: "", client_secret: leaked }, { problem: "invalid-value", field: "client_id" }],
        [{ client_id: "x".repeat(maxClientCredentialLength + 1) }, { problem: "invalid-value", field: "client_id" }],
        [{ client_id: "line\nbreak", client_secret: leaked }, { problem: "invalid-value", field: "client_id" }],
        [{ client_id: "ok", client_secret: 7 }, { problem: "wrong-type", field: "client_secret" }],
        [{ client_id: "ok", client_secret: `${leaked}\u0000` }, { problem: "invalid-value", field: "client_secret" }],
        [{ client_id: "ok", client_secret: leaked, token_endpoint_auth_method: "tls_client_auth" }, {
          problem: "invalid-value",
          field: "token_endpoint_auth_method"
        }],
        [{ client_id: "ok", client_secret: leaked, client_secret_expires_at: -1 }, { problem: "invalid-value", field: "client_secret_expires_at" }],
        [{ client_id: "ok", client_secret: leaked, client_secret_expires_at: 1.5 }, { problem: "invalid-value", field: "client_secret_expires_at" }],
        [[{ client_id: "ok" }], { problem: "not-an-object" }]
      ]
      for (const [body, problem] of cases) {
        raw.answer(201, body)
        const error = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
        expect(error).toMatchObject({
          ...registrationFailure,
          _tag: "ProtocolViolation",
          reason: "invalid-registration-response",
          status: 201,
          observedBytes: Buffer.byteLength(JSON.stringify(body)),
          retryable: false
        })
        expect(error.cause).toEqual({ _tag: "DocumentProblem", document: "registration-response", ...problem })
        for (const view of publicViews(error)) expect(view).not.toContain(leaked)
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("a method that needs a secret, answered without one, is invalid-registration-response", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      const missingSecret = { _tag: "DocumentProblem", document: "registration-response", problem: "missing-field", field: "client_secret" }
      // The server's method needs a secret it did not issue.
      raw.answer(201, { client_id: "c1", token_endpoint_auth_method: "client_secret_post" })
      const answered = yield* Effect.flip(registerClient(publicRequest(raw.endpoint)))
      expect(answered).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "invalid-registration-response" })
      expect(answered.cause).toEqual(missingSecret)
      // No method in the answer: the one requested (client_secret_basic) needs a secret too.
      raw.answer(201, { client_id: "c2", client_secret: null })
      const requested = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(requested).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-registration-response" })
      expect(requested.cause).toEqual(missingSecret)
      // Whereas `none` needs none.
      raw.answer(201, { client_id: "c3" })
      expect(yield* registerClient(publicRequest(raw.endpoint))).toEqual({ clientId: "c3", method: "none" })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("answers that are not JSON: content type, UTF-8, JSON and odd 2xx statuses are refused", () =>
    Effect.gen(function*() {
      const raw = yield* registrar
      raw.answer(201, JSON.stringify({ client_id: "c", client_secret: leaked }), "text/plain")
      const contentType = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(contentType).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "unexpected-content-type", status: 201 })

      const truncated = `{"client_id":"c","client_secret":"${leaked}"`
      raw.answer(201, truncated)
      const json = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(json).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "invalid-json", status: 201, observedBytes: truncated.length })
      expect(json.cause).toBeUndefined()

      const bytes = new Uint8Array([...Buffer.from("{\"client_id\":\""), 0xff, 0xfe, ...Buffer.from("\"}")])
      raw.answer(201, bytes)
      const utf8 = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(utf8).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "invalid-utf8", observedBytes: bytes.length })

      raw.answer(202, { client_id: "c", client_secret: leaked })
      const accepted = yield* Effect.flip(registerClient(machineRequest(raw.endpoint)))
      expect(accepted).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "invalid-registration-response", status: 202 })

      for (const error of [contentType, json, utf8, accepted]) {
        expect(error.retryable).toBe(false)
        for (const view of publicViews(error)) expect(view).not.toContain(leaked)
      }
    }).pipe(Effect.provide(layer)))

  it.scopedLive("transport failures: a refused connection is retryable, a connection closed after the request is not", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = http.createServer()
          probe.listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as AddressInfo
            probe.close(() => resolve(port))
          })
        })
      )
      const refused = yield* Effect.flip(registerClient(publicRequest(`http://127.0.0.1:${port}/register`)))
      expect(refused).toMatchObject({ ...registrationFailure, _tag: "TransportFailure", reason: "connection-failed", retryable: true })
      expect(refused.cause).toBeUndefined()

      const dropper = yield* rawHttpServer((req) => void req.socket.destroy())
      const closed = yield* Effect.flip(registerClient(publicRequest(`${dropper.origin}/register`)))
      expect(closed).toMatchObject({ ...registrationFailure, _tag: "TransportFailure", reason: "connection-closed", retryable: false })
      expect(closed.cause).toBeUndefined()
      expect(dropper.received).toHaveLength(1)
    }).pipe(Effect.provide(layer)))
})

describe("registration endpoint without I/O", () => {
  /** An HTTP client that records whether it was asked to send anything. */
  const recording = () => {
    const sent: Array<string> = []
    const layer = Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request) => {
        sent.push(request.url)
        return Effect.die(new Error("no request expected"))
      })
    )
    return { sent, layer }
  }

  it.effect("an insecure registration endpoint is refused before any request", () => {
    const client = recording()
    return Effect.gen(function*() {
      const error = yield* Effect.flip(registerClient(publicRequest("http://as.example/register")))
      expect(error).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "insecure-url", retryable: false })
      expect(client.sent).toEqual([])
    }).pipe(Effect.provide(client.layer))
  })

  it.effect("an endpoint that is not an http(s) URL, or has a fragment, is invalid-url", () => {
    const client = recording()
    return Effect.gen(function*() {
      for (const endpoint of ["ftp://as.example/register", "/register", "https://as.example/register#x", "https://user:pw@as.example/register"]) {
        const error = yield* Effect.flip(registerClient(publicRequest(endpoint)))
        expect(error).toMatchObject({ ...registrationFailure, _tag: "ProtocolViolation", reason: "invalid-url" })
        for (const view of publicViews(error)) expect(view).not.toContain("pw@")
      }
      expect(client.sent).toEqual([])
    }).pipe(Effect.provide(client.layer))
  })
})
