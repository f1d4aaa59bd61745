/**
 * The checks of `structuredContent` against an `outputSchema` (`internal/outputSchema.ts`):
 * dialects, schemas that cannot be compiled, and checks that cannot finish (fail closed).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { compileOutputSchema as compileWith, type OutputCheck, validators } from "../src/internal/outputSchema.js"

const ajv = await Effect.runPromise(validators)
const compileOutputSchema = (schema: Record<string, unknown>) => compileWith(ajv, schema)

const compiled = (schema: Record<string, unknown>): OutputCheck => {
  const check = compileOutputSchema(schema)
  if (check === "uncompilable") throw new Error("expected a compiled schema")
  return check
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

  it("treats format as an annotation, and counts own properties only for required", () => {
    const check = compiled({ type: "object", properties: { at: { type: "string", format: "date-time" } }, required: ["constructor"] })
    expect(check({ at: "not a date", constructor: 1 })).toBe(true)
    expect(check({ at: "2025-01-01T00:00:00Z" })).toBe(false)
  })

  it("keeps nothing in the validator's cache: the same schema compiles again", () => {
    const schema = { $id: "https://example.com/weather", ...weather }
    expect(compileOutputSchema(schema)).not.toBe("uncompilable")
    // A schema with the same $id still cached would make Ajv refuse this one.
    expect(compileOutputSchema({ ...schema })).not.toBe("uncompilable")
  })
})
