/**
 * Metering of the code Ajv generates for a schema (docs/DESIGN.md, "Typed results"; the meter
 * is `internal/checkMeter.ts`). Ajv hands its source to `code.process` before `new Function`;
 * this adds steps:
 *
 * - at the entry of every function (each compiled `$ref` target, so a fan-out of references is
 *   counted call by call; eight steps, what a call costs against a loop iteration),
 * - one at the start of every loop iteration (items, properties, enum values),
 * - one before every `if` statement (each keyword a schema applies: a wide schema's
 *   straight-line code is counted keyword by keyword), sixteen before each error object,
 * - for each concatenation of error lists (a failed `$ref` inside `anyOf` passes its errors up,
 *   so that a fan-out of references builds lists exponentially long), their length; for each
 *   `Object.keys` (`minProperties`, `maxProperties`) and `Object.assign` (the properties an
 *   `unevaluatedProperties` has seen), the number of keys.
 *
 * It also routes the runtime helpers Ajv calls (`scope.func[n]`: deep equality, string length)
 * through `wrap`, which swaps in metered ones. String literals (where a schema's property names
 * appear) are copied as they are, never rewritten. The one comment Ajv writes, naming the
 * schema's `$id` (it does so whenever `code.process` is set), is dropped: a hostile `$id` could
 * otherwise close it and inject code. Ajv's code has no other comment, no regular-expression
 * literal but the two of a JSON Pointer's escaping, no template literal, and always braces its
 * blocks; a source that does not look like that is refused (`undefined`), and its schema
 * cannot be compiled.
 */

/** The name of the meter in the generated code; Ajv's own names never contain `$`. */
const meterName = "pb$meter"
const step = `if(--${meterName}.left<0)${meterName}.spill();`
// A call costs several times a loop iteration (its frame, its destructured options); so does an
// error object (a failed branch of `anyOf`, say).
const callStep = `if((${meterName}.left-=8)<0)${meterName}.spill();`
const errorStep = `if((${meterName}.left-=16)<0)${meterName}.spill();`

const regExpLiterals = ["/~/g", "/\\//g"]

const isIdentifierChar = (c: string | undefined) =>
  c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c === "_" || c === "$")

/** Whether a statement can start at `source[at]`: after `;`, `{`, `}`, a comment, or at the start. */
const isStatementStart = (source: string, at: number): boolean => {
  let before = at - 1
  while (before >= 0 && source[before] === " ") before--
  const previous = source[before]
  const afterComment = previous === "/" && source[before - 1] === "*"
  return before < 0 || previous === ";" || previous === "{" || previous === "}" || afterComment
}

/** The index after the string literal that starts at `source[at]`, or -1. */
const endOfString = (source: string, at: number): number => {
  const quote = source[at]
  for (let i = at + 1; i < source.length; i++) {
    const c = source[i]
    if (c === "\\") i++
    else if (c === quote) return i + 1
    else if (c === "\n") return -1
  }
  return -1
}

/** The index after the parenthesized group that starts at `source[at] === "("`, or -1. */
const endOfParens = (source: string, at: number): number => {
  let depth = 0
  for (let i = at; i < source.length; i++) {
    const c = source[i]
    if (c === "\"" || c === "'") {
      const end = endOfString(source, i)
      if (end < 0) return -1
      i = end - 1
    } else if (c === "(") depth++
    else if (c === ")" && --depth === 0) return i + 1
  }
  return -1
}

/**
 * The metered source, or `undefined` for one that is not shaped as Ajv's. The meter is read
 * from `self` (the Ajv instance, the first parameter of Ajv's `new Function`) as
 * `self[meterProperty]`; helpers go through `self[meterProperty].wrap`.
 */
export const meterSource = (source: string, meterProperty: string): string | undefined => {
  const out: Array<string> = [`const ${meterName}=self[${JSON.stringify(meterProperty)}];`]
  let copied = 0
  const copy = (to: number) => {
    out.push(source.slice(copied, to))
    copied = to
  }
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    if (c === "\"" || c === "'") {
      const end = endOfString(source, i)
      if (end < 0) return undefined
      i = end
      continue
    }
    if (c === "`") return undefined
    // Ajv's only regular-expression literals: the escaping of a JSON Pointer token in an error's
    // `instancePath` (`key.replace(/~/g, "~0").replace(/\//g, "~1")`).
    const literal = c === "/" ? regExpLiterals.find((text) => source.startsWith(text, i)) : undefined
    if (literal !== undefined) {
      i += literal.length
      continue
    }
    if (c === "/" && source[i + 1] === "*") {
      // Ajv's one comment, `/*# sourceURL="<the schema's $id, as a JSON string>" */`: the `$id`
      // is the server's, and a `*/` inside it would end the comment early and turn the rest of
      // it into code. Read as JavaScript reads it, the string first, and dropped whole.
      const name = "/*# sourceURL="
      if (!source.startsWith(name, i) || source[i + name.length] !== "\"") return undefined
      const end = endOfString(source, i + name.length)
      if (end < 0 || !source.startsWith(" */", end)) return undefined
      copy(i)
      copied = end + 3
      i = end + 3
      continue
    }
    if (c === "/" && source[i + 1] === "/") return undefined
    if (!isIdentifierChar(c) || isIdentifierChar(source[i - 1]) || source[i - 1] === ".") {
      i++
      continue
    }
    // A word that starts here (not a property access such as `data.if`).
    let end = i
    while (isIdentifierChar(source[end])) end++
    const word = source.slice(i, end)
    if (word === "for" || word === "while" || word === "function") {
      const open = source.indexOf("(", end)
      const close = open < 0 ? -1 : endOfParens(source, open)
      if (close < 0 || source[close] !== "{") return undefined
      copy(close + 1)
      out.push(word === "function" ? callStep : step)
      i = close + 1
      continue
    }
    if (word === "if" && source[end] === "(") {
      // A statement of its own (not the `if` of an `else if`, which its `else` already counts).
      if (isStatementStart(source, i)) {
        copy(i)
        out.push(step)
      }
      i = end
      continue
    }
    if (word === "const" && source.startsWith(" err", end) && isStatementStart(source, i)) {
      copy(i)
      out.push(errorStep)
      i = end
      continue
    }
    if (word === "Object" && (source.startsWith(".keys(", end) || source.startsWith(".assign(", end))) {
      // `Object.keys(data).length` (`minProperties`), `Object.assign` (evaluated properties).
      copy(i)
      out.push(meterName)
      copied = end
      i = end
      continue
    }
    if (word === "vErrors" && source.startsWith(".concat(", end)) {
      copy(i)
      out.push(`${meterName}.concat(vErrors,`)
      copied = end + ".concat(".length
      i = copied
      continue
    }
    if (word === "scope" && source.startsWith(".func[", end)) {
      const close = source.indexOf("]", end)
      if (close < 0 || !/^\d+$/.test(source.slice(end + 6, close))) return undefined
      copy(i)
      out.push(`${meterName}.wrap(${source.slice(i, close + 1)})`)
      copied = close + 1
      i = close + 1
      continue
    }
    i = end
  }
  copy(source.length)
  return out.join("")
}
