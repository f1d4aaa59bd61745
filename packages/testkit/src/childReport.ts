/**
 * The one way a test child tells its parent what it checked. Every program the tests run in
 * another process (the qualification programs under Node and Bun, the runtime checks, the
 * conformance client, the compiled CLI's driver) ends its stdout with one report line:
 *
 *   PHASEBOUND-REPORT {"results":[{"name":…,"ok":…,"detail":…}],"children":[{"pid":…,"start":…}]}
 *
 * The parent finds the LAST such line (a child may print anything before it), decodes it with the
 * schema below, and turns each result into a row or an assertion. A missing or malformed line is
 * itself a failure the parent reports; it never reads as "no checks failed". `children` names the
 * stdio children the program spawned, so the parent can check none outlives it (processIdentity).
 */
import { Either, Schema } from "effect"

export const REPORT_PREFIX = "PHASEBOUND-REPORT "

export const CheckResult = Schema.Struct({
  name: Schema.String,
  ok: Schema.Boolean,
  detail: Schema.String,
  ms: Schema.optional(Schema.Number)
})
export type CheckResult = typeof CheckResult.Type

export const ChildIdentity = Schema.Struct({ pid: Schema.Number, start: Schema.optional(Schema.String) })

export const ChildReport = Schema.Struct({
  results: Schema.Array(CheckResult),
  children: Schema.optional(Schema.Array(ChildIdentity))
})
export type ChildReport = typeof ChildReport.Type

/** The report line, newline included. */
export const formatReport = (report: ChildReport): string => `${REPORT_PREFIX}${JSON.stringify(report)}\n`

export type ReportReading =
  | { readonly _tag: "Report"; readonly report: ChildReport; readonly failed: ReadonlyArray<CheckResult> }
  | { readonly _tag: "NoReport"; readonly why: string }

const decode = Schema.decodeUnknownEither(Schema.parseJson(ChildReport))

/** The last report line of `stdout`, decoded; `NoReport` says why there is none. */
export const readReport = (stdout: string): ReportReading => {
  const line = stdout.split("\n").reverse().find((l) => l.startsWith(REPORT_PREFIX))
  if (line === undefined) return { _tag: "NoReport", why: "the child printed no report line" }
  const decoded = decode(line.slice(REPORT_PREFIX.length))
  if (Either.isLeft(decoded)) return { _tag: "NoReport", why: `the report line does not decode: ${decoded.left.message.slice(0, 300)}` }
  return { _tag: "Report", report: decoded.right, failed: decoded.right.results.filter((r) => !r.ok) }
}
