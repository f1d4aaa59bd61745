/**
 * A richer real peer that no one here wrote: the official MCP TypeScript SDK server
 * (`@modelcontextprotocol/sdk` 1.32.2), `McpServer` over `StreamableHTTPServerTransport`,
 * stateful (one transport and one `McpServer` per `Mcp-Session-Id`), on 127.0.0.1 port 0, for
 * the long-lived-connection features of the client (progress, typed results, live tool lists,
 * resources, prompts, logging). `jsonResponse` selects JSON answers (true) or SSE answers (false).
 *
 * What the SDK does with each (read from its dist sources, not guessed):
 *
 * - progress: a tool handler sends `notifications/progress` with `extra.sendNotification`,
 *   which the SDK relates to the request (`relatedRequestId`, shared/protocol.js). The transport
 *   writes related messages on the request's own SSE answer only: with `enableJsonResponse` it
 *   drops them (server/webStandardStreamableHttp.js, `send`, the `if (!this._enableJsonResponse)`
 *   branch). So progress reaches the client with SSE answers, never with JSON answers.
 * - logging: `McpServer.sendLoggingMessage(params, sessionId)` is the call the SDK filters by the
 *   level the session set with `logging/setLevel` (server/index.js, `isMessageIgnored`, keyed by
 *   session id); it is sent without a related request, i.e. on the standalone GET stream (both
 *   answer modes). `extra.sendNotification` is not filtered, so `log` does not use it.
 * - tool list changes: `registerTool` after `connect` sends `notifications/tools/list_changed`
 *   itself (server/mcp.js, `_createRegisteredTool`), on the standalone GET stream.
 *
 * Tools: `slow_progress` ({steps, intervalMs}: a progress report after each interval, when the
 * request asked for progress, then the result), `weather` ({city}: an `outputSchema` and the
 * matching `structuredContent`), `link_resource` (a `resource_link` to a templated resource),
 * `log` ({messages: [{level, data}]}: each through `sendLoggingMessage`), `add_tool` ({name}:
 * registers a tool named so on this session's server), `echo` ({text}). Each tool's executions
 * are counted outside any server instance (`calls`), so a call sent twice would show. `echo`
 * also records the request `_meta` its handler received (`extra._meta`, the request's
 * `params._meta` as the SDK parsed it: `metas`).
 *
 * Resources: `doc://rich/readme` and `doc://rich/changelog` (text), and the template
 * `doc://rich/notes/{id}`. Prompt: `greet` with a required `name` argument; its refusal without
 * one echoes the caller's `x-peer-key` header and a URL (as careless servers do), for the
 * client's redaction to remove.
 */
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import { serveSessions } from "./officialServer.js"

export interface RichOfficialServer {
  readonly url: string
  /** How many times the tool named so ran (every session). */
  readonly calls: (tool: string) => number
  /** The `_meta.progressToken` of each `slow_progress` call, as the tool received it. */
  readonly progressTokens: () => ReadonlyArray<string | number | undefined>
  /** The request `_meta` each `echo` call's handler received (`extra._meta`), in order. */
  readonly metas: () => ReadonlyArray<Readonly<Record<string, unknown>> | undefined>
  /** Sessions initialized so far. */
  readonly sessions: () => number
  readonly close: () => Promise<void>
}

export const RICH_TOOL_NAMES = ["add_tool", "echo", "link_resource", "log", "slow_progress", "weather"] as const

export const weatherOf = (city: string) => ({ city, temperatureC: 21.5, conditions: "sunny" })

const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const startRichOfficialServer = async (options: { readonly jsonResponse: boolean }): Promise<RichOfficialServer> => {
  const calls = new Map<string, number>()
  const count = (tool: string) => void calls.set(tool, (calls.get(tool) ?? 0) + 1)
  const progressTokens: Array<string | number | undefined> = []
  const metas: Array<Readonly<Record<string, unknown>> | undefined> = []
  let port = 0

  const makeServer = (peerKey: string) => {
    const server = new McpServer(
      { name: "rich-official-peer", version: "1.32.2" },
      { capabilities: { logging: {} } }
    )
    server.registerTool(
      "slow_progress",
      {
        description: "Reports progress after each interval, then returns",
        inputSchema: { steps: z.number().int().min(1).max(20), intervalMs: z.number().int().min(0).max(2_000) }
      },
      async ({ intervalMs, steps }, extra) => {
        count("slow_progress")
        const progressToken = extra._meta?.progressToken
        progressTokens.push(progressToken)
        for (let step = 1; step <= steps; step++) {
          await sleep(intervalMs)
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` }
            })
          }
        }
        return { content: [{ type: "text", text: `done after ${steps} steps` }] }
      }
    )
    server.registerTool(
      "weather",
      {
        description: "The weather of a city, typed",
        inputSchema: { city: z.string() },
        outputSchema: { city: z.string(), temperatureC: z.number(), conditions: z.string() }
      },
      ({ city }) => {
        count("weather")
        const weather = weatherOf(city)
        return { content: [{ type: "text", text: JSON.stringify(weather) }], structuredContent: weather }
      }
    )
    server.registerTool("link_resource", { description: "Points to a resource" }, () => {
      count("link_resource")
      return {
        content: [
          { type: "text", text: "see the linked note" },
          {
            type: "resource_link",
            uri: "doc://rich/notes/42",
            name: "note-42",
            mimeType: "text/plain",
            description: "The note numbered 42"
          }
        ]
      }
    })
    server.registerTool(
      "log",
      {
        description: "Sends log messages at the given levels",
        inputSchema: { messages: z.array(z.object({ level: z.enum(levels), data: z.string() })) }
      },
      async ({ messages }, extra) => {
        count("log")
        for (const { data, level } of messages) {
          await server.sendLoggingMessage({ level, logger: "rich-peer", data }, extra.sessionId)
        }
        return { content: [{ type: "text", text: `sent ${messages.length}` }] }
      }
    )
    server.registerTool(
      "add_tool",
      { description: "Registers a new tool on this session", inputSchema: { name: z.string().min(1) } },
      ({ name }) => {
        count("add_tool")
        server.registerTool(name, { description: `Added at runtime: ${name}` }, () => {
          count(name)
          return { content: [{ type: "text", text: `I am ${name}` }] }
        })
        return { content: [{ type: "text", text: `added ${name}` }] }
      }
    )
    server.registerTool("echo", { description: "Echoes text", inputSchema: { text: z.string() } }, ({ text }, extra) => {
      count("echo")
      metas.push(extra._meta === undefined ? undefined : structuredClone(extra._meta))
      return { content: [{ type: "text", text }] }
    })

    server.registerResource(
      "readme",
      "doc://rich/readme",
      { title: "Read me", description: "What this peer is", mimeType: "text/markdown" },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Rich peer\nThe official SDK v1." }] })
    )
    server.registerResource(
      "changelog",
      "doc://rich/changelog",
      { description: "Changes", mimeType: "text/plain" },
      (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "1.32.2: the peer" }] })
    )
    server.registerResource(
      "note",
      new ResourceTemplate("doc://rich/notes/{id}", { list: undefined }),
      { description: "A note by number", mimeType: "text/plain" },
      (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${String(id)}` }] })
    )

    // A careless refusal: it echoes the caller's key and a URL with it.
    const careless = `greet needs a name; key ${peerKey}; see http://127.0.0.1:${port}/help?key=${peerKey}`
    server.registerPrompt(
      "greet",
      { description: "Greets someone", argsSchema: { name: z.string({ error: careless }) } },
      ({ name }) => ({
        description: "A greeting",
        messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }]
      })
    )
    return server
  }

  const served = await serveSessions((req) => {
    const peerKey = req.headers["x-peer-key"]
    return makeServer(typeof peerKey === "string" ? peerKey : "none")
  }, options.jsonResponse)
  port = served.port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: (tool) => calls.get(tool) ?? 0,
    progressTokens: () => [...progressTokens],
    metas: () => [...metas],
    sessions: served.sessions,
    close: served.close
  }
}
