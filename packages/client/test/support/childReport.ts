/**
 * The parent side of the child report (@phasebound/testkit's childReport): a child program ends
 * its stdout with one `PHASEBOUND-REPORT {json}` line, and the test turns it into assertions.
 */
import { type ChildReport, readReport } from "@phasebound/testkit"
import { assert, expect } from "vitest"

export interface ChildOutput {
  readonly stdout: string
  readonly stderr: string
}

const tail = (stderr: string) => `--- child stderr (last 3000 characters) ---\n${stderr.slice(-3_000)}`

/**
 * The child's report; a failing assertion when it printed none (or one that does not decode),
 * naming why and the child's stderr tail.
 */
export const reportOf = (child: ChildOutput): ChildReport => {
  const reading = readReport(child.stdout)
  if (reading._tag === "NoReport") {
    return assert.fail(`no child report: ${reading.why}\n--- child stdout (last 1000 characters) ---\n${child.stdout.slice(-1_000)}\n${tail(child.stderr)}`)
  }
  return reading.report
}

/**
 * The child's report, asserted: it ran exactly the checks named (so a child that silently runs
 * fewer, or others, fails) and none of them failed (each with its detail in the message).
 */
export const expectChecksPassed = (child: ChildOutput, names: ReadonlyArray<string>): ChildReport => {
  const report = reportOf(child)
  expect(report.results.map((result) => result.name).sort(), `the checks the child ran\n${tail(child.stderr)}`).toEqual([...names].sort())
  const failed = report.results.filter((result) => !result.ok).map((result) => `${result.name}: ${result.detail}`)
  expect(failed, `the checks the child reports failed\n${tail(child.stderr)}`).toEqual([])
  return report
}
