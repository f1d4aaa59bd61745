/**
 * Dev profiling aid: throughput of one session over successive batches of workload 3 (2,000
 * concurrent calls each, 64 in flight), SDK 1.32.2 and phasebound (undici), to see warm-up and
 * any decline over a long run (the SDK leaks one abort listener per request).
 *
 *   tsx --no-warnings --conditions=@phasebound/source src/dev/sdkdrift.ts [sse|legacy|json]
 */
import { adapters, type ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"
const mode = (process.argv[2] ?? "sse") as ServerMode
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
for (const name of ["sdk-1.32.2", "phasebound-undici"]) {
  const adapter = await adapters[name]!()
  const session = await adapter.connect(server.info.url, mode)
  const rates: Array<number> = []
  for (let batch = 0; batch < 8; batch++) {
    const ms = await session.concurrent(2000, 64)
    rates.push(Math.round(2000 / ms * 1000))
  }
  console.log(mode, name, rates.join(" "))
  await session.close()
  await adapter.dispose?.()
}
await server.stop()
process.exit(0)
