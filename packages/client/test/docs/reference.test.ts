/**
 * docs/REFERENCE.md against the declarations it documents: the error tags, reasons, stages,
 * phases, limits and authorization steps are the literals of `McpConnectionError`'s Schemas,
 * and the option tables the fields of the options' Schemas (src/internal/options.ts), no more
 * and no fewer (docs/CONTRIBUTING.md, "Documentation").
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import type * as AST from "effect/SchemaAST"
import * as Options from "../../src/internal/options.js"
import { AuthorizationStep, Limit, Phase, Reason, Stage, Tag } from "../../src/McpConnectionError.js"

const reference = readFileSync(fileURLToPath(new URL("../../../../docs/REFERENCE.md", import.meta.url)), "utf8")

/** The text of the section under `heading`, up to the next heading of its level or above. */
const section = (heading: string): string => {
  const level = /^#+/.exec(heading)![0].length
  const start = reference.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`docs/REFERENCE.md has no "${heading}"`)
  const rest = reference.slice(start + heading.length + 2)
  const next = rest.search(new RegExp(`^#{1,${level}} `, "m"))
  return next < 0 ? rest : rest.slice(0, next)
}

/** The backquoted words of the first column of a section's table (its header row left out). */
const firstColumn = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) => [...line.split("|")[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!))

/** The backquoted words of the bullet of `The record` that starts with `field`. */
const listed = (field: string): ReadonlyArray<string> => {
  const bullet = section("### The record").split("\n- ").find((item) => item.startsWith(`\`${field}\``))
  if (bullet === undefined) throw new Error(`"The record" has no bullet for ${field}`)
  return [...bullet.slice(field.length + 2).matchAll(/`([^`]+)`/g)].map((match) => match[1]!)
}

const sorted = (words: ReadonlyArray<string>) => [...new Set(words)].sort()

/** The first column of each table of a section, in order. */
const tables = (text: string): ReadonlyArray<ReadonlyArray<string>> =>
  text.split("\n\n").map((block) => block.trim()).filter((block) => block.startsWith("|")).map(firstColumn)

/** The options a struct declares, a nested struct's as `outer.inner` (`discovery.timeout`). */
const optionPaths = (ast: AST.AST, prefix = ""): ReadonlyArray<string> => {
  if (ast._tag !== "TypeLiteral") return []
  return ast.propertySignatures.flatMap((property) => {
    const name = `${prefix}${String(property.name)}`
    const types = property.type._tag === "Union" ? property.type.types : [property.type]
    // A struct with a check over its fields (the task budget's poll bounds) is a refinement of it.
    const struct = types.map((type) => type._tag === "Refinement" ? type.from : type).find((type) => type._tag === "TypeLiteral")
    return struct === undefined ? [name] : optionPaths(struct, `${name}.`)
  })
}

describe("docs/REFERENCE.md", () => {
  it("lists every error tag, and no other, in its table of tags", () => {
    expect(sorted(firstColumn(section("### Tags")))).toEqual(sorted(Tag.literals))
  })

  it("lists every reason, and no other, in its table of reasons", () => {
    const documented = firstColumn(section("### Reasons"))
    expect(sorted(documented)).toEqual(sorted(Reason.literals))
    expect(documented.length).toBe(new Set(documented).size)
  })

  it("lists every stage, phase, limit and authorization step of the record", () => {
    expect(sorted(listed("stage"))).toEqual(sorted(Stage.literals))
    expect(sorted(listed("phase"))).toEqual(sorted(Phase.literals))
    expect(sorted(listed("limit"))).toEqual(sorted(Limit.literals))
    expect(sorted(listed("authorizationStep"))).toEqual(sorted(AuthorizationStep.literals))
  })

  it("lists every option of connect, connectStdio and a call's budget, and no other, as their Schemas declare them", () => {
    const [http, stdio, call] = tables(section("## Connection options"))
    expect(sorted(http!)).toEqual(sorted(Object.keys(Options.HttpFields.fields)))
    expect(sorted(stdio!)).toEqual(sorted(Object.keys(Options.StdioFields.fields)))
    // A call's options: its budget (the Schema's) and what the call itself reads (`redact`: callTool's).
    expect(sorted(call!)).toEqual(sorted([...Object.keys(Options.CallBudget.fields), "onProgress", "meta", "effectIdentity", "redact"]))
  })

  it("lists every option of the policy and of auth, and no other, as their Schemas declare them", () => {
    // The policy's table ends with a call's own idle timeout.
    expect(sorted(firstColumn(section("## Policy")))).toEqual(sorted([...optionPaths(Options.PolicyFields.ast), "idleTimeout"]))
    expect(sorted(firstColumn(section("## Authorization options")))).toEqual(
      sorted([...optionPaths(Options.AuthClientFields.ast), ...optionPaths(Options.AuthRequestFields.ast)])
    )
  })

  it("names the Promise API's additions to connect's options", () => {
    const intro = section("## Connection options").split("\n|")[0]!
    const additions = [...Object.keys(Options.promiseFields), ...Object.keys(Options.promiseHttpFields)].filter((name) => name !== "handlers")
    for (const name of additions) expect(intro).toContain(`\`${name}\``)
  })

  it("lists every limit of LimitExceeded among the policy's options", () => {
    const options = firstColumn(section("## Policy"))
    for (const limit of Limit.literals) expect(options).toContain(limit)
  })
})
