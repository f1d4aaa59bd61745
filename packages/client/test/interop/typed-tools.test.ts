/**
 * Typed tools end to end (docs/DESIGN.md, "Typed tools"): the modules generated from the tools
 * live servers list (the testkit's features; @modelcontextprotocol/server-everything, which no
 * one here wrote; a hostile server's names and unions), from both servers in one module
 * (`generateServers`), from generated schemas and from schemas at the edges of what the
 * connection accepts, all type-check in one program under the repository's compiler options,
 * against `effect` and this client's own declarations, and load. Their helpers call the tools:
 * the structured content comes back decoded by the generated output Schema, a tool without one
 * answers its raw result, and the arguments sent are those the generated input Schema accepts.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Duration, Effect, Either, Exit, FastCheck as fc, Schema, Scope } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { McpClient, McpCodegen, type McpSchema } from "../../src/index.js"
import { typeCheck } from "../support/codegen.js"
import { schemaArbitrary } from "../support/codegenSchemas.js"
import { startEverythingServer } from "../support/everythingServer.js"
import { httpClients } from "../support/harness.js"

const generatedDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", ".generated")

/** Writes a module under test/.generated (gitignored), where `effect` resolves. */
const write = (name: string, generated: Either.Either<McpCodegen.Generated, McpCodegen.InvalidCodegenOption>) => {
  if (Either.isLeft(generated)) throw new Error(generated.left.message)
  mkdirSync(generatedDir, { recursive: true })
  const file = path.join(generatedDir, `${name}.ts`)
  writeFileSync(file, generated.right.source)
  return { file, ...generated.right }
}

type Module = ReturnType<typeof write>

/** Each level may be tried by both members: 2^depth steps for a decoder that tries them in turn. */
const doubling = {
  $ref: "#/$defs/d",
  $defs: { d: { anyOf: [{ type: "array", items: { $ref: "#/$defs/d" }, minItems: 2 }, { type: "array", items: { $ref: "#/$defs/d" } }] } }
}
let nested24: unknown = []
for (let i = 0; i < 24; i++) nested24 = [nested24]

/** Names a module must keep apart and make valid: keywords, prototype keys, comment ends, line ends, names alike. */
const hostileNames = [
  "delete",
  "class",
  "await",
  "yield",
  "let",
  "arguments",
  "eval",
  "then",
  "default",
  "constructor",
  "toString",
  "__proto__",
  "*/ globalThis.pwned = 1 /*",
  "a\u2028b",
  "get-weather",
  "get_weather",
  "get weather",
  "Get Weather",
  "搜索",
  "搜",
  "🔥",
  "-",
  "--",
  "123",
  "Schema",
  "Effect",
  "ParseResult",
  "objectWith",
  "choose",
  "kindOf",
  "Kind",
  "Route",
  "oneOf",
  "patternOf",
  "McpClient",
  `${"x".repeat(70)}a`,
  `${"x".repeat(70)}b`
]

/** The hostile server's listing: the hostile names (each echoes its own name), and `nest` (a doubling union). */
const hostileTools = [
  ...hostileNames.map((name) => ({
    name,
    inputSchema: { type: "object", properties: { [name]: { type: "string" } } },
    outputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false }
  })),
  { name: "nest", inputSchema: { type: "object" }, outputSchema: doubling }
]

const hostileScript: Testkit.HostileScript = (request) => {
  if (request.method === "tools/list") return Testkit.messageAnswer(Testkit.resultText({ tools: hostileTools }), "json")
  if (request.method !== "tools/call") return "normal"
  const name = (request.params as { readonly name: string }).name
  const structuredContent = name === "nest" ? nested24 : { name }
  return Testkit.messageAnswer(Testkit.resultText({ content: [{ type: "text", text: "ok" }], structuredContent }), "json")
}

/** At the edges of what a connection accepts (input schemas up to `maxSchemaBytes`). */
const edgeTools = (() => {
  const values = Array.from({ length: 70_000 }, (_, i) => `v${i}`)
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < 30_000; i++) properties[`p${i}`] = { type: "string" }
  let deep: unknown = { type: "string" }
  for (let i = 0; i < 70; i++) deep = { type: "object", properties: { a: deep, b: { type: "array", items: { type: "number" } } }, required: ["a"] }
  return [
    { name: "enum", inputSchema: { type: "object", properties: { e: { enum: values } } }, outputSchema: { enum: values.slice(0, 1_000) } },
    {
      name: "any-of",
      inputSchema: { type: "object", properties: { e: { anyOf: values.slice(0, 20_000).map((v) => ({ type: "string", pattern: `^${v}$` })) } } }
    },
    { name: "properties", inputSchema: { type: "object", properties, required: ["p0"] } },
    {
      name: "tuple",
      inputSchema: { type: "object", properties: { t: { type: "array", prefixItems: values.slice(0, 50_000).map(() => ({ type: "number" })) } } }
    },
    { name: "deep", inputSchema: { type: "object" }, outputSchema: deep },
    { name: "max-items", inputSchema: { type: "object", properties: { a: { type: "array", maxItems: 0 } } }, outputSchema: { type: "array", maxItems: 0 } }
  ]
})()

interface Fixture {
  readonly testkit: { readonly connection: McpClient.Connection; readonly server: Testkit.TestServer; readonly module: Module }
  readonly everything: { readonly connection: McpClient.Connection; readonly module: Module }
  readonly hostile: { readonly connection: McpClient.Connection; readonly server: Testkit.HostileServer; readonly module: Module }
  readonly servers: Module
  readonly generatedSchemas: Module
  readonly edges: Module
  readonly diagnostics: ReadonlyMap<string, ReadonlyArray<string>>
}

const scope = Effect.runSync(Scope.make())
let fixture: Fixture

/** Every server connected, every module generated first, then all of them type-checked in one program. */
beforeAll(async () => {
  const setup = Effect.gen(function*() {
    const testkitServer = yield* Testkit.scoped({ features: true })
    const testkitConnection = yield* McpClient.connect({ url: testkitServer.url })
    const everythingServer = yield* Effect.acquireRelease(
      Effect.promise(() => startEverythingServer("streamableHttp")),
      (server) => Effect.promise(() => server.close())
    )
    const everythingConnection = yield* McpClient.connect({
      url: everythingServer.url,
      policy: { discovery: { timeout: 15_000 }, call: { timeout: 20_000 } }
    })
    const hostileServer = yield* Effect.acquireRelease(
      Effect.promise(() => Testkit.startHostileServer({ era: "handshake", script: hostileScript })),
      (server) => Effect.promise(() => server.close())
    )
    const hostileConnection = yield* McpClient.connect({ url: hostileServer.url })
    const recursive = {
      type: "object",
      properties: { tree: { $ref: "#/$defs/tree" }, list: { $ref: "#/definitions/list" }, json: { $ref: "#/$defs/json" } },
      required: ["tree"],
      $defs: {
        tree: {
          type: "object",
          properties: { value: { type: ["integer", "null"] }, children: { type: "array", items: { $ref: "#/$defs/tree" } } },
          required: ["value"],
          additionalProperties: false
        },
        json: {
          anyOf: [
            { type: ["string", "number", "boolean", "null"] },
            { type: "array", items: { $ref: "#/$defs/json" } },
            { type: "object", additionalProperties: { $ref: "#/$defs/json" } }
          ]
        },
        pair: { type: "array", prefixItems: [{ type: "string" }, { $ref: "#/$defs/pair" }], items: { $ref: "#/$defs/json" }, minItems: 1 },
        a: { type: "object", properties: { b: { $ref: "#/$defs/b" } } },
        b: { type: "array", items: { $ref: "#/$defs/a" }, maxItems: 3 },
        expr: {
          oneOf: [
            { type: "object", properties: { kind: { const: "add" }, args: { type: "array", items: { $ref: "#/$defs/expr" } } }, required: ["kind"] },
            { type: "object", properties: { kind: { const: "num" }, value: { type: "number" } }, required: ["kind"] },
            { type: "object", properties: { a: { $ref: "#/$defs/expr" } } },
            { type: "object", properties: { b: { $ref: "#/$defs/expr" } } }
          ]
        }
      },
      definitions: { list: { type: "object", properties: { head: { type: "string" }, tail: { $ref: "#/definitions/list" } }, required: ["head", "tail"] } }
    }
    const withEveryDefinition = {
      ...recursive,
      properties: { ...recursive.properties, pair: { $ref: "#/$defs/pair" }, a: { $ref: "#/$defs/a" }, expr: { $ref: "#/$defs/expr" } }
    }
    const generatedTools = fc.sample(schemaArbitrary, { numRuns: 60, seed: 42 }).map((schema, i) => ({
      name: `generated ${i}`,
      inputSchema: { type: "object", properties: { p: schema } },
      outputSchema: schema
    }))
    const modules = {
      testkit: write("testkit-features", McpCodegen.generate(testkitConnection.tools, { title: "testkit-features" })),
      everything: write("server-everything", McpCodegen.generate(everythingConnection.tools, { title: "server-everything" })),
      hostile: write("hostile", McpCodegen.generate(hostileConnection.tools, { title: "hostile" })),
      servers: write(
        "servers",
        McpCodegen.generateServers([{ name: "testkit", tools: testkitConnection.tools }, { name: "everything", tools: everythingConnection.tools }])
      ),
      generatedSchemas: write(
        "generated-schemas",
        McpCodegen.generate([...generatedTools, { name: "recursive", inputSchema: withEveryDefinition, outputSchema: withEveryDefinition }])
      ),
      edges: write("edges", McpCodegen.generate(edgeTools, { maxNodes: 1_000_000 }))
    }
    const diagnostics = typeCheck(Object.values(modules).map((module) => module.file))
    return {
      testkit: { connection: testkitConnection, server: testkitServer, module: modules.testkit },
      everything: { connection: everythingConnection, module: modules.everything },
      hostile: { connection: hostileConnection, server: hostileServer, module: modules.hostile },
      servers: modules.servers,
      generatedSchemas: modules.generatedSchemas,
      edges: modules.edges,
      diagnostics
    }
  })
  fixture = await Effect.runPromise(setup.pipe(Scope.extend(scope), Effect.provide(httpClients[0]![1])))
}, 120_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

/** The module, imported (vitest compiles its TypeScript). */
const load = (module: Module) => Effect.promise(() => import(/* @vite-ignore */ module.file) as Promise<Record<string, any>>)

/** The generated input Schema of `tool`, from the loaded module. */
const inputOf = (loaded: Record<string, any>, module: Module, tool: string) => {
  const name = module.tools.find((t) => t.name === tool)?.input
  if (name === undefined) throw new Error(`no tool ${tool}`)
  return loaded[name] as Schema.Schema<unknown>
}

/** Whether `schema` decodes `args`; what it decodes, it encodes back unchanged. */
const accepts = (schema: Schema.Schema<unknown>, args: unknown) => {
  const decoded = Schema.decodeUnknownEither(schema)(args)
  if (Either.isLeft(decoded)) return false
  expect(Schema.encodeSync(schema)(decoded.right)).toEqual(args)
  return true
}

/** A refusal by the server: a JSON-RPC error, or a tool error. */
const refusedByServer = (call: Effect.Effect<McpSchema.CallToolResult, unknown>) =>
  Effect.map(Effect.either(call), (either) => Either.isLeft(either) || either.right.isError === true)

type ToolArguments = ReadonlyArray<readonly [tool: string, args: Record<string, unknown>]>

/**
 * Each of `accepted`, the module's input Schema of its tool accepts and the server answers without
 * an error; each of `refused`, the input Schema refuses and the server refuses too.
 */
const inputsAgreeWithServer = (connection: McpClient.Connection, module: Module, accepted: ToolArguments, refused: ToolArguments) =>
  Effect.gen(function*() {
    const loaded = yield* load(module)
    for (const [tool, args] of accepted) {
      expect(accepts(inputOf(loaded, module, tool), args), tool).toBe(true)
      const result = yield* connection.callTool(tool, args)
      expect(result.isError, tool).not.toBe(true)
    }
    for (const [tool, args] of refused) {
      expect(accepts(inputOf(loaded, module, tool), args), tool).toBe(false)
      expect(yield* refusedByServer(connection.callTool(tool, args)), tool).toBe(true)
    }
  })

describe("typed tools of the testkit's features", () => {
  it.live("the module type-checks; weather decodes through its helper, log answers its raw result", () =>
    Effect.gen(function*() {
      const { connection, module, server } = fixture.testkit
      expect(module.tools.map((t) => t.name)).toEqual([...connection.tools.map((t) => t.name)].sort())
      expect(module.notes).toEqual([])
      expect(fixture.diagnostics.get(module.file)).toEqual([])
      const loaded = yield* load(module)
      const weather = yield* loaded["weather"](connection, { city: "Paris" }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      expect(weather.isError).toBe(false)
      expect(weather.isError === false && weather.value).toEqual(weather.result.structuredContent)
      // The helper's output Schema is the listed outputSchema's: additionalProperties false refuses what it does not name.
      const output = loaded["WeatherOutput"] as Schema.Schema<unknown>
      expect(Either.isRight(Schema.decodeUnknownEither(output)({ temperature: 1, conditions: "x" }))).toBe(true)
      expect(Either.isLeft(Schema.decodeUnknownEither(output)({ temperature: 1, conditions: "x", extra: 1 }))).toBe(true)
      const log = yield* loaded["log"](connection, { level: "info", message: "hi", count: 1 }) as Effect.Effect<{ readonly isError?: boolean }>
      expect(log.isError).not.toBe(true)
      expect(server.toolCalls("weather")).toBe(1)
    }))

  it.live("the arguments sent are those the generated input Schemas accept; what they refuse, the server refuses too", () =>
    inputsAgreeWithServer(fixture.testkit.connection, fixture.testkit.module, [
      ["add", { a: 1, b: 2.5 }],
      ["echo", { text: "hi" }],
      ["weather", { city: "Paris", mode: "ok" }],
      ["log", { level: "warning", message: "hi", count: 2 }],
      ["slow_progress", { steps: 1, intervalMs: 1 }],
      ["increment", {}],
      ["link_resource", {}]
    ], [
      ["add", { a: "1", b: 2 }],
      ["weather", { mode: "ok" }],
      ["log", { level: "loud", message: "hi" }],
      ["echo", { text: 5 }]
    ]))
})

describe("typed tools of server-everything", () => {
  it.live("the module type-checks; get-structured-content decodes through its helper", () =>
    Effect.gen(function*() {
      const { connection, module } = fixture.everything
      expect(module.tools.find((t) => t.name === "get-structured-content")).toEqual({
        name: "get-structured-content",
        helper: "getStructuredContent",
        input: "GetStructuredContentInput",
        output: "GetStructuredContentOutput"
      })
      expect(fixture.diagnostics.get(module.file)).toEqual([])
      const loaded = yield* load(module)
      const result = yield* loaded["getStructuredContent"](connection, { location: "Chicago" }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      expect(result.isError === false && result.value).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 })
    }))

  it.live("the arguments sent are those the generated input Schemas accept; what they refuse, the server refuses too", () =>
    inputsAgreeWithServer(fixture.everything.connection, fixture.everything.module, [
      ["echo", { message: "hi" }],
      ["get-annotated-message", { messageType: "success", includeImage: false }],
      ["get-env", {}],
      ["get-resource-links", { count: 2 }],
      ["get-resource-reference", { resourceType: "Text", resourceId: 1 }],
      ["get-structured-content", { location: "New York" }],
      ["get-sum", { a: 1, b: 2.5 }],
      ["get-tiny-image", {}]
    ], [
      ["get-sum", { a: "1", b: 2 }],
      ["get-structured-content", { location: "Paris" }],
      ["get-annotated-message", { messageType: "loud" }],
      ["echo", {}]
    ]))
})

describe("typed tools of several servers in one module (generateServers)", () => {
  it.live("the module type-checks and loads; a helper of each server calls its own server", () =>
    Effect.gen(function*() {
      const module = fixture.servers
      expect(fixture.diagnostics.get(module.file)).toEqual([])
      const loaded = yield* load(module)
      const weather = yield* loaded["testkitWeather"](fixture.testkit.connection, { city: "Oslo" }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      expect(weather.isError).toBe(false)
      const sum = yield* loaded["everythingGetSum"](fixture.everything.connection, { a: 2, b: 3 }) as Effect.Effect<McpSchema.CallToolResult>
      expect(sum.isError).not.toBe(true)
      expect(JSON.stringify(sum.content)).toContain("5")
    }))
})

describe("typed tools of a hostile server", () => {
  it.live("hostile names: the module type-checks and loads, runs nothing, and each helper calls its own tool once", () =>
    Effect.gen(function*() {
      const { connection, module, server } = fixture.hostile
      expect(fixture.diagnostics.get(module.file)).toEqual([])
      const loaded = yield* load(module)
      expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined()
      expect(new Set(module.tools.map((t) => t.helper)).size).toBe(module.tools.length)
      expect(module.tools.find((t) => t.name === "then")?.helper).toBe("then_")
      server.reset()
      for (const tool of module.tools.filter((t) => t.name !== "nest")) {
        const helper = loaded[tool.helper] as (
          connection: McpClient.Connection,
          args: unknown
        ) => Effect.Effect<McpClient.DecodedResult<unknown>>
        const result = yield* helper(connection, { [tool.name]: "v" })
        expect(result.isError === false && result.value, tool.name).toEqual({ name: tool.name })
      }
      const called = server.requests.filter((request) => request.method === "tools/call").map((request) => (request.params as { name: string }).name)
      expect(called.sort()).toEqual([...hostileNames].sort())
    }))

  it.live("a union that doubles the work at each level, 24 levels deep: the call ends within its 2 s deadline, decoded, sent once", () =>
    Effect.gen(function*() {
      const { connection, module, server } = fixture.hostile
      expect(module.notes.filter((note) => note.tool === "nest").map((note) => note.reason)).toEqual([
        "anyOf, oneOf: the members that may be arrays are merged into one, decoded in one pass (which member matched is not checked)"
      ])
      const loaded = yield* load(module)
      server.reset()
      // Before, the decode took 2^24 steps (30 s): nothing could interrupt it, and the call then
      // answered ok. A decode that ended past the deadline is now DeadlineExceeded; this one ends at once.
      const [elapsed, result] = yield* Effect.timed(
        loaded["nest"](connection, {}, { timeout: 2_000 }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      )
      expect(result.isError === false && result.value).toEqual(nested24)
      expect(Duration.toMillis(elapsed)).toBeLessThan(2_000)
      expect(server.toolCallArrivals()).toHaveLength(1)
    }))
})

describe("typed tools of generated schemas and schemas at the edges", () => {
  it("60 generated schemas (hostile names and keys), recursive definitions and unions in one module: it type-checks and loads", async () => {
    expect(fixture.diagnostics.get(fixture.generatedSchemas.file)).toEqual([])
    const loaded = await import(/* @vite-ignore */ fixture.generatedSchemas.file)
    expect(Object.keys(loaded).length).toBeGreaterThan(120)
  })

  it("a 70,000-value enum, 20,000 alternatives, 50,000 elements, 30,000 properties, 70 levels (each under 1 MiB): it type-checks and loads", async () => {
    for (const tool of edgeTools) expect(JSON.stringify(tool.inputSchema).length, tool.name).toBeLessThan(1_048_576)
    expect(fixture.diagnostics.get(fixture.edges.file)).toEqual([])
    const loaded = await import(/* @vite-ignore */ fixture.edges.file)
    const input = loaded["EnumInput"] as Schema.Schema<unknown>
    expect(Either.isRight(Schema.decodeUnknownEither(input)({ e: "v69999" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(input)({ e: "v70000" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(loaded["MaxItemsOutput"] as Schema.Schema<unknown>)([1]))).toBe(true)
  })
})
