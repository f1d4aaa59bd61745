/**
 * Dev measurement of the era per origin (docs/DESIGN.md, "The era per origin"): discovery
 * against the official SDK v1 server (2025, JSON or SSE answers) by phasebound's Effect API over
 * undici, with one shared `McpCache` (the bench's adapters) and with a cache per connection (the
 * default: each connect pays a refused `server/discover`), the Promise API with a shared
 * `createCache()`, beside SDK v1's and SDK v2's clients, in ABAB order
 * in one process, so that a loaded machine slows all three alike. Short: a few hundred connects.
 *
 *   tsx --conditions=@phasebound/source src/dev/eraCache.ts [json|sse] [connects per round]
 */
import { adapters, phaseboundUndici, type ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"
import { abab, median, round } from "../stats.js"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import { Effect, Exit, ManagedRuntime, Scope } from "effect"

const mode = (process.argv[2] ?? "json") as ServerMode
const connects = Number(process.argv[3] ?? 20)
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
const url = server.info.url

// The default: no McpCache provided, so each connection has its own and probes first.
const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici)
const perConnection = {
  name: "pb undici, cache per connection",
  connect: async () => {
    const scope = Effect.runSync(Scope.make())
    await runtime.runPromise(McpClient.connect({ url, transport: "streamable-http" }).pipe(Scope.extend(scope)))
    return { close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  }
}
const shared = phaseboundUndici()
const sdk2 = await adapters["client-2.4.0"]!()
const sdk1 = await adapters["sdk-1.32.2"]!()
const promise = await adapters["phasebound-promise"]!()
const clients = [
  perConnection,
  { name: "pb undici, shared McpCache", connect: () => shared.connect(url, mode) },
  { name: "pb Promise, shared createCache()", connect: () => promise.connect(url, mode) },
  { name: "sdk 1.32.2", connect: () => sdk1.connect(url, mode) },
  { name: "client 2.4.0", connect: () => sdk2.connect(url, mode) }
]
const samples = new Map<string, Array<number>>(clients.map((c) => [c.name, []]))
for (const client of clients) await (await client.connect()).close()
for (let rep = 0; rep < 6; rep++) {
  for (const client of abab(clients, rep)) {
    const times: Array<number> = []
    for (let i = 0; i < connects; i++) {
      const started = performance.now()
      const session = await client.connect()
      times.push(performance.now() - started)
      await session.close()
    }
    samples.get(client.name)!.push(median(times))
  }
}
for (const [name, medians] of samples) {
  console.log(`${mode} ${name.padEnd(36)} median ${round(median(medians), 2)} ms  reps ${medians.map((m) => round(m, 2)).join(" ")}`)
}
await shared.dispose?.()
await runtime.dispose()
await server.stop()
