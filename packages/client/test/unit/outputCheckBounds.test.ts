/**
 * The bounds of output checks (`internal/outputSchema.ts`, docs/DESIGN.md "Typed results"): each
 * hostile schema or result ends with a typed outcome (a linear answer, `too-costly` at the
 * ceiling of steps, `deadline` at the call's deadline, or `uncompilable` at the compile bound).
 * How long each takes is the bench's (`npm run output-check-bounds -w @phasebound/bench`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chunk } from "../../src/internal/checkMeter.js"
import { meterSource } from "../../src/internal/meteredSource.js"
import {
  compileOutputSchema,
  maxCompileUnits,
  type OutputCheck,
  schemaUnits,
  validators
} from "../../src/internal/outputSchema.js"

const ajv = await Effect.runPromise(validators)

const compiled = (schema: Record<string, unknown> | boolean): OutputCheck => {
  const check = compileOutputSchema(ajv, schema)
  if (check === "uncompilable") throw new Error("expected a compiled schema")
  return check
}

const bytesOf = (value: unknown) => JSON.stringify(value).length
/** No deadline: only the ceiling of steps can stop the check. */
const noDeadline = (value: unknown, resultBytes = bytesOf(value)) => ({ deadlineAt: Infinity, now: () => 0, resultBytes })

const doubling = (levels: number, where: "$defs" | "definitions" = "$defs") => {
  const defs: Record<string, unknown> = { [`a${levels}`]: { type: "string" } }
  for (let i = 0; i < levels; i++) defs[`a${i}`] = { anyOf: [{ $ref: `#/${where}/a${i + 1}` }, { $ref: `#/${where}/a${i + 1}` }] }
  return { [where]: defs, $ref: `#/${where}/a0` }
}
const chain = (links: number) => {
  const $defs: Record<string, unknown> = { [`c${links}`]: { type: "number" } }
  for (let i = 0; i < links; i++) $defs[`c${i}`] = { $ref: `#/$defs/c${i + 1}` }
  return { $defs, $ref: "#/$defs/c0" }
}
const wide = (count: number) => ({
  type: "object",
  properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: "string" }]))
})

describe("bounded output checks", () => {
  it("a catastrophic pattern is linear: ^(a+)+$ against a 40-char near-miss, and against 100,000 chars", () => {
    const check = compiled({ type: "string", pattern: "^(a+)+$" })
    const hostile = `${"a".repeat(39)}b`
    expect(check(hostile, noDeadline(hostile))).toBe("invalid")
    expect(check("a".repeat(40), noDeadline("a".repeat(40)))).toBe("valid")
    const long = `${"a".repeat(100_000)}b`
    expect(check(long, noDeadline(long))).toBe("invalid")
  })

  it("patternProperties with a catastrophic pattern: linear on a few keys, too costly over 100,000", () => {
    const check = compiled({ type: "object", patternProperties: { "^(a+)+$": { type: "number" } } })
    const few = { [`${"a".repeat(39)}b`]: "not checked", aaaa: 1 }
    expect(check(few, noDeadline(few))).toBe("valid")
    expect(check({ aaaa: "x" }, noDeadline({ aaaa: "x" }))).toBe("invalid")
    const many = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`${"a".repeat(30)}${i}`, 1]))
    expect(check(many, noDeadline(many))).toBe("too-costly")
  })

  it("uniqueItems is linear: 30,000 distinct objects pass, one duplicate (keys reordered) fails", () => {
    const check = compiled({ type: "array", uniqueItems: true })
    const items = Array.from({ length: 30_000 }, (_, i) => ({ id: i, name: "item" }))
    expect(check(items, noDeadline(items))).toBe("valid")
    const duplicated = [...items, { name: "item", id: 17 }]
    expect(check(duplicated, noDeadline(duplicated))).toBe("invalid")
    const tooMany = Array.from({ length: 300_000 }, (_, i) => ({ id: i, name: "item" }))
    expect(check(tooMany, noDeadline(tooMany))).toBe("too-costly")
  })

  it("a $ref fan-out doubling at each of 40 levels is too costly, for a tiny result as for a padded one", () => {
    const check = compiled(doubling(40))
    expect(check(1, noDeadline(1))).toBe("too-costly")
    expect(check(1, noDeadline(1, 10_000_000))).toBe("too-costly")
    // 2020-12 tries every branch of `anyOf` (for `unevaluatedProperties`), even for a value the
    // first accepts; draft-07 stops at the first that does.
    expect(check("text", noDeadline("text"))).toBe("too-costly")
    const draft07 = compiled({ $schema: "http://json-schema.org/draft-07/schema#", ...doubling(40, "definitions") })
    expect(draft07("text", noDeadline("text"))).toBe("valid")
    expect(draft07(1, noDeadline(1))).toBe("too-costly")
  })

  it("an enum of objects over a large array is too costly; an enum of 10,000 objects is not compiled", () => {
    const check = compiled({ type: "array", items: { enum: Array.from({ length: 1_000 }, (_, k) => ({ k })) } })
    const items = Array.from({ length: 30_000 }, () => ({ k: 999 }))
    expect(check(items, noDeadline(items))).toBe("too-costly")
    expect(check([{ k: 1 }, { k: 999 }], noDeadline([{ k: 1 }]))).toBe("valid")
    expect(check([{ k: 1000 }], noDeadline([{ k: 1000 }]))).toBe("invalid")
    expect(compileOutputSchema(ajv, { enum: Array.from({ length: 10_000 }, (_, k) => ({ k })) })).toBe("uncompilable")
  })

  it("a deep $ref chain compiles and checks up to the compile bound, and is not compiled past it", () => {
    const check = compiled(chain(600))
    expect(check(1, noDeadline(1))).toBe("valid")
    expect(check("x", noDeadline("x"))).toBe("invalid")
    expect(compileOutputSchema(ajv, chain(1_000))).toBe("uncompilable")
  })

  it("counting the keys of large objects under a wide anyOf is too costly", () => {
    const check = compiled({
      type: "array",
      items: { anyOf: Array.from({ length: 200 }, (_, i) => ({ minProperties: 1_000_000 + i })) }
    })
    const big = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 0]))
    const items = Array.from({ length: 50 }, () => big)
    expect(check(items, noDeadline(items, 10_000_000))).toBe("too-costly")
    expect(check([{}], noDeadline([{}]))).toBe("invalid")
  })

  it("stops at the call's deadline, looking at the clock every few thousand steps", () => {
    const check = compiled(doubling(40))
    let looks = 0
    const clock = () => looks++
    // Past the deadline from the third look on; the ceiling (a padded result) is far away.
    expect(check(1, { deadlineAt: 2, now: clock, resultBytes: 10_000_000 })).toBe("deadline")
    expect(looks).toBe(3)
    // A check that ends within its first chunk of steps never looks.
    looks = 0
    expect(compiled({ type: "number" })(1, { deadlineAt: 0, now: clock, resultBytes: 1 })).toBe("valid")
    expect(looks).toBe(0)
    expect(chunk).toBeGreaterThan(0)
  })

  it("a result too deep for the engine's stack fails the check (the safe side), and the meter is idle after", () => {
    const check = compiled({ $defs: { node: { type: "array", items: { $ref: "#/$defs/node" } } }, $ref: "#/$defs/node" })
    let deep: unknown = []
    for (let i = 0; i < 200_000; i++) deep = [deep]
    expect(check(deep, noDeadline([], 10_000_000))).toBe("invalid")
    expect(check([[[]]], noDeadline([[[]]]))).toBe("valid")
  })

  it("bounds the compile: a schema over the bound of units, or too deep, is not compiled (nothing is run)", () => {
    expect(schemaUnits(wide(100))).toBeLessThan(maxCompileUnits)
    expect(compileOutputSchema(ajv, wide(100))).not.toBe("uncompilable")
    expect(schemaUnits(wide(1_000))).toBeUndefined()
    expect(compileOutputSchema(ajv, wide(1_000))).toBe("uncompilable")
    // About 1 MiB, the default maxSchemaBytes.
    const huge = wide(20_000)
    expect(JSON.stringify(huge).length).toBeGreaterThan(500_000)
    expect(compileOutputSchema(ajv, huge)).toBe("uncompilable")
    let deep: Record<string, unknown> = { type: "object" }
    for (let i = 0; i < 200; i++) deep = { type: "object", properties: { a: deep } }
    expect(compileOutputSchema(ajv, deep)).toBe("uncompilable")
  })

  it("refuses a pattern that cannot run in linear time: the schema is not compiled", () => {
    expect(compileOutputSchema(ajv, { type: "string", pattern: "^(?=a)a$" })).toBe("uncompilable")
    expect(compileOutputSchema(ajv, { type: "string", pattern: "(a)\\1" })).toBe("uncompilable")
    expect(compileOutputSchema(ajv, { type: "object", patternProperties: { "(?<!x)y": {} } })).toBe("uncompilable")
    const unicode = compiled({ type: "string", pattern: "^\\p{Lu}\\u00e9\\s\\d+$" })
    expect(unicode("Ué\u00a012", noDeadline("Ué 12"))).toBe("valid")
    expect(unicode("ué 12", noDeadline("ué 12"))).toBe("invalid")
  })
})

describe("meterSource", () => {
  it("adds steps to functions, loops and if statements, never inside strings or comments", () => {
    const source = "const a = scope.func[0];return function validate1(data, {x=\"\"}={}){" +
      "/*# sourceURL=\"https://x.example/*/for(;;){}/*\" */;" +
      "const p=\"/\" + \"a/b\".replace(/~/g, \"~0\").replace(/\\//g, \"~1\");" +
      "if(data.if === \"if(x){for(;;){}\"){for(const k in data){}}else if(data.for){}return p === \"/a~1b\";}"
    const metered = meterSource(source, "meter")!
    expect(metered).toContain("pb$meter.wrap(scope.func[0])")
    // The comment is dropped whole, with the `*/` its string carries.
    expect(metered).not.toContain("sourceURL")
    expect(metered).not.toContain("x.example")
    expect(metered).toContain("\"if(x){for(;;){}\"")
    expect(metered.match(/spill\(\)/g)).toHaveLength(3)
    const run = new Function("self", "scope", metered) as (self: unknown, scope: unknown) => (data: unknown) => boolean
    const meter = { left: 1_000, spill: () => {}, wrap: (f: unknown) => f }
    const validate = run({ meter }, { func: [Object.prototype.hasOwnProperty] })
    expect(validate({ if: "if(x){for(;;){}", a: 1, b: 2 })).toBe(true)
    // The call (eight steps), the \`if\` statement, three loop iterations.
    expect(1_000 - meter.left).toBe(12)
  })

  it("refuses a source not shaped as Ajv's (a template literal, an unterminated string, another comment)", () => {
    expect(meterSource("return function f(){return `x`}", "m")).toBeUndefined()
    expect(meterSource("return function f(){return \"x}", "m")).toBeUndefined()
    expect(meterSource("return function f() return 1", "m")).toBeUndefined()
    expect(meterSource("return function f(){/* a */return 1}", "m")).toBeUndefined()
    expect(meterSource("return function f(){// a\nreturn 1}", "m")).toBeUndefined()
    expect(meterSource("return function f(){/*# sourceURL=x */return 1}", "m")).toBeUndefined()
  })

  it("a schema's $id cannot inject code through Ajv's sourceURL comment", () => {
    const marker = globalThis as { phaseboundInjected?: number }
    for (
      const $id of [
        "https://x.example/a*/globalThis.phaseboundInjected=1;/*",
        "https://x.example/a*/globalThis.phaseboundInjected=1//",
        "https://x.example/a\\*/globalThis.phaseboundInjected=1;/*"
      ]
    ) {
      const check = compileOutputSchema(ajv, { $id, type: "number" })
      expect(check).not.toBe("uncompilable")
      if (check === "uncompilable") continue
      expect(check(1, noDeadline(1))).toBe("valid")
      expect(check("x", noDeadline("x"))).toBe("invalid")
    }
    expect(marker.phaseboundInjected).toBeUndefined()
  })
})
