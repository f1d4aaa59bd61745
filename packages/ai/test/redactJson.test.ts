/**
 * The walk that clears a result of the source's secrets (`internal/redactJson.ts`; docs/DESIGN.md,
 * "AI toolkits"), on any JSON value a server may send: every string and key goes through the
 * redaction, nothing else changes (shape, order, numbers, own `__proto__` keys), and no depth
 * overflows the stack.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { redactJson } from "../src/internal/redactJson.js"

/** The same transformation, recursively, as a reference (fine for the small values FastCheck draws). */
const reference = (value: unknown, f: (text: string) => string): unknown => {
  if (typeof value === "string") return f(value)
  if (Array.isArray(value)) return value.map((item) => reference(item, f))
  if (typeof value === "object" && value !== null) {
    const out = {}
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, f(key), { value: reference(item, f), enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  return value
}

/** JSON values whose keys include the ones that name prototypes. */
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value")),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor", "prototype")), tie("value"))
  )
})).value

describe("redactJson", () => {
  it.prop("passes every string and key through the redaction and changes nothing else", [json], ([value]) => {
    const mark = (text: string) => `<${text}>`
    const redacted = redactJson(value, mark)
    expect(JSON.stringify(redacted)).toBe(JSON.stringify(reference(value, mark)))
    expect(JSON.stringify(redactJson(value, (text) => text))).toBe(JSON.stringify(value))
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("an own __proto__ key stays a key of the copy, never its prototype", () => {
    const value: unknown = JSON.parse(`{"__proto__":{"polluted":"SECRET"},"a":["SECRET"]}`)
    const redacted = redactJson(value, (text) => text.replace("SECRET", "[redacted]")) as Record<string, unknown>
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype)
    expect(Object.keys(redacted)).toEqual(["__proto__", "a"])
    expect(JSON.stringify(redacted)).toBe(`{"__proto__":{"polluted":"[redacted]"},"a":["[redacted]"]}`)
    expect(redacted["polluted"]).toBeUndefined()
  })

  it("100,000 levels of nesting: no stack overflow", () => {
    const depth = 100_000
    const value: unknown = JSON.parse(`${"[".repeat(depth)}"SECRET"${"]".repeat(depth)}`)
    let inner = redactJson(value, (text) => text.toLowerCase())
    for (let i = 0; i < depth; i++) inner = (inner as Array<unknown>)[0]
    expect(inner).toBe("secret")
  })
})
