/**
 * The listing's own checks of what a server lists (docs/DESIGN.md, "Listings"): the tools and
 * pages checked by hand must accept exactly what their Schemas accept and give the same values,
 * whatever the server sends; the schema size bound counts UTF-8 bytes exactly as an encoder
 * would, whatever the strings hold.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { jsonWithin, maxJsonGrowth, pageOf, toolOf } from "../../src/internal/listing.js"
import * as McpSchema from "../../src/McpSchema.js"

const decodeTool = Schema.decodeUnknownEither(McpSchema.Tool)
const decodePage = Schema.decodeUnknownEither(McpSchema.ListToolsPage)

/** Anything a field may hold on the wire, and a few things JSON cannot (undefined, an array where an object goes). */
const anyField = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.constantFrom("", "object", "string"),
  fc.integer(),
  fc.constantFrom(-1, 0, 1.5),
  fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })
)
const inputSchema = fc.oneof(
  anyField,
  fc.record({ type: fc.constantFrom("object", "array", undefined), properties: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] })
)
const toolLike = fc.oneof(
  anyField,
  fc.record(
    {
      name: fc.oneof(fc.string({ maxLength: 6 }), anyField),
      title: anyField,
      description: anyField,
      inputSchema,
      outputSchema: anyField,
      annotations: anyField,
      extra: anyField
    },
    { requiredKeys: [] }
  )
)
const pageLike = fc.oneof(
  anyField,
  fc.record({
    tools: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), anyField),
    nextCursor: anyField,
    ttlMs: anyField,
    cacheScope: fc.oneof(fc.constantFrom("public", "private"), anyField),
    extra: anyField
  }, { requiredKeys: [] })
)

/** The same answer as the Schema: both accept with equal values, or both refuse. */
const sameAs = <A>(mine: Either.Either<A, unknown>, schema: Either.Either<A, unknown>) => {
  expect(Either.isRight(mine)).toBe(Either.isRight(schema))
  if (Either.isRight(mine) && Either.isRight(schema)) expect(mine.right).toEqual(schema.right)
}

describe("listing checks", () => {
  it.prop("a listed tool: accepted exactly when its Schema accepts it, with the same value", [toolLike], ([u]) => {
    sameAs(toolOf(u), decodeTool(u))
  }, { fastCheck: { numRuns: 2_000 } })

  it.prop("a page of tools/list: accepted exactly when its Schema accepts it, with the same value", [pageLike], ([u]) => {
    sameAs(pageOf(u), decodePage(u))
  }, { fastCheck: { numRuns: 2_000 } })

  it("a plain tool is accepted as listed; one the Schema refuses is refused with the Schema's own error", () => {
    const tool = { name: "add", description: "Adds", inputSchema: { type: "object", properties: {} }, extra: 1 }
    expect(toolOf(tool)).toEqual(Either.right(tool))
    const refused = toolOf({ name: "", inputSchema: { type: "object" } })
    expect(Either.isLeft(refused) && refused.left._tag).toBe("ParseError")
  })

  const unicodeText = fc.stringOf(
    fc.oneof(
      fc.fullUnicode(),
      fc.constantFrom("\ud800", "\udfff", "\u07ff", "\u0800", "\uffff", "\u0080", "\u007f")
    ),
    { maxLength: 40 }
  )
  const schemaLike = fc.dictionary(unicodeText, fc.oneof(unicodeText, fc.integer(), fc.array(unicodeText, { maxLength: 3 })), {
    maxKeys: 4
  })

  it.prop("the schema size bound: within `max` exactly when the UTF-8 of its JSON is", [schemaLike, fc.nat({ max: 600 })], ([value, max]) => {
    const bytes = new TextEncoder().encode(JSON.stringify(value)).length
    expect(jsonWithin(value, max)).toBe(bytes <= max)
    expect(jsonWithin(value, bytes)).toBe(true)
    if (bytes > 0) expect(jsonWithin(value, bytes - 1)).toBe(false)
  }, { fastCheck: { numRuns: 2_000 } })

  /** JSON texts as a peer may write them: numbers in every form, escapes, whitespace. */
  const whitespace = fc.constantFrom("", " ", "\n  ", "\t")
  const jsonText = fc.letrec<{ value: string; number: string; string: string; array: string; object: string }>((tie) => ({
    value: fc.oneof({ depthSize: "small" }, tie("number"), tie("string"), fc.constantFrom("true", "false", "null"), tie("array"), tie("object")),
    number: fc.tuple(
      fc.constantFrom("", "-"),
      fc.oneof(fc.constant("0"), fc.integer({ min: 1, max: 99_999 }).map(String)),
      fc.option(fc.stringMatching(/^\.[0-9]{1,4}$/), { nil: "" }),
      fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.integer({ min: 0, max: 400 })).map((parts) => parts.join("")), {
        nil: ""
      })
    ).map((parts) => parts.join("")),
    string: fc.array(
      fc.oneof(
        fc.fullUnicode().filter((c) => c >= " " && c !== "\"" && c !== "\\"),
        fc.constantFrom("\\n", "\\\"", "\\\\", "\\/", "\\u0041", "\\u00e9", "\\u0000", "\\ud83d\\ude00", "\\ud800")
      ),
      { maxLength: 6 }
    ).map((parts) => `"${parts.join("")}"`),
    array: fc.array(fc.tuple(whitespace, tie("value")), { maxLength: 4 }).map((items) => `[${items.map(([w, v]) => w + v).join(",")}]`),
    object: fc.array(fc.tuple(whitespace, tie("string"), tie("value")), { maxLength: 4 }).map((members) =>
      `{${members.map(([w, k, v]) => `${w}${k}:${w}${v}`).join(",")}}`
    )
  })).value

  it.prop("a parsed value is written back in at most maxJsonGrowth times its source's bytes (why a small page is not measured)", [jsonText], ([text]) => {
    const utf8 = (t: string) => new TextEncoder().encode(t).length
    expect(utf8(JSON.stringify(JSON.parse(text)))).toBeLessThanOrEqual(maxJsonGrowth * utf8(text))
  }, { fastCheck: { numRuns: 5_000 } })

  it("the growth bound is nearly reached: 1e20 is written with 21 digits", () => {
    expect(JSON.stringify(JSON.parse("1e20"))).toBe("100000000000000000000")
    expect(21 / 4).toBeLessThanOrEqual(maxJsonGrowth)
  })
})
