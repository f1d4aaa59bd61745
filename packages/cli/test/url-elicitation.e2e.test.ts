/**
 * A call refused until the user opens a URL (`-32042`), as the Node bundle runs it against a
 * stdio server (support/urlElicitationServer.mjs): exit 6, the one record on stderr without a
 * URL; in machine mode the elicitations as one JSON line on stdout; on a terminal the lines after
 * the record, the server's escape sequence never reaching it.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { baseEnv, cliDir, recordOf, run, shellQuote } from "./support/cli.js"
import { itOnTerminal, runOnTerminal, screenOf } from "./support/pty.js"

const server = shellQuote([process.execPath, fileURLToPath(new URL("./support/urlElicitationServer.mjs", import.meta.url))])
const args = ["call", "--stdio", server, "gated", "--revision", "2025-11-25"]

describe("call refused until a URL elicitation is done", () => {
  it("machine mode: exit 6, the record URL-free, the elicitations on stdout", async () => {
    const result = await run("node", [...args, "--json"])
    expect(result.code).toBe(6)
    const record = recordOf(result)
    expect(record).toMatchObject({ tag: "UrlElicitationRequired", stage: "call", code: -32042, outcome: "not-applied", retryable: true })
    expect(record["remoteMessage"]).toBe("Authorize at [url] first")
    expect(result.stderr).not.toContain("example.org")
    expect(result.stdout.endsWith("\n")).toBe(true)
    expect(JSON.parse(result.stdout)).toEqual({
      urlElicitationRequired: {
        elicitations: [{
          elicitationId: "gate-1",
          message: "Authorize\u001b[2J Example",
          url: "https://auth.example.org/start?session=abc",
          host: "auth.example.org",
          punycode: false
        }]
      }
    })
  })

  itOnTerminal("on a terminal: the record, then what to open; no escape sequence of the server's", async () => {
    const bundle = path.join(cliDir, "dist/bin.js")
    const result = await runOnTerminal(shellQuote([process.execPath, bundle, ...args]), baseEnv())
    expect(result.code).toBe(6)
    expect(result.raw).not.toContain("\x1b[2J")
    const lines = screenOf(result.raw).split("\n")
    const at = lines.findIndex((line) => line.startsWith("{\"error\":"))
    expect(JSON.parse(lines[at]!).error.tag).toBe("UrlElicitationRequired")
    expect(lines.slice(at + 1, at + 5)).toEqual([
      "the server asks you to open this URL first, then to run the command again:",
      "  1. Authorize [2J Example",
      "     https://auth.example.org/start?session=abc",
      "     host: auth.example.org"
    ])
  })
})
