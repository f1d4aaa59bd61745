/**
 * The embedded default: testkit MCP servers on loopback and real sessions against them. First a
 * server of the current revision (2026-07-28): its discovery and a few tool calls run under their
 * own budgets, one oversized answer is refused, and the summary says what happened (transport,
 * revision, per-stage timings and bytes). Then a server of the 2025 revisions, to show the
 * negotiation: the 2026-07-28 probe it refuses, and the handshake that follows.
 */
import { McpClient } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import { type DemoLine, serverName } from "./output.js"

const text = (result: { readonly content: ReadonlyArray<{ readonly type: string }> }) =>
  result.content.map((block) => ("text" in block && typeof block.text === "string" ? block.text : `[${block.type}]`)).join(" ")

const cost = (observation: McpClient.Observation) =>
  `${observation.durationMs} ms, ${observation.bytes} bytes${observation.outcome === "ok" ? "" : `, ${observation.outcome}`}`

const policy = { timeout: "10 seconds", discovery: { timeout: "5 seconds" }, call: { maxBytes: 64 * 1024 } } as const

/**
 * Runs the demo and returns its summary lines.
 */
export const runDemo = Effect.gen(function*() {
  const lines: Array<DemoLine> = []
  const add = (step: string, detail: string) => lines.push({ step, detail })
  const server = yield* Testkit.scoped({ mode: "sse", era: "stateless" })
  add("server", `testkit MCP server on loopback (revision 2026-07-28, Streamable HTTP, SSE answers), port ${server.port}`)

  const connection = yield* McpClient.connect({ url: server.url, policy })
  add("connected", `${connection.transport}, revision ${connection.protocolVersion}, server ${serverName(connection.serverInfo)}`)
  for (const stage of connection.discovery) add(`discovery: ${stage.stage}`, cost(stage))
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

  for (const call of yield* connection.observations) add(`call phase: ${call.operation}`, cost(call))

  // The negotiation, against a server of the 2025 revisions: the 2026-07-28 probe is refused (a
  // JSON-RPC error that no 2026 server gives), and the handshake follows under the same deadline.
  const older = yield* Testkit.scoped({ mode: "sse" })
  add("older server", `testkit MCP server on loopback (revisions 2024-11-05 to 2025-11-25), port ${older.port}`)
  const negotiated = yield* McpClient.connect({ url: older.url, policy })
  add("connected", `${negotiated.transport}, revision ${negotiated.protocolVersion}, server ${serverName(negotiated.serverInfo)}`)
  for (const stage of negotiated.discovery) {
    const probe = stage.stage === "discover" && stage.outcome !== "ok"
    add(
      probe ? "negotiation: 2026-07-28 probe" : `discovery: ${stage.stage}`,
      probe ? `refused (${stage.outcome}): the server speaks an earlier revision; ${stage.durationMs} ms, ${stage.bytes} bytes` : cost(stage)
    )
  }
  return lines
}).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
