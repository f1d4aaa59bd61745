/**
 * Fixtures of the authorization suites (authorization*.e2e.test.ts): a loopback OAuth
 * authorization server and a protected MCP server from the testkit, a user who consents at once
 * (the interactive step follows /authorize without a browser), and readers of what each server
 * received.
 */
import {
  bearerTokenOf,
  type OAuthRecordedRequest,
  type OAuthServerOptions,
  type OAuthTestServer,
  type ProtectedResourceOptions,
  type RecordedHttpRequest,
  startOAuthServer,
  startServer,
  type TestServer,
  type TestServerOptions
} from "@phasebound/testkit"
import { Effect, Redacted } from "effect"
import { makePkce } from "../../src/internal/oauth/pkce.js"
import { expect } from "vitest"
import { Authorization, type McpClient, type McpSchema } from "../../src/index.js"

/**
 * The redirect URI of the authorization code grant. Nothing listens there: the interactive step
 * reads the authorization server's 302 itself (`authorizeDirect`), as a loopback listener would.
 */
export const redirectUri = "http://127.0.0.1:9/callback"

export const oauthServer = (options?: OAuthServerOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startOAuthServer(options)),
    (server) => Effect.promise(() => server.close())
  )

/** An MCP server whose endpoint is protected by `oauth` (testkit `auth`). */
export const protectedServer = (
  oauth: OAuthTestServer,
  options: Omit<TestServerOptions, "auth"> & { readonly auth?: Omit<ProtectedResourceOptions, "oauth"> } = {}
) =>
  Effect.acquireRelease(
    Effect.promise(() => startServer({ ...options, auth: { ...options.auth, oauth } })),
    (server) => Effect.promise(() => server.close())
  )

/** A server that has nothing to do with the connection: it must never be contacted. */
export const bystanderServer = () => Effect.acquireRelease(Effect.promise(() => startServer()), (server) => Effect.promise(() => server.close()))

export interface ConsentingUser {
  /** Every authorization URL shown to the user. */
  readonly urls: Array<URL>
  /** Every redirect the user agent landed on (code, state, iss). */
  readonly redirects: Array<string>
  readonly layer: ReturnType<typeof Authorization.layerInteractive>
}

/** The interactive step of a user who consents at once. */
export const consentingUser = (oauth: OAuthTestServer): ConsentingUser => {
  const urls: Array<URL> = []
  const redirects: Array<string> = []
  const layer = Authorization.layerInteractive((url) =>
    Effect.promise(async () => {
      urls.push(url)
      const redirect = await oauth.authorizeDirect(url)
      redirects.push(redirect)
      return redirect
    })
  )
  return { urls, redirects, layer }
}

/** Requests to the MCP endpoint (not the Protected Resource Metadata). */
export const mcpRequests = (server: TestServer): ReadonlyArray<RecordedHttpRequest> =>
  server.requests.filter((request) => new URL(request.url, "http://x").pathname === "/mcp")

export const toolCalls = (server: TestServer): ReadonlyArray<RecordedHttpRequest> => server.requests.filter((request) => request.rpcMethod === "tools/call")

export const bearerOf = (request: { readonly headers: Readonly<Record<string, string | Array<string> | undefined>> }) =>
  bearerTokenOf(request.headers["authorization"])

/** Token endpoint requests, of one grant when given. */
export const tokenRequests = (oauth: OAuthTestServer, grant?: string): ReadonlyArray<OAuthRecordedRequest> =>
  oauth.requests.filter((request) => request.endpoint === "token" && (grant === undefined || request.form["grant_type"] === grant))

export const textOf = (result: McpSchema.CallToolResult): string => (result.content[0] as { readonly text?: string } | undefined)?.text ?? ""

/** The operation, outcome and `resent` of each observation. */
export const summaryOf = (observations: ReadonlyArray<McpClient.Observation>) => observations.map((o) => [o.operation, o.outcome, o.resent ?? false] as const)

/** No view of `value` (an error, an observation list) contains any of `secrets`. */
export const expectNoSecret = (value: unknown, secrets: ReadonlyArray<string>) => {
  const views = [JSON.stringify(value), String(value)]
  if (value instanceof Error) {
    views.push(value.message, JSON.stringify({ ...value }), Object.values(value).map((v) => JSON.stringify(v)).join(" "))
  }
  for (const view of views) {
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8)
      expect(view, "a secret leaked into a public view").not.toContain(secret)
    }
  }
}

/** What the authorization server received, as one text (headers and bodies). */
export const everythingReceivedBy = (
  requests: ReadonlyArray<{ readonly url: string; readonly headers: object; readonly body: string }>
) => requests.map((r) => `${r.url} ${JSON.stringify(r.headers)} ${r.body}`).join("\n")

/**
 * A code from `server`'s /authorize for `clientId` (consent at once, `authorizeDirect`), with a
 * fresh PKCE pair: what the token endpoint's tests exchange.
 */
export const authorizationCode = (
  server: OAuthTestServer,
  clientId: string,
  request: { readonly redirectUri: string; readonly resource: string }
) =>
  Effect.gen(function*() {
    const pkce = yield* makePkce
    const url = new URL(server.authorizationEndpoint)
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: request.redirectUri,
      code_challenge: pkce.challenge,
      code_challenge_method: pkce.method,
      state: "st",
      resource: request.resource
    }).toString()
    const location = new URL(yield* Effect.promise(() => server.authorizeDirect(url)))
    const code = location.searchParams.get("code")
    if (code === null) throw new Error(`no code: ${location.search}`)
    return { code: Redacted.make(code), codeVerifier: pkce.verifier }
  })
