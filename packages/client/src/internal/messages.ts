/**
 * Transport-agnostic handling of incoming JSON-RPC messages: strict decoding of one message,
 * matching a response with its request, and the reply to a server-to-client request.
 */
import * as Effect from "effect/Effect"
import { LimitExceeded, type McpConnectionError, type Outcome, sanitizeRemoteMessage } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type { Exchange, Inbound, Outgoing, Response } from "./transport/transport.js"
import { decodeUtf8 } from "./byteCount.js"
import * as Failures from "./failures.js"
import * as JsonText from "./jsonText.js"

/** A message as received: classified, with the nodes its text counted (see `jsonText.ts`). */
export type Received = McpSchema.IncomingMessage & { readonly nodes: number }

/** Decodes one message: strict UTF-8, JSON under the structure bound, then a JSON-RPC shape. */
export const parseMessage = (
  exchange: Exchange,
  bytes: Uint8Array,
  details: { readonly status?: number; readonly observedBytes?: number } = {}
): Effect.Effect<Received, McpConnectionError> => {
  const observedBytes = details.observedBytes ?? bytes.length
  const text = decodeUtf8(bytes)
  if (text._tag === "Left") {
    return Effect.fail(Failures.protocol(exchange, "invalid-utf8", { observedBytes, ...status(details) }))
  }
  return parseText(exchange, text.right, { observedBytes, ...status(details) })
}

/** Decodes one message already decoded as text (SSE data, stdio lines). */
export const parseText = (
  exchange: Exchange,
  text: string,
  details: { readonly status?: number; readonly observedBytes?: number } = {}
): Effect.Effect<Received, McpConnectionError> => {
  const parsed = JsonText.parse(text, structureOf(exchange))
  switch (parsed._tag) {
    case "TooDeep":
      return Effect.fail(structureExceeded(exchange, "maxDepth", details))
    case "TooManyNodes":
      return Effect.fail(structureExceeded(exchange, "maxNodes", details))
    case "Invalid":
      return Effect.fail(Failures.protocol(exchange, "invalid-json", details, parsed.cause))
  }
  const message = McpSchema.classify(parsed.value)
  if (message === undefined) return Effect.fail(Failures.protocol(exchange, "invalid-message", details))
  return Effect.succeed({ ...message, nodes: parsed.nodes })
}

/** The structure bound of an exchange: its budget's, else the defaults. */
export const structureOf = (exchange: Exchange): JsonText.Structure => ({
  maxDepth: exchange.budget.maxDepth ?? JsonText.defaultStructure.maxDepth,
  maxNodes: exchange.budget.maxNodes ?? JsonText.defaultStructure.maxNodes
})

/**
 * A message refused for its structure: an answer arrived, so what it answers was processed
 * (`applied`), as for a byte ceiling; an authority's answer, where no MCP request is on the
 * way, says `not-sent`.
 */
export const structureExceeded = (
  exchange: Exchange,
  limit: "maxDepth" | "maxNodes",
  details: { readonly status?: number; readonly observedBytes?: number } = {},
  outcome: Outcome = exchange.stage === "endpoint" ? "not-sent" : "applied"
) =>
  new LimitExceeded({
    ...Failures.fields(exchange),
    limit,
    observedBytes: details.observedBytes,
    status: details.status,
    outcome,
    retryable: false
  })

const status = (details: { readonly status?: number }) => (details.status === undefined ? {} : { status: details.status })

/** The headers of a response that came with none (stdio, a shared stream). */
export const noHeaders: Response["headers"] = Object.freeze({})

/**
 * The awaited response, a `RemoteRefusal` for a JSON-RPC error, or `undefined` when the
 * message is not about request `id`.
 */
export const answerOf = (
  exchange: Exchange,
  id: McpSchema.RequestId,
  message: Received,
  secrets: ReadonlyArray<string>,
  details: { readonly status?: number; readonly observedBytes: number; readonly headers?: Response["headers"] }
): Effect.Effect<Response | undefined, McpConnectionError> => {
  if (message._tag === "Success" && message.message.id === id) {
    return Effect.succeed({
      result: message.message.result,
      bytes: details.observedBytes,
      nodes: message.nodes,
      headers: details.headers ?? noHeaders
    })
  }
  if (message._tag === "Failure" && message.message.id === id) {
    return Effect.fail(refusal(exchange, message.message.error, secrets, details))
  }
  return Effect.succeed(undefined)
}

/**
 * A JSON-RPC error object as a public `RemoteRefusal`. The wire object stays in process as the
 * error's cause (`Failures.wireError`): its `data` is what negotiation reads, never shown.
 */
export const refusal = (
  exchange: Exchange,
  error: typeof McpSchema.JsonRpcErrorObject.Type,
  secrets: ReadonlyArray<string>,
  details: { readonly status?: number; readonly observedBytes?: number }
) => Failures.remoteRefusal(exchange, error.code, sanitizeRemoteMessage(error.message, secrets), details, error)

/**
 * What becomes of a message from the server that answers no request: a request is handed to
 * `inbound` with the transport's `reply`; a notification is handed to `inbound`; anything else
 * is ignored.
 */
export const routeIncoming = (
  inbound: Inbound,
  message: McpSchema.IncomingMessage,
  reply: (body: Record<string, unknown>) => Effect.Effect<void>
): Effect.Effect<void> => {
  if (message._tag === "Request") return inbound.request(message.message, reply)
  if (message._tag === "Notification" && inbound.notification !== undefined) return inbound.notification(message.message)
  return Effect.void
}

/** A JSON-RPC request (with `id`) or notification object. */
export const envelope = (message: Outgoing, id?: McpSchema.RequestId) => {
  const body: Record<string, unknown> = { jsonrpc: "2.0" }
  if (id !== undefined) body.id = id
  body.method = message.method
  if (message.params !== undefined) body.params = message.params
  return body
}
