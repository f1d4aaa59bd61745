/**
 * What a run shares with the entry point (bin.ts): the state a command leaves (what to print, the
 * exit code, where the run is for an interruption) and the terminal-facing services it may use.
 */
import type * as Effect from "effect/Effect"
import type { Terminal } from "./progressBar.js"
import type { Position } from "./record.js"
import type { Environment } from "./target.js"

/** What a run leaves for the entry point. Mutable: it is the run's own, and read after it ends. */
export interface RunState {
  /** Where the run is, for an interruption or an internal error. */
  position: Position
  /** Secret values of the resolved target, scrubbed from the debug output. */
  secrets: ReadonlyArray<string>
  stdout: string
  exitCode: number
  /**
   * A line for a human after the record (only set in human mode, printed only on a TTY stderr):
   * `run: phasebound login <target>` when a user's authorization is what is missing.
   */
  hint: string | undefined
  /**
   * A stdio target's stderr as a terminal is shown it before the record (`--server-stderr tail`):
   * the labelled, redacted block of its last lines, or "" (packages/cli/README.md).
   */
  serverStderr?: (() => string) | undefined
  /** An interruption (SIGINT, SIGTERM) is the run's normal end: exit 0, no record (`watch`). */
  endsOnInterrupt?: boolean | undefined
}

export interface RunContext {
  readonly state: RunState
  readonly env: Environment
  /** Machine output: `--json`, or a stdout that is not a TTY. */
  readonly machine: (json: boolean) => boolean
  /** Shows progress on stderr while the effect runs (only on a TTY, never in machine mode). */
  readonly progress: <A, E, R>(label: string, machine: boolean, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Where a call's progress bar may be drawn: stderr when it is a TTY and not in machine mode. */
  readonly terminal: (machine: boolean) => Terminal | undefined
  /** Writes on stdout at once (`login`'s authorization URL, while the run waits for the browser). */
  readonly print: (text: string) => Effect.Effect<void>
}
