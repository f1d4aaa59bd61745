/**
 * Transport-agnostic handling of incoming JSON-RPC messages: strict decoding of one message,
 * matching a response with its request, and the reply to a server-to-client request.
 */
import * as Effect from "effect/Effect"
import { type McpConnectionError, sanitizeRemoteMessage } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type { Exchange, Response } from "../Transport.js"
import { decodeUtf8 } from "./byteCount.js"
import * as Failures from "./failures.js"

/** Decodes one message: strict UTF-8, JSON, then a JSON-RPC shape. */
export const parseMessage = (
  exchange: Exchange,
  bytes: Uint8Array,
  details: { readonly status?: number; readonly observedBytes?: number } = {}
): Effect.Effect<McpSchema.IncomingMessage, McpConnectionError> => {
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
): Effect.Effect<McpSchema.IncomingMessage, McpConnectionError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return Effect.fail(Failures.protocol(exchange, "invalid-json", details, cause))
  }
  const message = McpSchema.classify(json)
  if (message === undefined) return Effect.fail(Failures.protocol(exchange, "invalid-message", details))
  return Effect.succeed(message)
}

const status = (details: { readonly status?: number }) => (details.status === undefined ? {} : { status: details.status })

/**
 * The awaited response, a `RemoteRefusal` for a JSON-RPC error, or `undefined` when the
 * message is not about request `id`.
 */
export const answerOf = (
  exchange: Exchange,
  id: McpSchema.RequestId,
  message: McpSchema.IncomingMessage,
  secrets: ReadonlyArray<string>,
  details: { readonly status?: number; readonly observedBytes: number }
): Effect.Effect<Response | undefined, McpConnectionError> => {
  if (message._tag === "Success" && message.message.id === id) {
    return Effect.succeed({ result: message.message.result, bytes: details.observedBytes })
  }
  if (message._tag === "Failure" && message.message.id === id) {
    return Effect.fail(refusal(exchange, message.message.error, secrets, details))
  }
  return Effect.succeed(undefined)
}

/** A JSON-RPC error object as a public `RemoteRefusal`. */
export const refusal = (
  exchange: Exchange,
  error: typeof McpSchema.JsonRpcErrorObject.Type,
  secrets: ReadonlyArray<string>,
  details: { readonly status?: number; readonly observedBytes?: number }
) => Failures.remoteRefusal(exchange, error.code, sanitizeRemoteMessage(error.message, secrets), details)

/**
 * The reply to a server-to-client request: `ping` is answered, anything else is refused with
 * method-not-found (this client declares no client capabilities). `undefined` for messages
 * that are not requests.
 */
export const replyTo = (message: McpSchema.IncomingMessage): Record<string, unknown> | undefined => {
  if (message._tag !== "Request") return undefined
  const { id, method } = message.message
  return method === "ping"
    ? { jsonrpc: "2.0", id, result: {} }
    : { jsonrpc: "2.0", id, error: { code: McpSchema.ErrorCode.MethodNotFound, message: "Method not found" } }
}

/** A JSON-RPC request or notification object. */
export const outgoing = (method: string, params: Record<string, unknown> | undefined, id?: McpSchema.RequestId) => {
  const message: Record<string, unknown> = { jsonrpc: "2.0" }
  if (id !== undefined) message.id = id
  message.method = method
  if (params !== undefined) message.params = params
  return message
}

/** The cancellation notice for request `id`. */
export const cancelled = (id: McpSchema.RequestId) =>
  outgoing("notifications/cancelled", { requestId: id, reason: "interrupted" })
