/**
 * One client process of the refusal-memory measurement: warms up with a normal discovery,
 * then samples RSS every 2 ms while one call refuses a never-ending body.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import { Effect, type Layer } from "effect"

const [url, client, ceiling] = process.argv.slice(2) as [string, string, string]
const layers: Record<string, Layer.Layer<any>> = {
  fetch: FetchHttpClient.layer,
  undici: NodeHttpClient.layerUndici,
  "node-http": NodeHttpClient.layer
}

const program = Effect.gen(function*() {
  const connection = yield* McpClient.connect({ url, policy: { call: { maxBytes: Number(ceiling) } } })
  // Warm up code paths and buffers with a few ordinary calls (the fault applies to tools/call only,
  // so these use tools/list).
  for (let i = 0; i < 5; i++) yield* connection.listTools
  // "warm": one refusal first, so the measured one shows the steady state rather than the
  // first-time growth of the JIT and the young generation.
  if (process.env.PHASEBOUND_WARM === "1") yield* Effect.flip(connection.callTool("increment"))
  globalThis.gc?.()
  const baseline = process.memoryUsage.rss()
  let peak = baseline
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 2)
  const error = yield* Effect.flip(connection.callTool("increment"))
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage.rss())
  const observed = error.observedBytes ?? 0
  return {
    client,
    rssGrowthBytes: peak - baseline,
    observedBytes: observed,
    pastCeilingBytes: observed - Number(ceiling),
    tag: error._tag
  }
}).pipe(Effect.scoped, Effect.provide(layers[client]!))

Effect.runPromise(program).then((result) => {
  process.stdout.write(JSON.stringify(result))
  process.exit(0)
})
