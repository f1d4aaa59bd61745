/**
 * HTTP(S) proxies (docs/DESIGN.md, "Proxies"), over real loopback proxies: `HttpProxy.layer`
 * sends an `http` MCP server's requests in absolute form and an `https` one's through `CONNECT`
 * (TLS to the server inside the tunnel), as the proxy itself records; `NO_PROXY` sends them
 * directly; the proxy's credentials reach the proxy and never the server; a proxy that quotes
 * them back for the server finds them redacted, in the error and in every span; and every way a
 * proxy can refuse, stall, reset or babble ends typed, under the phase's deadline, with no
 * credential in any view of the error, and `not-sent` when the tunnel broke before it opened.
 */
import { describe, expect, it } from "@effect/vitest"
import { scopedHostileProxy } from "@phasebound/testkit"
import { Cause, ConfigProvider, Effect, Exit, Layer } from "effect"
import { HttpProxy, McpClient, McpConnectionError } from "../../src/index.js"
import { make as makeProxied } from "../../src/internal/proxyClient.js"
import { settingsOf } from "../../src/internal/proxyRoute.js"
import { server } from "../support/harness.js"
import { loopbackCertificate } from "../support/loopbackCertificate.js"
import { httpsFront, loopbackProxy } from "../support/loopbackProxy.js"
import { publicViews } from "../support/publicViews.js"
import { type Recorded, recordingTracer } from "../support/recordingTracer.js"
import * as HttpClient from "@effect/platform/HttpClient"

const USER = "canary-proxy-user"
const PASSWORD = "canary-proxy-pass-4f1c"
const credentialsIn = (proxyUrl: string) => proxyUrl.replace(/^(https?):\/\//, `$1://${USER}:${PASSWORD}@`)
const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`

const tls = loopbackCertificate

/**
 * `HttpProxy.layer`, trusting the test certificate for the server behind a tunnel and for an
 * `https://` proxy (the only test-only knob), unless `trustProxy` is false.
 */
const proxied = (options: HttpProxy.Options, trustProxy = true) =>
  Layer.scoped(
    HttpClient.HttpClient,
    Effect.flatMap(
      settingsOf(options, { http: "httpProxy", https: "httpsProxy" }),
      (settings) => makeProxied(settings, { requestTls: { ca: tls.cert }, ...(trustProxy ? { proxyTls: { ca: tls.cert } } : {}) })
    )
  )

/** No canary of the proxy's credentials, raw or as their Basic form, in any view of the error. */
const expectNoCredential = (error: McpConnectionError.McpConnectionError) => {
  for (const view of publicViews(error)) {
    expect(view).not.toContain(PASSWORD)
    expect(view).not.toContain(USER)
    expect(view).not.toContain(basic.slice(6))
  }
}

const quick = { discovery: { timeout: "600 millis" } } as const

/** Every text a span exporter could hold: names, attributes, events, and the failure it ended with (as an exporter renders it). */
const spanTexts = (spans: ReadonlyArray<Recorded>): ReadonlyArray<string> =>
  spans.flatMap((span) => [
    JSON.stringify([span.name, [...span.attributes], span.events]),
    ...(span.exit !== undefined && Exit.isFailure(span.exit) ? [Cause.pretty(span.exit.cause), JSON.stringify(span.exit.cause)] : [])
  ])

const expectNoCredentialIn = (texts: ReadonlyArray<string>) => {
  for (const text of texts) {
    expect(text).not.toContain(PASSWORD)
    expect(text).not.toContain(USER)
    expect(text).not.toContain(basic.slice(6))
  }
}

describe("proxies", () => {
  it.scopedLive("an http server through HttpProxy.layer: absolute form, and the proxy's credentials stop at the proxy", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy({ credentials: { user: USER, password: PASSWORD } })
      const mcp = yield* server()
      const result = yield* Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: mcp.url, transport: "streamable-http" })
        return yield* connection.callTool("increment")
      }).pipe(Effect.scoped, Effect.provide(HttpProxy.layer({ httpProxy: credentialsIn(proxy.url) })))
      expect(result).toMatchObject({ content: [{ type: "text", text: "1" }] })
      expect(mcp.counter()).toBe(1)
      // Every request went through the proxy, each as an absolute URL, none as a tunnel.
      expect(proxy.received.length).toBe(mcp.requests.length)
      expect(proxy.received.every((request) => request.kind === "absolute" && request.target.startsWith(`${mcp.url}`))).toBe(true)
      expect(proxy.received.every((request) => request.proxyAuthorization === basic)).toBe(true)
      // The MCP server never saw them.
      for (const request of mcp.requests) {
        expect(request.headers["proxy-authorization"]).toBeUndefined()
        expect(JSON.stringify(request)).not.toContain(PASSWORD)
        expect(JSON.stringify(request)).not.toContain(basic.slice(6))
      }
    }))

  it.scopedLive("an https server: a CONNECT tunnel to its host and port, TLS inside it, credentials on the CONNECT only", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy({ credentials: { user: USER, password: PASSWORD } })
      const mcp = yield* server()
      const front = yield* httpsFront(new URL(mcp.url).origin, tls)
      const result = yield* Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: `${front.origin}/mcp`, transport: "streamable-http" })
        return yield* connection.callTool("increment")
      }).pipe(Effect.scoped, Effect.provide(proxied({ httpsProxy: credentialsIn(proxy.url) })))
      expect(result).toMatchObject({ content: [{ type: "text", text: "1" }] })
      expect(proxy.received.length).toBeGreaterThan(0)
      expect(proxy.received.every((request) => request.kind === "connect" && request.target === `127.0.0.1:${front.port}`)).toBe(true)
      expect(proxy.received.every((request) => request.proxyAuthorization === basic)).toBe(true)
      expect(front.received.length).toBe(mcp.requests.length)
      for (const headers of front.received) expect(headers["proxy-authorization"]).toBeUndefined()
      expect(mcp.counter()).toBe(1)
    }))

  it.scopedLive("an https:// proxy: TLS to the proxy, then a tunnel to each server (undici tunnels http targets too through a TLS proxy)", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy({ credentials: { user: USER, password: PASSWORD }, tls })
      expect(proxy.url.startsWith("https://")).toBe(true)
      const mcp = yield* server()
      const front = yield* httpsFront(new URL(mcp.url).origin, tls)
      for (const url of [mcp.url, `${front.origin}/mcp`]) {
        const result = yield* Effect.gen(function*() {
          const connection = yield* McpClient.connect({ url, transport: "streamable-http" })
          return yield* connection.callTool("increment")
        }).pipe(Effect.scoped, Effect.provide(proxied({ httpProxy: credentialsIn(proxy.url) })))
        expect(result.isError).not.toBe(true)
      }
      expect(mcp.counter()).toBe(2)
      expect(proxy.received.every((request) => request.kind === "connect")).toBe(true)
      expect(new Set(proxy.received.map((request) => request.target))).toEqual(new Set([`127.0.0.1:${mcp.port}`, `127.0.0.1:${front.port}`]))
      expect(proxy.received.every((request) => request.proxyAuthorization === basic)).toBe(true)
      for (const request of mcp.requests) expect(request.headers["proxy-authorization"]).toBeUndefined()
    }))

  it.scopedLive("an https:// proxy whose certificate is not trusted: TransportFailure, not-sent, nothing reaches it", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy({ credentials: { user: USER, password: PASSWORD }, tls })
      const mcp = yield* server()
      const error = yield* Effect.flip(
        McpClient.connect({ url: mcp.url, transport: "streamable-http" }).pipe(
          Effect.scoped,
          Effect.provide(proxied({ httpProxy: credentialsIn(proxy.url) }, false))
        )
      )
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "connection-failed", outcome: "not-sent" })
      expectNoCredential(error)
      expect(proxy.received).toEqual([])
      expect(mcp.requests).toEqual([])
    }))

  it.scopedLive("HTTP_PROXY alone proxies https servers too (a tunnel)", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy()
      const mcp = yield* server()
      const front = yield* httpsFront(new URL(mcp.url).origin, tls)
      yield* McpClient.connect({ url: `${front.origin}/mcp`, transport: "streamable-http" }).pipe(
        Effect.scoped,
        Effect.provide(proxied({ httpProxy: proxy.url }))
      )
      expect(proxy.received.length).toBeGreaterThan(0)
      expect(proxy.received.every((request) => request.kind === "connect")).toBe(true)
    }))

  it.scopedLive("NO_PROXY: a listed host is reached directly (the proxy counts none), an unlisted port still goes through it", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy()
      const mcp = yield* server()
      const connectVia = (noProxy: string) =>
        McpClient.connect({ url: mcp.url, transport: "streamable-http" }).pipe(
          Effect.flatMap((connection) => connection.callTool("increment")),
          Effect.scoped,
          Effect.provide(HttpProxy.layer({ httpProxy: proxy.url, noProxy }))
        )
      yield* connectVia("example.com, 127.0.0.1")
      expect(mcp.counter()).toBe(1)
      expect(proxy.received).toEqual([])
      yield* connectVia(`localhost,127.0.0.1:${mcp.port + 1 === 65_536 ? 1 : mcp.port + 1}`)
      expect(mcp.counter()).toBe(2)
      expect(proxy.received.length).toBeGreaterThan(0)
      const before = proxy.received.length
      yield* connectVia("*")
      expect(mcp.counter()).toBe(3)
      expect(proxy.received.length).toBe(before)
    }))

  it.scopedLive("wrong proxy credentials: TransportFailure proxy-auth-required, not-sent, nothing reaches the server", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy({ credentials: { user: USER, password: "another" } })
      const mcp = yield* server()
      const front = yield* httpsFront(new URL(mcp.url).origin, tls)
      for (
        const [url, layer] of [[mcp.url, HttpProxy.layer({ httpProxy: credentialsIn(proxy.url) })], [
          `${front.origin}/mcp`,
          proxied({ httpsProxy: credentialsIn(proxy.url) })
        ]] as const
      ) {
        const error = yield* Effect.flip(McpClient.connect({ url, transport: "streamable-http" }).pipe(Effect.scoped, Effect.provide(layer)))
        expect(error).toMatchObject({ _tag: "TransportFailure", reason: "proxy-auth-required", status: 407, outcome: "not-sent" })
        expectNoCredential(error)
      }
      expect(mcp.requests).toEqual([])
      expect(front.received).toEqual([])
    }))

  it.scopedLive("a credential for a plain-http server is never sent through a proxy off this machine", () =>
    Effect.gen(function*() {
      const mcp = yield* server()
      // 192.0.2.1 (TEST-NET-1): never contacted, the request is refused before any I/O.
      const error = yield* Effect.flip(
        McpClient.connect({ url: mcp.url, transport: "streamable-http", headers: { authorization: "Bearer canary-bearer" } }).pipe(
          Effect.scoped,
          Effect.provide(HttpProxy.layer({ httpProxy: "http://192.0.2.1:3128" }))
        )
      )
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "insecure-url", outcome: "not-sent" })
      expect(JSON.stringify(error)).not.toContain("canary-bearer")
      // Through a proxy on loopback it goes.
      const proxy = yield* loopbackProxy()
      yield* McpClient.connect({ url: mcp.url, transport: "streamable-http", headers: { authorization: "Bearer canary-bearer" } }).pipe(
        Effect.scoped,
        Effect.provide(HttpProxy.layer({ httpProxy: proxy.url }))
      )
      expect(mcp.requests.at(-1)?.headers["authorization"]).toBe("Bearer canary-bearer")
    }))

  it.scopedLive("HttpProxy.layerEnv reads the variables through Config: lower case first, NO_PROXY, a malformed value refused by name", () =>
    Effect.gen(function*() {
      const proxy = yield* loopbackProxy()
      const mcp = yield* server()
      const withEnv = (env: Record<string, string>) =>
        Layer.provide(HttpProxy.layerEnv, Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
      const connectWith = (env: Record<string, string>) =>
        McpClient.connect({ url: mcp.url, transport: "streamable-http" }).pipe(Effect.scoped, Effect.provide(withEnv(env)))
      // The upper-case value names a port nothing listens on: it must not be used.
      yield* connectWith({ http_proxy: proxy.url, HTTP_PROXY: "http://127.0.0.1:1" })
      const through = proxy.received.length
      expect(through).toBeGreaterThan(0)
      yield* connectWith({ HTTP_PROXY: proxy.url, no_proxy: "127.0.0.1", NO_PROXY: "nothing.example" })
      expect(proxy.received.length).toBe(through)
      yield* connectWith({})
      expect(proxy.received.length).toBe(through)
      const error = yield* Effect.flip(connectWith({ HTTPS_PROXY: `http://${USER}:${PASSWORD}@proxy.example:3128/path` }))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "HTTPS_PROXY", reason: "invalid-url" })
      expectNoCredential(error)
    }))

  it.effect("a malformed proxy URL is InvalidOption naming the option, never its value", () =>
    Effect.gen(function*() {
      for (
        const [options, option] of [
          [{ httpsProxy: `ftp://${USER}:${PASSWORD}@proxy:21` }, "httpsProxy"],
          [{ httpProxy: `http://${USER}:${PASSWORD}@proxy:3128/path` }, "httpProxy"],
          [{ httpProxy: `not a url ${PASSWORD}` }, "httpProxy"]
        ] as const
      ) {
        const error = yield* Effect.flip(Layer.build(HttpProxy.layer(options)).pipe(Effect.scoped))
        expect(error).toMatchObject({ _tag: "InvalidOption", option, reason: "invalid-url", stage: "config" })
        expectNoCredential(error)
      }
    }))
})

/**
 * In absolute form the proxy answers for the server: a proxy that quotes the `Proxy-Authorization`
 * it received (the header, and `user:password` decoded) in a JSON-RPC error. Its credentials are
 * in the connection's redaction set whenever the client goes through it.
 */
describe("a proxy that quotes its credentials back", () => {
  const fromEnv = (env: Record<string, string>) =>
    Layer.provide(HttpProxy.layerEnv, Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

  it.scopedLive("HttpProxy.layer and layerEnv: RemoteRefusal, its remoteMessage redacted in every view", () =>
    Effect.gen(function*() {
      const proxy = yield* scopedHostileProxy({ kind: "echo-credentials" })
      const mcp = yield* server()
      for (const layer of [HttpProxy.layer({ httpProxy: credentialsIn(proxy.url) }), fromEnv({ http_proxy: credentialsIn(proxy.url) })]) {
        const error = yield* Effect.flip(McpClient.connect({ url: mcp.url, transport: "streamable-http" }).pipe(Effect.scoped, Effect.provide(layer)))
        expect(error).toMatchObject({ _tag: "RemoteRefusal", code: -32600 })
        // The proxy did say it, and the rest of what it said is kept.
        expect(error.remoteMessage).toContain("proxy rejected Proxy-Authorization: Basic [redacted] ([redacted])")
        // Every view but the cause, which keeps the peer's error object as it came, in process.
        expectNoCredentialIn([
          String(error),
          error.message,
          JSON.stringify(error),
          JSON.stringify(McpConnectionError.toRecord(error)),
          JSON.stringify({ ...error })
        ])
      }
      expect(proxy.requests.length).toBeGreaterThan(0)
      expect(proxy.requests.every((request) => request.headers["proxy-authorization"] === basic)).toBe(true)
      expect(mcp.requests).toEqual([])
    }))

  it.scopedLive("the spans of a proxied connection hold no credential: attributes, events, and the failure an exporter records", () =>
    Effect.gen(function*() {
      const spans: Array<Recorded> = []
      const mcp = yield* server()
      const real = yield* loopbackProxy({ credentials: { user: USER, password: PASSWORD } })
      yield* Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: mcp.url, transport: "streamable-http" })
        yield* connection.callTool("increment")
      }).pipe(Effect.scoped, Effect.provide(HttpProxy.layer({ httpProxy: credentialsIn(real.url) })), Effect.withTracer(recordingTracer(spans)))
      const echoing = yield* scopedHostileProxy({ kind: "echo-credentials" })
      yield* Effect.flip(
        McpClient.connect({ url: mcp.url, transport: "streamable-http" }).pipe(
          Effect.scoped,
          Effect.provide(HttpProxy.layer({ httpProxy: credentialsIn(echoing.url) })),
          Effect.withTracer(recordingTracer(spans))
        )
      )
      expect(spans.map((span) => span.name)).toEqual(expect.arrayContaining(["mcp.connect", "mcp.tools.call"]))
      const failed = spans.filter((span) => span.exit !== undefined && Exit.isFailure(span.exit))
      expect(failed.map((span) => span.name)).toContain("mcp.connect")
      // The refusal is in what the exporter would record, its message redacted.
      expect(failed.map((span) => Cause.pretty((span.exit as Exit.Failure<unknown, unknown>).cause)).join("\n")).toContain("[redacted]")
      expectNoCredentialIn(spanTexts(spans))
    }))
})

/** Each hostile proxy, for an http server (absolute form) and an https one (CONNECT). */
describe("hostile proxies", () => {
  const targets = ["http", "https"] as const

  describe.each(targets)("%s server", (scheme) => {
    const connectThrough = (proxyUrl: string) =>
      Effect.gen(function*() {
        const mcp = yield* server()
        const front = yield* httpsFront(new URL(mcp.url).origin, tls)
        const url = scheme === "http" ? mcp.url : `${front.origin}/mcp`
        const options = scheme === "http" ? { httpProxy: credentialsIn(proxyUrl) } : { httpsProxy: credentialsIn(proxyUrl) }
        const error = yield* Effect.flip(
          McpClient.connect({ url, transport: "streamable-http", policy: quick }).pipe(Effect.scoped, Effect.provide(proxied(options)))
        )
        expectNoCredential(error)
        // Nothing got past the proxy.
        expect(mcp.requests).toEqual([])
        return error
      })

    it.scopedLive("a proxy that accepts and never answers: the discovery deadline ends it, and the client lets go of the proxy", () =>
      Effect.gen(function*() {
        const proxy = yield* scopedHostileProxy({ kind: "stall" })
        const error = yield* connectThrough(proxy.url)
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", phase: "discovery", limits: { timeoutMs: 600 } })
        // The proxy did get the request (the deadline fired on its silence, not on a refused connection).
        const first = yield* Effect.promise(() => proxy.arrived)
        expect(first.method).toBe(scheme === "http" ? "POST" : "CONNECT")
        expect(first.headers["proxy-authorization"]).toBe(basic)
        yield* Effect.promise(() => proxy.drained())
      }))

    it.each([407, 403, 502] as const)("a proxy that answers %s", (status) =>
      Effect.gen(function*() {
        const proxy = yield* scopedHostileProxy({ kind: "status", status })
        const error = yield* connectThrough(proxy.url)
        if (status === 407) {
          expect(error).toMatchObject({ _tag: "TransportFailure", reason: "proxy-auth-required", status, outcome: "not-sent" })
        } else if (scheme === "https") {
          expect(error).toMatchObject({ _tag: "TransportFailure", reason: "proxy-refused", status, outcome: "not-sent" })
        } else {
          // In absolute form a proxy's 403 or 502 cannot be told from the server's own.
          expect(error).toMatchObject({ _tag: status === 403 ? "Forbidden" : "UpstreamFailure", status })
        }
      }).pipe(Effect.scoped, Effect.runPromise))

    // A CONNECT that breaks before its 200 carried nothing for the server: not-sent. In absolute
    // form the proxy received the request itself (it may have passed it on): unknown.
    const beforeTheTunnel = scheme === "https"
      ? { reason: "connection-failed", outcome: "not-sent", retryable: true }
      : { reason: "connection-closed", outcome: "unknown" }

    it.scopedLive("a proxy that resets the connection when the request arrives: TransportFailure", () =>
      Effect.gen(function*() {
        const proxy = yield* scopedHostileProxy({ kind: "reset" })
        const error = yield* connectThrough(proxy.url)
        expect(error).toMatchObject({ _tag: "TransportFailure", ...beforeTheTunnel })
        expect(proxy.requests.length).toBeGreaterThan(0)
      }))

    it.each(["garbage", "oversized-head"] as const)("a proxy that answers %s: TransportFailure, not-sent through a tunnel", (kind) =>
      Effect.gen(function*() {
        const proxy = yield* scopedHostileProxy({ kind })
        const error = yield* connectThrough(proxy.url)
        expect(error).toMatchObject({ _tag: "TransportFailure", ...beforeTheTunnel })
        expect(proxy.requests[0]?.method).toBe(scheme === "http" ? "POST" : "CONNECT")
      }).pipe(Effect.scoped, Effect.runPromise))

    it.scopedLive("a proxy that resets in the middle of the answer (or of the tunnel): TransportFailure", () =>
      Effect.gen(function*() {
        const proxy = yield* scopedHostileProxy({ kind: "reset-mid-response" })
        const error = yield* connectThrough(proxy.url)
        // Through a tunnel the reset breaks the TLS handshake inside it: the request was never written.
        expect(error).toMatchObject({ _tag: "TransportFailure", outcome: scheme === "https" ? "not-sent" : "unknown" })
        expect(proxy.requests.length).toBeGreaterThan(0)
      }))
  })
})
