/**
 * The block a terminal is shown of a stdio server's stderr before the record (serverStderr.ts):
 * bounded in lines and columns, secrets redacted before anything is cut, printable only.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { shownColumns, shownLines, stderrBlock, stderrModeOf } from "../src/serverStderr.js"

describe("stderrBlock", () => {
  it("nothing written, nothing shown", () => {
    expect(stderrBlock("", [])).toBe("")
    expect(stderrBlock("\n\n", [])).toBe("")
  })

  it("labels the lines and indents them", () => {
    expect(stderrBlock("one\ntwo\n", [])).toBe("server stderr (last 2 lines):\n  one\n  two\n")
    expect(stderrBlock("alone", [])).toBe("server stderr (last line):\n  alone\n")
  })

  it(`keeps the last ${shownLines} lines, each cut to ${shownColumns} characters`, () => {
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i}`)
    const block = stderrBlock([...lines, "x".repeat(1000)].join("\n"), []).split("\n")
    expect(block[0]).toBe(`server stderr (last ${shownLines} lines):`)
    expect(block[1]).toBe("  line 31")
    expect(block[shownLines]).toBe(`  ${"x".repeat(shownColumns)}...`)
  })

  it("redacts secrets before cutting, and replaces control characters", () => {
    const secret = "s3cret-value-123"
    const long = `${"y".repeat(shownColumns - 5)}${secret}`
    const block = stderrBlock(`key ${secret}\r\n\x1b[2Jclear\n${long}\n`, [secret])
    expect(block).not.toContain("s3cr")
    expect(block).not.toContain("\x1b")
    expect(block).toContain("  key [redacted]\n")
    expect(block).toContain("   [2Jclear\n")
  })
})

describe("stderrModeOf", () => {
  it("tail by default; inherit, tail, drop; anything else is InvalidOption --server-stderr", () => {
    expect(Effect.runSync(stderrModeOf(undefined))).toBe("tail")
    for (const mode of ["inherit", "tail", "drop"]) expect(Effect.runSync(stderrModeOf(mode))).toBe(mode)
    const exit = Effect.runSyncExit(stderrModeOf("loud"))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("--server-stderr")
  })
})
