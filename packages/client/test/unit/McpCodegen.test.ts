/**
 * Typed tools (docs/DESIGN.md, "Typed tools"): the mapping of JSON Schema to Effect Schema source,
 * the names and the text derived from a server's data (never injectable), the bounds of the
 * walk, and, over generated schemas and values, agreement with Ajv: what Ajv accepts decodes,
 * and where nothing fell back, what Ajv refuses is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { McpCodegen } from "../../src/index.js"
import { compileOutputSchema, validators as loadValidators } from "../../src/internal/outputSchema.js"
import { camelCase, shortHash } from "../../src/internal/codegen/text.js"
import { evaluate, syntaxErrors, topLevel } from "../support/codegen.js"
import { schemaArbitrary, unionSchemaArbitrary, unionValueArbitrary, valueFor } from "../support/codegenSchemas.js"

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

const validators = await Effect.runPromise(loadValidators)

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
    // `github!` is `Github` too: its names take a suffix derived from its own name and the tool's.
    const suffix = shortHash("github!\u0000search")
    expect(generated.right.tools.map((t) => [t.helper, t.input, t.output])).toEqual([
      ["githubSearch", "GithubSearchInput", "GithubSearchOutput"],
      [`githubSearch_${suffix}`, `GithubSearchInput_${suffix}`, `GithubSearchOutput_${suffix}`],
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

const name = fc.string({ maxLength: 4, unit: fc.constantFrom("a", "b", "A", "-", "_", " ", "搜", "索") })

describe("hostile schemas", () => {
  it("names: sanitized, unique, deterministic whatever the order; without ASCII letters, spelled by code point", () => {
    const tools = ["get weather", "get-weather", "get_weather", "delete", "123", "", "constructor", "Schema", "ñ", "搜索", "then"].map((name) => ({
      name,
      inputSchema: { type: "object" }
    }))
    const a = generate(tools)
    const b = generate([...tools].reverse())
    expect(a.source).toBe(b.source)
    const helpers = a.tools.map((t) => t.helper)
    expect(new Set(helpers).size).toBe(helpers.length)
    const suffix = (name: string) => shortHash(`\u0000${name}`)
    expect(helpers).toEqual([
      "tool",
      "_123",
      "schema",
      "constructor_",
      "delete_",
      "getWeather",
      `getWeather_${suffix("get-weather")}`,
      `getWeather_${suffix("get_weather")}`,
      // An export named `then` would make the module's namespace a thenable.
      "then_",
      "uf1",
      "u641cU7d22"
    ])
    expect(a.tools.find((t) => t.name === "get-weather")?.input).toBe(`GetWeatherInput_${suffix("get-weather")}`)
    expect(syntaxErrors(a.source)).toEqual([])
  })

  it.prop(
    "names: a tool added renames no other, unless its name takes the same identifier and comes first",
    // Letters, separators and CJK: names that often mangle alike, never to a digit or a keyword.
    [fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), name],
    ([names, added]) => {
      fc.pre(!names.includes(added))
      const toolsOf = (list: ReadonlyArray<string>) => list.map((name) => ({ name, inputSchema: { type: "object" }, outputSchema: { type: "object" } }))
      const before = generate(toolsOf(names)).tools
      const after = new Map(generate(toolsOf([...names, added])).tools.map((t) => [t.name, t]))
      const addedHelper = camelCase(added, "tool")
      for (const tool of before) {
        const shadowed = camelCase(tool.name, "tool") === addedHelper && added < tool.name
        if (!shadowed) expect(after.get(tool.name), tool.name).toEqual(tool)
      }
    }
  )

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
    expect(fast.source).toContain(`Schema.pattern(patternOf("^[a-z]{2,4}$"))`)
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

describe("a module loads whatever the schema", () => {
  it("maxItems: 0 is the empty array (Effect's maxItems refuses 0 when the module loads)", () => {
    const { notes, schema, source } = outputOf({
      type: "object",
      properties: {
        a: { type: "array", items: { type: "string" }, maxItems: 0 },
        t: { type: "array", prefixItems: [{ type: "string" }], maxItems: 0 },
        never: { type: "array", minItems: 1, maxItems: 0 }
      }
    })
    expect(notes).toEqual([])
    expect(source).not.toContain("maxItems(0)")
    expect([{ a: [] }, { a: ["x"] }, { t: [] }, { t: ["x"] }, { never: [] }].map((value) => decodes(schema, value)))
      .toEqual([true, false, true, false, false])
  })

  it("keywords at their edges (0, fractions, negatives, exclusive booleans): the module loads, and agrees with Ajv", () => {
    const edges = [
      { type: "string", minLength: 0, maxLength: 0 },
      { type: "array", minItems: 0, maxItems: 1 },
      { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], minItems: 3, maxItems: 1 },
      { type: "number", multipleOf: 1e-3, minimum: -0, exclusiveMaximum: 0.5 },
      { type: "integer", exclusiveMinimum: 1e300 },
      { type: "string", pattern: "^$" },
      { enum: [0, -0, 1e21, null, false, ""] }
    ]
    for (const [i, edge] of edges.entries()) {
      const { schema } = outputOf(edge)
      const validate = ajv.compile(edge)
      for (const value of ["", "a", 0, 0.25, 0.5, 1e21, 1e301, [], [1], [1, 2, 3], null, false]) {
        expect(decodes(schema, value), `${i} ${JSON.stringify(value)}`).toBe(validate(value))
      }
    }
  })

  it("an enum of 70,000 values (409 KB): one lookup in a Set, typed by its JSON types; a few values stay Schema.Literal", () => {
    const values = Array.from({ length: 70_000 }, (_, i) => `v${i}`)
    const huge = outputOf({ enum: [...values, 7] })
    expect(huge.source).toContain(`oneOf<ReadonlyArray<string | number>>(["v0", "v1", `)
    expect(["v0", "v69999", 7].map((value) => decodes(huge.schema, value))).toEqual([true, true, true])
    expect(["v70000", 8, null].map((value) => decodes(huge.schema, value))).toEqual([false, false, false])
    const typed = outputOf({ enum: values.slice(0, 1_000) })
    expect(typed.source).toContain(`export const TOutput = oneOf(["v0", `)
    expect(typed.source).toContain(`export type TOutput = typeof TOutput.Type`)
    expect(outputOf({ enum: ["a", "b"] }).source).toContain(`Schema.Literal("a", "b")`)
  })

  it("70,000 members of anyOf, of prefixItems, 50,000 properties: each module parses and loads, its calls bounded", () => {
    const many = Array.from({ length: 70_000 }, (_, i) => i)
    const strings = outputOf({ anyOf: many.map((i) => ({ type: "string", pattern: `^v${i}$` })) })
    expect(strings.notes.map((n) => n.reason)).toEqual([
      "anyOf, oneOf: more than 16 tries for one value; each JSON type is checked once (its type, or its literal values), the members' other keywords are not checked"
    ])
    expect(strings.source).toContain("export const TOutput = /* anyOf of more than 16 tries for one value: each JSON type checked once */ Schema.String")
    expect(decodes(strings.schema, "anything")).toBe(true)
    const objects = outputOf({ anyOf: many.map((i) => ({ type: "object", properties: { k: { const: `v${i}` } }, required: ["k"] })) }, {
      maxNodes: 1_000_000
    })
    expect([{ k: "v1" }, { k: "w" }, {}].map((value) => decodes(objects.schema, value))).toEqual([true, false, false])
    const tuple = outputOf({ type: "array", prefixItems: many.map(() => ({ type: "number" })), items: false })
    expect(tuple.notes.map((n) => n.reason)).toEqual(["prefixItems past the 256th: not checked"])
    expect([[1, 2], ["x"], [...many.slice(0, 300).map(() => 1), "x"]].map((value) => decodes(tuple.schema, value))).toEqual([true, false, true])
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < 50_000; i++) properties[`p${i}`] = { type: "string" }
    const wide = outputOf({ type: "object", properties, required: ["p0"], additionalProperties: false }, { maxNodes: 1_000_000 })
    expect(wide.notes.map((n) => n.reason)).toEqual(["properties past the 1000th: not checked (the object is open)"])
    expect([{ p0: "x", p2000: 1 }, { p0: 1 }, {}].map((value) => decodes(wide.schema, value))).toEqual([true, false, false])
  })
})

/**
 * The reads a decode makes of the value (every property read, key listing and key test, on every
 * object and array of it): the work of the decode, counted without a clock.
 */
const countedReads = (schema: Schema.Schema<unknown>, value: unknown) => {
  let reads = 0
  const proxies = new WeakMap<object, object>()
  const wrap = (v: unknown): unknown => {
    if (typeof v !== "object" || v === null) return v
    let proxy = proxies.get(v)
    if (proxy === undefined) {
      proxy = new Proxy(v, {
        get: (target, key, receiver) => {
          reads++
          return wrap(Reflect.get(target, key, receiver))
        },
        has: (target, key) => {
          reads++
          return Reflect.has(target, key)
        },
        ownKeys: (target) => {
          reads++
          return Reflect.ownKeys(target)
        },
        getOwnPropertyDescriptor: (target, key) => {
          reads++
          return Reflect.getOwnPropertyDescriptor(target, key)
        }
      })
      proxies.set(v, proxy)
    }
    return proxy
  }
  const decoded = decodes(schema, wrap(value))
  return { reads, decoded }
}

/** The nodes of a JSON value (every value, key and element counted once). */
const sizeOf = (value: unknown): number => {
  let size = 0
  const stack = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    size++
    if (typeof next === "object" && next !== null) {
      // Each key (an array's index too) is one node; its value is counted when popped.
      for (const item of Object.values(next)) {
        size++
        stack.push(item)
      }
    }
  }
  return size
}

describe("linear decoding", () => {
  /** Each level of the value could be tried by both members: 2^depth without the rewrite. */
  const doubling = {
    $ref: "#/$defs/d",
    $defs: {
      d: {
        anyOf: [
          { type: "array", items: { $ref: "#/$defs/d" }, minItems: 2 },
          { type: "array", items: { $ref: "#/$defs/d" } }
        ]
      }
    }
  }
  const nested = (depth: number) => {
    let value: unknown = []
    for (let i = 0; i < depth; i++) value = [value]
    return value
  }

  it("two members over the same arrays, minItems after their children: merged, a value nested 24 deep read 49 times", () => {
    const { notes, schema, source } = outputOf(doubling)
    expect(notes).toEqual([{
      tool: "t",
      side: "output",
      kind: "unchecked",
      path: "/$defs/d/anyOf",
      reason: "anyOf, oneOf: the members that may be arrays are merged into one, decoded in one pass (which member matched is not checked)"
    }])
    expect(source).toContain("export type TOutputD = ReadonlyArray<TOutputD>")
    expect(source).toContain("= /* anyOf members merged into one array, decoded in one pass */ Schema.Array(")
    // Before: 2^24 reads (30 s); the merged member reads each level's length and element once.
    expect(countedReads(schema, nested(24))).toEqual({ reads: 2 * 24 + 1, decoded: true })
    expect(countedReads(schema, nested(100))).toEqual({ reads: 2 * 100 + 1, decoded: true })
    expect(decodes(schema, [[], 1])).toBe(false)
  })

  it("objects told apart by a literal key go to one member, exactly: nothing noted", () => {
    const { notes, schema, source } = outputOf({
      $ref: "#/$defs/e",
      $defs: {
        e: {
          oneOf: [
            { type: "object", properties: { kind: { const: "add" }, args: { type: "array", items: { $ref: "#/$defs/e" } } }, required: ["kind", "args"] },
            { type: "object", properties: { kind: { const: "neg" }, arg: { $ref: "#/$defs/e" } }, required: ["kind", "arg"] },
            { type: "object", properties: { kind: { enum: ["num", "int"] }, value: { type: "number" } }, required: ["kind"], additionalProperties: false },
            { type: "string" }
          ]
        }
      }
    })
    expect(notes.map((n) => n.reason)).toEqual(["oneOf: a union (that only one member matches is not checked)"])
    expect(source).toContain(`object: { key: "kind", cases: [["add", 0], ["neg", 1], ["num", 2], ["int", 2]] }`)
    let deep: unknown = { kind: "num", value: 1 }
    for (let i = 0; i < 60; i++) deep = i % 2 === 0 ? { kind: "neg", arg: deep } : { kind: "add", args: [deep, "x"] }
    const { decoded, reads } = countedReads(schema, deep)
    expect(decoded).toBe(true)
    expect(reads).toBeLessThan(40 * sizeOf(deep))
    expect([{ kind: "num", value: 1, extra: 1 }, { kind: "neg" }, { kind: "other" }, { value: 1 }].map((value) => decodes(schema, value)))
      .toEqual([false, false, false, false])
  })

  it("objects not told apart, below which nothing multiplies: tried in turn, exact", () => {
    const { notes, schema } = outputOf({
      anyOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false },
        { type: "object", properties: { b: { type: "array", items: { type: "number" } } }, required: ["b"] }
      ]
    })
    expect(notes).toEqual([])
    expect([{ a: "x" }, { b: [1] }, { a: 1 }, { a: "x", c: 1 }, { b: ["x"] }].map((value) => decodes(schema, value)))
      .toEqual([true, true, false, false, false])
  })

  it("an object of 20,000 keys against 1,000 named properties: each key found in a Set, not compared with every name", () => {
    const properties: Record<string, unknown> = {}
    for (let i = 0; i < 1_000; i++) properties[`p${i}`] = { type: "number" }
    const { schema, source } = outputOf({ type: "object", properties })
    expect(source).not.toContain(`onExcessProperty: "preserve"`)
    const value: Record<string, number> = {}
    for (let i = 0; i < 20_000; i++) value[`k${i}`] = i
    // Effect's own check of excess keys compared each key with every name: 20,000,000 steps, ~10 s.
    const started = performance.now()
    expect(Schema.decodeUnknownSync(schema)(value)).toEqual(value)
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it.prop(
    "overlapping recursive unions: a decode reads each node of the value a bounded number of times; Ajv's valid values decode",
    [unionSchemaArbitrary, fc.array(unionValueArbitrary, { minLength: 1, maxLength: 6 })],
    ([schema, values]) => {
      const generated = generate([{ name: "t", inputSchema: { type: "object" }, outputSchema: schema }])
      const output = evaluate(generated.source)["TOutput"] as Schema.Schema<unknown>
      // The connection's own check (Ajv, bounded: on such unions Ajv's own work is exponential).
      const check = compileOutputSchema(validators, schema)
      for (const value of values) {
        const { decoded, reads } = countedReads(output, value)
        expect(reads, JSON.stringify(value)).toBeLessThanOrEqual(64 * sizeOf(value))
        const outcome = check === "uncompilable" ? "uncompilable" : check(value, { deadlineAt: Infinity, now: () => 0, resultBytes: 1_000 })
        if (outcome === "valid") expect(decoded, JSON.stringify(value)).toBe(true)
      }
    },
    { fastCheck: { numRuns: 150 } }
  )
})
