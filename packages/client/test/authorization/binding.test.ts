/**
 * Credentials bound to their authorization server, transport security, the authorities a
 * connection may contact, and the scope ceiling of a service (docs/AUTHORIZATION.md, "Credentials bound to their authorization server"),
 * end to end: real loopback servers of the testkit (an MCP server protected by its own
 * authorization server, and a second authorization server, the rogue, that the hostile
 * resource names and that counts what it receives). Addresses off loopback are only ever named,
 * never contacted: the HTTP client of those tests records every URL and sends only loopback
 * ones (`support/loopbackOnlyHttpClient.ts`).
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import type { OAuthTestServer, ProtectedResourceOptions, TestServer } from "@phasebound/testkit"
import { Effect, Layer, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Authorization, McpClient, McpServers } from "../../src/index.js"
import { connect as connectPromise } from "../../src/promise.js"
import { failureOf, httpClients } from "../support/harness.js"
import { loopbackOnly } from "../support/loopbackOnlyHttpClient.js"
import {
  consentingUser,
  everythingReceivedBy,
  oauthServer,
  protectedServer,
  redirectUri,
  textOf,
  tokenRequests,
  toolCalls
} from "../support/oauth.js"

const clientSecret = "s3cret-bound-to-its-own-issuer"
const es256 = generateKeyPairSync("ec", { namedCurve: "P-256" })
const es256Pem = es256.privateKey.export({ type: "pkcs8", format: "pem" }) as string
const es256PublicPem = es256.publicKey.export({ type: "spki", format: "pem" }) as string

/** Both authorization servers know both clients: only the binding keeps the credentials home. */
const clients = [
  { clientId: "svc", clientSecret, grantTypes: ["client_credentials" as const] },
  { clientId: "signer", tokenEndpointAuthMethod: "private_key_jwt" as const, publicKey: es256PublicPem, grantTypes: ["client_credentials" as const] }
]

const identities = [
  ["a client secret", { grant: "client_credentials", clientId: "svc", clientSecret: Redacted.make(clientSecret) }],
  ["a private key (private_key_jwt)", { grant: "client_credentials", clientId: "signer", privateKey: Redacted.make(es256Pem), privateKeyAlgorithm: "ES256" }]
] as const satisfies ReadonlyArray<readonly [string, Authorization.Options]>

/** Nothing at all reached the rogue: no metadata request, no token request, no secret. */
const expectUntouched = (rogue: OAuthTestServer) => {
  expect(rogue.requests).toHaveLength(0)
  expect(rogue.issuedTokens()).toHaveLength(0)
}

/** The two authorization servers and the MCP server protected by `home`. */
const setting = (auth: Omit<ProtectedResourceOptions, "oauth"> = {}) =>
  Effect.gen(function*() {
    const home = yield* oauthServer({ clients })
    const rogue = yield* oauthServer({ clients })
    const srv = yield* protectedServer(home, { era: "stateless", auth })
    return { home, rogue, srv }
  })

const bindingFailure = { _tag: "AuthorizationFailed", reason: "issuer-mismatch", phase: "authorization", authorizationStep: "metadata" }

/** The resource names only the rogue from now on. */
const renameTo = (srv: TestServer, rogue: OAuthTestServer) => srv.scriptAuth({ kind: "other-authorization-servers", servers: [rogue.issuer], times: Infinity })

describe.each(httpClients)("credentials bound to their authorization server, through %s", (_, httpClient) => {
  for (const [name, identity] of identities) {
    describe(name, () => {
      it.scopedLive("issuer configured, the resource names another server: issuer-mismatch, nothing sent to it", () =>
        Effect.gen(function*() {
          const { home, rogue, srv } = yield* setting()
          srv.scriptAuth({ kind: "other-authorization-servers", servers: [rogue.issuer], times: Infinity })
          const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: { ...identity, issuer: home.issuer } }))
          expect(error).toMatchObject({ ...bindingFailure, outcome: "not-applied", retryable: false })
          expectUntouched(rogue)
          expect(tokenRequests(home)).toHaveLength(0)
          expect(toolCalls(srv)).toHaveLength(0)
        }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

      it.scopedLive("issuer configured, the resource names the rogue first and the bound server second: the bound one is used", () =>
        Effect.gen(function*() {
          const { home, rogue, srv } = yield* setting()
          srv.scriptAuth({ kind: "other-authorization-servers", servers: [rogue.issuer, home.issuer], times: Infinity })
          const connection = yield* McpClient.connect({ url: srv.url, auth: { ...identity, issuer: home.issuer } })
          expect(textOf(yield* connection.callTool("increment"))).toBe("1")
          expect(tokenRequests(home)).toHaveLength(1)
          expectUntouched(rogue)
        }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

      it.scopedLive("no issuer: bound at first use; the next connection sharing the store is refused before anything reaches the rogue", () =>
        Effect.gen(function*() {
          const store = yield* Layer.build(Authorization.tokenStoreMemory)
          const { home, rogue, srv } = yield* setting()
          const first = yield* McpClient.connect({ url: srv.url, auth: identity }).pipe(Effect.provide(store))
          expect(textOf(yield* first.callTool("increment"))).toBe("1")
          expect(tokenRequests(home)).toHaveLength(1)
          // The stored token stops working, and the resource now names the rogue.
          home.revokeAll()
          renameTo(srv, rogue)
          const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: identity }).pipe(Effect.provide(store)))
          expect(error).toMatchObject({ ...bindingFailure, outcome: "not-applied" })
          expectUntouched(rogue)
          expect(tokenRequests(home)).toHaveLength(1)
          expect(srv.counter()).toBe(1)
        }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

      it.scopedLive("no issuer: within one connection, a later 401 whose resource names the rogue is refused, the call never ran", () =>
        Effect.gen(function*() {
          const { home, rogue, srv } = yield* setting()
          const connection = yield* McpClient.connect({ url: srv.url, auth: identity })
          expect(textOf(yield* connection.callTool("increment"))).toBe("1")
          home.revokeAll()
          renameTo(srv, rogue)
          const { error } = yield* failureOf(connection.callTool("increment"))
          expect(error).toMatchObject({ ...bindingFailure, stage: "call", outcome: "not-applied" })
          expectUntouched(rogue)
          expect(srv.counter()).toBe(1)
        }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
    })
  }

  it.scopedLive("issuer configured, a server without resource metadata (the 2025-03-26 fallback to its own origin): issuer-mismatch, no metadata asked of that origin", () =>
    Effect.gen(function*() {
      const { home, rogue, srv } = yield* setting({ metadata: "none" })
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: { ...identities[0][1], issuer: home.issuer } }))
      expect(error).toMatchObject(bindingFailure)
      const paths = srv.requests.map((r) => new URL(r.url, "http://x").pathname)
      expect(paths.some((path) => path.startsWith("/.well-known/oauth-authorization-server"))).toBe(false)
      expect(paths.some((path) => path === "/token")).toBe(false)
      expect(home.requests).toHaveLength(0)
      expectUntouched(rogue)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("issuer configured for a dynamically registered client: the only authorization server it registers with", () =>
    Effect.gen(function*() {
      const { home, rogue, srv } = yield* setting()
      renameTo(srv, rogue)
      const { error } = yield* failureOf(
        McpClient.connect({ url: srv.url, auth: { redirectUri, issuer: home.issuer } }).pipe(Effect.provide(consentingUser(rogue).layer))
      )
      expect(error).toMatchObject(bindingFailure)
      expectUntouched(rogue)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("the store records the issuer: a stored entry of another issuer than the configured one is not used", () =>
    Effect.gen(function*() {
      const store = yield* Layer.build(Authorization.tokenStoreMemory)
      const { home, rogue, srv } = yield* setting()
      const auth = identities[0][1]
      yield* McpClient.connect({ url: srv.url, auth }).pipe(Effect.provide(store))
      const stored = yield* Effect.flatMap(Authorization.TokenStore, (s) => s.get(Authorization.storeKeyOf(new URL(srv.url), auth))).pipe(
        Effect.provide(store)
      )
      expect(stored._tag === "Some" && stored.value.issuer).toBe(home.issuer)
      // Configured for the rogue now: the home token is not sent, the rogue is asked (it is the configured one).
      const second = yield* Effect.either(McpClient.connect({ url: srv.url, auth: { ...auth, issuer: rogue.issuer } }).pipe(Effect.provide(store)))
      expect(second).toMatchObject({ _tag: "Left", left: bindingFailure })
      expect(new Set(srv.bearerTokens()).size).toBe(1)
      expectUntouched(rogue)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("dynamic registration is not bound: it follows the authority that moved, and registers there anew", () =>
    Effect.gen(function*() {
      const store = yield* Layer.build(Authorization.tokenStoreMemory)
      const { home, rogue, srv } = yield* setting()
      yield* McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(consentingUser(home).layer), Effect.provide(store))
      expect(home.calls("register")).toBe(1)
      home.revokeAll()
      renameTo(srv, rogue)
      // The rogue's tokens are not the MCP server's: the connection ends Unauthorized, after registering there.
      yield* Effect.either(
        McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(consentingUser(rogue).layer), Effect.provide(store))
      )
      expect(rogue.calls("register")).toBe(1)
      // Nothing of the home registration went there.
      const homeClient = home.clients().find((c) => c.clientSecret === undefined && c.clientId !== "svc" && c.clientId !== "signer")
      expect(homeClient).toBeDefined()
      expect(everythingReceivedBy(rogue.requests)).not.toContain(homeClient!.clientId)
    }).pipe(Effect.provide(httpClient), Effect.provide(Authorization.layerDefaults)))
})

describe("an mcpServers file's auth entry", () => {
  it.scopedLive("carries issuer and the two opt-ins to the connection; a wrong issuer there binds as in code", () =>
    Effect.gen(function*() {
      const { home, rogue, srv } = yield* setting()
      const file = join(mkdtempSync(join(tmpdir(), "phasebound-binding-")), "mcp.json")
      const auth = { grant: "client_credentials", clientId: "svc", clientSecret, allowPrivateAuthority: false, allowScopeStepUp: true }
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: {
            home: { url: srv.url, auth: { ...auth, issuer: home.issuer } },
            rogue: { url: srv.url, auth: { ...auth, issuer: rogue.issuer } }
          }
        })
      )
      const options = yield* McpServers.fromFile(file)
      expect(yield* McpServers.resolveServer(options.servers["home"]!)).toMatchObject({
        auth: { issuer: home.issuer, allowPrivateAuthority: false, allowScopeStepUp: true }
      })
      const servers = yield* McpServers.make(options)
      expect(textOf(yield* servers.callTool("home", "increment"))).toBe("1")
      const { error } = yield* failureOf(servers.connection("rogue"))
      expect(error).toMatchObject(bindingFailure)
      expectUntouched(rogue)
    }).pipe(Effect.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, Authorization.layerDefaults))))
})

describe("transport security: auth needs https, or http on loopback", () => {
  for (const url of ["http://mcp.example.com/mcp", "http://10.0.0.1/mcp", "http://[fe80::1]/mcp", "http://127.0.0.1.nip.io/mcp"]) {
    it.scopedLive(`${url} with auth: InvalidOption url (insecure-url), before any I/O`, () =>
      Effect.gen(function*() {
        const http = loopbackOnly(FetchHttpClient.layer)
        for (const auth of [{ redirectUri }, identities[0][1], identities[1][1]] satisfies ReadonlyArray<Authorization.Options>) {
          const { error } = yield* failureOf(McpClient.connect({ url, auth }).pipe(Effect.provide(http.layer), Effect.provide(Authorization.layerDefaults)))
          expect(error).toMatchObject({ _tag: "InvalidOption", option: "url", reason: "insecure-url", stage: "config", outcome: "not-sent" })
        }
        expect(http.requested).toEqual([])
      }))
  }

  it.scopedLive("the same URL without auth is not refused by this rule (the request is made; here it is held)", () =>
    Effect.gen(function*() {
      const http = loopbackOnly(FetchHttpClient.layer)
      const { error } = yield* failureOf(
        McpClient.connect({ url: "http://mcp.example.com/mcp" }).pipe(Effect.provide(http.layer), Effect.provide(Authorization.layerDefaults))
      )
      expect(error._tag).not.toBe("InvalidOption")
      expect(http.held().every((url) => url.startsWith("http://mcp.example.com/"))).toBe(true)
      expect(http.held().length).toBeGreaterThan(0)
    }))

  it.scopedLive("https off loopback with auth passes validation (the request is made; here it is held)", () =>
    Effect.gen(function*() {
      const http = loopbackOnly(FetchHttpClient.layer)
      const { error } = yield* failureOf(
        McpClient.connect({ url: "https://mcp.example.com/mcp", auth: identities[0][1] }).pipe(
          Effect.provide(http.layer),
          Effect.provide(Authorization.layerDefaults)
        )
      )
      expect(error._tag).toBe("TransportFailure")
      expect(http.held()[0]).toBe("https://mcp.example.com/mcp")
    }))

  it.scopedLive("an auth.issuer that is not an issuer identifier: InvalidOption auth.issuer, before any I/O (Effect and Promise APIs)", () =>
    Effect.gen(function*() {
      const http = loopbackOnly(FetchHttpClient.layer)
      for (const issuer of ["http://as.example.com", "https://as.example.com/?tenant=1", "as.example.com"]) {
        const { error } = yield* failureOf(
          McpClient.connect({ url: "http://127.0.0.1:9/mcp", auth: { ...identities[0][1], issuer } }).pipe(
            Effect.provide(http.layer),
            Effect.provide(Authorization.layerDefaults)
          )
        )
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "auth.issuer", reason: "invalid-url" })
        const rejected = yield* Effect.promise(() =>
          connectPromise({ url: "http://127.0.0.1:9/mcp", auth: { ...identities[0][1], issuer }, httpClient: http.layer }).then(
            () => undefined,
            (e: unknown) => e
          )
        )
        expect(rejected).toMatchObject({ _tag: "InvalidOption", option: "auth.issuer" })
      }
      expect(http.requested).toEqual([])
    }))

  it.scopedLive("Promise API: auth.issuer binds as in Effect (issuer-mismatch, nothing sent to the rogue)", () =>
    Effect.gen(function*() {
      const { home, rogue, srv } = yield* setting()
      renameTo(srv, rogue)
      const rejected = yield* Effect.promise(() =>
        connectPromise({ url: srv.url, auth: { grant: "client_credentials", clientId: "svc", clientSecret, issuer: home.issuer } }).then(
          () => undefined,
          (e: unknown) => e
        )
      )
      expect(rejected).toMatchObject(bindingFailure)
      expectUntouched(rogue)
    }))
})

describe("authorities a server on loopback may not name", () => {
  /**
   * A connection (client credentials, or a user's with dynamic registration) to an MCP server
   * on 127.0.0.1 whose documents name `where`; the HTTP client holds anything off loopback.
   */
  const attempt = (
    where: {
      readonly home?: Record<string, unknown>
      readonly resource?: Record<string, unknown>
      readonly announced?: string
    },
    auth: Authorization.Options = identities[0][1]
  ) =>
    Effect.gen(function*() {
      const http = loopbackOnly(FetchHttpClient.layer)
      const home = yield* oauthServer({ clients, ...(where.home === undefined ? {} : { metadataExtra: where.home }) })
      const srv = yield* protectedServer(home, {
        era: "stateless",
        auth: {
          ...(where.resource === undefined ? {} : { metadataExtra: where.resource }),
          ...(where.announced === undefined ? {} : { announcedMetadataUrl: where.announced })
        }
      })
      const user = consentingUser(home)
      const result = yield* Effect.either(
        McpClient.connect({ url: srv.url, auth }).pipe(Effect.provide(user.layer), Effect.provide(http.layer), Effect.provide(Authorization.layerDefaults))
      )
      return { http, home, srv, user, result }
    })

  const refused = (reason: "private-authority" | "insecure-url") => ({
    _tag: "Left",
    left: { _tag: "ProtocolViolation", reason, phase: "authorization", authorizationStep: "metadata", outcome: "not-applied" }
  })

  const cases = [
    ["a token endpoint on a link-local address", { home: { token_endpoint: "https://[fe80::1]/token" } }, "private-authority"],
    ["a token endpoint on a private address over http", { home: { token_endpoint: "http://10.0.0.1/token" } }, "insecure-url"],
    ["a token endpoint on the cloud metadata address", { home: { token_endpoint: "https://169.254.169.254/latest/token" } }, "private-authority"],
    ["a token endpoint on an IPv4-mapped private address", { home: { token_endpoint: "https://[::ffff:192.168.1.1]/token" } }, "private-authority"],
    ["a token endpoint on the unspecified address", { home: { token_endpoint: "https://0.0.0.0/token" } }, "private-authority"],
    ["a registration endpoint on a private address", { home: { registration_endpoint: "https://10.1.2.3/register" } }, "private-authority"],
    ["an authorization endpoint on a private address", { home: { authorization_endpoint: "https://192.168.0.1/authorize" } }, "private-authority"],
    ["an authorization server on a private address", { resource: { authorization_servers: ["https://10.0.0.1"] } }, "private-authority"],
    ["an authorization server on a unique local IPv6 address", { resource: { authorization_servers: ["https://[fd00::53]/tenant"] } }, "private-authority"],
    ["resource metadata on the cloud metadata address", { announced: "https://169.254.169.254/latest/meta-data" }, "private-authority"]
  ] as const

  for (const [name, where, reason] of cases) {
    it.scopedLive(`${name}: ${reason}, nothing sent there nor to the authority's endpoints`, () =>
      Effect.gen(function*() {
        const { home, http, result, srv, user } = yield* attempt(where)
        expect(result).toMatchObject(refused(reason))
        expect(http.held()).toEqual([])
        expect(tokenRequests(home)).toHaveLength(0)
        expect(home.calls("register")).toBe(0)
        expect(user.urls).toHaveLength(0)
        expect(toolCalls(srv)).toHaveLength(0)
      }))
  }

  it.scopedLive("a user's flow: an authorization endpoint on a private address is never shown to the user, nothing registered", () =>
    Effect.gen(function*() {
      const { home, http, result, user } = yield* attempt({ home: { authorization_endpoint: "https://192.168.0.1/authorize" } }, { redirectUri })
      expect(result).toMatchObject(refused("private-authority"))
      expect(user.urls).toHaveLength(0)
      expect(home.calls("register")).toBe(0)
      expect(http.held()).toEqual([])
    }))

  it.scopedLive("allowPrivateAuthority: the link-local token endpoint is tried (held by the test's client), not refused", () =>
    Effect.gen(function*() {
      const { http, result } = yield* attempt({ home: { token_endpoint: "https://[fe80::1]/token" } }, { ...identities[0][1], allowPrivateAuthority: true })
      expect(result).toMatchObject({ _tag: "Left", left: { _tag: "TransportFailure", phase: "authorization", authorizationStep: "token" } })
      expect(http.held()).toEqual(["https://[fe80::1]/token"])
    }))

  it.scopedLive("allowPrivateAuthority still refuses plain http off loopback", () =>
    Effect.gen(function*() {
      const { http, result } = yield* attempt({ home: { token_endpoint: "http://10.0.0.1/token" } }, { ...identities[0][1], allowPrivateAuthority: true })
      expect(result).toMatchObject(refused("insecure-url"))
      expect(http.held()).toEqual([])
    }))

  it.scopedLive("the server on 127.0.0.1 and its authorization server on another loopback port: allowed (every test relies on it)", () =>
    Effect.gen(function*() {
      const { home, http, result, srv } = yield* attempt({})
      expect(result._tag).toBe("Right")
      expect(new URL(home.issuer).port).not.toBe(new URL(srv.url).port)
      expect(http.held()).toEqual([])
    }))
})

describe("the scope ceiling of client credentials", () => {
  const serviceSetting = Effect.gen(function*() {
    const oauth = yield* oauthServer({ clients })
    const srv = yield* protectedServer(oauth, { era: "stateless", auth: { requiredScopes: ["mcp"], toolScopes: { increment: ["admin"] } } })
    return { oauth, srv }
  })

  it.scopedLive("a configured scope is the ceiling: the 403 insufficient_scope is scope-ceiling, no token asked for the wider scope, the tool never ran", () =>
    Effect.gen(function*() {
      const { oauth, srv } = yield* serviceSetting
      const connection = yield* McpClient.connect({ url: srv.url, auth: { ...identities[0][1], scope: "mcp" } })
      const { error } = yield* failureOf(connection.callTool("increment"))
      expect(error).toMatchObject({
        _tag: "AuthorizationFailed",
        reason: "scope-ceiling",
        phase: "authorization",
        authorizationStep: "step-up",
        stage: "call",
        outcome: "not-applied"
      })
      expect(tokenRequests(oauth).map((r) => r.form["scope"])).toEqual(["mcp"])
      expect(srv.counter()).toBe(0)
      // The connection goes on within its scope.
      expect(connection.tools.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  it.scopedLive("allowScopeStepUp: the wider scope is asked for, the call sent once more", () =>
    Effect.gen(function*() {
      const { oauth, srv } = yield* serviceSetting
      const connection = yield* McpClient.connect({ url: srv.url, auth: { ...identities[0][1], scope: "mcp", allowScopeStepUp: true } })
      expect(textOf(yield* connection.callTool("increment"))).toBe("1")
      expect(tokenRequests(oauth).map((r) => r.form["scope"])).toEqual(["mcp", "mcp admin"])
      expect(srv.counter()).toBe(1)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))
})
