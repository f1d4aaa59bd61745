/**
 * Workload 6, CLI start-up: the wall time of a whole `phasebound tools <url>` process (spawn to
 * exit) against the official JSON server's 50 tools on loopback, beside the floors of the two
 * runtimes (`node -e 0`, `bun -e 0`). Used by bench.ts, and on its own:
 *
 *   npm run cli-startup -w @phasebound/bench [-- --reps 15]
 *
 * Variants (each present only when built: `npm run compile -w @phasebound/cli`):
 * - node-bundle: `node dist/bin.js`, the launcher with its code cache warm (docs/BENCHMARKS.md,
 *   "CLI start-up");
 * - node-bundle-uncached: the same with NODE_DISABLE_COMPILE_CACHE=1, what a first run costs;
 * - executable: `dist/phasebound` (`bun build --compile --bytecode`).
 * Every variant runs once before the measured rounds (that run writes the code cache), then the
 * rounds alternate forward and backward (ABAB) so that a drift of the machine falls on all.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { startChild } from "./servers/spawn.js"
import { abab, median, round } from "./stats.js"

export interface CliVariant {
  readonly command: string
  readonly ms: Array<number>
  ok: boolean
  error?: string
}

export interface CliResult {
  readonly available: boolean
  readonly note?: string
  readonly variants: Record<string, CliVariant>
}

const root = fileURLToPath(new URL("../../../", import.meta.url))

interface Variant {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  /** A floor runs no CLI: no URL, no output to check. */
  readonly floor: boolean
}

export const cliVariants = (): ReadonlyArray<Variant> => {
  const bundle = `${root}packages/cli/dist/bin.js`
  const executable = `${root}packages/cli/dist/phasebound`
  const bun = `${root}node_modules/.bin/bun`
  const variants: Array<Variant> = [{ name: "node-floor", command: process.execPath, args: ["-e", "0"], floor: true }]
  if (existsSync(bun)) variants.push({ name: "bun-floor", command: bun, args: ["-e", "0"], floor: true })
  if (existsSync(bundle)) {
    variants.push({ name: "node-bundle", command: process.execPath, args: [bundle, "tools"], floor: false })
    variants.push({
      name: "node-bundle-uncached",
      command: process.execPath,
      args: [bundle, "tools"],
      env: { NODE_DISABLE_COMPILE_CACHE: "1" },
      floor: false
    })
  }
  if (existsSync(executable)) variants.push({ name: "executable", command: executable, args: ["tools"], floor: false })
  return variants
}

/** Measures every variant `reps` times against the server at `url` (one warm-up run each first). */
export const measureCliStartup = (url: string, reps: number, onRound?: (rep: number) => void): CliResult => {
  const variants = cliVariants()
  if (variants.every((v) => v.floor)) {
    return {
      available: false,
      note: "packages/cli/dist/bin.js and dist/phasebound are absent (run npm run build / compile in packages/cli)",
      variants: {}
    }
  }
  const results: Record<string, CliVariant> = {}
  const once = (variant: Variant) => {
    const args = variant.floor ? variant.args : [...variant.args, url]
    const env = variant.env === undefined ? process.env : { ...process.env, ...variant.env }
    const started = performance.now()
    const run = spawnSync(variant.command, args, { encoding: "utf8", timeout: 30_000, env })
    const ms = performance.now() - started
    const ok = run.status === 0 && (variant.floor || run.stdout.includes("tool-46"))
    const shown = [variant.command, ...args].map((a) => a.replace(root, "")).join(" ")
    const entry = (results[variant.name] ??= {
      command: variant.env === undefined ? shown : `${Object.entries(variant.env).map(([k, v]) => `${k}=${v}`).join(" ")} ${shown}`,
      ms: [],
      ok: true
    })
    if (!ok) {
      entry.ok = false
      entry.error = `exit ${run.status ?? run.signal}: ${(run.stderr || run.stdout).slice(0, 300)}`
    }
    return round(ms, 2)
  }
  // The warm-up: loads the files into the page cache and writes the code cache.
  for (const variant of variants) once(variant)
  for (let rep = 0; rep < reps; rep++) {
    for (const variant of abab(variants, rep)) results[variant.name]!.ms.push(once(variant))
    onRound?.(rep)
  }
  return { available: true, variants: results }
}

/** One line per variant: median and min, and the median over its runtime's floor. */
export const describeCliResult = (result: CliResult): Array<string> => {
  const floorOf = (name: string) => name === "executable" ? result.variants["bun-floor"] : result.variants["node-floor"]
  return Object.entries(result.variants).map(([name, v]) => {
    const floor = floorOf(name)
    const over = name.endsWith("-floor") || floor === undefined ? "" : `, ${round(median(v.ms) - median(floor.ms), 1)} ms over its floor`
    return `${name.padEnd(22)} median ${round(median(v.ms), 1)} ms, min ${round(Math.min(...v.ms), 1)} ms${over}${v.ok ? "" : ` FAILED: ${v.error}`}`
  })
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const index = process.argv.indexOf("--reps")
  const reps = index >= 0 ? Number(process.argv[index + 1]) : 15
  const server = await startChild<{ url: string }>("./officialServer.ts", ["json", "1024"])
  try {
    const result = measureCliStartup(server.info.url, reps, (rep) => process.stderr.write(`round ${rep + 1}/${reps}\n`))
    if (!result.available) console.log(result.note)
    for (const line of describeCliResult(result)) console.log(line)
    console.log(JSON.stringify(result))
  } finally {
    await server.stop()
  }
  process.exit(0)
}
