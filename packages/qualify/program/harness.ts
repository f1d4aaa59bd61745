/**
 * What every qualification program shares: checks that fail a scenario with a message, and the
 * runner of one scenario under a bound, which turns it into a row of the program's report
 * (`formatReport` of @phasebound/testkit). It imports nothing but the testkit's types, so the
 * bundle of a program carries only this file and the program besides the installed packages.
 */
import type { CheckResult, formatReport } from "@phasebound/testkit"

/** A check that did not hold: its message is the row's detail as it is. */
export class CheckFailed extends Error {}

export const fail = (message: string): never => {
  throw new CheckFailed(message)
}

export const check: (condition: boolean, message: string) => asserts condition = (condition, message) => {
  if (!condition) fail(message)
}

/** The detail of a failure that is not a failed check: its first line, marked unexpected. */
export const unexpected = (error: unknown): string =>
  error instanceof CheckFailed
    ? error.message
    : `unexpected: ${(String(error instanceof Error ? error.message : error).split("\n")[0] ?? "").slice(0, 300)}`

/**
 * Runs one scenario; resolves with its row, never rejects. A scenario that has not finished
 * within `timeoutMs` fails with that said; its timer is cleared either way.
 */
export const runScenario = async (
  name: string,
  body: () => unknown,
  timeoutMs: number,
  describe: (error: unknown) => string = unexpected
): Promise<CheckResult> => {
  const started = Date.now()
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const detail = await Promise.race([
      Promise.resolve().then(body),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`scenario did not finish within ${timeoutMs} ms`)), timeoutMs)
      })
    ])
    return { name, ok: true, detail: typeof detail === "string" ? detail : "", ms: Date.now() - started }
  } catch (error) {
    return { name, ok: false, detail: describe(error), ms: Date.now() - started }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Prints the results of a program with no children of its own: a table under `title`, the
 * count, then the report line (`format`: the testkit's `formatReport`, passed in so that this
 * file imports types only); sets `process.exitCode` on a failure.
 */
export const printResults = (title: string, results: ReadonlyArray<CheckResult>, format: typeof formatReport): void => {
  const failed = results.filter((r) => !r.ok)
  const width = Math.max(...results.map((r) => r.name.length))
  console.log(title)
  for (const r of results) console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(width)}  ${String(r.ms).padStart(5)} ms  ${r.detail}`)
  console.log(`${results.length - failed.length} passed, ${failed.length} failed`)
  process.stdout.write(format({ results: results.map(({ name, ok, detail }) => ({ name, ok, detail })), children: [] }))
  if (failed.length > 0) process.exitCode = 1
}
