/**
 * A call's progress bar on a terminal (stderr, only when it is a TTY and the run is not in
 * machine mode): `[#######-------] 7/14 message`, redrawn in place with `\r`, one line cut to
 * the terminal's width (a wrapped line could not be redrawn), cleared when the call ends. The
 * message is the server's: made one printable line first.
 */
import type { McpSchema } from "@phasebound/client"
import * as Effect from "effect/Effect"
import { oneLine } from "./output.js"

/** Where progress is drawn. */
export interface Terminal {
  /** Its width in columns, when known. */
  readonly columns: () => number | undefined
  readonly write: (text: string) => void
}

const barWidth = 20
const defaultColumns = 80
const clearLine = "\r\x1b[K"

/** At most two decimals: progress may be fractional. */
const number = (n: number): string => String(Math.round(n * 100) / 100)

/** Cut to `width` characters (code points: a surrogate pair is never split). */
const cut = (text: string, width: number): string => {
  const chars = Array.from(text)
  return chars.length <= width ? text : chars.slice(0, width).join("")
}

/**
 * One state of the bar, without the redrawing: `[####----] 7/14 message`, or `[?] 7 message`
 * when the server gives no total. The last column stays free (writing it wraps some terminals).
 */
export const renderProgress = (progress: McpSchema.Progress, columns: number): string => {
  const { message, total } = progress
  let head: string
  if (total !== undefined && total > 0) {
    const filled = Math.round(Math.min(Math.max(progress.progress / total, 0), 1) * barWidth)
    head = `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}] ${number(progress.progress)}/${number(total)}`
  } else {
    head = `[?] ${number(progress.progress)}`
  }
  const line = message === undefined || message === "" ? head : `${head} ${oneLine(message)}`
  return cut(line, Math.max(columns - 1, 1))
}

export interface ProgressBar {
  readonly update: (progress: McpSchema.Progress) => void
  /** Erases the bar, if it was drawn. */
  readonly clear: () => void
}

export const makeProgressBar = (terminal: Terminal): ProgressBar => {
  let drawn = false
  return {
    update: (progress) => {
      const columns = terminal.columns()
      // Redrawn from the start of the line; what a longer line left is erased after it.
      terminal.write(`\r${renderProgress(progress, columns !== undefined && columns > 0 ? columns : defaultColumns)}\x1b[K`)
      drawn = true
    },
    clear: () => {
      if (drawn) terminal.write(clearLine)
      drawn = false
    }
  }
}

/**
 * Runs `use` with the bar's update when there is a terminal to draw on (else `undefined`: no
 * progress is asked for on the bar's account), and clears the bar however `use` ends, before
 * the result or the record is printed.
 */
export const withProgressBar = <A, E, R>(
  terminal: Terminal | undefined,
  use: (onProgress: ((progress: McpSchema.Progress) => void) | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  terminal === undefined
    ? use(undefined)
    : Effect.acquireUseRelease(
      Effect.sync(() => makeProgressBar(terminal)),
      (bar) => use(bar.update),
      (bar) => Effect.sync(bar.clear)
    )
