/**
 * The CLI behind a proxy (docs/DESIGN.md, "Proxies"), as a subprocess under Node, Bun and the
 * compiled executable: `HTTP_PROXY` sends its requests through a real loopback proxy (which
 * counts them) and `NO_PROXY` around it; a proxy that stalls, asks for credentials or refuses
 * ends the run with exactly one JSON record on stderr and its exit code, with the proxy's
 * credentials nowhere in it, even when the proxy quotes them back for the server.
 */
import * as Testkit from "@phasebound/testkit"
import * as http from "node:http"
import type { Socket } from "node:net"
import { createProxy } from "proxy"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectFailure, expectJson, recordOf, run, type Runtime } from "./support/cli.js"

const USER = "canary-cli-proxy-user"
const PASSWORD = "canary-cli-proxy-pass-93be"
const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`
const withCredentials = (url: string) => url.replace("http://", `http://${USER}:${PASSWORD}@`)

let server: Testkit.TestServer
let proxy: http.Server
let proxyUrl: string
const proxied: Array<{ readonly target: string; readonly proxyAuthorization: string | undefined }> = []
const sockets = new Set<Socket>()

beforeAll(async () => {
  server = await Testkit.startServer()
  proxy = createProxy(http.createServer())
  proxy.prependListener(
    "request",
    (req: http.IncomingMessage) => proxied.push({ target: req.url ?? "", proxyAuthorization: req.headers["proxy-authorization"] })
  )
  proxy.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve()))
  const address = proxy.address()
  proxyUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
})
afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise<void>((resolve) => proxy.close(() => resolve()))
  await server.close()
})

const expectNoCredential = (text: string) => {
  expect(text).not.toContain(USER)
  expect(text).not.toContain(PASSWORD)
  expect(text).not.toContain(basic.slice(6))
}

describe.each(["node", "bun", "compiled"] as ReadonlyArray<Runtime>)("behind a proxy, %s", (runtime) => {
  it("HTTP_PROXY: every request goes through the proxy, its credentials to the proxy alone", async () => {
    const before = proxied.length
    const requestsBefore = server.requests.length
    const out = expectJson(await run(runtime, ["tools", server.url], { env: { HTTP_PROXY: withCredentials(proxyUrl) } }))
    expect(out).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    const through = proxied.slice(before)
    const reached = server.requests.slice(requestsBefore)
    expect(through.length).toBeGreaterThan(0)
    expect(through.length).toBe(reached.length)
    expect(through.every((request) => request.target.startsWith(server.url) && request.proxyAuthorization === basic)).toBe(true)
    for (const request of reached) expect(request.headers["proxy-authorization"]).toBeUndefined()
  })

  it("lower-case http_proxy wins over HTTP_PROXY; NO_PROXY sends the server's requests around the proxy", async () => {
    const before = proxied.length
    // The upper-case value points nowhere: it must not be used.
    expectJson(await run(runtime, ["tools", server.url], { env: { http_proxy: proxyUrl, HTTP_PROXY: "http://127.0.0.1:1" } }))
    expect(proxied.length).toBeGreaterThan(before)
    const after = proxied.length
    const requestsBefore = server.requests.length
    expectJson(await run(runtime, ["tools", server.url], { env: { HTTP_PROXY: proxyUrl, NO_PROXY: "localhost,127.0.0.1" } }))
    expect(proxied.length).toBe(after)
    expect(server.requests.length).toBeGreaterThan(requestsBefore)
  })

  for (const scheme of ["http", "https"] as const) {
    // An https server behind a hostile proxy is never reached: a port nothing listens on will do.
    const target = () => scheme === "http" ? server.url : "https://127.0.0.1:1/mcp"
    const variable = scheme === "http" ? "HTTP_PROXY" : "HTTPS_PROXY"

    it(`${scheme}: a proxy that never answers: the discovery deadline, exit 4, one record without the credentials`, async () => {
      const stalling = await Testkit.startHostileProxy({ kind: "stall" })
      try {
        const result = await run(runtime, ["tools", target(), "--discovery-timeout", "800ms"], { env: { [variable]: withCredentials(stalling.url) } })
        const record = expectFailure(result, 4, "DeadlineExceeded")
        expect(record).toMatchObject({ phase: "discovery", limits: { timeoutMs: 800 } })
        expect(stalling.requests[0]?.method).toBe(scheme === "http" ? "POST" : "CONNECT")
        expect(stalling.requests[0]?.headers["proxy-authorization"]).toBe(basic)
        expectNoCredential(result.stderr)
      } finally {
        await stalling.close()
      }
    })

    it(`${scheme}: a proxy that answers 407: TransportFailure proxy-auth-required, exit 7, one record without the credentials`, async () => {
      const refusing = await Testkit.startHostileProxy({ kind: "status", status: 407 })
      try {
        const result = await run(runtime, ["tools", target()], { env: { [variable]: withCredentials(refusing.url) } })
        const record = expectFailure(result, 7, "TransportFailure")
        expect(record).toMatchObject({ reason: "proxy-auth-required", status: 407, outcome: "not-sent" })
        expectNoCredential(result.stderr)
      } finally {
        await refusing.close()
      }
    })
  }

  it("a proxy that answers for the server quoting its credentials: RemoteRefusal, exit 6, the record's message redacted", async () => {
    const echoing = await Testkit.startHostileProxy({ kind: "echo-credentials" })
    try {
      const result = await run(runtime, ["tools", server.url], { env: { HTTP_PROXY: withCredentials(echoing.url) } })
      const record = expectFailure(result, 6, "RemoteRefusal")
      expect(echoing.requests[0]?.headers["proxy-authorization"]).toBe(basic)
      // The proxy's words are there, its credentials are not.
      expect(record["remoteMessage"]).toContain("Proxy-Authorization: Basic [redacted] ([redacted])")
      expectNoCredential(result.stderr)
      expectNoCredential(result.stdout)
    } finally {
      await echoing.close()
    }
  })

  it("--debug: an internal error's cause printed with the proxy's credentials scrubbed, in every form", async () => {
    const result = await run(runtime, ["tools", server.url, "--debug"], {
      env: {
        HTTP_PROXY: withCredentials(proxyUrl),
        https_proxy: withCredentials(proxyUrl),
        // Not read (the lower-case name wins), not a URL, and still a secret.
        HTTPS_PROXY: `not a url ${PASSWORD}`,
        PHASEBOUND_TEST_DEFECT: "after-connect"
      }
    })
    expect(result.code).toBe(8)
    const [record, ...debugLines] = result.stderr.trim().split("\n")
    expect(JSON.parse(record!)).toMatchObject({ error: { tag: "InternalError" } })
    expect(debugLines.join("\n")).toContain("test defect")
    expect(debugLines.join("\n")).toContain(proxyUrl.replace("http://", ""))
    expectNoCredential(result.stderr)
  })

  it("a malformed proxy variable: InvalidOption naming the variable, never its value", async () => {
    const result = await run(runtime, ["tools", server.url], { env: { HTTPS_PROXY: `ftp://${USER}:${PASSWORD}@proxy:21` } })
    const record = recordOf(result)
    expect({ code: result.code, tag: record.tag, option: record["option"], reason: record["reason"] }).toEqual({
      code: 2,
      tag: "InvalidOption",
      option: "HTTPS_PROXY",
      reason: "invalid-url"
    })
    expectNoCredential(result.stderr)
  })
})
