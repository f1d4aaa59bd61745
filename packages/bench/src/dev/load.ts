/**
 * Shared by the dev probes `pipeline.ts` and `legacyPost.ts`: run `calls` operations at
 * `concurrency` in flight and print wall-clock rate and client CPU per operation, after a
 * warm-up of up to 1,000.
 */
import { Effect } from "effect"

export const makeLoad = (calls: number, concurrency: number, unit: string) => {
  const measure = async (name: string, run: (n: number) => Promise<unknown>) => {
    await run(Math.min(1000, calls))
    globalThis.gc?.()
    const cpu0 = process.cpuUsage()
    const started = performance.now()
    await run(calls)
    const ms = performance.now() - started
    const cpu = process.cpuUsage(cpu0)
    const rate = ((calls / ms) * 1000).toFixed(0).padStart(6)
    const cpuPer = ((cpu.user + cpu.system) / calls).toFixed(0).padStart(5)
    console.log(`${name.padEnd(58)} ${rate} ${unit}s/s  ${cpuPer} µs CPU/${unit}`)
  }
  /** `n` promises, `concurrency` at a time. */
  const pool = async (n: number, one: () => Promise<unknown>) => {
    let next = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next++ < n) await one()
    }))
  }
  /** `n` effects, `concurrency` at a time. */
  const effectPool = <E, R>(n: number, one: () => Effect.Effect<unknown, E, R>) =>
    Effect.forEach(Array.from({ length: n }), one, { concurrency, discard: true })
  return { measure, pool, effectPool }
}
