/** Dev profiling aid: `FetchHttpClient` execute + text alone, under --cpu-prof (see analysis.md). */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { startChild } from "../servers/spawn.js"

const server = await startChild<{ url: string }>("./officialServer.ts", ["json", "1024"])
const url = server.info.url
const init = await fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "p", version: "0" } } })
})
const headers = { accept: "application/json, text/event-stream", "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-06-18" }
await init.text()
let id = 1
const one = Effect.flatMap(HttpClient.HttpClient, (client) =>
  Effect.flatMap(
    client.execute(HttpClientRequest.post(url).pipe(HttpClientRequest.setHeaders(headers), HttpClientRequest.bodyText(JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }), "application/json"))),
    (r) => r.text
  ))
const run = (n: number) => Effect.runPromise(Effect.forEach(Array.from({ length: n }), () => one, { concurrency: 64, discard: true }).pipe(Effect.provide(FetchHttpClient.layer)))
await run(1000)
const cpu = process.cpuUsage()
await run(4000)
const used = process.cpuUsage(cpu)
console.log(`FetchHttpClient execute + text: ${((used.user + used.system) / 4000).toFixed(0)} µs CPU/call`)
await server.stop()
process.exit(0)
