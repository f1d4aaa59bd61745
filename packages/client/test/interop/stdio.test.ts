/**
 * stdio interop with real peers (the official SDK's StdioServerTransport and
 * server-everything), under Node and under Bun: the checks are a plain program
 * (support/children/stdio-interop.ts) run by each runtime as a child process, which ends its
 * stdout with the child report.
 */
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { expectChecksPassed } from "../support/childReport.js"

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

/** The checks the program runs under `runtime`: each API against each peer. */
const checksUnder = (runtime: string) =>
  ["official SDK StdioServerTransport", "server-everything stdio"].flatMap((peer) =>
    ["Promise API", "Effect API"].map((api) => `${runtime}: ${api} against ${peer}`)
  )

describe.each(runtimes)("stdio interop under %s", (runtime, command, args) => {
  it("the official SDK stdio server and server-everything, through the Promise and Effect APIs", () => {
    const run = spawnSync(command, args, { cwd: here, encoding: "utf8", timeout: 90_000 })
    expectChecksPassed(run, checksUnder(runtime))
    expect({ status: run.status, signal: run.signal }, run.stderr.slice(-3_000)).toEqual({ status: 0, signal: null })
  }, 120_000)
})
