/**
 * The CLI's exit codes in docs/REFERENCE.md against the CLI's own table (`exitCodes`,
 * `exitCodeOf`): every code is a row, no row names a code the CLI does not use, and the row of
 * each tag's code names that tag.
 */
import { McpConnectionError } from "@phasebound/client"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { type CliTag, exitCodeOf, exitCodes } from "../src/record.js"

const reference = readFileSync(fileURLToPath(new URL("../../../docs/REFERENCE.md", import.meta.url)), "utf8")

/** The rows of the table under "### Exit codes": each code and the text of its row. */
const documentedRows = (): ReadonlyMap<number, string> => {
  const start = reference.indexOf("\n### Exit codes\n")
  if (start < 0) throw new Error(`docs/REFERENCE.md has no "### Exit codes"`)
  const end = reference.indexOf("\n#", start + 1)
  const text = reference.slice(start, end < 0 ? undefined : end)
  return new Map(
    text
      .split("\n")
      .map((line) => /^\| (\d+) \|(.*)\|$/.exec(line))
      .flatMap((row) => (row === null ? [] : [[Number(row[1]), row[2]!] as const]))
  )
}

const cliTags: ReadonlyArray<CliTag> = ["Interrupted", "InternalError"]

describe("docs/REFERENCE.md, CLI exit codes", () => {
  const rows = documentedRows()

  it("documents every exit code the CLI uses, and no other", () => {
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual(Object.values(exitCodes).sort((a, b) => a - b))
  })

  it("names each tag in the row of the code the CLI exits with for it", () => {
    const tags = [...McpConnectionError.Tag.literals, ...cliTags]
    const misplaced = tags.filter((tag) => !(rows.get(exitCodeOf(tag)) ?? "").includes(`\`${tag}\``))
    expect(misplaced).toEqual([])
  })
})
