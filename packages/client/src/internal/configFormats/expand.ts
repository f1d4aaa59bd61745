/**
 * The references a config value may hold, expanded in one pass (docs/GUIDE.md, "Variables"):
 *
 * - `${VAR}` and `${env:VAR}`: an environment variable; `${VAR:-default}` and
 *   `${env:VAR:-default}` its value, or `default` (literal text up to the first `}`) when unset
 *   or empty;
 * - `${input:id}`: a VS Code input (prompted by the CLI, or read from the environment);
 * - `${workspaceFolder}` and `${userHome}`: the project's directory and the user's home.
 *
 * One scan, left to right: what a reference is replaced by is never scanned again, so a value
 * holding `${X}` after substitution stays literal. Anything else (`$VAR`, `${1}`, an unclosed
 * `${`) is literal text. The work is linear in the value, and the result is bounded
 * (`maxExpandedLength`, or a smaller limit: what is left of an entry's budget,
 * `maxExpandedEntryLength`): a value cannot grow without end by repeating a long variable, nor
 * an entry by repeating it across 100,000 arguments.
 */

/** What one reference names. */
export type Reference =
  | { readonly kind: "variable"; readonly name: string; readonly fallback: string | undefined }
  | { readonly kind: "input"; readonly name: string }
  | { readonly kind: "builtin"; readonly name: "workspaceFolder" | "userHome" }

/** Where references are looked up; `undefined` is unset. */
export interface Lookup {
  readonly variable: (name: string) => string | undefined
  readonly input: (id: string) => string | undefined
  readonly builtin: (name: "workspaceFolder" | "userHome") => string | undefined
}

export type Expanded =
  | { readonly _tag: "Expanded"; readonly value: string }
  | { readonly _tag: "Missing"; readonly reference: Reference }
  | { readonly _tag: "TooLarge" }

/** The longest value an expansion may give (the bound of a config file). */
export const maxExpandedLength = 1024 * 1024

/** The most an entry's values may expand to, all together (`ConfigImport.expandEntry`). */
export const maxExpandedEntryLength = 1024 * 1024

const name = /[A-Za-z_][A-Za-z0-9_]*/y
const inputId = /[A-Za-z0-9_.-]+/y

/** The text from `at` matched by a sticky pattern, or undefined. */
const stickyMatch = (pattern: RegExp, text: string, at: number): string | undefined => {
  pattern.lastIndex = at
  const match = pattern.exec(text)
  return match === null ? undefined : match[0]
}

/**
 * The reference whose `${` is at `start`, and the index just past its `}`; undefined when the
 * text there is not a reference. `close` is the index of the first `}` after `start + 2`.
 */
const referenceAt = (value: string, start: number, close: number): readonly [Reference, number] | undefined => {
  let at = start + 2
  if (value.startsWith("input:", at)) {
    const id = stickyMatch(inputId, value, at + 6)
    return id !== undefined && at + 6 + id.length === close ? [{ kind: "input", name: id }, close + 1] : undefined
  }
  const explicit = value.startsWith("env:", at)
  if (explicit) at += 4
  const found = stickyMatch(name, value, at)
  if (found === undefined) return undefined
  at += found.length
  if (at === close) {
    if (!explicit && (found === "workspaceFolder" || found === "userHome")) return [{ kind: "builtin", name: found }, close + 1]
    return [{ kind: "variable", name: found, fallback: undefined }, close + 1]
  }
  if (value.startsWith(":-", at)) return [{ kind: "variable", name: found, fallback: value.slice(at + 2, close) }, close + 1]
  return undefined
}

/** Every reference of a value, in order (what `expand` would look up). */
export const referencesOf = (value: string): ReadonlyArray<Reference> => {
  const found: Array<Reference> = []
  scan(value, (reference) => {
    found.push(reference)
    return ""
  })
  return found
}

/**
 * The scan itself: `replace` gives each reference's text, or undefined to stop (a missing
 * value). Linear: the next `}` is searched for once per `}`, not once per `${`.
 */
const scan = (value: string, replace: (reference: Reference) => string | undefined, limit = maxExpandedLength): Expanded => {
  let out = ""
  let from = 0
  let close = -1
  for (;;) {
    const start = value.indexOf("${", from)
    if (start === -1) break
    if (close < start + 2) close = value.indexOf("}", start + 2)
    if (close === -1) break
    const reference = referenceAt(value, start, close)
    if (reference === undefined) {
      out += value.slice(from, start + 2)
      from = start + 2
      continue
    }
    const text = replace(reference[0])
    if (text === undefined) return { _tag: "Missing", reference: reference[0] }
    out += value.slice(from, start) + text
    if (out.length > limit) return { _tag: "TooLarge" }
    from = reference[1]
  }
  out += value.slice(from)
  return out.length > limit ? { _tag: "TooLarge" } : { _tag: "Expanded", value: out }
}

/** Expands every reference of `value` with `lookup`, in one pass, its result at most `limit` long (see the module comment). */
export const expand = (value: string, lookup: Lookup, limit = maxExpandedLength): Expanded =>
  scan(value, (reference) => {
    switch (reference.kind) {
      case "variable": {
        const found = lookup.variable(reference.name)
        if (reference.fallback !== undefined && (found === undefined || found === "")) return reference.fallback
        return found
      }
      case "input":
        return lookup.input(reference.name)
      case "builtin":
        return lookup.builtin(reference.name)
    }
  }, limit)

/** A lookup of the environment only: inputs and builtins are unset. */
export const environmentOnly = (variable: (name: string) => string | undefined): Lookup => ({
  variable,
  input: () => undefined,
  builtin: () => undefined
})

/**
 * The environment variable an input is read from when nobody is asked:
 * `PHASEBOUND_INPUT_` and the id in upper case, each character other than a letter or a digit
 * as `_` (`github-token` is `PHASEBOUND_INPUT_GITHUB_TOKEN`).
 */
export const inputVariable = (id: string): string => `PHASEBOUND_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`
