import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { README, withTable } from "./table.js"

it("the README's table of contract cases is the one the suite generates (npm run contract-table)", () => {
  const readme = readFileSync(README, "utf8")
  expect(readme).toBe(withTable(readme))
})
