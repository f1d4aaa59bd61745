/**
 * The structure bound of JSON text from a peer (docs/DESIGN.md, "Structure bounds"): the scan
 * counts exactly what it says (every `{`, `[` and `,` outside strings, plus one) and the depth,
 * whatever the strings hold; a text past either bound is refused before anything is parsed; a
 * text it accepts can be walked by every recursive walk of the client without a stack overflow.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { defaultStructure, parse, scan } from "../../src/internal/jsonText.js"
import { headerParameters } from "../../src/internal/mcpHeaders.js"
import { maxDepthCeiling } from "../../src/PhasePolicy.js"

/** The reference: depth and nodes of a parsed value, as the scan counts them in its text. */
const measure = (value: unknown): { readonly depth: number; readonly nodes: number } => {
  let depth = 0
  let nodes = 1
  const stack: Array<{ readonly value: unknown; readonly level: number }> = [{ value, level: 0 }]
  while (stack.length > 0) {
    const { level, value: node } = stack.pop()!
    if (typeof node !== "object" || node === null) continue
    const children = Array.isArray(node) ? node : Object.values(node)
    // The opening bracket, and one comma between each two children.
    nodes += 1 + Math.max(0, children.length - 1)
    depth = Math.max(depth, level + 1)
    for (const child of children) stack.push({ value: child, level: level + 1 })
  }
  return { depth, nodes }
}

/** Strings that try to fool a scanner: brackets, commas, quotes and backslash runs inside. */
const trickyString = fc.stringOf(fc.constantFrom("{", "}", "[", "]", ",", "\"", "\\", "\\\\", "a", "\u00e9", "\ud83d\ude00", "\n"), {
  maxLength: 12
})

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(trickyString, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(trickyString, tie("value"), { maxKeys: 5 })
  )
})).value

/** `depth` arrays nested as text, never as a value: building it must not recurse either. */
const nestedText = (depth: number, inner = ""): string => "[".repeat(depth) + inner + "]".repeat(depth)

describe("jsonText", () => {
  it.prop(
    "counts the nodes and the depth of any JSON text exactly, however it is spaced",
    [jsonValue, fc.constantFrom(undefined, 0, 2, "\t")],
    ([value, space]) => {
      const text = JSON.stringify(value, null, space)
      const expected = measure(value)
      expect(scan(text, { maxDepth: 10_000, maxNodes: 10_000_000 })).toBe(expected.nodes)
      // Exactly the bound passes; one less refuses.
      expect(scan(text, { maxDepth: expected.depth, maxNodes: expected.nodes })).toBe(expected.nodes)
      if (expected.depth > 0) expect(scan(text, { maxDepth: expected.depth - 1, maxNodes: 10_000_000 })).toBe("TooDeep")
      if (expected.nodes > 1) expect(scan(text, { maxDepth: 10_000, maxNodes: expected.nodes - 1 })).toBe("TooManyNodes")
      const parsed = parse(text, { maxDepth: expected.depth, maxNodes: expected.nodes })
      expect(parsed).toEqual({ _tag: "Parsed", value: JSON.parse(text), nodes: expected.nodes })
    }
  )

  it.prop(
    "never throws on any text, and what it accepts is within its bound and can be walked",
    [
      fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.stringOf(fc.constantFrom("[", "]", "{", "}", ",", ":", "\"", "\\", "1", "a", " "), { maxLength: 300 }),
        fc.integer({ min: 0, max: 3_000 }).map((depth) => nestedText(depth)),
        fc.integer({ min: 0, max: 3_000 }).map((depth) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth))
      ),
      fc.integer({ min: 1, max: maxDepthCeiling })
    ],
    ([text, maxDepth]) => {
      const parsed = parse(text, { maxDepth, maxNodes: 100_000 })
      if (parsed._tag !== "Parsed") return
      expect(measure(parsed.value).depth).toBeLessThanOrEqual(maxDepth)
      // The client's own walks over a value it holds: none of them may throw.
      expect(() => JSON.stringify(parsed.value)).not.toThrow()
      const tool = { name: "t", inputSchema: { type: "object", properties: { p: parsed.value } } } as const
      expect(() => headerParameters(tool)).not.toThrow()
    }
  )

  it("refuses 100,000 nested arrays (200 KB that JSON.parse accepts) as too deep, before parsing", () => {
    expect(parse(nestedText(100_000), defaultStructure)).toEqual({ _tag: "TooDeep" })
    // The ceiling itself walks: JSON.stringify of 1,000 levels does not overflow the stack.
    const deepest = parse(nestedText(maxDepthCeiling), { maxDepth: maxDepthCeiling, maxNodes: 10_000 })
    expect(deepest._tag).toBe("Parsed")
    if (deepest._tag === "Parsed") expect(JSON.stringify(deepest.value)).toBe(nestedText(maxDepthCeiling))
  })

  it("refuses 16 MiB of `{},` as too many nodes, and stops counting at the bound", () => {
    const text = `[${"{},".repeat((16 * 1024 * 1024) / 3 - 1)}{}]`
    expect(parse(text, defaultStructure)).toEqual({ _tag: "TooManyNodes" })
  })

  it("skips strings whatever they hold: escaped quotes, backslash runs, brackets and commas", () => {
    expect(scan(JSON.stringify(["a\\\"[,{", "\\\\", "\"\"", "]}"]), defaultStructure)).toBe(5)
    expect(scan(`{"k\\\\":[1,2]}`, defaultStructure)).toBe(4)
    // An unterminated string hides the rest; JSON.parse then refuses the text.
    expect(parse(`["abc`, defaultStructure)._tag).toBe("Invalid")
    expect(parse(`"\\"`, defaultStructure)._tag).toBe("Invalid")
  })
})
