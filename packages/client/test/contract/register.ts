/**
 * Turns contract families into Vitest tests over the workspace's client, the whole matrix (every
 * case on every row over the family's axes): one `describe` per family and row, one concurrent test per case (each case has its own server, so cases of a
 * row may overlap; their bounds are generous sync points, not timing claims).
 */
import { contractSuite, type Family } from "@phasebound/testkit/contract"
import { describe, it } from "vitest"
import { clientUnderTest } from "./clientUnderTest.js"

const distinct = (values: ReadonlyArray<string>) => [...new Set(values)]

export const registerFamilies = (families: ReadonlyArray<Family>): void => {
  const cases = contractSuite(clientUnderTest, { families, coverage: "matrix" })
  for (const family of distinct(cases.map((c) => c.family))) {
    describe(family, () => {
      const familyCases = cases.filter((c) => c.family === family)
      for (const row of distinct(familyCases.map((c) => c.row))) {
        describe.concurrent(row, () => {
          for (const c of familyCases.filter((c) => c.row === row)) it(c.name, c.run, c.timeoutMs)
        })
      }
    })
  }
}
