/**
 * The pseudo-terminal the TTY tests run the CLI on: util-linux `script` (`script -qec LINE
 * /dev/null`) gives it a pty for stdout and stderr both.
 *
 * The rule, the same in every file:
 * - on Linux the helper is required: where it is missing, each TTY test FAILS, saying what is
 *   missing and how to get it (Debian and Ubuntu: the `bsdutils` package; others: `util-linux`).
 *   A TTY test never passes by not running on the platform CI runs on;
 * - elsewhere (macOS has a BSD `script` with other flags, Windows none) the TTY tests are
 *   skipped, visibly: `vitest` lists them as skipped, with the reason in their name.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { it } from "vitest"

export const SCRIPT_PATH = "/usr/bin/script"

const onLinux = process.platform === "linux"

/** Why the helper cannot be used here, or `undefined` when it can. */
const missing = (): string | undefined =>
  existsSync(SCRIPT_PATH)
    ? undefined
    : `the pseudo-terminal helper ${SCRIPT_PATH} (util-linux \`script\`) is missing: the TTY tests need it on Linux ` +
      "(Debian/Ubuntu: apt-get install bsdutils; elsewhere: util-linux)"

/**
 * A test that needs a terminal: on Linux it runs, and fails at once with the reason when the
 * helper is missing; elsewhere it is a visible skip.
 */
export const itOnTerminal = (name: string, body: () => Promise<void>, timeout?: number): void => {
  if (!onLinux) {
    it.skip(`${name} [skipped: a TTY test, run on Linux only (util-linux script); this is ${process.platform}]`, body)
    return
  }
  it(name, async () => {
    const why = missing()
    if (why !== undefined) throw new Error(why)
    await body()
  }, timeout)
}

/** What the pty received, raw (stdout and stderr interleaved as a terminal shows them), and the exit code. */
export const runOnTerminal = (line: string, env: NodeJS.ProcessEnv) =>
  new Promise<{ readonly code: number | null; readonly raw: string }>((resolve, reject) => {
    const child = spawn(SCRIPT_PATH, ["-qec", line, "/dev/null"], { env, stdio: ["ignore", "pipe", "pipe"] })
    let raw = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (raw += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, raw }))
  })

/**
 * What a terminal shows once `raw` is drawn: each line as the last redraw after a `\r` left it
 * (the spinner redraws its line, and only does when the command is slow enough), erasures removed.
 */
export const screenOf = (raw: string): string =>
  raw.replace(/\r\n/g, "\n").split("\n").map((line) => line.slice(line.lastIndexOf("\r") + 1).replace(/\x1b\[K/g, "")).join("\n")
