/**
 * `McpToolkit` end to end (docs/DESIGN.md, "AI toolkits"): a scripted `LanguageModel` issues
 * tool calls through `LanguageModel.generateText`, against real loopback MCP servers of the
 * testkit. What the model is given (the tools as a provider sees them, the prompt of the next
 * turn) is recorded and compared with what the server listed and answered.
 */
import { FetchHttpClient } from "@effect/platform"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { describe, expect, it } from "@effect/vitest"
import { McpToolkit, ToolSource } from "@phasebound/ai"
import { McpClient, McpConnectionError } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { eventually, finish, followUp, scriptedModel, type Seen, toolCall } from "./support/scriptedModel.js"

// ---------------------------------------------------------------------------------------------
// A scripted server: its listing and its answers to tools/call
// ---------------------------------------------------------------------------------------------

const SECRET_HEADER = "canary-header-4f7c1e9a2b"
const SECRET_QUERY = "canary-query-8d2e5b3c7f"

/** Keywords Effect's Schema would never produce from a Schema of its own. */
const LOOKUP_INPUT_SCHEMA = {
  type: "object",
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    sku: { type: "string", pattern: "^[A-Z]{3}-\\d{4}$", examples: ["ABC-1234"] },
    qty: { type: "integer", minimum: 1, multipleOf: 1, "x-vendor": { unit: "piece" } }
  },
  properties: {
    sku: { $ref: "#/$defs/sku" },
    quantity: { $ref: "#/$defs/qty", default: 1 },
    tags: { type: "array", items: { type: "string" }, uniqueItems: true, prefixItems: [{ const: "first" }] },
    when: { type: "string", format: "date-time", deprecated: true }
  },
  required: ["sku"],
  additionalProperties: false,
  examples: [{ sku: "ABC-1234", quantity: 2 }],
  dependentRequired: { tags: ["when"] },
  "x-server-note": "kept as listed"
}

const LOOKUP_RESULT = {
  content: [{ type: "text", text: "2 in stock", annotations: { audience: ["assistant"] } }],
  structuredContent: { sku: "ABC-1234", inStock: 2, warehouses: [{ id: "w1", nested: { deep: [1, null, "x"] } }] },
  _meta: { "com.example/trace": "t-1" }
}

const TOOL_ERROR_RESULT = {
  content: [{ type: "text", text: "sku not found" }],
  structuredContent: { code: "NOT_FOUND" },
  isError: true
}

const LISTED_TOOLS = [
  {
    name: "lookup",
    title: "Stock lookup",
    description: "Looks up stock",
    inputSchema: LOOKUP_INPUT_SCHEMA,
    annotations: { readOnlyHint: true, idempotentHint: true }
  },
  { name: "fails", description: "Always a tool error", inputSchema: { type: "object" } },
  { name: "refuses", description: "Always a JSON-RPC error", inputSchema: { type: "object", properties: {} } },
  { name: "hangs", description: "Never answers", inputSchema: { type: "object" } },
  { name: "bad.name", description: "Not a name every provider accepts", inputSchema: { type: "object" } },
  { name: "__proto__", description: "A name that would be an object's prototype", inputSchema: { type: "object" } }
]

/** A secret as percent-encoding of every character, base64, and split by NULs: forms a hostile echo takes. */
const encodedForms = (secret: string) => [
  Array.from(secret, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join(""),
  btoa(secret),
  Array.from(secret).join("\u0000")
]

/** Results that echo the connection's configured secrets back, in every part of a result. */
const LEAKING_ERROR = {
  content: [{ type: "text", text: `sku NOT_FOUND for key ${SECRET_HEADER} (${encodedForms(SECRET_HEADER).join(" ")})` }],
  structuredContent: { code: "NOT_FOUND", query: SECRET_QUERY },
  isError: true
}
const LEAKING_RESULT = {
  content: [
    { type: "text", text: `ok, called with ${SECRET_QUERY}` },
    { type: "resource", resource: { uri: "test://echo", text: `header was ${SECRET_HEADER}` } }
  ],
  structuredContent: { [SECRET_HEADER]: 1, nested: [{ token: SECRET_QUERY, kept: "plain" }] },
  _meta: { "com.example/echo": SECRET_HEADER }
}
const LEAKING_TOOLS = [
  { name: "leaks_error", description: "Echoes the key in an error", inputSchema: { type: "object" } },
  { name: "leaks_result", description: "Echoes the key in a result", inputSchema: { type: "object" } }
]

const rpcResult = (result: unknown) => Testkit.messageAnswer(Testkit.resultText(result), "json")
const rpcError = (error: unknown) => Testkit.messageAnswer(`{"jsonrpc":"2.0","id":${Testkit.ID_PLACEHOLDER},"error":${JSON.stringify(error)}}`, "json")

/** The server's answers; `tools` is the listing (mutable: a test may change it). */
const scriptOf = (state: { tools: ReadonlyArray<unknown> }): Testkit.HostileScript => (request) => {
  if (request.method === "tools/list") return rpcResult({ tools: state.tools })
  if (request.method !== "tools/call") return "normal"
  const name = (request.params as { readonly name?: unknown }).name
  switch (name) {
    case "lookup":
      return rpcResult(LOOKUP_RESULT)
    case "fails":
      return rpcResult(TOOL_ERROR_RESULT)
    case "refuses":
      // A hostile server echoes what it was sent, in every form it can.
      return rpcError({
        code: -32001,
        message: `denied for ${SECRET_HEADER} at http://127.0.0.1/mcp?key=${SECRET_QUERY}`,
        data: { header: SECRET_HEADER, query: SECRET_QUERY, stack: "Error: at secret.ts:1" }
      })
    case "hangs":
      return "stall"
    case "leaks_error":
      return rpcResult(LEAKING_ERROR)
    case "leaks_result":
      return rpcResult(LEAKING_RESULT)
    default:
      return rpcResult({ content: [{ type: "text", text: `called ${String(name)}` }] })
  }
}

const hostile = (tools: ReadonlyArray<unknown> = LISTED_TOOLS) =>
  Effect.gen(function*() {
    const state = { tools }
    const server = yield* Effect.acquireRelease(
      Effect.promise(() => Testkit.startHostileServer({ era: "handshake", script: scriptOf(state) })),
      (server) => Effect.promise(() => server.close())
    )
    const connection = yield* McpClient.connect({
      url: `${server.url}?key=${SECRET_QUERY}`,
      headers: { "x-api-key": SECRET_HEADER },
      revisions: ["2025-11-25"]
    }).pipe(Effect.provide(FetchHttpClient.layer))
    return { server, connection, state }
  })

const callsOf = (server: Testkit.HostileServer) => server.requests.filter((request) => request.method === "tools/call")

const seenTool = (seen: Seen | undefined, name: string) => seen?.tools.find((tool) => tool.name === name)

/** Everything the model was given, as one text: every tool it saw and every prompt. */
const everythingSeen = (seen: ReadonlyArray<Seen>) => JSON.stringify(seen)

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("McpToolkit through generateText", () => {
  it.scopedLive("gives the model each server's inputSchema exactly as listed, the title and hints, and leaves out names a provider would refuse", () =>
    Effect.gen(function*() {
      const { connection } = yield* hostile()
      const model = scriptedModel(() => Effect.succeed([{ type: "text", text: "no tools needed" }]))
      const toolkit = yield* McpToolkit.make(connection)
      const response = yield* LanguageModel.generateText({ prompt: "hello", toolkit }).pipe(Effect.provide(model.layer))
      expect(response.text).toBe("no tools needed")
      const [seen] = model.seen
      expect(seen?.tools.map((tool) => tool.name)).toEqual(["lookup", "fails", "refuses", "hangs"])
      // The very JSON Schema the server listed, every keyword of it.
      expect(seenTool(seen, "lookup")?.parameters).toStrictEqual(LOOKUP_INPUT_SCHEMA)
      expect(seenTool(seen, "lookup")?.description).toBe("Looks up stock")
      expect(seenTool(seen, "fails")?.parameters).toStrictEqual({ type: "object" })
      expect(seenTool(seen, "refuses")?.parameters).toStrictEqual({ type: "object", properties: {} })
      // Each listed tool, as the connection holds it, is what reached the model.
      for (const listed of connection.tools.filter((tool) => !["bad.name", "__proto__"].includes(tool.name))) {
        expect(seenTool(seen, listed.name)?.parameters).toStrictEqual(listed.inputSchema)
      }
      expect(toolkit.excluded).toEqual([
        { name: "bad.name", server: undefined, reason: "invalid-name" },
        { name: "__proto__", server: undefined, reason: "invalid-name" }
      ])
      expect(Object.getPrototypeOf(toolkit.tools)).toBe(Object.prototype)
      const lookup = toolkit.tools["lookup"]!
      expect(Tool.getJsonSchema(lookup)).toBe(connection.tools[0]!.inputSchema)
      expect(lookup.annotations.unsafeMap.get(Tool.Title.key)).toBe("Stock lookup")
      expect(lookup.annotations.unsafeMap.get(Tool.Readonly.key)).toBe(true)
      expect(lookup.annotations.unsafeMap.get(Tool.Idempotent.key)).toBe(true)
      expect(lookup.annotations.unsafeMap.has(Tool.Destructive.key)).toBe(false)
    }))

  it.scopedLive("a call reaches the server once with the model's arguments; content and structuredContent come back unchanged", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const args = { sku: "ABC-1234", quantity: 2, tags: ["first"], extra: { nested: [1, "two", null] } }
      const model = scriptedModel((_, turn) => Effect.succeed(turn === 0 ? [toolCall("call_1", "lookup", args), finish] : [{ type: "text", text: "done" }]))
      const response = yield* LanguageModel.generateText({ prompt: "stock?", toolkit: McpToolkit.make(connection) }).pipe(Effect.provide(model.layer))
      const [result] = response.toolResults
      expect(result).toMatchObject({ id: "call_1", name: "lookup", isFailure: false })
      expect(result?.result).toStrictEqual(LOOKUP_RESULT)
      expect(result?.encodedResult).toStrictEqual(LOOKUP_RESULT)
      const calls = callsOf(server)
      expect(calls).toHaveLength(1)
      expect(calls[0]?.params).toStrictEqual({ name: "lookup", arguments: args })
      // The next turn's prompt carries the result as the server gave it.
      yield* LanguageModel.generateText({ prompt: followUp("stock?", response), toolkit: McpToolkit.make(connection) }).pipe(
        Effect.provide(model.layer)
      )
      expect(JSON.stringify(model.seen[1]?.prompt)).toContain(JSON.stringify(LOOKUP_RESULT.structuredContent))
    }))

  it.scopedLive("isError: true is a failure result the model reads, the server's result unchanged", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const model = scriptedModel(() => Effect.succeed([toolCall("call_e", "fails", { sku: "ZZZ-0000" })]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.make(connection) }).pipe(Effect.provide(model.layer))
      const [result] = response.toolResults
      expect(result).toMatchObject({ id: "call_e", name: "fails", isFailure: true })
      expect(result?.encodedResult).toStrictEqual(TOOL_ERROR_RESULT)
      expect(callsOf(server)).toHaveLength(1)
    }))

  it.scopedLive("a JSON-RPC error is a CallFailed result with public fields only: no secret, URL or data reaches the model", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const prompt = "try refuses"
      const model = scriptedModel((_, turn) => Effect.succeed(turn === 0 ? [toolCall("call_r", "refuses", {})] : [{ type: "text", text: "ok" }]))
      const toolkit = McpToolkit.make(connection)
      const response = yield* LanguageModel.generateText({ prompt, toolkit }).pipe(Effect.provide(model.layer))
      const [result] = response.toolResults
      expect(result).toMatchObject({ isFailure: true })
      const failure = result?.encodedResult as Record<string, unknown>
      expect(failure).toMatchObject({ _tag: "RemoteRefusal", code: -32001, phase: "call", outcome: "not-applied" })
      // Nothing but the tag, the message and public fields.
      const allowed = new Set(["_tag", "message", ...Object.keys(McpConnectionError.PublicFields.fields)])
      expect(Object.keys(failure).filter((key) => !allowed.has(key))).toEqual([])
      expect(String(failure["message"])).toContain("JSON-RPC code -32001")
      expect(String(failure["remoteMessage"])).toContain("denied for")
      // The follow-up turn: the model is handed the failure in its prompt.
      yield* LanguageModel.generateText({ prompt: followUp(prompt, response), toolkit }).pipe(Effect.provide(model.layer))
      const text = everythingSeen(model.seen)
      expect(text).toContain("RemoteRefusal")
      expect(text).toContain("denied for")
      for (const forbidden of [SECRET_HEADER, SECRET_QUERY, "http://", "127.0.0.1", "secret.ts", "stack"]) {
        expect(text).not.toContain(forbidden)
        expect(JSON.stringify(response.content)).not.toContain(forbidden)
      }
      // The secrets did travel to the server (so their absence above means something).
      expect(callsOf(server)[0]?.headers["x-api-key"]).toBe(SECRET_HEADER)
    }))

  it.scopedLive("a result that echoes a configured secret reaches the model redacted: an isError result, an ordinary one, structuredContent, keys and _meta", () =>
    Effect.gen(function*() {
      const { connection } = yield* hostile([...LISTED_TOOLS, ...LEAKING_TOOLS])
      // The server does echo them: what the connection returns carries them, unchanged.
      expect(JSON.stringify(yield* connection.callTool("leaks_result", {}))).toContain(SECRET_HEADER)
      const prompt = "leak"
      const model = scriptedModel((_, turn) =>
        Effect.succeed(turn === 0 ? [toolCall("e", "leaks_error", {}), toolCall("o", "leaks_result", {})] : [{ type: "text", text: "ok" }])
      )
      const toolkit = McpToolkit.make(connection)
      const response = yield* LanguageModel.generateText({ prompt, toolkit }).pipe(Effect.provide(model.layer))
      const [error, ordinary] = response.toolResults
      expect(error).toMatchObject({ name: "leaks_error", isFailure: true, encodedResult: { isError: true, structuredContent: { code: "NOT_FOUND" } } })
      expect(ordinary).toMatchObject({ name: "leaks_result", isFailure: false })
      // Only the secrets are replaced: the rest of each text, and the shape, are the server's.
      expect(error?.encodedResult).toMatchObject({
        content: [{ type: "text", text: "sku NOT_FOUND for key [redacted] ([redacted] [redacted] [redacted])" }],
        structuredContent: { code: "NOT_FOUND", query: "[redacted]" }
      })
      expect(ordinary?.encodedResult).toStrictEqual({
        content: [
          { type: "text", text: "ok, called with [redacted]" },
          { type: "resource", resource: { uri: "test://echo", text: "header was [redacted]" } }
        ],
        structuredContent: { "[redacted]": 1, nested: [{ token: "[redacted]", kept: "plain" }] },
        _meta: { "com.example/echo": "[redacted]" }
      })
      yield* LanguageModel.generateText({ prompt: followUp(prompt, response), toolkit }).pipe(Effect.provide(model.layer))
      const text = everythingSeen(model.seen) + JSON.stringify(response.content)
      expect(text).toContain("[redacted]")
      for (const forbidden of [SECRET_HEADER, SECRET_QUERY, ...encodedForms(SECRET_HEADER)]) expect(text).not.toContain(forbidden)
      expect(text.replace(/\\u0000/g, "")).not.toContain(SECRET_HEADER)
    }))

  it.scopedLive("arguments pass exactly as the model gave them: an own __proto__ key reaches the server, and no prototype is touched", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const params: unknown = JSON.parse(`{"__proto__":{"polluted":true},"sku":"ABC-1234"}`)
      const seen: Array<McpToolkit.ToolCall> = []
      const toolkit = McpToolkit.make(connection, { effectIdentity: (call) => void seen.push(call) })
      const model = scriptedModel(() => Effect.succeed([toolCall("p", "lookup", params)]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      expect(response.toolResults[0]).toMatchObject({ name: "lookup", isFailure: false })
      const [call] = callsOf(server)
      expect(call?.body).toContain(`"arguments":{"__proto__":{"polluted":true},"sku":"ABC-1234"}`)
      expect(Object.keys((call?.params as { readonly arguments: object }).arguments)).toEqual(["__proto__", "sku"])
      // The caller's callback saw the same own keys, and nothing's prototype changed.
      expect(Object.keys(seen[0]!.arguments)).toEqual(["__proto__", "sku"])
      expect(Object.getPrototypeOf(seen[0]!.arguments)).toBe(Object.prototype)
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }))

  it.scopedLive("arguments that are not a JSON object are an InvalidArguments result the model reads; nothing is sent, generateText goes on", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const given: ReadonlyArray<unknown> = [[{ sku: "ABC-1234" }], "ABC-1234", 42, null]
      const model = scriptedModel((_, turn) =>
        Effect.succeed(turn === 0 ? given.map((params, i) => toolCall(`x${i}`, "lookup", params)) : [{ type: "text", text: "sorry" }])
      )
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.make(connection) }).pipe(Effect.provide(model.layer))
      expect(response.toolResults).toHaveLength(given.length)
      for (const result of response.toolResults) {
        expect(result).toMatchObject({ name: "lookup", isFailure: true, encodedResult: { _tag: "InvalidArguments", tool: "lookup", outcome: "not-sent" } })
      }
      expect(callsOf(server)).toHaveLength(0)
    }))

  it.scoped("a call past its budget is a DeadlineExceeded result (TestClock): the deadline the toolkit's callOptions set", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const model = scriptedModel(() => Effect.succeed([toolCall("call_h", "hangs", {})]))
      const toolkit = McpToolkit.make(connection, { callOptions: { timeout: "2 seconds" } })
      const fiber = yield* Effect.fork(LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer)))
      yield* eventually(() => callsOf(server).length === 1)
      yield* TestClock.adjust("1999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      const [result] = response.toolResults
      expect(result).toMatchObject({ isFailure: true })
      expect(result?.encodedResult).toMatchObject({ _tag: "DeadlineExceeded", phase: "call", limits: { timeoutMs: 2000 } })
      expect(JSON.stringify(response.content)).not.toContain(SECRET_HEADER)
      expect(callsOf(server)).toHaveLength(1)
    }))

  it.scopedLive("a tool the server removed after the model saw it is an UnknownTool result, and is not called", () =>
    Effect.gen(function*() {
      const { connection, server, state } = yield* hostile()
      const model = scriptedModel(() =>
        Effect.gen(function*() {
          // While the model thinks, the server drops `lookup`, and the connection relists.
          state.tools = LISTED_TOOLS.filter((tool) => tool.name !== "lookup")
          yield* Effect.orDie(connection.listTools)
          return [toolCall("call_u", "lookup", { sku: "ABC-1234" })]
        })
      )
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.make(connection) }).pipe(Effect.provide(model.layer))
      expect(seenTool(model.seen[0], "lookup")).toBeDefined()
      const [result] = response.toolResults
      expect(result).toMatchObject({ isFailure: true, encodedResult: { _tag: "UnknownTool", tool: "lookup", outcome: "not-sent" } })
      expect(callsOf(server)).toHaveLength(0)
    }))

  it.scopedLive("a defect is an InternalError result with nothing of the defect in it; onDefect gets the cause in process", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const causes: Array<Cause.Cause<unknown>> = []
      const toolkit = McpToolkit.make(connection, {
        effectIdentity: () => {
          throw new Error(`boom ${SECRET_HEADER}`)
        },
        onDefect: (cause) => Effect.sync(() => void causes.push(cause))
      })
      const model = scriptedModel(() => Effect.succeed([toolCall("call_d", "lookup", { sku: "ABC-1234" })]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      const [result] = response.toolResults
      expect(result).toMatchObject({ isFailure: true, encodedResult: { _tag: "InternalError", reason: "defect", outcome: "unknown" } })
      expect(JSON.stringify(response.content)).not.toContain(SECRET_HEADER)
      expect(JSON.stringify(response.content)).not.toContain("boom")
      expect(causes).toHaveLength(1)
      expect(Cause.pretty(causes[0]!)).toContain("boom")
      expect(callsOf(server)).toHaveLength(0)
    }))

  it.scopedLive("an onDefect that itself dies changes nothing: the model still reads InternalError", () =>
    Effect.gen(function*() {
      const { connection } = yield* hostile()
      const toolkit = McpToolkit.make(connection, {
        effectIdentity: () => {
          throw new Error("first")
        },
        onDefect: () => Effect.die("second")
      })
      const model = scriptedModel(() => Effect.succeed([toolCall("call_d", "lookup", {})]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      expect(response.toolResults[0]).toMatchObject({ isFailure: true, encodedResult: { _tag: "InternalError" } })
    }))

  it.scopedLive("the effect identity the caller derives travels with the call; none is made up otherwise", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const identities: Array<McpToolkit.ToolCall> = []
      const toolkit = McpToolkit.make(connection, {
        effectIdentity: (call) => {
          identities.push(call)
          return `conversation-7/turn-1/${call.name}`
        }
      })
      const model = scriptedModel(() => Effect.succeed([toolCall("call_1", "lookup", { sku: "ABC-1234" })]))
      yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.make(connection) }).pipe(Effect.provide(model.layer))
      expect(identities).toEqual([{ modelName: "lookup", name: "lookup", server: undefined, arguments: { sku: "ABC-1234" } }])
      expect(server.toolCallArrivals().map((arrival) => arrival.effectIdentity)).toEqual(["conversation-7/turn-1/lookup", undefined])
    }))

  it.scopedLive("an identity phasebound refuses is an InvalidOption result, and nothing is sent", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const toolkit = McpToolkit.make(connection, { effectIdentity: () => "bad\nidentity" })
      const model = scriptedModel(() => Effect.succeed([toolCall("call_1", "lookup", {})]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      expect(response.toolResults[0]).toMatchObject({
        isFailure: true,
        encodedResult: { _tag: "InvalidOption", option: "effectIdentity", outcome: "not-sent" }
      })
      expect(callsOf(server)).toHaveLength(0)
    }))

  it.scopedLive("a prefix names every tool for the model; the server is called by the tool's own name", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* hostile()
      const model = scriptedModel((_, turn) => Effect.succeed(turn === 0 ? [toolCall("c", "stock_lookup", { sku: "ABC-1234" })] : []))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.make(connection, { prefix: "stock_" }) }).pipe(
        Effect.provide(model.layer)
      )
      expect(model.seen[0]?.tools.map((tool) => tool.name)).toEqual(["stock_lookup", "stock_fails", "stock_refuses", "stock_hangs", "stock___proto__"])
      expect(response.toolResults[0]).toMatchObject({ name: "stock_lookup", isFailure: false })
      expect(callsOf(server)[0]?.params).toMatchObject({ name: "lookup" })
    }))

  it.scopedLive("a snapshot merges with the application's own toolkit; both are handled in one generateText", () =>
    Effect.gen(function*() {
      const { connection } = yield* hostile()
      const Clock = Tool.make("clock", { success: Schema.String })
      const own = Toolkit.make(Clock)
      const snapshot = yield* McpToolkit.snapshot(ToolSource.fromConnection(connection), { include: (tool) => tool.name === "lookup" })
      const merged = Toolkit.merge(own, snapshot.toolkit)
      const handlers = Layer.merge(own.toLayer({ clock: () => Effect.succeed("noon") }), snapshot.layer)
      const model = scriptedModel(() => Effect.succeed([toolCall("a", "clock", {}), toolCall("b", "lookup", { sku: "ABC-1234" })]))
      const response = yield* Effect.flatMap(merged, (toolkit) => LanguageModel.generateText({ prompt: "p", toolkit })).pipe(
        Effect.provide(Layer.merge(handlers, model.layer))
      )
      expect(model.seen[0]?.tools.map((tool) => tool.name)).toEqual(["clock", "lookup"])
      expect(response.toolResults.map((part) => [part.name, part.encodedResult])).toEqual([["clock", "noon"], ["lookup", LOOKUP_RESULT]])
    }))
})

describe("McpToolkit follows tools/list_changed", () => {
  it.scopedLive("the next generateText sees the tool the server added, and can call it", () =>
    Effect.gen(function*() {
      const server = yield* Testkit.scoped({ features: true })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy: { relistDelay: "10 millis" } }).pipe(
        Effect.provide(FetchHttpClient.layer)
      )
      // Once the connection listens, a change reaches it.
      yield* eventually(() => server.listChangedListeners() === 1)
      const model = scriptedModel((seen) =>
        Effect.succeed(seen.tools.some((tool) => tool.name === "added_1") ? [toolCall("n", "added_1", { text: "hi" })] : [])
      )
      // One value, given to every generateText: it reads the connection's current list each time.
      const toolkit = McpToolkit.make(connection)
      yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      expect(seenTool(model.seen[0], "added_1")).toBeUndefined()

      const changed = yield* Effect.fork(Stream.runHead(Stream.filter(connection.toolList.changes, (tools) => tools.some((tool) => tool.name === "added_1"))))
      expect(server.changeTools(1)).toBe(1)
      yield* Fiber.join(changed)

      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      expect(seenTool(model.seen[1], "added_1")?.parameters).toStrictEqual(connection.tools.find((tool) => tool.name === "added_1")?.inputSchema)
      expect(response.toolResults[0]).toMatchObject({ name: "added_1", isFailure: false, encodedResult: { content: [{ type: "text", text: "hi" }] } })
    }))
})
