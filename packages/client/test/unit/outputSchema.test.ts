/**
 * The checks of `structuredContent` against an `outputSchema` (`internal/outputSchema.ts`):
 * dialects, schemas that cannot be compiled, and checks that cannot finish (fail closed). The
 * bounds of a check are in output-check-bounds.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { compileOutputSchema as compileWith, type OutputCheck, validators } from "../../src/internal/outputSchema.js"

const ajv = await Effect.runPromise(validators)
const compileOutputSchema = (schema: Record<string, unknown>) => compileWith(ajv, schema)

/** A check under no deadline and the default ceiling: whether the value matches. */
const compiled = (schema: Record<string, unknown> | boolean): (value: unknown) => boolean => {
  const check: OutputCheck | "uncompilable" = compileWith(ajv, schema)
  if (check === "uncompilable") throw new Error("expected a compiled schema")
  return (value) => {
    const outcome = check(value, { deadlineAt: Infinity, now: () => 0, resultBytes: JSON.stringify(value)?.length ?? 0 })
    if (outcome !== "valid" && outcome !== "invalid") throw new Error(`the check was stopped: ${outcome}`)
    return outcome === "valid"
  }
}

const weather = {
  type: "object",
  properties: { temperature: { type: "number" }, conditions: { type: "string" } },
  required: ["temperature", "conditions"],
  additionalProperties: false
}

describe("compileOutputSchema", () => {
  it("checks a result against a 2020-12 schema (the default dialect)", () => {
    const check = compiled(weather)
    expect(check({ temperature: 21.5, conditions: "sunny" })).toBe(true)
    expect(check({ temperature: "hot", conditions: "sunny" })).toBe(false)
    expect(check({ temperature: 1, conditions: "x", wind: 3 })).toBe(false)
    expect(check({ temperature: 1 })).toBe(false)
  })

  it("follows the dialect a schema declares: 2020-12 prefixItems, draft-07 items arrays", () => {
    const pair2020 = compiled({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false } }
    })
    expect(pair2020({ pair: ["a", 1] })).toBe(true)
    expect(pair2020({ pair: ["a", 1, 2] })).toBe(false)
    const pair07 = compiled({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false } }
    })
    expect(pair07({ pair: ["a", 1] })).toBe(true)
    expect(pair07({ pair: ["a", "b"] })).toBe(false)
  })

  it("follows local $ref and $defs", () => {
    const check = compiled({
      type: "object",
      $defs: { city: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      properties: { cities: { type: "array", items: { $ref: "#/$defs/city" } } }
    })
    expect(check({ cities: [{ name: "Lisbon" }] })).toBe(true)
    expect(check({ cities: [{ nome: "Lisboa" }] })).toBe(false)
  })

  it("cannot compile a schema of an unknown dialect, or one too deep to walk", () => {
    expect(compileOutputSchema({ $schema: "https://example.com/my-dialect", type: "object" })).toBe("uncompilable")
    expect(compileOutputSchema({ $schema: 7, type: "object" })).toBe("uncompilable")
    let deep: Record<string, unknown> = { type: "object" }
    for (let i = 0; i < 20_000; i++) deep = { type: "object", properties: { a: deep } }
    expect(compileOutputSchema(deep)).toBe("uncompilable")
  })

  it("cannot compile a $ref to another document (nothing is fetched), an invalid schema, a $ref cycle", () => {
    expect(compileOutputSchema({ type: "object", properties: { a: { $ref: "https://example.com/schemas/a.json" } } }))
      .toBe("uncompilable")
    expect(compileOutputSchema({ type: 12 })).toBe("uncompilable")
    expect(compileOutputSchema({ $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }))
      .toBe("uncompilable")
  })

  it("cannot compile an $async schema: its check would answer with a promise, rejected on a mismatch", () => {
    expect(compileOutputSchema({ $async: true, type: "number" })).toBe("uncompilable")
    expect(compileOutputSchema({ $async: false, type: "number" })).not.toBe("uncompilable")
  })

  it("treats format as an annotation, and counts own properties only for required", () => {
    const check = compiled({ type: "object", properties: { at: { type: "string", format: "date-time" } }, required: ["constructor"] })
    expect(check({ at: "not a date", constructor: 1 })).toBe(true)
    expect(check({ at: "2025-01-01T00:00:00Z" })).toBe(false)
  })

  it("checks any JSON value, against boolean schemas too", () => {
    const anything = compiled(true)
    for (const value of [1, "text", null, [1, 2], { a: 1 }, false]) expect(anything(value)).toBe(true)
    const nothing = compiled(false)
    for (const value of [1, "text", null, [1, 2], { a: 1 }, false]) expect(nothing(value)).toBe(false)
    const text = compiled({ type: "string", maxLength: 3 })
    expect(text("abc")).toBe(true)
    expect(text("😀😀😀")).toBe(true)
    expect(text("abcd")).toBe(false)
    expect(text(12)).toBe(false)
    const list = compiled({ type: "array", items: { type: "number" }, minItems: 1 })
    expect(list([1, 2])).toBe(true)
    expect(list([])).toBe(false)
    expect(list(null)).toBe(false)
  })

  it("checks const, enum and uniqueItems with JSON equality", () => {
    const unique = compiled({ type: "array", uniqueItems: true })
    expect(unique([1, "1", [1], { a: 1 }, null, true])).toBe(true)
    expect(unique([{ a: 1, b: [2, 3] }, { b: [2, 3], a: 1 }])).toBe(false)
    expect(unique([[1, 2], [2, 1]])).toBe(true)
    expect(unique([0, -0])).toBe(false)
    expect(unique(["a", "b", "a"])).toBe(false)
    expect(compiled({ uniqueItems: false })([1, 1])).toBe(true)
    const chosen = compiled({ enum: [{ k: 1, v: [1, 2] }, "x", 3] })
    expect(chosen({ v: [1, 2], k: 1 })).toBe(true)
    expect(chosen({ v: [2, 1], k: 1 })).toBe(false)
    expect(chosen({ k: 1, v: [1, 2], w: 0 })).toBe(false)
    expect(chosen(3)).toBe(true)
    const many = compiled({ enum: Array.from({ length: 40 }, (_, i) => ({ n: i })) })
    expect(many({ n: 39 })).toBe(true)
    expect(many({ n: 40 })).toBe(false)
    const fixed = compiled({ const: { valueOf: 1, constructor: "x" } })
    expect(fixed({ constructor: "x", valueOf: 1 })).toBe(true)
    expect(fixed({ constructor: "y", valueOf: 1 })).toBe(false)
  })

  it("counts properties and evaluated properties as before (metered Object.keys and Object.assign)", () => {
    const counted = compiled({ type: "object", minProperties: 2, maxProperties: 3 })
    expect(counted({ a: 1 })).toBe(false)
    expect(counted({ a: 1, b: 2 })).toBe(true)
    expect(counted({ a: 1, b: 2, c: 3, d: 4 })).toBe(false)
    const closed = compiled({
      type: "object",
      anyOf: [{ properties: { a: { type: "number" } } }, { patternProperties: { "^x-": { type: "string" } } }],
      unevaluatedProperties: false
    })
    expect(closed({ a: 1 })).toBe(true)
    expect(closed({ "x-note": "n" })).toBe(true)
    expect(closed({ a: 1, "x-note": "n" })).toBe(true)
    expect(closed({ a: 1, b: 2 })).toBe(false)
  })

  it("leaves property names alone in the generated code: names that look like code still check", () => {
    const names = ["for(;;){", "if(x){", "function f(){", "\"quoted\"", "*/ /*", "scope.func[0]", "if", "for", "'", "\\"]
    const check = compiled({
      type: "object",
      properties: Object.fromEntries(names.map((name) => [name, { type: "number" }])),
      required: names,
      additionalProperties: false
    })
    const good = Object.fromEntries(names.map((name, i) => [name, i]))
    expect(check(good)).toBe(true)
    expect(check({ ...good, "if(x){": "not a number" })).toBe(false)
    expect(check({ ...good, extra: 1 })).toBe(false)
    const { for: _, ...missing } = good
    expect(check(missing)).toBe(false)
  })

  it("keeps nothing in the validator's cache: the same schema compiles again", () => {
    const schema = { $id: "https://example.com/weather", ...weather }
    expect(compileOutputSchema(schema)).not.toBe("uncompilable")
    // A schema with the same $id still cached would make Ajv refuse this one.
    expect(compileOutputSchema({ ...schema })).not.toBe("uncompilable")
  })
})
