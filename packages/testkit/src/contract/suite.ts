/**
 * The contract suite: every family over the rows its outcome depends on, at the coverage a run
 * asks for. The result is a list of plain cases; a runner turns each into a test (Vitest's `it`,
 * the qualification's scenario).
 */
import type { ClientUnderTest } from "./client.js"
import { cancellation } from "./families/cancellation.js"
import { ceilings } from "./families/ceilings.js"
import { deadlines } from "./families/deadlines.js"
import { noReplay } from "./families/noReplay.js"
import { overrides } from "./families/overrides.js"
import { redaction } from "./families/redaction.js"
import { release } from "./families/release.js"
import { spans } from "./families/spans.js"
import { type Row, rows } from "./rows.js"

/** One case of a family on one row, before it is bound to the row's name. */
export interface CaseSpec {
  readonly name: string
  /** The case's own bound, for the runner's timeout (default 30 s): generous, never a timing claim. */
  readonly timeoutMs?: number
  readonly run: () => Promise<void>
}

/**
 * An axis a family's outcome can depend on, beyond those every family runs over (transport,
 * answer form and protocol era: every family runs on every server row):
 * - "http-client": the HTTP client layer reads bodies and aborts requests its own way;
 * - "runtime": the runtime's timers, pipes and sockets (Node, Bun) are part of the outcome.
 */
export type Axis = "http-client" | "runtime"

/**
 * How much of the matrix a run covers:
 * - "matrix" (Vitest): every case of a family on every row over its axes; a family without
 *   "http-client" runs on one HTTP client per server row (the first the client offers);
 * - "witness" (the qualification on the runtime where the matrix ran): one case per family and
 *   server row, the case and the HTTP client rotating over rows and families, so that every
 *   family meets the packed packages on every server row and every HTTP client serves several
 *   families;
 * - "runtime" (the qualification on another runtime): the matrix of every family that declares
 *   "runtime", witnesses of the others.
 */
export type Coverage = "matrix" | "witness" | "runtime"

export interface SuiteOptions {
  /** Default: every family. */
  readonly families?: ReadonlyArray<Family> | undefined
  /** Default: "matrix". */
  readonly coverage?: Coverage | undefined
}

export interface Family {
  readonly name: string
  /** What the family proves, one sentence (the README's table prints it). */
  readonly promise: string
  /** The axes its outcome can depend on (the header comment of each family says why). */
  readonly dependsOn: ReadonlyArray<Axis>
  readonly cases: <R>(row: Row<R>) => ReadonlyArray<CaseSpec>
}

export interface ContractCase {
  readonly family: string
  readonly row: string
  readonly name: string
  readonly timeoutMs: number
  readonly run: () => Promise<void>
}

export const DEFAULT_CASE_TIMEOUT_MS = 30_000

/** The families, in the order the README's table lists them. */
export const families: ReadonlyArray<Family> = [
  noReplay,
  overrides,
  ceilings,
  deadlines,
  cancellation,
  release,
  redaction,
  spans
]

const bind = <R>(family: Family, row: Row<R>, spec: CaseSpec): ContractCase => ({
  family: family.name,
  row: row.name,
  name: spec.name,
  timeoutMs: spec.timeoutMs ?? DEFAULT_CASE_TIMEOUT_MS,
  run: spec.run
})

/** The server rows (one per server, stdio's included), in the order of `rows`. */
const serverNames = <R>(all: ReadonlyArray<Row<R>>): ReadonlyArray<string> => [...new Set(all.map((row) => row.server))]

/** Every case of `family` on the rows over its axes: all HTTP clients, or only the first. */
const matrixOf = <R>(client: ClientUnderTest<R>, family: Family): ReadonlyArray<ContractCase> => {
  const [firstHttp] = client.httpClients
  const over = rows(client).filter((row) => family.dependsOn.includes("http-client") || row.http === undefined || row.http === firstHttp)
  return over.flatMap((row) => family.cases(row).map((spec) => bind(family, row, spec)))
}

/**
 * One case of `family` per server row. Family `f` on server row `s` takes HTTP client
 * `(f + s) mod n` and case `(f + s) mod m` of the row's `m`: deterministic, and rotating so that
 * each family meets every HTTP client on some row and several of its cases in all.
 */
const witnessesOf = <R>(client: ClientUnderTest<R>, family: Family, familyIndex: number): ReadonlyArray<ContractCase> => {
  const all = rows(client)
  return serverNames(all).flatMap((server, serverIndex) => {
    const turn = familyIndex + serverIndex
    const candidates = all.filter((row) => row.server === server)
    const row = candidates.find((r) => r.http === client.httpClients[turn % client.httpClients.length]) ?? candidates[0]
    if (row === undefined) return []
    const specs = family.cases(row)
    const spec = specs[turn % specs.length]
    return spec === undefined ? [] : [bind(family, row, spec)]
  })
}

/** The cases of the selected families (default: all) at the coverage asked for (default: the matrix). */
export const contractSuite = <R>(client: ClientUnderTest<R>, options: SuiteOptions = {}): ReadonlyArray<ContractCase> => {
  const coverage = options.coverage ?? "matrix"
  return (options.families ?? families).flatMap((family, position) => {
    const known = families.indexOf(family)
    const familyIndex = known >= 0 ? known : position
    switch (coverage) {
      case "matrix":
        return matrixOf(client, family)
      case "witness":
        return witnessesOf(client, family, familyIndex)
      case "runtime":
        return family.dependsOn.includes("runtime") ? matrixOf(client, family) : witnessesOf(client, family, familyIndex)
    }
  })
}
