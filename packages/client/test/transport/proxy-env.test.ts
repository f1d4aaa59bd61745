/**
 * The Promise API's default HTTP client behind a proxy (docs/DESIGN.md, "Proxies"): with
 * `HTTP_PROXY` set it goes through the proxy (credentials to the proxy alone), `NO_PROXY` sends
 * a listed server around it, a proxy that stalls rejects with `DeadlineExceeded` and no
 * credential, one that resets the tunnel with `TransportFailure` `not-sent`, and one that quotes
 * its credentials back finds them redacted. The default client reads the environment once per process, at its first connect:
 * each case writes `process.env`, loads a fresh copy of the Promise API, and restores the
 * environment. Environment writes are why this file is in the slow tier (vitest.workspace.ts).
 */
import * as Testkit from "@phasebound/testkit"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { Effect, Exit, Scope } from "effect"
import type { McpConnectionError } from "../../src/index.js"
import type { ConnectOptions } from "../../src/promise.js"
import { loopbackProxy, type LoopbackProxy } from "../support/loopbackProxy.js"
import { publicViews } from "../support/publicViews.js"

const USER = "canary-promise-proxy-user"
const PASSWORD = "canary-promise-proxy-pass-61ad"
const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`
const withCredentials = (url: string) => url.replace("http://", `http://${USER}:${PASSWORD}@`)
const names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"] as const

let saved: Record<string, string | undefined>
let scope: Scope.CloseableScope
let proxy: LoopbackProxy
let srv: Testkit.TestServer

beforeEach(async () => {
  saved = Object.fromEntries(names.map((name) => [name, process.env[name]]))
  for (const name of names) delete process.env[name]
  scope = Effect.runSync(Scope.make())
  proxy = await Effect.runPromise(Scope.extend(loopbackProxy({ credentials: { user: USER, password: PASSWORD } }), scope))
  srv = await Testkit.startServer()
})
afterEach(async () => {
  for (const name of names) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
  await srv.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** A fresh Promise API: its default client reads the environment as it is now. */
const freshPromiseApi = async () => {
  vi.resetModules()
  return await import("../../src/promise.js")
}

/**
 * Behind a hostile proxy (`fault`), named by `variable` with the canary credentials: how a fresh
 * Promise API's `connect(options)` rejects, and the proxy (closed with the test's scope).
 */
const rejectionBehind = async (fault: Testkit.ProxyFault, variable: "HTTP_PROXY" | "HTTPS_PROXY", options: ConnectOptions) => {
  const hostile = await Effect.runPromise(Scope.extend(Testkit.scopedHostileProxy(fault), scope))
  process.env[variable] = withCredentials(hostile.url)
  const { connect } = await freshPromiseApi()
  const error = (await connect(options).then(() => undefined, (e: unknown) => e)) as McpConnectionError.McpConnectionError
  return { error, hostile }
}

describe("the Promise API's default client", () => {
  it("HTTP_PROXY: every request through the proxy, in absolute form; the server never sees the proxy's credentials", async () => {
    process.env["HTTP_PROXY"] = withCredentials(proxy.url)
    const { connect } = await freshPromiseApi()
    const connection = await connect({ url: srv.url })
    expect(await connection.callTool("increment")).toMatchObject({ content: [{ type: "text", text: "1" }] })
    await connection.close()
    expect(proxy.received.length).toBe(srv.requests.length)
    expect(proxy.received.every((request) => request.kind === "absolute" && request.proxyAuthorization === basic)).toBe(true)
    for (const request of srv.requests) expect(request.headers["proxy-authorization"]).toBeUndefined()
  })

  it("NO_PROXY naming the server: reached directly, the proxy counts none", async () => {
    process.env["http_proxy"] = withCredentials(proxy.url)
    process.env["no_proxy"] = "localhost, 127.0.0.1"
    const { connect } = await freshPromiseApi()
    const connection = await connect({ url: srv.url })
    await connection.close()
    expect(srv.requests.length).toBeGreaterThan(0)
    expect(proxy.received).toEqual([])
  })

  it("a proxy that never answers: DeadlineExceeded at the discovery deadline, no credential in the error", async () => {
    const { error, hostile: stalling } = await rejectionBehind({ kind: "stall" }, "HTTPS_PROXY", {
      url: "https://127.0.0.1:1/mcp",
      policy: { discovery: { timeout: "500 millis" } }
    })
    expect(error).toMatchObject({ _tag: "DeadlineExceeded", phase: "discovery", limits: { timeoutMs: 500 } })
    expect((await stalling.arrived).method).toBe("CONNECT")
    for (const view of publicViews(error)) {
      expect(view).not.toContain(PASSWORD)
      expect(view).not.toContain(basic.slice(6))
    }
  })

  it("a proxy that quotes its credentials back for the server: the rejection's remoteMessage has neither form", async () => {
    const { error, hostile: echoing } = await rejectionBehind({ kind: "echo-credentials" }, "HTTP_PROXY", { url: srv.url })
    expect(error).toMatchObject({ _tag: "RemoteRefusal", code: -32600 })
    expect(error.remoteMessage).toContain("Proxy-Authorization: Basic [redacted] ([redacted])")
    expect(echoing.requests[0]?.headers["proxy-authorization"]).toBe(basic)
    for (const view of [String(error), error.message, JSON.stringify(error)]) {
      expect(view).not.toContain(USER)
      expect(view).not.toContain(PASSWORD)
      expect(view).not.toContain(basic.slice(6))
    }
  })

  it("a proxy that resets the CONNECT: TransportFailure, not-sent (the tunnel never opened), no credential", async () => {
    const { error, hostile: resetting } = await rejectionBehind({ kind: "reset" }, "HTTPS_PROXY", { url: "https://127.0.0.1:1/mcp" })
    expect(error).toMatchObject({ _tag: "TransportFailure", reason: "connection-failed", outcome: "not-sent" })
    expect((await resetting.arrived).method).toBe("CONNECT")
    for (const view of publicViews(error)) {
      expect(view).not.toContain(PASSWORD)
      expect(view).not.toContain(basic.slice(6))
    }
  })

  it("a malformed proxy variable: the connect rejects with InvalidOption naming it; fixed, the next connect works", async () => {
    process.env["HTTPS_PROXY"] = `ftp://${USER}:${PASSWORD}@proxy.example:21`
    const { connect } = await freshPromiseApi()
    const error = await connect({ url: srv.url }).then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InvalidOption", option: "HTTPS_PROXY", reason: "invalid-url" })
    expect(JSON.stringify(error)).not.toContain(PASSWORD)
    // The failure is not kept: the same module reads the environment again.
    delete process.env["HTTPS_PROXY"]
    const connection = await connect({ url: srv.url })
    await connection.close()
    expect(proxy.received).toEqual([])
  })
})
