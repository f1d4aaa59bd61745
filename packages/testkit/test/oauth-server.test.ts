import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { startOAuthServer, type OAuthServerOptions, type OAuthTestServer } from "../src/OAuthServer.js"

const servers: Array<OAuthTestServer> = []
const start = async (options?: OAuthServerOptions) => {
  const server = await startOAuthServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const RESOURCE = "https://mcp.example.com/mcp"
const REDIRECT = "http://127.0.0.1:9/callback"

const pkce = () => {
  const verifier = randomBytes(32).toString("base64url")
  const challenge = createHash("sha256").update(verifier).digest("base64url")
  return { verifier, challenge }
}

const authorizeUrl = (server: OAuthTestServer, params: Record<string, string | undefined>): URL => {
  const url = new URL(server.authorizationEndpoint)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url
}

const tokenRequest = (
  server: OAuthTestServer,
  form: Record<string, string | undefined>,
  basic?: { readonly id: string; readonly secret: string }
) => {
  const body = new URLSearchParams()
  for (const [key, value] of Object.entries(form)) if (value !== undefined) body.set(key, value)
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" }
  if (basic !== undefined) {
    const enc = (s: string) => encodeURIComponent(s)
    headers["authorization"] = `Basic ${Buffer.from(`${enc(basic.id)}:${enc(basic.secret)}`).toString("base64")}`
  }
  return fetch(server.tokenEndpoint, { method: "POST", headers, body })
}

const json = async (response: Response) => (await response.json()) as Record<string, unknown>

const PUBLIC = { clientId: "public-app", redirectUris: [REDIRECT] } as const
const CONFIDENTIAL = { clientId: "svc", clientSecret: "s3cret", redirectUris: [REDIRECT] } as const
const POSTER = { clientId: "poster", clientSecret: "p0st", tokenEndpointAuthMethod: "client_secret_post", redirectUris: [REDIRECT] } as const

/** /authorize through to the code, for a public client. */
const codeFor = async (server: OAuthTestServer, extra: Record<string, string | undefined> = {}) => {
  const { verifier, challenge } = pkce()
  const location = new URL(
    await server.authorizeDirect(
      authorizeUrl(server, {
        response_type: "code",
        client_id: PUBLIC.clientId,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: "st-1",
        resource: RESOURCE,
        scope: "mcp:read",
        ...extra
      })
    )
  )
  return { verifier, location, code: location.searchParams.get("code") ?? "" }
}

describe("metadata", () => {
  it("serves each well-known variant with path insertion / appending, others 404", async () => {
    const server = await start({
      issuerPath: "/tenant1",
      serve: ["oauth", "oidc-insert", "oidc-append"],
      scopesSupported: ["mcp:read", "mcp:write"],
      clientIdMetadataDocumentSupported: true
    })
    expect(server.issuer).toBe(`${server.origin}/tenant1`)
    expect(server.metadataUrls).toEqual({
      oauth: `${server.origin}/.well-known/oauth-authorization-server/tenant1`,
      "oidc-insert": `${server.origin}/.well-known/openid-configuration/tenant1`,
      "oidc-append": `${server.origin}/tenant1/.well-known/openid-configuration`
    })
    for (const url of Object.values(server.metadataUrls)) {
      const response = await fetch(url)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("application/json")
      const doc = await json(response)
      expect(doc).toMatchObject({
        issuer: server.issuer,
        authorization_endpoint: server.authorizationEndpoint,
        token_endpoint: server.tokenEndpoint,
        registration_endpoint: server.registrationEndpoint,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
        scopes_supported: ["mcp:read", "mcp:write"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true
      })
    }
    expect(server.requests.map((r) => r.variant)).toEqual(["oauth", "oidc-insert", "oidc-append"])
    expect(server.calls("metadata")).toBe(3)
    // The path-less forms are not this issuer's.
    expect((await fetch(`${server.origin}/.well-known/oauth-authorization-server`)).status).toBe(404)
    expect(server.calls("other")).toBe(1)
  })

  it("serves only the chosen variants; options omit S256, registration and scopes", async () => {
    const server = await start({ serve: ["oidc-append"], codeChallengeMethodsSupported: null, registration: false })
    expect((await fetch(server.metadataUrls.oauth)).status).toBe(404)
    const doc = await json(await fetch(server.metadataUrls["oidc-append"]))
    expect(doc["issuer"]).toBe(server.origin)
    expect(doc).not.toHaveProperty("code_challenge_methods_supported")
    expect(doc).not.toHaveProperty("registration_endpoint")
    expect(doc).not.toHaveProperty("scopes_supported")
    expect(doc).not.toHaveProperty("client_id_metadata_document_supported")
    expect((await fetch(server.registrationEndpoint, { method: "POST", body: "{}" })).status).toBe(404)
  })
})

describe("authorization code with PKCE", () => {
  it("runs the full flow, then refresh with rotation, and the resource server check", async () => {
    const server = await start({ issuerPath: "/t", clients: [PUBLIC], scopesSupported: ["mcp:read", "mcp:write"] })
    const { verifier, location, code } = await codeFor(server)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get("state")).toBe("st-1")
    expect(location.searchParams.get("iss")).toBe(server.issuer)
    expect(code).toMatch(/^code_/)

    const wrong = await tokenRequest(server, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: PUBLIC.clientId,
      code_verifier: pkce().verifier,
      resource: RESOURCE
    })
    expect(wrong.status).toBe(400)
    expect(await json(wrong)).toMatchObject({ error: "invalid_grant" })

    const otherResource = await tokenRequest(server, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: PUBLIC.clientId,
      code_verifier: verifier,
      resource: "https://other.example/mcp"
    })
    expect(await json(otherResource)).toMatchObject({ error: "invalid_target" })

    const ok = await tokenRequest(server, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: PUBLIC.clientId,
      code_verifier: verifier,
      resource: RESOURCE
    })
    expect(ok.status).toBe(200)
    expect(ok.headers.get("cache-control")).toBe("no-store")
    const tokens = await json(ok)
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "mcp:read" })
    const access = tokens["access_token"] as string
    const refresh = tokens["refresh_token"] as string
    expect(server.isValidToken(access, { resource: RESOURCE, scope: "mcp:read" })).toBe(true)
    expect(server.isValidToken(access, { resource: "https://other.example/mcp" })).toBe(false)
    const step = server.checkToken(access, { scope: "mcp:write", resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource" })
    expect(step).toMatchObject({ ok: false, status: 403, error: "insufficient_scope" })
    if (!step.ok) expect(step.wwwAuthenticate).toContain("scope=\"mcp:read mcp:write\"")

    // The code is single-use.
    const again = await tokenRequest(server, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: PUBLIC.clientId,
      code_verifier: verifier,
      resource: RESOURCE
    })
    expect(await json(again)).toMatchObject({ error: "invalid_grant" })

    server.expireAll()
    expect(server.checkToken(access)).toMatchObject({ ok: false, status: 401, error: "invalid_token" })
    const refreshed = await json(
      await tokenRequest(server, {
        grant_type: "refresh_token",
        refresh_token: refresh,
        client_id: PUBLIC.clientId,
        resource: RESOURCE
      })
    )
    expect(refreshed).toMatchObject({ token_type: "Bearer", scope: "mcp:read" })
    expect(refreshed["refresh_token"]).not.toBe(refresh)
    expect(server.isValidToken(refreshed["access_token"] as string, { resource: RESOURCE })).toBe(true)
    const reused = await tokenRequest(server, {
      grant_type: "refresh_token",
      refresh_token: refresh,
      client_id: PUBLIC.clientId,
      resource: RESOURCE
    })
    expect(reused.status).toBe(400)
    expect(await json(reused)).toMatchObject({ error: "invalid_grant" })

    server.revokeAll()
    expect(server.isValidToken(refreshed["access_token"] as string)).toBe(false)
    expect(
      await json(
        await tokenRequest(server, {
          grant_type: "refresh_token",
          refresh_token: refreshed["refresh_token"] as string,
          client_id: PUBLIC.clientId,
          resource: RESOURCE
        })
      )
    ).toMatchObject({ error: "invalid_grant" })

    expect(server.issuedTokens().map((t) => t.grant)).toEqual(["authorization_code", "refresh_token"])
    expect(server.calls("authorize")).toBe(1)
    expect(server.calls("token")).toBe(7)
    const first = server.requests.find((r) => r.endpoint === "token")
    expect(first?.form).toMatchObject({ grant_type: "authorization_code", client_id: PUBLIC.clientId, resource: RESOURCE })
  })

  it("without rotation, the refresh token stays the same", async () => {
    const server = await start({ clients: [PUBLIC], refreshTokenRotation: false })
    const { verifier, code } = await codeFor(server)
    const first = await json(
      await tokenRequest(server, {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        client_id: PUBLIC.clientId,
        code_verifier: verifier,
        resource: RESOURCE
      })
    )
    const second = await json(
      await tokenRequest(server, {
        grant_type: "refresh_token",
        refresh_token: first["refresh_token"] as string,
        client_id: PUBLIC.clientId,
        resource: RESOURCE
      })
    )
    expect(second["refresh_token"]).toBe(first["refresh_token"])
    expect(second["access_token"]).not.toBe(first["access_token"])
  })

  it("/authorize refuses bad requests: 400 for client and redirect_uri, error redirects otherwise", async () => {
    const server = await start({ clients: [PUBLIC], requireState: true })
    const { challenge } = pkce()
    const base = {
      response_type: "code",
      client_id: PUBLIC.clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "x",
      resource: RESOURCE
    }
    const raw = (params: Record<string, string | undefined>) => fetch(authorizeUrl(server, params), { redirect: "manual" })
    expect((await raw({ ...base, client_id: "nobody" })).status).toBe(400)
    expect((await raw({ ...base, redirect_uri: "http://127.0.0.1:9/elsewhere" })).status).toBe(400)
    const errorOf = async (params: Record<string, string | undefined>) =>
      new URL(await server.authorizeDirect(authorizeUrl(server, params))).searchParams.get("error")
    expect(await errorOf({ ...base, response_type: "token" })).toBe("unsupported_response_type")
    expect(await errorOf({ ...base, code_challenge: undefined })).toBe("invalid_request")
    expect(await errorOf({ ...base, code_challenge_method: "plain" })).toBe("invalid_request")
    expect(await errorOf({ ...base, state: undefined })).toBe("invalid_request")
    expect(await errorOf({ ...base, resource: undefined })).toBe("invalid_target")
    expect(await errorOf({ ...base, resource: "https://x.example/#frag" })).toBe("invalid_target")
    expect(await errorOf(base)).toBeNull()
  })
})

describe("client authentication and other grants", () => {
  it("client credentials with client_secret_basic; the wrong method or secret is 401 invalid_client", async () => {
    const server = await start({ clients: [CONFIDENTIAL, POSTER] })
    const ok = await tokenRequest(server, { grant_type: "client_credentials", resource: RESOURCE, scope: "jobs" }, { id: "svc", secret: "s3cret" })
    const tokens = await json(ok)
    expect(tokens).toMatchObject({ token_type: "Bearer", scope: "jobs", expires_in: 3600 })
    expect(tokens).not.toHaveProperty("refresh_token")
    expect(server.isValidToken(tokens["access_token"] as string, { resource: RESOURCE, scope: "jobs" })).toBe(true)

    const badSecret = await tokenRequest(server, { grant_type: "client_credentials", resource: RESOURCE }, { id: "svc", secret: "nope" })
    expect(badSecret.status).toBe(401)
    expect(badSecret.headers.get("www-authenticate")).toContain("Basic")
    expect(await json(badSecret)).toMatchObject({ error: "invalid_client" })
    const wrongMethod = await tokenRequest(server, { grant_type: "client_credentials", resource: RESOURCE, client_id: "svc", client_secret: "s3cret" })
    expect(wrongMethod.status).toBe(401)

    const post = await tokenRequest(server, { grant_type: "client_credentials", resource: RESOURCE, client_id: "poster", client_secret: "p0st" })
    expect(post.status).toBe(200)
    const unsupported = await tokenRequest(server, { grant_type: "password", client_id: "poster", client_secret: "p0st" })
    expect(await json(unsupported)).toMatchObject({ error: "unsupported_grant_type" })
    const notForm = await fetch(server.tokenEndpoint, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(await json(notForm)).toMatchObject({ error: "invalid_request" })
  })

  it("dynamic client registration: confidential gets a secret, public none; the client then works", async () => {
    const server = await start()
    const register = (body: unknown) =>
      fetch(server.registrationEndpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const confidential = await register({
      client_name: "c",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token", "client_credentials"]
    })
    expect(confidential.status).toBe(201)
    const reg = await json(confidential)
    expect(reg).toMatchObject({ client_name: "c", token_endpoint_auth_method: "client_secret_basic", redirect_uris: [REDIRECT] })
    expect(typeof reg["client_id"]).toBe("string")
    expect(typeof reg["client_secret"]).toBe("string")
    const cc = await tokenRequest(server, { grant_type: "client_credentials", resource: RESOURCE }, {
      id: reg["client_id"] as string,
      secret: reg["client_secret"] as string
    })
    expect(cc.status).toBe(200)

    const pub = await json(await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }))
    expect(pub).not.toHaveProperty("client_secret")
    const { challenge } = pkce()
    const location = await server.authorizeDirect(authorizeUrl(server, {
      response_type: "code",
      client_id: pub["client_id"] as string,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: RESOURCE
    }))
    expect(new URL(location).searchParams.get("code")).toMatch(/^code_/)

    expect(await json(await register({ redirect_uris: ["not a url"] }))).toMatchObject({ error: "invalid_redirect_uri" })
    expect(server.calls("register")).toBe(3)
    expect(server.requests.find((r) => r.endpoint === "register")?.json).toMatchObject({ client_name: "c" })
  })

  it("client ID metadata documents: the URL client_id is fetched and its redirect_uris used", async () => {
    const doc = createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ client_id: `http://127.0.0.1:${(doc.address() as AddressInfo).port}${req.url}`, redirect_uris: [REDIRECT] }))
    })
    await new Promise<void>((resolve) => doc.listen(0, "127.0.0.1", resolve))
    try {
      const server = await start({ clientIdMetadataDocumentSupported: true })
      const clientId = `http://127.0.0.1:${(doc.address() as AddressInfo).port}/client.json`
      const { verifier, challenge } = pkce()
      const location = new URL(
        await server.authorizeDirect(authorizeUrl(server, {
          response_type: "code",
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_challenge: challenge,
          code_challenge_method: "S256",
          resource: RESOURCE
        }))
      )
      const tokens = await tokenRequest(server, {
        grant_type: "authorization_code",
        code: location.searchParams.get("code") ?? "",
        redirect_uri: REDIRECT,
        client_id: clientId,
        code_verifier: verifier,
        resource: RESOURCE
      })
      expect(tokens.status).toBe(200)
    } finally {
      doc.closeAllConnections()
      await new Promise<void>((resolve) => doc.close(() => resolve()))
    }
  })
})

describe("hostile faults", () => {
  it("wrong-issuer, oversized-metadata, redirect-metadata", async () => {
    const server = await start({ issuerPath: "/t", faults: [{ kind: "wrong-issuer" }] })
    expect((await json(await fetch(server.metadataUrls.oauth)))["issuer"]).toBe("https://attacker.example")
    expect((await json(await fetch(server.metadataUrls.oauth)))["issuer"]).toBe(server.issuer) // consumed

    server.script({ kind: "oversized-metadata", bytes: 100_000 })
    const big = await fetch(server.metadataUrls.oauth)
    const text = await big.text()
    expect(Buffer.byteLength(text)).toBe(100_000)
    expect(JSON.parse(text)).toMatchObject({ issuer: server.issuer })

    server.script({ kind: "redirect-metadata" })
    const moved = await fetch(server.metadataUrls.oauth, { redirect: "manual" })
    expect(moved.status).toBe(302)
    const location = moved.headers.get("location") ?? ""
    expect(new URL(location).origin).not.toBe(server.origin)
    expect(location).toBe(`http://localhost:${server.port}/.well-known/oauth-authorization-server/t`)
  })

  it("stalled metadata and token endpoints never answer; the client's abort is counted", async () => {
    const server = await start({ clients: [CONFIDENTIAL], faults: [{ kind: "stall", endpoint: "metadata" }, { kind: "stall", endpoint: "token" }] })
    await expect(fetch(server.metadataUrls.oauth, { signal: AbortSignal.timeout(200) })).rejects.toThrow()
    await expect(
      fetch(server.tokenEndpoint, { method: "POST", body: "grant_type=client_credentials", signal: AbortSignal.timeout(200) })
    ).rejects.toThrow()
    await server.waitFor(() => server.abortedResponses() === 2)
    expect(server.calls("metadata")).toBe(1)
    expect(server.calls("token")).toBe(1)
  })

  it("never-ending metadata writes until the client leaves", async () => {
    const server = await start({ faults: [{ kind: "never-ending-metadata" }] })
    const controller = new AbortController()
    const response = await fetch(server.metadataUrls.oauth, { signal: controller.signal })
    const reader = response.body!.getReader()
    let received = 0
    while (received < 256 * 1024) received += (await reader.read()).value?.length ?? 0
    controller.abort()
    await server.waitFor(() => server.abortedResponses() === 1)
    expect(server.bytesWritten()).toBeGreaterThanOrEqual(received)
  })

  it("iss-mismatch, omit-iss and drop-state on the redirect", async () => {
    const server = await start({ clients: [PUBLIC] })
    server.script({ kind: "iss-mismatch" })
    expect((await codeFor(server)).location.searchParams.get("iss")).toBe("https://attacker.example")
    server.script({ kind: "omit-iss" })
    expect((await codeFor(server)).location.searchParams.has("iss")).toBe(false)
    server.script({ kind: "drop-state" })
    const dropped = (await codeFor(server)).location
    expect(dropped.searchParams.has("state")).toBe(false)
    expect(dropped.searchParams.get("iss")).toBe(server.issuer)
  })

  it("missing-token-type, invalid-grant-on-refresh, narrow-scope (insufficient_scope), echo-secrets-in-error", async () => {
    const server = await start({ clients: [PUBLIC] })
    const exchange = async () => {
      const { verifier, code } = await codeFor(server)
      return tokenRequest(server, {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        client_id: PUBLIC.clientId,
        code_verifier: verifier,
        resource: RESOURCE
      })
    }
    server.script({ kind: "missing-token-type" })
    const untyped = await json(await exchange())
    expect(untyped).not.toHaveProperty("token_type")
    expect(typeof untyped["access_token"]).toBe("string")

    // Skipped by the code grant, applied to the next refresh.
    server.script({ kind: "invalid-grant-on-refresh" })
    const tokens = await json(await exchange())
    const refresh = await tokenRequest(server, {
      grant_type: "refresh_token",
      refresh_token: tokens["refresh_token"] as string,
      client_id: PUBLIC.clientId,
      resource: RESOURCE
    })
    expect(refresh.status).toBe(400)
    expect(await json(refresh)).toMatchObject({ error: "invalid_grant" })

    server.script({ kind: "narrow-scope", scope: "mcp:none" })
    const narrow = await json(await exchange())
    expect(narrow["scope"]).toBe("mcp:none")
    const check = server.checkToken(narrow["access_token"] as string, { scope: "mcp:read" })
    expect(check).toMatchObject({ ok: false, status: 403, error: "insufficient_scope" })
    if (!check.ok) expect(check.wwwAuthenticate).toMatch(/^Bearer error="insufficient_scope"/)

    server.script({ kind: "echo-secrets-in-error" })
    const { verifier, code } = await codeFor(server)
    const echoed = await tokenRequest(server, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: PUBLIC.clientId,
      code_verifier: verifier,
      resource: RESOURCE
    })
    const body = await json(echoed)
    expect(body["error"]).toBe("invalid_grant")
    expect(body["error_description"]).toContain(verifier)
    expect(body["error_description"]).toContain(code)

    server.script({ kind: "token-error", error: "temporarily_unavailable", status: 503, times: 2 })
    expect((await exchange()).status).toBe(503)
    expect((await exchange()).status).toBe(503)
    expect((await exchange()).status).toBe(200)
  })

  it("rejects invalid faults", async () => {
    const server = await start()
    expect(() => server.script({ kind: "oversized-metadata", bytes: -1 })).toThrow(TypeError)
    expect(() => server.script({ kind: "drop-state", times: 0 })).toThrow(TypeError)
  })
})
