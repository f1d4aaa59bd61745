/**
 * The YAML frontmatter of a `SKILL.md` (docs/DESIGN.md, "Skills"), read by a small strict parser
 * of the subset skills use: block mappings and sequences, plain, single- and double-quoted
 * scalars (a plain scalar may go on over more indented lines), literal and folded block
 * scalars, one-line flow sequences and mappings of scalars, comments; YAML 1.2 core-schema
 * typing (null, booleans, integers, floats, strings).
 *
 * Everything outside the subset is refused, never read differently from a full YAML parser:
 * anchors and aliases (so no alias expansion, "billion laughs"), tags, directives, several
 * documents, complex keys, merge keys, nested flow collections, tabs as indentation, duplicate
 * keys and a `__proto__` key. The work is bounded before and while parsing: the frontmatter's
 * size in bytes, the depth of nesting and the number of nodes each have a ceiling
 * (`McpSkills.frontmatterLimits`), and the parser never recurses deeper than the depth ceiling,
 * so no input can overflow the stack or take more than linear time.
 */

/** Why a frontmatter was refused; the line stays in process (never in a public field). */
export class FrontmatterError extends Error {
  constructor(readonly kind: "invalid" | "too-large", readonly detail: string, readonly line?: number) {
    super(line === undefined ? detail : `line ${line}: ${detail}`)
    this.name = "FrontmatterError"
  }
}

export interface FrontmatterLimits {
  readonly maxBytes: number
  readonly maxDepth: number
  readonly maxNodes: number
}

export interface SplitMarkdown {
  /** The YAML between the `---` lines, line ends as LF. */
  readonly yaml: string
  /** The markdown after the closing `---` line. */
  readonly body: string
}

const utf8 = new TextEncoder()

/**
 * Splits a `SKILL.md` into its frontmatter and body: a BOM is dropped, CRLF read as LF; the file
 * must begin with a `---` line and the frontmatter end with one, within `maxBytes`.
 */
export const splitFrontmatter = (markdown: string, limits: FrontmatterLimits): SplitMarkdown => {
  let text = markdown.charCodeAt(0) === 0xfeff ? markdown.slice(1) : markdown
  if (!text.startsWith("---\n") && !text.startsWith("---\r\n")) throw new FrontmatterError("invalid", "no opening --- line", 1)
  text = text.slice(text.indexOf("\n") + 1)
  // Only the first maxBytes (at most 4 bytes a character) are searched for the closing line.
  const window = text.slice(0, limits.maxBytes + 8)
  const close = /^---[\t ]*\r?$/m.exec(window)
  if (close === null) {
    throw new FrontmatterError(text.length > limits.maxBytes ? "too-large" : "invalid", "no closing --- line")
  }
  const yaml = text.slice(0, close.index).replaceAll("\r\n", "\n")
  if (utf8.encode(yaml).length > limits.maxBytes) throw new FrontmatterError("too-large", "frontmatter over its ceiling")
  let body = text.slice(close.index + close[0].length)
  if (body.startsWith("\n")) body = body.slice(1)
  return { yaml, body }
}

/** Splits and parses: the frontmatter as a JSON object, and the body. */
export const parseSkillMarkdown = (
  markdown: string,
  limits: FrontmatterLimits
): { readonly frontmatter: Record<string, unknown>; readonly body: string } => {
  const { body, yaml } = splitFrontmatter(markdown, limits)
  return { frontmatter: parseFrontmatter(yaml, limits), body }
}

interface Line {
  readonly no: number
  /** Leading spaces. */
  readonly indent: number
  /** The line after its leading spaces. */
  readonly text: string
}

const invalid = (detail: string, line?: number) => new FrontmatterError("invalid", detail, line)

/** Parses frontmatter YAML (the subset above) into a JSON object. */
export const parseFrontmatter = (yaml: string, limits: FrontmatterLimits): Record<string, unknown> => {
  if (utf8.encode(yaml).length > limits.maxBytes) throw new FrontmatterError("too-large", "frontmatter over its ceiling")
  const raws = yaml.split("\n")
  // The line end of the last line ends it; it does not open another.
  if (raws.at(-1) === "") raws.pop()
  const lines: Array<Line> = raws.map((raw, index) => {
    const indent = /^ */.exec(raw)![0].length
    return { no: index + 2, indent, text: raw.slice(indent) }
  })
  return new Parser(lines, limits).document()
}

const isBlank = (line: Line) => line.text === "" || /^[\t ]*$/.test(line.text)
const isComment = (line: Line) => line.text.startsWith("#")
const isSequenceItem = (text: string) => text === "-" || text.startsWith("- ") || text.startsWith("-\t")

/** Characters that may not begin a plain scalar here (YAML indicators this subset refuses or reads otherwise). */
const refusedStarts: Readonly<Record<string, string>> = {
  "&": "anchors are not supported",
  "*": "aliases are not supported",
  "!": "tags are not supported",
  "%": "directives are not supported",
  "@": "reserved indicator",
  "`": "reserved indicator",
  "?": "complex keys are not supported"
}

const forbiddenKeys: ReadonlySet<string> = new Set(["__proto__", "<<"])

class Parser {
  private index = 0
  private nodes = 0

  constructor(private readonly lines: Array<Line>, private readonly limits: FrontmatterLimits) {}

  document(): Record<string, unknown> {
    const first = this.peek()
    if (first === undefined) return {}
    if (first.indent !== 0) throw invalid("the frontmatter must start at column 0", first.no)
    if (first.text.startsWith("---") || first.text.startsWith("...")) throw invalid("several documents are not supported", first.no)
    if (isSequenceItem(first.text) || this.keyOf(first) === undefined) throw invalid("the frontmatter must be a mapping", first.no)
    const map = this.mapping(0, 1)
    const extra = this.peek()
    if (extra !== undefined) throw invalid("unexpected content", extra.no)
    return map
  }

  /** The next line with content (blank lines and comments skipped). */
  private peek(): Line | undefined {
    while (this.index < this.lines.length) {
      const line = this.lines[this.index]!
      // A line that starts with a tab is refused even when blank: YAML parsers disagree on
      // whether such a line may follow a key without a value, so none is read at all.
      if (line.indent === 0 && line.text.startsWith("\t")) throw invalid("tabs cannot indent", line.no)
      if (isBlank(line) || isComment(line)) {
        this.index++
        continue
      }
      if (line.text.startsWith("\t")) throw invalid("tabs cannot indent", line.no)
      return line
    }
    return undefined
  }

  private count(line: number) {
    if (++this.nodes > this.limits.maxNodes) throw new FrontmatterError("too-large", "too many nodes", line)
  }

  private depth(depth: number, line: number) {
    if (depth > this.limits.maxDepth) throw new FrontmatterError("too-large", "nested too deeply", line)
  }

  /** `key: rest` of a mapping line, or `undefined` when the line is not one. */
  private keyOf(line: Line): { readonly key: string; readonly rest: string } | undefined {
    const text = line.text
    const first = text[0]!
    if (first === "\"" || first === "'") {
      const { end, value } = quoted(text, 0, line.no)
      const after = text.slice(end)
      if (!/^[\t ]*:(?:[\t ]|$)/.test(after)) return undefined
      return { key: value, rest: after.slice(after.indexOf(":") + 1) }
    }
    const match = /:(?:[\t ]|$)/.exec(text)
    if (match === null) return undefined
    const key = text.slice(0, match.index).trimEnd()
    if (key === "") return undefined
    if (refusedStarts[first] !== undefined) throw invalid(refusedStarts[first], line.no)
    if ("[]{},#|>".includes(first) || /[\t ]#/.test(key)) return undefined
    // A plain key is read as YAML reads it (`1.0` is the number 1, `~` is null), then named as a
    // JSON object names it: "1", "" (what a full parser gives, so the two agree).
    const resolved = typed(key)
    return { key: resolved === null ? "" : String(resolved), rest: text.slice(match.index + 1) }
  }

  private mapping(indent: number, depth: number): Record<string, unknown> {
    const start = this.peek()
    this.depth(depth, start?.no ?? 0)
    this.count(start?.no ?? 0)
    const map: Record<string, unknown> = {}
    for (let line = this.peek(); line !== undefined && line.indent >= indent; line = this.peek()) {
      if (line.indent > indent) throw invalid("unexpected indentation", line.no)
      if (isSequenceItem(line.text)) throw invalid("a sequence item where a key was expected", line.no)
      const entry = this.keyOf(line)
      if (entry === undefined) throw invalid("a mapping key was expected", line.no)
      if (forbiddenKeys.has(entry.key)) throw invalid("a forbidden key", line.no)
      if (Object.hasOwn(map, entry.key)) throw invalid("a duplicate key", line.no)
      this.index++
      map[entry.key] = this.valueAfter(entry.rest, indent, line, depth)
    }
    return map
  }

  private sequence(indent: number, depth: number): Array<unknown> {
    const start = this.peek()
    this.depth(depth, start?.no ?? 0)
    this.count(start?.no ?? 0)
    const items: Array<unknown> = []
    for (let line = this.peek(); line !== undefined && line.indent === indent && isSequenceItem(line.text); line = this.peek()) {
      const rest = line.text.slice(1)
      const spaces = /^[\t ]*/.exec(rest)![0]
      if (spaces.includes("\t")) throw invalid("tabs cannot indent", line.no)
      const content = rest.slice(spaces.length)
      if (content === "" || content.startsWith("#")) {
        this.index++
        items.push(this.blockBelow(indent, line, depth, true))
        continue
      }
      // `- key: value` or `- - item`: the item is a block node at the column of its content.
      const column = indent + 1 + spaces.length
      const inner: Line = { no: line.no, indent: column, text: content }
      if (isSequenceItem(content) || this.keyOf(inner) !== undefined) {
        this.lines[this.index] = inner
        items.push(isSequenceItem(content) ? this.sequence(column, depth + 1) : this.mapping(column, depth + 1))
        continue
      }
      this.index++
      items.push(this.inline(content, indent, line, depth))
    }
    const next = this.peek()
    if (next !== undefined && next.indent > indent) throw invalid("unexpected indentation", next.no)
    return items
  }

  /** The value of `key:` (the rest of its line, or the block below it). */
  private valueAfter(rest: string, indent: number, line: Line, depth: number): unknown {
    const content = rest.replace(/^[\t ]+/, "")
    if (content === "" || content.startsWith("#")) return this.blockBelow(indent, line, depth, false)
    return this.inline(content, indent, line, depth)
  }

  /**
   * The node below a line that ends after `key:` or `-`: a more indented block, a sequence at the
   * same indentation (after a key), or null.
   */
  private blockBelow(indent: number, line: Line, depth: number, inSequence: boolean): unknown {
    const next = this.peek()
    if (next === undefined || next.indent < indent) return this.scalarNode(null, line.no)
    if (next.indent === indent) {
      if (!inSequence && isSequenceItem(next.text)) return this.sequence(indent, depth + 1)
      return this.scalarNode(null, line.no)
    }
    if (isSequenceItem(next.text)) return this.sequence(next.indent, depth + 1)
    if (this.keyOf(next) !== undefined) return this.mapping(next.indent, depth + 1)
    // A scalar alone on the next line(s).
    this.index++
    return this.inline(next.text, indent, next, depth)
  }

  /** A value on the line of its key or dash: a block scalar, a flow collection or a scalar. */
  private inline(content: string, indent: number, line: Line, depth: number): unknown {
    const first = content[0]!
    if (refusedStarts[first] !== undefined) throw invalid(refusedStarts[first], line.no)
    if (",]}".includes(first) || isSequenceItem(content)) throw invalid("a value that YAML refuses here", line.no)
    if (first === "|" || first === ">") return this.blockScalar(content, indent, line)
    if (first === "[" || first === "{") return this.flow(content, line, depth)
    if (first === "\"" || first === "'") {
      const { end, value } = quoted(content, 0, line.no)
      const after = content.slice(end)
      if (!/^(?:[\t ]+#.*|[\t ]*)$/.test(after)) throw invalid("content after a quoted scalar", line.no)
      return this.scalarNode(value, line.no)
    }
    return this.scalarNode(typed(this.plain(content, indent, line)), line.no)
  }

  /** A plain scalar, with its continuation lines (more indented than `indent`) folded in. */
  private plain(content: string, indent: number, line: Line): string {
    let text = plainLine(content, line.no)
    if (content.includes(" #") || content.includes("\t#")) return text
    let breaks = 0
    while (this.index < this.lines.length) {
      const next = this.lines[this.index]!
      if (isBlank(next)) {
        breaks++
        this.index++
        continue
      }
      if (next.indent <= indent || isComment(next)) break
      if (next.text.startsWith("\t")) throw invalid("tabs cannot indent", next.no)
      const more = plainLine(next.text, next.no)
      text += breaks === 0 ? ` ${more}` : "\n".repeat(breaks) + more
      breaks = 0
      this.index++
      if (next.text.includes(" #")) break
    }
    // Blank lines consumed after the scalar belong to nothing: step back over them.
    while (breaks-- > 0) this.index--
    return text
  }

  private blockScalar(header: string, indent: number, line: Line): string {
    const match = /^([|>])([-+]?)([1-9]?)([-+]?)(?:[\t ]+#.*|[\t ]*)$/.exec(header)
    if (match === null || (match[2] !== "" && match[4] !== "")) throw invalid("a block scalar header", line.no)
    const folded = match[1] === ">"
    const chomping = match[2] || match[4]
    let contentIndent = match[3] === "" ? undefined : indent + Number(match[3])
    const raw: Array<{ readonly spaces: number; readonly text: string }> = []
    while (this.index < this.lines.length) {
      const next = this.lines[this.index]!
      const spaces = next.indent
      if (next.text !== "") {
        if (contentIndent === undefined) {
          if (spaces <= indent) break
          contentIndent = spaces
          // Leading blank lines more indented than the content would be a YAML error.
          if (raw.some((r) => r.spaces > spaces)) throw invalid("a block scalar's leading blank line", next.no)
        }
        if (spaces < contentIndent) break
        raw.push({ spaces, text: " ".repeat(spaces - contentIndent) + next.text })
      } else {
        raw.push({ spaces, text: "" })
      }
      this.index++
    }
    // A line of spaces only is content when it passes the content's indentation, else empty.
    const lines = raw.map((r) => r.text !== "" ? r.text : contentIndent !== undefined && r.spaces > contentIndent ? " ".repeat(r.spaces - contentIndent) : "")
    let result = ""
    let emptyLines = 0
    let didReadContent = false
    let atMoreIndented = false
    for (const text of lines) {
      if (text === "") {
        emptyLines++
        continue
      }
      if (folded) {
        if (text.startsWith(" ") || text.startsWith("\t")) {
          atMoreIndented = true
          result += "\n".repeat(didReadContent ? 1 + emptyLines : emptyLines)
        } else if (atMoreIndented) {
          atMoreIndented = false
          result += "\n".repeat(emptyLines + 1)
        } else if (emptyLines === 0) {
          if (didReadContent) result += " "
        } else {
          result += "\n".repeat(emptyLines)
        }
      } else {
        result += "\n".repeat(didReadContent ? 1 + emptyLines : emptyLines)
      }
      didReadContent = true
      emptyLines = 0
      result += text
    }
    if (chomping === "+") result += "\n".repeat(didReadContent ? 1 + emptyLines : emptyLines)
    else if (chomping === "" && didReadContent) result += "\n"
    this.count(line.no)
    return result
  }

  private flow(content: string, line: Line, depth: number): unknown {
    this.depth(depth + 1, line.no)
    const open = content[0]!
    const close = open === "[" ? "]" : "}"
    const items: Array<unknown> = []
    const map: Record<string, unknown> = {}
    let i = 1
    const skip = () => {
      while (content[i] === " " || content[i] === "\t") i++
    }
    skip()
    if (content[i] === close) {
      i++
    } else {
      for (;;) {
        skip()
        const key = this.flowScalar(content, i, line)
        i = key.end
        skip()
        if (open === "{") {
          if (content[i] !== ":") throw invalid("a flow mapping entry without a value", line.no)
          i++
          skip()
          const value = this.flowScalar(content, i, line)
          i = value.end
          if (typeof key.value !== "string" && key.value !== null && typeof key.value !== "number" && typeof key.value !== "boolean") {
            throw invalid("a flow mapping key", line.no)
          }
          const name = String(key.value)
          if (forbiddenKeys.has(name)) throw invalid("a forbidden key", line.no)
          if (Object.hasOwn(map, name)) throw invalid("a duplicate key", line.no)
          map[name] = value.value
        } else {
          items.push(key.value)
        }
        skip()
        if (content[i] === ",") {
          i++
          skip()
          if (content[i] === close) {
            i++
            break
          }
          continue
        }
        if (content[i] === close) {
          i++
          break
        }
        throw invalid("a flow collection not closed on its line", line.no)
      }
    }
    if (!/^(?:[\t ]+#.*|[\t ]*)$/.test(content.slice(i))) throw invalid("content after a flow collection", line.no)
    this.count(line.no)
    return open === "[" ? items : map
  }

  /** One scalar of a flow collection, from `start`. */
  private flowScalar(content: string, start: number, line: Line): { readonly value: unknown; readonly end: number } {
    const first = content[start]
    if (first === undefined) throw invalid("a flow collection not closed on its line", line.no)
    if (first === "[" || first === "{") throw invalid("nested flow collections are not supported", line.no)
    if (refusedStarts[first] !== undefined) throw invalid(refusedStarts[first], line.no)
    if (first === "\"" || first === "'") {
      const { end, value } = quoted(content, start, line.no)
      this.count(line.no)
      return { value, end }
    }
    let end = start
    while (end < content.length && !",[]{}".includes(content[end]!) && !(content[end] === ":" && /[\t ,\]}]/.test(content[end + 1] ?? " "))) {
      if (content[end] === "#" && /[\t ]/.test(content[end - 1] ?? "")) break
      end++
    }
    const text = content.slice(start, end).trim()
    if (text === "") throw invalid("an empty flow entry", line.no)
    this.count(line.no)
    return { value: typed(text), end }
  }

  private scalarNode<A>(value: A, no: number): A {
    this.count(no)
    return value
  }
}

/** A plain scalar's text on one line: up to a comment, trimmed; `: ` inside is a mapping YAML would refuse here. */
const plainLine = (text: string, no: number): string => {
  const comment = /[\t ]#/.exec(text)
  const value = (comment === null ? text : text.slice(0, comment.index)).trim()
  if (/:(?:[\t ]|$)/.test(value)) throw invalid("a mapping inside a plain scalar", no)
  if (value.startsWith("---") || value.startsWith("...")) throw invalid("a document marker", no)
  return value
}

const escapes: Readonly<Record<string, string>> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  "\"": "\"",
  "/": "/",
  "\\": "\\",
  N: "\x85",
  _: "\xa0",
  L: "\u2028",
  P: "\u2029"
}

const hexLength: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 }

/** A quoted scalar from `start` (a one-line one): its value and where it ends. */
const quoted = (text: string, start: number, no: number): { readonly value: string; readonly end: number } => {
  const quote = text[start]
  let value = ""
  let i = start + 1
  if (quote === "'") {
    for (;;) {
      const next = text.indexOf("'", i)
      if (next === -1) throw invalid("a quoted scalar not closed on its line", no)
      value += text.slice(i, next)
      if (text[next + 1] === "'") {
        value += "'"
        i = next + 2
        continue
      }
      return { value, end: next + 1 }
    }
  }
  while (i < text.length) {
    const c = text[i]!
    if (c === "\"") return { value, end: i + 1 }
    if (c !== "\\") {
      value += c
      i++
      continue
    }
    const e = text[i + 1]
    if (e === undefined) break
    const length = hexLength[e]
    if (length !== undefined) {
      const hex = text.slice(i + 2, i + 2 + length)
      if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(hex)) throw invalid("an escape", no)
      const code = Number.parseInt(hex, 16)
      if (code > 0x10ffff) throw invalid("an escape", no)
      value += String.fromCodePoint(code)
      i += 2 + length
      continue
    }
    const replacement = escapes[e]
    if (replacement === undefined) throw invalid("an escape", no)
    value += replacement
    i += 2
  }
  throw invalid("a quoted scalar not closed on its line", no)
}

/** YAML 1.2 core schema: the value a plain scalar stands for. */
const typed = (text: string): unknown => {
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return null
  if (text === "true" || text === "True" || text === "TRUE") return true
  if (text === "false" || text === "False" || text === "FALSE") return false
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text)
  if (/^0o[0-7]+$/.test(text)) return Number.parseInt(text.slice(2), 8)
  if (/^0x[0-9a-fA-F]+$/.test(text)) return Number.parseInt(text.slice(2), 16)
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(text)) return Number(text)
  if (/^[-+]?\.(?:inf|Inf|INF)$/.test(text)) return text.startsWith("-") ? -Infinity : Infinity
  if (/^\.(?:nan|NaN|NAN)$/.test(text)) return Number.NaN
  return text
}
