/**
 * The regular-expression engine of output checks (docs/DESIGN.md, "Typed results"): an output
 * schema's `pattern` and `patternProperties` run on RE2 (`re2js`, a port of RE2 in plain
 * JavaScript), whose matching time is linear in the input, instead of JavaScript's backtracking
 * `RegExp`, which a pattern such as `^(a+)+$` makes exponential.
 *
 * A pattern is first checked as JavaScript's own (`new RegExp(pattern, "u")`, what Ajv would
 * compile), then translated from ECMA-262 syntax to RE2 syntax so that it means the same:
 *
 * - `.` is `[^\n\r\u2028\u2029]` and `\s` / `\S` JavaScript's white space (RE2's own are
 *   narrower or wider); `\uHHHH` (four hex digits), a surrogate pair of them, `\u{...}`, `\cX` and `\0` become
 *   `\x{...}`; `[]` (matches nothing) and `[^]` (any character) are spelled out; a `[` inside a
 *   class is escaped (RE2 would read `[:alpha:]` as a POSIX class); named groups are plain groups.
 * - `\d`, `\w`, `\b` are ASCII in both; `^` and `$` mean the start and end of the input in both
 *   (no `m` flag); both match by code point.
 * - `\p{...}`: General_Category values and scripts by name (`\p{L}`, `\p{Lu}`, `\p{Letter}`,
 *   `\p{Script=Greek}`), with RE2's Unicode tables (their version may differ from the engine's).
 * - What RE2 cannot run in linear time is refused: lookahead and lookbehind, backreferences,
 *   `\S` inside a class, binary properties and script extensions, repeat counts over 1,000.
 *   A schema with such a pattern cannot be compiled (its tool is left out of the listing).
 *
 * One narrow kind of pattern, which JavaScript's own engine cannot make backtrack more than
 * linearly (`isBacktrackFree`), runs on it instead: about 20 times faster than RE2 here.
 *
 * Each `test` charges the output check's meter in proportion to the input's length and the
 * pattern's size (`internal/checkMeter.ts`), so that many matches cannot add up unbounded.
 */
import type { RE2JS } from "re2js"
import { charge } from "./checkMeter.js"

/** JavaScript's `\s` (ECMA-262 WhiteSpace and LineTerminator), as the inside of an RE2 class. */
const whiteSpace = "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}"
const anyCharacter = "\\x{0}-\\x{10FFFF}"
const syntaxCharacters = "^$\\.*+?()[]{}|/"

const longCategories: ReadonlyMap<string, string> = new Map([
  ["Letter", "L"],
  ["Cased_Letter", "LC"],
  ["Uppercase_Letter", "Lu"],
  ["Lowercase_Letter", "Ll"],
  ["Titlecase_Letter", "Lt"],
  ["Modifier_Letter", "Lm"],
  ["Other_Letter", "Lo"],
  ["Mark", "M"],
  ["Nonspacing_Mark", "Mn"],
  ["Spacing_Mark", "Mc"],
  ["Enclosing_Mark", "Me"],
  ["Number", "N"],
  ["Decimal_Number", "Nd"],
  ["Letter_Number", "Nl"],
  ["Other_Number", "No"],
  ["Punctuation", "P"],
  ["Connector_Punctuation", "Pc"],
  ["Dash_Punctuation", "Pd"],
  ["Open_Punctuation", "Ps"],
  ["Close_Punctuation", "Pe"],
  ["Initial_Punctuation", "Pi"],
  ["Final_Punctuation", "Pf"],
  ["Other_Punctuation", "Po"],
  ["Symbol", "S"],
  ["Math_Symbol", "Sm"],
  ["Currency_Symbol", "Sc"],
  ["Modifier_Symbol", "Sk"],
  ["Other_Symbol", "So"],
  ["Separator", "Z"],
  ["Space_Separator", "Zs"],
  ["Line_Separator", "Zl"],
  ["Paragraph_Separator", "Zp"],
  ["Other", "C"],
  ["Control", "Cc"],
  ["Format", "Cf"],
  ["Surrogate", "Cs"],
  ["Private_Use", "Co"],
  ["Unassigned", "Cn"]
])

/** Thrown for a pattern that has no linear-time meaning here; the compile fails with it. */
export class UnsupportedPattern extends Error {
  override readonly name = "UnsupportedPattern"
}

const unsupported = (what: string): never => {
  throw new UnsupportedPattern(what)
}

const hex = (codePoint: number) => `\\x{${codePoint.toString(16)}}`

const isHex = (text: string) => /^[0-9a-fA-F]+$/.test(text)

/** The RE2 name of a `\p{...}` body, or a refusal. */
const propertyName = (body: string): string => {
  const equals = body.indexOf("=")
  if (equals >= 0) {
    const key = body.slice(0, equals)
    const value = body.slice(equals + 1)
    if (key === "General_Category" || key === "gc") return longCategories.get(value) ?? value
    if (key === "Script" || key === "sc") return value
    return unsupported("property")
  }
  const category = longCategories.get(body) ?? body
  // A bare name is a General_Category value (one or two letters) or, in JavaScript, a binary
  // property (`Alphabetic`, `ASCII`, ...), which RE2 does not know: refused rather than misread.
  return /^[A-Z][a-z]?$/.test(category) || category === "LC" ? category : unsupported("binary property")
}

/**
 * The translation of one escape at `pattern[at] === "\\"`: its RE2 text and the index after it.
 * `inClass` tells the escapes whose meaning differs inside a class (`\b`, `\-`).
 */
const escape = (pattern: string, at: number, inClass: boolean): readonly [string, number] => {
  const next = pattern[at + 1] ?? unsupported("trailing backslash")
  switch (next) {
    case "d":
    case "D":
    case "w":
    case "W":
    case "t":
    case "n":
    case "r":
    case "f":
    case "v":
      return [`\\${next}`, at + 2]
    case "b":
    case "B":
      if (inClass) return next === "b" ? ["\\x{8}", at + 2] : unsupported("\\B in a class")
      return [`\\${next}`, at + 2]
    case "s":
      return [inClass ? whiteSpace : `[${whiteSpace}]`, at + 2]
    case "S":
      return inClass ? unsupported("\\S in a class") : [`[^${whiteSpace}]`, at + 2]
    case "0":
      return ["\\x{0}", at + 2]
    case "-":
      return ["\\-", at + 2]
    case "c": {
      const letter = pattern.charCodeAt(at + 2)
      return [hex(letter % 32), at + 3]
    }
    case "x":
      return [hex(parseInt(pattern.slice(at + 2, at + 4), 16)), at + 4]
    case "u": {
      if (pattern[at + 2] === "{") {
        const close = pattern.indexOf("}", at + 3)
        const digits = pattern.slice(at + 3, close)
        if (close < 0 || !isHex(digits)) return unsupported("\\u{}")
        return [hex(parseInt(digits, 16)), close + 1]
      }
      const unit = parseInt(pattern.slice(at + 2, at + 6), 16)
      // In a `u` pattern, an escaped surrogate pair is the one code point it encodes.
      if (unit >= 0xd800 && unit <= 0xdbff && pattern.startsWith("\\u", at + 6)) {
        const low = parseInt(pattern.slice(at + 8, at + 12), 16)
        if (low >= 0xdc00 && low <= 0xdfff && isHex(pattern.slice(at + 8, at + 12))) {
          return [hex(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)), at + 12]
        }
      }
      return [hex(unit), at + 6]
    }
    case "p":
    case "P": {
      const close = pattern.indexOf("}", at + 3)
      if (pattern[at + 2] !== "{" || close < 0) return unsupported("\\p")
      return [`\\${next}{${propertyName(pattern.slice(at + 3, close))}}`, close + 1]
    }
    case "k":
      return unsupported("named backreference")
    default:
      if (next >= "1" && next <= "9") return unsupported("backreference")
      if (syntaxCharacters.includes(next)) return [`\\${next}`, at + 2]
      return unsupported("escape")
  }
}

/** The class starting at `pattern[at] === "["`: its RE2 text and the index after it. */
const characterClass = (pattern: string, at: number): readonly [string, number] => {
  let i = at + 1
  const negated = pattern[i] === "^"
  if (negated) i++
  if (pattern[i] === "]") return [negated ? `[${anyCharacter}]` : `[^${anyCharacter}]`, i + 1]
  // `[\s\S]` and `[\S\s]`, the usual "any character", are the one use of `\S` in a class.
  const body = pattern.slice(i, i + 5)
  if ((body === "\\s\\S]" || body === "\\S\\s]")) return [negated ? `[^${anyCharacter}]` : `[${anyCharacter}]`, i + 5]
  let out = negated ? "[^" : "["
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === "]") return [`${out}]`, i + 1]
    if (c === "\\") {
      const [text, after] = escape(pattern, i, true)
      out += text
      i = after
    } else if (c === "[") {
      out += "\\["
      i++
    } else {
      const codePoint = pattern.codePointAt(i)!
      out += String.fromCodePoint(codePoint)
      i += codePoint > 0xffff ? 2 : 1
    }
  }
  return unsupported("unterminated class")
}

/**
 * The RE2 spelling of an ECMA-262 `u` pattern with the same meaning, or `UnsupportedPattern`
 * (also for a pattern JavaScript itself refuses).
 */
export const translatePattern = (pattern: string): string => {
  try {
    new RegExp(pattern, "u")
  } catch {
    return unsupported("not a pattern")
  }
  let out = ""
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === "\\") {
      const [text, after] = escape(pattern, i, false)
      out += text
      i = after
    } else if (c === "[") {
      const [text, after] = characterClass(pattern, i)
      out += text
      i = after
    } else if (c === ".") {
      out += "[^\\n\\r\\x{2028}\\x{2029}]"
      i++
    } else if (c === "(") {
      if (pattern[i + 1] !== "?") {
        out += "("
        i++
      } else if (pattern[i + 2] === ":") {
        out += "(?:"
        i += 3
      } else if (pattern[i + 2] === "<" && pattern[i + 3] !== "=" && pattern[i + 3] !== "!") {
        // A named group: its name is not needed to test a match.
        out += "(?:"
        i = pattern.indexOf(">", i) + 1
      } else {
        return unsupported("lookaround or group modifier")
      }
    } else {
      const codePoint = pattern.codePointAt(i)!
      out += String.fromCodePoint(codePoint)
      i += codePoint > 0xffff ? 2 : 1
    }
  }
  return out
}

const quantifierAt = (pattern: string, at: number): { readonly end: number; readonly fixed: boolean } | undefined => {
  const c = pattern[at]
  let end = at
  let fixed = true
  if (c === "*" || c === "+" || c === "?") {
    end = at + 1
    fixed = false
  } else if (c === "{") {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at, at + 24))
    if (match === null) return undefined
    end = at + match[0].length
    fixed = match[2] === undefined
  }
  if (end > at && pattern[end] === "?") end++
  return { end, fixed }
}

/**
 * Whether JavaScript's own engine runs `pattern` without backtracking more than linearly: `^`,
 * then single-character atoms (a literal, a class, `.`, `\d`, `\w`, `\s` and their negations)
 * each repeated a fixed number of times except the last, which may take any quantifier, then `$`.
 * Anchored at the start, such a pattern is tried at one position only; every atom but the last
 * has one way to match, and the last gives back at most what it took, one `$` test each. The
 * usual `^[a-z0-9-]{8,64}$` or `^\d{4}-\d{2}-\d{2}$` are of this kind and run natively (about 20
 * times faster than RE2 in JavaScript); anything else runs on RE2.
 */
export const isBacktrackFree = (pattern: string): boolean => {
  if (!pattern.startsWith("^") || !pattern.endsWith("$") || pattern.length < 2) return false
  const body = pattern.slice(1, -1)
  let i = 0
  let variableSeen = false
  while (i < body.length) {
    // Only the last atom may have a variable count.
    if (variableSeen) return false
    const c = body[i]!
    if (c === "[") {
      let close = i + 1
      while (close < body.length && body[close] !== "]") close += body[close] === "\\" ? 2 : 1
      if (close >= body.length) return false
      i = close + 1
    } else if (c === "\\") {
      if (!"dDwWsS.-/\\^$*+?()[]{}|".includes(body[i + 1] ?? "x")) return false
      i += 2
    } else if ("()|^$*+?{}".includes(c)) {
      return false
    } else {
      i += c.codePointAt(0)! > 0xffff ? 2 : 1
    }
    const quantifier = quantifierAt(body, i)
    if (quantifier === undefined) return false
    variableSeen = !quantifier.fixed
    i = quantifier.end
  }
  // (A pattern ending in `\$` leaves a lone `\` at the end of the body: refused above.)
  return true
}

/** What Ajv needs of a compiled pattern. */
export interface LinearRegExp {
  readonly test: (input: string) => boolean
  readonly toString: () => string
}

/** Ajv's `code.regExp` option: the engine, and the name standalone code would import it by. */
export type RegExpEngine = ((pattern: string, flags: string) => LinearRegExp) & { readonly code: string }

/**
 * Ajv's `code.regExp` engine on RE2 (`re2js`, loaded with Ajv, when a listing first needs it):
 * `regExp(pattern, "u")`. Throws `UnsupportedPattern` (the compile then fails) for what cannot
 * run in linear time or has no RE2 meaning.
 */
export const linearRegExp = (re2: typeof RE2JS): RegExpEngine =>
  Object.assign((pattern: string, flags: string): LinearRegExp => {
    if (flags !== "u") return unsupported("flags")
    let compiled: { readonly test: (input: string) => boolean }
    try {
      compiled = isBacktrackFree(pattern) ? new RegExp(pattern, "u") : re2.compile(translatePattern(pattern))
    } catch (error) {
      if (error instanceof UnsupportedPattern) throw error
      return unsupported("RE2 syntax")
    }
    // RE2's time is linear in the input, with a factor that grows with the pattern's program,
    // after a fixed cost per match (about 50 steps).
    const weight = 4 + (pattern.length >> 3)
    // Ajv shares one compiled pattern per distinct `toString()`.
    const key = `linear:${JSON.stringify(pattern)}`
    return {
      test: (input: string) => {
        charge(48 + input.length * weight)
        return compiled.test(input)
      },
      toString: () => key
    }
  }, { code: "phasebound/linearRegExp" })
