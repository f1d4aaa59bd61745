/**
 * What a successful run prints on stdout: JSON in machine mode (`--json`, or a stdout that is
 * not a TTY), readable tables on a TTY. Every renderer returns the whole text; printing it is
 * the entry point's job. What a server wrote reaches a terminal printable only (`oneLine`,
 * `printable`): its control characters could drive the terminal.
 */
import type { McpClient, McpSchema } from "@phasebound/client"

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

/**
 * A peer's text made one line for a terminal: newlines and control characters (escape
 * sequences included) become spaces.
 */
export const oneLine = (text: string): string => text.replace(/\p{Cc}+/gu, " ")

/**
 * A peer's text for a terminal, its lines kept: line ends become `\n`, tabs stay, every other
 * control character (an escape sequence's ESC, a lone CR that would overwrite the line) becomes
 * a space.
 */
export const printable = (text: string): string =>
  // eslint-disable-next-line no-control-regex -- the control characters but tab and newline, written out
  text.replace(/\r\n/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, " ")

/** Left-aligned columns; a cell's newlines and control characters become spaces. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const all = [header, ...rows].map((row) => row.map(oneLine))
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

/** The server's log messages of a call (`call --server-log-level`): at most a hundred, the rest counted. */
export interface ServerLog {
  readonly logs: ReadonlyArray<McpSchema.LogMessage>
  readonly dropped: number
}

/** `level logger: data` on one line: the data is the server's, a string as is, anything else as JSON. */
const logLine = ({ data, level, logger }: McpSchema.LogMessage): string =>
  oneLine(`${level}${logger === undefined ? "" : ` ${logger}`}: ${typeof data === "string" ? data : JSON.stringify(data)}`)

const renderServerLog = ({ dropped, logs }: ServerLog): string =>
  logs.length === 0 && dropped === 0
    ? "server log: (none)\n"
    : `server log:\n${logs.map((log) => `  ${logLine(log)}\n`).join("")}${dropped > 0 ? `  (${dropped} more dropped)\n` : ""}`

/**
 * A call's result; with `--server-log-level`, the server's log messages after it (JSON: `logs`, and
 * `logsDropped` when some were left out). The result's text is the server's: printable only.
 */
export const renderCall = (result: McpSchema.CallToolResult, machine: boolean, serverLog?: ServerLog): string => {
  if (machine) {
    return json(
      serverLog === undefined
        ? result
        : { ...result, logs: serverLog.logs, ...(serverLog.dropped > 0 ? { logsDropped: serverLog.dropped } : {}) }
    )
  }
  const lines = result.content.map(blockText)
  if (result.structuredContent !== undefined) lines.push(JSON.stringify(result.structuredContent, null, 2))
  const body = printable(lines.join("\n"))
  const text = result.isError === true ? `tool error: ${body}\n` : `${body}\n`
  return serverLog === undefined ? text : `${text}${renderServerLog(serverLog)}`
}

export const renderResources = (resources: ReadonlyArray<McpSchema.Resource>, machine: boolean): string =>
  machine
    ? json({ resources })
    : resources.length === 0
    ? "no resources\n"
    : table(["URI", "NAME", "MIME TYPE"], resources.map((r) => [r.uri, r.name, r.mimeType ?? ""]))

export const renderTemplates = (resourceTemplates: ReadonlyArray<McpSchema.ResourceTemplate>, machine: boolean): string =>
  machine
    ? json({ resourceTemplates })
    : resourceTemplates.length === 0
    ? "no resource templates\n"
    : table(["URI TEMPLATE", "NAME", "MIME TYPE"], resourceTemplates.map((t) => [t.uriTemplate, t.name, t.mimeType ?? ""]))

/** The bytes a base64 text stands for (without decoding it). */
const base64Bytes = (blob: string): number => {
  const digits = blob.replace(/[\s=]/g, "").length
  return Math.floor((digits * 3) / 4)
}

/** `read`: text contents as they are (printable), a blob as one line `<N bytes, mimeType>`. */
export const renderRead = (result: McpSchema.ReadResourceResult, machine: boolean): string => {
  if (machine) return json(result)
  if (result.contents.length === 0) return "no contents\n"
  return result.contents.map((contents) => {
    if ("text" in contents) {
      const text = printable(contents.text)
      return text.endsWith("\n") ? text : `${text}\n`
    }
    const bytes = base64Bytes(contents.blob)
    return oneLine(`<${bytes} byte${bytes === 1 ? "" : "s"}${contents.mimeType === undefined ? "" : `, ${contents.mimeType}`}>`) + "\n"
  }).join("")
}

/** A prompt's arguments as a usage line would write them: `name` required, `[name]` optional. */
const promptArguments = (prompt: McpSchema.Prompt): string =>
  (prompt.arguments ?? []).map((arg) => (arg.required === true ? arg.name : `[${arg.name}]`)).join(" ")

export const renderPrompts = (prompts: ReadonlyArray<McpSchema.Prompt>, machine: boolean): string =>
  machine
    ? json({ prompts })
    : prompts.length === 0
    ? "no prompts\n"
    : table(["PROMPT", "ARGUMENTS", "DESCRIPTION"], prompts.map((p) => [p.name, promptArguments(p), p.description ?? ""]))

/** `prompt`: each message as `role: text` (a block that is not text as JSON), printable. */
export const renderPrompt = (result: McpSchema.GetPromptResult, machine: boolean): string =>
  machine
    ? json(result)
    : result.messages.length === 0
    ? "no messages\n"
    : result.messages.map((message) => printable(`${message.role}: ${blockText(message.content)}`) + "\n").join("")

/** One step of the demo, as it is shown. */
export interface DemoLine {
  readonly step: string
  readonly detail: string
}

/** A server's name and version, or a word saying it gave none. */
export const serverName = (info: McpClient.Connection["serverInfo"]): string => info === undefined ? "(unnamed)" : `${info.name} ${info.version}`

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
    [
      ...summary.stages.map((s) => [
        "operation" in s ? `${s.stage} (authorization)` : s.stage,
        String(s.durationMs),
        String(s.bytes)
      ]),
      [
        "total",
        String(summary.total.durationMs),
        String(summary.total.bytes)
      ]
    ]
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
