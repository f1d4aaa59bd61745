/**
 * stdio interop with real peers (the official SDK's StdioServerTransport and
 * server-everything), under Node and under Bun: the checks are a plain program
 * (support/children/stdio-interop.ts) run by each runtime as a child process.
 */
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../../../..")
const require = createRequire(import.meta.url)
const program = path.join(here, "../support/children/stdio-interop.ts")
const tsx = path.join(path.dirname(require.resolve("tsx/package.json")), "dist/cli.mjs")
const bun = path.join(root, "node_modules/.bin/bun")

const runtimes = [
  ["node", process.execPath, [tsx, "--conditions=@phasebound/source", program]],
  ["bun", bun, ["--conditions=@phasebound/source", program]]
] as const

describe.each(runtimes)("stdio interop under %s", (runtime, command, args) => {
  it("the official SDK stdio server and server-everything, through the Promise and Effect APIs", () => {
    const run = spawnSync(command, args, { cwd: here, encoding: "utf8", timeout: 90_000 })
    const results = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "[]") as Array<{ check: string; ok: boolean; detail: string }>
    expect(results, run.stderr).toHaveLength(4)
    for (const result of results) expect(result, result.detail).toMatchObject({ ok: true })
    expect(results.every((r) => r.check.startsWith(`${runtime}:`))).toBe(true)
    expect(run.status).toBe(0)
  }, 120_000)
})
