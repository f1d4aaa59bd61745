/**
 * What progress and output validation cost a tool call (the goal: "within 10% of a plain
 * call"). One server child (servers/progressServer.ts) serves the same `report` tool twice:
 *
 * - plain: no `outputSchema`; the call asks for no progress;
 * - full: an `outputSchema` (patterns, formats, nested objects), checked on every result, and
 *   the call asks for progress (`onProgress`), which the server reports once before answering.
 *
 * The phasebound Effect API over undici, sequential calls, the two variants alternated in ABAB
 * blocks so that drifts (JIT, GC, heat) fall on both. Prints p50 and mean per variant, per
 * block, and the medians of both with their ratio.
 *
 *   npm run progress-overhead -w @phasebound/bench [-- --calls 2000 --blocks 10]
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import { Effect, Exit, Layer, Scope } from "effect"
import { startChild } from "./servers/spawn.js"
import { abab, median, percentile, round } from "./stats.js"

const flag = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name)
  return index >= 0 ? Number(process.argv[index + 1]) : fallback
}
const calls = flag("--calls", 2_000)
const blocks = flag("--blocks", 10)
const warmup = 500

const server = await startChild<{ url: string }>("./progressServer.ts", [])
const scope = Effect.runSync(Scope.make())
// One HTTP client for the run, as a service holds one.
const client = await Effect.runPromise(Layer.buildWithScope(NodeHttpClient.layerUndici, scope))
const run = <A>(effect: Effect.Effect<A, unknown, any>) => Effect.runPromise(effect.pipe(Effect.provide(client), Scope.extend(scope)) as Effect.Effect<A>)

try {
  const plain = await run(McpClient.connect({ url: `${server.info.url}/plain`, transport: "streamable-http", revisions: ["2025-11-25"] }))
  const typed = await run(McpClient.connect({ url: `${server.info.url}/typed`, transport: "streamable-http", revisions: ["2025-11-25"] }))
  if (typed.tools[0]?.outputSchema === undefined || plain.tools[0]?.outputSchema !== undefined) throw new Error("the variants are not set up")
  let reports = 0
  const variants = {
    plain: () => plain.callTool("report", {}),
    full: () => typed.callTool("report", {}, { onProgress: () => void reports++ })
  } as const
  const names = Object.keys(variants) as Array<keyof typeof variants>
  const sample = async (name: keyof typeof variants, count: number) => {
    const times: Array<number> = []
    for (let i = 0; i < count; i++) {
      const started = performance.now()
      await Effect.runPromise(variants[name]())
      times.push(performance.now() - started)
    }
    return times
  }
  for (const name of names) await sample(name, warmup)
  const p50: Record<string, Array<number>> = { plain: [], full: [] }
  const mean: Record<string, Array<number>> = { plain: [], full: [] }
  for (let block = 0; block < blocks; block++) {
    for (const name of abab(names, block)) {
      const times = await sample(name, calls)
      p50[name]!.push(percentile(times, 50))
      mean[name]!.push(times.reduce((a, b) => a + b, 0) / times.length)
    }
  }
  if (reports < blocks * calls) throw new Error(`only ${reports} progress reports arrived`)
  const summary = {
    calls,
    blocks,
    progressReports: reports,
    p50Ms: { plain: round(median(p50.plain!)), full: round(median(p50.full!)) },
    meanMs: { plain: round(median(mean.plain!)), full: round(median(mean.full!)) },
    ratioP50: round(median(p50.full!) / median(p50.plain!)),
    ratioMean: round(median(mean.full!) / median(mean.plain!)),
    perBlockP50: { plain: p50.plain!.map((v) => round(v)), full: p50.full!.map((v) => round(v)) }
  }
  console.log(JSON.stringify(summary, null, 2))
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await server.stop()
}
