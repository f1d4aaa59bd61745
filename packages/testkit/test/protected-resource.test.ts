import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import {
  JWT_BEARER_ASSERTION_TYPE,
  type OAuthServerOptions,
  type OAuthTestServer,
  type ProtectedResourceOptions,
  startOAuthServer,
  startServer,
  type TestServer,
  type TestServerOptions
} from "../src/index.js"

const closers: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((server) => server.close()))
})
const startAs = async (options?: OAuthServerOptions) => {
  const server = await startOAuthServer(options)
  closers.push(server)
  return server
}
const startRs = async (auth: Omit<ProtectedResourceOptions, "oauth"> & { readonly oauth: OAuthTestServer }, options: TestServerOptions = {}) => {
  const server = await startServer({ ...options, auth })
  closers.push(server)
  return server
}

const REDIRECT = "http://127.0.0.1:9/callback"
const SVC = { clientId: "svc", clientSecret: "s3cret", tokenEndpointAuthMethod: "client_secret_post", redirectUris: [REDIRECT] } as const
const PUBLIC = { clientId: "app", redirectUris: [REDIRECT] } as const

const json = async (response: Response) => (await response.json()) as Record<string, unknown>

const tokenRequest = (oauth: OAuthTestServer, form: Record<string, string | undefined>) => {
  const body = new URLSearchParams()
  for (const [key, value] of Object.entries(form)) if (value !== undefined) body.set(key, value)
  return fetch(oauth.tokenEndpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body })
}

/** client_credentials (client_secret_post) for `resource`. */
const ccToken = async (oauth: OAuthTestServer, resource: string | undefined, scope?: string): Promise<string> => {
  const response = await tokenRequest(oauth, {
    grant_type: "client_credentials",
    client_id: SVC.clientId,
    client_secret: SVC.clientSecret,
    resource,
    scope
  })
  const body = await json(response)
  expect(response.status, JSON.stringify(body)).toBe(200)
  return body["access_token"] as string
}

/** The authorization code flow of the public client through authorizeDirect. */
const codeTokens = async (oauth: OAuthTestServer, resource: string, scope?: string) => {
  const verifier = randomBytes(32).toString("base64url")
  const url = new URL(oauth.authorizationEndpoint)
  const params: Record<string, string | undefined> = {
    response_type: "code",
    client_id: PUBLIC.clientId,
    redirect_uri: REDIRECT,
    state: "s",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource,
    scope
  }
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  const code = new URL(await oauth.authorizeDirect(url)).searchParams.get("code") ?? ""
  const response = await tokenRequest(oauth, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: PUBLIC.clientId,
    code_verifier: verifier,
    resource
  })
  expect(response.status).toBe(200)
  const body = await json(response)
  return { access: body["access_token"] as string, refresh: body["refresh_token"] as string }
}

const refreshWith = async (oauth: OAuthTestServer, refresh: string, resource: string) => {
  const response = await tokenRequest(oauth, { grant_type: "refresh_token", refresh_token: refresh, client_id: PUBLIC.clientId, resource })
  expect(response.status).toBe(200)
  const body = await json(response)
  return { access: body["access_token"] as string, refresh: body["refresh_token"] as string }
}

interface RpcOptions {
  readonly token?: string | undefined
  readonly sessionId?: string | undefined
  readonly id?: number
  readonly authorization?: string
}
const rpc = (server: TestServer, method: string, params: unknown, options: RpcOptions = {}) => {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" }
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  if (options.authorization !== undefined) headers["authorization"] = options.authorization
  if (options.sessionId !== undefined) headers["mcp-session-id"] = options.sessionId
  return fetch(server.url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: options.id ?? 1, method, params }) })
}
const initialize = (server: TestServer, options: RpcOptions = {}) =>
  rpc(server, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }, options)
const session = async (server: TestServer, token: string): Promise<string> => {
  const response = await initialize(server, { token })
  expect(response.status).toBe(200)
  await response.arrayBuffer()
  return response.headers.get("mcp-session-id") ?? ""
}

/** The parameters of a `Bearer k="v", …` challenge. */
const challengeOf = (response: Response): Record<string, string> => {
  const value = response.headers.get("www-authenticate") ?? ""
  expect(value).toMatch(/^Bearer( |$)/)
  const out: Record<string, string> = {}
  for (const match of value.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) out[match[1] ?? ""] = (match[2] ?? "").replace(/\\(.)/g, "$1")
  return out
}

describe("challenge and metadata (header mode)", () => {
  it("401 without a token announces the PRM, which names the resource and the issuer", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, requiredScopes: ["mcp"], scopesSupported: ["mcp", "admin"] })
    expect(server.resourceMetadataUrl).toBe(`http://127.0.0.1:${server.port}/auth/protected-resource-metadata`)
    expect(server.resource).toBe(server.url)

    const refused = await initialize(server)
    expect(refused.status).toBe(401)
    expect(challengeOf(refused)).toEqual({ resource_metadata: server.resourceMetadataUrl, scope: "mcp" })
    expect(await refused.text()).toContain("bearer token required")

    const prm = await fetch(server.resourceMetadataUrl ?? "")
    expect(prm.status).toBe(200)
    expect(prm.headers.get("content-type")).toBe("application/json")
    expect(await prm.json()).toEqual({
      resource: server.url,
      authorization_servers: [oauth.issuer],
      scopes_supported: ["mcp", "admin"],
      bearer_methods_supported: ["header"]
    })
    // Not at the well-known URLs: a client must follow the header.
    const origin = `http://127.0.0.1:${server.port}`
    expect((await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).status).toBe(404)
    expect((await fetch(`${origin}/.well-known/oauth-protected-resource`)).status).toBe(404)
    expect((await fetch(server.resourceMetadataUrl ?? "", { method: "POST" })).status).toBe(405)
    expect(server.resourceMetadataRequests()).toBe(2)

    // Another scheme counts as no credentials; an unknown token is invalid_token.
    const basic = await initialize(server, { authorization: "Basic c3ZjOnMzY3JldA==" })
    expect(basic.status).toBe(401)
    expect(challengeOf(basic)).not.toHaveProperty("error")
    const unknown = await initialize(server, { token: "at_forged" })
    expect(unknown.status).toBe(401)
    expect(challengeOf(unknown)).toEqual({
      error: "invalid_token",
      error_description: "unknown token",
      resource_metadata: server.resourceMetadataUrl,
      scope: "mcp"
    })

    // Refused requests are recorded as such and have no other effect.
    expect(server.unauthorizedCount()).toBe(3)
    expect(server.forbiddenCount()).toBe(0)
    expect(server.rpcCalls("initialize")).toBe(0)
    expect(server.requests.filter((r) => r.refused === 401).map((r) => r.rpcMethod)).toEqual(["initialize", "initialize", "initialize"])
    expect(server.bearerTokens()).toEqual(["at_forged"])
  })

  it("a valid token (client_credentials) runs initialize and tools/call; GET and DELETE need it too", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, requiredScopes: ["mcp"] })
    const token = await ccToken(oauth, server.url, "mcp")
    const sessionId = await session(server, token)
    expect(sessionId).not.toBe("")
    const call = await rpc(server, "tools/call", { name: "increment", arguments: {} }, { token, sessionId, id: 2 })
    expect(await call.json()).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "1" }] } })
    expect(server.counter()).toBe(1)

    const get = await fetch(server.url, { headers: { "mcp-session-id": sessionId, accept: "text/event-stream" } })
    expect(get.status).toBe(401)
    const del = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": sessionId } })
    expect(del.status).toBe(401)
    expect(server.deletes()).toBe(0)
    const authorizedDelete = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": sessionId, authorization: `Bearer ${token}` } })
    expect(authorizedDelete.status).toBe(200)
    expect(server.deletes()).toBe(1)
    expect(server.bearerTokens()).toEqual([token, token, token])
    expect(server.unauthorizedCount()).toBe(2)
  })

  it("a token for another resource, without a resource, expired or revoked is 401 invalid_token", async () => {
    const oauth = await startAs({ clients: [SVC], requireResource: false })
    const server = await startRs({ oauth })
    const other = await ccToken(oauth, "https://other.example/mcp")
    const none = await ccToken(oauth, undefined)
    for (const token of [other, none]) {
      const response = await initialize(server, { token })
      expect(response.status).toBe(401)
      expect(challengeOf(response)).toMatchObject({ error: "invalid_token", error_description: "token is for another resource" })
      expect(challengeOf(response)).not.toHaveProperty("scope") // no requiredScopes, so no scope
    }
    const good = await ccToken(oauth, server.url)
    oauth.expireAll()
    expect(challengeOf(await initialize(server, { token: good }))).toMatchObject({ error_description: "token expired" })
    const revoked = await ccToken(oauth, server.url)
    oauth.revokeAll()
    expect(challengeOf(await initialize(server, { token: revoked }))).toMatchObject({ error_description: "token revoked" })
    expect(server.rpcCalls("initialize")).toBe(0)
    expect(server.unauthorizedCount()).toBe(4)
  })

  it("insufficient scope is 403 with the needed scope; the tool does not run; step-up works", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, requiredScopes: ["mcp"], toolScopes: { increment: ["counter:write"] } })
    const none = await ccToken(oauth, server.url)
    const refusedInit = await initialize(server, { token: none })
    expect(refusedInit.status).toBe(403)
    expect(challengeOf(refusedInit)).toEqual({
      error: "insufficient_scope",
      scope: "mcp",
      resource_metadata: server.resourceMetadataUrl,
      error_description: "requires mcp"
    })

    const base = await ccToken(oauth, server.url, "mcp extra")
    const sessionId = await session(server, base)
    const add = await rpc(server, "tools/call", { name: "add", arguments: { a: 1, b: 2 } }, { token: base, sessionId })
    expect(add.status).toBe(200)
    const refused = await rpc(server, "tools/call", { name: "increment", arguments: {} }, { token: base, sessionId })
    expect(refused.status).toBe(403)
    // The token's scopes plus the missing one.
    expect(challengeOf(refused)).toMatchObject({ error: "insufficient_scope", scope: "mcp extra counter:write" })
    expect(server.counter()).toBe(0)
    expect(server.forbiddenCount()).toBe(2)
    expect(server.rpcCalls("tools/call")).toBe(1)
    expect(server.requests.filter((r) => r.refused === 403).map((r) => r.rpcMethod)).toEqual(["initialize", "tools/call"])

    const stepped = await ccToken(oauth, server.url, "mcp extra counter:write")
    const ok = await rpc(server, "tools/call", { name: "increment", arguments: {} }, { token: stepped, sessionId })
    expect(ok.status).toBe(200)
    expect(server.counter()).toBe(1)
  })

  it("challengeScope overrides or removes the 401 scope; no PRM scopes_supported by default", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const custom = await startRs({ oauth, requiredScopes: ["mcp"], challengeScope: ["a", "b"] })
    expect(challengeOf(await initialize(custom))).toEqual({ resource_metadata: custom.resourceMetadataUrl, scope: "a b" })
    expect(await json(await fetch(custom.resourceMetadataUrl ?? ""))).not.toHaveProperty("scopes_supported")
    const off = await startRs({ oauth, requiredScopes: ["mcp"], challengeScope: false })
    expect(challengeOf(await initialize(off))).toEqual({ resource_metadata: off.resourceMetadataUrl })
  })

  it("works in the stateless era too", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth }, { era: "stateless" })
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "t", version: "0" }
    }
    const increment = (token?: string) => {
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "increment"
      }
      if (token !== undefined) headers["authorization"] = `Bearer ${token}`
      const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "increment", arguments: {}, _meta: meta } }
      return fetch(server.url, { method: "POST", headers, body: JSON.stringify(body) })
    }
    expect((await increment()).status).toBe(401)
    expect(server.counter()).toBe(0)
    const ok = await increment(await ccToken(oauth, server.url))
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ result: { content: [{ type: "text", text: "1" }] } })
  })
})

describe("metadata modes", () => {
  it("path-aware: at /.well-known/oauth-protected-resource/mcp only, not announced", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, metadata: "path-aware" })
    const origin = `http://127.0.0.1:${server.port}`
    expect(server.resourceMetadataUrl).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`)
    const refused = await initialize(server)
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toBe("Bearer")
    expect(await json(await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`))).toMatchObject({ resource: server.url })
    expect((await fetch(`${origin}/.well-known/oauth-protected-resource`)).status).toBe(404)
    expect((await fetch(`${origin}/auth/protected-resource-metadata`)).status).toBe(404)
  })

  it("root: at /.well-known/oauth-protected-resource only; resource as a function (the origin) is the accepted audience", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, metadata: "root", resource: (url) => new URL(url).origin })
    const origin = `http://127.0.0.1:${server.port}`
    expect(server.resource).toBe(origin)
    expect(server.resourceMetadataUrl).toBe(`${origin}/.well-known/oauth-protected-resource`)
    expect(challengeOf(await initialize(server))).toEqual({})
    expect(await json(await fetch(`${origin}/.well-known/oauth-protected-resource`))).toMatchObject({ resource: origin })
    expect((await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).status).toBe(404)
    expect((await initialize(server, { token: await ccToken(oauth, server.url) })).status).toBe(401)
    expect((await initialize(server, { token: await ccToken(oauth, origin) })).status).toBe(200)
  })

  it("none: no PRM anywhere (nor authorization server metadata)", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, metadata: "none", requiredScopes: ["mcp"] })
    const origin = `http://127.0.0.1:${server.port}`
    expect(server.resourceMetadataUrl).toBeUndefined()
    expect(challengeOf(await initialize(server))).toEqual({ scope: "mcp" })
    for (
      const path of [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/auth/protected-resource-metadata",
        "/.well-known/oauth-authorization-server"
      ]
    ) {
      expect((await fetch(origin + path)).status).toBe(404)
    }
    expect(server.resourceMetadataRequests()).toBe(0)
  })

  it("a PRM naming another resource (the resource option), and metadataExtra", async () => {
    const oauth = await startAs({ clients: [SVC] })
    const server = await startRs({ oauth, resource: "https://attacker.example/mcp", metadataExtra: { authorization_servers: ["https://as.attacker.example"] } })
    expect(await json(await fetch(server.resourceMetadataUrl ?? ""))).toEqual({
      resource: "https://attacker.example/mcp",
      authorization_servers: ["https://as.attacker.example"],
      bearer_methods_supported: ["header"]
    })
    // The audience is what the server claims to be.
    expect((await initialize(server, { token: await ccToken(oauth, server.url) })).status).toBe(401)
  })
})

describe("hostile PRM faults", () => {
  it("oversized, wrong-resource, redirect and stall; consumed in order", async () => {
    const oauth = await startAs()
    const server = await startRs({ oauth, faults: [{ kind: "oversized-metadata", bytes: 50_000 }] })
    const prmUrl = server.resourceMetadataUrl ?? ""
    const big = await (await fetch(prmUrl)).text()
    expect(Buffer.byteLength(big)).toBe(50_000)
    expect(JSON.parse(big)).toMatchObject({ resource: server.url, authorization_servers: [oauth.issuer] })

    server.scriptAuth({ kind: "wrong-resource" })
    expect((await json(await fetch(prmUrl)))["resource"]).toBe("https://attacker.example/mcp")
    expect((await json(await fetch(prmUrl)))["resource"]).toBe(server.url)

    server.scriptAuth({ kind: "redirect-metadata", times: 2 })
    const moved = await fetch(prmUrl, { redirect: "manual" })
    expect(moved.status).toBe(302)
    expect(moved.headers.get("location")).toBe(`http://localhost:${server.port}/auth/protected-resource-metadata`)
    const custom = await startRs({ oauth, metadata: "path-aware", faults: [{ kind: "redirect-metadata", location: "http://127.0.0.1:9/elsewhere" }] })
    expect((await fetch(custom.resourceMetadataUrl ?? "", { redirect: "manual" })).headers.get("location")).toBe("http://127.0.0.1:9/elsewhere")

    server.clearFaults()
    expect((await fetch(prmUrl)).status).toBe(200)
    server.scriptAuth({ kind: "stall-metadata" })
    await expect(fetch(prmUrl, { signal: AbortSignal.timeout(200) })).rejects.toThrow()
    await server.waitFor(() => server.abortedResponses() === 1)
    expect(server.resourceMetadataRequests()).toBe(6)
  })

  it("other-authorization-servers names the given issuers; announcedMetadataUrl is what every challenge points to", async () => {
    const oauth = await startAs()
    const server = await startRs({ oauth, metadata: "root", announcedMetadataUrl: "https://169.254.169.254/latest/meta-data" })
    expect(challengeOf(await initialize(server))).toEqual({ resource_metadata: "https://169.254.169.254/latest/meta-data" })
    const prmUrl = server.resourceMetadataUrl ?? ""
    server.scriptAuth({ kind: "other-authorization-servers", servers: ["https://rogue.example", oauth.issuer], times: 2 })
    for (let i = 0; i < 2; i++) {
      expect(await json(await fetch(prmUrl))).toMatchObject({ resource: server.url, authorization_servers: ["https://rogue.example", oauth.issuer] })
    }
    expect((await json(await fetch(prmUrl)))["authorization_servers"]).toEqual([oauth.issuer])
    expect(() => server.scriptAuth({ kind: "other-authorization-servers", servers: "x" as unknown as Array<string> })).toThrow(TypeError)
  })

  it("never-ending PRM writes until the client leaves", async () => {
    const oauth = await startAs()
    const server = await startRs({ oauth, metadata: "root", faults: [{ kind: "never-ending-metadata" }] })
    const controller = new AbortController()
    const response = await fetch(server.resourceMetadataUrl ?? "", { signal: controller.signal })
    const reader = response.body!.getReader()
    let received = 0
    let head = ""
    while (received < 256 * 1024) {
      const chunk = (await reader.read()).value ?? new Uint8Array()
      if (head === "") head = Buffer.from(chunk).toString("utf8", 0, 60)
      received += chunk.length
    }
    expect(head.startsWith(`{"resource":"${server.url}","x_padding":"`)).toBe(true)
    controller.abort()
    await server.waitFor(() => server.neverEndingStopped() === 1)
    expect(server.bytesWritten()).toBeGreaterThanOrEqual(received)
  })

  it("rejects bad options and faults", async () => {
    const oauth = await startAs()
    await expect(startServer({ auth: { oauth, metadata: "bogus" as never } })).rejects.toThrow(TypeError)
    await expect(startServer({ auth: { oauth, requiredScopes: ["a b"] } })).rejects.toThrow(TypeError)
    await expect(startServer({ auth: { oauth: undefined as never } })).rejects.toThrow(TypeError)
    const server = await startRs({ oauth })
    expect(() => server.scriptAuth({ kind: "oversized-metadata", bytes: 0 })).toThrow(TypeError)
    expect(() => server.scriptAuth({ kind: "stall-metadata", times: 0 })).toThrow(TypeError)
    const plain = await startServer()
    closers.push(plain)
    expect(() => plain.scriptAuth({ kind: "stall-metadata" })).toThrow(TypeError)
    expect(plain.resourceMetadataUrl).toBeUndefined()
    expect(plain.resource).toBeUndefined()
  })
})

describe("token lifetime, expiry, refresh", () => {
  it("expireAll → 401 invalid_token; the refresh token then gets a token that works", async () => {
    const oauth = await startAs({ clients: [PUBLIC] })
    const server = await startRs({ oauth })
    const first = await codeTokens(oauth, server.url)
    const sessionId = await session(server, first.access)
    oauth.expireAll()
    const expired = await rpc(server, "tools/list", {}, { token: first.access, sessionId })
    expect(expired.status).toBe(401)
    expect(challengeOf(expired)).toMatchObject({ error: "invalid_token", error_description: "token expired" })
    const second = await refreshWith(oauth, first.refresh, server.url)
    expect((await rpc(server, "tools/list", {}, { token: second.access, sessionId })).status).toBe(200)
    expect(server.bearerTokens()).toEqual([first.access, first.access, second.access])
  })

  it("accessTokenTtlSeconds: short-lived tokens expire by themselves, on the server's clock", async () => {
    let clock = Date.now()
    const oauth = await startAs({ clients: [SVC], accessTokenTtlSeconds: 1, now: () => clock })
    const server = await startRs({ oauth })
    const response = await tokenRequest(oauth, { grant_type: "client_credentials", client_id: "svc", client_secret: "s3cret", resource: server.url })
    const body = await json(response)
    expect(body["expires_in"]).toBe(1)
    const token = body["access_token"] as string
    expect((await initialize(server, { token })).status).toBe(200)
    clock += 999
    expect((await initialize(server, { token })).status).toBe(200)
    clock += 1
    expect(challengeOf(await initialize(server, { token }))).toMatchObject({ error_description: "token expired" })
    await expect(startOAuthServer({ accessTokenTtlSeconds: 0 })).rejects.toThrow(TypeError)
  })

  it("rejected-token: the refresh succeeds but its token is refused again (a refresh loop with times: Infinity)", async () => {
    const oauth = await startAs({ clients: [PUBLIC] })
    const server = await startRs({ oauth })
    oauth.script({ kind: "rejected-token", grant: "refresh_token", times: Infinity })
    // The code grant is not affected.
    let tokens = await codeTokens(oauth, server.url)
    expect((await initialize(server, { token: tokens.access })).status).toBe(200)
    for (let i = 0; i < 3; i++) {
      tokens = await refreshWith(oauth, tokens.refresh, server.url)
      const response = await initialize(server, { token: tokens.access })
      expect(response.status).toBe(401)
      expect(challengeOf(response)).toMatchObject({ error: "invalid_token", error_description: "token rejected" })
    }
    expect(oauth.issuedTokens().map((t) => t.grant)).toEqual(["authorization_code", "refresh_token", "refresh_token", "refresh_token"])
    oauth.clearFaults()
    tokens = await refreshWith(oauth, tokens.refresh, server.url)
    expect((await initialize(server, { token: tokens.access })).status).toBe(200)
  })

  it("echo-secrets-in-error echoes the client secret, the refresh token and the client assertion", async () => {
    const oauth = await startAs({ clients: [SVC] })
    oauth.script({ kind: "echo-secrets-in-error", times: 2 })
    const first = await json(await tokenRequest(oauth, { grant_type: "refresh_token", refresh_token: "rt_secret", client_id: "svc", client_secret: "s3cret" }))
    expect(first["error"]).toBe("invalid_grant")
    expect(first["error_description"]).toContain("s3cret")
    expect(first["error_description"]).toContain("rt_secret")
    const second = await json(
      await tokenRequest(oauth, {
        grant_type: "client_credentials",
        client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
        client_assertion: "eyJ.assertion.sig"
      })
    )
    expect(second["error_description"]).toContain("eyJ.assertion.sig")
  })
})

describe("private_key_jwt", () => {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const otherRsa = generateKeyPairSync("rsa", { modulusLength: 2048 })

  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const assertion = (
    key: KeyObject,
    alg: "RS256" | "ES256",
    claims: Record<string, unknown>,
    header: Record<string, unknown> = {}
  ): string => {
    const input = `${b64({ alg, typ: "JWT", ...header })}.${b64(claims)}`
    const signature = alg === "ES256"
      ? sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" })
      : sign("sha256", Buffer.from(input), key)
    return `${input}.${signature.toString("base64url")}`
  }
  const claimsFor = (clientId: string, aud: unknown, extra: Record<string, unknown> = {}) => ({
    iss: clientId,
    sub: clientId,
    aud,
    jti: randomBytes(16).toString("base64url"),
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 60,
    ...extra
  })
  const exchange = (oauth: OAuthTestServer, jws: string, resource: string, extra: Record<string, string> = {}) =>
    tokenRequest(oauth, {
      grant_type: "client_credentials",
      client_assertion_type: JWT_BEARER_ASSERTION_TYPE,
      client_assertion: jws,
      resource,
      scope: "mcp",
      ...extra
    })

  const JWT_RSA = { clientId: "jwt-rsa", tokenEndpointAuthMethod: "private_key_jwt", publicKey: rsa.publicKey.export({ format: "jwk" }) } as const
  const JWT_EC = {
    clientId: "jwt-ec",
    tokenEndpointAuthMethod: "private_key_jwt",
    publicKey: ec.publicKey.export({ type: "spki", format: "pem" }) as string
  } as const

  it("is advertised; RS256 (JWK) and ES256 (PEM) assertions get tokens the resource server accepts", async () => {
    const oauth = await startAs({ clients: [JWT_RSA, JWT_EC, SVC] })
    const meta = await json(await fetch(oauth.metadataUrls.oauth))
    expect(meta["token_endpoint_auth_methods_supported"]).toEqual(["client_secret_basic", "client_secret_post", "none", "private_key_jwt"])
    expect(meta["token_endpoint_auth_signing_alg_values_supported"]).toEqual(["RS256", "ES256"])
    const server = await startRs({ oauth, requiredScopes: ["mcp"] })

    const viaIssuer = await exchange(oauth, assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer)), server.url, { client_id: "jwt-rsa" })
    const rsaTokens = await json(viaIssuer)
    expect(viaIssuer.status, JSON.stringify(rsaTokens)).toBe(200)
    expect(rsaTokens).toMatchObject({ token_type: "Bearer", scope: "mcp" })
    expect((await initialize(server, { token: rsaTokens["access_token"] as string })).status).toBe(200)

    // ES256, aud = the token endpoint (as an array), no client_id (taken from sub).
    const viaEndpoint = await exchange(oauth, assertion(ec.privateKey, "ES256", claimsFor("jwt-ec", [oauth.tokenEndpoint])), server.url)
    expect(viaEndpoint.status).toBe(200)
    expect(oauth.issuedTokens().map((t) => t.clientId)).toEqual(["jwt-rsa", "jwt-ec"])
  })

  it("refuses a replayed jti, a wrong aud, an expired or foreign-signed assertion, alg none and a mismatched alg", async () => {
    const oauth = await startAs({ clients: [JWT_RSA, JWT_EC, SVC] })
    const resource = "https://mcp.example.com/mcp"
    const refusal = async (jws: string, extra: Record<string, string> = {}) => {
      const response = await exchange(oauth, jws, resource, extra)
      expect(response.status).toBe(401)
      const body = await json(response)
      expect(body["error"]).toBe("invalid_client")
      return body["error_description"] as string
    }
    const once = assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer))
    expect((await exchange(oauth, once, resource)).status).toBe(200)
    expect(await refusal(once)).toContain("jti already used")
    expect(await refusal(assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", "https://attacker.example")))).toContain("aud")
    expect(await refusal(assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer, { exp: Math.floor(Date.now() / 1000) - 1 })))).toContain("exp")
    expect(await refusal(assertion(otherRsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer)))).toContain("bad signature")
    expect(await refusal(assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer, { iss: "someone" })))).toContain("iss")
    expect(await refusal(assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer, { jti: undefined })))).toContain("jti")
    const unsigned = `${b64({ alg: "none" })}.${b64(claimsFor("jwt-rsa", oauth.issuer))}.`
    expect(await refusal(unsigned)).toContain("unsupported alg")
    expect(await refusal(assertion(ec.privateKey, "ES256", claimsFor("jwt-rsa", oauth.issuer)))).toContain("does not fit")
    expect(await refusal("not-a-jws")).toContain("malformed")
    // client_id must be the assertion's subject's client; a secret client may not use an assertion.
    expect(await refusal(assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer)), { client_id: "jwt-ec" })).toContain("differs")
    expect(await refusal(assertion(rsa.privateKey, "RS256", claimsFor("svc", oauth.issuer)))).toContain("client_secret_post")
    // A private_key_jwt client may not use a secret; two methods at once are invalid_request.
    expect((await tokenRequest(oauth, { grant_type: "client_credentials", client_id: "jwt-rsa", client_secret: "x", resource })).status).toBe(401)
    const both = await exchange(oauth, assertion(rsa.privateKey, "RS256", claimsFor("jwt-rsa", oauth.issuer)), resource, { client_secret: "x" })
    expect(both.status).toBe(400)
    expect(await json(both)).toMatchObject({ error: "invalid_request" })
    expect(oauth.issuedTokens()).toHaveLength(1)
  })

  it("registration with an inline jwks; a client without a key is refused at start", async () => {
    const oauth = await startAs({ tokenEndpointAuthMethods: ["private_key_jwt", "client_secret_basic"] })
    const register = async (body: unknown) =>
      fetch(oauth.registrationEndpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const created = await register({
      token_endpoint_auth_method: "private_key_jwt",
      grant_types: ["client_credentials"],
      jwks: { keys: [ec.publicKey.export({ format: "jwk" })] }
    })
    expect(created.status).toBe(201)
    const reg = await json(created)
    expect(reg).not.toHaveProperty("client_secret")
    const clientId = reg["client_id"] as string
    expect((await exchange(oauth, assertion(ec.privateKey, "ES256", claimsFor(clientId, oauth.issuer)), "https://mcp.example.com/mcp")).status).toBe(200)
    expect(await json(await register({ token_endpoint_auth_method: "private_key_jwt" }))).toMatchObject({ error: "invalid_client_metadata" })
    await expect(startOAuthServer({ clients: [{ clientId: "k", tokenEndpointAuthMethod: "private_key_jwt" }] })).rejects.toThrow(TypeError)
  })
})
