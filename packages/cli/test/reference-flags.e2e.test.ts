/**
 * The flags of docs/REFERENCE.md against the built CLI (the slow tier builds it first): every
 * flag a command's help prints is in the reference's table of flags, and the table names no
 * flag the CLI does not take. @effect/cli's own options (`--help`, `--version`, `--wizard`,
 * `--completions`, `--log-level`) are the framework's, not phasebound's, and are left out.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { cliDir } from "./support/cli.js"

const reference = readFileSync(fileURLToPath(new URL("../../../docs/REFERENCE.md", import.meta.url)), "utf8")

/** The flags of the first column of the table under "### Flags". */
const documentedFlags = (): ReadonlySet<string> => {
  const start = reference.indexOf("\n### Flags\n")
  if (start < 0) throw new Error(`docs/REFERENCE.md has no "### Flags"`)
  const end = reference.indexOf("\n#", start + 1)
  const rows = reference.slice(start, end < 0 ? undefined : end).split("\n").filter((line) => line.startsWith("| `"))
  return new Set(rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0])))
}

/** The flags the usage lines of the help's COMMANDS part print, without the ANSI styling. */
const helpFlags = (): ReadonlySet<string> => {
  const help = execFileSync(process.execPath, [path.join(cliDir, "dist/bin.js"), "--help"], { encoding: "utf8" })
  // The styling: the escape character and its parameters.
  const plain = help.replace(/\u001b\[[0-9;]*m/g, "")
  const commands = plain.slice(plain.indexOf("COMMANDS"))
  return new Set([...commands.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]))
}

describe("docs/REFERENCE.md, CLI flags", () => {
  const printed = helpFlags()
  const documented = documentedFlags()

  it("reads the flags of every command from the built CLI's help", () => {
    // The help lists the commands: a change to its layout must not pass for an empty list.
    for (const flag of ["--call-timeout", "--stdio", "--auth-issuer", "--effect-identity"]) expect(printed).toContain(flag)
  })

  it("documents every flag the help prints", () => {
    expect([...printed].filter((flag) => !documented.has(flag)).sort()).toEqual([])
  })

  it("documents no flag the CLI does not take", () => {
    expect([...documented].filter((flag) => !printed.has(flag)).sort()).toEqual([])
  })
})
