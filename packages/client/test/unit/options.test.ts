/**
 * The connect options as Schemas (src/internal/options.ts): the public option types are the
 * Encoded side of the Schemas (checked by the typecheck), and a refused option is an
 * `InvalidOption` naming it, first problem first in the order the options have always been
 * checked, without its value.
 */
import { FetchHttpClient, type HttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, type Schema, type Scope } from "effect"
import { Authorization, McpClient, McpConnectionError, type PhasePolicy } from "../../src/index.js"
import * as Options from "../../src/internal/options.js"
import type * as Promise from "../../src/promise.js"

/** Whether two types are the same (not only assignable to each other). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
type Flat<A> = { [K in keyof A]: A[K] } & {}
type Encoded<S extends Schema.Schema.Any> = Flat<Schema.Schema.Encoded<S>>
const same = <T extends true>(): T | undefined => undefined

// The declarations users read in their editor are the Schemas' inputs, field for field.
same<Equals<Encoded<typeof Options.PolicyFields>, Flat<PhasePolicy.Options>>>()
same<Equals<Encoded<typeof Options.CallBudget>, Flat<PhasePolicy.CallBudgetOptions>>>()
same<
  Equals<
    Flat<Schema.Schema.Encoded<typeof Options.AuthClientFields> & Schema.Schema.Encoded<typeof Options.AuthRequestFields>>,
    Flat<Authorization.Options>
  >
>()
same<Equals<Encoded<typeof Options.HttpFields>, Flat<McpClient.ConnectOptions>>>()
same<Equals<Encoded<typeof Options.StdioFields>, Flat<McpClient.StdioConnectOptions>>>()

// With auth, connect requires the authorization services (the token store alone for
// client_credentials); without, what it always did.
type Requirements<T> = T extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
const _requirements = (url: string) => ({
  none: McpClient.connect({ url }),
  service: McpClient.connect({ url, auth: { grant: "client_credentials", clientId: "c", clientSecret: "s" } }),
  user: McpClient.connect({ url, auth: { redirectUri: "http://127.0.0.1:1/callback" } }),
  unknown: McpClient.connect({ url } as McpClient.ConnectOptions)
})
type Of<K extends keyof ReturnType<typeof _requirements>> = Requirements<ReturnType<typeof _requirements>[K]>
same<Equals<Of<"none">, HttpClient.HttpClient | Scope.Scope>>()
same<Equals<Of<"service">, HttpClient.HttpClient | Scope.Scope | Authorization.TokenStore>>()
same<Equals<Of<"user">, HttpClient.HttpClient | Scope.Scope | Authorization.Services>>()
same<Equals<Of<"unknown">, HttpClient.HttpClient | Scope.Scope | Authorization.Services>>()

const refusalOf = (options: McpClient.ConnectOptions) =>
  Effect.runPromise(
    McpClient.connect(options).pipe(Effect.flip, Effect.scoped, Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults))
  )

const refusalOfStdio = (options: McpClient.StdioConnectOptions) =>
  Effect.runPromise(
    // Refused before any process is started: no CommandExecutor is ever asked for.
    McpClient.connectStdio(options).pipe(Effect.flip, Effect.scoped) as Effect.Effect<McpConnectionError.McpConnectionError>
  )

describe("connect options", () => {
  it("names the refused option by its path, with the reason its check gives", async () => {
    const cases: ReadonlyArray<readonly [McpClient.ConnectOptions, string, string, string]> = [
      [{ url: "ftp://example.com/mcp" }, "url", "invalid-url", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", headers: { "bad name": "x" } }, "headers", "invalid-value", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", headers: { name: "a\r\nb" } }, "headers", "invalid-value", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", policy: { call: { timeout: 0 } } }, "call.timeout", "not-positive", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", policy: { unsolicited: { maxBytes: 1.5 } } }, "unsolicited.maxBytes", "not-integer", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", clientInfo: { name: "x" } as never }, "clientInfo", "invalid-value", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", transport: "websocket" as never }, "transport", "invalid-value", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", revisions: [] }, "revisions", "invalid-value", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", handlers: { other: () => Effect.succeed({}) } as never }, "handlers", "invalid-value", "discovery"],
      [{ url: "http://127.0.0.1:1/mcp", auth: { clientId: "" } }, "auth.clientId", "invalid-value", "authorization"],
      [{ url: "http://127.0.0.1:1/mcp", auth: { redirectUri: 5 as never } }, "auth.redirectUri", "invalid-url", "authorization"],
      [{ url: "http://127.0.0.1:1/mcp", auth: { interactiveTimeout: 0 } }, "auth.interactiveTimeout", "invalid-value", "authorization"],
      [{ url: "http://127.0.0.1:1/mcp", auth: { scope: ["a b"] } }, "auth.scope", "invalid-value", "authorization"],
      [{ url: "http://mcp.example.com/mcp", auth: {} }, "url", "insecure-url", "authorization"]
    ]
    for (const [options, option, reason, phase] of cases) {
      expect(await refusalOf(options)).toMatchObject({ _tag: "InvalidOption", option, reason, phase, stage: "config", outcome: "not-sent" })
    }
  })

  it("refuses the first problem in the order the options have always been checked", async () => {
    const first = async (options: McpClient.ConnectOptions) => (await refusalOf(options) as McpConnectionError.InvalidOption).option
    // The policy, then the URL, then the headers, then the client info.
    expect(await first({ url: "nope", policy: { maxBytes: 0 } })).toBe("maxBytes")
    expect(await first({ url: "nope", headers: { "bad name": "x" } })).toBe("url")
    expect(await first({ url: "http://127.0.0.1:1/mcp", headers: { "bad name": "x" }, clientInfo: 5 as never })).toBe("headers")
    // The structure bound comes first in the policy, the baseline before each phase.
    expect(await first({ url: "http://127.0.0.1:1/mcp", policy: { timeout: 0, maxDepth: 0 } })).toBe("maxDepth")
    expect(await first({ url: "http://127.0.0.1:1/mcp", policy: { discovery: { timeout: 0 }, timeout: 0 } })).toBe("timeout")
    // A caller's own credential (a header, or URL userinfo) and OAuth: refused before auth is read.
    expect(await first({ url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer x" }, auth: { clientId: "" } })).toBe("auth")
    expect(await first({ url: "http://user:pw@127.0.0.1:1/mcp", auth: {} })).toBe("auth")
    // auth is read before the URL is checked for it.
    expect(await first({ url: "http://mcp.example.com/mcp", auth: { clientId: "" } })).toBe("auth.clientId")
    // The client's own fields, then whether the client is whole, then what it asks for.
    expect(await first({ url: "http://127.0.0.1:1/mcp", auth: { grant: "client_credentials", scope: "" } })).toBe("auth.clientId")
    expect(await first({ url: "http://127.0.0.1:1/mcp", auth: { grant: "client_credentials", clientId: "c", maxStepUps: 99 } }))
      .toBe("auth.clientSecret")
    expect(await first({ url: "http://127.0.0.1:1/mcp", auth: { privateKey: "pem", maxStepUps: 99 } })).toBe("auth.clientId")
    expect(await first({ url: "http://127.0.0.1:1/mcp", auth: 5 as never })).toBe("auth.grant")
  })

  it("checks the stdio options in their own order, before any process is started", async () => {
    const first = async (options: McpClient.StdioConnectOptions) => (await refusalOfStdio(options) as McpConnectionError.InvalidOption).option
    expect(await first({ command: "", clientInfo: 5 as never })).toBe("clientInfo")
    expect(await first({ command: "a\0b", args: [5 as never] })).toBe("command")
    expect(await first({ command: "node", args: [5 as never], env: { A: 5 as never } })).toBe("args")
    expect(await first({ command: "node", env: { A: 5 as never }, cwd: 5 as never })).toBe("env")
    expect(await first({ command: "node", cwd: 5 as never, stderr: { mode: "loud" } as never })).toBe("cwd")
    expect(await first({ command: "node", stderr: { mode: "loud" } as never, revisions: ["1999-01-01"] })).toBe("stderr")
    expect(await first({ command: "node", revisions: ["1999-01-01"], handlers: 5 as never })).toBe("revisions")
    expect(await first({ command: "node", handlers: 5 as never })).toBe("handlers")
  })

  it("decodes auth into what it means: defaults, secrets Redacted, a CryptoKey kept as it is, the scope's tokens once each", async () => {
    const { privateKey } = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"])
    const validated = Effect.runSync(Authorization.validate({ clientId: "c", privateKey, privateKeyAlgorithm: "ES256", scope: "a b a" }))
    expect(validated).toMatchObject({ grant: "authorization_code", clientName: "phasebound", maxStepUps: 2, scope: ["a", "b"] })
    expect(validated.privateKey).toBe(privateKey)
    const withSecret = Effect.runSync(Authorization.validate({ clientId: "c", clientSecret: "s3cr3t", privateKey: "-----BEGIN PRIVATE KEY-----" }))
    expect(Redacted.isRedacted(withSecret.clientSecret) && Redacted.value(withSecret.clientSecret)).toBe("s3cr3t")
    expect(Redacted.isRedacted(withSecret.privateKey)).toBe(true)
  })

  it("never puts the refused value in the error", async () => {
    const secret = "s3cr3t-value"
    const refusals = [
      await refusalOf({ url: "http://127.0.0.1:1/mcp", headers: { "x-api-key": `${secret}\r\n` } }),
      await refusalOf({ url: `ftp://user:${secret}@127.0.0.1:1/${secret}` }),
      await refusalOf({ url: "http://127.0.0.1:1/mcp", auth: { clientId: "c", clientSecret: Redacted.make(secret) } as never, headers: { "x": "\n" } }),
      await refusalOf({ url: "http://127.0.0.1:1/mcp", auth: { grant: "client_credentials", clientId: secret } })
    ]
    for (const refusal of refusals) {
      expect(refusal._tag).toBe("InvalidOption")
      expect(JSON.stringify(McpConnectionError.toRecord(refusal))).not.toContain("s3cr3t")
      expect(refusal.message).not.toContain("s3cr3t")
      expect(Object.values(refusal).some((value) => String(value).includes("s3cr3t"))).toBe(false)
    }
  })
})

// The Promise API's options are the client's, with its own additions.
same<Equals<Flat<Promise.PromiseOptions>, Encoded<Schema.Struct<typeof Options.promiseFields>>>>()
same<Equals<Flat<Pick<Promise.HttpConnectOptions, "httpClient">>, Encoded<Schema.Struct<typeof Options.promiseHttpFields>>>>()
same<
  Equals<
    Flat<Omit<Promise.HttpConnectOptions, "auth" | "httpClient" | keyof Promise.PromiseOptions>>,
    Flat<Omit<McpClient.ConnectOptions, "auth" | "handlers">>
  >
>()
same<
  Equals<
    Flat<Omit<Promise.StdioConnectOptions, "stdio" | keyof Promise.PromiseOptions> & Promise.StdioConnectOptions["stdio"]>,
    Flat<Omit<McpClient.StdioConnectOptions, "handlers" | "stderr">>
  >
>()
