/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in the root
 * package.json) against this library, through client.ts beside this file: every client
 * scenario of the requirement sets of 2025-11-25 and 2026-07-28, authorization included, each
 * at the revision it belongs to (a scenario of both revisions runs twice, once on each wire),
 * and the client credentials extension scenarios. See README.md beside this file.
 *
 * The CLI needs Node >= 22 (it imports `fs.globSync`), so it runs on the Node 22 binary of the
 * `node22` devDependency, never on the Node running the tests; the client program it starts
 * runs on the Node running the tests (`process.execPath`). The scenario servers are the CLI's,
 * on this machine (it prints their URLs as http://localhost:<port>).
 *
 * The client program is bundled once (esbuild, already the cli package's dependency) so that
 * each run does not pay for compiling the library again; PHASEBOUND_CONFORMANCE_TSX=1 runs it
 * through tsx instead.
 *
 * The verdict is the CLI's: its exit code and its checks (the JSON array it prints on stdout
 * with `--verbose`). The client program, ours, ends its stdout with the child report
 * (@phasebound/testkit), which the CLI saves in the run's results directory (`-o`): each run
 * must have one naming the scenario asked, so a client that died before its end (the CLI reads
 * a client killed by a signal as exit 0) or ran another scenario fails here. Whether the client
 * ended ok is not asserted (in the refusal scenarios it must exit 1 with the typed error, which
 * the CLI allows); it is in the failure message.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readReport, type ReportReading } from "@phasebound/testkit"
import { type ChildOutput, reportOf } from "../support/childReport.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

/** The Node 22 binary: `node22` is a local wrapper package whose `node22` dependency is `node@22`. */
const node22 = path.join(path.dirname(require.resolve("node22/package.json")), "node_modules/node22/bin/node")
const conformanceCli = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/conformance/package.json")),
  "dist/index.js"
)

/** `extension`: run without `--spec-version` (the CLI skips extension scenarios when one is given). */
type Revision = "2025-11-25" | "2026-07-28" | "extension"

/** The authorization scenarios of both requirement sets. */
const authBoth = [
  "metadata-default",
  "metadata-var1",
  "metadata-var2",
  "metadata-var3",
  "basic-cimd",
  "scope-from-www-authenticate",
  "scope-from-scopes-supported",
  "scope-omitted-when-undefined",
  "scope-step-up",
  "scope-retry-limit",
  "token-endpoint-auth-basic",
  "token-endpoint-auth-post",
  "token-endpoint-auth-none",
  "pre-registration"
].map((name) => `auth/${name}`)

/** The authorization scenarios of 2026-07-28 only. */
const auth2026 = [
  "resource-mismatch",
  "offline-access-scope",
  "offline-access-not-supported",
  "authorization-server-migration",
  "iss-supported",
  "iss-not-advertised",
  "iss-supported-missing",
  "iss-wrong-issuer",
  "iss-unexpected",
  "iss-normalized",
  "metadata-issuer-mismatch"
].map((name) => `auth/${name}`)

/**
 * The client scenarios run, at their revision. The requirement sets of the pinned CLI name the
 * same scenarios (checked below); `json-schema-2020-12-preservation` is in neither set's scored
 * list (`not_scored`, added after release) but is run at both; the client credentials
 * scenarios are extensions (run, never scored).
 */
const scenarios: ReadonlyArray<readonly [scenario: string, revision: Revision]> = [
  ["initialize", "2025-11-25"],
  ["tools_call", "2025-11-25"],
  ["elicitation-sep1034-client-defaults", "2025-11-25"],
  ["sse-retry", "2025-11-25"],
  ["json-schema-2020-12-preservation", "2025-11-25"],
  ["tools_call", "2026-07-28"],
  ["request-metadata", "2026-07-28"],
  ["sep-2322-client-request-state", "2026-07-28"],
  ["http-standard-headers", "2026-07-28"],
  ["http-custom-headers", "2026-07-28"],
  ["http-invalid-tool-headers", "2026-07-28"],
  ["json-schema-ref-no-deref", "2026-07-28"],
  ["json-schema-2020-12-preservation", "2026-07-28"],
  ...authBoth.map((name) => [name, "2025-11-25"] as const),
  ...[...authBoth, ...auth2026].map((name) => [name, "2026-07-28"] as const),
  ["auth/client-credentials-basic", "extension"],
  ["auth/client-credentials-jwt", "extension"],
  // The skills extension.
  ["sep-2640-client-no-prefetch", "extension"],
  ["sep-2640-client-verify-digest", "extension"],
  ["sep-2640-client-verify-size", "extension"],
  ["sep-2640-client-verify-frontmatter", "extension"]
]

/** How many CLI runs at once (each is two Node processes and a scenario server). */
const concurrency = 4
/**
 * Scenarios that time the client (sse-retry: the reconnection must come 450-700 ms after the
 * stream closes) run alone, so that the other runs' start-up does not make them late.
 */
const timed: ReadonlySet<string> = new Set(["sse-retry"])
/** The CLI's own limit on the client program, per scenario. */
const clientTimeoutMs = 30_000

interface Check {
  readonly id: string
  readonly name: string
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO"
  readonly description?: string
  readonly errorMessage?: string
}

interface Run {
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
  readonly durationMs: number
}

interface ScenarioRun extends Run {
  /** What the client program printed, as the CLI saved it (none when it did not run it). */
  readonly client: ChildOutput | undefined
}

const run = (command: string, args: ReadonlyArray<string>, timeoutMs: number): Promise<Run> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (exitCode) => {
      clearTimeout(timer)
      resolve({ exitCode, stdout, stderr, durationMs: Math.round(performance.now() - started) })
    })
  })

/**
 * A small semaphore, first come first served: at most `limit` units of work at once; a task of
 * weight `limit` runs alone.
 */
const limiter = (limit: number) => {
  let active = 0
  const waiting: Array<{ readonly weight: number; readonly start: () => void }> = []
  const pump = () => {
    while (waiting.length > 0 && active + waiting[0]!.weight <= limit) {
      const next = waiting.shift()!
      active += next.weight
      next.start()
    }
  }
  return async <A>(task: () => Promise<A>, weight = 1): Promise<A> => {
    await new Promise<void>((start) => {
      waiting.push({ weight, start })
      pump()
    })
    try {
      return await task()
    } finally {
      active -= weight
      pump()
    }
  }
}

let workDirectory: string | undefined
/** A temporary directory for the bundle and the CLI's results, removed after the file. */
const workDir = (): string => (workDirectory ??= mkdtempSync(path.join(tmpdir(), "phasebound-conformance-")))
let clientCommand: Promise<string> | undefined

/** The command the CLI runs for the client (it splits it on spaces and appends the URL). */
const buildClientCommand = async (): Promise<string> => {
  const program = path.join(here, "client.ts")
  if (process.env.PHASEBOUND_CONFORMANCE_TSX === "1") {
    const tsx = path.join(path.dirname(require.resolve("tsx/package.json")), "dist/cli.mjs")
    return [process.execPath, tsx, "--conditions=@phasebound/source", program].join(" ")
  }
  const bundle = path.join(workDir(), "client.mjs")
  const esbuild = await import("esbuild")
  await esbuild.build({
    entryPoints: [program],
    outfile: bundle,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@phasebound/source"],
    logLevel: "error",
    // CommonJS dependencies inside an ESM bundle still call require.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" }
  })
  return [process.execPath, bundle].join(" ")
}

const limit = limiter(concurrency)
const runs = new Map<string, Promise<ScenarioRun>>()

/**
 * The client's stdout and stderr as the CLI saved them under `resultsDir` (in a directory it
 * names after the scenario and the time, `auth/...` one level down); none when it did not run
 * the client (a skipped scenario).
 */
const clientOutputIn = (resultsDir: string): ChildOutput | undefined => {
  const saved = readdirSync(resultsDir, { recursive: true, encoding: "utf8" }).filter((file) => path.basename(file) === "stdout.txt")
  if (saved.length !== 1) return undefined
  const dir = path.join(resultsDir, path.dirname(saved[0]!))
  return { stdout: readFileSync(path.join(dir, "stdout.txt"), "utf8"), stderr: readFileSync(path.join(dir, "stderr.txt"), "utf8") }
}

const runScenario = (scenario: string, revision: Revision): Promise<ScenarioRun> => {
  const key = `${scenario}@${revision}`
  let pending = runs.get(key)
  if (pending === undefined) {
    const resultsDir = path.join(workDir(), "results", String(runs.size))
    pending = limit(async () => {
      const command = await (clientCommand ??= buildClientCommand())
      mkdirSync(resultsDir, { recursive: true })
      const result = await run(node22, [
        conformanceCli,
        "client",
        "--command",
        command,
        "--scenario",
        scenario,
        ...(revision === "extension" ? [] : ["--spec-version", revision]),
        "--timeout",
        String(clientTimeoutMs),
        "--verbose",
        "--output-dir",
        resultsDir
      ], clientTimeoutMs + 30_000)
      return { ...result, client: clientOutputIn(resultsDir) }
    }, timed.has(scenario) ? concurrency : 1)
    runs.set(key, pending)
  }
  return pending
}

/** In verbose mode the CLI prints the checks as a JSON array on stdout, and nothing else. */
const checksOf = (stdout: string): ReadonlyArray<Check> => {
  const start = stdout.indexOf("[")
  if (start === -1) return []
  try {
    return JSON.parse(stdout.slice(start)) as ReadonlyArray<Check>
  } catch {
    return []
  }
}

const describeFailure = (scenario: string, revision: Revision, result: ScenarioRun, checks: ReadonlyArray<Check>) => {
  const bad = checks
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `  ${c.status} ${c.id} (${c.name}): ${c.errorMessage ?? c.description ?? ""}`)
  const clientReport: ReportReading = result.client === undefined
    ? { _tag: "NoReport", why: "the CLI saved no client output" }
    : readReport(result.client.stdout)
  return [
    `${scenario} at ${revision}: exit ${result.exitCode} after ${result.durationMs} ms`,
    ...bad,
    // A scenario outside the revision asked is skipped with exit 0; the CLI says so on stdout.
    ...(checks.length === 0 ? [`no checks in the CLI's stdout: ${result.stdout.slice(0, 500) || "(empty)"}`] : []),
    `the client's report: ${
      clientReport._tag === "Report"
        ? clientReport.report.results.map((r) => `${r.name} ${r.ok ? "ok" : "not ok"}: ${r.detail}`).join("; ")
        : clientReport.why
    }`,
    "--- CLI stderr (includes the client's output when it failed) ---",
    result.stderr.slice(-6_000)
  ].join("\n")
}

beforeAll(() => {
  expect(existsSync(node22), `the Node 22 binary of the node22 devDependency (${node22}); run npm ci`).toBe(true)
  // The CLI splits the client command on spaces.
  expect(here.includes(" ") || process.execPath.includes(" ") || tmpdir().includes(" ")).toBe(false)
})

/**
 * What each scenario run gave, for the README's table (`table.ts` beside this file): written to
 * the file PHASEBOUND_CONFORMANCE_RESULTS names, when it is set, after the file's tests.
 */
const results: Array<{
  readonly scenario: string
  readonly revision: Revision
  readonly exitCode: number | null
  readonly passed: boolean
  readonly checks: Readonly<Record<Check["status"], number>>
  readonly durationMs: number
}> = []

afterAll(() => {
  const resultsFile = process.env.PHASEBOUND_CONFORMANCE_RESULTS
  if (resultsFile !== undefined && resultsFile !== "") {
    writeFileSync(resultsFile, JSON.stringify({ suite: "@modelcontextprotocol/conformance 0.2.0-alpha.12", at: new Date().toISOString(), results }, null, 2))
  }
  if (workDirectory !== undefined) rmSync(workDirectory, { recursive: true, force: true })
})

describe("MCP conformance suite 0.2.0-alpha.12, client scenarios", () => {
  it("runs on Node 22 and lists the scenarios this file runs", async () => {
    const version = await run(node22, ["--version"], 10_000)
    expect(version.stdout.trim()).toMatch(/^v22\./)
    for (const revision of ["2025-11-25", "2026-07-28"] as const) {
      const listed = await run(node22, [conformanceCli, "list", "--client", "--requirements", revision], 30_000)
      expect(listed.exitCode, listed.stderr).toBe(0)
      // The client section: from its heading to the next blank line.
      const section = listed.stdout.split("Client scenarios")[1]?.split(/\n\s*\n/)[0] ?? ""
      const names = [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!)
      expect(names.length).toBeGreaterThan(0)
      const ours = scenarios.filter(([, r]) => r === revision).map(([s]) => s)
      // Every scenario the revision requires is run here.
      expect(names.filter((name) => !ours.includes(name))).toEqual([])
    }
  }, 60_000)

  it.concurrent.each(scenarios)("%s at %s", async (scenario, revision) => {
    const result = await runScenario(scenario, revision)
    const checks = checksOf(result.stdout)
    const message = describeFailure(scenario, revision, result, checks)
    const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 }
    for (const check of checks) counts[check.status] += 1
    const passed = checks.length > 0 && counts.FAILURE === 0 && counts.WARNING === 0 && result.exitCode === 0 &&
      (!scenario.startsWith("sep-2640-") || counts.SKIPPED + counts.INFO === 0)
    results.push({ scenario, revision, exitCode: result.exitCode, passed, checks: counts, durationMs: result.durationMs })
    expect(checks.length, message).toBeGreaterThan(0)
    const failing = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING").map((c) => `${c.status} ${c.id}`)
    expect(failing, message).toEqual([])
    // The skills scenarios skip their check when the client never listed or never read: a skip is not a pass there.
    if (scenario.startsWith("sep-2640-")) expect(checks.filter((c) => c.status !== "SUCCESS").map((c) => `${c.status} ${c.id}`), message).toEqual([])
    expect(result.exitCode, message).toBe(0)
    // The client ran the scenario asked, to its end (ok or with an error: the CLI judged that).
    expect(result.client, `${message}\n(the CLI saved no client output)`).toBeDefined()
    const report = reportOf(result.client!)
    expect(report.results.map((r) => r.name), message).toEqual([scenario])
  }, 5 * 60_000)
})
