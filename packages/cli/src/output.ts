/**
 * What a successful run prints on stdout: JSON in machine mode (`--json`, or a stdout that is
 * not a TTY), readable tables on a TTY. Every renderer returns the whole text; printing it is
 * the entry point's job.
 */
import type { McpClient, McpSchema } from "@phasebound/client"

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

/** Left-aligned columns; a cell's newlines and control characters become spaces. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  // eslint-disable-next-line no-control-regex
  const clean = (cell: string) => cell.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
  const all = [header, ...rows].map((row) => row.map(clean))
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)))
  return all
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd())
    .join("\n") + "\n"
}

/** `key  value` lines, keys aligned. */
const pairs = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...rows.map(([key]) => key.length))
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}\n`).join("")
}

export const renderTools = (tools: ReadonlyArray<McpSchema.Tool>, machine: boolean): string =>
  machine
    ? json({ tools })
    : tools.length === 0
    ? "no tools\n"
    : table(["TOOL", "DESCRIPTION"], tools.map((tool) => [tool.name, tool.description ?? ""]))

const blockText = (block: McpSchema.CallToolResult["content"][number]): string =>
  "text" in block && typeof block.text === "string" ? block.text : JSON.stringify(block)

export const renderCall = (result: McpSchema.CallToolResult, machine: boolean): string => {
  if (machine) return json(result)
  const lines = result.content.map(blockText)
  if (result.structuredContent !== undefined) lines.push(JSON.stringify(result.structuredContent, null, 2))
  const body = lines.join("\n")
  return result.isError === true ? `tool error: ${body}\n` : `${body}\n`
}

/** One step of the demo, as it is shown. */
export interface DemoLine {
  readonly step: string
  readonly detail: string
}

/** A server's name and version, or a word saying it gave none. */
export const serverName = (info: McpClient.Connection["serverInfo"]): string =>
  info === undefined ? "(unnamed)" : `${info.name} ${info.version}`

export const discoverySummary = (connection: McpClient.Connection) => ({
  server: connection.serverInfo,
  protocolVersion: connection.protocolVersion,
  transport: connection.transport,
  capabilities: connection.capabilities,
  ...(connection.instructions === undefined ? {} : { instructions: connection.instructions }),
  tools: connection.tools.length,
  limits: { discovery: connection.policy.discovery, call: connection.policy.call },
  // An OAuth authorization (after a 401) is a stage entry of its own, `operation: "authorization"`;
  // the refused request sent again after it is `resent: true`.
  stages: connection.discovery.map(({ attempt, bytes, durationMs, excludedTools, operation, outcome, resent, stage }) => ({
    stage,
    ...(operation === "authorization" ? { operation } : {}),
    durationMs,
    bytes,
    outcome,
    ...(attempt === undefined ? {} : { era: attempt.era, transport: attempt.transport }),
    ...(excludedTools === undefined ? {} : { excludedTools }),
    ...(resent === true ? { resent } : {})
  })),
  total: {
    durationMs: connection.discovery.reduce((sum, stage) => sum + stage.durationMs, 0),
    bytes: connection.discovery.reduce((sum, stage) => sum + stage.bytes, 0)
  }
})

export const renderDiscover = (connection: McpClient.Connection, machine: boolean): string => {
  const summary = discoverySummary(connection)
  if (machine) return json(summary)
  const facts = pairs([
    ["server", serverName(summary.server)],
    ["revision", summary.protocolVersion],
    ["transport", summary.transport],
    ["tools", String(summary.tools)],
    ["discovery budget", `${summary.limits.discovery.timeoutMs} ms, ${summary.limits.discovery.maxBytes} bytes`],
    ["call budget", `${summary.limits.call.timeoutMs} ms, ${summary.limits.call.maxBytes} bytes`]
  ])
  const stages = table(
    ["STAGE", "MS", "BYTES"],
    [...summary.stages.map((s) => [
      "operation" in s ? `${s.stage} (authorization)` : s.stage,
      String(s.durationMs),
      String(s.bytes)
    ]), [
      "total",
      String(summary.total.durationMs),
      String(summary.total.bytes)
    ]]
  )
  return `${facts}\n${stages}`
}

export const renderDemo = (lines: ReadonlyArray<DemoLine>, machine: boolean): string => {
  if (machine) return json({ demo: lines })
  const width = Math.max(...lines.map((line) => line.step.length))
  return "phasebound demo: a real MCP session against a loopback server\n\n" +
    lines.map((line) => `  ${line.step.padEnd(width)}  ${line.detail}\n`).join("")
}

/**
 * `login`'s result. One JSON line in machine mode (stdout may already hold the
 * `{"authorize":...}` line): `authorized` is false when the server asked for no authorization.
 */
export const renderLogin = (
  result: { readonly authorized: boolean; readonly connection: McpClient.Connection },
  machine: boolean
): string => {
  const { authorized, connection } = result
  if (machine) {
    return `${
      JSON.stringify({
        loggedIn: true,
        authorized,
        transport: connection.transport,
        protocolVersion: connection.protocolVersion,
        tools: connection.tools.length
      })
    }\n`
  }
  const tools = `${connection.tools.length} tool${connection.tools.length === 1 ? "" : "s"}`
  return authorized
    ? `Logged in: ${tools}\n`
    : `No authorization needed: the server did not ask for it (${tools}); nothing was stored\n`
}

/** `logout`'s result: one JSON line in machine mode; `removed` says whether an entry was there. */
export const renderLogout = (removed: boolean, machine: boolean): string =>
  machine
    ? `${JSON.stringify({ loggedOut: true, removed })}\n`
    : removed
    ? "Logged out\n"
    : "Logged out (nothing was stored for this server)\n"

/** `ping`: the round trip, and where it went. */
export const renderPing = (ms: number, connection: McpClient.Connection, machine: boolean): string =>
  machine
    ? JSON.stringify({ ms, transport: connection.transport, protocolVersion: connection.protocolVersion }) + "\n"
    : `pong in ${ms} ms (${connection.transport}, ${connection.protocolVersion})\n`
