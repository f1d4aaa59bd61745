/**
 * The glob patterns of a catalog's allow and block lists (docs/DESIGN.md, "Catalog"), matched
 * on a server's own tool name without building a `RegExp` from the caller's text:
 *
 * - `*` any run of characters (the empty one too), `?` exactly one character;
 * - `[abc]`, `[a-z]` one character of the class, `[!abc]` or `[^abc]` one character outside it
 *   (a `]` right after `[`, `[!` or `[^` is a member; a `-` first or last is a member);
 * - `\x` the character `x` itself (so `\*` is a star);
 * - anything else is itself, compared exactly (case-sensitive), by code point.
 *
 * A pattern is compiled once into tokens, and refused (`undefined`) when it is empty, longer than
 * `maxPatternLength`, or malformed (a `[` never closed, a trailing `\`, a range whose ends are
 * reversed). Matching is the two-cursor walk with one backtrack point (the last `*`): a star
 * never backtracks past an earlier one, so the steps are at most |name| × |pattern|, and the
 * catalog only ever matches names of at most 128 characters.
 */

/** The longest pattern accepted, in characters. */
export const maxPatternLength = 256

/** The pattern that matches `name` and nothing else: each of `* ? [ ] \` escaped with `\`. */
export const literal = (name: string): string => name.replace(/[*?[\]\\]/g, "\\$&")

type Token =
  | { readonly _tag: "Star" }
  | { readonly _tag: "One" }
  | { readonly _tag: "Char"; readonly char: string }
  | { readonly _tag: "Class"; readonly negated: boolean; readonly ranges: ReadonlyArray<readonly [number, number]> }

/** A compiled pattern. */
export interface Glob {
  readonly source: string
  readonly tokens: ReadonlyArray<Token>
}

/** Compiles a pattern, or `undefined` when it is refused (see the module comment). */
export const compile = (source: string): Glob | undefined => {
  if (source.length === 0 || source.length > maxPatternLength) return undefined
  const chars = Array.from(source)
  const tokens: Array<Token> = []
  let i = 0
  while (i < chars.length) {
    const c = chars[i]!
    if (c === "*") {
      // Consecutive stars mean one.
      if (tokens.at(-1)?._tag !== "Star") tokens.push({ _tag: "Star" })
      i++
    } else if (c === "?") {
      tokens.push({ _tag: "One" })
      i++
    } else if (c === "\\") {
      if (i + 1 >= chars.length) return undefined
      tokens.push({ _tag: "Char", char: chars[i + 1]! })
      i += 2
    } else if (c === "[") {
      const parsed = parseClass(chars, i + 1)
      if (parsed === undefined) return undefined
      tokens.push(parsed.token)
      i = parsed.next
    } else {
      tokens.push({ _tag: "Char", char: c })
      i++
    }
  }
  return { source, tokens }
}

/** A class from just after its `[`: its token and the index after its `]`. */
const parseClass = (chars: ReadonlyArray<string>, start: number): { readonly token: Token; readonly next: number } | undefined => {
  let i = start
  const negated = chars[i] === "!" || chars[i] === "^"
  if (negated) i++
  const ranges: Array<readonly [number, number]> = []
  let first = true
  while (i < chars.length) {
    let c = chars[i]!
    if (c === "]" && !first) return { token: { _tag: "Class", negated, ranges }, next: i + 1 }
    first = false
    if (c === "\\") {
      if (i + 1 >= chars.length) return undefined
      c = chars[++i]!
    }
    const low = c.codePointAt(0)!
    // `a-z`, unless the `-` is the class's last character.
    if (chars[i + 1] === "-" && i + 2 < chars.length && chars[i + 2] !== "]") {
      let end = chars[i + 2]!
      let skip = 3
      if (end === "\\") {
        if (i + 3 >= chars.length) return undefined
        end = chars[i + 3]!
        skip = 4
      }
      const high = end.codePointAt(0)!
      if (high < low) return undefined
      ranges.push([low, high])
      i += skip
    } else {
      ranges.push([low, low])
      i++
    }
  }
  return undefined
}

const matchesOne = (token: Token, char: string): boolean => {
  switch (token._tag) {
    case "One":
      return true
    case "Char":
      return token.char === char
    case "Class": {
      const code = char.codePointAt(0)!
      let inside = false
      for (const [low, high] of token.ranges) {
        if (code >= low && code <= high) {
          inside = true
          break
        }
      }
      return inside !== token.negated
    }
    case "Star":
      return false
  }
}

/** Whether the whole of `name` matches the pattern. */
export const matches = (glob: Glob, name: string): boolean => {
  const chars = Array.from(name)
  const tokens = glob.tokens
  let t = 0
  let n = 0
  // The last star seen, and the name position it was tried at.
  let star = -1
  let resume = 0
  while (n < chars.length) {
    const token = tokens[t]
    if (token !== undefined && token._tag === "Star") {
      star = t++
      resume = n
    } else if (token !== undefined && matchesOne(token, chars[n]!)) {
      t++
      n++
    } else if (star !== -1) {
      // The last star takes one more character; what follows it starts over.
      t = star + 1
      n = ++resume
    } else {
      return false
    }
  }
  while (t < tokens.length && tokens[t]!._tag === "Star") t++
  return t === tokens.length
}
