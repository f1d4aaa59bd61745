/**
 * JSON-RPC 2.0 message shapes, as far as the test server needs them: classify what arrives,
 * build what goes out.
 */

export type JsonRpcId = string | number | null

export interface JsonRpcErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export type JsonRpcOutgoing =
  | { readonly jsonrpc: "2.0"; readonly id: JsonRpcId; readonly result: unknown }
  | { readonly jsonrpc: "2.0"; readonly id: JsonRpcId; readonly error: JsonRpcErrorObject }

/** A notification the server sends on its own (progress, log messages, list changes). */
export interface JsonRpcNotification {
  readonly jsonrpc: "2.0"
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>>
}

export type JsonRpcIncoming =
  | { readonly kind: "request"; readonly id: string | number; readonly method: string; readonly params: unknown }
  | { readonly kind: "notification"; readonly method: string; readonly params: unknown }
  | { readonly kind: "response"; readonly id: JsonRpcId }

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  /** Used by the official SDK servers for "Bad Request: missing session" and similar. */
  ServerError: -32000,
  SessionNotFound: -32001,
  /** Until 2025-11-25: resources/read of a resource that does not exist (2026-07-28 uses -32602). */
  ResourceNotFound: -32002,
  /** 2026-07-28: the HTTP headers do not mirror the body, or a required header is missing or malformed. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability its `_meta` did not declare. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the requested protocol version is not served; data {supported, requested}. */
  UnsupportedProtocolVersion: -32022
} as const

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Classifies one parsed JSON value; `undefined` when it is not a JSON-RPC 2.0 message. */
export const classify = (value: unknown): JsonRpcIncoming | undefined => {
  if (!isRecord(value) || value["jsonrpc"] !== "2.0") return undefined
  const id = value["id"]
  const method = value["method"]
  if (typeof method === "string") {
    if (typeof id === "string" || typeof id === "number") {
      return { kind: "request", id, method, params: value["params"] }
    }
    return id === undefined ? { kind: "notification", method, params: value["params"] } : undefined
  }
  if ("result" in value || "error" in value) {
    return typeof id === "string" || typeof id === "number" || id === null ? { kind: "response", id } : undefined
  }
  return undefined
}

/** The JSON-RPC method(s) named by a body, for the recorder; `undefined` if there is none. */
export const methodsOf = (value: unknown): string | undefined => {
  const items = Array.isArray(value) ? value : [value]
  const methods = items.flatMap((item) => isRecord(item) && typeof item["method"] === "string" ? [item["method"]] : [])
  return methods.length === 0 ? undefined : methods.join(",")
}

export const resultMessage = (id: JsonRpcId, result: unknown): JsonRpcOutgoing => ({ jsonrpc: "2.0", id, result })

export const errorMessage = (id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcOutgoing => ({
  jsonrpc: "2.0",
  id,
  error
})

export const notificationMessage = (method: string, params?: Readonly<Record<string, unknown>>): JsonRpcNotification =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }

export { isRecord }
