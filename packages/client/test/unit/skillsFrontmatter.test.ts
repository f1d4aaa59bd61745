/**
 * The `SKILL.md` frontmatter reader (docs/DESIGN.md, "Skills"): what it reads agrees with a full
 * YAML 1.2 parser (the `yaml` package, core schema) over generated documents of the subset; what
 * is outside the subset is refused, never read otherwise (anchors and aliases, tags, directives,
 * complex and merge keys, `__proto__`, duplicate keys, nested flow collections, tabs); the
 * bounds of bytes, depth and nodes hold before any stack or time could run away; and arbitrary
 * input only ever ends in a `FrontmatterError`. Also the comparison with an entry's frontmatter.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { parse as parseYaml } from "yaml"
import { FrontmatterError, parseFrontmatter, parseSkillMarkdown } from "../../src/internal/skills/frontmatter.js"
import { sameFrontmatter } from "../../src/internal/skills/verify.js"
import { McpSkills } from "../../src/index.js"

const limits = McpSkills.frontmatterLimits

const refusal = (yaml: string): FrontmatterError => {
  try {
    parseFrontmatter(yaml, limits)
  } catch (error) {
    if (error instanceof FrontmatterError) return error
    throw error
  }
  throw new Error(`accepted: ${JSON.stringify(yaml)}`)
}

// --- Generated documents of the subset ------------------------------------------------------

const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/).filter((k) => k !== "y" && k !== "n")
/** Plain scalars: words, numbers, booleans, nulls, URLs; YAML reads each the same way. */
const plainScalar = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .,()/-]{0,30}[A-Za-z0-9.)]$/),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.constantFrom("true", "false", "null", "~", "1.5", "-2.25e3", "0x1F", "0o17", "https://example.com/a?b=c")
)
const printable = fc.string({ unit: fc.constantFrom(..."ab c'\"\\:#-é😀\t".split("").concat(["😀"])), maxLength: 20 })
const scalarText = fc.oneof(
  plainScalar,
  printable.map((s) => `'${s.replaceAll("'", "''").replaceAll("\t", " ")}'`),
  printable.map((s) => JSON.stringify(s)),
  fc.array(fc.stringMatching(/^[a-z][a-z ]{0,15}[a-z]$/), { minLength: 1, maxLength: 4 }).map((items) => `[${items.join(", ")}]`)
)

interface Doc {
  readonly text: (indent: number) => string
}
const scalarDoc: fc.Arbitrary<Doc> = scalarText.map((s) => ({ text: () => ` ${s}` }))
const blockScalarDoc: fc.Arbitrary<Doc> = fc.tuple(
  fc.constantFrom("|", ">", "|-", ">-", "|+", ">+"),
  fc.array(fc.oneof(fc.stringMatching(/^[a-z][a-z .]{0,20}$/), fc.constant(""), fc.stringMatching(/^ {1,3}[a-z]{1,8}$/)), {
    minLength: 1,
    maxLength: 5
  })
).filter(([, lines]) => lines.some((l) => l !== "" && !l.startsWith(" ")) && !lines[0]!.startsWith(" ") && lines[0] !== "")
  .map(([header, lines]) => ({
    text: (indent: number) => ` ${header}\n${lines.map((l) => (l === "" ? "" : " ".repeat(indent + 2) + l)).join("\n")}`
  }))

const docOf = (depth: number): fc.Arbitrary<Doc> =>
  depth === 0 ? fc.oneof(scalarDoc, blockScalarDoc) : fc.oneof(
    { weight: 3, arbitrary: scalarDoc },
    { weight: 1, arbitrary: blockScalarDoc },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(fc.tuple(key, docOf(depth - 1)), { minLength: 1, maxLength: 3, selector: ([k]) => k }).map((entries) => ({
        text: (indent: number) => "\n" + entries.map(([k, d]) => `${" ".repeat(indent + 2)}${k}:${d.text(indent + 2)}`).join("\n")
      }))
    },
    {
      weight: 1,
      arbitrary: fc.array(scalarText, { minLength: 1, maxLength: 3 }).map((items) => ({
        text: (indent: number) => "\n" + items.map((item) => `${" ".repeat(indent + 2)}- ${item}`).join("\n")
      }))
    }
  )

const documentArb = fc.uniqueArray(fc.tuple(key, docOf(3)), { minLength: 1, maxLength: 6, selector: ([k]) => k }).map((entries) =>
  entries.map(([k, d]) => `${k}:${d.text(0)}`).join("\n")
)

describe("the frontmatter reader", () => {
  it("reads a real skill's frontmatter", () => {
    const { body, frontmatter } = parseSkillMarkdown(
      "\uFEFF---\r\nname: pdf-processing\r\ndescription: Extract, fill, and assemble PDF documents\r\nmetadata:\r\n  author: example-org\r\n  version: \"1.0\"\r\nallowed-tools: Bash(git:*) Read\r\n---\r\n\r\n# PDF\r\n",
      limits
    )
    expect(frontmatter).toEqual({
      name: "pdf-processing",
      description: "Extract, fill, and assemble PDF documents",
      metadata: { author: "example-org", version: "1.0" },
      "allowed-tools": "Bash(git:*) Read"
    })
    // The body is the markdown as the file has it.
    expect(body).toBe("\r\n# PDF\r\n")
  })

  it.prop("agrees with a full YAML 1.2 parser over the subset", [documentArb], ([yaml]) => {
    const expected = parseYaml(yaml, { schema: "core", uniqueKeys: true }) as unknown
    expect(parseFrontmatter(yaml, limits)).toEqual(expected)
  }, { fastCheck: { numRuns: 400 } })

  it.prop("arbitrary text only ever ends in a FrontmatterError", [fc.string({ maxLength: 400 })], ([text]) => {
    try {
      parseFrontmatter(text, limits)
    } catch (error) {
      expect(error).toBeInstanceOf(FrontmatterError)
    }
  }, { fastCheck: { numRuns: 500 } })

  it.prop(
    "YAML-shaped noise: whatever it accepts, a full parser reads the same way",
    [fc.string({ unit: fc.constantFrom(..."ab:- \n#'\"[]{}|>&*!?%@`\t,"), maxLength: 300 })],
    ([text]) => {
      let mine: unknown
      try {
        mine = parseFrontmatter(text, limits)
      } catch (error) {
        expect(error).toBeInstanceOf(FrontmatterError)
        return
      }
      let theirs: unknown
      try {
        theirs = parseYaml(text, { schema: "core", uniqueKeys: true })
      } catch {
        throw new Error(`accepted what YAML refuses: ${JSON.stringify(text)} -> ${JSON.stringify(mine)}`)
      }
      // An empty document is null to YAML, an empty mapping here.
      expect(mine).toEqual(theirs ?? {})
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it("refuses anchors and aliases: no expansion, however small the document (billion laughs)", () => {
    const laughs = [
      "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
      ...Array.from(
        { length: 8 },
        (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`
      )
    ].join("\n")
    expect(refusal(laughs)).toMatchObject({ kind: "invalid" })
    expect(refusal("a: *a")).toMatchObject({ kind: "invalid" })
  })

  it("refuses what the subset leaves out", () => {
    for (
      const yaml of [
        "a: !!str 1",
        "a: !custom x",
        "%YAML 1.2\na: 1",
        "? complex\n: key",
        "<<: {a: 1}",
        "__proto__: {polluted: true}",
        "meta:\n  __proto__:\n    polluted: true",
        "a: {__proto__: 1}",
        "a: 1\na: 2",
        "a: [[nested]]",
        "a: [unclosed",
        "a:\n\t- tab",
        // A blank line that starts with a tab, after a key without a value.
        "a:\n\t",
        "a:\n\n\t\nb: 1",
        // A comment before the colon: YAML reads the scalar `a`, not a key.
        "a\t#: b",
        "a #: b",
        "- a sequence at the top",
        "a: 'unclosed",
        "a: \"bad \\q escape\"",
        "a: b: c",
        "a: 1\n---\nb: 2",
        "just a scalar"
      ]
    ) {
      expect(refusal(yaml), yaml).toMatchObject({ kind: "invalid" })
    }
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("reads a plain key as YAML does, named as JSON names it", () => {
    const yaml = "~: a\n.0: b\ntrue: c\n0x1F: d\n'~': e"
    expect(parseFrontmatter(yaml, limits)).toEqual({ "": "a", "0": "b", true: "c", "31": "d", "~": "e" })
    expect(parseFrontmatter(yaml, limits)).toEqual(parseYaml(yaml, { schema: "core", uniqueKeys: true }))
    // Two spellings of one key are a duplicate.
    expect(refusal("1: a\n01: b")).toMatchObject({ kind: "invalid" })
  })

  it("bounds depth, nodes and bytes before they can cost anything", () => {
    // Deep nesting: block mappings and sequences.
    const deep = Array.from({ length: 200 }, (_, i) => `${" ".repeat(i * 2)}k${i}:`).join("\n") + " x"
    expect(refusal(deep)).toMatchObject({ kind: "too-large" })
    const deepSeq = Array.from({ length: 200 }, (_, i) => `${" ".repeat(i * 2)}-`).join("\n") + " x"
    expect(refusal(`a:\n${deepSeq.split("\n").map((l) => `  ${l}`).join("\n")}`).kind).toMatch(/too-large|invalid/)
    // Many nodes in few bytes.
    const many = `a: [${Array.from({ length: 5_000 }, () => "1").join(",")}]`
    expect(refusal(many)).toMatchObject({ kind: "too-large" })
    // Past the byte ceiling: refused before parsing.
    const big = `a: ${"x".repeat(limits.maxBytes)}`
    expect(refusal(big)).toMatchObject({ kind: "too-large" })
    const started = performance.now()
    expect(() => parseSkillMarkdown(`---\n${"a".repeat(10_000_000)}`, limits)).toThrow(FrontmatterError)
    expect(performance.now() - started).toBeLessThan(2_000)
    // Exactly the ceiling is read.
    const exact = `a: ${"x".repeat(limits.maxBytes - 3)}`
    expect(parseFrontmatter(exact, limits)).toEqual({ a: "x".repeat(limits.maxBytes - 3) })
  })

  it("a SKILL.md without its --- lines is refused", () => {
    expect(() => parseSkillMarkdown("name: x\n", limits)).toThrow(FrontmatterError)
    expect(() => parseSkillMarkdown("---\nname: x\n", limits)).toThrow(FrontmatterError)
  })
})

describe("the comparison with the entry's frontmatter", () => {
  it("every key both ways, objects in any order, arrays in order, no coercion", () => {
    expect(sameFrontmatter({ name: "a", description: "b", m: { x: 1, y: [1, 2] } }, { m: { y: [1, 2], x: 1 }, description: "b", name: "a" })).toBe(true)
    expect(sameFrontmatter({ name: "a" }, { name: "a", extra: null })).toBe(false)
    expect(sameFrontmatter({ name: "a", extra: null }, { name: "a" })).toBe(false)
    expect(sameFrontmatter({ v: "1" }, { v: 1 })).toBe(false)
    expect(sameFrontmatter({ v: [1, 2] }, { v: [2, 1] })).toBe(false)
    expect(sameFrontmatter({ v: { a: 1 } }, { v: [1] })).toBe(false)
    // An entry deeper than any frontmatter the reader accepts is simply different (no deep walk).
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = { a: deep }
    expect(sameFrontmatter(deep, { a: { a: 1 } })).toBe(false)
  })
})
