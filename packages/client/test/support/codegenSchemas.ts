/**
 * Generated JSON Schemas of known semantics (every keyword they use is mapped by McpCodegen,
 * unless a note says otherwise), with hostile names and descriptions, and values shaped like them.
 */
import { FastCheck as fc } from "effect"

// Schemas of known semantics (every keyword here is mapped, unless a note says otherwise), with
// hostile names and descriptions.
const hostileText = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom("*/", "/*", "\u2028", "\r\n", "`${a}`", "\"", "'", "\\", "constructor", "toString", "__proto__", "", "a-b", "0")
)

const leaf: fc.Arbitrary<Record<string, unknown> | boolean> = fc.oneof(
  // Lengths and counts draw 0 too: `maxItems: 0` once gave a module that threw on import.
  fc.record({ type: fc.constant("string"), minLength: fc.nat(3), maxLength: fc.nat(6) }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("string"), pattern: fc.constantFrom("^[a-c]{1,3}$", "^x\\d*$", "^(a|b)+$") }),
  fc.record({
    type: fc.constantFrom("integer", "number"),
    minimum: fc.integer({ min: -5, max: 5 }),
    exclusiveMaximum: fc.integer({ min: 0, max: 9 }),
    multipleOf: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constantFrom(0.5, 0.1, 1e-3))
  }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constantFrom("boolean", "null", ["string", "null"], ["integer", "boolean"]) }),
  fc.record({
    enum: fc.array(fc.oneof(fc.string({ maxLength: 2 }), fc.integer({ min: -2, max: 2 }), fc.boolean(), fc.constant(null)), { minLength: 1, maxLength: 4 })
  }),
  fc.record({ const: fc.oneof(fc.string({ maxLength: 2 }), fc.integer({ min: -2, max: 2 })) }),
  fc.boolean(),
  fc.record({ description: hostileText })
)

export const { schema: schemaArbitrary } = fc.letrec<{ schema: Record<string, unknown> | boolean }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({
      type: fc.constant("object"),
      properties: fc.dictionary(hostileText, tie("schema"), { maxKeys: 4 }),
      // Not "": Ajv 8 ignores a required empty key (JSON Schema does not, nor does the Schema generated).
      required: fc.uniqueArray(hostileText.filter((key) => key !== ""), { maxLength: 3 }),
      additionalProperties: fc.oneof(fc.boolean(), tie("schema")),
      description: hostileText
    }, { requiredKeys: ["type"] }),
    fc.record({ type: fc.constant("array"), items: tie("schema"), minItems: fc.nat(2), maxItems: fc.nat(4) }, { requiredKeys: ["type"] }),
    fc.record({
      type: fc.constant("array"),
      prefixItems: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }),
      items: fc.oneof(fc.boolean(), tie("schema")),
      minItems: fc.nat(3),
      maxItems: fc.nat(3)
    }, { requiredKeys: ["type", "prefixItems"] }),
    fc.record({ anyOf: fc.array(tie("schema"), { minLength: 1, maxLength: 3 }) })
  )
}))

/** Values shaped like the schema, often valid, often not. */
export const valueFor = (schema: unknown, depth = 0): fc.Arbitrary<unknown> => {
  const any = fc.jsonValue({ maxDepth: 2 })
  if (typeof schema !== "object" || schema === null || depth > 6) return any
  const s = schema as Record<string, any>
  if (Array.isArray(s["enum"])) return fc.oneof(fc.constantFrom(...s["enum"]), any)
  if ("const" in s) return fc.oneof(fc.constant(s["const"]), any)
  if (Array.isArray(s["anyOf"])) return fc.oneof(...s["anyOf"].map((m: unknown) => valueFor(m, depth + 1)))
  const types = Array.isArray(s["type"]) ? s["type"] : [s["type"]]
  const options: Array<fc.Arbitrary<unknown>> = [any]
  for (const type of types) {
    if (type === "string") options.push(fc.string({ maxLength: 5, unit: fc.constantFrom("a", "b", "c", "x", "1", "😀", "\ud800") }))
    if (type === "integer") options.push(fc.integer({ min: -8, max: 12 }))
    if (type === "number") options.push(fc.oneof(fc.integer({ min: -8, max: 12 }), fc.double({ min: -10, max: 10, noNaN: true })))
    if (type === "boolean") options.push(fc.boolean())
    if (type === "null") options.push(fc.constant(null))
    if (type === "array") {
      const prefix: Array<unknown> = Array.isArray(s["prefixItems"]) ? s["prefixItems"] : []
      options.push(
        fc.tuple(fc.tuple(...prefix.map((p) => valueFor(p, depth + 1))), fc.array(valueFor(s["items"], depth + 1), { maxLength: 3 })).map((
          [a, b]
        ) => [...a, ...b])
      )
    }
    if (type === "object") {
      const properties: Record<string, unknown> = s["properties"] ?? {}
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const key of Object.keys(properties)) record[key] = valueFor(properties[key], depth + 1)
      options.push(
        fc.tuple(
          fc.record(record, { requiredKeys: [] }),
          fc.dictionary(fc.constantFrom("extra", ...s["required"] ?? []), valueFor(s["additionalProperties"], depth + 1), { maxKeys: 2 })
        )
          .map(([a, b]) => ({ ...b, ...a }))
      )
    }
  }
  return fc.oneof(...options)
}

/**
 * Recursive schemas built to make a union decoder work hard: definitions that refer to each other
 * through `anyOf` and `oneOf` whose members overlap (arrays and objects over the same
 * definitions, with and without `minItems`, `required`, a literal `kind`), and references
 * straight inside unions.
 */
export const unionSchemaArbitrary: fc.Arbitrary<Record<string, unknown>> = (() => {
  const ref = fc.integer({ min: 0, max: 2 }).map((i) => ({ $ref: `#/$defs/d${i}` }))
  const member: fc.Arbitrary<unknown> = fc.oneof(
    fc.record({ type: fc.constant("array"), items: ref, minItems: fc.nat(2), maxItems: fc.nat(3) }, { requiredKeys: ["type", "items"] }),
    fc.record({ type: fc.constant("array"), prefixItems: fc.array(ref, { minLength: 1, maxLength: 2 }), items: fc.oneof(ref, fc.boolean()) }),
    fc.record({
      type: fc.constant("object"),
      properties: fc.record({ a: ref, b: ref }, { requiredKeys: [] }),
      required: fc.subarray(["a", "b"]),
      additionalProperties: fc.oneof(fc.boolean(), ref)
    }, { requiredKeys: ["type", "properties"] }),
    fc.record({
      type: fc.constant("object"),
      properties: fc.record({ kind: fc.constantFrom("x", "y", "z").map((kind) => ({ const: kind })), v: ref }),
      required: fc.constantFrom(["kind"], ["kind", "v"], [])
    }),
    ref,
    fc.constantFrom({ type: "string" }, { type: "number" }, { enum: ["x", 1, null] }, true)
  )
  const union = fc.tuple(
    fc.constantFrom("anyOf", "oneOf"),
    fc.array(fc.oneof(member, fc.record({ anyOf: fc.array(member, { minLength: 1, maxLength: 3 }) })), { minLength: 1, maxLength: 4 })
  ).map(([keyword, members]) => ({ [keyword]: members }))
  return fc.tuple(union, union, union, fc.oneof(ref, union)).map(([d0, d1, d2, root]) => ({ ...root, $defs: { d0, d1, d2 } }))
})()

/** JSON values shaped like those schemas' (arrays of arrays, objects with `a`, `b`, `kind`, `v`), some deep. */
export const unionValueArbitrary: fc.Arbitrary<unknown> = (() => {
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constantFrom("x", 1, null, "y", true),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.record({ a: tie("value"), b: tie("value"), kind: fc.constantFrom("x", "y", "z"), v: tie("value") }, { requiredKeys: [] })
    )
  }))
  // Deep chains: where overlapping members double the work at each level.
  const chain = fc.tuple(fc.integer({ min: 10, max: 40 }), fc.constantFrom("array", "pair", "object", "kind")).map(([depth, shape]) => {
    let v: unknown = shape === "object" ? {} : []
    for (let i = 0; i < depth; i++) {
      v = shape === "array" ? [v] : shape === "pair" ? [v, "x"] : shape === "object" ? { a: v } : { kind: "x", v }
    }
    return v
  })
  return fc.oneof(value, chain)
})()
