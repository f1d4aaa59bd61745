/**
 * The linear-time engine of output-schema patterns (`internal/linearRegExp.ts`): on a generated
 * family of patterns and strings it agrees with JavaScript's `RegExp` (`u` flag, what Ajv used),
 * and what it cannot run in linear time is refused rather than misread.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { RE2JS } from "re2js"
import { isBacktrackFree, linearRegExp as engineOn, translatePattern, UnsupportedPattern } from "../../src/internal/linearRegExp.js"

const linearRegExp = engineOn(RE2JS)

/** Characters where ECMA-262 and RE2 differ: line terminators, Unicode white space, astral ones. */
const alphabet = ["a", "b", "1", "_", "-", " ", "\t", "\n", "\r", "\u000b", "\u00a0", "\u2028", "\ufeff", "é", "Σ", "😀", "/", "."]

const literal = fc.constantFrom("a", "b", "1", "é", "😀", "\\.", "\\-", "\\/", "\\u00e9", "\\u{1F600}", "\\uD83D\\uDE00", "\\x41", "\\t", "\\n", "\\0")
const escapeClass = fc.constantFrom("\\d", "\\D", "\\w", "\\W", "\\s", "\\S", ".", "\\p{L}", "\\P{L}", "\\p{Lu}", "\\p{Letter}", "\\p{Script=Greek}", "\\p{Nd}")
const classItem = fc.constantFrom("a", "b-z", "0-9", "\\d", "\\w", "\\s", "é", "😀", "\\-", "\\u2028", "\\b", "[", "\\]", ".", "\\p{L}", "^")
const characterClass = fc.tuple(fc.boolean(), fc.array(classItem, { minLength: 0, maxLength: 3 })).map(([negated, items]) =>
  `[${negated ? "^" : ""}${items.join("")}]`
)
const quantifier = fc.constantFrom("", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?")
const groupQuantifiers: ReadonlySet<string> = new Set(["?", "{2}", "{0,2}"])

const pattern: fc.Arbitrary<string> = fc.letrec<{ expr: string; term: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    literal,
    escapeClass,
    characterClass,
    fc.constantFrom("[\\s\\S]", "[^]", "[]", "\\b", "\\B"),
    tie("expr").map((inner) => `(${inner})`),
    tie("expr").map((inner) => `(?:${inner})`),
    tie("expr").map((inner) => `(?<name>${inner})`)
  ),
  // A quantifier applies to an atom; `\b` and `\B` cannot carry one in a `u` pattern. A group
  // repeats at most twice: the reference, JavaScript's backtracking RegExp, must stay quick on
  // every pattern of the family (nested unbounded repetitions are exponential for it).
  term: fc.tuple(tie("atom"), quantifier).map(([atom, q]) =>
    atom === "\\b" || atom === "\\B" ? atom : atom.startsWith("(") ? atom + (groupQuantifiers.has(q) ? q : "") : atom + q
  ),
  expr: fc.array(fc.array(tie("term"), { maxLength: 4 }).map((terms) => terms.join("")), { minLength: 1, maxLength: 3 }).map((
    alternatives
  ) => alternatives.join("|"))
})).expr.chain((body) => fc.tuple(fc.boolean(), fc.boolean()).map(([start, end]) => `${start ? "^" : ""}${body}${end ? "$" : ""}`))

const input = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((chars) => chars.join(""))

const isValidJavaScript = (source: string) => {
  try {
    new RegExp(source, "u")
    return true
  } catch {
    return false
  }
}

describe("linearRegExp", () => {
  it.prop(
    "agrees with JavaScript's RegExp (u flag) on every pattern of the family and every string",
    [pattern.filter(isValidJavaScript), fc.array(input, { minLength: 1, maxLength: 8 })],
    ([source, strings]) => {
      const linear = linearRegExp(source, "u")
      const native = new RegExp(source, "u")
      for (const text of strings) {
        // V8 tries a match between the two halves of an astral character, where `\B` holds
        // (both sides are non-word), though the `u` flag reads code points (ECMA-262's
        // AdvanceStringIndex skips that position; JavaScriptCore does): there the engine follows
        // the specification, shown by the example below, and V8 is no reference.
        if (source.includes("\\B") && /[\u{10000}-\u{10FFFF}]/u.test(text)) continue
        expect([source, text, linear.test(text)]).toEqual([source, text, native.test(text)])
      }
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("`\\B` is never found inside an astral character (ECMA-262; V8 finds it there)", () => {
    expect(linearRegExp("\\B", "u").test("a😀a")).toBe(false)
    expect(linearRegExp("\\B\\p{Lu}*", "u").test("a😀a")).toBe(false)
    expect(linearRegExp("\\B", "u").test("😀😀")).toBe(true)
    expect(linearRegExp("\\B", "u").test("ab")).toBe(true)
  })

  it("agrees on the differences it translates: `.`, `\\s`, escapes, empty classes", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["^.$", ["a", "\n", "\r", "\u2028", "😀", "\u0085"]],
      ["^\\s$", [" ", "\u00a0", "\ufeff", "\u000b", "\u3000", "\u0085", "a"]],
      ["^\\S+$", ["abc", "a b", "\u00a0"]],
      ["^[^\\s]$", ["a", " ", "\u2029"]],
      ["^\\u00e9$", ["é", "e"]],
      ["^\\uD83D\\uDE00$", ["😀", "\ud83d"]],
      ["^[]$", ["", "a"]],
      ["^[^]$", ["a", "\n", "😀"]],
      ["a$", ["a", "a\n"]],
      ["^[[:alpha:]$", ["a", "[", ":", "b", "z"]],
      ["^\\cJ$", ["\n"]],
      ["^[\\b]$", ["\b", "b"]]
    ]
    for (const [source, strings] of cases) {
      const linear = linearRegExp(source, "u")
      const native = new RegExp(source, "u")
      for (const text of strings) expect([source, text, linear.test(text)]).toEqual([source, text, native.test(text)])
    }
  })

  it("matches a catastrophic pattern in linear time: ^(a+)+$ against a long near-miss", () => {
    const catastrophic = linearRegExp("^(a+)+$", "u")
    expect(catastrophic.test(`${"a".repeat(100_000)}b`)).toBe(false)
    expect(catastrophic.test("a".repeat(100_000))).toBe(true)
  })

  it("refuses what has no linear-time meaning, and what JavaScript refuses", () => {
    for (
      const source of [
        "(?=a)b",
        "(?!a)b",
        "(?<=a)b",
        "(?<!a)b",
        "(a)\\1",
        "(?<n>a)\\k<n>",
        "[\\S]",
        "\\p{Alphabetic}",
        "\\p{ASCII}",
        "\\p{Script_Extensions=Greek}",
        "a{1001}",
        "(",
        "\\A",
        "[z-a]"
      ]
    ) {
      expect(() => linearRegExp(source, "u"), source).toThrow(UnsupportedPattern)
    }
    expect(() => linearRegExp("a", "")).toThrow(UnsupportedPattern)
  })

  it("runs natively only the patterns JavaScript matches without backtracking more than linearly", () => {
    for (const source of ["^[a-z0-9-]{8,64}$", "^[A-Z]{3}-[0-9]{4}$", "^\\d{4}-\\d{2}-\\d{2}$", "^.+$", "^[^@]*$", "^\\\\$", "^$", "^😀{2}é*?$"]) {
      expect(isBacktrackFree(source), source).toBe(true)
    }
    for (
      const source of [
        "^(a+)+$",
        "^a*a*$",
        "^a+b$",
        "[a-z]+$",
        "^[a-z]+",
        "^(?:a)$",
        "^a|b$",
        "^a\\$",
        "^\\b$",
        "^\\1$",
        "^[^@]+@[^@]+$",
        "^a{2,}b{3}$"
      ]
    ) {
      expect(isBacktrackFree(source), source).toBe(false)
    }
    // Either way, the same answers.
    const native = linearRegExp("^[A-Z]{3}-[0-9]{4}$", "u")
    expect([native.test("ABC-1234"), native.test("ABC-123"), native.test("abc-1234")]).toEqual([true, false, false])
  })

  it("distinguishes patterns by their text (Ajv shares a compiled pattern per toString)", () => {
    expect(String(linearRegExp("a", "u"))).not.toBe(String(linearRegExp("b", "u")))
    expect(String(linearRegExp("a", "u"))).toBe(String(linearRegExp("a", "u")))
    expect(translatePattern("(?<year>\\d{4})")).toBe("(?:\\d{4})")
  })
})
