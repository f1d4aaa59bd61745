/**
 * Typed tools (docs/DESIGN.md, "Typed tools"): the mapping of JSON Schema to Effect Schema source,
 * the names and the text derived from a server's data (never injectable), the bounds of the
 * walk, and, over generated schemas and values, agreement with Ajv: what Ajv accepts decodes,
 * and where nothing fell back, what Ajv refuses is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Either, FastCheck as fc, Schema } from "effect"
import { McpCodegen } from "../../src/index.js"
import { evaluate, syntaxErrors, topLevel } from "../support/codegen.js"
import { schemaArbitrary, valueFor } from "../support/codegenSchemas.js"

const generate = (tools: ReadonlyArray<McpCodegen.ToolSchemas>, options?: McpCodegen.Options) => {
  const generated = McpCodegen.generate(tools, options)
  if (Either.isLeft(generated)) throw new Error(generated.left.message)
  return generated.right
}

/** The module of one tool whose output is `schema`, evaluated: its output Schema and the notes. */
const outputOf = (schema: unknown, options?: McpCodegen.Options) => {
  const generated = generate([{ name: "t", inputSchema: { type: "object" }, outputSchema: schema }], options)
  expect(syntaxErrors(generated.source)).toEqual([])
  const module = evaluate(generated.source)
  return { schema: module["TOutput"] as Schema.Schema<unknown>, notes: generated.notes, source: generated.source }
}

const decodes = (schema: Schema.Schema<unknown>, value: unknown) => Either.isRight(Schema.decodeUnknownEither(schema)(value))

// ownProperties: without it Ajv reads `constructor` and the like from the prototype.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, ownProperties: true })

describe("the mapping", () => {
  it("types, type arrays, enum and const", () => {
    const { notes, schema } = outputOf({
      type: "object",
      properties: {
        s: { type: "string" },
        n: { type: ["number", "null"] },
        i: { type: "integer" },
        b: { type: "boolean" },
        e: { enum: ["a", 1, null] },
        c: { const: "fixed" }
      },
      required: ["s", "i"]
    })
    expect(notes).toEqual([])
    expect(decodes(schema, { s: "x", i: 2 ** 60, n: null, b: true, e: 1, c: "fixed" })).toBe(true)
    expect(decodes(schema, { s: "x", i: 1.5 })).toBe(false)
    expect(decodes(schema, { s: "x", i: 1, e: "b" })).toBe(false)
    expect(decodes(schema, { s: "x", i: 1, c: "other" })).toBe(false)
    expect(decodes(schema, { i: 1 })).toBe(false)
  })

  it("additionalProperties: open keeps unknown keys, false refuses them, a schema checks them (not the named ones)", () => {
    const open = outputOf({ type: "object", properties: { a: { type: "string" } } }).schema
    expect(Schema.decodeUnknownSync(open)({ a: "x", extra: 1 })).toEqual({ a: "x", extra: 1 })
    const closed = outputOf({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false }).schema
    expect(decodes(closed, { a: "x", extra: 1 })).toBe(false)
    expect(decodes(closed, { a: "x" })).toBe(true)
    const typed = outputOf({ type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "number" } }).schema
    expect(decodes(typed, { a: "x", extra: 1 })).toBe(true)
    expect(decodes(typed, { a: "x", extra: "y" })).toBe(false)
    const record = outputOf({ type: "object", additionalProperties: { type: "number" } }).schema
    expect(decodes(record, { x: 1 })).toBe(true)
    expect(decodes(record, { x: "1" })).toBe(false)
    expect(decodes(record, [])).toBe(false)
  })

  it("items, prefixItems, minItems, maxItems", () => {
    const { schema } = outputOf({ type: "array", prefixItems: [{ type: "number" }, { type: "string" }], items: false, minItems: 1 })
    expect(decodes(schema, [1])).toBe(true)
    expect(decodes(schema, [1, "a"])).toBe(true)
    expect(decodes(schema, [])).toBe(false)
    expect(decodes(schema, [1, "a", 3])).toBe(false)
    const list = outputOf({ type: "array", items: { type: "integer" }, minItems: 1, maxItems: 2 }).schema
    expect([[], [1], [1, 2], [1, 2, 3], [1.5]].map((v) => decodes(list, v))).toEqual([false, true, true, false, false])
  })

  it("string and number checks; lengths in code points", () => {
    const { notes, schema } = outputOf({
      type: "object",
      properties: {
        s: { type: "string", minLength: 2, maxLength: 3, pattern: "^[a-z😀]{2,3}$" },
        n: { type: "number", minimum: 0, exclusiveMaximum: 10, multipleOf: 2 }
      }
    })
    expect(notes).toEqual([])
    expect(decodes(schema, { s: "😀😀" })).toBe(true)
    expect(decodes(schema, { s: "😀" })).toBe(false)
    expect(decodes(schema, { s: "abcd" })).toBe(false)
    expect([0, 4, 10, 3, -2].map((n) => decodes(schema, { n }))).toEqual([true, true, false, false, false])
  })

  it("anyOf, oneOf (noted: exclusivity not checked), allOf of objects merged, else Unknown", () => {
    const union = outputOf({ anyOf: [{ type: "string" }, { type: "number" }] }).schema
    expect([decodes(union, "a"), decodes(union, 1), decodes(union, true)]).toEqual([true, true, false])
    const one = outputOf({ oneOf: [{ type: "string" }, { type: "number" }] })
    expect(one.notes.map((n) => n.reason)).toEqual(["oneOf: a union (that only one member matches is not checked)"])
    const merged = outputOf({
      $defs: { base: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
      allOf: [{ $ref: "#/$defs/base" }, { properties: { n: { type: "number" } }, required: ["n"] }]
    })
    expect(merged.notes).toEqual([])
    expect(decodes(merged.schema, { id: "x", n: 1 })).toBe(true)
    expect(decodes(merged.schema, { id: "x" })).toBe(false)
    const other = outputOf({ allOf: [{ type: "string" }, { minLength: 2 }] })
    expect(other.notes.map((n) => n.kind)).toEqual(["fallback"])
    expect(other.source).toContain("Schema.Unknown /* not mapped: allOf: only objects are merged */")
  })

  it("$ref to $defs and definitions; recursion through Schema.suspend with its type written out", () => {
    const { notes, schema, source } = outputOf({
      type: "object",
      properties: { root: { $ref: "#/$defs/node" }, other: { $ref: "#/definitions/leaf" } },
      $defs: { node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["children"] } },
      definitions: { leaf: { type: "string" } }
    })
    expect(notes).toEqual([])
    expect(source).toContain("export type TOutputNode = {")
    expect(source).toContain("Schema.suspend((): Schema.Schema<TOutputNode> => TOutputNode)")
    expect(decodes(schema, { root: { children: [{ children: [] }] }, other: "x" })).toBe(true)
    expect(decodes(schema, { root: { children: [{ children: [1] }] } })).toBe(false)
  })

  it("a cycle of references through no object or array is Unknown (it would never end), and terminates", () => {
    const { notes, schema } = outputOf({ $ref: "#/$defs/a", $defs: { a: { anyOf: [{ $ref: "#/$defs/b" }, { type: "string" }] }, b: { $ref: "#/$defs/a" } } })
    expect(notes.filter((n) => n.reason === "$ref: a cycle through no object or array").length).toBeGreaterThan(0)
    expect(decodes(schema, 5)).toBe(true)
  })

  it("what is not mapped is Unknown with its reason, noted", () => {
    for (const keyword of ["not", "if", "dependentSchemas", "patternProperties", "unevaluatedProperties"]) {
      const { notes, source } = outputOf({ type: "object", properties: { a: { type: "string", [keyword]: {} } } })
      expect(notes).toEqual([{ tool: "t", side: "output", kind: "fallback", path: "/properties/a", reason: `the keyword ${keyword}` }])
      expect(source).toContain(`"a": Schema.optional(Schema.Unknown /* not mapped: the keyword ${keyword} */)`)
    }
    const remote = outputOf({ $ref: "https://example.com/schema.json" })
    expect(remote.notes[0]?.reason).toContain("only #/$defs/<name> and #/definitions/<name>")
    const format = outputOf({ type: "string", format: "email" })
    expect(format.notes).toEqual([{ tool: "t", side: "output", kind: "unchecked", path: "/", reason: "format: an annotation" }])
  })

  it("descriptions become JSDoc, defaults @default", () => {
    const { source } = outputOf({ type: "object", properties: { a: { type: "integer", description: "how many", default: 3 } } })
    expect(source).toContain("  /**\n   * how many\n   * @default 3\n   */\n  \"a\": Schema.optional(")
  })

  it("the helpers: callToolDecoded with the output Schema, callTool without one; args optional when nothing is required", () => {
    const { source, tools } = generate([
      { name: "with-output", inputSchema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] }, outputSchema: { type: "object" } },
      { name: "plain", inputSchema: { type: "object" } }
    ])
    expect(tools).toEqual([
      { name: "plain", helper: "plain", input: "PlainInput", output: undefined },
      { name: "with-output", helper: "withOutput", input: "WithOutputInput", output: "WithOutputOutput" }
    ])
    expect(source).toContain("args: WithOutputInput,")
    expect(source).toContain(`connection.callToolDecoded(WithOutputOutput, "with-output", args, options)`)
    expect(source).toContain("args?: PlainInput,")
    expect(source).toContain(`connection.callTool("plain", args, options)`)
  })

  it("several servers in one module: each server's identifiers begin with its name, the same names kept apart", () => {
    const tools = [{ name: "search", inputSchema: { type: "object" }, outputSchema: { type: "object" } }]
    const generated = McpCodegen.generateServers([{ name: "web-search", tools }, { name: "github", tools }, { name: "github!", tools }])
    if (Either.isLeft(generated)) throw new Error(generated.left.message)
    expect(generated.right.tools.map((t) => [t.helper, t.input, t.output])).toEqual([
      ["githubSearch", "GithubSearchInput", "GithubSearchOutput"],
      ["githubSearch_2", "GithubSearchInput_2", "GithubSearchOutput_2"],
      ["webSearchSearch", "WebSearchSearchInput", "WebSearchSearchOutput"]
    ])
    expect(syntaxErrors(generated.right.source)).toEqual([])
  })

  it("invalid options are refused, typed", () => {
    for (
      const [options, option] of [[{ maxDepth: 0 }, "maxDepth"], [{ maxNodes: Number.NaN }, "maxNodes"], [{ importFrom: "x\"; evil" }, "importFrom"]] as const
    ) {
      const result = McpCodegen.generate([], options)
      expect(Either.isLeft(result) && result.left.option).toBe(option)
    }
  })
})

describe("hostile schemas", () => {
  it("names: sanitized, unique, deterministic whatever the order", () => {
    const tools = ["get weather", "get-weather", "get_weather", "delete", "123", "", "constructor", "Schema", "ñ"].map((name) => ({
      name,
      inputSchema: { type: "object" }
    }))
    const a = generate(tools)
    const b = generate([...tools].reverse())
    expect(a.source).toBe(b.source)
    const helpers = a.tools.map((t) => t.helper)
    expect(new Set(helpers).size).toBe(helpers.length)
    expect(helpers).toEqual(["tool", "_123", "schema", "constructor_", "delete_", "getWeather", "getWeather_2", "getWeather_3", "tool_2"])
    expect(syntaxErrors(a.source)).toEqual([])
  })

  it("a description cannot close its comment or start a line of code; a name cannot end its literal", () => {
    const evil = "*/ globalThis.pwned = 1 /*\u2028globalThis.pwned = 2\r\nglobalThis.pwned = 3 *\u0000/ `${x}` \\"
    const { source } = generate([{
      name: `"); globalThis.pwned = 4; ("`,
      description: evil,
      inputSchema: { type: "object", properties: { [evil]: { type: "string", description: evil, pattern: evil, enum: [evil] } } },
      outputSchema: { $defs: { [evil]: { type: "string", description: evil } }, $ref: `#/$defs/${encodeURIComponent(evil)}` }
    }])
    expect(syntaxErrors(source)).toEqual([])
    expect([...topLevel(source).kinds].sort()).toEqual(["const", "import", "type"])
    const globals = globalThis as { pwned?: number }
    evaluate(source)
    expect(globals.pwned).toBeUndefined()
  })

  it("a literal under a key Object.prototype also has decodes inside a union (Effect's union index would throw)", () => {
    for (const key of ["toString", "constructor", "valueOf", "hasOwnProperty", "__defineGetter__"]) {
      const member = (value: unknown) => ({ type: "object", properties: { [key]: { const: value } }, required: [key] })
      const union = outputOf({ anyOf: [member(0), { type: "object", properties: { inner: member("x") }, required: ["inner"] }] }).schema
      expect([{ [key]: 0 }, { inner: { [key]: "x" } }].map((value) => decodes(union, value)), key).toEqual([true, true])
      expect([{ [key]: 1 }, { inner: {} }, { inner: { [key]: "y" } }, {}].map((value) => decodes(union, value)), key)
        .toEqual([false, false, false, false])
      // An optional key is a union with `undefined`.
      const optional = outputOf({ type: "object", properties: { inner: member(null) } }).schema
      expect([{}, { inner: { [key]: null } }, { inner: {} }].map((value) => decodes(optional, value)), key).toEqual([true, true, false])
    }
  })

  it("a pattern that could backtrack is not run at decoding (noted), one that cannot is", () => {
    const slow = outputOf({ type: "string", pattern: "^(a+)+$" })
    expect(slow.notes.map((n) => n.reason)).toEqual(["pattern: not one that JavaScript's engine runs in linear time"])
    expect(slow.source).not.toContain("RegExp")
    expect(decodes(slow.schema, "a".repeat(40) + "!")).toBe(true)
    const fast = outputOf({ type: "string", pattern: "^[a-z]{2,4}$" })
    expect(fast.source).toContain(`Schema.pattern(new RegExp("^[a-z]{2,4}$", "u"))`)
    expect([decodes(fast.schema, "abc"), decodes(fast.schema, "a")]).toEqual([true, false])
  })

  it("a schema nested 100,000 deep: cut at maxDepth, no stack overflow", () => {
    let deep: unknown = { type: "string" }
    for (let i = 0; i < 100_000; i++) deep = { type: "array", items: deep }
    const { notes, schema } = outputOf(deep)
    expect(notes).toEqual([expect.objectContaining({ kind: "fallback", reason: "nested deeper than maxDepth" })])
    let value: unknown = 5
    for (let i = 0; i < 70; i++) value = [value]
    // Past the cut anything goes; above it, each level is still an array.
    expect(decodes(schema, value)).toBe(true)
    expect(decodes(schema, [[["x"]]])).toBe(false)
  })

  it("a chain of 20,000 definitions: mapped from a work list, in order, without recursion", () => {
    const $defs: Record<string, unknown> = {}
    for (let i = 0; i < 20_000; i++) $defs[`d${i}`] = i === 19_999 ? { type: "string" } : { type: "array", items: { $ref: `#/$defs/d${i + 1}` } }
    const generated = generate([{ name: "t", inputSchema: { type: "object" }, outputSchema: { $ref: "#/$defs/d0", $defs } }])
    expect(generated.notes).toEqual([])
    expect(generated.source.indexOf("export const TOutputD19999 =")).toBeLessThan(generated.source.indexOf("export const TOutputD0 ="))
  })

  it("past the budget of nodes, Unknown", () => {
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < 100; i++) properties[`p${i}`] = { type: "string" }
    const { notes } = outputOf({ type: "object", properties }, { maxNodes: 50 })
    expect(notes.filter((n) => n.reason === "past the generation's budget of nodes").length).toBeGreaterThan(40)
  })
})

describe("generated schemas against Ajv", () => {
  it.prop(
    "the source parses, only declarations; Ajv's valid values decode; where nothing is noted, its invalid ones are refused",
    [schemaArbitrary.chain((schema) => fc.tuple(fc.constant(schema), fc.array(valueFor(schema), { minLength: 1, maxLength: 8 })))],
    ([[schema, values]]) => {
      const generated = generate([{ name: "t", inputSchema: { type: "object", properties: { p: schema } }, outputSchema: schema }])
      expect(syntaxErrors(generated.source)).toEqual([])
      expect([...topLevel(generated.source).kinds].filter((kind) => !["const", "import", "type"].includes(kind))).toEqual([])
      const output = evaluate(generated.source)["TOutput"] as Schema.Schema<unknown>
      const validate = ajv.compile(typeof schema === "boolean" ? schema : { ...schema })
      const exact = generated.notes.every((note) => note.side !== "output")
      for (const value of values) {
        const valid = validate(value) === true
        const decoded = decodes(output, value)
        if (valid) expect(decoded, JSON.stringify(value)).toBe(true)
        // Ajv's multipleOf reads a quotient of 1e21 or more through parseInt ("1e+21"): it refuses
        // 2e21 as a multiple of 1, which JSON Schema (and the generated Schema) accepts.
        else if (exact && !/\d[eE]\+/.test(JSON.stringify(value))) expect(decoded, JSON.stringify(value)).toBe(false)
      }
    },
    { fastCheck: { numRuns: 120 } }
  )
})
