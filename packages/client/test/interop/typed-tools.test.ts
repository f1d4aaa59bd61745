/**
 * Typed tools end to end (docs/DESIGN.md, "Typed tools"): the module generated from the tools a
 * live server lists (the testkit's features, and @modelcontextprotocol/server-everything, which
 * no one here wrote) type-checks under the repository's compiler options, against `effect` and
 * this client's own declarations, and its helpers call the tools: the structured content comes
 * back decoded by the generated output Schema, a tool without one answers its raw result.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { McpClient, McpCodegen } from "../../src/index.js"
import { schemaArbitrary } from "../support/codegenSchemas.js"
import { startEverythingServer } from "../support/everythingServer.js"
import { httpClients } from "../support/harness.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const generatedDir = path.join(here, "..", ".generated")
const repository = path.resolve(here, "..", "..", "..", "..")

/** Writes the module of `tools` under test/.generated (gitignored), where `effect` resolves. */
const writeModule = (name: string, tools: ReadonlyArray<McpCodegen.ToolSchemas>) => {
  const generated = McpCodegen.generate(tools, { title: name })
  if (Either.isLeft(generated)) throw new Error(generated.left.message)
  mkdirSync(generatedDir, { recursive: true })
  const file = path.join(generatedDir, `${name}.ts`)
  writeFileSync(file, generated.right.source)
  return { file, ...generated.right }
}

/** The compiler's diagnostics of `file` under tsconfig.base.json, `@phasebound/client` being this package's sources. */
const typeErrors = (file: string): ReadonlyArray<string> => {
  const config = ts.readConfigFile(path.join(repository, "tsconfig.base.json"), ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, repository)
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    baseUrl: repository,
    paths: { "@phasebound/client": ["packages/client/src/index.ts"] }
  }
  const program = ts.createProgram([file], options)
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`)
}

describe("typed tools of the testkit's features", () => {
  it.scopedLive("the module type-checks; weather decodes through its helper, log answers its raw result", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ features: true })
      const connection = yield* McpClient.connect({ url: srv.url })
      const { file, notes, tools } = writeModule("testkit-features", connection.tools)
      expect(tools.map((t) => t.name)).toEqual([...connection.tools.map((t) => t.name)].sort())
      expect(notes).toEqual([])
      expect(typeErrors(file)).toEqual([])
      const module = yield* Effect.promise(() => import(/* @vite-ignore */ file))
      const weather = yield* module.weather(connection, { city: "Paris" }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      expect(weather.isError).toBe(false)
      expect(weather.isError === false && weather.value).toEqual(weather.result.structuredContent)
      // The helper's output Schema is the listed outputSchema's: additionalProperties false refuses what it does not name.
      const output = module.WeatherOutput as Schema.Schema<unknown>
      expect(Either.isRight(Schema.decodeUnknownEither(output)({ temperature: 1, conditions: "x" }))).toBe(true)
      expect(Either.isLeft(Schema.decodeUnknownEither(output)({ temperature: 1, conditions: "x", extra: 1 }))).toBe(true)
      const log = yield* module.log(connection, { level: "info", message: "hi", count: 1 }) as Effect.Effect<{ readonly isError?: boolean }>
      expect(log.isError).not.toBe(true)
      expect(srv.toolCalls("weather")).toBe(1)
    }).pipe(Effect.provide(httpClients[0]![1])), 60_000)
})

describe("typed tools of server-everything", () => {
  it.scopedLive("the module type-checks; get-structured-content decodes through its helper", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startEverythingServer("streamableHttp")),
        (server) => Effect.promise(() => server.close())
      )
      const connection = yield* McpClient.connect({ url: server.url, policy: { discovery: { timeout: 15_000 }, call: { timeout: 20_000 } } })
      const { file, tools } = writeModule("server-everything", connection.tools)
      expect(tools.find((t) => t.name === "get-structured-content")).toEqual({
        name: "get-structured-content",
        helper: "getStructuredContent",
        input: "GetStructuredContentInput",
        output: "GetStructuredContentOutput"
      })
      expect(typeErrors(file)).toEqual([])
      const module = yield* Effect.promise(() => import(/* @vite-ignore */ file))
      const result = yield* module.getStructuredContent(connection, { location: "Chicago" }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      expect(result.isError === false && result.value).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 })
    }).pipe(Effect.provide(httpClients[0]![1])), 90_000)
})

describe("typed tools of generated schemas", () => {
  it("60 generated schemas (hostile names and keys) and recursive definitions in one module: it type-checks", () => {
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
        b: { type: "array", items: { $ref: "#/$defs/a" }, maxItems: 3 }
      },
      definitions: { list: { type: "object", properties: { head: { type: "string" }, tail: { $ref: "#/definitions/list" } }, required: ["head", "tail"] } }
    }
    const withEveryDefinition = { ...recursive, properties: { ...recursive.properties, pair: { $ref: "#/$defs/pair" }, a: { $ref: "#/$defs/a" } } }
    const generatedTools = fc.sample(schemaArbitrary, { numRuns: 60, seed: 42 }).map((schema, i) => ({
      name: `generated ${i}`,
      inputSchema: { type: "object", properties: { p: schema } },
      outputSchema: schema
    }))
    const { file } = writeModule("generated-schemas", [
      ...generatedTools,
      { name: "recursive", inputSchema: withEveryDefinition, outputSchema: withEveryDefinition }
    ])
    expect(typeErrors(file)).toEqual([])
  }, 60_000)
})
