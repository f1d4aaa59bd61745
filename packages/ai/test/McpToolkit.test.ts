/**
 * `McpToolkit`'s pure rules, over an in-memory tool source (the seam; the wire is proven in
 * toolkit.test.ts): any `inputSchema` a server lists reaches the model as that very object, and
 * unchanged; which names are offered; options refused before anything else.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import { describe, expect, it } from "@effect/vitest"
import { McpToolkit, type ToolSource } from "@phasebound/ai"
import type { McpSchema } from "@phasebound/client"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Stream from "effect/Stream"
import * as Subscribable from "effect/Subscribable"
import { scriptedModel } from "./support/scriptedModel.js"

/** A source whose list is fixed and which is never called. */
const fixedSource = (tools: ReadonlyArray<ToolSource.SourceTool>): ToolSource.ToolSource => ({
  toolList: Subscribable.make({ get: Effect.succeed(tools), changes: Stream.make(tools) }),
  callTool: () => Effect.die("not called")
})

const toolNamed = (name: string, inputSchema: Record<string, unknown> = { type: "object" }): ToolSource.SourceTool => ({
  name,
  tool: { name, inputSchema: inputSchema as McpSchema.Tool["inputSchema"] }
})

/** Any JSON object with `type: "object"`: keywords Effect knows, keywords it does not, anything. */
const inputSchema = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 12 }).map((extra) => ({ ...extra, type: "object" }))

const modelName = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/)
const anyName = fc.oneof(modelName, fc.string({ minLength: 1, maxLength: 80 }), fc.constantFrom("__proto__", "a.b", "a b", "", "x".repeat(65)))

describe("McpToolkit, the parameters' JSON Schema", () => {
  it.effect.prop(
    "is the server's inputSchema itself, unchanged, for any JSON object",
    [fc.array(inputSchema, { minLength: 1, maxLength: 4 })],
    ([schemas]) =>
      Effect.gen(function*() {
        const before = structuredClone(schemas)
        const tools = schemas.map((schema, i) => toolNamed(`tool_${i}`, schema))
        const model = scriptedModel(() => Effect.succeed([]))
        const toolkit = yield* McpToolkit.fromSource(fixedSource(tools))
        yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
        const seen = model.seen[0]!.tools
        expect(seen.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name))
        seen.forEach((tool, i) => {
          expect(tool.parameters).toBe(schemas[i])
          expect(tool.parameters).toStrictEqual(before[i])
        })
        // Nothing was changed in place either.
        expect(schemas).toStrictEqual(before)
        Object.values(toolkit.tools).forEach((tool, i) => expect(Tool.getJsonSchema(tool)).toBe(schemas[i]))
      }),
    { fastCheck: { numRuns: 50 } }
  )
})

describe("McpToolkit, the names offered", () => {
  it.effect.prop(
    "a name is offered once, as prefix + name, exactly when every provider accepts it and no other tool has it",
    [fc.array(anyName, { maxLength: 12 }), fc.constantFrom("", "p_", "srv-")],
    ([names, prefix]) =>
      Effect.gen(function*() {
        const toolkit = yield* McpToolkit.fromSource(fixedSource(names.map((name) => toolNamed(name))), { prefix })
        const valid = (name: string) => /^[a-zA-Z0-9_-]{1,64}$/.test(`${prefix}${name}`) && `${prefix}${name}` !== "__proto__"
        const count = (name: string) => names.filter((other) => other === name).length
        const offered = [...new Set(names.filter((name) => valid(name) && count(name) === 1))].map((name) => `${prefix}${name}`)
        expect(Object.keys(toolkit.tools).sort()).toEqual(offered.sort())
        expect(Object.getPrototypeOf(toolkit.tools)).toBe(Object.prototype)
        for (const [name, tool] of Object.entries(toolkit.tools)) expect(tool.name).toBe(name)
        expect(toolkit.excluded).toHaveLength(names.length - offered.length)
        for (const excluded of toolkit.excluded) {
          expect(excluded.reason).toBe(valid(excluded.name) ? "duplicate-name" : "invalid-name")
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("include chooses among the source's tools", () =>
    Effect.gen(function*() {
      const toolkit = yield* McpToolkit.fromSource(fixedSource(["a", "b", "c"].map((name) => toolNamed(name))), {
        include: (tool) => tool.name !== "b"
      })
      expect(Object.keys(toolkit.tools)).toEqual(["a", "c"])
    }))
})

describe("McpToolkit, options", () => {
  const refused = [
    ["options", "not an object"],
    ["prefix", { prefix: "has space" }],
    ["prefix", { prefix: "x".repeat(33) }],
    ["prefix", { prefix: 7 }],
    ["callOptions", { callOptions: "fast" }],
    ["callOptions", { callOptions: { effectIdentity: "fixed" } }],
    ["callOptions", { callOptions: { onProgress: () => {} } }],
    ["effectIdentity", { effectIdentity: "fixed" }],
    ["include", { include: true }],
    ["onDefect", { onDefect: {} }]
  ] as const

  for (const [option, options] of refused) {
    it.effect(`refuses ${JSON.stringify(options)} as InvalidToolkitOption ${option}, before reading the list`, () =>
      Effect.gen(function*() {
        let read = 0
        const source: ToolSource.ToolSource = {
          toolList: Subscribable.make({ get: Effect.sync(() => (read += 1, [])), changes: Stream.empty }),
          callTool: () => Effect.die("not called")
        }
        const exit = yield* Effect.exit(McpToolkit.fromSource(source, options as unknown as McpToolkit.Options))
        expect(exit).toStrictEqual(Exit.fail(new McpToolkit.InvalidToolkitOption({ option })))
        const snapshot = yield* Effect.exit(McpToolkit.snapshot(source, options as unknown as McpToolkit.Options))
        expect(Exit.isFailure(snapshot)).toBe(true)
        expect(read).toBe(0)
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain(`invalid toolkit option: ${option}`)
      }))
  }

  it.effect("accepts the longest prefix and every option given as a function", () =>
    Effect.gen(function*() {
      const toolkit = yield* McpToolkit.fromSource(fixedSource([toolNamed("t")]), {
        prefix: "x".repeat(32),
        callOptions: { timeout: "1 second" },
        effectIdentity: () => undefined,
        include: () => true,
        onDefect: () => Effect.void
      })
      expect(Object.keys(toolkit.tools)).toEqual([`${"x".repeat(32)}t`])
    }))
})
