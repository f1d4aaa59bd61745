/**
 * Credential fence: canary secrets given in a header, in URL userinfo and in the URL query never
 * appear in any public field, message, `String(e)` or `JSON.stringify(e)` of any failure, and
 * neither does the URL itself, a header name or a response body.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Testkit from "@phasebound/testkit"
import { Effect } from "effect"
import { McpClient } from "../../src/index.js"
import { failureOf, httpClients, server } from "../support/harness.js"

const canaries = {
  header: "CANARY-HEADER-7f3a9c",
  user: "canaryuser8b2d",
  password: "CANARY-PASS-41e6",
  query: "CANARY-QUERY-d09b"
}

const withCanaries = (url: string) => {
  const u = new URL(url)
  u.username = canaries.user
  u.password = canaries.password
  u.searchParams.set("token", canaries.query)
  return u.href
}

const forbidden = [...Object.values(canaries), "127.0.0.1", "http://", "/mcp", "authorization", "x-api-key", "Bearer"]

const expectClean = (error: unknown) => {
  const views = [
    String(error),
    JSON.stringify(error),
    (error as Error).message,
    JSON.stringify({ ...(error as object) }),
    Object.values(error as object).map((v) => JSON.stringify(v)).join(" ")
  ]
  for (const view of views) {
    for (const secret of forbidden) expect(view).not.toContain(secret)
  }
  expect(Object.keys(error as object)).not.toContain("cause")
  expect(Object.keys(error as object)).not.toContain("stack")
}

// The shared faults (a refusal echoing the secrets, a byte ceiling, a deadline, a missing
// response, a cut answer) are the contract suite's redaction family, on every row
// (packages/client/test/contract/). These are the HTTP-only answers it has no fault for.
const faults: ReadonlyArray<readonly [string, Testkit.Fault]> = [
  ["401", { on: "tools/call", kind: "status", status: 401, body: `no ${canaries.header}` }],
  ["403", { on: "tools/call", kind: "status", status: 403 }],
  ["500", { on: "tools/call", kind: "status", status: 500, body: `stack at ${canaries.query}` }],
  ["invalid UTF-8", { on: "tools/call", kind: "invalid-utf8" }],
  ["wrong content type", { on: "tools/call", kind: "wrong-content-type" }],
  // A URL elicitation required: the elicitations (their ids, URLs and messages carrying the
  // secrets) stay behind the error's getter; the message loses its URL and secrets.
  ["-32042 URL elicitation required", {
    on: "tools/call",
    kind: "jsonrpc-error",
    code: -32042,
    message: `open http://127.0.0.1/mcp?token=${canaries.query} (${canaries.header})`,
    data: {
      elicitations: [{
        mode: "url",
        elicitationId: canaries.password,
        url: `https://auth.example.com/${canaries.user}?t=${canaries.query}`,
        message: `Bearer ${canaries.header}`
      }]
    }
  }]
]

describe.each(httpClients)("credential fence through %s", (_, httpClient) => {
  for (const [name, fault] of faults) {
    it.scopedLive(`no secret in a ${name} failure`, () =>
      Effect.gen(function*() {
        const srv = yield* server()
        const connection = yield* McpClient.connect({
          url: withCanaries(srv.url),
          headers: { Authorization: `Bearer ${canaries.header}`, "X-Api-Key": canaries.header },
          policy: { call: { timeout: 500, maxBytes: 1_000 } }
        })
        srv.script(fault)
        const { error } = yield* failureOf(connection.callTool("increment"))
        expectClean(error)
        if (fault.kind === "jsonrpc-error") expect(error._tag).toBe("UrlElicitationRequired")
        // The credentials did go where they belong: to the configured origin.
        const call = srv.requests.find((r) => r.rpcMethod === "tools/call")!
        expect(call.headers["authorization"]).toBe(`Bearer ${canaries.header}`)
        expect(call.url).toContain(`token=${canaries.query}`)
      }).pipe(Effect.provide(httpClient)))
  }

  it.scopedLive("URL userinfo becomes a Basic Authorization header, and is not in the URL sent", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      yield* McpClient.connect({ url: withCanaries(srv.url) })
      const first = srv.requests[0]!
      const expected = `Basic ${Buffer.from(`${canaries.user}:${canaries.password}`).toString("base64")}`
      expect(first.headers["authorization"]).toBe(expected)
      expect(first.url).not.toContain(canaries.password)
    }).pipe(Effect.provide(httpClient)))

  it.scopedLive("no secret in a discovery failure either", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      srv.script({ on: "initialize", kind: "jsonrpc-error", code: -32600, message: `token ${canaries.query} rejected` })
      const { error } = yield* failureOf(McpClient.connect({ url: withCanaries(srv.url), headers: { authorization: canaries.header } }))
      expect(error).toMatchObject({ _tag: "RemoteRefusal", stage: "initialize", remoteMessage: "token [redacted] rejected" })
      expectClean(error)
    }).pipe(Effect.provide(httpClient)))

  it.effect("invalid options name the option, never its value", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(
        McpClient.connect({
          url: withCanaries("http://127.0.0.1:1/mcp"),
          headers: { authorization: `${canaries.header}\r\nInjected: yes` }
        }).pipe(Effect.scoped)
      )
      expect(bad).toMatchObject({ _tag: "InvalidOption", option: "headers", stage: "config", outcome: "not-sent" })
      expectClean(bad)
      const badUrl = yield* Effect.flip(McpClient.connect({ url: `ftp://${canaries.user}@host/x` }).pipe(Effect.scoped))
      expect(badUrl).toMatchObject({ _tag: "InvalidOption", option: "url" })
      expectClean(badUrl)
    }).pipe(Effect.provide(httpClient)))
})
