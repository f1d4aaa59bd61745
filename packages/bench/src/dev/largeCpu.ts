/**
 * Dev profiling aid: client CPU per 8 MiB tools/list and tools/call result, per client, against
 * the official server's big endpoint (workload 4), so that the server's share and loopback
 * scheduling (which dominate the wall time) are out of the comparison.
 *
 *   tsx --conditions=@phasebound/source src/dev/largeCpu.ts [json|sse] [clients]
 */
import { adapters, type ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"
import { median } from "../stats.js"

const mode = (process.argv[2] ?? "json") as ServerMode
const names = (process.argv[3] ?? "phasebound-fetch,phasebound-undici,phasebound-promise,sdk-1.32.2").split(",")
const server = await startChild<{ bigUrl: string }>("./officialServer.ts", [mode])
const sessions = []
for (const name of names) {
  const adapter = await adapters[name]!()
  sessions.push({ name, session: await adapter.connect(server.info.bigUrl, mode) })
}
const cpuOf = async (run: () => Promise<unknown>) => {
  const start = process.cpuUsage()
  const t = performance.now()
  await run()
  const used = process.cpuUsage(start)
  return [(used.user + used.system) / 1000, performance.now() - t] as const
}
const rows = new Map<string, Array<readonly [number, number, number, number]>>()
for (let round = 0; round < 6; round++) {
  for (const { name, session } of round % 2 === 0 ? sessions : [...sessions].reverse()) {
    globalThis.gc?.()
    const [listCpu, listMs] = await cpuOf(session.listTools)
    const [callCpu, callMs] = await cpuOf(() => session.call("big", {}))
    if (round > 0) rows.set(name, [...(rows.get(name) ?? []), [listCpu, listMs, callCpu, callMs]])
  }
}
for (const [name, samples] of rows) {
  const col = (i: number) => median(samples.map((s) => s[i]!)).toFixed(1).padStart(7)
  console.log(`${name.padEnd(22)} list: ${col(0)} ms CPU ${col(1)} ms wall   call: ${col(2)} ms CPU ${col(3)} ms wall`)
}
for (const { session } of sessions) await session.close()
await server.stop()
process.exit(0)
