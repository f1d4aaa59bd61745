/**
 * The embedded default: a testkit MCP server on loopback and a real session against it.
 * Discovery and a few tool calls run under their own budgets; the summary says what happened
 * (transport, revision, per-stage timings and bytes), including one refused oversized answer.
 */
import { McpClient } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import { type DemoLine, serverName } from "./output.js"

const text = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  result.content.map((block) => ("text" in block && typeof block.text === "string" ? block.text : `[${block.type}]`)).join(" ")

/**
 * Runs the demo and returns its summary lines.
 */
export const runDemo = Effect.gen(function*() {
  const lines: Array<DemoLine> = []
  const add = (step: string, detail: string) => lines.push({ step, detail })
  const server = yield* Testkit.scoped({ mode: "sse" })
  add("server", `testkit MCP server on loopback (Streamable HTTP, SSE answers), port ${server.port}`)

  const connection = yield* McpClient.connect({
    url: server.url,
    policy: { timeout: "10 seconds", discovery: { timeout: "5 seconds" }, call: { maxBytes: 64 * 1024 } }
  })
  add("connected", `${connection.transport}, revision ${connection.protocolVersion}, server ${serverName(connection.serverInfo)}`)
  for (const stage of connection.discovery) {
    add(`discovery: ${stage.stage}`, `${stage.durationMs} ms, ${stage.bytes} bytes${stage.outcome === "ok" ? "" : `, ${stage.outcome}`}`)
  }
  add("tools", connection.tools.map((tool) => tool.name).join(", "))

  const sum = yield* connection.callTool("add", { a: 20, b: 22 })
  add("call add(20, 22)", text(sum))
  const echo = yield* connection.callTool("echo", { text: "héllo, phasebound 👋" })
  add("call echo", text(echo))
  const increment = yield* connection.callTool("increment")
  add("call increment", `${text(increment)} (server counter: ${server.counter()})`)

  // A hostile answer: 100 KB against a 64 KiB call ceiling, refused while reading.
  server.script({ on: "tools/call", kind: "exact-size", bytes: 100_000, chunkSize: 4096 })
  const refused = yield* Effect.flip(connection.callTool("echo", { text: "big" }))
  add(
    "oversized answer",
    `${refused._tag} after ${refused.observedBytes ?? 0} bytes (ceiling ${refused.limits.maxBytes}), outcome ${refused.outcome}`
  )

  for (const call of yield* connection.observations) {
    add(`call phase: ${call.operation}`, `${call.durationMs} ms, ${call.bytes} bytes, ${call.outcome}`)
  }
  return lines
}).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
