/**
 * The contract suite: every family over every row where it applies. The result is a list of
 * plain cases; a runner turns each into a test (Vitest's `it`, the qualification's scenario).
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

export interface Family {
  readonly name: string
  /** What the family proves, one sentence (the README's table prints it). */
  readonly promise: string
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

/** Every case of `selected` families (default: all) on every row of the client under test. */
export const contractSuite = <R>(
  client: ClientUnderTest<R>,
  selected: ReadonlyArray<Family> = families
): ReadonlyArray<ContractCase> =>
  selected.flatMap((family) =>
    rows(client).flatMap((row) =>
      family.cases(row).map((spec) => ({
        family: family.name,
        row: row.name,
        name: spec.name,
        timeoutMs: spec.timeoutMs ?? DEFAULT_CASE_TIMEOUT_MS,
        run: spec.run
      }))
    )
  )
