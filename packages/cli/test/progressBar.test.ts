/**
 * The progress bar of `call` on a fake terminal: its rendering, the cut to the terminal's
 * width, the server's message made printable, redrawing in place, and the clear at the end
 * however the call ends.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { makeProgressBar, renderProgress, type Terminal, withProgressBar } from "../src/progressBar.js"

const fakeTerminal = (columns: number | undefined = 80) => {
  const writes: Array<string> = []
  const terminal: Terminal = { columns: () => columns, write: (text) => void writes.push(text) }
  return { terminal, writes }
}

describe("renderProgress", () => {
  it("draws the share done in 20 cells, the counts and the message", () => {
    expect(renderProgress({ progress: 7, total: 14, message: "step 7" }, 80)).toBe("[##########----------] 7/14 step 7")
    expect(renderProgress({ progress: 0, total: 3 }, 80)).toBe("[--------------------] 0/3")
    expect(renderProgress({ progress: 3, total: 3 }, 80)).toBe("[####################] 3/3")
  })

  it("keeps the bar within its cells when the server reports more than its total, or less than nothing", () => {
    expect(renderProgress({ progress: 9, total: 3 }, 80)).toBe("[####################] 9/3")
    expect(renderProgress({ progress: -1, total: 3 }, 80)).toBe("[--------------------] -1/3")
  })

  it("without a total (or a total of 0): the count alone", () => {
    expect(renderProgress({ progress: 42, message: "rows" }, 80)).toBe("[?] 42 rows")
    expect(renderProgress({ progress: 5, total: 0 }, 80)).toBe("[?] 5")
  })

  it("fractional progress: at most two decimals", () => {
    expect(renderProgress({ progress: 1 / 3, total: 1 }, 80)).toBe("[#######-------------] 0.33/1")
  })

  it("cuts the line to the terminal's width, its last column left free", () => {
    const line = renderProgress({ progress: 1, total: 2, message: "x".repeat(200) }, 40)
    expect(line).toHaveLength(39)
    expect(line.startsWith("[##########----------] 1/2 xxx")).toBe(true)
    // A surrogate pair is not split.
    const emoji = renderProgress({ progress: 1, message: "😀😀😀😀" }, 9)
    expect(Array.from(emoji)).toHaveLength(8)
    expect(emoji).toBe("[?] 1 😀😀")
  })

  it("makes the server's message one printable line: escape sequences, CR, newlines become spaces", () => {
    const line = renderProgress({ progress: 1, total: 2, message: "a\x1b[2J\x1b]0;title\x07b\r\nc\u009bd" }, 200)
    expect(line).toBe("[##########----------] 1/2 a [2J ]0;title b c d")
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
  })
})

describe("makeProgressBar", () => {
  it("redraws in place with \\r, erases what a longer line left, and clears once at the end", () => {
    const { terminal, writes } = fakeTerminal(60)
    const bar = makeProgressBar(terminal)
    bar.update({ progress: 1, total: 2, message: "a longer message" })
    bar.update({ progress: 2, total: 2 })
    bar.clear()
    bar.clear()
    expect(writes).toEqual([
      "\r[##########----------] 1/2 a longer message\x1b[K",
      "\r[####################] 2/2\x1b[K",
      "\r\x1b[K"
    ])
  })

  it("nothing drawn, nothing cleared", () => {
    const { terminal, writes } = fakeTerminal()
    makeProgressBar(terminal).clear()
    expect(writes).toEqual([])
  })

  it("an unknown or zero width counts as 80 columns", () => {
    for (const columns of [undefined, 0]) {
      const { terminal, writes } = fakeTerminal(columns)
      makeProgressBar(terminal).update({ progress: 1, message: "m".repeat(300) })
      expect(writes[0]).toBe(`\r${"[?] 1 ".padEnd(79, "m")}\x1b[K`)
    }
  })
})

describe("withProgressBar", () => {
  it("without a terminal: no progress callback, nothing written", async () => {
    const result = await Effect.runPromise(withProgressBar(undefined, (onProgress) => Effect.succeed(onProgress)))
    expect(result).toBeUndefined()
  })

  it("clears the bar after success and after failure, before the caller prints", async () => {
    for (const outcome of ["success", "failure"] as const) {
      const { terminal, writes } = fakeTerminal()
      const exit = await Effect.runPromiseExit(withProgressBar(terminal, (onProgress) =>
        Effect.suspend(() => {
          onProgress!({ progress: 1, total: 1 })
          return outcome === "success" ? Effect.succeed("done") : Effect.fail("refused")
        })))
      expect(Exit.isSuccess(exit)).toBe(outcome === "success")
      expect(writes).toEqual(["\r[####################] 1/1\x1b[K", "\r\x1b[K"])
    }
  })

  it("clears the bar when the call is interrupted (SIGINT)", async () => {
    const { terminal, writes } = fakeTerminal()
    const exit = await Effect.runPromiseExit(
      withProgressBar(terminal, (onProgress) => Effect.zipRight(Effect.sync(() => onProgress!({ progress: 1 })), Effect.interrupt))
    )
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(writes).toEqual(["\r[?] 1\x1b[K", "\r\x1b[K"])
  })
})
