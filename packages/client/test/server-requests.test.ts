/**
 * Server-to-client requests on a POST's SSE stream: `ping` is answered, anything else gets
 * method-not-found, and the awaited response still arrives on the same stream.
 */
import { FetchHttpClient } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { McpClient } from "../src/index.js"

const readBody = (req: http.IncomingMessage) =>
  new Promise<any>((resolve) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      // Guarded: a body that is not JSON must not become an unhandled error in the server.
      try {
        resolve(body === "" ? undefined : JSON.parse(body))
      } catch {
        resolve(undefined)
      }
    })
  })

it.scopedLive("answers ping, refuses other server requests with -32601, then reads the response", () =>
  Effect.gen(function*() {
    const replies: Array<any> = []
    let awaitingReplies: (() => void) | undefined
    const server = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const srv = http.createServer(async (req, res) => {
          const message = await readBody(req)
          if (message?.method === "initialize") {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify({
              jsonrpc: "2.0",
              id: message.id,
              result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "raw", version: "1" } }
            }))
          } else if (message?.method === "tools/list") {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { tools: [] } }))
          } else if (message?.method === "tools/call") {
            res.writeHead(200, { "content-type": "text/event-stream" })
            const replied = new Promise<void>((resolve) => (awaitingReplies = resolve))
            res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "ping" })}\n\n`)
            res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: "s2", method: "roots/list" })}\n\n`)
            res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } })}\n\n`)
            await replied
            res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { content: [] } })}\n\n`)
          } else if (req.method !== "POST") {
            // No standalone stream here.
            res.writeHead(405).end()
          } else if (message !== undefined && "id" in message && !("method" in message)) {
            replies.push(message)
            res.writeHead(202).end()
            if (replies.length === 2) awaitingReplies?.()
          } else {
            res.writeHead(202).end()
          }
        })
        await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve))
        return srv
      }),
      (srv) => Effect.promise(() => new Promise<void>((resolve) => { srv.closeAllConnections(); srv.close(() => resolve()) }))
    )
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
    const connection = yield* McpClient.connect({ url })
    const result = yield* connection.callTool("anything")
    expect(result.content).toEqual([])
    // One reply per server request (none for the notification), each to its own id.
    expect(replies).toHaveLength(2)
    expect(replies).toContainEqual({ jsonrpc: "2.0", id: "s1", result: {} })
    expect(replies).toContainEqual({ jsonrpc: "2.0", id: "s2", error: { code: -32601, message: "Method not found" } })
  }).pipe(Effect.provide(FetchHttpClient.layer)))
