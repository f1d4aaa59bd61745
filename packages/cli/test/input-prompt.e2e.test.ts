/**
 * VS Code's `inputs` asked on a terminal (docs/GUIDE.md, "Config files"): the CLI runs on a real
 * pseudo-terminal (util-linux `script`), so stdin and stderr are TTYs. A `password` input is
 * asked without echo: what is typed reaches the server and never shows in the transcript; a
 * plain input is echoed as typed (the same transcript, proving that it would show an echo).
 * The answer is written once the prompt appeared (a sync point, not a delay).
 */
import * as Testkit from "@phasebound/testkit"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { baseEnv, commandOf } from "./support/cli.js"

const SECRET = "CANARY-typed-secret-71c2"
const REGION = "region-typed-9e04"

let server: Testkit.TestServer
beforeAll(async () => {
  server = await Testkit.startServer()
})
afterAll(() => server.close())

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`

/**
 * Runs the Node CLI on a pseudo-terminal; each time the transcript shows `prompt`, the matching
 * answer and Enter are typed. Resolves with the exit code and the whole transcript.
 */
const onTerminal = (args: ReadonlyArray<string>, cwd: string, answers: ReadonlyArray<readonly [prompt: string, answer: string]>) =>
  new Promise<{ readonly code: number | null; readonly transcript: string }>((resolve, reject) => {
    const [command, prefix] = commandOf("node")
    const line = [command, ...prefix, ...args].map(quote).join(" ")
    const child = spawn("script", ["-qfec", line, "/dev/null"], {
      cwd,
      env: { ...baseEnv(), HOME: cwd, TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let transcript = ""
    let answered = 0
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no exit within 30 s; transcript: ${JSON.stringify(transcript)}`))
    }, 30_000)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      transcript += chunk
      const next = answers[answered]
      if (next !== undefined && transcript.includes(next[0])) {
        answered += 1
        child.stdin.write(`${next[1]}\r`)
      }
    })
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, transcript })
    })
  })

describe.skipIf(!existsSync("/usr/bin/script"))("VS Code inputs on a terminal", () => {
  it("a password input is asked without echo and reaches the server; a plain one is echoed", async () => {
    const project = mkdtempSync(path.join(tmpdir(), "phasebound-prompt-"))
    mkdirSync(path.join(project, ".vscode"))
    const file = path.join(project, ".vscode/mcp.json")
    writeFileSync(
      file,
      JSON.stringify({
        inputs: [
          { type: "promptString", id: "api-token", description: "API token", password: true },
          { type: "promptString", id: "region", description: "Region" }
        ],
        servers: {
          remote: {
            type: "http",
            url: server.url,
            headers: { Authorization: "Bearer ${input:api-token}", "X-Region": "${input:region}" }
          }
        }
      })
    )
    const before = server.requests.length
    const { code, transcript } = await onTerminal(["discover", "--config", file, "remote"], project, [
      ["API token (api-token, hidden): ", SECRET],
      ["Region (region): ", REGION]
    ])
    expect(code, transcript).toBe(0)
    const sent = server.requests.slice(before)
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.every((request) => request.headers["authorization"] === `Bearer ${SECRET}`)).toBe(true)
    expect(sent.every((request) => request.headers["x-region"] === REGION)).toBe(true)
    expect(transcript).toContain("API token (api-token, hidden): ")
    expect(transcript).not.toContain(SECRET)
    expect(transcript).toContain(REGION)
    expect(transcript).toContain("streamable-http")
  })
})
