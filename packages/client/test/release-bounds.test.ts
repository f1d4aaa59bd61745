/**
 * Release steps are bounded by `releaseTimeout` even when the server never answers them:
 * the DELETE of a session on close, and the cancellation notice after an interrupted call.
 */
import { FetchHttpClient } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { McpClient } from "../src/index.js"
import { eventually, expectReleased, server } from "./support/harness.js"

/** A server that answers discovery, then never answers a DELETE. */
const stallingDeletes = Effect.acquireRelease(
  Effect.promise(async () => {
    let deletes = 0
    const srv = http.createServer((req, res) => {
      if (req.method === "DELETE") {
        deletes++
        return // never answered
      }
      // No standalone stream here.
      if (req.method === "GET") return void res.writeHead(405).end()
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        const message = JSON.parse(body)
        if (message.id === undefined) return void res.writeHead(202).end()
        const result = message.method === "initialize"
          ? { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "stall", version: "1" } }
          : { tools: [] }
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }))
      })
    })
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve))
    return { srv, url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`, deletes: () => deletes }
  }),
  ({ srv }) => Effect.promise(() => new Promise<void>((resolve) => { srv.closeAllConnections(); srv.close(() => resolve()) }))
)

it.scopedLive("closing a connection whose DELETE is never answered finishes within releaseTimeout", () =>
  Effect.gen(function*() {
    const { deletes, url } = yield* stallingDeletes
    const scope = yield* Scope.make()
    yield* McpClient.connect({ url, policy: { releaseTimeout: 300 } }).pipe(Scope.extend(scope))
    const started = Date.now()
    yield* Scope.close(scope, Exit.void)
    const elapsed = Date.now() - started
    expect(deletes()).toBe(1)
    expect(elapsed).toBeGreaterThanOrEqual(250)
    expect(elapsed).toBeLessThan(1_500)
  }).pipe(Effect.provide(FetchHttpClient.layer)))

it.scopedLive("a cancellation notice the server never answers is given up after releaseTimeout", () =>
  Effect.gen(function*() {
    const srv = yield* server()
    const connection = yield* McpClient.connect({ url: srv.url, policy: { releaseTimeout: 300 } })
    srv.script({ on: "tools/call", kind: "headers-never-sent" })
    srv.script({ on: "notifications/cancelled", kind: "headers-never-sent" })
    const fiber = yield* Effect.fork(connection.callTool("increment"))
    yield* eventually(() => srv.rpcCalls("tools/call") === 1)
    const started = Date.now()
    yield* Fiber.interrupt(fiber)
    // The interruption itself does not wait for the notice.
    expect(Date.now() - started).toBeLessThan(250)
    yield* eventually(() => srv.rpcCalls("notifications/cancelled") === 1)
    expect((yield* connection.diagnostics).background).toBe(1)
    yield* expectReleased(connection)
    expect(Date.now() - started).toBeLessThan(1_500)
    // Given up: the server sees the notice's request closed.
    yield* eventually(() => srv.abortedResponses() === 2)
  }).pipe(Effect.provide(FetchHttpClient.layer)))
