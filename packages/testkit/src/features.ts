/**
 * The long-lived connection features of the test servers, opt-in with `features` so that
 * capabilities, listings and counts stay as they were without it. Pure MCP logic, no transport:
 *
 * - tools: `slow_progress` (progress notifications), `weather` and `weather_error` (an
 *   outputSchema and structuredContent, right or wrong), `link_resource` (a resource_link),
 *   `log` (log messages under the log level), `change_tools` (adds tools `added_1`, `added_2`,
 *   …, then a tools/list_changed) and `flood_notifications` (a hostile flood of log messages);
 * - resources (`test://docs/1..N`, `test://blob/1`, and `test://big/N` to read only), one
 *   resource template, prompts (`greet`, `plain`), `logging/setLevel` (handshake era);
 * - `completion/complete` of prompt and template arguments (completion.ts);
 * - `subscriptions/listen` (stateless era): the agreed filter, `toolsListChanged` only.
 *
 * What a request plays out around its answer is a `Timeline` (timeline.ts); where its
 * notifications can go is each transport's business.
 */
import { complete } from "./completion.js"
import { ErrorCode, isRecord, notificationMessage, type JsonRpcNotification } from "./jsonrpc.js"
import type { ModernOutcome, Outcome, ToolDefinition } from "./mcp.js"
import { META_LOG_LEVEL, metaOf } from "./modern.js"
import { page } from "./pagination.js"
import { padString } from "./payload.js"
import type { Timeline } from "./timeline.js"

/** The syslog severities of MCP logging, least severe first. */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const isLogLevel = (value: unknown): value is LogLevel => typeof value === "string" && (LOG_LEVELS as ReadonlyArray<string>).includes(value)

/**
 * What every test server with `features` counts, on whatever wire it has (a socket, stdout):
 * what reached the wire, not what was merely queued.
 */
export interface FeatureCounters {
  /** tools/call requests with that tool name that were run (refused ones are not): proves no call went twice. */
  toolCalls(name: string): number
  /**
   * The effect identities (`_meta["io.phasebound/effect-identity"]`) of the tools/call requests
   * with that tool name that were run, in order; calls without one are left out (compare with
   * `toolCalls`).
   */
  effectIdentities(name: string): ReadonlyArray<string>
  /** Notifications with that method handed to the wire (0 for the ones with nowhere to go). */
  notificationsSent(method: string): number
  /** `notifications/progress` handed to the wire. */
  progressSent(): number
  /** `notifications/message` handed to the wire (`log`'s and the floods'). */
  logMessagesSent(): number
  /** `notifications/tools/list_changed` handed to the wire (one per listener per change). */
  listChangedSent(): number
  /** Subscriptions the client ended (closing the stream over HTTP, `notifications/cancelled` on stdio); always 0 without subscriptions. */
  subscriptionsClosed(): number
  /**
   * Requests whose timeline was stopped before its answer (a `notifications/cancelled`, a closed
   * stream or session). Once a stop is counted that timeline sends nothing more, so a test awaits
   * this count instead of waiting to see an emitter fall silent.
   */
  timelinesStopped(): number
}

/** What `features` adds to initialize's and server/discover's capabilities. */
export const FEATURE_CAPABILITIES: Readonly<Record<string, unknown>> = {
  tools: { listChanged: true },
  resources: { listChanged: false },
  prompts: { listChanged: false },
  logging: {},
  completions: {}
}

/** The methods `features` adds to the stateless era. */
export const STATELESS_FEATURE_METHODS: ReadonlySet<string> = new Set([
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "prompts/list",
  "prompts/get",
  "subscriptions/listen",
  "completion/complete"
])

export const DEFAULT_RESOURCES = 3
/** The largest `test://big/N` served (a bigger N is not found). */
export const MAX_BIG_RESOURCE_BYTES = 256 * 1024 * 1024
/** The logger name of every log message the servers send. */
export const LOGGER = "testkit"

const MAX_STEPS = 10_000
const MAX_INTERVAL_MS = 60_000
const MAX_LOG_COUNT = 100_000
const MAX_ADDED_TOOLS = 1_000
const MAX_FLOOD_COUNT = 1_000_000
const MAX_FLOOD_BYTES = 100_000_000
const DEFAULT_FLOOD_BYTES = 100

export const WEATHER_OUTPUT_SCHEMA: Readonly<Record<string, unknown>> = {
  type: "object",
  properties: { temperature: { type: "number" }, conditions: { type: "string" } },
  required: ["temperature", "conditions"],
  additionalProperties: false
}

/** The tools `features` adds to both eras' listings, after every other tool. */
export const FEATURE_TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "slow_progress",
    description: "Works for steps × intervalMs, sending a progress notification per step when asked for progress",
    inputSchema: {
      type: "object",
      properties: {
        steps: { type: "integer", default: 3 },
        intervalMs: { type: "integer", default: 10 },
        silentAfter: { type: "integer" }
      }
    }
  },
  {
    name: "weather",
    description: "Structured weather; mode ok, mismatch (breaks the outputSchema), missing (no structuredContent) or extra",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string" }, mode: { type: "string", enum: ["ok", "mismatch", "missing", "extra"] } },
      required: ["city"]
    },
    outputSchema: WEATHER_OUTPUT_SCHEMA
  },
  {
    name: "weather_error",
    description: "Declares the weather outputSchema and fails: a tool error, with no structuredContent",
    inputSchema: { type: "object", properties: { city: { type: "string" } } },
    outputSchema: WEATHER_OUTPUT_SCHEMA
  },
  {
    name: "link_resource",
    description: "Returns a resource_link to test://docs/1",
    inputSchema: { type: "object", properties: {} }
  },
  {
    name: "log",
    description: "Sends count log messages at level (those the log level lets through), then answers",
    inputSchema: {
      type: "object",
      properties: {
        level: { type: "string", enum: [...LOG_LEVELS] },
        message: { type: "string" },
        count: { type: "integer", default: 1 }
      },
      required: ["level", "message"]
    }
  },
  {
    name: "change_tools",
    description: "Adds count tools (added_1, added_2, …), answers, then notifies every listener that the tool list changed",
    inputSchema: { type: "object", properties: { count: { type: "integer", default: 1 } } }
  },
  {
    name: "flood_notifications",
    description: "Answers, then sends every listener count debug log messages of about bytes bytes each",
    inputSchema: {
      type: "object",
      properties: { count: { type: "integer" }, bytes: { type: "integer", default: DEFAULT_FLOOD_BYTES } },
      required: ["count"]
    }
  }
]

const addedTool = (n: number): ToolDefinition => ({
  name: `added_${n}`,
  description: `Added by change_tools (number ${n}); returns its text argument`,
  inputSchema: { type: "object", properties: { text: { type: "string" } } }
})

const RESOURCE_TEMPLATES: ReadonlyArray<Readonly<Record<string, unknown>>> = [
  { uriTemplate: "test://docs/{id}", name: "doc", mimeType: "text/plain" }
]

const PROMPTS: ReadonlyArray<Readonly<Record<string, unknown>>> = [
  { name: "greet", description: "Greets someone", arguments: [{ name: "name", required: true }] },
  { name: "plain" }
]

/** Bytes 0..255, the content of `test://blob/1`. */
const BLOB = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString("base64")

const WEATHER: Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>> = {
  ok: { temperature: 21.5, conditions: "sunny" },
  mismatch: { temperature: "hot", conditions: "sunny" },
  missing: undefined,
  extra: { temperature: 1, conditions: "x", wind: 3 }
}

/** How a request is served: its era, and the handshake connection whose log level applies. */
export interface RequestScope {
  readonly stateless: boolean
  /** The handshake era's connection: a session id, or "" where there is none. */
  readonly connection: string
}

export interface FeaturesOptions {
  readonly pageSize?: number | undefined
  /** How many `test://docs/i` resources are listed (default 3). */
  readonly resources?: number | undefined
}

export interface Features {
  /** The feature tools, and those `change_tools` added after them. */
  readonly tools: () => ReadonlyArray<ToolDefinition>
  /** Runs a feature tool (or an added one); undefined for any other tool. */
  readonly callTool: (name: string, params: Readonly<Record<string, unknown>>, scope: RequestScope) => Outcome | undefined
  /** Runs a feature method of the era; undefined for any other method. */
  readonly handle: (method: string, params: unknown, scope: RequestScope) => Outcome | undefined
  /** `subscriptions/listen` (stateless era): the agreed filter, or -32602 without a filter. */
  readonly listen: (params: unknown) => ModernOutcome
  /** A stateless request's `_meta` log level, if present, must be a level: -32602 (HTTP 400) otherwise. */
  readonly checkLogLevel: (params: unknown) => Outcome | undefined
  /** Adds `count` tools; returns the notification that tells listeners so. */
  readonly changeTools: (count: number) => JsonRpcNotification
  /** `count` debug log messages whose data is `bytes` bytes long: the hostile flood. */
  readonly flood: (count: number, bytes: number) => ReadonlyArray<JsonRpcNotification>
}

const result = (value: unknown, timeline?: Timeline): Outcome =>
  timeline === undefined ? { _tag: "result", result: value } : { _tag: "result", result: value, timeline }
const failure = (code: number, message: string, data?: unknown, status?: number): Outcome => ({
  _tag: "error",
  error: data === undefined ? { code, message } : { code, message, data },
  ...(status === undefined ? {} : { status })
})
const textContent = (value: string) => [{ type: "text", text: value }]
const text = (value: string, isError = false): Outcome => result(isError ? { content: textContent(value), isError: true } : { content: textContent(value) })

/** An integer argument: its default when absent, undefined when it is not an integer in range. */
const integerArg = (value: unknown, fallback: number | undefined, max: number): number | undefined => {
  if (value === undefined) return fallback
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= max ? value : undefined
}

const isProgressToken = (value: unknown): value is string | number => typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value))

export const makeFeatures = (options: FeaturesOptions): Features => {
  const resourceCount = options.resources ?? DEFAULT_RESOURCES
  const resources: ReadonlyArray<Readonly<Record<string, unknown>>> = [
    ...Array.from({ length: resourceCount }, (_, i) => ({ uri: `test://docs/${i + 1}`, name: `doc-${i + 1}`, mimeType: "text/plain" })),
    { uri: "test://blob/1", name: "blob-1", mimeType: "application/octet-stream" }
  ]
  const added: Array<ToolDefinition> = []
  /** The handshake era's log level per connection; none set means every message goes. */
  const logLevels = new Map<string, LogLevel>()

  const tools = (): ReadonlyArray<ToolDefinition> => [...FEATURE_TOOLS, ...added]

  const changeTools = (count: number): JsonRpcNotification => {
    for (let i = 0; i < count; i++) added.push(addedTool(added.length + 1))
    return notificationMessage("notifications/tools/list_changed")
  }

  const flood = (count: number, bytes: number): ReadonlyArray<JsonRpcNotification> => {
    const message = notificationMessage("notifications/message", { level: "debug", logger: LOGGER, data: padString(bytes) })
    return Array.from({ length: count }, () => message)
  }

  const slowProgress = (args: Readonly<Record<string, unknown>>, params: Readonly<Record<string, unknown>>): Outcome => {
    const steps = integerArg(args["steps"], 3, MAX_STEPS)
    const intervalMs = integerArg(args["intervalMs"], 10, MAX_INTERVAL_MS)
    const silentAfter = integerArg(args["silentAfter"], steps, MAX_STEPS)
    if (steps === undefined || intervalMs === undefined || silentAfter === undefined) {
      return text(`slow_progress expects integers steps (<= ${MAX_STEPS}), intervalMs (<= ${MAX_INTERVAL_MS}) and silentAfter`, true)
    }
    const progressToken = metaOf(params)?.["progressToken"]
    const sent = isProgressToken(progressToken) ? Math.min(steps, silentAfter) : 0
    const notifications = Array.from({ length: sent }, (_, i) => ({
      atMs: (i + 1) * intervalMs,
      notification: notificationMessage("notifications/progress", {
        progressToken,
        progress: i + 1,
        total: steps,
        message: `step ${i + 1} of ${steps}`
      })
    }))
    return result({ content: textContent("done") }, { notifications, answerAtMs: steps * intervalMs, broadcast: [] })
  }

  const weather = (args: Readonly<Record<string, unknown>>): Outcome => {
    if (typeof args["city"] !== "string") return text("weather expects a string city", true)
    const mode = args["mode"] ?? "ok"
    if (typeof mode !== "string" || !(mode in WEATHER)) return text("weather expects mode ok, mismatch, missing or extra", true)
    const structured = WEATHER[mode]
    const content = textContent(JSON.stringify(structured ?? WEATHER["ok"]))
    return result(structured === undefined ? { content } : { content, structuredContent: structured })
  }

  /** The level a log message must reach to be sent; null: none is sent. */
  const logThreshold = (params: Readonly<Record<string, unknown>>, scope: RequestScope): LogLevel | null => {
    if (scope.stateless) {
      const level = metaOf(params)?.[META_LOG_LEVEL]
      return isLogLevel(level) ? level : null // no level asked for: nothing may be sent
    }
    return logLevels.get(scope.connection) ?? "debug"
  }

  const log = (args: Readonly<Record<string, unknown>>, params: Readonly<Record<string, unknown>>, scope: RequestScope): Outcome => {
    const level = args["level"]
    const message = args["message"]
    const count = integerArg(args["count"], 1, MAX_LOG_COUNT)
    if (!isLogLevel(level) || typeof message !== "string" || count === undefined) {
      return text(`log expects a level (${LOG_LEVELS.join(", ")}), a string message and an integer count`, true)
    }
    const threshold = logThreshold(params, scope)
    const sent = threshold !== null && LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold) ? count : 0
    const notification = notificationMessage("notifications/message", { level, logger: LOGGER, data: message })
    const notifications = Array.from({ length: sent }, () => ({ atMs: 0, notification }))
    return result({ content: textContent(`logged ${sent}`) }, { notifications, answerAtMs: 0, broadcast: [] })
  }

  const callTool = (name: string, params: Readonly<Record<string, unknown>>, scope: RequestScope): Outcome | undefined => {
    const args = isRecord(params["arguments"]) ? params["arguments"] : {}
    switch (name) {
      case "slow_progress":
        return slowProgress(args, params)
      case "weather":
        return weather(args)
      case "weather_error":
        return text("weather_error: the weather service is unavailable", true)
      case "link_resource":
        return result({ content: [{ type: "resource_link", uri: "test://docs/1", name: "doc-1", mimeType: "text/plain" }] })
      case "log":
        return log(args, params, scope)
      case "change_tools": {
        const count = integerArg(args["count"], 1, MAX_ADDED_TOOLS)
        if (count === undefined) return text(`change_tools expects an integer count (<= ${MAX_ADDED_TOOLS})`, true)
        const notification = changeTools(count)
        return result({ content: textContent(`added ${count}`) }, { notifications: [], answerAtMs: 0, broadcast: [notification] })
      }
      case "flood_notifications": {
        const count = integerArg(args["count"], undefined, MAX_FLOOD_COUNT)
        const bytes = integerArg(args["bytes"], DEFAULT_FLOOD_BYTES, MAX_FLOOD_BYTES)
        if (count === undefined || bytes === undefined) {
          return text(`flood_notifications expects integers count (<= ${MAX_FLOOD_COUNT}) and bytes (<= ${MAX_FLOOD_BYTES})`, true)
        }
        return result({ content: textContent(`flooding ${count}`) }, { notifications: [], answerAtMs: 0, broadcast: flood(count, bytes) })
      }
    }
    if (!added.some((tool) => tool.name === name)) return undefined
    return text(typeof args["text"] === "string" ? args["text"] : name)
  }

  const readResource = (params: unknown, scope: RequestScope): Outcome => {
    const uri = isRecord(params) ? params["uri"] : undefined
    if (typeof uri !== "string") return failure(ErrorCode.InvalidParams, "resources/read needs a uri")
    const doc = /^test:\/\/docs\/([1-9][0-9]*)$/.exec(uri)
    if (doc !== null && Number(doc[1]) <= resourceCount) {
      return result({ contents: [{ uri, mimeType: "text/plain", text: `Document ${doc[1]}` }] })
    }
    if (uri === "test://blob/1") return result({ contents: [{ uri, mimeType: "application/octet-stream", blob: BLOB }] })
    const big = /^test:\/\/big\/(0|[1-9][0-9]*)$/.exec(uri)
    if (big !== null && Number(big[1]) <= MAX_BIG_RESOURCE_BYTES) {
      return result({ contents: [{ uri, mimeType: "text/plain", text: padString(Number(big[1])) }] })
    }
    // -32002 until 2025-11-25; 2026-07-28 makes it -32602 (and asks clients to accept both).
    return failure(scope.stateless ? ErrorCode.InvalidParams : ErrorCode.ResourceNotFound, "Resource not found", { uri })
  }

  const getPrompt = (params: unknown): Outcome => {
    const name = isRecord(params) ? params["name"] : undefined
    const args = isRecord(params) && isRecord(params["arguments"]) ? params["arguments"] : {}
    switch (name) {
      case "greet": {
        const who = args["name"]
        if (typeof who !== "string") return failure(ErrorCode.InvalidParams, "Missing required argument: name")
        return result({
          description: "Greets someone",
          messages: [{ role: "user", content: { type: "text", text: `Hello, ${who}` } }]
        })
      }
      case "plain":
        return result({ messages: [{ role: "user", content: { type: "text", text: "A plain prompt" } }] })
      default:
        return failure(ErrorCode.InvalidParams, `Unknown prompt: ${String(name)}`)
    }
  }

  const listed = (key: string, list: ReadonlyArray<unknown>, params: unknown): Outcome => {
    const listing = page(key, list, params, options.pageSize)
    return listing.ok ? result(listing.result) : { _tag: "error", error: listing.error }
  }

  const handle = (method: string, params: unknown, scope: RequestScope): Outcome | undefined => {
    switch (method) {
      case "resources/list":
        return listed("resources", resources, params)
      case "resources/read":
        return readResource(params, scope)
      case "resources/templates/list":
        return listed("resourceTemplates", RESOURCE_TEMPLATES, params)
      case "prompts/list":
        return listed("prompts", PROMPTS, params)
      case "prompts/get":
        return getPrompt(params)
      case "completion/complete":
        return complete(params, resourceCount)
      case "logging/setLevel": {
        if (scope.stateless) return undefined // gone in 2026-07-28: the level travels in each request's _meta
        const level = isRecord(params) ? params["level"] : undefined
        if (!isLogLevel(level)) return failure(ErrorCode.InvalidParams, `Invalid log level: ${String(level)}`)
        logLevels.set(scope.connection, level)
        return result({})
      }
      default:
        return undefined
    }
  }

  const listen = (params: unknown): ModernOutcome => {
    const filter = isRecord(params) ? params["notifications"] : undefined
    if (!isRecord(filter)) return failure(ErrorCode.InvalidParams, "subscriptions/listen needs a notifications filter")
    // Only tool list changes are honoured; the acknowledgement omits every other type.
    return { _tag: "listen", notifications: filter["toolsListChanged"] === true ? { toolsListChanged: true } : {} }
  }

  const checkLogLevel = (params: unknown): Outcome | undefined => {
    const meta = metaOf(params)
    if (meta === undefined || !(META_LOG_LEVEL in meta) || isLogLevel(meta[META_LOG_LEVEL])) return undefined
    return failure(ErrorCode.InvalidParams, `Invalid params: "${META_LOG_LEVEL}" is not a log level`, undefined, 400)
  }

  return { tools, callTool, handle, listen, checkLogLevel, changeTools, flood }
}
