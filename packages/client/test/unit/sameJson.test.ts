/**
 * The comparison of a listing said again with the last (`internal/sameJson.ts`): it says what
 * comparing the two values' `JSON.stringify` texts says, for any values parsed from JSON, equal
 * or not, and for values deeper than any stack.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { sameJson } from "../../src/internal/sameJson.js"

const asText = (value: unknown) => JSON.stringify(value)

/** A value and a copy of it with one leaf changed, or with keys reordered (when it has any). */
const changed = fc.jsonValue().chain((value) =>
  fc.tuple(fc.constant(value), fc.jsonValue()).map(([original, other]) => {
    const copy = JSON.parse(JSON.stringify(original)) as unknown
    if (typeof copy !== "object" || copy === null) return [original, other] as const
    const keys = Object.keys(copy)
    if (keys.length === 0) return [original, other] as const
    const record = copy as Record<string, unknown>
    // The last key set again: a different value, or the same value at the end of the key order.
    const last = keys[keys.length - 1]!
    const first = keys[0]!
    if (Array.isArray(copy)) {
      copy[0] = other
      return [original, copy] as const
    }
    const firstValue = record[first]
    delete record[first]
    record[first] = firstValue
    record[last] = keys.length === 1 ? other : record[last]
    return [original, copy] as const
  })
)

describe("sameJson", () => {
  it("says what comparing the JSON texts says: a value and its copy", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      expect(sameJson(value, JSON.parse(JSON.stringify(value)))).toBe(true)
    }))
  })

  it("says what comparing the JSON texts says: two values, a value and a changed or reordered copy", () => {
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      expect(sameJson(a, b)).toBe(asText(a) === asText(b))
    }))
    fc.assert(fc.property(changed, ([a, b]) => {
      expect(sameJson(a, b)).toBe(asText(a) === asText(b))
    }))
  })

  it("reads keys whose value is undefined, and missing array elements, as the JSON text does", () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true)
    expect(sameJson({ b: undefined, a: 1 }, { a: 1, c: undefined })).toBe(true)
    expect(sameJson([undefined, 1], [null, 1])).toBe(true)
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false)
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false)
    expect(sameJson({ a: [] }, { a: {} })).toBe(false)
    expect(sameJson({ __proto__: 1 }, JSON.parse("{\"__proto__\":1}"))).toBe(false)
    expect(sameJson(JSON.parse("{\"__proto__\":1}"), JSON.parse("{\"__proto__\":1}"))).toBe(true)
  })

  it("walks values deeper than any stack", () => {
    const deep = (leaf: number) => {
      let value: unknown = leaf
      for (let i = 0; i < 200_000; i++) value = i % 2 === 0 ? [value] : { v: value }
      return value
    }
    expect(sameJson(deep(1), deep(1))).toBe(true)
    expect(sameJson(deep(1), deep(2))).toBe(false)
  })
})
