import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { TABLE_DOCUMENT, withTable } from "./table.js"

it("the table of contract cases in docs/CONTRIBUTING.md is the one the suite generates (npm run contract-table)", () => {
  const document = readFileSync(TABLE_DOCUMENT, "utf8")
  expect(document).toBe(withTable(document))
})
