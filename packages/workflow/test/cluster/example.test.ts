/**
 * The SQLite example docs/DURABILITY.md names (packages/workflow/examples/sqlite.ts) runs as documented,
 * `npm run example:workflow`, and exits 0 having said what it proves.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url))

describe("examples/sqlite.ts", () => {
  it("runs a durable workflow on ClusterWorkflowEngine + SQLite and exits 0", async () => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm"
    const { stdout } = await promisify(execFile)(npm, ["run", "--silent", "example:workflow"], { cwd: ROOT, timeout: 120_000 })
    // Whole lines: "in total 3" must not pass for "in total 30".
    const lines = stdout.split("\n")
    expect(lines).toContain("first run: 3 tool calls sent")
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}reserve \(upsert\) -> "reserved", effect identity [0-9a-f]{32}$/))
    expect(lines).toContain("the server saw the same identities: true")
    expect(lines).toContain("a new engine on the same file, same payload: result from the store true, tool calls sent in total 3")
  }, 150_000)
})
