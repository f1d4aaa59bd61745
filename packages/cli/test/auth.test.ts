/**
 * The pure parts of the CLI's OAuth settings: precedence of flags over the config entry, the
 * names problems are given, the token file's precedence, what is scrubbed, when a login is hinted.
 */
import { Authorization, McpConnectionError } from "@phasebound/client"
import { Effect, Exit, Option } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  type AuthFlags,
  authTimeoutOf,
  interactiveTimeoutOf,
  needsLogin,
  parsePort,
  pemSecrets,
  renameAuthOption,
  resolveAuth,
  tokenFileOf
} from "../src/auth.js"
import { loadConfig } from "../src/config.js"
import type { Target } from "../src/target.js"

const failureOf = <A, E>(effect: Effect.Effect<A, E>): E | undefined => {
  const exit = Effect.runSyncExit(effect)
  return Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
}

const none: AuthFlags = {
  authGrant: Option.none(),
  authClientId: Option.none(),
  authClientSecret: Option.none(),
  authClientMetadataUrl: Option.none(),
  authPrivateKeyFile: Option.none(),
  authPrivateKeyAlg: Option.none(),
  authScope: Option.none(),
  authIssuer: Option.none(),
  authAllowPrivateAuthority: false,
  authAllowScopeStepUp: false,
  tokenFile: Option.none()
}

const http = (auth?: Extract<Target, { _tag: "Http" }>["auth"]): Extract<Target, { _tag: "Http" }> => ({
  _tag: "Http",
  url: "https://mcp.example.com/mcp",
  headers: {},
  transport: "auto",
  secrets: [],
  authorization: undefined,
  auth,
  configDir: auth === undefined ? undefined : "/nonexistent"
})

describe("resolveAuth", () => {
  it("nothing given: the default grant, no explicit setting", () => {
    const settings = Effect.runSync(resolveAuth(none, http(), {}))
    expect(settings.validated.grant).toBe("authorization_code")
    expect(settings.explicit).toBeUndefined()
    expect(settings.secrets).toEqual([])
  })

  it("a flag overrides the entry, field by field; ${VAR} in both secrets", () => {
    const target = http({ grant: "client_credentials", clientId: "from-entry", clientSecret: "${ENTRY_SECRET}", scope: "a b" })
    const fromEntry = Effect.runSync(resolveAuth(none, target, { ENTRY_SECRET: "entry-secret-1" }))
    expect(fromEntry.validated).toMatchObject({ grant: "client_credentials", clientId: "from-entry", scope: ["a", "b"] })
    expect(fromEntry.explicit).toBe("--config auth")
    expect(fromEntry.secrets).toContain("entry-secret-1")
    const flags = { ...none, authClientId: Option.some("from-flag"), authClientSecret: Option.some("${FLAG_SECRET}") }
    const overridden = Effect.runSync(resolveAuth(flags, target, { FLAG_SECRET: "flag-secret-2" }))
    expect(overridden.options).toMatchObject({ grant: "client_credentials", clientId: "from-flag", clientSecret: "flag-secret-2" })
    expect(overridden.secrets).toContain("flag-secret-2")
    expect(overridden.secrets).not.toContain("entry-secret-1")
  })

  it("problems are named by where the value came from", () => {
    expect(failureOf(resolveAuth(none, http({ clientSecret: "${UNSET}" }), {}))).toMatchObject({ option: "--config auth" })
    expect(failureOf(resolveAuth({ ...none, authClientSecret: Option.some("${UNSET}") }, http(), {}))).toMatchObject({
      option: "--auth-client-secret"
    })
    expect(failureOf(resolveAuth(none, http({ clientMetadataUrl: "http://x.example/c.json" }), {}))).toMatchObject({
      option: "--config auth",
      reason: "invalid-url"
    })
    expect(failureOf(resolveAuth(none, http({ grant: "client_credentials" }), {}))).toMatchObject({ option: "--auth-client-id" })
    expect(failureOf(resolveAuth(none, http({ privateKeyFile: "key.pem", clientId: "x" }), {}))).toMatchObject({ option: "--config auth" })
    expect(failureOf(resolveAuth({ ...none, authGrant: Option.some("implicit") }, http(), {}))).toMatchObject({ option: "--auth-grant" })
  })

  it("--auth-issuer over the entry's issuer; a bad one is named by where it came from; the opt-ins are booleans", () => {
    const fromEntry = Effect.runSync(resolveAuth(none, http({ issuer: "https://as.example.com", allowPrivateAuthority: true }), {}))
    expect(fromEntry.validated).toMatchObject({ issuer: "https://as.example.com", allowPrivateAuthority: true, allowScopeStepUp: false })
    expect(fromEntry.explicit).toBe("--config auth")
    const flags = { ...none, authIssuer: Option.some("https://other.example.com/tenant"), authAllowScopeStepUp: true }
    const overridden = Effect.runSync(resolveAuth(flags, http({ issuer: "https://as.example.com" }), {}))
    expect(overridden.validated).toMatchObject({ issuer: "https://other.example.com/tenant", allowScopeStepUp: true, allowPrivateAuthority: false })
    expect(overridden.explicit).toBe("--auth-issuer")
    // A boolean flag not given leaves the entry's value.
    const kept = Effect.runSync(resolveAuth(none, http({ allowScopeStepUp: true }), {}))
    expect(kept.validated.allowScopeStepUp).toBe(true)
    expect(failureOf(resolveAuth({ ...none, authIssuer: Option.some("http://as.example.com") }, http(), {}))).toMatchObject({
      option: "--auth-issuer",
      reason: "invalid-url"
    })
    expect(failureOf(resolveAuth(none, http({ issuer: "https://as.example.com/?t=1" }), {}))).toMatchObject({ option: "--config auth" })
  })

  it("a private key file: PKCS#8 PEM only; its content is scrubbed, not its BEGIN line's words", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "phasebound-auth-unit-"))
    const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
    writeFileSync(path.join(dir, "key.pem"), pem)
    writeFileSync(path.join(dir, "rsa.pem"), pem.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY"))
    const target = { ...http({ clientId: "svc", privateKeyFile: "key.pem" }), configDir: dir }
    const settings = Effect.runSync(resolveAuth(none, target, {}))
    expect(settings.options.privateKey).toBe(pem)
    // The whole key, its base64 body joined, and each body line; longest first. Never a line
    // of its own with the BEGIN/END words, so "PRIVATE KEY" elsewhere in a message stays.
    expect(settings.secrets).toEqual([
      pem.trim(),
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
      "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
      "BKcwggSjAgEAAoIBAQC7"
    ])
    const pkcs1 = { ...none, authPrivateKeyFile: Option.some(path.join(dir, "rsa.pem")) }
    expect(failureOf(resolveAuth(pkcs1, target, {}))).toMatchObject({ option: "--auth-private-key-file" })
  })
})

describe("renameAuthOption", () => {
  it("auth.<field> becomes the option it came from; the server URL refused for OAuth becomes target", () => {
    const refused = Effect.runSync(Effect.flip(Authorization.validateServerUrl(new URL("http://mcp.example.com/mcp"))))
    expect(refused).toMatchObject({ option: "url", reason: "insecure-url" })
    expect(renameAuthOption(refused, () => "--never")).toMatchObject({ _tag: "InvalidOption", option: "target", reason: "insecure-url" })
    const issuer = failureOf(Authorization.validate({ issuer: "http://as.example.com" }))
    expect(renameAuthOption(issuer, (field) => (field === "issuer" ? "--auth-issuer" : "?"))).toMatchObject({ option: "--auth-issuer" })
  })
})

describe("config auth entries", () => {
  const write = (content: unknown) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "phasebound-auth-config-")), "mcp.json")
    writeFileSync(file, JSON.stringify(content))
    return file
  }
  it("accepted with every field; an unknown field, a bad grant or port, or auth on a stdio entry is refused (--config)", () => {
    const auth = {
      grant: "authorization_code",
      clientId: "c",
      clientSecret: "${S}",
      clientMetadataUrl: "https://x.example/c.json",
      privateKeyFile: "k.pem",
      privateKeyAlg: "ES256",
      scope: "a b",
      issuer: "https://as.example.com",
      allowPrivateAuthority: false,
      allowScopeStepUp: true,
      redirectPort: 8765
    }
    expect(Effect.runSync(loadConfig(write({ mcpServers: { s: { url: "https://x.example/mcp", auth } } })))).toBeDefined()
    for (
      const bad of [
        { url: "https://x.example/mcp", auth: { ...auth, extra: 1 } },
        { url: "https://x.example/mcp", auth: { grant: "password" } },
        { url: "https://x.example/mcp", auth: { redirectPort: 70000 } },
        { url: "https://x.example/mcp", auth: { redirectPort: 1.5 } },
        { url: "https://x.example/mcp", auth: { issuer: "" } },
        { url: "https://x.example/mcp", auth: { allowPrivateAuthority: "yes" } },
        { command: "node", auth: {} }
      ]
    ) {
      expect(failureOf(loadConfig(write({ mcpServers: { s: bad } })))).toMatchObject({ option: "--config" })
    }
  })
})

describe("small parts", () => {
  it("tokenFileOf: the flag, else $PHASEBOUND_TOKEN_FILE, else the config directory", () => {
    const env = { HOME: "/home/u", PHASEBOUND_TOKEN_FILE: "/env/tokens.json" }
    expect(Effect.runSync(tokenFileOf(Option.some("/flag/t.json"), env, "linux"))).toBe("/flag/t.json")
    expect(Effect.runSync(tokenFileOf(Option.none(), env, "linux"))).toBe("/env/tokens.json")
    expect(Effect.runSync(tokenFileOf(Option.none(), { HOME: "/home/u", PHASEBOUND_TOKEN_FILE: "" }, "linux"))).toBe(
      "/home/u/.config/phasebound/tokens.json"
    )
    expect(Effect.runSync(tokenFileOf(Option.none(), {}, "linux"))).toBeUndefined()
    expect(failureOf(tokenFileOf(Option.some(" "), env, "linux"))).toMatchObject({ option: "--token-file" })
  })

  it("ports, timeouts", () => {
    expect(Effect.runSync(parsePort("0"))).toBe(0)
    expect(Effect.runSync(parsePort("8765"))).toBe(8765)
    for (const bad of ["-1", "65536", "80.5", "http", ""]) expect(failureOf(parsePort(bad))).toMatchObject({ option: "--auth-redirect-port" })
    expect(Effect.runSync(authTimeoutOf(Option.none()))).toBe(300_000)
    expect(Effect.runSync(authTimeoutOf(Option.some("90s")))).toBe(90_000)
    expect(interactiveTimeoutOf(90_000)).toBeGreaterThan(90_000)
  })

  it("secrets: unique, longest first; PEM lines without their armour", () => {
    expect(McpConnectionError.mergeSecrets(["abc", "abcdef"], ["abc", ""])).toEqual(["abcdef", "abc"])
    expect(pemSecrets("-----BEGIN PRIVATE KEY-----\nAAAA\nBBBB\n-----END PRIVATE KEY-----\n")).toEqual([
      "-----BEGIN PRIVATE KEY-----\nAAAA\nBBBB\n-----END PRIVATE KEY-----",
      "AAAABBBB",
      "AAAA",
      "BBBB"
    ])
  })

  it("needsLogin: a user's grant refused (401, or a refresh token no longer good), never client credentials", () => {
    const fields = { stage: "initialize", phase: "discovery", limits: { timeoutMs: 1, maxBytes: 1 }, outcome: "not-sent", retryable: false } as const
    const unauthorized = new McpConnectionError.Unauthorized({ ...fields, status: 401 })
    const invalidGrant = new McpConnectionError.AuthorizationFailed({ ...fields, phase: "authorization", reason: "invalid-grant" })
    const denied = new McpConnectionError.AuthorizationFailed({ ...fields, phase: "authorization", reason: "authorization-denied" })
    expect(needsLogin(unauthorized, "authorization_code")).toBe(true)
    expect(needsLogin(invalidGrant, "authorization_code")).toBe(true)
    expect(needsLogin(denied, "authorization_code")).toBe(false)
    expect(needsLogin(unauthorized, "client_credentials")).toBe(false)
  })
})
