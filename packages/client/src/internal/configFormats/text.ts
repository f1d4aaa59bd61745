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
 * - A large JSON file of which only a few members matter (Claude Code's `~/.claude.json`, which
 *   holds the user's history too): `extractJsonc` walks its tokens once, keeping nothing but the
 *   text of the members asked for, which are then parsed under the bounds above. The rest is
 *   never built.
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
const NULL = 7
const TRUE = 8
const FALSE = 9
const STRING = 10
const NUMBER = 11
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

/** How deep `extractJsonc` follows the members it skips (it builds nothing of them: a counter and a stack of frames). */
const maxSkippedDepth = 1024

/** What `extractJsonc` found: the top-level keys, and each path's value (parsed, bounded). */
export type Extracted =
  | { readonly _tag: "Extracted"; readonly keys: ReadonlySet<string>; readonly values: ReadonlyMap<number, unknown> }
  | { readonly _tag: "Refused"; readonly problem: TextProblem }

interface Frame {
  readonly object: boolean
  /** The key of the member being read (objects). */
  key: string | undefined
  state: "key" | "colon" | "value" | "after"
}

/**
 * The members of a JSON or JSONC object at `paths` (key paths from the top), each parsed under
 * the bounds of `parseJsonc`, and the top-level keys; nothing else of the text is built. One
 * linear pass of the scanner checks the whole text's grammar (nesting up to `maxSkippedDepth`)
 * and notes where each wanted member's value starts and ends; a member written twice (or an
 * ancestor of it) is its last value, as `JSON.parse` reads it. `values` is keyed by the index of
 * the path in `paths`.
 */
export const extractJsonc = (text: string, paths: ReadonlyArray<ReadonlyArray<string>>): Extracted => {
  const scanner = Jsonc.createScanner(text, false)
  const stack: Array<Frame> = []
  const keys = new Set<string>()
  const slices = new Map<number, readonly [number, number]>()
  let root = "value" as "value" | "done"
  let capture: { readonly path: number; readonly depth: number; readonly start: number } | undefined
  const refused = (problem: TextProblem): Extracted => ({ _tag: "Refused", problem })
  const longest = Math.max(0, ...paths.map((path) => path.length))

  /** Whether the value starting now is at `path` (`exact`) or at one of its ancestors. */
  const at = (path: ReadonlyArray<string>, exact: boolean): boolean =>
    (exact ? path.length === stack.length : path.length >= stack.length) && stack.every((frame, i) => frame.object && frame.key === path[i])

  /** The wanted path the value starting now is at, or -1. */
  const wantedHere = (): number => paths.findIndex((path) => at(path, true))

  /** A member written again replaces the whole of its first value: what was kept under it goes. */
  const forgetUnder = () => {
    for (const path of slices.keys()) if (at(paths[path]!, false)) slices.delete(path)
  }

  /** A value ended at `end`: the enclosing frame reads on; a capture of that value ends. */
  const valueEnded = (end: number) => {
    if (capture !== undefined && capture.depth === stack.length) {
      slices.set(capture.path, [capture.start, end])
      capture = undefined
    }
    const top = stack.at(-1)
    if (top === undefined) root = "done"
    else top.state = "after"
  }

  for (;;) {
    const token = scanner.scan()
    if (token === LINE_COMMENT || token === BLOCK_COMMENT || token === LINE_BREAK || token === TRIVIA) continue
    if (token === EOF) break
    if (scanner.getTokenError() !== 0) return refused("invalid-syntax")
    const top = stack.at(-1)
    const end = scanner.getTokenOffset() + scanner.getTokenLength()
    if (top !== undefined && top.object && top.state !== "value") {
      if (top.state === "key" && token === STRING) {
        top.key = scanner.getTokenValue()
        top.state = "colon"
        if (stack.length === 1) keys.add(top.key)
      } else if (top.state === "colon" && token === COLON) {
        top.state = "value"
      } else if (top.state === "after" && token === COMMA) {
        top.state = "key"
      } else if ((top.state === "key" || top.state === "after") && token === CLOSE_BRACE) {
        stack.pop()
        valueEnded(end)
      } else {
        return refused("invalid-syntax")
      }
      continue
    }
    if (top !== undefined && !top.object && top.state === "after") {
      if (token === COMMA) top.state = "value"
      else if (token === CLOSE_BRACKET) {
        stack.pop()
        valueEnded(end)
      } else return refused("invalid-syntax")
      continue
    }
    if (top !== undefined && !top.object && token === CLOSE_BRACKET) {
      stack.pop()
      valueEnded(end)
      continue
    }
    // A value starts here (in an object after its colon, in an array, or at the top).
    if (top === undefined && root === "done") return refused("invalid-syntax")
    if (slices.size > 0 && stack.length <= longest) forgetUnder()
    if (capture === undefined) {
      const wanted = wantedHere()
      if (wanted !== -1) capture = { path: wanted, depth: stack.length, start: scanner.getTokenOffset() }
    }
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      if (stack.length >= maxSkippedDepth) return refused("too-deep")
      stack.push({ object: token === OPEN_BRACE, key: undefined, state: token === OPEN_BRACE ? "key" : "value" })
    } else if (token === STRING || token === NUMBER || token === TRUE || token === FALSE || token === NULL) {
      valueEnded(end)
    } else {
      return refused("invalid-syntax")
    }
  }
  if (stack.length > 0 || root !== "done") return refused("invalid-syntax")
  const values = new Map<number, unknown>()
  for (const [path, [start, end]] of slices) {
    const parsed = parseJsonc(text.slice(start, end))
    if (parsed._tag === "Refused") return parsed
    values.set(path, parsed.value)
  }
  return { _tag: "Extracted", keys, values }
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
