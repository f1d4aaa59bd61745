/**
 * The CLI against servers people do not control, as a subprocess (the Node bundle) with real
 * child processes and a real loopback HTTP server: the environment a `--stdio` server gets
 * (`--env`, `--env-pass`, the config entry's `env`, their precedence, secrets never printed), the
 * values of a config entry's references quoted back from its arguments (redacted, for one server
 * and through `--catalog`), a server that fails to start (its stderr on a terminal, never in the
 * record, `--server-stderr`), the run's bound against a hanging server (`--timeout` +
 * `--release-timeout`), and the record of an auto negotiation that fell back (`attempts`).
 *
 * The terminal tests need util-linux `script` (support/pty.ts): on Linux a missing helper fails
 * them with the reason; elsewhere they are skipped, and their names say why.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { baseEnv, cliDir, expectFailure, expectJson, run, shellQuote, stdioFixtures } from "./support/cli.js"
import { itOnTerminal, runOnTerminal, screenOf } from "./support/pty.js"

const node = (args: ReadonlyArray<string>, options?: Parameters<typeof run>[2]) => run("node", args, options)

const envServer = path.join(cliDir, "test/support/envServer.mjs")
const envStdio = shellQuote([process.execPath, envServer])
const failingStdio = shellQuote([process.execPath, envServer, "--fail-start"])

/** The environment the `env` tool saw. */
const childEnv = (stdout: string): Record<string, string> => {
  const result = JSON.parse(stdout) as { content: Array<{ text: string }> }
  return JSON.parse(result.content[0]!.text) as Record<string, string>
}

const fixture = stdioFixtures()

/** The CLI on a terminal (support/pty.ts): what the pty received, CRs removed and the spinner's redraws erased. */
const onTerminal = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const { code, raw } = await runOnTerminal(shellQuote([process.execPath, path.join(cliDir, "dist/bin.js"), ...args]), { ...baseEnv(), ...env })
  return {
    code,
    lines: screenOf(raw).split("\n").filter((l) => l !== "")
  }
}

describe("the environment of a --stdio server", () => {
  it("only the safe set by default: none of our other variables", async () => {
    const result = await node(["call", "--stdio", envStdio, "env"], { env: { PB_OURS: "ours" } })
    expect(result).toMatchObject({ code: 0, stderr: "" })
    const env = childEnv(result.stdout)
    expect(env["PB_OURS"]).toBeUndefined()
    expect(env["PHASEBOUND_TOKEN_FILE"]).toBeUndefined()
    expect(env["PATH"]).toBe(baseEnv()["PATH"])
    expect(env["HOME"]).toBe(baseEnv()["HOME"])
  })

  it("--env KEY=VALUE (${VAR} read from ours) and --env-pass NAME (when set) are added", async () => {
    const result = await node(
      [
        "call",
        "--stdio",
        envStdio,
        "env",
        "--env",
        "A=1",
        "--env",
        "B=${PB_B}",
        "--env",
        "EMPTY=",
        "--env",
        "EQ=x=y",
        "--env-pass",
        "PB_PASS",
        "--env-pass",
        "PB_MISSING"
      ],
      { env: { PB_B: "bee", PB_PASS: "passed", PB_OTHER: "other" } }
    )
    expect(result).toMatchObject({ code: 0, stderr: "" })
    const env = childEnv(result.stdout)
    expect(env).toMatchObject({ A: "1", B: "bee", EMPTY: "", EQ: "x=y", PB_PASS: "passed" })
    for (const name of ["PB_MISSING", "PB_OTHER", "PB_B"]) expect(env[name]).toBeUndefined()
  })

  it("precedence: the safe set, then the config entry's env, then --env-pass, then --env", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-env-"))
    const config = path.join(dir, "mcp.json")
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          local: { command: process.execPath, args: [envServer], env: { A: "config", C: "config", D: "config", HOME: "/config-home" } }
        }
      })
    )
    const result = await node(
      ["call", "--config", config, "local", "env", "--env-pass", "C", "--env-pass", "D", "--env", "D=flag", "--env", "A=flag"],
      { env: { C: "passed", D: "passed" } }
    )
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(childEnv(result.stdout)).toMatchObject({ A: "flag", C: "passed", D: "flag", HOME: "/config-home" })
  })

  describe("refused before any I/O (InvalidOption naming the flag, never the value)", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
      ["--env without =", ["--env", "NOEQUALS"], "--env"],
      ["--env with a bad name", ["--env", "1BAD=x"], "--env"],
      ["--env with an unset ${VAR}", ["--env", "A=${PB_UNSET_CANARY}"], "--env"],
      ["--env-pass with a bad name", ["--env-pass", "BAD-NAME"], "--env-pass"],
      ["an unknown --server-stderr", ["--server-stderr", "loud"], "--server-stderr"],
      ["a zero --release-timeout", ["--release-timeout", "0s"], "--release-timeout"],
      ["a --release-timeout without a unit", ["--release-timeout", "5"], "--release-timeout"]
    ]
    for (const [name, flags, option] of cases) {
      it(name, async () => {
        const f = fixture()
        const record = expectFailure(await node(["tools", "--stdio", shellQuote([f.command, ...f.args]), ...flags]), 2, "InvalidOption")
        expect(record).toMatchObject({ option, stage: "config", outcome: "not-sent" })
        expect(JSON.stringify(record)).not.toContain("PB_UNSET_CANARY")
        // Never spawned.
        expect(f.pid()).toBeUndefined()
      })
    }

    it("--env, --env-pass and --server-stderr with an HTTP target", async () => {
      for (
        const [flags, option] of [[["--env", "A=1"], "--env"], [["--env-pass", "A"], "--env-pass"], [["--server-stderr", "tail"], "--server-stderr"]] as const
      ) {
        const record = expectFailure(await node(["tools", "http://127.0.0.1:9/mcp", ...flags]), 2, "InvalidOption")
        expect(record).toMatchObject({ option, stage: "config" })
      }
    })

    it("login has none of the stdio flags: an unknown flag there, like --stdio", async () => {
      for (const flags of [["--env", "A=1"], ["--env-pass", "A"], ["--server-stderr", "tail"], ["--stdio", "x"]]) {
        const record = expectFailure(await node(["login", "http://127.0.0.1:9/mcp", ...flags]), 2, "InvalidOption")
        expect(record).toMatchObject({ option: "arguments", stage: "config" })
      }
    })
  })

  it("values given with --env and --env-pass are secrets: scrubbed from the --debug output", async () => {
    const canaries = ["CANARY-env-flag-1", "CANARY-env-var-2", "CANARY-env-pass-3"]
    const result = await node(
      ["tools", "--debug", "--stdio", envStdio, "--env", `KEY=${canaries[0]}`, "--env", "VAR=${PB_VAR}", "--env-pass", "PB_PASS"],
      { env: { PB_VAR: canaries[1]!, PB_PASS: canaries[2]!, PHASEBOUND_TEST_DEFECT: "after-connect" } }
    )
    expect(result.code).toBe(8)
    expect(JSON.parse(result.stderr.split("\n")[0]!)).toMatchObject({ error: { tag: "InternalError" } })
    expect(result.stderr).toContain("[redacted]")
    for (const canary of canaries) expect(result.stderr + result.stdout).not.toContain(canary)
  })
})

describe("a config entry's references in a stdio server's arguments", () => {
  const canaries = { variable: "CANARY-arg-variable-1", input: "CANARY-arg-input-2" }

  /** A server started with an input's and a ${VAR}'s values in its arguments, which its tool `args` quotes back in a JSON-RPC error. */
  const quotingConfig = (): string => {
    const dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-args-"))
    const config = path.join(dir, "mcp.json")
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { local: { command: process.execPath, args: [envServer, "--token", "${PB_ARG_TOKEN}", "--key=${input:api-key}"] } } })
    )
    return config
  }

  const expectRedacted = (result: Awaited<ReturnType<typeof node>>) => {
    const record = expectFailure(result, 6, "RemoteRefusal")
    expect(record["remoteMessage"]).toBe("refused, started with: --token [redacted] --key=[redacted]")
    for (const canary of Object.values(canaries)) expect(result.stderr + result.stdout).not.toContain(canary)
  }

  it("an input's and a ${VAR}'s values, quoted back in a JSON-RPC error, are redacted from the record's remoteMessage", async () => {
    expectRedacted(
      await node(["call", "--config", quotingConfig(), "local", "args"], { env: { PB_ARG_TOKEN: canaries.variable, PHASEBOUND_INPUT_API_KEY: canaries.input } })
    )
  })

  it("the same through --catalog, where the library resolves the entry (its secrets: ConfigImport.secretsOf, as for one server)", async () => {
    expectRedacted(
      await node(["call", "--catalog", "--config", quotingConfig(), "local__args"], {
        env: { PB_ARG_TOKEN: canaries.variable, PHASEBOUND_INPUT_API_KEY: canaries.input }
      })
    )
  })
})

describe("a stdio server that fails to start", () => {
  const secret = "CANARY-stderr-key-9"

  it("stderr not a terminal: the record alone, one line, nothing of the server's stderr", async () => {
    const record = expectFailure(await node(["tools", "--stdio", failingStdio, "--env", `API_KEY=${secret}`]), 7, "TransportFailure")
    expect(record).toMatchObject({ reason: "process-exited", exitCode: 1, phase: "discovery" })
    expect(JSON.stringify(record)).not.toContain("fatal")
  })

  itOnTerminal("on a terminal: the server's last stderr lines, labelled, redacted and printable, then the record", async () => {
    const result = await onTerminal(["tools", "--stdio", failingStdio, "--env", `API_KEY=${secret}`])
    expect(result.code).toBe(7)
    const lines = result.lines.filter((l) => !l.endsWith("discovering..."))
    expect(lines.slice(0, 3)).toEqual([
      "server stderr (last 2 lines):",
      "  starting the server",
      "  fatal: the API key [redacted] was refused  [2J"
    ])
    expect(JSON.parse(lines[3]!)).toMatchObject({ error: { tag: "TransportFailure", reason: "process-exited", exitCode: 1 } })
    expect(lines).toHaveLength(4)
    expect(result.lines.join("\n")).not.toContain(secret)
    expect(result.lines.join("\n")).not.toContain("\x1b[2J")
  })

  itOnTerminal("on a terminal with --server-stderr drop: the record alone", async () => {
    const result = await onTerminal(["tools", "--stdio", failingStdio, "--server-stderr", "drop"])
    expect(result.code).toBe(7)
    const lines = result.lines.filter((l) => !l.endsWith("discovering..."))
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ error: { tag: "TransportFailure" } })
  })

  it("--server-stderr inherit: the server's stderr goes straight to ours, the record is still the last line", async () => {
    const result = await node(["tools", "--stdio", failingStdio, "--server-stderr", "inherit"])
    expect(result.code).toBe(7)
    const lines = result.stderr.trimEnd().split("\n")
    expect(lines.slice(0, 2)).toEqual(["starting the server", expect.stringContaining("fatal: the API key (none) was refused")])
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ error: { tag: "TransportFailure", exitCode: 1 } })
  })

  it("--server-stderr drop on a server that works: stdout as usual, stderr empty", async () => {
    const f = fixture({ faults: [{ kind: "stderr-flood", bytes: 256 * 1024 }] })
    const out = expectJson(await node(["tools", "--stdio", shellQuote([f.command, ...f.args]), "--server-stderr", "drop"]))
    expect(out).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
  })
})

describe("--release-timeout: the run is bounded by --timeout + --release-timeout", () => {
  it("a hanging server that ignores stdin's end and SIGTERM: DeadlineExceeded (4) within the bound, the child gone", async () => {
    const f = fixture({
      faults: [
        { on: "server/discover", kind: "never-answer" },
        { on: "initialize", kind: "never-answer" },
        { kind: "ignore-sigterm" }
      ]
    })
    const started = Date.now()
    const result = await node(["tools", "--stdio", shellQuote([f.command, ...f.args]), "--timeout", "2s", "--release-timeout", "900ms"])
    const elapsedMs = Date.now() - started
    expect(expectFailure(result, 4, "DeadlineExceeded")).toMatchObject({ phase: "discovery", limits: { timeoutMs: 2000 } })
    // 2 s of deadline, at most 0.9 s of release, and generous slack for starting Node and the
    // child on a loaded machine; without the flag the release alone takes up to 6 s (3 x 2 s).
    expect(elapsedMs).toBeGreaterThanOrEqual(2000)
    expect(elapsedMs).toBeLessThan(2000 + 900 + 2500)
    expect(f.isAlive()).toBe(false)
  })
})

describe("auto negotiation that fell back: the record's attempts", () => {
  it("a URL answered 404 to everything: the first POST's answer and the fallback's, no URL or body", async () => {
    const server = http.createServer((req, res) => {
      req.resume()
      res.writeHead(404, { "content-type": "text/plain" }).end("no such page CANARY-body-404")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      const record = expectFailure(await node(["tools", `http://127.0.0.1:${port}/wrong?key=CANARY-query-404`]), 7, "UpstreamFailure")
      expect(record).toMatchObject({ status: 404, phase: "discovery" })
      expect(record["attempts"]).toEqual([
        { era: "stateless", transport: "streamable-http", tag: "UpstreamFailure", stage: "discover", status: 404 },
        { era: "handshake", transport: "streamable-http", tag: "UpstreamFailure", stage: "initialize", status: 404 },
        { era: "handshake", transport: "sse", tag: "UpstreamFailure", stage: record.stage, status: 404 }
      ])
      const text = JSON.stringify(record)
      for (const leak of ["CANARY", "127.0.0.1", "wrong", "no such page"]) expect(text).not.toContain(leak)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe("help", () => {
  it("documents the stdio flags and --release-timeout", async () => {
    const help = await node(["tools", "--help"])
    expect(help).toMatchObject({ code: 0, stderr: "" })
    for (const flag of ["--env", "--env-pass", "--server-stderr", "--release-timeout"]) expect(help.stdout).toContain(flag)
  })
})
