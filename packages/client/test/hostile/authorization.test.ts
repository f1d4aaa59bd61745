/**
 * The authorization metadata of a hostile MCP server (docs/SECURITY.md, "1. The MCP server" and
 * "2. The authorization server, and the documents the MCP server points to"), as a property over generated cases, in both eras. Hostile parties: the MCP
 * server (its 401 challenge and its Protected Resource Metadata), and the authorization servers
 * it names (its own metadata, and a lure at 127.0.0.2 that answers everything as an
 * authorization server would). The legitimate authority is the testkit's OAuthServer, with the
 * client pre-registered there (`issuer` bound to it).
 *
 * For every generated challenge (a `resource_metadata` pointing elsewhere: another loopback
 * host, private, link-local, CGNAT, ULA or unspecified addresses, userinfo, other schemes) and
 * every generated metadata (naming other issuers, endpoints on such addresses):
 * - P1 the connection ends within its bound: each exchange has the authorization phase's
 *   deadline, so the bound is two discoveries plus a fixed number of exchanges, plus the slack;
 * - P2 every failure is a typed `McpConnectionError`;
 * - P3 no secret (the canary header, the URL query token, the client secret) in a public field;
 * - nothing is requested on a private, link-local, CGNAT, ULA or unspecified address (the HTTP
 *   client is wrapped by an instrument that records every request and sends only those for
 *   loopback hosts: nothing leaves the machine);
 * - the credentials go nowhere but where they belong: the canary header only to the MCP server;
 *   the client secret, when bound to the OAuthServer (`issuer`), only there (unbound, it is bound
 *   to the first authority it is used with, which a hostile server may choose: then only the
 *   rule on private addresses applies to it).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, it } from "@effect/vitest"
import { type HostileAnswer, type HostileRequest, type HostileServer, type OAuthTestServer, startHostileServer, startOAuthServer } from "@phasebound/testkit"
import { Effect, FastCheck as fc, Layer } from "effect"
import { afterAll, beforeAll } from "vitest"
import { Authorization, McpClient } from "../../src/index.js"
import {
  checkDeadline,
  checkNoSecret,
  checkTyped,
  describeText,
  fastCheck,
  leakFormsOf,
  outcomeOf,
  SECRETS,
  secretUrl,
  verdict
} from "./support.js"

const DISCOVERY_MS = 1_000
const AUTHORIZATION_MS = 1_000
/** Exchanges one authorization may make: resource metadata (2 URLs), authority metadata (3), registration, token. */
const MAX_EXCHANGES = 7
/** Two discoveries (the refused one and the one after the new credential), each exchange of the authorization. */
const BOUND_MS = 2 * DISCOVERY_MS + MAX_EXCHANGES * AUTHORIZATION_MS

/** Where a URL of the hostile metadata may point. */
type Place =
  | "legit"
  | "self"
  | "bystander"
  | "private-10"
  | "private-172"
  | "private-192"
  | "link-local"
  | "cgnat"
  | "ula"
  | "unspecified"
  | "userinfo"
  | "not-a-url"
  | "ftp"

const places: ReadonlyArray<Place> = [
  "legit",
  "self",
  "bystander",
  "private-10",
  "private-172",
  "private-192",
  "link-local",
  "cgnat",
  "ula",
  "unspecified",
  "userinfo",
  "not-a-url",
  "ftp"
]
const place = fc.constantFrom(...places)

/** The hosts of the addresses nobody may steer the client to (without `allowPrivateAuthority`). */
const PRIVATE_HOST =
  /^(10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.|169\.254\.|100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.|0\.0\.0\.0$|\[(f[cd]|fe[89ab])[0-9a-f]*:|\[::\]$)/i

const authCase = fc.record({
  /** Where the challenge's resource_metadata points (undefined: none, so the well-known URLs). */
  challenge: fc.oneof(
    { arbitrary: fc.constant<Place | undefined>("self"), weight: 3 },
    { arbitrary: place, weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 1 }
  ),
  challengeForm: fc.constantFrom("quoted", "quoted", "unquoted", "with-scope", "twice"),
  /** What the resource metadata says its resource is. */
  resource: fc.constantFrom("self", "self", "self", "other", "missing"),
  /** The authorization servers it names. */
  authorizationServers: fc.oneof(
    { arbitrary: fc.constant<ReadonlyArray<Place>>(["legit"]), weight: 2 },
    { arbitrary: fc.constant<ReadonlyArray<Place>>(["self"]), weight: 2 },
    { arbitrary: fc.array(place, { maxLength: 3 }), weight: 2 }
  ),
  /** The hostile server's own authority metadata: its issuer, and where it says each endpoint is. */
  issuer: fc.oneof({ arbitrary: fc.constant<Place>("self"), weight: 3 }, { arbitrary: place, weight: 1 }),
  tokenEndpoint: place,
  registrationEndpoint: place,
  path: fc.constantFrom("/.well-known/oauth-protected-resource", "/prm", "/.well-known/oauth-protected-resource/mcp"),
  /**
   * The client's secret bound to the OAuthServer (`issuer`): then it may go nowhere else. Unbound,
   * it is bound to the first authority it is used with, which the hostile server chooses.
   */
  bound: fc.boolean()
})

/** An instrument: records every request the connection makes; sends only those for loopback hosts. */
interface Recorded {
  readonly url: string
  readonly text: string
}
const recorder = (base: Layer.Layer<HttpClient.HttpClient>) => {
  const requested: Array<Recorded> = []
  const layer = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      HttpClient.transform(client, (send, request) =>
        Effect.suspend(() => {
          const body = request.body._tag === "Uint8Array" ? new TextDecoder().decode(request.body.body) : ""
          requested.push({ url: request.url, text: `${request.url}\n${JSON.stringify(request.headers)}\n${body}` })
          const host = new URL(request.url).hostname
          if (host === "127.0.0.1" || host === "127.0.0.2" || host === "localhost") return send
          return Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", description: "instrument: not sent off loopback" }))
        })))
  ).pipe(Layer.provide(base))
  return { requested, layer }
}

for (const era of ["stateless", "handshake"] as const) {
  describe(`a hostile server's authorization metadata, ${era} era`, () => {
    let legit: OAuthTestServer
    let bystander: HostileServer
    let hostile: HostileServer
    beforeAll(async () => {
      legit = await startOAuthServer({ clients: [{ clientId: "svc", clientSecret: SECRETS.clientSecret, grantTypes: ["client_credentials"] }] })
      // A lure on another loopback host: it answers every request as an authorization server that names itself.
      bystander = await startHostileServer({
        era: "stateless",
        host: "127.0.0.2",
        script: (request) => {
          const origin = `http://127.0.0.2:${new URL(bystander.url).port}`
          const document = request.httpMethod === "GET"
            ? {
              resource: hostile.url,
              authorization_servers: [origin],
              issuer: origin,
              token_endpoint: `${origin}/token`,
              registration_endpoint: `${origin}/register`,
              authorization_endpoint: `${origin}/authorize`,
              code_challenge_methods_supported: ["S256"],
              grant_types_supported: ["client_credentials"]
            }
            : { access_token: "lure-token", token_type: "Bearer", expires_in: 3600, client_id: "lure" }
          return { headers: [["content-type", "application/json"]], body: JSON.stringify(document) }
        }
      })
      hostile = await startHostileServer({ era })
    })
    afterAll(async () => {
      await Promise.all([legit.close(), bystander.close(), hostile.close()])
    })

    const urlOf = (where: Place, path: string): string => {
      switch (where) {
        case "legit":
          return `${legit.issuer}${path === "" ? "" : path}`
        case "self":
          return `${hostile.origin}${path}`
        case "bystander":
          return `${bystander.origin}${path}`
        case "private-10":
          return `https://10.20.30.40${path}`
        case "private-172":
          return `https://172.16.0.9${path}`
        case "private-192":
          return `http://192.168.1.1${path}`
        case "link-local":
          return `http://169.254.169.254/latest/meta-data${path}`
        case "cgnat":
          return `https://100.64.0.1${path}`
        case "ula":
          return `https://[fd12:3456::1]${path}`
        case "unspecified":
          return `http://0.0.0.0:${new URL(hostile.url).port}${path}`
        case "userinfo":
          return `https://svc:${encodeURIComponent(SECRETS.clientSecret)}@auth.example${path}`
        case "not-a-url":
          return `not a url ${path}`
        case "ftp":
          return `ftp://10.0.0.1${path}`
      }
    }

    it.live.prop(
      "ends within its bound (P1), typed (P2), no secret in errors (P3), nothing asked of private addresses, credentials only where they belong",
      [authCase],
      ([c]) =>
        Effect.gen(function*() {
          hostile.reset()
          bystander.reset()
          const prmUrl = c.challenge === undefined ? undefined : urlOf(c.challenge, c.path)
          const challenge = prmUrl === undefined
            ? `Bearer realm="hostile"`
            : c.challengeForm === "quoted"
            ? `Bearer resource_metadata="${prmUrl}"`
            : c.challengeForm === "unquoted"
            ? `Bearer resource_metadata=${prmUrl}`
            : c.challengeForm === "with-scope"
            ? `Bearer error="invalid_token", scope="${"s ".repeat(2_000)}", resource_metadata="${prmUrl}"`
            : `Bearer resource_metadata="${urlOf("bystander", c.path)}", resource_metadata="${prmUrl}"`
          const prm = {
            ...(c.resource === "missing" ? {} : { resource: c.resource === "self" ? hostile.url : `${bystander.origin}/mcp` }),
            authorization_servers: c.authorizationServers.map((where) => urlOf(where, ""))
          }
          const asMetadata = {
            issuer: urlOf(c.issuer, ""),
            token_endpoint: urlOf(c.tokenEndpoint, "/token"),
            registration_endpoint: urlOf(c.registrationEndpoint, "/register"),
            authorization_endpoint: urlOf(c.tokenEndpoint, "/authorize"),
            code_challenge_methods_supported: ["S256"],
            grant_types_supported: ["client_credentials", "authorization_code"],
            token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"]
          }
          const json = (document: unknown): HostileAnswer => ({ headers: [["content-type", "application/json"]], body: JSON.stringify(document) })
          hostile.setScript((request: HostileRequest) => {
            if (request.httpMethod === "GET" && request.path.startsWith("/.well-known/oauth-authorization-server")) return json(asMetadata)
            if (request.httpMethod === "GET" && request.path.startsWith("/.well-known/openid-configuration")) return json(asMetadata)
            if (request.httpMethod === "GET" && (request.path === c.path || request.path.startsWith("/.well-known/oauth-protected-resource"))) return json(prm)
            if (request.path !== "/mcp") return { status: 404 }
            const bearer = request.headers["authorization"]
            if (typeof bearer === "string" && bearer.startsWith("Bearer ") && legit.isValidToken(bearer.slice(7))) return "normal"
            return { status: 401, headers: [["www-authenticate", challenge], ["content-type", "application/json"]], body: `{"error":"unauthorized"}` }
          })
          const instrument = recorder(NodeHttpClient.layerUndici)
          const started = performance.now()
          const exit = yield* Effect.exit(
            Effect.scoped(Effect.asVoid(McpClient.connect({
              url: secretUrl(hostile).replace(/\/\/[^@]*@/, "//"),
              headers: { "x-canary": SECRETS.header },
              revisions: [era === "stateless" ? "2026-07-28" : "2025-11-25"],
              transport: "streamable-http",
              auth: { grant: "client_credentials", clientId: "svc", clientSecret: SECRETS.clientSecret, ...(c.bound ? { issuer: legit.issuer } : {}) },
              policy: { discovery: { timeout: DISCOVERY_MS }, authorization: { timeout: AUTHORIZATION_MS }, releaseTimeout: 500 }
            }))).pipe(Effect.provide(instrument.layer), Effect.provide(Authorization.layerMemoryTokenStore))
          )
          const elapsed = performance.now() - started

          const privateAsked = instrument.requested.filter((r) => {
            try {
              return PRIVATE_HOST.test(new URL(r.url).hostname) || PRIVATE_HOST.test(new URL(r.url).host)
            } catch {
              return false
            }
          })
          const secretForms = leakFormsOf(SECRETS.clientSecret).concat([
            btoa(`svc:${SECRETS.clientSecret}`),
            btoa(`svc:${encodeURIComponent(SECRETS.clientSecret)}`)
          ])
          const headerForms = leakFormsOf(SECRETS.header)
          const misplaced: Array<string> = []
          for (const r of instrument.requested) {
            const origin = (() => {
              try {
                return new URL(r.url).origin
              } catch {
                return ""
              }
            })()
            if (c.bound && origin !== legit.origin && secretForms.some((form) => r.text.includes(form))) {
              misplaced.push(`the client secret was sent to ${r.url}`)
            }
            if (origin !== hostile.origin && headerForms.some((form) => r.text.includes(form))) misplaced.push(`the canary header was sent to ${r.url}`)
          }
          for (const r of c.bound ? bystander.requests : []) {
            if (secretForms.some((form) => JSON.stringify(r.headers).includes(form) || r.body.includes(form))) {
              misplaced.push(`the lure at 127.0.0.2 received the client secret (${r.httpMethod} ${r.path})`)
            }
          }
          const summary =
            `${c.bound ? "secret bound to the OAuthServer" : "secret unbound"}; challenge ${describeText(challenge)}; resource metadata at ${c.path}: ${
              describeText(JSON.stringify(prm))
            }; ` +
            `authority metadata ${describeText(JSON.stringify(asMetadata))}; requested [${instrument.requested.map((r) => r.url).join(", ")}]`
          verdict(`authorization, ${era} era`, summary, [
            ...checkDeadline("connect", elapsed, BOUND_MS),
            ...checkTyped("connect", exit),
            ...checkNoSecret("connect", exit, ["header", "query", "clientSecret"]),
            ...privateAsked.map((r) => `private address: the client asked ${r.url}`),
            ...misplaced.map((text) => `credential misplaced: ${text}`)
          ], outcomeOf(exit, elapsed))
        }),
      { timeout: 240_000, fastCheck: fastCheck(20) }
    )
  })
}
