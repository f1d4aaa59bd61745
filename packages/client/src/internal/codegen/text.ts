/**
 * The text of generated source that comes from another party's data (docs/DESIGN.md, "Typed
 * tools"): identifiers derived from names, string literals, comments. Nothing a server writes
 * can end a literal or a comment, or start a line of code.
 */

/** A string literal: `JSON.stringify` escapes quotes, backslashes, control characters and lone surrogates. */
export const literal = (text: string): string => JSON.stringify(text)

/** A property key of an object literal or a type literal: always quoted; `__proto__` computed (a quoted one sets the prototype). */
export const propertyKey = (key: string): string => key === "__proto__" ? `[${literal(key)}]` : literal(key)

const maxCommentLength = 2_000

/**
 * Comment text: control characters (line terminators included, and U+2028/U+2029, which end a
 * line in JavaScript) become spaces except `\n`, which separates lines; `*` followed by `/` can
 * never appear (a `*` before a `/` gets a space). Long text is cut at 2,000 code units.
 */
export const commentLines = (text: string): ReadonlyArray<string> => {
  const cut = text.length > maxCommentLength ? `${text.slice(0, maxCommentLength)}...` : text
  // eslint-disable-next-line no-control-regex
  const clean = cut.replace(/\r\n?|[\u2028\u2029]/g, "\n").replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, " ")
  return clean.split("\n").map((line) => line.replace(/\*(?=\/)/g, "* ").replace(/\s+$/, ""))
}

/** A JSDoc block at `indent`, or nothing for no text. */
export const jsDoc = (lines: ReadonlyArray<string>, indent: string): string => {
  const body = lines.flatMap(commentLines)
  while (body.length > 0 && body[body.length - 1] === "") body.pop()
  if (body.length === 0) return ""
  return `${indent}/**\n${body.map((line) => line === "" ? `${indent} *` : `${indent} * ${line}`).join("\n")}\n${indent} */\n`
}

/** An inline block comment, on one line. */
export const inlineComment = (text: string): string => `/* ${commentLines(text).join(" ").replace(/\*$/, "* ")} */`

const reserved = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with as implements interface " +
    "let package private protected public static yield await async of any boolean constructor declare get module require " +
    "number set string symbol type from unknown never object undefined arguments eval NaN Infinity globalThis " +
    // An export named `then` makes the module's namespace a thenable: `await import()` would call it.
    "then"
  ).split(" ")
)

/**
 * The words of a name: runs of ASCII letters and digits, and each other code point above ASCII
 * as a word of its own, `u` and its hex code (`搜索` is `u641c`, `u7d22`), so that names without
 * ASCII letters stay apart; ASCII punctuation and spaces separate words.
 */
const words = (name: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let word = ""
  for (const char of name) {
    const code = char.codePointAt(0)!
    if (/^[A-Za-z0-9]$/.test(char)) {
      word += char
      continue
    }
    if (word !== "") out.push(word)
    word = ""
    if (code > 0x7f) out.push(`u${code.toString(16)}`)
  }
  if (word !== "") out.push(word)
  return out
}

const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

/** `get-weather` is `GetWeather`, `搜索` is `U641cU7d22`; nothing usable is `fallback`; at most 64 characters. */
export const pascalCase = (name: string, fallback: string): string => {
  const joined = words(name).map(capitalize).join("").slice(0, 64)
  if (joined === "") return fallback
  return /^[0-9]/.test(joined) ? `_${joined}` : joined
}

/** `get-weather` is `getWeather`. */
export const camelCase = (name: string, fallback: string): string => {
  const pascal = pascalCase(name, fallback)
  return pascal.startsWith("_") ? pascal : pascal.charAt(0).toLowerCase() + pascal.slice(1)
}

/** Six hex digits of the FNV-1a hash of `text`'s UTF-16 code units. */
export const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0").slice(0, 6)
}

/**
 * The identifiers of one module, unique. A name already taken (or reserved) gets a suffix
 * derived from what it stands for (`origin`: the tool's name, say), not from how many came
 * before: `getWeather_3fa91c`. So a tool added to a server renames no other tool's identifiers,
 * unless its own name mangles to the same identifier and comes first in name order. Two origins
 * of the same hash (or the same origin twice) fall back to `_2`, `_3`...
 */
export class Identifiers {
  private readonly taken = new Set<string>()

  constructor(reservedNames: ReadonlyArray<string>) {
    for (const name of reservedNames) this.taken.add(name)
  }

  fresh(candidate: string, origin: string): string {
    let name = reserved.has(candidate) ? `${candidate}_` : candidate
    if (this.taken.has(name)) {
      name = `${name}_${shortHash(origin)}`
      if (this.taken.has(name)) {
        let n = 2
        while (this.taken.has(`${name}_${n}`)) n++
        name = `${name}_${n}`
      }
    }
    this.taken.add(name)
    return name
  }
}
