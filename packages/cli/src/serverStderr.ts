/**
 * A stdio server's own stderr, for the one who runs the CLI (packages/cli/README.md, "A stdio
 * server's stderr"): `--server-stderr tail` (the default) keeps its last 64 KiB in the client,
 * and a failed run on a terminal shows its last lines before the record, labelled, its secrets
 * redacted and its control characters made spaces. The record itself never carries it.
 */
import { type McpConnectionError, redact } from "@phasebound/client/McpConnectionError"
import type { StderrMode } from "@phasebound/client/McpClient"
import * as Effect from "effect/Effect"
import { printable } from "./output.js"
import { flag } from "./flags.js"
import { invalidOption } from "./record.js"

/** How many of the tail's last lines a terminal is shown. */
export const shownLines = 20

/** How many characters of each line are shown. */
export const shownColumns = 400

/** `--server-stderr`: `inherit`, `tail` or `drop` (default `tail`), checked before any I/O. */
export const stderrModeOf = (text: string | undefined): Effect.Effect<StderrMode, McpConnectionError> =>
  text === undefined
    ? Effect.succeed("tail")
    : text === "inherit" || text === "tail" || text === "drop"
    ? Effect.succeed(text)
    : Effect.fail(invalidOption(flag("serverStderr"), "invalid-value"))

/**
 * The block a terminal is shown before the record: `server stderr (last N lines):` then each
 * line indented; empty when the server wrote nothing. Secrets are redacted on the whole tail
 * first (a secret cut by a bound cannot leak a prefix), then lines are cut.
 */
export const stderrBlock = (tail: string, secrets: ReadonlyArray<string>): string => {
  const lines = printable(redact(tail, secrets)).split("\n").map((line) => line.trimEnd())
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  if (lines.length === 0) return ""
  const shown = lines.slice(-shownLines).map((line) => line.length > shownColumns ? `${line.slice(0, shownColumns)}...` : line)
  const label = shown.length === 1 ? "server stderr (last line):" : `server stderr (last ${shown.length} lines):`
  return `${label}\n${shown.map((line) => `  ${line}`).join("\n")}\n`
}
