/**
 * docs/REFERENCE.md against the declarations it documents: the error tags, reasons, stages,
 * phases, limits and authorization steps are the literals of `McpConnectionError`'s Schemas,
 * no more and no fewer (docs/CONTRIBUTING.md, "Documentation").
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
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

  it("lists every limit of LimitExceeded among the policy's options", () => {
    const options = firstColumn(section("## Policy"))
    for (const limit of Limit.literals) expect(options).toContain(limit)
  })
})
