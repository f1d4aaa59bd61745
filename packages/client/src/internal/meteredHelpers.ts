/**
 * The runtime helpers of an output check, metered (docs/DESIGN.md, "Typed results"; the meter
 * is `internal/checkMeter.ts`). Each charges steps in proportion to the values and characters it
 * reads (weights measured against the generated code's own steps, docs/BENCHMARKS.md), so that what Ajv calls
 * from its generated code (`const`, `enum`) cannot do unbounded work between two steps, and
 * `uniqueItems` is linear instead of Ajv's pairwise comparison (quadratic for objects).
 *
 * Values are JSON (what a result decodes to): equality is JSON's, objects compared by their own
 * keys in any order, arrays in order, numbers by value.
 */
import { charge } from "./checkMeter.js"

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Deep equality of two JSON values; replaces Ajv's `equal` (used by `const` and `enum`). */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  charge(4)
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (!isObject(a) || !isObject(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  charge(4 * keys.length)
  for (const key of keys) if (!Object.prototype.hasOwnProperty.call(b, key)) return false
  for (const key of keys) if (!jsonEqual(a[key], b[key])) return false
  return true
}

/** The length of a string in code points; replaces Ajv's `ucs2length` (`minLength`, `maxLength`). */
export const codePointLength = (text: string): number => {
  charge(4 + text.length)
  let length = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
    length++
  }
  return length
}

/**
 * A canonical text of a JSON value: equal values (JSON's equality) have the same text, others
 * different ones. Object keys are sorted; numbers are written as JSON writes them (`-0` as `0`,
 * which `===` also equates with `0`).
 */
const canonical = (value: unknown): string => {
  // Building a text costs more per value than comparing: about 30 steps (docs/BENCHMARKS.md).
  charge(32)
  if (typeof value === "string") {
    charge(value.length >> 6)
    return JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (isObject(value)) {
    const keys = Object.keys(value).sort()
    charge(8 * keys.length)
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * `uniqueItems: true`: no two items equal. One canonical text per item in a set, linear in the
 * array's size (Ajv compares every pair of non-scalar items).
 */
export const itemsAreUnique = (items: ReadonlyArray<unknown>): boolean => {
  const seen = new Set<string>()
  for (const item of items) {
    const key = canonical(item)
    if (seen.has(key)) return false
    seen.add(key)
  }
  return true
}
