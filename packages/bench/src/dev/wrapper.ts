/**
 * Dev profiling aid: CPU cost of phasebound's own layers around a tool call, in isolation. An
 * in-process fake `HttpClient` answers every MCP request on the next turn of the event loop
 * (no sockets, no server), so what is measured is the Effect HttpClient plumbing, the
 * transport and `McpClient` only. 64 in flight, as workload 3.
 *
 *   tsx --conditions=@phasebound/source src/dev/wrapper.ts
 */
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { McpClient } from "@phasebound/client"
import { McpSchema } from "@phasebound/client"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { withDeadline } from "../../../client/src/internal/deadline.js"
import * as StreamableHttp from "../../../client/src/internal/transport/streamableHttp.js"
import * as Transport from "../../../client/src/internal/transport/transport.js"
const decode = Schema.decodeUnknown(McpSchema.CallToolResult)

const N = Number(process.argv[2] ?? 10_000)
const variants: Array<[string, () => Effect.Effect<unknown, unknown, HttpClient.HttpClient>]> = []
const time = async (name: string, make: () => Effect.Effect<unknown, unknown, HttpClient.HttpClient>) => {
  variants.push([name, make])
}
/** Every variant, ROUNDS times in turn (so drifts spread over all), the median of each. */
const report = async () => {
  const samples = new Map<string, Array<number>>()
  for (let round = 0; round < 5; round++) {
    for (const [name, make] of variants) {
      globalThis.gc?.()
      const cpu = process.cpuUsage()
      await Effect.runPromise(Effect.forEach(Array.from({ length: N }), make, { concurrency: 64, discard: true }).pipe(Effect.provide(fake)))
      const used = process.cpuUsage(cpu)
      if (round > 0) samples.set(name, [...(samples.get(name) ?? []), (used.user + used.system) / N])
    }
  }
  for (const [name, values] of samples) {
    const sorted = [...values].sort((a, b) => a - b)
    console.log(`${name.padEnd(60)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1).padStart(7)} µs CPU/op (min ${sorted[0]!.toFixed(1)})`)
  }
}

const tools = Array.from({ length: 3 }, (_, i) => ({ name: `tool-${i}`, inputSchema: { type: "object" } }))
const answer = (message: { id?: number; method: string }): unknown => {
  switch (message.method) {
    case "initialize":
      return { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "fake", version: "0" } }
    case "tools/list":
      return { tools }
    default:
      return { content: [{ type: "text", text: "3" }] }
  }
}
const decoder = new TextDecoder()
const fake = Layer.succeed(
  HttpClient.HttpClient,
  HttpClient.make((request) =>
    Effect.async((resume) => {
      setImmediate(() => {
        const body = request.body._tag === "Uint8Array" ? JSON.parse(decoder.decode(request.body.body)) : undefined
        const headers = { "content-type": "application/json", "mcp-session-id": "s" }
        const response = body?.id === undefined
          ? new Response(null, { status: 202 })
          : new Response(JSON.stringify({ jsonrpc: "2.0", id: body.id, result: answer(body) }), { headers })
        resume(Effect.succeed(HttpClientResponse.fromWeb(request, response)))
      })
    })
  )
)

const url = "http://127.0.0.1:1/mcp"
const raw = () =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    Effect.flatMap(
      client.execute(
        HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call" }), "application/json"))
      ),
      (r) => r.text
    ))
await time("A  fake HttpClient: execute + text", raw)

const scope = Effect.runSync(Scope.make())
const transport = await Effect.runPromise(
  StreamableHttp.make({
    url: new URL(url),
    headers: {},
    secrets: [],
    releaseTimeoutMs: 2000,
    unsolicitedMaxBytes: 1 << 24,
    inbound: Transport.answerWithoutCapabilities
  }).pipe(Scope.extend(scope), Effect.provide(fake))
)
const callExchange = { stage: "call" as const, phase: "call" as const, budget: { timeoutMs: 60_000, maxBytes: 16 * 1024 * 1024 } }
await time("D  transport.request", () => transport.request({ method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }, callExchange))

const callD = () => transport.request({ method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }, callExchange)
await time("D2 transport.request + withDeadline", () => withDeadline(callD(), 60_000, () => "deadline"))
await time("D3 transport.request + timeoutFail", () => Effect.timeoutFail(callD(), { duration: "60 seconds", onTimeout: () => "deadline" }))
await time("D4 transport.request + decode result", () => Effect.flatMap(callD(), (r) => decode(r.result)))
const connection = await Effect.runPromise(McpClient.connect({ url, transport: "streamable-http" }).pipe(Scope.extend(scope), Effect.provide(fake)))
await time("E  connection.callTool", () => connection.callTool("add", { a: 1, b: 2 }))
await report()
await Effect.runPromise(Scope.close(scope, Exit.void))
process.exit(0)
