/**
 * Bounded output checks end to end (docs/DESIGN.md, "Typed results"): a server whose output
 * schemas would make Ajv's checks run for minutes (a catastrophic pattern, `uniqueItems` over
 * 30,000 objects, a `$ref` fan-out) gets, within a 1 s call timeout, a linear answer or a typed
 * failure (outcome `applied`, not retryable), with each call sent once; and another call on the
 * connection, answered while a bounded check is due, completes within its own deadline.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { McpClient } from "../../src/index.js"
import { failureOf } from "../support/harness.js"
import { json, type RawRequest, rawMcpServer } from "../support/rawMcpServer.js"

const doubling = (levels: number) => {
  const $defs: Record<string, unknown> = { [`a${levels}`]: { type: "string" } }
  for (let i = 0; i < levels; i++) $defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] }
  return { $defs, $ref: "#/$defs/a0" }
}

const tools = [
  { name: "redos", inputSchema: { type: "object" }, outputSchema: { type: "string", pattern: "^(a+)+$" } },
  { name: "unique", inputSchema: { type: "object" }, outputSchema: { type: "array", uniqueItems: true, items: { type: "object" } } },
  { name: "fanout", inputSchema: { type: "object" }, outputSchema: doubling(40) },
  { name: "fast", inputSchema: { type: "object" } }
]

const hostile = `${"a".repeat(39)}b`
const objects = Array.from({ length: 30_000 }, (_, i) => ({ id: i, name: `item-${i}` }))
const contentOf: Record<string, unknown> = { redos: hostile, unique: objects, fanout: 1 }

const callsOf = (received: ReadonlyArray<RawRequest>, tool: string) =>
  received.filter((request) => request.rpcMethod === "tools/call" && request.message?.params?.name === tool).length

/**
 * The server: each hostile tool answers at once; `fast` answers only once the `fanout` answer is
 * written, so that it reaches the client when the bounded check of `fanout` is due.
 */
const open = Effect.gen(function*() {
  const fanoutAnswered = yield* Deferred.make<void>()
  const server = yield* rawMcpServer({
    tools,
    onCall: async ({ message, res }) => {
      const name = message.params.name as string
      if (name === "fast") {
        await Effect.runPromise(Deferred.await(fanoutAnswered))
        return json(res, { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "fast" }] } })
      }
      const result = { content: [{ type: "text", text: name }], structuredContent: contentOf[name] }
      json(res, { jsonrpc: "2.0", id: message.id, result })
      if (name === "fanout") res.on("finish", () => Effect.runSync(Deferred.succeed(fanoutAnswered, undefined)))
    }
  })
  const connection = yield* McpClient.connect({ url: `${server.origin}/mcp`, transport: "streamable-http" })
  return { connection, received: server.received }
}).pipe(Effect.provide(FetchHttpClient.layer))

describe("bounded output checks, Streamable HTTP", () => {
  it.scopedLive("^(a+)+$ against a hostile 40-char string: a mismatch at once, sent once", () =>
    Effect.gen(function*() {
      const { connection, received } = yield* open
      expect(connection.tools.map((tool) => tool.name)).toEqual(["redos", "unique", "fanout", "fast"])
      const { error } = yield* failureOf(connection.callTool("redos", {}, { timeout: 1_000 }))
      expect(error).toMatchObject({
        _tag: "ProtocolViolation",
        reason: "structured-content-mismatch",
        stage: "call",
        outcome: "applied",
        retryable: false
      })
      expect(callsOf(received, "redos")).toBe(1)
    }))

  it.scopedLive("uniqueItems over 30,000 objects: checked in linear time, the result returned, sent once", () =>
    Effect.gen(function*() {
      const { connection, received } = yield* open
      const result = yield* connection.callTool("unique", {}, { timeout: 1_000 })
      expect(result.structuredContent).toHaveLength(30_000)
      expect(callsOf(received, "unique")).toBe(1)
    }))

  it.scopedLive("a $ref fan-out of 2^40 paths: output-check-too-costly, applied, sent once; another call is not held up", () =>
    Effect.gen(function*() {
      const { connection, received } = yield* open
      const [fanout, fast] = yield* Effect.all([
        failureOf(connection.callTool("fanout", {}, { timeout: 1_000 })),
        connection.callTool("fast", {}, { timeout: 1_000 })
      ], { concurrency: "unbounded" })
      expect(fanout.error).toMatchObject({
        _tag: "ProtocolViolation",
        reason: "output-check-too-costly",
        stage: "call",
        phase: "call",
        outcome: "applied",
        retryable: false
      })
      // `fast` was answered only after `fanout`: it completed within its own 1 s deadline.
      expect(fast.content).toEqual([{ type: "text", text: "fast" }])
      expect(callsOf(received, "fanout")).toBe(1)
      expect(callsOf(received, "fast")).toBe(1)
      const observed = (yield* connection.observations).filter((o) => o.operation === "tools/call")
      expect(observed.map((o) => o.outcome).sort()).toEqual(["ProtocolViolation", "ok"])
    }))
})
