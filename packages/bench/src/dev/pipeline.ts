/**
 * Dev profiling aid (not part of `npm run bench`): where a phasebound tools/call spends its
 * CPU. Runs the same N calls at concurrency C through progressively more of the stack, against
 * the official JSON server in a child process, and prints wall time and client CPU per call.
 *
 *   tsx --conditions=@phasebound/source src/dev/pipeline.ts [calls] [concurrency] [mode]
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import { Duration, Effect, Exit, Layer, ManagedRuntime, Schema, Scope, Stream } from "effect"
import * as StreamableHttp from "../../../client/src/internal/transport/streamableHttp.js"
import * as Transport from "../../../client/src/internal/transport/transport.js"
import { startChild } from "../servers/spawn.js"
import { makeLoad } from "./load.js"

const calls = Number(process.argv[2] ?? 5000)
const concurrency = Number(process.argv[3] ?? 64)
const mode = (process.argv[4] ?? "json") as "json" | "sse"
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
const url = server.info.url

// A session for the raw variants.
let sessionId: string
{
  const init = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "p", version: "0" } }
    })
  })
  sessionId = init.headers.get("mcp-session-id")!
  await init.text()
}
const headers = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-session-id": sessionId,
  "mcp-protocol-version": "2025-06-18"
}
let id = 1
const body = () => JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } })
const parse = (text: string) => JSON.parse(mode === "sse" ? text.slice(text.indexOf("data: ") + 6) : text)

const { measure, pool, effectPool } = makeLoad(calls, concurrency, "call")

const variants = (process.argv[5] ?? "all").split(",")
const want = (v: string) => variants.includes("all") || variants.includes(v)

if (want("fetch")) {
  await measure(
    "A  fetch + text + JSON.parse (floor)",
    (n) => pool(n, async () => parse(await (await fetch(url, { method: "POST", headers, body: body() })).text()))
  )
}

if (want("fetch-abort")) {
  await measure("A2 fetch + signal, no abort", (n) =>
    pool(n, async () => {
      const controller = new AbortController()
      parse(await (await fetch(url, { method: "POST", headers, body: body(), signal: controller.signal })).text())
    }))
  await measure("A3 fetch + signal, aborted after the body (as withScope)", (n) =>
    pool(n, async () => {
      const controller = new AbortController()
      parse(await (await fetch(url, { method: "POST", headers, body: body(), signal: controller.signal })).text())
      controller.abort()
    }))
}

if (want("raw-undici")) {
  const undici = await import("undici")
  const dispatcher = new undici.Agent()
  await measure(
    "U  undici.request + text + JSON.parse (no Effect)",
    (n) => pool(n, async () => parse(await (await undici.request(url, { method: "POST", headers, body: body(), dispatcher })).body.text()))
  )
}

for (const [label, layer] of [["fetch", FetchHttpClient.layer], ["undici", NodeHttpClient.layerUndici]] as const) {
  if (!want(label)) continue
  const runtime = ManagedRuntime.make(layer as Layer.Layer<HttpClient.HttpClient>)
  const client = await runtime.runPromise(HttpClient.HttpClient)
  const request = () => HttpClientRequest.post(url).pipe(HttpClientRequest.setHeaders(headers), HttpClientRequest.bodyText(body(), "application/json"))
  await measure(
    `B  ${label}: HttpClient.execute + text + JSON.parse`,
    (n) => runtime.runPromise(effectPool(n, () => Effect.flatMap(client.execute(request()), (r) => Effect.map(r.text, parse))))
  )
  const scoped = client.pipe(HttpClient.withScope)
  await measure(
    `C  ${label}: + withScope + Effect.scoped`,
    (n) => runtime.runPromise(effectPool(n, () => Effect.scoped(Effect.flatMap(scoped.execute(request()), (r) => Effect.map(r.text, parse)))))
  )
  await measure(
    `C5 ${label}: C, body read via Stream.runForEachChunk (as the old readBounded)`,
    (n) =>
      runtime.runPromise(effectPool(n, () =>
        Effect.scoped(Effect.flatMap(scoped.execute(request()), (r) => {
          const parts: Array<Uint8Array> = []
          return Effect.map(
            Stream.runForEachChunk(r.stream, (chunk) =>
              Effect.sync(() => {
                for (const b of chunk) parts.push(b)
              })),
            () => parse(new TextDecoder().decode(Buffer.concat(parts)))
          )
        }))))
  )
  await measure(
    `C3 ${label}: + timeout(60 s) around C`,
    (n) =>
      runtime.runPromise(
        effectPool(
          n,
          () => Effect.scoped(Effect.flatMap(scoped.execute(request()), (r) => Effect.map(r.text, parse))).pipe(Effect.timeout(Duration.seconds(60)))
        )
      )
  )
  await measure(
    `C4 ${label}: + withSpan around C`,
    (n) =>
      runtime.runPromise(
        effectPool(n, () =>
          Effect.scoped(Effect.flatMap(scoped.execute(request()), (r) =>
            Effect.map(r.text, parse))).pipe(Effect.withSpan("x", { kind: "client", captureStackTrace: false })))
      )
  )

  // The transport alone, without McpClient's per-call wrapping.
  const scope = Effect.runSync(Scope.make())
  const session: Transport.SessionHeaders = { current: {} }
  const transport = await runtime.runPromise(
    StreamableHttp.make({
      url: new URL(url),
      headers: {},
      secrets: [],
      releaseTimeoutMs: 2000,
      unsolicitedMaxBytes: 1 << 24,
      inbound: Transport.answerWithoutCapabilities,
      session
    }).pipe(Scope.extend(scope))
  )
  const exchange = { stage: "initialize" as const, phase: "discovery" as const, budget: { timeoutMs: 60_000, maxBytes: 16 * 1024 * 1024 } }
  const init = await runtime.runPromise(
    transport.request({ method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "p", version: "0" } } }, exchange)
  )
  session.current = { "mcp-protocol-version": "2025-06-18", ...(init.headers["mcp-session-id"] ? { "mcp-session-id": init.headers["mcp-session-id"] } : {}) }
  const callExchange = { stage: "call" as const, phase: "call" as const, budget: { timeoutMs: 60_000, maxBytes: 16 * 1024 * 1024 } }
  await measure(
    `D  ${label}: phasebound transport.request (no McpClient wrap)`,
    (n) =>
      runtime.runPromise(effectPool(n, () => transport.request({ method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }, callExchange)))
  )
  const decode = Schema.decodeUnknown(Schema.Struct({ content: Schema.Array(Schema.Struct({ type: Schema.String })) }))
  await measure(
    `D2 ${label}: D + timeout + decode result`,
    (n) =>
      runtime.runPromise(effectPool(n, () =>
        transport.request({ method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }, callExchange).pipe(
          Effect.timeout(Duration.seconds(60)),
          Effect.flatMap((r) => decode(r.result))
        )))
  )
  await Effect.runPromise(Scope.close(scope, Exit.void))

  const scope2 = Effect.runSync(Scope.make())
  const connection = await runtime.runPromise(McpClient.connect({ url, transport: "streamable-http" }).pipe(Scope.extend(scope2)))
  await measure(`E  ${label}: phasebound connection.callTool`, (n) => runtime.runPromise(effectPool(n, () => connection.callTool("add", { a: 1, b: 2 }))))
  await Effect.runPromise(Scope.close(scope2, Exit.void))
  await runtime.dispose()
}

if (want("sdk")) {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
  const client = new Client({ name: "p", version: "0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  await measure("F  sdk 1.32.2 client.callTool", (n) => pool(n, () => client.callTool({ name: "add", arguments: { a: 1, b: 2 } })))
  await client.close()
}

await server.stop()
process.exit(0)
