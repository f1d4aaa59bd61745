/**
 * The MCP behaviour of the test server, independent of HTTP: `initialize`, `tools/list`
 * (with pagination), `tools/call` for `add`, `echo`, `increment` and generated tools, `ping`.
 */
import { ErrorCode, isRecord, type JsonRpcErrorObject } from "./jsonrpc.js"
import { padString } from "./payload.js"

export const SUPPORTED_PROTOCOL_VERSIONS: ReadonlyArray<string> = ["2025-03-26", "2025-06-18", "2025-11-25"]
export const DEFAULT_PROTOCOL_VERSION = "2025-06-18"
export const SERVER_INFO = { name: "phasebound-testkit", version: "0.1.0" } as const

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
}

export type Outcome =
  | { readonly _tag: "result"; readonly result: unknown }
  | { readonly _tag: "error"; readonly error: JsonRpcErrorObject }

export interface McpBehaviourOptions {
  readonly protocolVersion?: string | undefined
  readonly extraTools?: number | undefined
  readonly pageSize?: number | undefined
  readonly schemaPadBytes?: number | undefined
}

export interface McpBehaviour {
  readonly tools: ReadonlyArray<ToolDefinition>
  /** Runs one request, including its side effects (the `increment` counter). */
  readonly handle: (method: string, params: unknown) => Outcome
  readonly counter: () => number
}

const result = (value: unknown): Outcome => ({ _tag: "result", result: value })
const failure = (code: number, message: string): Outcome => ({ _tag: "error", error: { code, message } })
const text = (value: string, isError = false): Outcome =>
  result(isError ? { content: [{ type: "text", text: value }], isError: true } : { content: [{ type: "text", text: value }] })

const makeTools = (options: McpBehaviourOptions): ReadonlyArray<ToolDefinition> => {
  const addSchema: Record<string, unknown> = {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"]
  }
  // A large schema for maxSchemaBytes tests; the pad mixes multi-byte characters.
  if (options.schemaPadBytes !== undefined && options.schemaPadBytes > 0) {
    addSchema["description"] = padString(options.schemaPadBytes)
  }
  const extra = Array.from({ length: options.extraTools ?? 0 }, (_, i): ToolDefinition => ({
    name: `tool-${i}`,
    description: `Generated tool number ${i}`,
    inputSchema: { type: "object", properties: {} }
  }))
  return [
    { name: "add", description: "Adds two numbers", inputSchema: addSchema },
    {
      name: "echo",
      description: "Returns its text argument",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
    },
    {
      name: "increment",
      description: "Increments a server-side counter (a side effect) and returns the new value",
      inputSchema: { type: "object", properties: {} }
    },
    ...extra
  ]
}

// Cursors are opaque to clients; this one is base64url JSON of the next offset.
const encodeCursor = (offset: number): string => Buffer.from(JSON.stringify({ offset })).toString("base64url")
const decodeCursor = (cursor: unknown): number | undefined => {
  if (typeof cursor !== "string") return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    const offset = isRecord(parsed) ? parsed["offset"] : undefined
    return typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined
  } catch {
    return undefined
  }
}

export const makeMcpBehaviour = (options: McpBehaviourOptions): McpBehaviour => {
  const tools = makeTools(options)
  let counter = 0

  const initialize = (params: unknown): Outcome => {
    const requested = isRecord(params) ? params["protocolVersion"] : undefined
    const protocolVersion = options.protocolVersion ??
      (typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
        ? requested
        : DEFAULT_PROTOCOL_VERSION)
    return result({ protocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: SERVER_INFO })
  }

  const listTools = (params: unknown): Outcome => {
    const cursor = isRecord(params) ? params["cursor"] : undefined
    const offset = cursor === undefined ? 0 : decodeCursor(cursor)
    if (offset === undefined || offset > tools.length) return failure(ErrorCode.InvalidParams, "Invalid cursor")
    const size = options.pageSize ?? tools.length
    const end = Math.min(offset + Math.max(1, size), tools.length)
    const page = tools.slice(offset, end)
    return result(end < tools.length ? { tools: page, nextCursor: encodeCursor(end) } : { tools: page })
  }

  const callTool = (params: unknown): Outcome => {
    if (!isRecord(params) || typeof params["name"] !== "string") {
      return failure(ErrorCode.InvalidParams, "tools/call needs a tool name")
    }
    const name = params["name"]
    const args = isRecord(params["arguments"]) ? params["arguments"] : {}
    switch (name) {
      case "add": {
        const a = args["a"]
        const b = args["b"]
        return typeof a === "number" && typeof b === "number"
          ? text(String(a + b))
          : text("add expects numbers a and b", true)
      }
      case "echo": {
        const value = args["text"]
        return typeof value === "string" ? text(value) : text("echo expects a string text", true)
      }
      case "increment":
        counter += 1
        return text(String(counter))
      default:
        return tools.some((tool) => tool.name === name) ? text(name) : text(`Unknown tool: ${name}`, true)
    }
  }

  const handle = (method: string, params: unknown): Outcome => {
    switch (method) {
      case "initialize":
        return initialize(params)
      case "ping":
        return result({})
      case "tools/list":
        return listTools(params)
      case "tools/call":
        return callTool(params)
      default:
        return failure(ErrorCode.MethodNotFound, `Method not found: ${method}`)
    }
  }

  return { tools, handle, counter: () => counter }
}
