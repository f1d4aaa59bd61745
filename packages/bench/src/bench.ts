/**
 * `npm run bench`: every workload, every client, against the same loopback servers, each server
 * in a child process of its own. Writes bench/results/latest.json and docs/BENCHMARKS.md.
 * These are numbers, not tests: nothing here asserts a time.
 *
 *   npm run bench [-- --quick] [-- --only discovery,sequential,concurrent,large,memory,cli]
 *                 [-- --modes json,sse,legacy,stateless] [-- --clients phasebound-undici,...]
 *
 * Server modes: json, sse and legacy are the 2025 era against the official SDK v1 server
 * (servers/officialServer.ts); stateless is the 2026-07-28 revision against the official SDK v2
 * server in its 2026-only mode (servers/statelessServer.ts), workloads 1-3 only.
 */
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import { type CliResult, describeCliResult, measureCliStartup } from "./cliStartup.js"
import { clientNames, type ServerMode } from "./clients.js"
import { floorClients } from "./memoryFloor.js"
import { renderReport } from "./report.js"
import type { LatencyConfig, LatencyResult } from "./runLatency.js"
import { startChild, tsxArgs } from "./servers/spawn.js"
import { abab, median, round } from "./stats.js"

const argv = process.argv.slice(2)
const rootDir = fileURLToPath(new URL("../../../", import.meta.url))
// --render: rewrite docs/BENCHMARKS.md from bench/results/latest.json, without measuring.
if (argv.includes("--render")) {
  const { readFileSync } = await import("node:fs")
  const saved = JSON.parse(readFileSync(`${rootDir}bench/results/latest.json`, "utf8"))
  writeFileSync(`${rootDir}docs/BENCHMARKS.md`, renderReport(saved))
  process.exit(0)
}
const quick = argv.includes("--quick")
const onlyIndex = argv.indexOf("--only")
const workloads = onlyIndex >= 0
  ? argv[onlyIndex + 1]!.split(",")
  : ["discovery", "sequential", "concurrent", "large", "memory", "cli"]
const listFlag = (name: string): ReadonlyArray<string> | undefined => {
  const index = argv.indexOf(name)
  return index >= 0 ? argv[index + 1]!.split(",") : undefined
}
// Dev runs (--quick, --only, --modes, --clients): printed and saved to
// bench/results/partial.json; the published results and docs/BENCHMARKS.md come from full runs.
const modes = (listFlag("--modes") ?? ["json", "sse", "legacy", "stateless"]) as ReadonlyArray<ServerMode>
const selectedClients = listFlag("--clients") ?? clientNames
const partial = quick || onlyIndex >= 0 || argv.includes("--modes") || argv.includes("--clients")
const root = rootDir
const started = Date.now()
const log = (message: string) => process.stderr.write(`[bench +${((Date.now() - started) / 1000).toFixed(0)}s] ${message}\n`)

const REPS = quick ? 2 : 5
const settings = {
  reps: REPS,
  // A connect takes 10-20 ms: 10 a repetition let one slow connect (a GC, the host) move a
  // median by 10-20%, more than the clients differ; 50 cost a few seconds per client.
  discoveryConnects: quick ? 5 : 50,
  seqCalls: quick ? 200 : 1_000,
  // 10,000 calls x 5 repetitions x 6 clients is ~5-7 minutes per server mode on 2 cores; shorter
  // runs (2,000 calls, ~2 s each) were dominated by GC and scheduling noise. Stateless: fewer
  // calls, for the same reason (the duration of a repetition): the SDK v2 server builds a server
  // instance with its 50 tools for every request and spends ~1.25 ms of CPU on each, twice the
  // SDK v1 server's ~0.6 ms, so it caps the run at ~800 calls/s. 4,000 calls last ~5 s per
  // repetition and the mode ~2.5-3.5 minutes (4 clients); 10,000 would add 2.5-5 minutes more.
  concCalls: {
    json: quick ? 1_000 : 10_000,
    sse: quick ? 500 : 10_000,
    legacy: quick ? 500 : 10_000,
    stateless: quick ? 500 : 4_000
  },
  concurrency: 64,
  largeBytes: 8 * 1024 * 1024,
  largeSamples: 5,
  // Peers without a byte ceiling read the whole GiB (~2 GiB RSS, ~8 s each): fewer repetitions.
  memory: {
    bodyBytes: 1024 ** 3,
    ceiling: 16 * 1024 * 1024,
    timeLimitMs: 10_000,
    reps: quick ? 1 : 5,
    unboundedReps: { json: quick ? 1 : 3, sse: 1 } as Record<string, number>
  },
  cliReps: quick ? 2 : 7
}

const runJson = <A>(args: ReadonlyArray<string>, timeoutMs: number): Promise<A> =>
  new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...args], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    proc.stdout.on("data", (chunk) => (out += chunk))
    const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs)
    proc.on("exit", (code, signal) => {
      clearTimeout(timer)
      const line = out.trim().split("\n").pop() ?? ""
      try {
        resolve(JSON.parse(line) as A)
      } catch {
        reject(new Error(`child exited ${code ?? signal} without a result`))
      }
    })
  })

const script = (name: string) => fileURLToPath(new URL(name, import.meta.url))

// -------------------------------------------------------------------------------------------
// Workloads 1-4: one runner per server mode, all clients alternating inside it.

const latency: Partial<Record<ServerMode, LatencyResult>> = {}
const latencyWorkloads = workloads.filter((w) => ["discovery", "sequential", "concurrent", "large"].includes(w))
if (latencyWorkloads.length > 0) {
  for (const mode of modes) {
    // Workload 4 (large responses) runs against the 2025-era Streamable HTTP server only.
    const large = mode === "json" || mode === "sse"
    const modeWorkloads = latencyWorkloads.filter((w) => w !== "large" || large)
    if (modeWorkloads.length === 0) continue
    log(`server ${mode}: workloads ${modeWorkloads.join(", ")}`)
    const server = mode === "stateless"
      ? await startChild<{ url: string; bigUrl: string }>("./statelessServer.ts", [])
      : await startChild<{ url: string; bigUrl: string }>("./officialServer.ts", [mode, String(settings.largeBytes)])
    try {
      const config: LatencyConfig = {
        mode,
        url: server.info.url,
        bigUrl: server.info.bigUrl,
        reps: settings.reps,
        discoveryConnects: settings.discoveryConnects,
        seqCalls: settings.seqCalls,
        concCalls: settings.concCalls[mode],
        concurrency: settings.concurrency,
        large,
        largeSamples: settings.largeSamples,
        clients: selectedClients,
        workloads: modeWorkloads
      }
      latency[mode] = await runJson<LatencyResult>([...tsxArgs, script("./runLatency.ts"), JSON.stringify(config)], 1_500_000)
      for (const error of latency[mode]!.errors) log(`  ${error}`)
    } catch (error) {
      log(`  ${mode} runner failed: ${String(error)}`)
    } finally {
      await server.stop()
    }
  }
}

// -------------------------------------------------------------------------------------------
// Workload 5: each client in a child process of its own per repetition.

interface MemorySample {
  readonly client: string
  readonly mode: string
  readonly rssGrowthBytes?: number
  readonly elapsedMs?: number
  readonly outcome?: string
  readonly timedOut?: boolean
  readonly error?: string
}
const memory: Array<MemorySample> = []
if (workloads.includes("memory")) {
  for (const mode of ["json", "sse"] as const) {
    log(`memory ${mode}: ${settings.memory.bodyBytes} byte body, ${settings.memory.ceiling} byte ceiling`)
    const server = await startChild<{ url: string }>("./hugeBodyServer.ts", [mode, String(settings.memory.bodyBytes)])
    try {
      for (let rep = 0; rep < settings.memory.reps; rep++) {
        for (const client of abab([...selectedClients, ...floorClients], rep)) {
          if ((client === "sdk-1.32.2" || client === "client-2.4.0") && rep >= settings.memory.unboundedReps[mode]!) continue
          const sample = await runJson<MemorySample>(
            [
              "--expose-gc",
              ...tsxArgs,
              script("./memoryClient.ts"),
              client,
              server.info.url,
              mode,
              String(settings.memory.ceiling),
              String(settings.memory.timeLimitMs)
            ],
            settings.memory.timeLimitMs + 30_000
          ).catch((error): MemorySample => ({ client, mode, error: String(error) }))
          memory.push(sample)
          if (sample.error !== undefined) log(`  ${client}: ${sample.error}`)
        }
      }
    } finally {
      await server.stop()
    }
  }
}

// -------------------------------------------------------------------------------------------
// Workload 6: CLI start-up, `phasebound tools <url>` against the official JSON server, beside
// the floors of Node and Bun (cliStartup.ts).

let cli: CliResult | undefined
if (workloads.includes("cli")) {
  const server = await startChild<{ url: string }>("./officialServer.ts", ["json", "1024"])
  try {
    cli = measureCliStartup(server.info.url, settings.cliReps)
  } finally {
    await server.stop()
  }
  if (cli.available) { for (const line of describeCliResult(cli)) log(`cli: ${line}`) }
  else log("cli: skipped, no build")
}

// -------------------------------------------------------------------------------------------

const machine = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
  platform: `${os.type()} ${os.release()} ${os.arch()}`,
  node: process.version
}
const output = {
  generatedAt: new Date().toISOString(),
  durationSeconds: round((Date.now() - started) / 1000, 1),
  quick,
  machine,
  settings,
  latency,
  memory,
  cli,
  medians: {
    memoryGrowthBytes: Object.fromEntries(
      (["json", "sse"] as const).map((mode) => [
        mode,
        Object.fromEntries(
          clientNames.map((client) => [
            client,
            median(memory.filter((s) => s.mode === mode && s.client === client && s.rssGrowthBytes !== undefined).map((s) => s.rssGrowthBytes!))
          ])
        )
      ])
    )
  }
}
mkdirSync(`${root}bench/results`, { recursive: true })
if (partial) {
  writeFileSync(`${root}bench/results/partial.json`, JSON.stringify(output, null, 2) + "\n")
  for (const [mode, result] of Object.entries(latency)) {
    const revisions = Object.entries(result.clients).filter(([, c]) => c.protocolVersion !== undefined)
    if (revisions.length > 0) log(`${mode} negotiated: ${revisions.map(([name, c]) => `${name} ${c.protocolVersion}`).join(" | ")}`)
    for (const [name, values] of Object.entries(result)) {
      if (typeof values !== "object" || values === null || Array.isArray(values) || name === "clients") continue
      const row = Object.entries(values as Record<string, unknown>)
        .filter((entry): entry is [string, Array<number>] => Array.isArray(entry[1]) && entry[1].length > 0)
        .map(([client, samples]) => `${client} ${median(samples)}`).join(" | ")
      if (row !== "") log(`${mode} ${name}: ${row}`)
    }
  }
  log("wrote bench/results/partial.json (a dev run: docs/BENCHMARKS.md is left as it is)")
  process.exit(0)
}
writeFileSync(`${root}bench/results/latest.json`, JSON.stringify(output, null, 2) + "\n")
mkdirSync(`${root}docs`, { recursive: true })
writeFileSync(`${root}docs/BENCHMARKS.md`, renderReport(output))
log(`wrote bench/results/latest.json and docs/BENCHMARKS.md in ${output.durationSeconds} s`)
process.exit(0)
