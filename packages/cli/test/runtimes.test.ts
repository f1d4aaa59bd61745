/**
 * The same CLI under Bun (on the TypeScript sources) and as the compiled single executable
 * (`bun build --compile`): a representative subset of the Node suite, covering both transports,
 * the exit-code families, the one-record rule with a flooding stdio server, secrets, SIGINT,
 * OAuth (client credentials with no login; login, the token file, logout), resources, prompts
 * and a call's log messages and idle timeout.
 */
import * as Testkit from "@phasebound/testkit"
import { chmodSync, mkdtempSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectDemo } from "./demo.js"
import { expectFailure, expectJson, run, shellQuote, waitFor, type Runtime, stdioFixtures } from "./support/cli.js"

let server: Testkit.TestServer
let features: Testkit.TestServer
beforeAll(async () => {
  server = await Testkit.startServer({ mode: "sse" })
  features = await Testkit.startServer({ mode: "sse", features: true })
})
afterAll(async () => {
  await server.close()
  await features.close()
})
beforeEach(() => server.clearFaults())

const OAUTH_SECRET = "CANARY-oauth-secret-5e"
let oauth: Testkit.OAuthTestServer
let protectedServer: Testkit.TestServer
let authDir: string
let browser: string
beforeAll(async () => {
  oauth = await Testkit.startOAuthServer({
    clients: [{ clientId: "svc", clientSecret: OAUTH_SECRET, grantTypes: ["client_credentials"] }]
  })
  protectedServer = await Testkit.startServer({ auth: { oauth } })
  authDir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-runtimes-"))
  // The "browser" GETs the authorization URL and follows the 302 to the CLI's listener.
  browser = path.join(authDir, "browser.mjs")
  writeFileSync(browser, `#!${process.execPath}\nfetch(process.argv[2]).then((r) => r.text()).catch(() => {})\n`)
  chmodSync(browser, 0o755)
})
afterAll(async () => {
  await protectedServer?.close()
  await oauth?.close()
})

const fixture = stdioFixtures()
const stdioLine = (f: Testkit.StdioFixture) => shellQuote([f.command, ...f.args])

describe.each<Runtime>(["bun", "compiled"])("under %s", (runtime) => {
  const cli = (args: ReadonlyArray<string>, options?: Parameters<typeof run>[2]) => run(runtime, args, options)

  it("--help (exit 0, stdout) and a usage error (exit 2, one record)", async () => {
    const help = await cli(["--help"])
    expect(help).toMatchObject({ code: 0, stderr: "" })
    expect(help.stdout).toContain("discover")
    expectFailure(await cli(["tools", "--frobnicate", server.url]), 2, "InvalidOption")
    expect(expectFailure(await cli(["tools", "--max-bytes", "0", server.url]), 2, "InvalidOption")).toMatchObject({
      option: "--max-bytes"
    })
  })

  it("HTTP: tools, call (0), isError (1), 401 (3), deadline (4), ceiling (5), refusal (6)", async () => {
    expect(expectJson(await cli(["tools", server.url]))).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expect(expectJson(await cli(["call", server.url, "add", "--args", "{\"a\":1,\"b\":2}"]))).toMatchObject({ content: [{ text: "3" }] })
    expect(expectJson(await cli(["call", server.url, "add"]), 1)).toMatchObject({ isError: true })
    server.script({ on: "initialize", kind: "status", status: 401 })
    expectFailure(await cli(["tools", server.url]), 3, "Unauthorized")
    server.script({ on: "tools/call", kind: "delay", ms: 3_000 })
    expectFailure(await cli(["call", "--call-timeout", "300ms", server.url, "increment"]), 4, "DeadlineExceeded")
    server.clearFaults()
    server.script({ on: "tools/call", kind: "exact-size", bytes: 3_000, as: "sse" })
    expectFailure(await cli(["call", "--call-max-bytes", "2000", server.url, "increment"]), 5, "ByteCeilingExceeded")
    server.script({ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: "no" })
    expectFailure(await cli(["call", server.url, "increment"]), 6, "RemoteRefusal")
  })

  it("stdio: a server flooding its stderr leaves nothing on ours; a failure is one record (7)", async () => {
    const flood = { kind: "stderr-flood", bytes: 256 * 1024 } as const
    const ok = fixture({ faults: [flood] })
    expect(expectJson(await cli(["tools", "--stdio", stdioLine(ok)]))).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    const exits = fixture({ faults: [flood, { on: "tools/call", kind: "exit", code: 3 }] })
    expectFailure(await cli(["call", "--stdio", stdioLine(exits), "increment"]), 7, "TransportFailure")
  })

  it("secrets from --header, ${VAR}, URL userinfo and query never printed, even with --debug (8)", async () => {
    const canaries = ["CANARY-h-71", "CANARY-v-72", "CANARY-u-73", "CANARY-q-74"]
    const url = new URL(server.url)
    url.username = "someone"
    url.password = canaries[2]!
    url.searchParams.set("k", canaries[3]!)
    const result = await cli(
      ["tools", "--debug", "--header", `X-Key: ${canaries[0]}`, "--header", "Authorization: ${PB_TOKEN}", url.toString()],
      { env: { PB_TOKEN: canaries[1]!, PHASEBOUND_TEST_DEFECT: "after-connect" } }
    )
    expect(result.code).toBe(8)
    expect(JSON.parse(result.stderr.split("\n")[0]!)).toMatchObject({ error: { tag: "InternalError", outcome: "unknown" } })
    for (const canary of canaries) expect(result.stdout + result.stderr).not.toContain(canary)
  })

  it("SIGINT during an HTTP call: 130, Interrupted, session DELETEd", async () => {
    server.script({ on: "tools/call", kind: "response-never-sent" })
    const calls = server.rpcCalls("tools/call")
    const deletes = server.deletes()
    const result = await cli(["call", server.url, "increment"], {
      onSpawn: (child) => void waitFor(() => server.rpcCalls("tools/call") > calls).then(() => child.kill("SIGINT"))
    })
    expectFailure(result, 130, "Interrupted")
    expect(server.deletes()).toBe(deletes + 1)
  })

  it("SIGINT during a stdio call: 130, Interrupted, the child is gone", async () => {
    const f = fixture({ faults: [{ on: "tools/call", kind: "never-answer" }] })
    const result = await cli(["call", "--stdio", stdioLine(f), "increment"], {
      onSpawn: (child) => void waitFor(() => f.rpcCalls("tools/call") === 1).then(() => child.kill("SIGINT"))
    })
    expectFailure(result, 130, "Interrupted")
    expect(f.isAlive()).toBe(false)
  })

  it("OAuth: client credentials with no login; login through the browser, tools from the token file, logout", async () => {
    const credentials = ["--auth-grant", "client_credentials", "--auth-client-id", "svc", "--auth-client-secret", "${PB_SECRET}"]
    const fresh = await cli(["tools", protectedServer.url, ...credentials], {
      env: { PB_SECRET: OAUTH_SECRET, PHASEBOUND_TOKEN_FILE: path.join(authDir, `${runtime}-cc`, "tokens.json") }
    })
    expect(expectJson(fresh)).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expect(fresh.stdout + fresh.stderr).not.toContain(OAUTH_SECRET)

    const tokenFile = path.join(authDir, `${runtime}-login`, "tokens.json")
    const env = { PHASEBOUND_BROWSER: browser, PHASEBOUND_TOKEN_FILE: tokenFile }
    const login = await cli(["login", protectedServer.url], { env })
    expect({ code: login.code, stderr: login.stderr }).toEqual({ code: 0, stderr: "" })
    const lines = login.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines).toHaveLength(2)
    expect(lines[0]).toHaveProperty("authorize")
    expect(lines[1]).toMatchObject({ loggedIn: true, authorized: true, tools: 3 })
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600)
    expectJson(await cli(["tools", protectedServer.url], { env }))
    expect(expectJson(await cli(["logout", protectedServer.url], { env }))).toEqual({ loggedOut: true, removed: true })
    expectFailure(await cli(["tools", protectedServer.url], { env }), 3, "Unauthorized")
  })

  it("resources, read, prompt; call --server-log-level (logs in the output) and --idle-timeout (4, idle-timeout)", async () => {
    expect(expectJson(await cli(["resources", features.url]))).toMatchObject({ resources: [{ uri: "test://docs/1" }, {}, {}, {}] })
    expect(expectJson(await cli(["read", features.url, "test://docs/1"]))).toMatchObject({ contents: [{ text: "Document 1" }] })
    expectFailure(await cli(["read", features.url, "test://nowhere"]), 6, "RemoteRefusal")
    expect(expectJson(await cli(["prompt", features.url, "greet", "--args", "{\"name\":\"Ada\"}"]))).toMatchObject({
      messages: [{ content: { text: "Hello, Ada" } }]
    })
    const log = ["call", features.url, "log", "--server-log-level", "info", "--args", "{\"level\":\"error\",\"message\":\"m\"}"]
    expect(expectJson(await cli(log))).toMatchObject({ logs: [{ level: "error", data: "m" }] })
    const slow = ["call", features.url, "slow_progress", "--args", "{\"steps\":2,\"intervalMs\":1000}", "--idle-timeout", "100ms"]
    expect(expectFailure(await cli(slow), 4, "DeadlineExceeded")).toMatchObject({ reason: "idle-timeout" })
  })

  it("demo: the same session and facts as under Node", async () => {
    expectDemo(await cli(["demo"]))
  })
})
