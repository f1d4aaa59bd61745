/**
 * The config values' expander (internal/configFormats/expand.ts; docs/GUIDE.md, "Variables"):
 * one pass, never recursive, literal outside references, bounded work and output. Properties
 * over generated templates and adversarial values (FastCheck).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Expand from "../../src/internal/configFormats/expand.js"
import { ServersFile } from "../../src/index.js"

const names = fc.constantFrom("A", "B", "HOME_DIR", "_x1", "TOKEN")
const ids = fc.constantFrom("api-key", "region", "a.b_c", "X")
/** Any text, `$`, `{` and `}` included: what a variable or an input may hold. */
const anyValue = fc.string({ unit: fc.constantFrom("a", "$", "{", "}", "${", "A", ":", "-", " ", "é", "input:", "env:"), maxLength: 30 })
/** Literal text with no reference in it. */
const literal = fc.string({ unit: fc.constantFrom("a", "b", " ", "/", ":", "-", "$", "}", "é"), maxLength: 10 }).filter((text) => !text.includes("${"))

type Segment =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "variable"; readonly name: string; readonly env: boolean; readonly fallback: string | undefined }
  | { readonly kind: "input"; readonly id: string }
  | { readonly kind: "builtin"; readonly name: "workspaceFolder" | "userHome" }

const segment: fc.Arbitrary<Segment> = fc.oneof(
  literal.map((text) => ({ kind: "text" as const, text })),
  fc.record({
    kind: fc.constant("variable" as const),
    name: names,
    env: fc.boolean(),
    fallback: fc.option(fc.string({ unit: fc.constantFrom("d", "$", "{", " ", "x"), maxLength: 6 }), { nil: undefined })
  }),
  ids.map((id) => ({ kind: "input" as const, id })),
  fc.constantFrom("workspaceFolder" as const, "userHome" as const).map((name) => ({ kind: "builtin" as const, name }))
)

const written = (part: Segment): string => {
  switch (part.kind) {
    case "text":
      return part.text
    case "variable":
      return `\${${part.env ? "env:" : ""}${part.name}${part.fallback === undefined ? "" : `:-${part.fallback}`}}`
    case "input":
      return `\${input:${part.id}}`
    case "builtin":
      return `\${${part.name}}`
  }
}

const environment = fc.dictionary(names, anyValue)
const inputs = fc.dictionary(ids, anyValue)

const lookupOf = (env: Record<string, string>, given: Record<string, string>): Expand.Lookup => ({
  variable: (name) => Object.hasOwn(env, name) ? env[name] : undefined,
  input: (id) => Object.hasOwn(given, id) ? given[id] : undefined,
  builtin: (name) => name === "workspaceFolder" ? "/work/${A}" : "/home/${B}"
})

describe("the expander", () => {
  it.prop(
    "a template of text and references expands to its parts' values, each substituted once and never scanned again",
    [fc.array(segment, { maxLength: 12 }), environment, inputs],
    ([parts, env, given]) => {
      const lookup = lookupOf(env, given)
      // Adjacent texts could join into a reference (`$` then `{...}`): separate each part.
      const template = parts.map(written).join("|")
      let missing = false
      const expected = parts.map((part) => {
        switch (part.kind) {
          case "text":
            return part.text
          case "variable": {
            const value = lookup.variable(part.name)
            if (part.fallback !== undefined && (value === undefined || value === "")) return part.fallback
            if (value === undefined) missing = true
            return value ?? ""
          }
          case "input": {
            const value = lookup.input(part.id)
            if (value === undefined) missing = true
            return value ?? ""
          }
          case "builtin":
            return lookup.builtin(part.name)!
        }
      }).join("|")
      const result = Expand.expand(template, lookup)
      if (missing) expect(result._tag).toBe("Missing")
      else expect(result).toEqual({ _tag: "Expanded", value: expected })
    }
  )

  it.prop("a value without `${` is its own expansion", [fc.string({ maxLength: 200 }).filter((text) => !text.includes("${"))], ([text]) => {
    expect(Expand.expand(text, lookupOf({}, {}))).toEqual({ _tag: "Expanded", value: text })
  })

  it.prop("references are found in order, as expand would look them up", [fc.array(segment, { maxLength: 12 })], ([parts]) => {
    const template = parts.map(written).join("|")
    const kinds = Expand.referencesOf(template).map((reference) => `${reference.kind}:${reference.name}`)
    expect(kinds).toEqual(parts.flatMap((part) => part.kind === "text" ? [] : [`${part.kind}:${part.kind === "input" ? part.id : part.name}`]))
  })

  it("a value holding a reference after substitution stays literal", () => {
    const lookup = lookupOf({ A: "${B}", B: "secret" }, { X: "${input:X}" })
    expect(Expand.expand("${A}-${input:X}-${workspaceFolder}", lookup)).toEqual({ _tag: "Expanded", value: "${B}-${input:X}-/work/${A}" })
  })

  it("defaults: an unset or empty variable takes it; the default is literal text", () => {
    const lookup = lookupOf({ EMPTY: "", SET: "v" }, {})
    expect(Expand.expand("${UNSET:-d} ${EMPTY:-e} ${SET:-x} ${env:UNSET:-${SET}}", lookup)).toEqual({ _tag: "Expanded", value: "d e v ${SET}" })
    expect(Expand.expand("${UNSET:-}", lookup)).toEqual({ _tag: "Expanded", value: "" })
    expect(Expand.expand("${UNSET}", lookup)).toEqual({ _tag: "Missing", reference: { kind: "variable", name: "UNSET", fallback: undefined } })
  })

  it("what is not a reference is literal: $VAR, ${1}, ${a b}, an unclosed ${, ${input:} ", () => {
    const lookup = lookupOf({ A: "x" }, {})
    for (const text of ["$A", "${1}", "${a b}", "${A", "${input:}", "${env:}", "${A:x}", "$${A"]) {
      expect(Expand.expand(text, lookup), text).toEqual({ _tag: "Expanded", value: text })
    }
    expect(Expand.expand("$${A}", lookup)).toEqual({ _tag: "Expanded", value: "$x" })
  })

  it("bounded: the work is linear on adversarial text, and the output never passes its ceiling", () => {
    const lookup = lookupOf({ A: "x".repeat(64 * 1024) }, {})
    for (const text of ["${a:-".repeat(200_000) + "}", "${".repeat(400_000) + "}", "${input:" + "a".repeat(800_000), "${A".repeat(200_000) + "}"]) {
      const started = performance.now()
      const result = Expand.expand(text, lookup)
      expect(performance.now() - started).toBeLessThan(2_000)
      expect(result._tag).not.toBe("Missing")
    }
    expect(Expand.expand("${A}".repeat(32), lookup)).toEqual({ _tag: "TooLarge" })
  })

  it("the input variable's name", () => {
    expect(Expand.inputVariable("github-token")).toBe("PHASEBOUND_INPUT_GITHUB_TOKEN")
    expect(Expand.inputVariable("a.b_c")).toBe("PHASEBOUND_INPUT_A_B_C")
  })

  it("ServersFile.expand: the environment only, with defaults; an input or a directory is unresolved", () => {
    const env = (name: string) => ({ TOKEN: "t" } as Record<string, string>)[name]
    expect(ServersFile.expand("Bearer ${TOKEN} ${env:TOKEN} ${NONE:-x}", env)).toBe("Bearer t t x")
    expect(ServersFile.expand("${input:a}", env)).toBeUndefined()
    expect(ServersFile.expand("${workspaceFolder}", env)).toBeUndefined()
    expect(ServersFile.expand("${NONE}", env)).toBeUndefined()
    expect(ServersFile.variablesOf("${A} ${env:B:-x} ${input:c} ${userHome}")).toEqual(["A", "B"])
  })
})
