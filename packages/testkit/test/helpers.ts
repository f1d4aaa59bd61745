/** Small fetch helpers for talking JSON-RPC to the test server in tests. */
import type { TestServer } from "../src/index.js"

export interface RpcOptions {
  readonly id?: number | string
  readonly sessionId?: string | undefined
  readonly signal?: AbortSignal
  readonly notification?: boolean
}

export const post = (server: TestServer, method: string, params: unknown = {}, options: RpcOptions = {}) => {
  const message = options.notification === true
    ? { jsonrpc: "2.0", method, params }
    : { jsonrpc: "2.0", id: options.id ?? 1, method, params }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream"
  }
  if (options.sessionId !== undefined) headers["mcp-session-id"] = options.sessionId
  return fetch(server.url, {
    method: "POST",
    headers,
    body: JSON.stringify(message),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
}

/** initialize + notifications/initialized; returns the session id (undefined without sessions). */
export const handshake = async (server: TestServer, protocolVersion = "2025-06-18") => {
  const response = await post(server, "initialize", {
    protocolVersion,
    capabilities: {},
    clientInfo: { name: "test", version: "0" }
  })
  const body = (await response.json()) as { result: { protocolVersion: string } }
  const sessionId = response.headers.get("mcp-session-id") ?? undefined
  const initialized = await post(server, "notifications/initialized", {}, { sessionId, notification: true })
  await initialized.arrayBuffer()
  return { sessionId, initialized: initialized.status, protocolVersion: body.result.protocolVersion }
}

export const callTool = (server: TestServer, name: string, args: unknown, options: RpcOptions = {}) =>
  post(server, "tools/call", { name, arguments: args }, options)
