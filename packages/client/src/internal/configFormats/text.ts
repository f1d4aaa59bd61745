/**
 * A config file's text into a value, bounded (docs/DESIGN.md, "Config files"): the file's size
 * is checked before this (`ServersFile.maxFileBytes`), then its structure here, before and
 * after parsing, so that no file can make the reader build something absurd, walk deeper than
 * the stack, or set a prototype.
 *
 * - JSON and JSONC (comments and trailing commas, VS Code's own reading) with `jsonc-parser`:
 *   its scanner runs over the whole text first, counting values and depth and refusing a
 *   `"__proto__"` key, and only text that passed is parsed.
 * - TOML with `smol-toml` (TOML 1.0), under its own depth bound; the parsed value is then walked
 *   (iteratively: a dotted key can nest tables deeply without any bracket) under the same
 *   bounds.
 */
import * as Jsonc from "jsonc-parser"
import * as Toml from "smol-toml"

/** Why a text was refused. */
export type TextProblem = "invalid-syntax" | "too-deep" | "too-many-nodes" | "forbidden-key"

export type ParsedText =
  | { readonly _tag: "Parsed"; readonly value: unknown }
  | { readonly _tag: "Refused"; readonly problem: TextProblem }

/** The bounds of one config file: far beyond any real one. */
export const maxDepth = 32
export const maxNodes = 100_000

/** Keys that would reach an object's prototype when assigned. */
const forbiddenKey = (key: string): boolean => key === "__proto__"

// jsonc-parser's SyntaxKind (a const enum, so its values are written out here).
const OPEN_BRACE = 1
const CLOSE_BRACE = 2
const OPEN_BRACKET = 3
const CLOSE_BRACKET = 4
const COMMA = 5
const COLON = 6
const STRING = 10
const LINE_COMMENT = 12
const BLOCK_COMMENT = 13
const LINE_BREAK = 14
const TRIVIA = 15
const EOF = 17

/** One linear pass of the scanner: the text's depth, node count and keys checked. */
const scanJsonc = (text: string): TextProblem | undefined => {
  const scanner = Jsonc.createScanner(text, false)
  let depth = 0
  let nodes = 1
  let lastString: string | undefined
  for (;;) {
    const token = scanner.scan()
    if (token === EOF) return undefined
    if (token === LINE_COMMENT || token === BLOCK_COMMENT || token === LINE_BREAK || token === TRIVIA) continue
    if (scanner.getTokenError() !== 0) return "invalid-syntax"
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      if (++depth > maxDepth) return "too-deep"
      if (++nodes > maxNodes) return "too-many-nodes"
    } else if (token === CLOSE_BRACE || token === CLOSE_BRACKET) {
      depth--
    } else if (token === COMMA) {
      if (++nodes > maxNodes) return "too-many-nodes"
    } else if (token === COLON && lastString !== undefined && forbiddenKey(lastString)) {
      return "forbidden-key"
    }
    lastString = token === STRING ? scanner.getTokenValue() : undefined
  }
}

/** JSON or JSONC text (comments, trailing commas). */
export const parseJsonc = (text: string): ParsedText => {
  const problem = scanJsonc(text)
  if (problem !== undefined) return { _tag: "Refused", problem }
  const errors: Array<Jsonc.ParseError> = []
  const value: unknown = Jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false })
  return errors.length > 0 ? { _tag: "Refused", problem: "invalid-syntax" } : { _tag: "Parsed", value }
}

/**
 * Walks a parsed value without recursion: its depth and node count under the bounds, no
 * `__proto__` own key.
 */
export const checkStructure = (value: unknown): TextProblem | undefined => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  let nodes = 0
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (++nodes > maxNodes) return "too-many-nodes"
    if (typeof current !== "object" || current === null || current instanceof Date || current instanceof Toml.TomlDate) continue
    if (depth >= maxDepth) return "too-deep"
    for (const key of Object.keys(current)) {
      if (forbiddenKey(key)) return "forbidden-key"
      stack.push([(current as Record<string, unknown>)[key], depth + 1])
    }
  }
  return undefined
}

/** TOML 1.0 text. */
export const parseToml = (text: string): ParsedText => {
  let value: unknown
  try {
    value = Toml.parse(text, { maxDepth })
  } catch {
    return { _tag: "Refused", problem: "invalid-syntax" }
  }
  const problem = checkStructure(value)
  return problem === undefined ? { _tag: "Parsed", value } : { _tag: "Refused", problem }
}
