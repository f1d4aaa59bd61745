/**
 * Dev measurement of one client's discovery: wall time and client CPU per connect, and per
 * close, over `connects` connect + close cycles against the official SDK v1 server (after a
 * warm-up of 50), in rounds so that a drift shows. The bench's discovery row times the connect
 * only; the close is printed beside it because the next connect follows it.
 *
 *   tsx --conditions=@phasebound/source src/dev/discoveryCpu.ts [json|sse] [connects] [clients]
 *
 * Without `--conditions=@phasebound/source` it runs the client's `dist` build (after
 * `npm run build -w @phasebound/client`), whose line numbers a `--cpu-prof` keeps:
 *
 *   node --cpu-prof --import tsx src/dev/discoveryCpu.ts json 300 phasebound-undici
 */
import { adapters, type ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"
import { median, round } from "../stats.js"

const mode = (process.argv[2] ?? "json") as ServerMode
const connects = Number(process.argv[3] ?? 200)
const names = (process.argv[4] ?? "phasebound-undici").split(",")
const rounds = 3
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
const loaded = await Promise.all(names.map(async (name) => ({ name, adapter: await adapters[name]!() })))
for (const { adapter } of loaded) {
  for (let i = 0; i < 50; i++) await (await adapter.connect(server.info.url, mode)).close()
}
for (let r = 0; r < rounds; r++) {
  for (const { adapter, name } of r % 2 === 0 ? loaded : [...loaded].reverse()) {
    const wall: Array<number> = []
    const closeWall: Array<number> = []
    let cpu = 0
    let closeCpu = 0
    for (let i = 0; i < connects / rounds; i++) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      const session = await adapter.connect(server.info.url, mode)
      const t1 = performance.now()
      const c1 = process.cpuUsage(c0)
      await session.close()
      const c2 = process.cpuUsage(c0)
      wall.push(t1 - t0)
      closeWall.push(performance.now() - t1)
      cpu += c1.user + c1.system
      closeCpu += c2.user + c2.system - (c1.user + c1.system)
    }
    const n = wall.length
    console.log(
      `round ${r} ${mode} ${name.padEnd(20)} connect median ${round(median(wall), 2)} ms, CPU ${round(cpu / n / 1000, 2)} ms; close median ${
        round(median(closeWall), 2)
      } ms, CPU ${round(closeCpu / n / 1000, 2)} ms`
    )
  }
}
for (const { adapter } of loaded) await adapter.dispose?.()
await server.stop()
process.exit(0)
