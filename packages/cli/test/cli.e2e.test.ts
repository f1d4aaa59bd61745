/**
 * The `phasebound` CLI as a subprocess (the Node bundle) against testkit servers over HTTP and
 * stdio: every exit code, one JSON record on stderr and nothing else, secrets never printed,
 * SIGINT during a call, config-file targets of both kinds.
 */
import * as Testkit from "@phasebound/testkit"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectDemo } from "./demo.js"
import { expectFailure, expectJson, run, shellQuote, waitFor, type RunResult, stdioFixtures } from "./support/cli.js"

let server: Testkit.TestServer
beforeAll(async () => {
  server = await Testkit.startServer()
})
afterAll(() => server.close())
beforeEach(() => server.clearFaults())

const node = (args: ReadonlyArray<string>, options?: Parameters<typeof run>[2]) => run("node", args, options)

const fixture = stdioFixtures()
const stdioLine = (f: Testkit.StdioFixture) => shellQuote([f.command, ...f.args])

describe("success", () => {
  it("tools: JSON on a non-TTY stdout, nothing on stderr", async () => {
    const out = expectJson(await node(["tools", server.url]))
    expect(out).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
  })

  it("call: one call, its result on stdout, exit 0; --args is a JSON object", async () => {
    const before = server.rpcCalls("tools/call")
    const out = expectJson(await node(["call", server.url, "add", "--args", "{\"a\":20,\"b\":22}"]))
    expect(out).toMatchObject({ content: [{ type: "text", text: "42" }] })
    expect(server.rpcCalls("tools/call")).toBe(before + 1)
  })

  it("call --effect-identity: the key reaches the server in _meta, once", async () => {
    const before = server.requests.length
    expectJson(await node(["call", server.url, "add", "--args", "{\"a\":1,\"b\":2}", "--effect-identity", "order-9/charge"]))
    const calls = server.requests.slice(before).filter((r) => r.rpcMethod === "tools/call")
    expect(calls.map((r) => (r as Testkit.RecordedHttpRequest).meta?.["io.phasebound/effect-identity"])).toEqual(["order-9/charge"])
  })

  it("ping: discovery, then one ping; the round trip on stdout", async () => {
    const before = server.rpcCalls("ping")
    const out = expectJson(await node(["ping", "--json", server.url])) as { ms?: unknown }
    expect(out).toMatchObject({ transport: "streamable-http", protocolVersion: "2025-11-25" })
    expect(typeof out.ms === "number" && out.ms >= 0).toBe(true)
    expect(server.rpcCalls("ping")).toBe(before + 1)
  })

  it("discover: server info, revision, transport, per-stage timings and bytes", async () => {
    const out = expectJson(await node(["discover", "--json", "--discovery-timeout", "5s", "--call-max-bytes", "64KiB", server.url]))
    expect(out).toMatchObject({
      server: { name: "phasebound-testkit" },
      protocolVersion: "2025-11-25",
      transport: "streamable-http",
      tools: 3,
      limits: { discovery: { timeoutMs: 5000 }, call: { maxBytes: 65536 } },
      // The stateless probe this 2025 server refused is an attempt of its own, then the handshake.
      stages: [
        { stage: "discover", outcome: "RemoteRefusal", era: "stateless", transport: "streamable-http" },
        { stage: "initialize", outcome: "ok", era: "handshake" },
        { stage: "initialized" },
        { stage: "list-tools" }
      ]
    })
    const stages = (out as { stages: Array<{ bytes: number; durationMs: number }> }).stages
    expect(stages[1]!.bytes).toBeGreaterThan(0)
  })

  it("--revision: the stateless revision against a 2026 server; pinned, a 2025 server is refused at discover", async () => {
    const modern = await Testkit.startServer({ era: "stateless" })
    try {
      const out = expectJson(await node(["discover", "--json", "--revision", "2026-07-28", modern.url]))
      expect(out).toMatchObject({
        protocolVersion: "2026-07-28",
        stages: [{ stage: "discover", outcome: "ok", era: "stateless" }, { stage: "list-tools", outcome: "ok" }]
      })
      expect(modern.rpcCalls("initialize")).toBe(0)
    } finally {
      await modern.close()
    }
    const before = server.rpcCalls("initialize")
    const record = expectFailure(await node(["tools", "--revision", "2026-07-28", server.url]), 6, "RemoteRefusal")
    expect(record).toMatchObject({ stage: "discover", phase: "discovery" })
    expect(server.rpcCalls("initialize")).toBe(before)
  })

  it("--revision twice narrows to those revisions; an unknown one is InvalidOption before any I/O", async () => {
    const out = expectJson(await node(["discover", "--json", "--revision", "2025-06-18", "--revision", "2025-03-26", server.url])) as {
      protocolVersion: string
      stages: Array<{ stage: string; era: string }>
    }
    // No stateless probe: the handshake first, asking for the newest revision given.
    expect(out.protocolVersion).toBe("2025-06-18")
    expect(out.stages[0]).toMatchObject({ stage: "initialize", era: "handshake" })
    const requests = server.requests.length
    const record = expectFailure(await node(["tools", "--revision", "2099-01-01", server.url]), 2, "InvalidOption")
    expect(record).toMatchObject({ option: "--revision", stage: "config" })
    expect(server.requests.length).toBe(requests)
  })

  it("legacy HTTP+SSE with --transport sse", async () => {
    const legacy = await Testkit.startLegacyServer()
    try {
      const out = expectJson(await node(["discover", "--transport", "sse", legacy.url]))
      expect(out).toMatchObject({ transport: "sse", protocolVersion: "2024-11-05" })
    } finally {
      await legacy.close()
    }
  })

  it("demo: a loopback server and a real session (discovery, tools, three calls, one refused answer)", async () => {
    expectDemo(await node(["demo"]))
  })

  it("--help prints help on stdout and exits 0", async () => {
    const result = await node(["--help"])
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(result.stdout).toContain("discover")
    const sub = await node(["call", "--help"])
    expect(sub).toMatchObject({ code: 0, stderr: "" })
    expect(sub.stdout).toContain("--call-timeout")
  })
})

describe("exit codes", () => {
  it("1: the tool returned isError (result on stdout, stderr empty)", async () => {
    const out = expectJson(await node(["call", server.url, "add", "--args", "{\"a\":\"x\"}"]), 1)
    expect(out).toMatchObject({ isError: true })
  })

  describe("2: invalid usage or option, before any I/O", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
      ["a zero timeout", ["tools", "--timeout", "0s", "URL"], "--timeout"],
      ["a negative discovery timeout", ["tools", "--discovery-timeout", "-1s", "URL"], "--discovery-timeout"],
      ["a bare number as a duration", ["tools", "--call-timeout", "30", "URL"], "--call-timeout"],
      ["fractional bytes", ["tools", "--max-bytes", "1.5", "URL"], "--max-bytes"],
      ["zero bytes", ["tools", "--discovery-max-bytes", "0", "URL"], "--discovery-max-bytes"],
      ["junk bytes", ["tools", "--call-max-bytes", "lots", "URL"], "--call-max-bytes"],
      ["--args that is not a JSON object", ["call", "--args", "[1]", "URL", "add"], "--args"],
      ["an unterminated quote in --stdio", ["tools", "--stdio", "node 'server.js"], "--stdio"],
      ["an unknown flag", ["tools", "--frobnicate", "URL"], "arguments"],
      ["an unknown command", ["frobnicate"], "command"],
      ["no command", [], "command"],
      ["a missing target", ["tools"], "target"],
      ["a missing tool", ["call", "URL"], "tool"],
      ["an empty --effect-identity", ["call", "--effect-identity", "", "URL", "add"], "--effect-identity"],
      ["a --effect-identity with a control character", ["call", "--effect-identity", "a\tb", "URL", "add"], "--effect-identity"],
      ["a surplus positional", ["tools", "URL", "extra"], "arguments"],
      ["a bad --transport value", ["tools", "--transport", "carrier-pigeon", "URL"], "--transport"],
      ["a header without a colon", ["tools", "--header", "nonsense", "URL"], "--header"],
      ["a server name without a config file", ["tools", "nobody"], "target"],
      ["a missing config file", ["tools", "--config", "/nonexistent/mcp.json", "nobody"], "--config"]
    ]
    for (const [name, args, option] of cases) {
      it(name, async () => {
        const before = server.requests.length
        const record = expectFailure(await node(args.map((a) => (a === "URL" ? server.url : a))), 2, "InvalidOption")
        expect(record).toMatchObject({ stage: "config", option, outcome: "not-sent", retryable: false })
        expect(server.requests.length).toBe(before)
      })
    }
  })

  it("3: Unauthorized (401) and Forbidden (403)", async () => {
    server.script({ on: "initialize", kind: "status", status: 401 })
    expect(expectFailure(await node(["tools", server.url]), 3, "Unauthorized")).toMatchObject({ status: 401, stage: "initialize" })
    server.script({ on: "tools/call", kind: "status", status: 403 })
    expect(expectFailure(await node(["call", server.url, "increment"]), 3, "Forbidden")).toMatchObject({ status: 403, stage: "call" })
  })

  it("4: DeadlineExceeded of the call, with the call's limits", async () => {
    server.script({ on: "tools/call", kind: "delay", ms: 3_000 })
    const record = expectFailure(await node(["call", "--call-timeout", "300ms", server.url, "increment"]), 4, "DeadlineExceeded")
    expect(record).toMatchObject({ stage: "call", phase: "call", limits: { timeoutMs: 300 }, outcome: "unknown", retryable: false })
  })

  it("4: DeadlineExceeded of the discovery", async () => {
    // Generous: the negotiation's steps before tools/list (probe, initialize, initialized, the
    // standalone GET) must fit in it even on a loaded machine.
    server.script({ on: "tools/list", kind: "delay", ms: 5_000 })
    const record = expectFailure(await node(["tools", "--discovery-timeout", "1500ms", server.url]), 4, "DeadlineExceeded")
    expect(record).toMatchObject({ phase: "discovery", stage: "list-tools", limits: { timeoutMs: 1500 } })
  })

  it("5: ByteCeilingExceeded at the call ceiling, observedBytes = ceiling + 1 at most read", async () => {
    server.script({ on: "tools/call", kind: "exact-size", bytes: 5_000 })
    const record = expectFailure(await node(["call", "--call-max-bytes", "4KiB", server.url, "echo", "--args", "{\"text\":\"x\"}"]), 5, "ByteCeilingExceeded")
    expect(record).toMatchObject({ stage: "call", limits: { maxBytes: 4096 }, outcome: "applied", retryable: false })
    // Past the ceiling, and never more than the 5,000 bytes the server sent.
    expect(record["observedBytes"]).toBeGreaterThan(4096)
    expect(record["observedBytes"]).toBeLessThanOrEqual(5_000)
  })

  it("5: LimitExceeded (more tools/list pages than maxPages)", async () => {
    const paged = await Testkit.startServer({ extraTools: 70, pageSize: 1 })
    try {
      expect(expectFailure(await node(["tools", paged.url]), 5, "LimitExceeded")).toMatchObject({ limit: "maxPages" })
    } finally {
      await paged.close()
    }
  })

  it("6: RemoteRefusal, with a sanitized remoteMessage and the JSON-RPC code", async () => {
    server.script({ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: "no\nway http://x.example/?k=v" })
    const record = expectFailure(await node(["call", server.url, "increment"]), 6, "RemoteRefusal")
    expect(record).toMatchObject({ code: -32000, outcome: "not-applied" })
    expect(record["remoteMessage"]).toBe("no way [url]")
  })

  it("7: UpstreamFailure, ProtocolViolation, TransportFailure, SessionExpired", async () => {
    server.script({ on: "initialize", kind: "status", status: 500 })
    expect(expectFailure(await node(["tools", server.url]), 7, "UpstreamFailure")).toMatchObject({ status: 500 })
    server.script({ on: "tools/list", kind: "invalid-json" })
    expectFailure(await node(["tools", server.url]), 7, "ProtocolViolation")
    expectFailure(await node(["tools", "http://127.0.0.1:9/mcp"]), 7, "TransportFailure")
    server.script({ on: "tools/call", kind: "status", status: 404 })
    expectFailure(await node(["call", server.url, "increment"]), 7, "SessionExpired")
  })

  it("8: InternalError: a scrubbed record; --debug adds the scrubbed cause after it", async () => {
    const secret = "CANARY-internal-5d1f"
    const args = ["tools", "--header", `Authorization: Bearer ${secret}`, server.url]
    const env = { PHASEBOUND_TEST_DEFECT: "after-connect" }
    const plain = await node(args, { env })
    const record = expectFailure(plain, 8, "InternalError")
    expect(record).toEqual({
      tag: "InternalError",
      stage: "call",
      phase: "call",
      limits: { timeoutMs: 60000, maxBytes: 16777216 },
      outcome: "unknown",
      retryable: false
    })
    const debug = await node([...args, "--debug"], { env })
    expect(debug.code).toBe(8)
    const [first, ...rest] = debug.stderr.split("\n")
    expect(JSON.parse(first!)).toEqual({ error: record })
    expect(rest.join("\n")).toContain("test defect")
    expect(rest.join("\n")).toContain("[redacted]")
    expect(debug.stderr + debug.stdout).not.toContain(secret)
  })
})

describe("secrets never printed", () => {
  const canaries = ["CANARY-header-a1", "CANARY-var-b2", "CANARY-user-c3", "CANARY-query-d4", "CANARY-env-e5"]
  const expectClean = (result: RunResult) => {
    for (const canary of canaries) {
      expect(result.stdout).not.toContain(canary)
      expect(result.stderr).not.toContain(canary)
    }
  }

  it("given by --header, ${VAR}, URL userinfo and query, on success and on failure (also with --debug)", async () => {
    const url = new URL(server.url)
    url.username = "someone"
    url.password = canaries[2]!
    url.searchParams.set("token", canaries[3]!)
    const args = ["--header", `X-Api-Key: ${canaries[0]}`, "--header", "Authorization: Bearer ${PB_TOKEN}", url.toString()]
    const env = { PB_TOKEN: canaries[1]! }
    const ok = await node(["discover", ...args], { env })
    expect(ok.code).toBe(0)
    expectClean(ok)
    // The secrets did reach the server (only there).
    const last = server.requests.at(-1)!
    expect(last.headers["x-api-key"]).toBe(canaries[0])
    expect(last.headers["authorization"]).toBe(`Bearer ${canaries[1]}`)

    server.script({ on: "tools/call", kind: "jsonrpc-error", code: -32001, message: `denied ${canaries[0]} ${canaries[1]} ${canaries[3]}` })
    const refused = await node(["call", ...args.slice(0, -1), url.toString(), "increment", "--debug"], { env })
    expect(expectFailure(refused, 6, "RemoteRefusal")).toMatchObject({ code: -32001 })
    expectClean(refused)

    const defect = await node(["tools", "--debug", ...args], { env: { ...env, PHASEBOUND_TEST_DEFECT: "after-connect" } })
    expect(defect.code).toBe(8)
    expectClean(defect)
  })

  it("an unset ${VAR} names the option, never the header or the variable", async () => {
    const record = expectFailure(await node(["tools", "--header", "X-Secret: ${PB_UNSET_CANARY}", server.url]), 2, "InvalidOption")
    expect(record).toMatchObject({ option: "--header" })
    expect(JSON.stringify(record)).not.toContain("PB_UNSET_CANARY")
    expect(JSON.stringify(record)).not.toContain("X-Secret")
  })

  it("a stdio server's env values (from the config file), with --debug on an internal error", async () => {
    const f = fixture()
    const dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-"))
    const config = path.join(dir, "mcp.json")
    writeFileSync(config, JSON.stringify({ mcpServers: { local: { command: f.command, args: f.args, env: { API_KEY: "${PB_KEY}" } } } }))
    const result = await node(["tools", "--debug", "--config", config, "local"], {
      env: { PB_KEY: canaries[4]!, PHASEBOUND_TEST_DEFECT: "after-connect" }
    })
    expect(result.code).toBe(8)
    expect(JSON.parse(result.stderr.split("\n")[0]!)).toMatchObject({ error: { tag: "InternalError" } })
    expect(result.stderr).toContain("[redacted]")
    expectClean(result)
  })
})

describe("stdio", () => {
  it("tools and call over --stdio (quoted words, JSON arguments)", async () => {
    const f = fixture({ faults: [{ kind: "banner" }] })
    expect(expectJson(await node(["tools", "--stdio", stdioLine(f)]))).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expect(expectJson(await node(["call", "--stdio", stdioLine(f), "increment"]))).toMatchObject({ content: [{ text: "1" }] })
    expect(f.counter()).toBe(1)
  })

  it("a server flooding its own stderr: nothing of it on ours, on success and on failure", async () => {
    const f = fixture({ faults: [{ kind: "stderr-flood", bytes: 256 * 1024 }, { on: "tools/call", kind: "jsonrpc-error", code: -32002, message: "nope" }] })
    // expectJson: exit 0, stderr empty, stdout the tools alone.
    expect(expectJson(await node(["tools", "--stdio", stdioLine(f)]))).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expectFailure(await node(["call", "--stdio", stdioLine(f), "increment"]), 6, "RemoteRefusal")
  })

  it("a server that exits: TransportFailure (7), one record", async () => {
    const f = fixture({ faults: [{ on: "tools/list", kind: "exit", code: 3 }] })
    expectFailure(await node(["tools", "--stdio", stdioLine(f)]), 7, "TransportFailure")
  })

  it("a command that does not exist: TransportFailure (7), one record", async () => {
    expectFailure(await node(["tools", "--stdio", "/nonexistent/phasebound-server --x"]), 7, "TransportFailure")
  })
})

describe("config-file targets", () => {
  it("HTTP (with ${VAR} headers) and stdio servers, from --config and from ./.mcp.json", async () => {
    const f = fixture()
    const dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-"))
    const servers = {
      mcpServers: {
        remote: { type: "http", url: server.url, headers: { Authorization: "Bearer ${PB_CFG_TOKEN}" } },
        local: { command: f.command, args: f.args, env: {} }
      }
    }
    writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify(servers))
    const env = { PB_CFG_TOKEN: "cfg-token" }
    const remote = expectJson(await node(["discover", "--config", path.join(dir, ".mcp.json"), "remote"], { env }))
    expect(remote).toMatchObject({ transport: "streamable-http" })
    expect(server.requests.at(-1)!.headers["authorization"]).toBe("Bearer cfg-token")
    // The default ./.mcp.json of the working directory.
    const local = expectJson(await node(["call", "local", "add", "--args", "{\"a\":1,\"b\":2}"], { cwd: dir }))
    expect(local).toMatchObject({ content: [{ text: "3" }] })
    expectFailure(await node(["tools", "nobody"], { cwd: dir }), 2, "InvalidOption")
    expect(expectFailure(await node(["tools", "remote"], { cwd: dir }), 2, "InvalidOption")).toMatchObject({
      option: "--config headers"
    })
  })
})

describe("SIGINT (130, Interrupted), distinct from a deadline", () => {
  it("HTTP: interrupts a stalled call, the session is DELETEd", async () => {
    server.script({ on: "tools/call", kind: "response-never-sent" })
    const calls = server.rpcCalls("tools/call")
    const deletes = server.deletes()
    const result = await node(["call", server.url, "increment"], {
      onSpawn: (child) => void waitFor(() => server.rpcCalls("tools/call") > calls).then(() => child.kill("SIGINT"))
    })
    const record = expectFailure(result, 130, "Interrupted")
    expect(record).toMatchObject({ stage: "call", phase: "call", outcome: "unknown", retryable: false })
    expect(server.deletes()).toBe(deletes + 1)
  })

  it("stdio: interrupts a stalled call, the child is gone afterwards", async () => {
    const f = fixture({ faults: [{ on: "tools/call", kind: "never-answer" }] })
    const result = await node(["call", "--stdio", stdioLine(f), "increment"], {
      onSpawn: (child) => void waitFor(() => f.rpcCalls("tools/call") === 1).then(() => child.kill("SIGINT"))
    })
    expectFailure(result, 130, "Interrupted")
    expect(f.isAlive()).toBe(false)
  })

  it("SIGTERM is handled the same way (143): the stdio child is gone afterwards", async () => {
    const f = fixture({ faults: [{ on: "tools/call", kind: "never-answer" }] })
    const result = await node(["call", "--stdio", stdioLine(f), "increment"], {
      onSpawn: (child) => void waitFor(() => f.rpcCalls("tools/call") === 1).then(() => child.kill("SIGTERM"))
    })
    expectFailure(result, 143, "Interrupted")
    expect(f.isAlive()).toBe(false)
  })
})
