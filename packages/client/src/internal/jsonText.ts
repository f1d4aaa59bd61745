/**
 * JSON text from a peer, parsed under a structure bound (docs/DESIGN.md, "Structure bounds").
 *
 * The byte ceilings bound the wire; parsed JSON costs far more than its bytes (`{},` is three
 * bytes and an object of its own), and a value nested deeper than the stack can walk breaks
 * every recursive walk after it (`JSON.stringify` among them). So before `JSON.parse`, one
 * linear scan of the text counts its values and its depth, and stops as soon as either passes
 * its bound: nothing absurd is ever built, and every value the client holds from a peer can be
 * walked recursively without overflowing the stack.
 *
 * `nodes` counts every `{`, `[` and `,` outside strings, plus one: an upper bound of the
 * values and members in the text (an element or a member is at most one more node than its
 * separators). The scan does not validate: `JSON.parse` does that, and only on text the scan
 * accepted.
 */

/** The bounds of one JSON text. */
export interface Structure {
  readonly maxDepth: number
  readonly maxNodes: number
}

/** What parsing one text under a structure bound gave. */
export type Parsed =
  | { readonly _tag: "Parsed"; readonly value: unknown; readonly nodes: number }
  | { readonly _tag: "TooDeep" }
  | { readonly _tag: "TooManyNodes" }
  | { readonly _tag: "Invalid"; readonly cause: unknown }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c

/**
 * The index just past the string whose opening quote is at `start`, or `text.length` when it
 * never closes (JSON.parse then refuses the text).
 */
const endOfString = (text: string, start: number): number => {
  let at = start + 1
  for (;;) {
    const quote = text.indexOf("\"", at)
    if (quote === -1) return text.length
    // A quote preceded by an odd number of backslashes is escaped.
    let backslashes = 0
    for (let i = quote - 1; i > start && text.charCodeAt(i) === BACKSLASH; i--) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    at = quote + 1
  }
}

/**
 * Scans a JSON text: the number of nodes (see the module comment), or which bound it passes
 * first. Linear in the text, never recursive.
 */
export const scan = (text: string, structure: Structure): number | "TooDeep" | "TooManyNodes" => {
  let depth = 0
  let nodes = 1
  const length = text.length
  for (let i = 0; i < length;) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = endOfString(text, i)
      continue
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > structure.maxDepth) return "TooDeep"
      if (++nodes > structure.maxNodes) return "TooManyNodes"
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--
    } else if (c === COMMA) {
      if (++nodes > structure.maxNodes) return "TooManyNodes"
    }
    i++
  }
  return nodes
}

/** Parses a JSON text under a structure bound: never throws, never builds more than the bound. */
export const parse = (text: string, structure: Structure): Parsed => {
  const scanned = scan(text, structure)
  if (typeof scanned !== "number") return { _tag: scanned }
  try {
    return { _tag: "Parsed", value: JSON.parse(text), nodes: scanned }
  } catch (cause) {
    return { _tag: "Invalid", cause }
  }
}

/**
 * The defaults: 128 levels (the bound serde_json, under the Rust SDK, also applies) and 2^20
 * nodes per message.
 */
export const defaultStructure: Structure = { maxDepth: 128, maxNodes: 1_048_576 }
