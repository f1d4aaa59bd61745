/**
 * The MCP behaviour of the test servers, independent of any transport, framed three ways:
 * Streamable HTTP (StreamableHttpServer.ts), legacy HTTP+SSE (LegacySseServer.ts) and stdio
 * (stdio/stdioServer.ts, newline-delimited JSON-RPC). It serves `initialize`, `tools/list`
 * (with pagination), `tools/call` for `add`, `echo`, `increment` and generated tools, `ping`.
 *
 * The stateless era (2026-07-28, `handleModern`) serves `server/discover`, `tools/list` and
 * `tools/call` with `resultType` on every result, over a larger tool set: the same tools plus
 * `region_query` (an `x-mcp-header` parameter), `ask_name` (a multi round-trip elicitation) and,
 * on request, `typed_headers` and tools whose `x-mcp-header` declarations are invalid.
 *
 * With `features` (features.ts), both eras add capabilities, tools after every other one,
 * resources, prompts and logging; the stateless era also `subscriptions/listen`. With
 * `effectTools` (effects.ts), both eras add `lookup`, `upsert` and `append` after the generated
 * tools. Every tools/call run counts its tool and the effect identity it carried.
 */
import { EFFECT_TOOLS, effectIdentityOf, makeEffectTools } from "./effects.js"
import { FEATURE_CAPABILITIES, makeFeatures, type Features, type RequestScope } from "./features.js"
import { ErrorCode, isRecord, type JsonRpcErrorObject } from "./jsonrpc.js"
import {
  ASK_NAME_INPUT_KEY,
  ASK_NAME_INPUT_REQUESTS,
  DEFAULT_MODERN_VERSIONS,
  DEFAULT_TTL_MS,
  inputRequiredResult,
  META_CLIENT_CAPABILITIES,
  META_SERVER_INFO,
  metaOf,
  RequestStates,
  SignedRequestStates
} from "./modern.js"
import { page } from "./pagination.js"
import { padString } from "./payload.js"
import type { Timeline } from "./timeline.js"

export const SUPPORTED_PROTOCOL_VERSIONS: ReadonlyArray<string> = ["2025-03-26", "2025-06-18", "2025-11-25"]
export const DEFAULT_PROTOCOL_VERSION = "2025-06-18"
export const SERVER_INFO = { name: "phasebound-testkit", version: "0.1.0" } as const

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema?: Readonly<Record<string, unknown>>
  /** MCP tool annotations (`readOnlyHint`, `idempotentHint`, ...), as listed. */
  readonly annotations?: Readonly<Record<string, unknown>>
}

export type Outcome =
  | {
    readonly _tag: "result"
    readonly result: unknown
    /** What the request plays out around this answer (features only); absent: the answer, at once. */
    readonly timeline?: Timeline
  }
  | {
    readonly _tag: "error"
    readonly error: JsonRpcErrorObject
    /** The HTTP status the stateless era gives this error, when it is not 200. */
    readonly status?: number
  }

/**
 * What a stateless request gets: an Outcome, or (with features) `subscriptions/listen` accepted:
 * the transport opens the stream and acknowledges `notifications`, the agreed filter.
 */
export type ModernOutcome = Outcome | { readonly _tag: "listen"; readonly notifications: Readonly<Record<string, unknown>> }

export interface McpBehaviourOptions {
  readonly protocolVersion?: string | undefined
  readonly extraTools?: number | undefined
  readonly pageSize?: number | undefined
  readonly schemaPadBytes?: number | undefined
  /** server/discover's `supportedVersions` (default ["2026-07-28"]). */
  readonly supportedVersions?: ReadonlyArray<string> | undefined
  /** ttlMs of server/discover and stateless tools/list results (default 60000). */
  readonly ttlMs?: number | undefined
  /** server/discover's `instructions` (absent by default). */
  readonly instructions?: string | undefined
  /** Adds tools whose `x-mcp-header` declarations are invalid to the stateless listing. */
  readonly invalidHeaderTools?: boolean | undefined
  /** Adds `typed_headers` (integer, boolean and nested `x-mcp-header` parameters) to the stateless listing. */
  readonly typedHeaderTool?: boolean | undefined
  /** The long-lived connection features of features.ts (default false: none of it). */
  readonly features?: boolean | undefined
  /** With `features`: how many `test://docs/i` resources are listed (default 3). */
  readonly resources?: number | undefined
  /** The tools with a lasting effect of effects.ts, in both eras (default false). */
  readonly effectTools?: boolean | undefined
  /** The versions initialize agrees to when the client asks for one (default SUPPORTED_PROTOCOL_VERSIONS). */
  readonly handshakeVersions?: ReadonlyArray<string> | undefined
  /**
   * Lists and serves `region_query` in the stateless era (default true). A framing without
   * headers (stdio) leaves it out: its `x-mcp-header` parameter has nothing to travel in.
   */
  readonly headerTools?: boolean | undefined
  /** Request states that verify in any process of this kind (modern.ts `SignedRequestStates`); default: only this server's. */
  readonly signedRequestStates?: boolean | undefined
  /** Called for every tools/call run, before it runs, with its tool name and the effect identity it carried. */
  readonly onToolCall?: ((name: string, effectIdentity: string | undefined) => void) | undefined
}

export interface McpBehaviour {
  /** The tools of the handshake era (as they are now: `change_tools` adds some). */
  readonly tools: ReadonlyArray<ToolDefinition>
  /** The tools of the stateless era (as they are now). */
  readonly modernTools: ReadonlyArray<ToolDefinition>
  /**
   * Runs one request, including its side effects (the `increment` counter). `connection` (a
   * session id; "" by default) is whose log level `logging/setLevel` sets and `log` obeys.
   */
  readonly handle: (method: string, params: unknown, connection?: string) => Outcome
  /**
   * Runs one request of the stateless era whose `_meta` and headers are already validated,
   * side effects included. An unknown method is -32601 (HTTP 404 is the transport's to add).
   */
  readonly handleModern: (method: string, params: unknown) => ModernOutcome
  /** Issues a request state `ask_name` accepts (for faults that ask for input in its place). */
  readonly issueRequestState: () => string
  readonly counter: () => number
  /** tools/call requests run for that tool name (in either era). */
  readonly toolCalls: (name: string) => number
  /** The effect identities the tools/call requests run for that tool carried, in order (those without one are left out). */
  readonly effectIdentities: (name: string) => ReadonlyArray<string>
  /** The features, with `features`. */
  readonly features: Features | undefined
}

const result = (value: unknown): Outcome => ({ _tag: "result", result: value })
const failure = (code: number, message: string, data?: unknown, status?: number): Outcome => ({
  _tag: "error",
  error: data === undefined ? { code, message } : { code, message, data },
  ...(status === undefined ? {} : { status })
})
const text = (value: string, isError = false): Outcome =>
  result(isError ? { content: [{ type: "text", text: value }], isError: true } : { content: [{ type: "text", text: value }] })

/** The tools of both eras, and the generated ones that come after every other tool. */
const makeTools = (
  options: McpBehaviourOptions
): { readonly core: ReadonlyArray<ToolDefinition>; readonly extra: ReadonlyArray<ToolDefinition> } => {
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
  return {
    core: [
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
      }
    ],
    extra
  }
}

/** `region_query`: a string parameter mirrored into `Mcp-Param-Region`. */
export const REGION_QUERY_TOOL: ToolDefinition = {
  name: "region_query",
  description: "Runs a query in a region (the region travels as the Mcp-Param-Region header)",
  inputSchema: {
    type: "object",
    properties: { region: { type: "string", "x-mcp-header": "Region" }, query: { type: "string" } },
    required: ["query"]
  }
}

/** `ask_name`: asks for a name by a multi round-trip elicitation, then greets it. */
export const ASK_NAME_TOOL: ToolDefinition = {
  name: "ask_name",
  description: "Asks for a name (an elicitation, by multi round-trip request) and greets it",
  inputSchema: { type: "object", properties: {} }
}

/** `typed_headers`: an integer, a boolean and a nested string parameter, each mirrored into a header. */
export const TYPED_HEADERS_TOOL: ToolDefinition = {
  name: "typed_headers",
  description: "Returns its arguments; count, flag and target.zone travel as Mcp-Param-Count, -Flag and -Zone",
  inputSchema: {
    type: "object",
    properties: {
      count: { type: "integer", "x-mcp-header": "Count" },
      flag: { type: "boolean", "x-mcp-header": "Flag" },
      target: { type: "object", properties: { zone: { type: "string", "x-mcp-header": "Zone" } } }
    }
  }
}

/** One tool per way an `x-mcp-header` declaration can be invalid; a 2026 client must leave each out. */
export const INVALID_HEADER_TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "bad_header_empty",
    description: "x-mcp-header is empty",
    inputSchema: { type: "object", properties: { a: { type: "string", "x-mcp-header": "" } } }
  },
  {
    name: "bad_header_space",
    description: "x-mcp-header is not an HTTP token (it holds a space)",
    inputSchema: { type: "object", properties: { a: { type: "string", "x-mcp-header": "Bad Name" } } }
  },
  {
    name: "bad_header_duplicate",
    description: "two parameters declare the same x-mcp-header, ignoring case",
    inputSchema: {
      type: "object",
      properties: { a: { type: "string", "x-mcp-header": "Zone" }, b: { type: "string", "x-mcp-header": "zone" } }
    }
  },
  {
    name: "bad_header_number",
    description: "x-mcp-header on a number parameter",
    inputSchema: { type: "object", properties: { amount: { type: "number", "x-mcp-header": "Amount" } } }
  },
  {
    name: "bad_header_in_items",
    description: "x-mcp-header inside the items of an array",
    inputSchema: {
      type: "object",
      properties: { list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } }
    }
  },
  {
    name: "bad_header_in_oneof",
    description: "x-mcp-header under oneOf",
    inputSchema: {
      type: "object",
      properties: { choice: { oneOf: [{ type: "string", "x-mcp-header": "Choice" }, { type: "integer" }] } }
    }
  }
]

const makeModernTools = (
  options: McpBehaviourOptions,
  core: ReadonlyArray<ToolDefinition>,
  extra: ReadonlyArray<ToolDefinition>
): ReadonlyArray<ToolDefinition> => [
  ...core,
  ...(options.headerTools === false ? [] : [REGION_QUERY_TOOL]),
  ASK_NAME_TOOL,
  ...(options.typedHeaderTool === true ? [TYPED_HEADERS_TOOL] : []),
  ...(options.invalidHeaderTools === true ? INVALID_HEADER_TOOLS : []),
  ...extra
]

/** Results of the stateless era that carry caching hints. */
const CACHEABLE: ReadonlySet<string> = new Set([
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list"
])

const HANDSHAKE: RequestScope = { stateless: false, connection: "" }
const STATELESS: RequestScope = { stateless: true, connection: "" }

export const makeMcpBehaviour = (options: McpBehaviourOptions): McpBehaviour => {
  const { core, extra } = makeTools(options)
  const features = options.features === true ? makeFeatures(options) : undefined
  const effects = options.effectTools === true ? makeEffectTools() : undefined
  const effectTools = effects === undefined ? [] : EFFECT_TOOLS
  const baseTools: ReadonlyArray<ToolDefinition> = [...core, ...extra, ...effectTools]
  const baseModernTools = [...makeModernTools(options, core, extra), ...effectTools]
  const currentTools = (): ReadonlyArray<ToolDefinition> => features === undefined ? baseTools : [...baseTools, ...features.tools()]
  const currentModernTools = (): ReadonlyArray<ToolDefinition> => features === undefined ? baseModernTools : [...baseModernTools, ...features.tools()]
  const requestStates = options.signedRequestStates === true ? new SignedRequestStates() : new RequestStates()
  const cacheable = { ttlMs: options.ttlMs ?? DEFAULT_TTL_MS, cacheScope: "public" }
  const toolCallCounts = new Map<string, number>()
  const toolCallIdentities = new Map<string, Array<string>>()
  let counter = 0

  const initialize = (params: unknown): Outcome => {
    const requested = isRecord(params) ? params["protocolVersion"] : undefined
    const protocolVersion = options.protocolVersion ??
      (typeof requested === "string" && (options.handshakeVersions ?? SUPPORTED_PROTOCOL_VERSIONS).includes(requested)
        ? requested
        : DEFAULT_PROTOCOL_VERSION)
    const capabilities = features === undefined ? { tools: { listChanged: false } } : FEATURE_CAPABILITIES
    return result({ protocolVersion, capabilities, serverInfo: SERVER_INFO })
  }

  const listTools = (params: unknown, list: ReadonlyArray<ToolDefinition>): Outcome => {
    const listing = page("tools", list, params, options.pageSize)
    return listing.ok ? result(listing.result) : { _tag: "error", error: listing.error }
  }

  const countToolCall = (params: unknown): void => {
    const name = isRecord(params) ? params["name"] : undefined
    if (typeof name !== "string") return
    toolCallCounts.set(name, (toolCallCounts.get(name) ?? 0) + 1)
    const identity = effectIdentityOf(params)
    options.onToolCall?.(name, identity)
    if (identity !== undefined) toolCallIdentities.set(name, [...(toolCallIdentities.get(name) ?? []), identity])
  }

  const callTool = (params: unknown, list: ReadonlyArray<ToolDefinition>, scope: RequestScope): Outcome => {
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
        return effects?.callTool(name, args) ?? features?.callTool(name, params, scope) ??
          (list.some((tool) => tool.name === name) ? text(name) : text(`Unknown tool: ${name}`, true))
    }
  }

  // --- the stateless era -------------------------------------------------------------------

  /** A result of the era: `resultType: "complete"` unless it already has a resultType (its timeline kept). */
  const complete = (outcome: Outcome, extraFields: Readonly<Record<string, unknown>> = {}): Outcome =>
    outcome._tag === "result" && isRecord(outcome.result)
      ? { ...outcome, result: { resultType: "complete", ...outcome.result, ...extraFields } }
      : outcome

  const discover = (): Outcome =>
    result({
      resultType: "complete",
      supportedVersions: [...(options.supportedVersions ?? DEFAULT_MODERN_VERSIONS)],
      capabilities: features === undefined ? { tools: {} } : FEATURE_CAPABILITIES,
      _meta: { [META_SERVER_INFO]: SERVER_INFO },
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
      ...cacheable
    })

  /**
   * `ask_name`: without a requestState, asks for a name by elicitation (of a client whose
   * clientCapabilities declare `elicitation`; else -32021, HTTP 400); with one this server
   * issued, greets inputResponses.name's content.name ("anon" if accepted without one), asks
   * again if that answer is missing, and is an isError result on decline/cancel. A requestState
   * it did not issue (or inputResponses without one) is -32602 "invalid requestState".
   */
  const askName = (params: Readonly<Record<string, unknown>>): Outcome => {
    const capabilities = metaOf(params)?.[META_CLIENT_CAPABILITIES]
    const ask = (): Outcome =>
      isRecord(capabilities) && isRecord(capabilities["elicitation"])
        ? result(inputRequiredResult(ASK_NAME_INPUT_REQUESTS, requestStates.issue(ASK_NAME_TOOL.name)))
        : failure(
          ErrorCode.MissingRequiredClientCapability,
          "Server requires the elicitation capability for this request",
          { requiredCapabilities: { elicitation: {} } },
          400
        )
    const responses = params["inputResponses"]
    if (responses !== undefined && !isRecord(responses)) return failure(ErrorCode.InvalidParams, "invalid inputResponses")
    const state = params["requestState"]
    if (state === undefined) return responses === undefined ? ask() : failure(ErrorCode.InvalidParams, "invalid requestState")
    if (!requestStates.verify(state, ASK_NAME_TOOL.name)) return failure(ErrorCode.InvalidParams, "invalid requestState")
    const answer = responses?.[ASK_NAME_INPUT_KEY]
    if (answer === undefined) return ask() // the input is still missing: ask again
    if (!isRecord(answer)) return failure(ErrorCode.InvalidParams, "invalid inputResponses")
    switch (answer["action"]) {
      case "accept": {
        const content = answer["content"]
        const name = isRecord(content) && typeof content["name"] === "string" ? content["name"] : "anon"
        return text(`hello ${name}`)
      }
      case "decline":
        return text("ask_name: the elicitation was declined", true)
      case "cancel":
        return text("ask_name: the elicitation was cancelled", true)
      default:
        return failure(ErrorCode.InvalidParams, "invalid inputResponses")
    }
  }

  const callModernTool = (params: unknown): Outcome => {
    if (!isRecord(params) || typeof params["name"] !== "string") {
      return failure(ErrorCode.InvalidParams, "tools/call needs a tool name")
    }
    const args = isRecord(params["arguments"]) ? params["arguments"] : {}
    switch (params["name"]) {
      case ASK_NAME_TOOL.name:
        return askName(params)
      case REGION_QUERY_TOOL.name: {
        if (options.headerTools === false) break
        const region = args["region"]
        const query = args["query"]
        if (typeof query !== "string") return text("region_query expects a string query", true)
        return text(`${typeof region === "string" ? region : ""}:${query}`)
      }
      case TYPED_HEADERS_TOOL.name:
        if (options.typedHeaderTool !== true) break
        return text(JSON.stringify(args))
    }
    return callTool(params, currentModernTools(), STATELESS)
  }

  const handleModern = (method: string, params: unknown): ModernOutcome => {
    const refused = features?.checkLogLevel(params)
    if (refused !== undefined) return refused
    switch (method) {
      case "server/discover":
        return discover()
      case "tools/list":
        return complete(listTools(params, currentModernTools()), cacheable)
      case "tools/call":
        countToolCall(params)
        return complete(callModernTool(params))
      case "subscriptions/listen":
        if (features !== undefined) return features.listen(params)
        break
    }
    const featured = features?.handle(method, params, STATELESS)
    if (featured === undefined) return failure(ErrorCode.MethodNotFound, `Method not found: ${method}`)
    return complete(featured, CACHEABLE.has(method) ? cacheable : {})
  }

  const handle = (method: string, params: unknown, connection = ""): Outcome => {
    switch (method) {
      case "initialize":
        return initialize(params)
      case "ping":
        return result({})
      case "tools/list":
        return listTools(params, currentTools())
      case "tools/call":
        countToolCall(params)
        return callTool(params, currentTools(), { ...HANDSHAKE, connection })
    }
    return features?.handle(method, params, { ...HANDSHAKE, connection }) ??
      failure(ErrorCode.MethodNotFound, `Method not found: ${method}`)
  }

  return {
    get tools() {
      return currentTools()
    },
    get modernTools() {
      return currentModernTools()
    },
    handle,
    handleModern,
    issueRequestState: () => requestStates.issue(ASK_NAME_TOOL.name),
    counter: () => counter,
    toolCalls: (name) => toolCallCounts.get(name) ?? 0,
    effectIdentities: (name) => [...(toolCallIdentities.get(name) ?? [])],
    features
  }
}
