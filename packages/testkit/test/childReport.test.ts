/**
 * The child report (src/childReport.ts): the one line a test child ends its stdout with, and
 * how a parent reads it. A missing or malformed line must read as NoReport, never as a report
 * with nothing failed.
 */
import { describe, expect, it } from "@effect/vitest"
import { type ChildReport, formatReport, readReport, REPORT_PREFIX } from "../src/childReport.js"

const report: ChildReport = {
  results: [
    { name: "connects", ok: true, detail: "2026-07-28 over streamable-http", ms: 12 },
    { name: "calls add", ok: false, detail: "McpConnectionError: timeout" }
  ],
  children: [{ pid: 4242, start: "987654" }, { pid: 4343 }]
}

describe("child report", () => {
  it("is one line with the prefix, and reads back as it was written, failures picked out", () => {
    const line = formatReport(report)
    expect(line.startsWith(REPORT_PREFIX)).toBe(true)
    expect(line.endsWith("\n")).toBe(true)
    expect(line.slice(0, -1)).not.toContain("\n")
    expect(readReport(line)).toEqual({ _tag: "Report", report, failed: [report.results[1]] })
  })

  it("is found after anything else the child printed, without a trailing newline too", () => {
    const stdout = `starting\n{"results":[]}\n${formatReport(report).trimEnd()}`
    expect(readReport(stdout)).toMatchObject({ _tag: "Report", report })
  })

  it("the LAST report line wins", () => {
    const first = formatReport({ results: [{ name: "first", ok: true, detail: "" }] })
    const last = formatReport({ results: [{ name: "last", ok: false, detail: "broke" }] })
    const reading = readReport(`${first}in between\n${last}`)
    expect(reading._tag).toBe("Report")
    if (reading._tag !== "Report") return
    expect(reading.report.results.map((r) => r.name)).toEqual(["last"])
    expect(reading.failed.map((r) => r.name)).toEqual(["last"])
  })

  it("a child that printed no report line is NoReport, with the reason", () => {
    for (const stdout of ["", "all good\n", `[{"name":"x","ok":true,"detail":""}]\n`, ` ${formatReport(report)}`]) {
      const reading = readReport(stdout)
      expect(reading, JSON.stringify(stdout)).toEqual({ _tag: "NoReport", why: "the child printed no report line" })
    }
  })

  it("a malformed report line is NoReport saying it does not decode, even after a good one", () => {
    const malformed = [`${REPORT_PREFIX}{"results":[`, `${REPORT_PREFIX}`, `${REPORT_PREFIX}[]`, `${REPORT_PREFIX}{"results":"none"}`]
    for (const line of malformed) {
      const reading = readReport(`${formatReport(report)}${line}\n`)
      expect(reading._tag, line).toBe("NoReport")
      if (reading._tag === "NoReport") expect(reading.why).toMatch(/^the report line does not decode: /)
    }
  })

  it("a result missing `ok` (or with a non-boolean one) does not decode", () => {
    const missingOk = `${REPORT_PREFIX}{"results":[{"name":"a","detail":"ran"}]}\n`
    const reading = readReport(missingOk)
    expect(reading._tag).toBe("NoReport")
    if (reading._tag === "NoReport") expect(reading.why).toMatch(/does not decode: .*ok/s)
    const textOk = `${REPORT_PREFIX}{"results":[{"name":"a","ok":"true","detail":"ran"}]}\n`
    expect(readReport(textOk)._tag).toBe("NoReport")
  })
})
