/**
 * Dev measurement of where a 2025 discovery's time goes: phasebound's Effect API over undici,
 * with one shared `McpCache` (so the era per origin is known after the first connect), against
 * the official SDK v1 server (JSON or SSE answers). Prints the median of each discovery stage as
 * the connection observed it, the whole connect, and the close. Run it under `--cpu-prof` to see
 * the CPU behind the time:
 *
 *   tsx --conditions=@phasebound/source src/dev/discoveryStages.ts [json|sse] [connects]
 *   node --cpu-prof --import tsx --conditions=@phasebound/source src/dev/discoveryStages.ts json 300
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpCache, McpClient } from "@phasebound/client"
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import type { ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"
import { median, round } from "../stats.js"

const mode = (process.argv[2] ?? "json") as ServerMode
const connects = Number(process.argv[3] ?? 60)
const warmup = 10
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
const runtime = ManagedRuntime.make(Layer.merge(NodeHttpClient.layerUndici, McpCache.layer()))
const samples = new Map<string, Array<number>>()
const sample = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms])

for (let i = 0; i < connects + warmup; i++) {
  const scope = Effect.runSync(Scope.make())
  const started = performance.now()
  const connection = await runtime.runPromise(McpClient.connect({ url: server.info.url }).pipe(Scope.extend(scope)))
  const connected = performance.now()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  if (i < warmup) continue
  for (const stage of connection.discovery) sample(`${stage.attempt?.era ?? ""} ${stage.stage}`, stage.durationMs)
  sample("connect (whole)", connected - started)
  sample("close", performance.now() - connected)
}
for (const [name, values] of samples) console.log(`${mode} ${name.padEnd(28)} median ${round(median(values), 2)} ms (${values.length})`)
await runtime.dispose()
await server.stop()
