/**
 * Dev measurement: the timeline of one client's connect + close, from undici's diagnostics
 * channels (each request's creation, its answer's headers, the end of its body), in ms from the
 * connect's start, median over `connects` cycles after a warm-up; the gaps between one answer's
 * end and the next request's creation are the client's own work.
 *
 *   tsx --conditions=@phasebound/source src/dev/discoveryTimeline.ts [json|sse] [connects] [client]
 */
import diagnostics from "node:diagnostics_channel"
import { adapters, type ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"
import { median, round } from "../stats.js"

const mode = (process.argv[2] ?? "json") as ServerMode
const connects = Number(process.argv[3] ?? 100)
const name = process.argv[4] ?? "phasebound-undici"
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
const adapter = await adapters[name]!()
let events: Array<[string, number]> = []
let t0 = 0
const methodOf = new WeakMap<object, string>()
let seq = 0
diagnostics.subscribe("undici:request:create", (m: any) => {
  const label = `${seq++}:${m.request.method}`
  methodOf.set(m.request, label)
  events.push([`${label} create`, performance.now() - t0])
})
diagnostics.subscribe(
  "undici:request:headers",
  (m: any) => events.push([`${methodOf.get(m.request)} headers ${m.response.statusCode}`, performance.now() - t0])
)
diagnostics.subscribe("undici:request:trailers", (m: any) => events.push([`${methodOf.get(m.request)} end`, performance.now() - t0])) // Marks a patched client may leave (globalThis.__pbMark), on the same timeline.
;(globalThis as { __pbMark?: (label: string) => void }).__pbMark = (label: string) => {
  events.push([`mark ${label}`, performance.now() - t0])
}
const runs: Array<Array<[string, number]>> = []
for (let i = 0; i < connects + 30; i++) {
  events = []
  seq = 0
  t0 = performance.now()
  const session = await adapter.connect(server.info.url, mode)
  events.push(["connected", performance.now() - t0])
  await session.close()
  events.push(["closed", performance.now() - t0])
  if (i >= 30) runs.push(events)
}
const byLabel = new Map<string, Array<number>>()
for (const run of runs) for (const [label, t] of run) byLabel.set(label, [...(byLabel.get(label) ?? []), t])
const rows = [...byLabel].map(([label, ts]) => [label, median(ts), ts.length] as const).sort((a, b) => a[1] - b[1])
for (const [label, t, n] of rows) console.log(`${name} ${mode} ${label.padEnd(28)} ${round(t, 2)} ms (${n})`)
await adapter.dispose?.()
await server.stop()
process.exit(0)
