/**
 * What a listing or an answer may cost in memory is bounded by the policy, not only by its wire
 * bytes (docs/DESIGN.md, "Structure bounds"), and any JSON value is a `structuredContent`
 * (docs/DESIGN.md, "Typed results"), over Streamable HTTP (JSON and SSE answers) and stdio, in
 * both eras, against scripted hostile servers on loopback:
 *
 * - a tool whose input schema nests 100,000 arrays (200 KB, which JSON.parse accepts) is
 *   `LimitExceeded` `maxDepth` at `list-tools`, never a defect;
 * - an answer of 1,000,000 empty objects is `LimitExceeded` `maxNodes`, outcome `applied`, the
 *   call sent once;
 * - the pages of one listing are bounded together: `maxListingBytes`, and `maxNodes` over all
 *   of them;
 * - `structuredContent` of every JSON type comes back as the server sent it, and
 *   `callToolDecoded` decodes it.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Layer, Schema } from "effect"
import { McpClient, type McpConnectionError, type PhasePolicy } from "../../src/index.js"
import { failureOf } from "../support/harness.js"

type Era = Testkit.HostileEra

/** Scripted answers per JSON-RPC method: a result's JSON text (`__ID__` for the id) for each request, the last one repeated. */
type Answers = Readonly<Record<string, ReadonlyArray<string>>>

interface Row {
  readonly name: string
  readonly era: Era
  readonly open: (
    answers: Answers,
    policy?: PhasePolicy.Options
  ) => Effect.Effect<{ readonly connection: McpClient.Connection; readonly calls: () => number }, McpConnectionError.McpConnectionError, any>
  readonly connectFailure: (answers: Answers, policy?: PhasePolicy.Options) => Effect.Effect<McpConnectionError.McpConnectionError, unknown, any>
}

const complete = (era: Era) => era === "stateless" ? `"resultType":"complete",` : ""
/** A result message whose result object holds `fields` (JSON text without braces). */
const result = (era: Era, fields: string) => `{"jsonrpc":"2.0","id":${Testkit.ID_PLACEHOLDER},"result":{${complete(era)}${fields}}}`

const httpRow = (era: Era, mode: "json" | "sse"): Row => {
  const serve = (answers: Answers) =>
    Effect.acquireRelease(
      Effect.promise(() => {
        const taken = new Map<string, number>()
        return Testkit.startHostileServer({
          era,
          mode,
          script: (request) => {
            const list = request.method === undefined ? undefined : answers[request.method]
            if (list === undefined || request.httpMethod !== "POST") return "normal"
            const index = taken.get(request.method!) ?? 0
            taken.set(request.method!, index + 1)
            return Testkit.messageAnswer(list[Math.min(index, list.length - 1)]!, mode, era === "handshake" ? [["mcp-session-id", "hostile-session"]] : [])
          }
        })
      }),
      (server) => Effect.promise(() => server.close())
    )
  const connect = (answers: Answers, policy?: PhasePolicy.Options) =>
    Effect.gen(function*() {
      const server = yield* serve(answers)
      // The HTTP client lives as long as the test's scope, not only the connect.
      const client = yield* Layer.build(NodeHttpClient.layerUndici)
      const connection = yield* McpClient.connect({ url: server.url, transport: "streamable-http", policy }).pipe(Effect.provide(client))
      return { connection, calls: () => server.toolCallArrivals().length }
    })
  return {
    name: `Streamable HTTP ${mode}, ${era}`,
    era,
    open: connect,
    connectFailure: (answers, policy) => Effect.flip(connect(answers, policy))
  }
}

const stdioPlatform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

const stdioRow = (era: Era): Row => {
  const connect = (answers: Answers, policy?: PhasePolicy.Options) =>
    Effect.flatMap(
      Effect.acquireRelease(
        Effect.sync(() =>
          Testkit.hostileStdioCase({
            era,
            answers: Object.fromEntries(Object.entries(answers).map(([method, texts]) => [method, texts.map((text) => ({ text: `${text}\n` }))]))
          })
        ),
        (script) => Effect.sync(() => script.cleanup())
      ),
      (script) =>
        Effect.map(
          McpClient.connectStdio({ command: script.command, args: script.args, env: script.env, policy }).pipe(Effect.provide(stdioPlatform)),
          (connection) => ({ connection, calls: () => script.toolCallArrivals().length })
        )
    )
  return { name: `stdio, ${era}`, era, open: connect, connectFailure: (answers, policy) => Effect.flip(connect(answers, policy)) }
}

const rows: ReadonlyArray<Row> = [
  httpRow("stateless", "json"),
  httpRow("stateless", "sse"),
  httpRow("handshake", "json"),
  httpRow("handshake", "sse"),
  stdioRow("stateless"),
  stdioRow("handshake")
]

const tool = (name: string, inputSchema = `{"type":"object"}`, outputSchema?: string) =>
  `{"name":"${name}","inputSchema":${inputSchema}${outputSchema === undefined ? "" : `,"outputSchema":${outputSchema}`}}`

const listing = (era: Era, tools: ReadonlyArray<string>, nextCursor?: string) =>
  result(era, `"tools":[${tools.join(",")}]${nextCursor === undefined ? "" : `,"nextCursor":"${nextCursor}"`}`)

const callResult = (era: Era, structuredContent?: string) =>
  result(era, `"content":[{"type":"text","text":"ok"}]${structuredContent === undefined ? "" : `,"structuredContent":${structuredContent}`}`)

// Discovery is given room (a stdio child starts slowly on a loaded machine); the bounds are the point.
const roomy: PhasePolicy.Options = { discovery: { timeout: "20 seconds" } }

describe.concurrent.each(rows)("structure bounds, $name", (row) => {
  it.scopedLive("an input schema nested 100,000 deep is LimitExceeded maxDepth at list-tools, never a defect", () =>
    Effect.gen(function*() {
      const deep = `{"type":"object","properties":{"p":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`
      const error = yield* row.connectFailure({ "tools/list": [listing(row.era, [tool("deep", deep)])] }, roomy)
      expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxDepth", stage: "list-tools", phase: "discovery", outcome: "applied" })
      expect(JSON.stringify(error)).not.toContain("maxDepth\":128")
    }))

  it.scopedLive("an answer of a million empty objects is LimitExceeded maxNodes, applied, sent once", () =>
    Effect.gen(function*() {
      const { calls, connection } = yield* row.open({
        "tools/call": [callResult(row.era, `[${"{},".repeat(999_999)}{}]`), callResult(row.era, `{"n":1}`)]
      }, roomy)
      const { error } = yield* failureOf(connection.callTool("echo", { nonce: 1 }))
      expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxNodes", stage: "call", phase: "call", outcome: "applied", retryable: false })
      expect(calls()).toBe(1)
      // A stream carries no request of its own (stdio): the connection gave it up. Elsewhere it goes on.
      if (!row.name.startsWith("stdio")) expect((yield* connection.callTool("echo", { nonce: 2 })).structuredContent).toEqual({ n: 1 })
    }))

  it.scopedLive("the pages of one listing share one bound: maxListingBytes, and maxNodes over them all", () =>
    Effect.gen(function*() {
      const page = (cursor: number) => listing(row.era, [tool(`t${cursor}`, `{"type":"object","description":"${"x".repeat(2_000)}"}`)], `c${cursor}`)
      const pages = Array.from({ length: 10 }, (_, i) => page(i))
      const bytes = yield* row.connectFailure({ "tools/list": pages }, { ...roomy, maxListingBytes: 10_000 })
      expect(bytes).toMatchObject({ _tag: "LimitExceeded", limit: "maxListingBytes", stage: "list-tools", outcome: "applied" })
      expect((bytes as { observedBytes: number }).observedBytes).toBeGreaterThan(10_000)
      const wide = (cursor: number) => listing(row.era, [tool(`w${cursor}`, `{"type":"object","enum":[${"0,".repeat(399)}0]}`)], `c${cursor}`)
      const nodes = yield* row.connectFailure({ "tools/list": Array.from({ length: 10 }, (_, i) => wide(i)) }, { ...roomy, maxNodes: 2_000 })
      expect(nodes).toMatchObject({ _tag: "LimitExceeded", limit: "maxNodes", stage: "list-tools", outcome: "applied" })
    }))

  it.scopedLive("structuredContent may be any JSON value: returned as sent, decoded by callToolDecoded", () =>
    Effect.gen(function*() {
      const values = [`5`, `"five"`, `[1,"two",null]`, `null`, `true`, `{"n":5}`]
      const { calls, connection } = yield* row.open({ "tools/call": values.map((value) => callResult(row.era, value)) }, roomy)
      for (const value of values) expect((yield* connection.callTool("echo")).structuredContent).toEqual(JSON.parse(value))
      const decoded = yield* connection.callToolDecoded(Schema.Struct({ n: Schema.Number }), "echo")
      expect(decoded).toMatchObject({ isError: false, value: { n: 5 } })
      expect(calls()).toBe(values.length + 1)
    }))

  it.scopedLive("a non-object structuredContent is checked against the tool's outputSchema like any other", () =>
    Effect.gen(function*() {
      const { calls, connection } = yield* row.open({
        "tools/list": [listing(row.era, [tool("count", `{"type":"object"}`, `{"type":"integer","minimum":0}`)])],
        "tools/call": [callResult(row.era, `5`), callResult(row.era, `-1`), callResult(row.era, `[5]`)]
      }, roomy)
      expect((yield* connection.callTool("count")).structuredContent).toBe(5)
      const decoded = yield* connection.callToolDecoded(Schema.Number, "count").pipe(Effect.flip)
      expect(decoded).toMatchObject({ _tag: "ProtocolViolation", reason: "structured-content-mismatch", outcome: "applied" })
      const array = yield* Effect.flip(connection.callTool("count"))
      expect(array).toMatchObject({ _tag: "ProtocolViolation", reason: "structured-content-mismatch", outcome: "applied" })
      expect(calls()).toBe(3)
    }))
})
