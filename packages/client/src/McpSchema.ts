/**
 * JSON-RPC 2.0 and the MCP messages phasebound reads, as strict `effect` Schemas.
 *
 * Unknown fields of MCP results are preserved (servers add fields across revisions); required
 * fields are checked and a wrong type is a `ProtocolViolation`, never repaired.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The protocol revisions this client speaks, newest first.
 *
 * @since 0.1.0
 * @category protocol
 */
export const supportedRevisions = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const

/**
 * @since 0.1.0
 * @category protocol
 */
export type Revision = (typeof supportedRevisions)[number]

/**
 * The stateless revisions (every request carries its revision in `_meta`; no handshake, no
 * session), newest first.
 *
 * @since 0.1.0
 * @category protocol
 */
export const statelessRevisions: ReadonlyArray<Revision> = ["2026-07-28"]

/**
 * The revisions that start with the `initialize` handshake, newest first.
 *
 * @since 0.1.0
 * @category protocol
 */
export const handshakeRevisions: ReadonlyArray<Revision> = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

/**
 * @since 0.1.0
 * @category protocol
 */
export const isSupportedRevision = (u: unknown): u is Revision => typeof u === "string" && (supportedRevisions as ReadonlyArray<string>).includes(u)

/**
 * The `_meta` keys of the stateless revisions.
 *
 * @since 0.1.0
 * @category protocol
 */
export const MetaKey = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  /** 2026-07-28: the least severity of the log messages wanted for this request. */
  logLevel: "io.modelcontextprotocol/logLevel"
} as const

/**
 * @since 0.1.0
 * @category json-rpc
 */
export const RequestId = Schema.Union(Schema.String, Schema.Int)

/**
 * @since 0.1.0
 * @category json-rpc
 */
export type RequestId = typeof RequestId.Type

const Params = Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * @since 0.1.0
 * @category json-rpc
 */
export const JsonRpcRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: RequestId,
  method: Schema.String,
  params: Params
})

/**
 * @since 0.1.0
 * @category json-rpc
 */
export const JsonRpcNotification = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  method: Schema.String,
  params: Params
})

/**
 * @since 0.1.0
 * @category json-rpc
 */
export const JsonRpcSuccess = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: RequestId,
  result: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/**
 * @since 0.1.0
 * @category json-rpc
 */
export const JsonRpcErrorObject = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category json-rpc
 */
export const JsonRpcFailure = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(RequestId),
  error: JsonRpcErrorObject
})

/**
 * A message from the server, classified.
 *
 * @since 0.1.0
 * @category json-rpc
 */
export type IncomingMessage =
  | { readonly _tag: "Request"; readonly message: typeof JsonRpcRequest.Type }
  | { readonly _tag: "Notification"; readonly message: typeof JsonRpcNotification.Type }
  | { readonly _tag: "Success"; readonly message: typeof JsonRpcSuccess.Type }
  | { readonly _tag: "Failure"; readonly message: typeof JsonRpcFailure.Type }

const decodeRequest = Schema.decodeUnknownOption(JsonRpcRequest)
const decodeNotification = Schema.decodeUnknownOption(JsonRpcNotification)
const decodeSuccess = Schema.decodeUnknownOption(JsonRpcSuccess)
const decodeFailure = Schema.decodeUnknownOption(JsonRpcFailure)

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Classifies a parsed JSON value as a JSON-RPC message, or `undefined` when it is none.
 * The shape decides the kind: `method` with `id` is a request, `method` alone a notification,
 * `result` a success, `error` a failure; anything ambiguous is refused.
 *
 * @since 0.1.0
 * @category json-rpc
 */
export const classify = (u: unknown): IncomingMessage | undefined => {
  if (!isObject(u)) return undefined
  const hasMethod = "method" in u
  const hasResult = "result" in u
  const hasError = "error" in u
  if (hasMethod && !hasResult && !hasError) {
    if ("id" in u) {
      const message = decodeRequest(u)
      return message._tag === "Some" ? { _tag: "Request", message: message.value } : undefined
    }
    const message = decodeNotification(u)
    return message._tag === "Some" ? { _tag: "Notification", message: message.value } : undefined
  }
  if (hasResult && !hasError && !hasMethod) {
    const message = decodeSuccess(u)
    return message._tag === "Some" ? { _tag: "Success", message: message.value } : undefined
  }
  if (hasError && !hasResult && !hasMethod) {
    const message = decodeFailure(u)
    return message._tag === "Some" ? { _tag: "Failure", message: message.value } : undefined
  }
  return undefined
}

const preserve = { onExcessProperty: "preserve" } as const

/**
 * @since 0.1.0
 * @category mcp
 */
export const Implementation = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  title: Schema.optional(Schema.String)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type Implementation = typeof Implementation.Type

/**
 * @since 0.1.0
 * @category mcp
 */
export const InitializeResult = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  serverInfo: Implementation,
  instructions: Schema.optional(Schema.String)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type InitializeResult = typeof InitializeResult.Type

/**
 * A tool as listed by the server. `inputSchema` must be a JSON Schema object of type
 * `object`; its size is bounded separately by `maxSchemaBytes`.
 *
 * @since 0.1.0
 * @category mcp
 */
export const Tool = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1)),
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  inputSchema: Schema.Struct({ type: Schema.Literal("object") }).annotations({ parseOptions: preserve }),
  outputSchema: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  annotations: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type Tool = typeof Tool.Type

/**
 * The caching hint of a listing (2026-07-28): how long it may be reused, and by whom.
 *
 * @since 0.1.0
 * @category mcp
 */
export const CacheHint = Schema.Struct({
  ttlMs: Schema.NonNegativeInt,
  cacheScope: Schema.Literal("public", "private")
})

/**
 * @since 0.1.0
 * @category mcp
 */
export type CacheHint = typeof CacheHint.Type

/**
 * One page of `tools/list`. Tools are checked one by one afterwards (see `Tool`), so that a
 * page is refused before its tools are decoded when it has too many. `ttlMs` and `cacheScope`
 * come with stateless (2026-07-28) listings.
 *
 * @since 0.1.0
 * @category mcp
 */
export const ListToolsPage = Schema.Struct({
  tools: Schema.Array(Schema.Unknown),
  nextCursor: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.NonNegativeInt),
  cacheScope: Schema.optional(Schema.Literal("public", "private"))
}).annotations({ parseOptions: preserve })

/**
 * The result of `server/discover` (2026-07-28).
 *
 * @since 0.1.0
 * @category mcp
 */
export const DiscoverResult = Schema.Struct({
  supportedVersions: Schema.Array(Schema.String),
  capabilities: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  instructions: Schema.optional(Schema.String),
  _meta: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type DiscoverResult = typeof DiscoverResult.Type

/**
 * What a stateless (2026-07-28) result says of itself: absent means complete (as results of
 * earlier revisions are); any value other than these two is a protocol violation.
 *
 * @since 0.1.0
 * @category mcp
 */
export const ResultType = Schema.Literal("complete", "input_required")

/**
 * An `input_required` result: the input the server needs, and the state to echo exactly.
 *
 * @since 0.1.0
 * @category mcp
 */
export const InputRequiredResult = Schema.Struct({
  resultType: Schema.Literal("input_required"),
  inputRequests: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      method: Schema.String,
      params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
    }).annotations({ parseOptions: preserve })
  })),
  requestState: Schema.optional(Schema.String)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type InputRequiredResult = typeof InputRequiredResult.Type

/**
 * @since 0.1.0
 * @category mcp
 */
export const ContentBlock = Schema.Struct({
  type: Schema.String
}).annotations({ parseOptions: preserve })

/**
 * The result of `tools/call`. `isError: true` is a tool-level failure returned as a result.
 * `structuredContent` may be any JSON value (object, array, string, number, boolean or `null`),
 * in every revision (docs/DESIGN.md, "Typed results").
 *
 * @since 0.1.0
 * @category mcp
 */
export const CallToolResult = Schema.Struct({
  content: Schema.Array(ContentBlock),
  structuredContent: Schema.optional(Schema.Unknown),
  isError: Schema.optional(Schema.Boolean)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type CallToolResult = typeof CallToolResult.Type

/**
 * A `resource_link` content block of a tool result: a resource the server points to, which
 * `Connection.readResource` can read.
 *
 * @since 0.1.0
 * @category mcp
 */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type ResourceLink = typeof ResourceLink.Type

/**
 * The progress of a call, as the server reports it (`notifications/progress`): `progress`
 * grows with each report; `total` when the server knows it.
 *
 * @since 0.1.0
 * @category mcp
 */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/**
 * The syslog severities of MCP logging, least severe first.
 *
 * @since 0.1.0
 * @category mcp
 */
export const logLevels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const

/**
 * @since 0.1.0
 * @category mcp
 */
export const LogLevel = Schema.Literal(...logLevels)

/**
 * @since 0.1.0
 * @category mcp
 */
export type LogLevel = typeof LogLevel.Type

/**
 * One log message of the server's (`notifications/message`). Its `data` is the server's, as it
 * sent it: show it with care.
 *
 * @since 0.1.0
 * @category mcp
 */
export const LogMessage = Schema.Struct({
  level: LogLevel,
  logger: Schema.optional(Schema.String),
  data: Schema.Unknown
})

/**
 * @since 0.1.0
 * @category mcp
 */
export type LogMessage = typeof LogMessage.Type

/**
 * A resource as listed by the server.
 *
 * @since 0.1.0
 * @category mcp
 */
export const Resource = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type Resource = typeof Resource.Type

/**
 * A resource template as listed by the server (RFC 6570 `uriTemplate`).
 *
 * @since 0.1.0
 * @category mcp
 */
export const ResourceTemplate = Schema.Struct({
  uriTemplate: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type ResourceTemplate = typeof ResourceTemplate.Type

/**
 * What `resources/read` returns for one resource: its text, or its bytes in base64 (`blob`).
 *
 * @since 0.1.0
 * @category mcp
 */
export const ResourceContents = Schema.Union(
  Schema.Struct({ uri: Schema.String, mimeType: Schema.optional(Schema.String), text: Schema.String }).annotations({
    parseOptions: preserve
  }),
  Schema.Struct({ uri: Schema.String, mimeType: Schema.optional(Schema.String), blob: Schema.String }).annotations({
    parseOptions: preserve
  })
)

/**
 * @since 0.1.0
 * @category mcp
 */
export type ResourceContents = typeof ResourceContents.Type

/**
 * The result of `resources/read`.
 *
 * @since 0.1.0
 * @category mcp
 */
export const ReadResourceResult = Schema.Struct({
  contents: Schema.Array(ResourceContents)
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type ReadResourceResult = typeof ReadResourceResult.Type

/**
 * A prompt as listed by the server, with the arguments it takes.
 *
 * @since 0.1.0
 * @category mcp
 */
export const Prompt = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.Array(
    Schema.Struct({
      name: Schema.String,
      description: Schema.optional(Schema.String),
      required: Schema.optional(Schema.Boolean)
    }).annotations({ parseOptions: preserve })
  ))
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type Prompt = typeof Prompt.Type

/**
 * The result of `prompts/get`: the messages of the prompt, its arguments filled in.
 *
 * @since 0.1.0
 * @category mcp
 */
export const GetPromptResult = Schema.Struct({
  description: Schema.optional(Schema.String),
  messages: Schema.Array(
    Schema.Struct({ role: Schema.Literal("user", "assistant"), content: ContentBlock }).annotations({
      parseOptions: preserve
    })
  )
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type GetPromptResult = typeof GetPromptResult.Type

/**
 * What `completion/complete` completes an argument of: a prompt, by its name.
 *
 * @since 0.1.0
 * @category mcp
 */
export const PromptReference = Schema.Struct({
  type: Schema.Literal("ref/prompt"),
  name: Schema.NonEmptyString,
  title: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category mcp
 */
export type PromptReference = typeof PromptReference.Type

/**
 * What `completion/complete` completes an argument of: a resource template (or a resource), by
 * its URI template (or URI).
 *
 * @since 0.1.0
 * @category mcp
 */
export const ResourceTemplateReference = Schema.Struct({
  type: Schema.Literal("ref/resource"),
  uri: Schema.NonEmptyString
})

/**
 * @since 0.1.0
 * @category mcp
 */
export type ResourceTemplateReference = typeof ResourceTemplateReference.Type

/**
 * The `ref` of a `completion/complete` request.
 *
 * @since 0.1.0
 * @category mcp
 */
export const CompletionReference = Schema.Union(PromptReference, ResourceTemplateReference)

/**
 * @since 0.1.0
 * @category mcp
 */
export type CompletionReference = typeof CompletionReference.Type

/**
 * A `completion/complete` request as a caller gives it: the argument being filled in (its name,
 * what has been typed so far) and, in `context.arguments`, the values already chosen for the
 * other arguments of the same prompt or template.
 *
 * @since 0.1.0
 * @category mcp
 */
export const CompleteRequest = Schema.Struct({
  ref: CompletionReference,
  argument: Schema.Struct({ name: Schema.NonEmptyString, value: Schema.String }),
  context: Schema.optional(Schema.Struct({
    arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }))
})

/**
 * @since 0.1.0
 * @category mcp
 */
export type CompleteRequest = typeof CompleteRequest.Type

/**
 * The most values one completion may carry (the spec's `maxItems`): a result with more is a
 * `ProtocolViolation`, never cut short.
 *
 * @since 0.1.0
 * @category mcp
 */
export const maxCompletionValues = 100

/**
 * The result of `completion/complete`: at most 100 suggestions, ranked by the server, with the
 * number of matches it knows of (`total`) and whether there are more than it sent (`hasMore`).
 *
 * @since 0.1.0
 * @category mcp
 */
export const CompleteResult = Schema.Struct({
  completion: Schema.Struct({
    values: Schema.Array(Schema.String).pipe(Schema.maxItems(maxCompletionValues)),
    total: Schema.optional(Schema.Number),
    hasMore: Schema.optional(Schema.Boolean)
  }).annotations({ parseOptions: preserve })
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category mcp
 */
export type CompleteResult = typeof CompleteResult.Type

/**
 * JSON-RPC error codes phasebound uses or recognizes.
 *
 * @since 0.1.0
 * @category json-rpc
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** 2026-07-28: the HTTP headers do not match the body, or required headers are missing. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability that was not declared. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the requested revision is not supported; `data.supported` lists those that are. */
  UnsupportedProtocolVersion: -32022
} as const
