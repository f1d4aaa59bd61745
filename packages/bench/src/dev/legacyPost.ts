/**
 * Dev profiling aid (not part of `npm run bench`): what one legacy POST (a notification,
 * answered `202 Accepted`) costs through progressively more of the stack, against the official
 * legacy server; prints CPU per POST at `concurrency` in flight, two rounds.
 *
 *   tsx --conditions=@phasebound/source src/dev/legacyPost.ts [calls] [concurrency] [U,E,P,...|all]
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Exit, Layer, ManagedRuntime, Scope, Stream } from "effect"
import * as undici from "undici"
import { readBody } from "../../../client/src/internal/bodyReader.js"
import * as LegacySse from "../../../client/src/internal/transport/legacySse.js"
import * as Transport from "../../../client/src/internal/transport/transport.js"
import { startChild } from "../servers/spawn.js"
import { makeLoad } from "./load.js"

const calls = Number(process.argv[2] ?? 5000)
const concurrency = Number(process.argv[3] ?? 64)
const variants = (process.argv[4] ?? "all").split(",")
const want = (v: string) => variants.includes("all") || variants.includes(v)
const server = await startChild<{ url: string }>("./officialServer.ts", ["legacy", "1024"])
const sseUrl = new URL(server.info.url)

// The session: a GET stream read and discarded, its endpoint the POST target.
const dispatcher = new undici.Agent()
const get = await undici.request(sseUrl, { dispatcher, headers: { accept: "text/event-stream" } })
const endpoint = await new Promise<URL>((resolve) => {
  let text = ""
  get.body.on("data", (chunk: Buffer) => {
    text += chunk.toString()
    const match = /data: (.*)\n/.exec(text)
    if (match) resolve(new URL(match[1]!, sseUrl)) // later data is read and dropped
  })
})
const body = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
const headers = { "content-type": "application/json" }

const { measure, pool, effectPool } = makeLoad(calls, concurrency, "post")

const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici as Layer.Layer<HttpClient.HttpClient>)
const client = (await runtime.runPromise(HttpClient.HttpClient)).pipe(HttpClient.withTracerDisabledWhen(() => true))
const scopedClient = client.pipe(HttpClient.withScope)
const target = HttpClientRequest.post(endpoint)
const request = () => target.pipe(HttpClientRequest.setHeaders(headers), HttpClientRequest.bodyText(body, "application/json"))
const rawPost = () => undici.request(endpoint, { method: "POST", headers, body, dispatcher })
const effects = (one: () => Effect.Effect<unknown, unknown>) => (n: number) => runtime.runPromise(effectPool(n, one))

const scope = Effect.runSync(Scope.make())
const exchange = { stage: "call" as const, phase: "call" as const, budget: { timeoutMs: 60_000, maxBytes: 1 << 24 } }
const transport = await runtime.runPromise(
  LegacySse.make(
    { url: sseUrl, headers: {}, secrets: [], releaseTimeoutMs: 2000, unsolicitedMaxBytes: 1 << 20, inbound: Transport.answerWithoutCapabilities },
    exchange
  )
    .pipe(Scope.extend(scope))
)

const all: Record<string, readonly [string, (n: number) => Promise<unknown>]> = {
  U: ["undici.request + body.text() (no Effect)", (n) => pool(n, async () => (await rawPost()).body.text())],
  E: ["the same in two Effect.tryPromise", effects(() => Effect.flatMap(Effect.tryPromise(rawPost), (r) => Effect.tryPromise(() => r.body.text())))],
  P: ["HttpClient.execute, body not read", effects(() => client.execute(request()))],
  Pt: ["HttpClient.execute + response.text", effects(() => Effect.flatMap(client.execute(request()), (r) => r.text))],
  Ps: ["HttpClient.execute + response.stream drained", effects(() => Effect.flatMap(client.execute(request()), (r) => Stream.runDrain(r.stream)))],
  Pr: ["HttpClient.execute + readBody (ours)", effects(() => Effect.flatMap(client.execute(request()), (r) => readBody(r, 65536)))],
  S: [
    "withScope + Effect.scoped + readBody (before round 4)",
    effects(() => Effect.scoped(Effect.flatMap(scopedClient.execute(request()), (r) => readBody(r, 65536))))
  ],
  T: ["phasebound LegacySse transport.notify", effects(() => transport.notify({ method: "notifications/initialized" }, exchange))]
}

for (const round of [1, 2]) {
  console.log(`round ${round}`)
  for (const [key, [label, run]] of Object.entries(all)) {
    if (want(key)) await measure(`${key.padEnd(3)}${label}`, run)
  }
}
await Effect.runPromise(Scope.close(scope, Exit.void))
await runtime.dispose()
await server.stop()
process.exit(0)
