/**
 * The catalog's glob matcher (internal/catalog/glob.ts; docs/DESIGN.md, "Catalog"): the same
 * answers as a reference built from the pattern's tokens with every literal escaped, on
 * generated patterns and names from a small alphabet (so that matches are frequent), and a
 * bounded number of steps on the patterns that make a naive backtracking matcher exponential.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Glob from "../../src/internal/catalog/glob.js"

/** The reference: the pattern translated token by token into a RegExp, literals escaped. */
const reference = (pattern: string): RegExp => {
  const chars = Array.from(pattern)
  let source = ""
  // Every literal as its code point: valid in and out of a class, never a metacharacter.
  const escape = (c: string) => `\\u{${c.codePointAt(0)!.toString(16)}}`
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    if (c === "*") source += "[\\s\\S]*"
    else if (c === "?") source += "[\\s\\S]"
    else if (c === "\\") source += escape(chars[++i]!)
    else if (c === "[") {
      let j = i + 1
      let body = ""
      const negated = chars[j] === "!" || chars[j] === "^"
      if (negated) j++
      let first = true
      while (chars[j] !== "]" || first) {
        first = false
        let low = chars[j]!
        if (low === "\\") low = chars[++j]!
        if (chars[j + 1] === "-" && chars[j + 2] !== undefined && chars[j + 2] !== "]") {
          let high = chars[j + 2]!
          j += 3
          if (high === "\\") high = chars[j++]!
          body += `${escape(low)}-${escape(high)}`
        } else {
          body += escape(low)
          j++
        }
      }
      source += `[${negated ? "^" : ""}${body}]`
      i = j
    } else source += escape(c)
  }
  return new RegExp(`^(?:${source})$`, "u")
}

const alphabet = ["a", "b", "_", "-", "."]
const nameArb = FastCheck.array(FastCheck.constantFrom(...alphabet), { maxLength: 12 }).map((cs) => cs.join(""))
const classArb = FastCheck.tuple(
  FastCheck.boolean(),
  FastCheck.array(
    FastCheck.oneof(
      FastCheck.constantFrom(...alphabet).map((c) => (c === "-" ? "\\-" : c)),
      FastCheck.constantFrom("a-b", "_-a", "--.")
    ),
    { minLength: 1, maxLength: 3 }
  )
).map(([negated, members]) => `[${negated ? "!" : ""}${members.join("")}]`)
const patternArb = FastCheck.array(
  FastCheck.oneof(
    { weight: 4, arbitrary: FastCheck.constantFrom(...alphabet) },
    { weight: 2, arbitrary: FastCheck.constant("*") },
    { weight: 2, arbitrary: FastCheck.constant("?") },
    { weight: 1, arbitrary: FastCheck.constantFrom("\\*", "\\?", "\\[", "\\\\") },
    { weight: 1, arbitrary: classArb }
  ),
  { minLength: 1, maxLength: 8 }
).map((parts) => parts.join(""))

describe("catalog globs", () => {
  it.prop("agree with the escaped reference on generated patterns and names (and refuse what it cannot compile)", [patternArb, nameArb], ([pattern, name]) => {
    const glob = Glob.compile(pattern)
    // A class whose range is reversed (`[a--.]`) is refused by both.
    if (glob === undefined) return void expect(() => reference(pattern)).toThrow(SyntaxError)
    expect(Glob.matches(glob, name)).toBe(reference(pattern).test(name))
  }, { fastCheck: { numRuns: 3_000 } })

  it.prop("a name built from the pattern (each token replaced by what it matches) matches", [
    FastCheck.array(FastCheck.tuple(FastCheck.constantFrom("*", "?", "lit"), FastCheck.constantFrom(...alphabet), nameArb), { maxLength: 8 })
  ], ([parts]) => {
    const pattern = parts.map(([kind, c]) => (kind === "lit" ? c : kind)).join("")
    const name = parts.map(([kind, c, run]) => (kind === "*" ? run : c)).join("")
    if (pattern.length === 0) return
    expect(Glob.matches(Glob.compile(pattern)!, name)).toBe(true)
  })

  it("examples: stars, one character, classes, negation, escapes, whole-name and case-sensitive", () => {
    const m = (pattern: string, name: string) => Glob.matches(Glob.compile(pattern)!, name)
    expect(m("delete_*", "delete_repo")).toBe(true)
    expect(m("delete_*", "undelete_repo")).toBe(false)
    expect(m("*_admin", "user_admin")).toBe(true)
    expect(m("get_?", "get_x")).toBe(true)
    expect(m("get_?", "get_xy")).toBe(false)
    expect(m("v[0-9]", "v7")).toBe(true)
    expect(m("v[!0-9]", "v7")).toBe(false)
    expect(m("v[^0-9]", "vx")).toBe(true)
    expect(m("[]]", "]")).toBe(true)
    expect(m("[a-]", "-")).toBe(true)
    expect(m("a\\*", "a*")).toBe(true)
    expect(m("a\\*", "ab")).toBe(false)
    expect(m("Search", "search")).toBe(false)
    expect(m("*", "")).toBe(true)
    expect(m("é?", "éü")).toBe(true)
  })

  it("refuses an empty, too long or malformed pattern", () => {
    for (const bad of ["", "[abc", "a\\", "[z-a]", "[", "[!]", "x".repeat(Glob.maxPatternLength + 1)]) {
      expect(Glob.compile(bad), JSON.stringify(bad.slice(0, 20))).toBeUndefined()
    }
    expect(Glob.compile("x".repeat(Glob.maxPatternLength))).toBeDefined()
  })

  it("the patterns that make a backtracking matcher exponential take at most |name| x |pattern| steps (here: at once)", () => {
    // `a*a*a*...b` against `aaaa...`: one backtrack point only, so the walk is quadratic at worst.
    const pattern = `${"a*".repeat(100)}b`
    const name = "a".repeat(128)
    const glob = Glob.compile(pattern)!
    let answers = 0
    for (let i = 0; i < 100; i++) if (!Glob.matches(glob, name)) answers++
    expect(answers).toBe(100)
  })
})
