/**
 * Typed results (docs/DESIGN.md, "Typed results"): a tool that declares an
 * `outputSchema` has its `structuredContent` checked against it (compiled once, at the
 * listing); a missing or mismatching one is the server's fault (`ProtocolViolation`, outcome
 * `applied`, never retryable) and the call is never sent again; a tool error is not checked.
 * The Effect API also decodes `structuredContent` with the caller's own `Schema`.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Layer, Schema } from "effect"
import { McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { failureOf, httpClients } from "../support/harness.js"
import { json, rawMcpServer } from "../support/rawMcpServer.js"

interface Row {
  readonly name: string
  readonly open: () => Effect.Effect<{ readonly connection: McpClient.Connection; readonly runs: (tool: string) => number }, unknown, any>
}

const stdioPlatform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

const rows: ReadonlyArray<Row> = [
  ...httpClients.flatMap(([client, layer]) =>
    ([["2025", {}], ["2026-07-28", { era: "stateless" }]] as const).map(([era, options]): Row => ({
      name: `Streamable HTTP ${era}, ${client}`,
      open: () =>
        Effect.gen(function*() {
          const srv = yield* Testkit.scoped({ features: true, ...options })
          const client = yield* Layer.build(layer)
          const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(client))
          return { connection, runs: (tool: string) => srv.toolCalls(tool) }
        })
    }))
  ),
  {
    name: "stdio, handshake",
    open: () =>
      Effect.gen(function*() {
        const f = yield* Effect.acquireRelease(
          Effect.sync(() => Testkit.makeStdioFixture({ features: true })),
          (f) => Effect.sync(() => f.cleanup())
        )
        const connection = yield* McpClient.connectStdio({ command: f.command, args: f.args, env: f.env }).pipe(
          Effect.provide(stdioPlatform)
        )
        return { connection, runs: (tool: string) => f.toolCalls(tool) }
      })
  }
]

const Weather = Schema.Struct({ temperature: Schema.Number, conditions: Schema.String })

describe.concurrent.each(rows)("typed results, $name", (row) => {
  it.scopedLive("a result that matches the tool's outputSchema is returned as it is", () =>
    Effect.gen(function*() {
      const { connection, runs } = yield* row.open()
      expect(connection.tools.find((t) => t.name === "weather")?.outputSchema).toBeDefined()
      const result = yield* connection.callTool("weather", { city: "Lisbon" })
      expect(result.structuredContent).toEqual({ temperature: 21.5, conditions: "sunny" })
      expect(runs("weather")).toBe(1)
    }))

  for (
    const [mode, reason] of [
      ["mismatch", "structured-content-mismatch"],
      ["extra", "structured-content-mismatch"],
      ["missing", "missing-structured-content"]
    ] as const
  ) {
    it.scopedLive(`${mode}: ProtocolViolation ${reason}, outcome applied, not retryable, sent once`, () =>
      Effect.gen(function*() {
        const { connection, runs } = yield* row.open()
        const { error } = yield* failureOf(connection.callTool("weather", { city: "Lisbon", mode }))
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason, stage: "call", phase: "call", outcome: "applied", retryable: false })
        expect((error as { observedBytes?: number }).observedBytes).toBeGreaterThan(0)
        expect(runs("weather")).toBe(1)
        const observed = (yield* connection.observations).at(-1)
        expect(observed).toMatchObject({ operation: "tools/call", outcome: "ProtocolViolation" })
        // The connection goes on.
        expect((yield* connection.callTool("weather", { city: "Porto" })).structuredContent).toBeDefined()
      }))
  }

  it.scopedLive("a tool error (isError) is returned, not checked", () =>
    Effect.gen(function*() {
      const { connection } = yield* row.open()
      const result = yield* connection.callTool("weather_error", { city: "Lisbon" })
      expect(result.isError).toBe(true)
      expect(result.structuredContent).toBeUndefined()
    }))

  it.scopedLive("callToolDecoded: the caller's Schema decodes structuredContent into its type", () =>
    Effect.gen(function*() {
      const { connection, runs } = yield* row.open()
      const decoded = yield* connection.callToolDecoded(Weather, "weather", { city: "Lisbon" })
      expect(decoded.isError).toBe(false)
      if (!decoded.isError) expect(decoded.value).toEqual({ temperature: 21.5, conditions: "sunny" })
      // A Schema the result does not fit: the server's answer, applied, never re-sent.
      const Strict = Schema.Struct({ temperature: Schema.Number.pipe(Schema.greaterThan(30)), conditions: Schema.String })
      const { error } = yield* failureOf(connection.callToolDecoded(Strict, "weather", { city: "Lisbon" }))
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "structured-content-mismatch", outcome: "applied", retryable: false })
      // A tool without structuredContent: nothing to decode.
      const { error: missing } = yield* failureOf(connection.callToolDecoded(Weather, "echo", { text: "hi" }))
      expect(missing).toMatchObject({ _tag: "ProtocolViolation", reason: "missing-structured-content", outcome: "applied" })
      // A tool error is returned as such.
      const failed = yield* connection.callToolDecoded(Weather, "weather_error", { city: "Lisbon" })
      expect(failed.isError).toBe(true)
      expect(runs("weather")).toBe(2)
    }))
})

describe("callToolDecoded within the call's deadline", () => {
  it.scopedLive("a decoding that ends past the deadline is DeadlineExceeded output-check: applied, not retryable, sent once", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provide(FetchHttpClient.layer))
      // A decoding no deadline can interrupt: it holds the process 600 ms, past the call's 500 ms.
      const Slow = Weather.pipe(Schema.filter(() => {
        const until = Date.now() + 600
        while (Date.now() < until) {
          // The synchronous work of a decode.
        }
        return true
      }))
      const { error } = yield* failureOf(connection.callToolDecoded(Slow, "weather", { city: "Lisbon" }, { timeout: 500 }))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", reason: "output-check", stage: "call", outcome: "applied", retryable: false })
      expect(srv.toolCalls("weather")).toBe(1)
    }))

  for (const [era, revision, stage] of [["handshake", "2025-11-25", "task-result"], ["stateless", "2026-07-28", "get-task"]] as const) {
    it.scopedLive(`${era}: a call followed through its task, decoded past the deadline, is DeadlineExceeded output-check: applied, sent once`, () =>
      Effect.gen(function*() {
        const server = yield* Effect.acquireRelease(
          Effect.promise(() =>
            Testkit.startTaskServer({ era, completeAfterPolls: 1, statusNotifications: false, structuredContent: { temperature: 1, conditions: "x" } })
          ),
          (server) => Effect.promise(() => server.close())
        )
        const connection = yield* McpClient.connect({ url: server.url, revisions: [revision] }).pipe(Effect.provide(FetchHttpClient.layer))
        // The sync point: the server has the call, so the call's deadline (read before it was
        // sent) is at most this plus its timeout.
        let received: number | undefined
        void server.waitFor("tools/call", 1).then(() => received = Date.now())
        const timeout = 1_000
        // A decoding no deadline can interrupt: it holds the process until past the call's deadline.
        const Slow = Weather.pipe(Schema.filter(() => {
          if (received === undefined) return false
          while (Date.now() <= received + timeout) {
            // The synchronous work of a decode.
          }
          return true
        }))
        const { error } = yield* failureOf(connection.callToolDecoded(Slow, "job", {}, { timeout }))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", reason: "output-check", stage, phase: "call", outcome: "applied", retryable: false })
        expect(server.count("tools/call")).toBe(1)
        expect(server.count("tasks/get")).toBe(1)
      }))
  }
})

describe.concurrent("typed results, Promise API", () => {
  it.live("a mismatch rejects with the same error", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true })
      const error = yield* Effect.promise(async () => {
        const connection = await connect({ url: srv.url, httpClient: Layer.orDie(FetchHttpClient.layer) })
        try {
          return await connection.callTool("weather", { city: "x", mode: "mismatch" }).then(() => undefined, (e: unknown) => e)
        } finally {
          await connection.close()
        }
      })
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "structured-content-mismatch", outcome: "applied" })
      expect(JSON.stringify(error)).not.toContain("hot")
    }).pipe(Effect.scoped))
})

describe.concurrent("output schemas a server declares", () => {
  const tools = [
    { name: "fine", inputSchema: { type: "object" }, outputSchema: { type: "object", properties: { n: { type: "number" } } } },
    { name: "foreign", inputSchema: { type: "object" }, outputSchema: { $schema: "https://example.com/other-dialect", type: "object" } }
  ]

  it.scopedLive("a schema that cannot be compiled leaves its tool out of the listing; calling it is refused unsent", () =>
    Effect.gen(function*() {
      const srv = yield* rawMcpServer({
        tools,
        onCall: ({ message, res }) => json(res, { jsonrpc: "2.0", id: message.id, result: { content: [], structuredContent: { n: 1 } } })
      })
      const connection = yield* McpClient.connect({ url: srv.url, transport: "streamable-http" })
      expect(connection.tools.map((t) => t.name)).toEqual(["fine"])
      expect(connection.discovery.find((o) => o.excludedTools !== undefined)?.excludedTools).toBe(1)
      const { error } = yield* failureOf(connection.callTool("foreign"))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "name", outcome: "not-sent" })
      expect((yield* connection.callTool("fine")).structuredContent).toEqual({ n: 1 })
      expect(srv.received.filter((r) => r.rpcMethod === "tools/call")).toHaveLength(1)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("an output schema over maxSchemaBytes fails the discovery with LimitExceeded", () =>
    Effect.gen(function*() {
      const big = { type: "object", description: "x".repeat(5_000) }
      const srv = yield* rawMcpServer({ tools: [{ name: "big", inputSchema: { type: "object" }, outputSchema: big }] })
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "streamable-http", policy: { maxSchemaBytes: 4_096 } }))
      expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxSchemaBytes", stage: "list-tools" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
