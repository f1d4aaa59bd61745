/**
 * The OAuth documents as strict Schemas (internal/oauth/metadata.ts): real-world documents
 * decode, with their extra fields dropped; wrong types, missing fields, insecure URLs, issuer
 * mismatches and oversized lists are refused with a `DocumentProblem` that names the field
 * and the kind of problem and never carries a value of the document.
 */
import { oauthErrorCodes } from "../../src/McpConnectionError.js"
import { Either, FastCheck as fc, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import {
  decodeAuthorizationServerMetadata,
  decodeProtectedResourceMetadata,
  decodeTokenErrorResponse,
  decodeTokenResponse,
  type DocumentProblem,
  knownErrorCode,
  maxAuthorizationServers,
  maxListEntries,
  maxScopes
} from "../../src/internal/oauth/metadata.js"

/** A value that must never appear in a problem: it stands for a token in a hostile body. */
const canary = "tok_CANARY_5b0e8f3a"

const right = <A>(result: Either.Either<A, DocumentProblem>): A => {
  if (Either.isLeft(result)) throw new Error(`expected a decoded document, got ${JSON.stringify(result.left)}`)
  return result.right
}
const left = <A>(result: Either.Either<A, DocumentProblem>): DocumentProblem => {
  if (Either.isRight(result)) throw new Error("expected a problem, got a decoded document")
  return result.left
}
/** A problem carries only its tag, document, kind and field name. */
const expectClean = (problem: DocumentProblem) => {
  expect(Object.keys(problem).sort()).toEqual(
    problem.field === undefined ? ["_tag", "document", "problem"] : ["_tag", "document", "field", "problem"]
  )
  expect(JSON.stringify(problem)).not.toContain(canary)
  expect(String(Object.values(problem))).not.toContain(canary)
}

const prm = {
  resource: "https://mcp.example.com/mcp",
  authorization_servers: ["https://auth.example.com"]
}
const asMetadata = {
  issuer: "https://auth.example.com",
  authorization_endpoint: "https://auth.example.com/authorize",
  token_endpoint: "https://auth.example.com/token",
  code_challenge_methods_supported: ["S256"]
}
const token = { access_token: "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", token_type: "Bearer" }

const notObjects: ReadonlyArray<unknown> = [null, undefined, [], [prm], "{}", 0, true, Symbol.for("x"), () => prm]

describe("Protected Resource Metadata (RFC 9728 §2)", () => {
  it("decodes a real-world document and drops the fields it does not use", () => {
    const document = {
      resource: "https://api.githubcopilot.example/mcp/",
      authorization_servers: ["https://github.example/login/oauth"],
      scopes_supported: ["repo", "read:org", "gist", "notifications", "user", "project"],
      bearer_methods_supported: ["header"],
      resource_name: "Example MCP Server",
      resource_documentation: "https://docs.example.com/mcp",
      jwks_uri: "https://mcp.example.com/jwks.json",
      resource_signing_alg_values_supported: ["RS256"],
      dpop_bound_access_tokens_required: false,
      tls_client_certificate_bound_access_tokens: false,
      "x-vendor": { nested: [1, 2, 3] }
    }
    expect(right(decodeProtectedResourceMetadata(document))).toEqual({
      resource: "https://api.githubcopilot.example/mcp/",
      authorization_servers: ["https://github.example/login/oauth"],
      scopes_supported: ["repo", "read:org", "gist", "notifications", "user", "project"],
      bearer_methods_supported: ["header"]
    })
  })

  it("decodes what the conformance suite's servers publish (plain http on loopback)", () => {
    const document = { resource: "http://localhost:41237/mcp", authorization_servers: ["http://localhost:41238/tenant1"] }
    expect(right(decodeProtectedResourceMetadata(document))).toEqual(document)
    expect(right(decodeProtectedResourceMetadata({ ...document, authorization_servers: ["http://127.0.0.1:1", "http://[::1]:2"] })))
      .toBeDefined()
  })

  it("reads null as absent for an optional field", () => {
    expect(right(decodeProtectedResourceMetadata({ ...prm, scopes_supported: null, bearer_methods_supported: null })))
      .toEqual(prm)
  })

  it("refuses anything that is not a JSON object", () => {
    for (const json of notObjects) {
      expect(left(decodeProtectedResourceMetadata(json))).toEqual({
        _tag: "DocumentProblem",
        document: "protected-resource-metadata",
        problem: "not-an-object"
      })
    }
  })

  it("requires resource and a non-empty authorization_servers (MCP: at least one)", () => {
    expect(left(decodeProtectedResourceMetadata({ authorization_servers: prm.authorization_servers })))
      .toMatchObject({ problem: "missing-field", field: "resource" })
    expect(left(decodeProtectedResourceMetadata({ resource: prm.resource })))
      .toMatchObject({ problem: "missing-field", field: "authorization_servers" })
    expect(left(decodeProtectedResourceMetadata({ ...prm, authorization_servers: [] })))
      .toMatchObject({ problem: "invalid-value", field: "authorization_servers" })
    expect(left(decodeProtectedResourceMetadata({ ...prm, authorization_servers: null })))
      .toMatchObject({ problem: "wrong-type", field: "authorization_servers" })
  })

  it("does not read fields from the prototype (a __proto__ key in the JSON)", () => {
    const json = JSON.parse(`{"__proto__": ${JSON.stringify(prm)}}`)
    expect(left(decodeProtectedResourceMetadata(json))).toMatchObject({ problem: "missing-field", field: "resource" })
  })

  it("refuses wrong types, field by field", () => {
    const cases: ReadonlyArray<[Record<string, unknown>, string]> = [
      [{ ...prm, resource: 42 }, "resource"],
      [{ ...prm, resource: ["https://mcp.example.com/mcp"] }, "resource"],
      [{ ...prm, authorization_servers: "https://auth.example.com" }, "authorization_servers"],
      [{ ...prm, authorization_servers: [{ issuer: "https://auth.example.com" }] }, "authorization_servers"],
      [{ ...prm, authorization_servers: ["https://auth.example.com", 7] }, "authorization_servers"],
      [{ ...prm, scopes_supported: "read write" }, "scopes_supported"],
      [{ ...prm, scopes_supported: [true] }, "scopes_supported"],
      [{ ...prm, bearer_methods_supported: { header: true } }, "bearer_methods_supported"]
    ]
    for (const [document, field] of cases) {
      expect(left(decodeProtectedResourceMetadata(document)), field).toEqual({
        _tag: "DocumentProblem",
        document: "protected-resource-metadata",
        problem: "wrong-type",
        field
      })
    }
  })

  it("refuses a resource that is no absolute URL, or has a fragment", () => {
    for (
      const resource of ["", "mcp.example.com", "/mcp", "https://mcp.example.com#fragment", "https://mcp.example.com/#", "urn:x:y"]
    ) {
      expect(left(decodeProtectedResourceMetadata({ ...prm, resource })), resource)
        .toMatchObject({ problem: "invalid-value", field: "resource" })
    }
  })

  it("refuses an authorization server over plain http off loopback, and one that is no issuer identifier", () => {
    for (const issuer of ["http://auth.example.com", "http://127.0.0.1.evil.example", "http://10.0.0.1"]) {
      expect(left(decodeProtectedResourceMetadata({ ...prm, authorization_servers: [issuer] })), issuer)
        .toMatchObject({ problem: "insecure-url", field: "authorization_servers" })
    }
    for (
      const issuer of [
        "https://auth.example.com?tenant=1",
        "https://auth.example.com#x",
        "https://user:pw@auth.example.com",
        "auth.example.com",
        "ftp://auth.example.com",
        "https://auth.example.com/\u2028"
      ]
    ) {
      expect(left(decodeProtectedResourceMetadata({ ...prm, authorization_servers: [issuer] })), issuer)
        .toMatchObject({ problem: "invalid-value", field: "authorization_servers" })
    }
  })

  it("refuses a scope that is no RFC 6749 scope-token (it would smuggle another scope into a request)", () => {
    for (const scope of ["", "read write", "a\"b", "a\\b", "é", "read\n"]) {
      expect(left(decodeProtectedResourceMetadata({ ...prm, scopes_supported: [scope] })), JSON.stringify(scope))
        .toMatchObject({ problem: "invalid-value", field: "scopes_supported" })
    }
  })

  it("bounds every list: exactly the bound is accepted, one more is refused", () => {
    const servers = (n: number) => Array.from({ length: n }, (_, i) => `https://as${i}.example.com`)
    expect(right(decodeProtectedResourceMetadata({ ...prm, authorization_servers: servers(maxAuthorizationServers) })))
      .toBeDefined()
    expect(left(decodeProtectedResourceMetadata({ ...prm, authorization_servers: servers(maxAuthorizationServers + 1) })))
      .toMatchObject({ problem: "too-many-items", field: "authorization_servers" })
    const scopes = (n: number) => Array.from({ length: n }, (_, i) => `scope:${i}`)
    expect(right(decodeProtectedResourceMetadata({ ...prm, scopes_supported: scopes(maxScopes) }))).toBeDefined()
    expect(left(decodeProtectedResourceMetadata({ ...prm, scopes_supported: scopes(maxScopes + 1) })))
      .toMatchObject({ problem: "too-many-items", field: "scopes_supported" })
    expect(left(decodeProtectedResourceMetadata({ ...prm, bearer_methods_supported: scopes(maxListEntries + 1) })))
      .toMatchObject({ problem: "too-many-items", field: "bearer_methods_supported" })
  })

  it("refuses a huge list by its length, without reading any of its items", () => {
    // A million items behind a proxy that counts every item read: none is read.
    let itemReads = 0
    const huge = new Proxy(new Array<unknown>(1_000_000).fill("https://auth.example.com"), {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key)) itemReads++
        return Reflect.get(target, key, receiver)
      }
    })
    expect(left(decodeProtectedResourceMetadata({ ...prm, authorization_servers: huge })))
      .toMatchObject({ problem: "too-many-items", field: "authorization_servers" })
    expect(left(decodeProtectedResourceMetadata({ ...prm, scopes_supported: huge })))
      .toMatchObject({ problem: "too-many-items", field: "scopes_supported" })
    expect(itemReads).toBe(0)
  })
})

describe("Authorization Server Metadata (RFC 8414 §2, OpenID Connect Discovery)", () => {
  it("decodes the RFC 8414 §3.2 example and drops the fields it does not use", () => {
    const document = {
      issuer: "https://server.example.com",
      authorization_endpoint: "https://server.example.com/authorize",
      token_endpoint: "https://server.example.com/token",
      token_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
      token_endpoint_auth_signing_alg_values_supported: ["RS256", "ES256"],
      userinfo_endpoint: "https://server.example.com/userinfo",
      jwks_uri: "https://server.example.com/jwks.json",
      registration_endpoint: "https://server.example.com/register",
      scopes_supported: ["openid", "profile", "email", "address", "phone", "offline_access"],
      response_types_supported: ["code", "code token"],
      service_documentation: "http://server.example.com/service_documentation.html",
      ui_locales_supported: ["en-US", "en-GB", "en-CA", "fr-FR", "fr-CA"]
    }
    expect(right(decodeAuthorizationServerMetadata(document, "https://server.example.com"))).toEqual({
      issuer: "https://server.example.com",
      authorization_endpoint: "https://server.example.com/authorize",
      token_endpoint: "https://server.example.com/token",
      token_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
      registration_endpoint: "https://server.example.com/register",
      scopes_supported: ["openid", "profile", "email", "address", "phone", "offline_access"],
      response_types_supported: ["code", "code token"]
    })
  })

  it("decodes an OpenID provider's configuration with a realm path, and every MCP field", () => {
    const issuer = "https://sso.example.com/realms/mcp"
    const document = {
      issuer,
      authorization_endpoint: `${issuer}/protocol/openid-connect/auth`,
      token_endpoint: `${issuer}/protocol/openid-connect/token`,
      introspection_endpoint: `${issuer}/protocol/openid-connect/token/introspect`,
      end_session_endpoint: `${issuer}/protocol/openid-connect/logout`,
      registration_endpoint: `${issuer}/clients-registrations/openid-connect`,
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      response_types_supported: ["code", "none", "id_token", "token", "id_token token"],
      subject_types_supported: ["public", "pairwise"],
      id_token_signing_alg_values_supported: ["PS384", "RS256", "ES256"],
      claims_supported: ["aud", "sub", "iss", "auth_time", "name"],
      code_challenge_methods_supported: ["plain", "S256"],
      token_endpoint_auth_methods_supported: ["private_key_jwt", "client_secret_basic", "client_secret_post", "none"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: false,
      mtls_endpoint_aliases: { token_endpoint: `${issuer}/mtls/token` },
      claims_parameter_supported: true
    }
    const decoded = right(decodeAuthorizationServerMetadata(document, issuer))
    expect(decoded).toMatchObject({
      issuer,
      code_challenge_methods_supported: ["plain", "S256"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: false,
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"]
    })
    expect(Object.keys(decoded)).not.toContain("mtls_endpoint_aliases")
    expect(Object.keys(decoded)).not.toContain("subject_types_supported")
  })

  it("decodes a client-credentials-only server: no authorization endpoint", () => {
    const document = { issuer: "https://auth.example.com", token_endpoint: "https://auth.example.com/oauth/token" }
    expect(right(decodeAuthorizationServerMetadata(document, "https://auth.example.com"))).toEqual(document)
  })

  it("refuses metadata whose issuer is not the one it was fetched for, compared as plain text (RFC 8414 §3.3)", () => {
    // The spec's example: a document fetched for attacker.example that names honest.example.
    const honest = { ...asMetadata, issuer: "https://honest.example" }
    expect(left(decodeAuthorizationServerMetadata(honest, "https://attacker.example"))).toEqual({
      _tag: "DocumentProblem",
      document: "authorization-server-metadata",
      problem: "issuer-mismatch",
      field: "issuer"
    })
    for (
      const fetchedFor of [
        "https://auth.example.com/",
        "https://AUTH.example.com",
        "https://auth.example.com:443",
        "https://auth.example.com/tenant1",
        "http://auth.example.com",
        "https://auth.example.co",
        " https://auth.example.com"
      ]
    ) {
      expect(left(decodeAuthorizationServerMetadata(asMetadata, fetchedFor)), fetchedFor)
        .toMatchObject({ problem: "issuer-mismatch", field: "issuer" })
    }
    expect(right(decodeAuthorizationServerMetadata(asMetadata, "https://auth.example.com")).issuer)
      .toBe("https://auth.example.com")
  })

  it("refuses an issuer that is no issuer identifier, even when it is the one expected", () => {
    expect(left(decodeAuthorizationServerMetadata({ ...asMetadata, issuer: "https://a.example?x=1" }, "https://a.example?x=1")))
      .toMatchObject({ problem: "invalid-value", field: "issuer" })
    expect(left(decodeAuthorizationServerMetadata({ ...asMetadata, issuer: "http://a.example" }, "http://a.example")))
      .toMatchObject({ problem: "insecure-url", field: "issuer" })
  })

  it("requires issuer and token_endpoint", () => {
    const { issuer: _issuer, ...withoutIssuer } = asMetadata
    expect(left(decodeAuthorizationServerMetadata(withoutIssuer, "https://auth.example.com")))
      .toMatchObject({ problem: "missing-field", field: "issuer" })
    const { token_endpoint: _token, ...withoutToken } = asMetadata
    expect(left(decodeAuthorizationServerMetadata(withoutToken, "https://auth.example.com")))
      .toMatchObject({ problem: "missing-field", field: "token_endpoint" })
    for (const json of notObjects) {
      expect(left(decodeAuthorizationServerMetadata(json, "https://auth.example.com")).problem).toBe("not-an-object")
    }
  })

  it("refuses every endpoint over plain http off loopback, and allows it on loopback", () => {
    for (const field of ["authorization_endpoint", "token_endpoint", "registration_endpoint"]) {
      expect(
        left(decodeAuthorizationServerMetadata({ ...asMetadata, [field]: "http://auth.example.com/x" }, asMetadata.issuer)),
        field
      ).toEqual({ _tag: "DocumentProblem", document: "authorization-server-metadata", problem: "insecure-url", field })
    }
    const loopback = {
      issuer: "http://localhost:41238",
      authorization_endpoint: "http://localhost:41238/authorize",
      token_endpoint: "http://127.0.0.1:41238/token",
      registration_endpoint: "http://[::1]:41238/register"
    }
    expect(right(decodeAuthorizationServerMetadata(loopback, "http://localhost:41238"))).toEqual(loopback)
  })

  it("allows an endpoint with a query (RFC 6749 §3.1), refuses one with a fragment, userinfo or no URL at all", () => {
    expect(
      right(decodeAuthorizationServerMetadata(
        { ...asMetadata, authorization_endpoint: "https://auth.example.com/authorize?tenant=1" },
        asMetadata.issuer
      )).authorization_endpoint
    ).toBe("https://auth.example.com/authorize?tenant=1")
    for (
      const endpoint of [
        "https://auth.example.com/token#f",
        "https://u:p@auth.example.com/token",
        "/token",
        "token",
        "javascript:alert(1)",
        "https://auth.example.com/to ken",
        ""
      ]
    ) {
      expect(left(decodeAuthorizationServerMetadata({ ...asMetadata, token_endpoint: endpoint }, asMetadata.issuer)), endpoint)
        .toMatchObject({ problem: "invalid-value", field: "token_endpoint" })
    }
  })

  it("refuses wrong types, field by field", () => {
    const cases: ReadonlyArray<[string, unknown]> = [
      ["issuer", 1],
      ["authorization_endpoint", { url: "https://auth.example.com/authorize" }],
      ["token_endpoint", ["https://auth.example.com/token"]],
      ["registration_endpoint", false],
      ["scopes_supported", "openid profile"],
      ["response_types_supported", ["code", 1]],
      ["grant_types_supported", "authorization_code"],
      ["token_endpoint_auth_methods_supported", [null]],
      ["code_challenge_methods_supported", "S256"],
      ["authorization_response_iss_parameter_supported", "true"],
      ["client_id_metadata_document_supported", 1]
    ]
    for (const [field, value] of cases) {
      expect(left(decodeAuthorizationServerMetadata({ ...asMetadata, [field]: value }, asMetadata.issuer)), field)
        .toEqual({ _tag: "DocumentProblem", document: "authorization-server-metadata", problem: "wrong-type", field })
    }
  })

  it("bounds its lists, huge ones by their length", () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`)
    expect(right(decodeAuthorizationServerMetadata({ ...asMetadata, grant_types_supported: entries(maxListEntries) }, asMetadata.issuer)))
      .toBeDefined()
    for (
      const field of [
        "response_types_supported",
        "grant_types_supported",
        "token_endpoint_auth_methods_supported",
        "code_challenge_methods_supported"
      ]
    ) {
      expect(left(decodeAuthorizationServerMetadata({ ...asMetadata, [field]: entries(maxListEntries + 1) }, asMetadata.issuer)))
        .toMatchObject({ problem: "too-many-items", field })
    }
    expect(left(decodeAuthorizationServerMetadata(
      { ...asMetadata, scopes_supported: new Array(2_000_000).fill(0) },
      asMetadata.issuer
    ))).toMatchObject({ problem: "too-many-items", field: "scopes_supported" })
  })
})

describe("the token response (RFC 6749 §5.1)", () => {
  it("decodes a full response and drops extra fields (an id_token, vendor fields)", () => {
    const response = {
      access_token: "2YotnFZFEjr1zCsicMWpAA",
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: "tGzv3JOkF0XG5Qx2TlKWIA",
      scope: "files:read files:write offline_access",
      id_token: "eyJ.eyJ.sig",
      refresh_token_expires_in: 7200,
      example_parameter: "example_value"
    }
    const decoded = right(decodeTokenResponse(response))
    expect(Object.keys(decoded).sort()).toEqual(["access_token", "expires_in", "refresh_token", "scope", "token_type"])
    expect(Redacted.value(decoded.access_token)).toBe("2YotnFZFEjr1zCsicMWpAA")
    expect(Redacted.value(decoded.refresh_token!)).toBe("tGzv3JOkF0XG5Qx2TlKWIA")
    expect(decoded).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "files:read files:write offline_access" })
  })

  it("keeps the tokens Redacted: printing the decoded response shows neither", () => {
    const decoded = right(decodeTokenResponse({ ...token, access_token: canary, refresh_token: `${canary}-refresh` }))
    expect(JSON.stringify(decoded)).not.toContain(canary)
    expect(String(decoded.access_token)).not.toContain(canary)
    expect(String(decoded.refresh_token)).not.toContain(canary)
    expect(Redacted.value(decoded.access_token)).toBe(canary)
  })

  it("reads token_type without regard to case, as Bearer", () => {
    for (const tokenType of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      expect(right(decodeTokenResponse({ ...token, token_type: tokenType })).token_type).toBe("Bearer")
    }
  })

  it("refuses any other token_type, including look-alikes", () => {
    for (const tokenType of ["DPoP", "mac", "N_A", "", "Bearer ", " bearer", "Bearer\u0000", "bearer\n", "Beare\u0280", "Bearers"]) {
      expect(left(decodeTokenResponse({ ...token, token_type: tokenType })), JSON.stringify(tokenType))
        .toMatchObject({ problem: "unsupported-token-type", field: "token_type" })
    }
    expect(left(decodeTokenResponse({ ...token, token_type: ["Bearer"] })))
      .toMatchObject({ problem: "wrong-type", field: "token_type" })
    expect(left(decodeTokenResponse({ access_token: token.access_token })))
      .toMatchObject({ problem: "missing-field", field: "token_type" })
  })

  it("takes expires_in as a non-negative safe integer only", () => {
    expect(right(decodeTokenResponse({ ...token, expires_in: 0 })).expires_in).toBe(0)
    expect(right(decodeTokenResponse({ ...token, expires_in: 3600.0 })).expires_in).toBe(3600)
    expect(Object.keys(right(decodeTokenResponse({ ...token, expires_in: null })))).toEqual(["access_token", "token_type"])
    for (const expiresIn of [-1, 1.5, 1e300, Number.MAX_SAFE_INTEGER + 2, -0.5]) {
      expect(left(decodeTokenResponse({ ...token, expires_in: expiresIn })), String(expiresIn))
        .toMatchObject({ problem: "invalid-value", field: "expires_in" })
    }
    for (const expiresIn of ["3600", true, [3600], {}]) {
      expect(left(decodeTokenResponse({ ...token, expires_in: expiresIn })))
        .toMatchObject({ problem: "wrong-type", field: "expires_in" })
    }
  })

  it("refuses an access or refresh token that could not travel in a header or form as it is", () => {
    for (const value of ["", "has space", "line\r\nX-Injected: 1", "tab\t", "nul\u0000", "é", "\u{1F600}"]) {
      expect(left(decodeTokenResponse({ ...token, access_token: value })), JSON.stringify(value))
        .toMatchObject({ problem: "invalid-value", field: "access_token" })
      expect(left(decodeTokenResponse({ ...token, refresh_token: value })), JSON.stringify(value))
        .toMatchObject({ problem: "invalid-value", field: "refresh_token" })
    }
    expect(left(decodeTokenResponse({ ...token, access_token: 12345 }))).toMatchObject({ problem: "wrong-type" })
    expect(left(decodeTokenResponse({ token_type: "Bearer" }))).toMatchObject({ problem: "missing-field", field: "access_token" })
  })

  it("takes scope as scope-tokens between spaces (extra spaces tolerated); an empty scope is no scope", () => {
    for (const scope of ["a b:c", "", "a  b", " a", "a "]) {
      expect(right(decodeTokenResponse({ ...token, scope })).scope, JSON.stringify(scope)).toBe(scope)
    }
    for (const scope of ["a\tb", "a\nb", "a\"b", "a\\b", "é", "a\u00a0b"]) {
      expect(left(decodeTokenResponse({ ...token, scope })), JSON.stringify(scope))
        .toMatchObject({ problem: "invalid-value", field: "scope" })
    }
    expect(left(decodeTokenResponse({ ...token, scope: ["a"] }))).toMatchObject({ problem: "wrong-type", field: "scope" })
  })

  it("refuses anything that is not a JSON object", () => {
    for (const json of notObjects) expect(left(decodeTokenResponse(json)).problem).toBe("not-an-object")
  })
})

describe("the token error response (RFC 6749 §5.2)", () => {
  it("decodes error, error_description and error_uri, and drops anything else", () => {
    expect(right(decodeTokenErrorResponse({
      error: "invalid_grant",
      error_description: "The refresh token has expired",
      error_uri: "https://auth.example.com/errors/invalid_grant",
      trace_id: "abc"
    }))).toEqual({
      error: "invalid_grant",
      error_description: "The refresh token has expired",
      error_uri: "https://auth.example.com/errors/invalid_grant"
    })
    expect(right(decodeTokenErrorResponse({ error: "invalid_client", error_description: null }))).toEqual({
      error: "invalid_client"
    })
  })

  it("keeps the code when the description is not in the §5.2 character set (it is never shown as it is)", () => {
    expect(right(decodeTokenErrorResponse({ error: "access_denied", error_description: "Zugriff verweigert ✗\n" })).error)
      .toBe("access_denied")
  })

  it("requires an error of the §5.2 form", () => {
    expect(left(decodeTokenErrorResponse({ error_description: "x" }))).toMatchObject({ problem: "missing-field", field: "error" })
    expect(left(decodeTokenErrorResponse({ error: 400 }))).toMatchObject({ problem: "wrong-type", field: "error" })
    for (const error of ["", "bad\"quote", "back\\slash", "new\nline", "é"]) {
      expect(left(decodeTokenErrorResponse({ error })), JSON.stringify(error))
        .toMatchObject({ problem: "invalid-value", field: "error" })
    }
    expect(left(decodeTokenErrorResponse({ error: "invalid_grant", error_description: 1 })))
      .toMatchObject({ problem: "wrong-type", field: "error_description" })
    expect(left(decodeTokenErrorResponse({ error: "invalid_grant", error_uri: {} })))
      .toMatchObject({ problem: "wrong-type", field: "error_uri" })
    for (const json of notObjects) expect(left(decodeTokenErrorResponse(json)).problem).toBe("not-an-object")
  })

  it("names only the codes of the fixed vocabulary", () => {
    for (const code of oauthErrorCodes) expect(knownErrorCode(code)).toBe(code)
    expect(knownErrorCode("insufficient_scope")).toBe("insufficient_scope")
    expect(knownErrorCode("invalid_target")).toBe("invalid_target")
    for (const code of ["INVALID_GRANT", "invalid_grant ", "custom_error", canary, "__proto__", "constructor", "toString", ""]) {
      expect(knownErrorCode(code), code).toBeUndefined()
    }
  })
})

describe("a problem never carries a value of the document", () => {
  it("for hostile documents with the canary in every field", () => {
    const decodeAs = (json: unknown) => decodeAuthorizationServerMetadata(json, "https://auth.example.com")
    const hostile: ReadonlyArray<[string, (json: unknown) => Either.Either<unknown, DocumentProblem>, unknown]> = [
      ["prm", decodeProtectedResourceMetadata, { resource: canary, authorization_servers: [canary] }],
      ["prm", decodeProtectedResourceMetadata, { ...prm, authorization_servers: [`http://${canary}.example`] }],
      ["prm", decodeProtectedResourceMetadata, { ...prm, scopes_supported: [`${canary} x`] }],
      ["prm", decodeProtectedResourceMetadata, { [canary]: canary }],
      ["as", decodeAs, { ...asMetadata, issuer: `https://${canary}.example` }],
      ["as", decodeAs, { ...asMetadata, token_endpoint: `http://x/${canary}` }],
      ["as", decodeAs, { ...asMetadata, code_challenge_methods_supported: canary }],
      ["token", decodeTokenResponse, { access_token: canary, token_type: canary }],
      ["token", decodeTokenResponse, { access_token: `${canary} `, token_type: "Bearer" }],
      ["token", decodeTokenResponse, { ...token, refresh_token: `${canary}\n` }],
      ["token", decodeTokenResponse, { ...token, expires_in: canary }],
      ["token", decodeTokenResponse, { ...token, scope: `\t${canary}` }],
      ["token", decodeTokenResponse, canary],
      ["error", decodeTokenErrorResponse, { error: `${canary}\n`, error_description: canary }],
      ["error", decodeTokenErrorResponse, { error: [canary] }]
    ]
    for (const [name, decode, json] of hostile) {
      const problem = left(decode(json))
      expect(problem.document, name).toBeDefined()
      expectClean(problem)
    }
  })

  it("for any JSON value, which never makes a decoder throw", () => {
    const withCanary = fc.jsonValue().map((value) => ({ payload: value, access_token: canary, resource: canary, error: [canary] }))
    const decoders: ReadonlyArray<(json: unknown) => Either.Either<unknown, DocumentProblem>> = [
      decodeProtectedResourceMetadata,
      (json) => decodeAuthorizationServerMetadata(json, canary),
      decodeTokenResponse,
      decodeTokenErrorResponse
    ]
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), withCanary), (json) => {
        for (const decode of decoders) {
          const result = decode(json)
          if (Either.isLeft(result)) expectClean(result.left)
        }
      })
    )
  })

  it("for wrong values at every field: the problem names the field only", () => {
    const fieldArb = fc.constantFrom("resource", "authorization_servers", "scopes_supported", "bearer_methods_supported")
    const valueArb = fc.oneof(
      fc.constant(canary),
      fc.constant([canary]),
      fc.constant({ canary }),
      fc.constant(`http://${canary}`),
      fc.integer()
    )
    fc.assert(
      fc.property(fieldArb, valueArb, (field, value) => {
        const result = decodeProtectedResourceMetadata({ ...prm, [field]: value })
        if (Either.isLeft(result)) {
          expectClean(result.left)
          expect(result.left.field).toBe(field)
        }
      })
    )
  })
})
