/**
 * Server-to-client requests on a POST's SSE stream: `ping` is answered, anything else gets
 * method-not-found, and the awaited response still arrives on the same stream.
 */
import { FetchHttpClient } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClient } from "../../src/index.js"
import { rawMcpServer, sseEvent } from "../support/rawMcpServer.js"

it.scopedLive("answers ping, refuses other server requests with -32601, then reads the response", () =>
  Effect.gen(function*() {
    // A 2025 server (support/rawMcpServer.ts) whose tools/call sends two requests and a
    // notification on its SSE answer, waits for the two replies, then answers the call.
    const server = yield* rawMcpServer({
      protocolVersion: "2025-06-18",
      tools: [],
      onCall: async ({ message, replied, res }) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(sseEvent({ jsonrpc: "2.0", id: "s1", method: "ping" }))
        res.write(sseEvent({ jsonrpc: "2.0", id: "s2", method: "roots/list" }))
        res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } }))
        await replied(2)
        res.end(sseEvent({ jsonrpc: "2.0", id: message.id, result: { content: [] } }))
      }
    })
    const connection = yield* McpClient.connect({ url: server.url })
    const result = yield* connection.callTool("anything")
    expect(result.content).toEqual([])
    // One reply per server request (none for the notification), each to its own id.
    const replies = server.replies.map((reply) => reply.message)
    expect(replies).toHaveLength(2)
    expect(replies).toContainEqual({ jsonrpc: "2.0", id: "s1", result: {} })
    expect(replies).toContainEqual({ jsonrpc: "2.0", id: "s2", error: { code: -32601, message: "Method not found" } })
  }).pipe(Effect.provide(FetchHttpClient.layer)))
