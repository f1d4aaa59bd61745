/**
 * The coverage levels of the contract suite (docs/DESIGN.md, "The contract suite"): which cases
 * each run gets. Building cases runs nothing, so only the HTTP clients' names matter here.
 */
import { type ClientUnderTest, contractSuite, type ContractCase, families, rows } from "@phasebound/testkit/contract"
import { describe, expect, it } from "vitest"
import { clientUnderTest } from "./clientUnderTest.js"

const withHttpClients = (httpClients: ReadonlyArray<string>) => ({ ...clientUnderTest, httpClients }) as ClientUnderTest<unknown>

const serverOf = (client: ClientUnderTest<unknown>, rowName: string) => rows(client).find((row) => row.name === rowName)?.server
const httpOf = (client: ClientUnderTest<unknown>, rowName: string) => rows(client).find((row) => row.name === rowName)?.http
const servers = (client: ClientUnderTest<unknown>) => [...new Set(rows(client).map((row) => row.server))]

const checkWitnesses = (client: ClientUnderTest<unknown>, cases: ReadonlyArray<ContractCase>, family: string) => {
  const own = cases.filter((c) => c.family === family)
  expect(own.map((c) => serverOf(client, c.row)).sort()).toEqual([...servers(client)].sort())
}

describe("contractSuite coverage", () => {
  const vitest = withHttpClients(["fetch", "undici", "node:http"])

  it("matrix: a family that depends on the HTTP client runs on every row, the others on the first HTTP client only", () => {
    const cases = contractSuite(vitest, { coverage: "matrix" })
    for (const family of families) {
      const used = new Set(cases.filter((c) => c.family === family.name).map((c) => httpOf(vitest, c.row)).filter((h) => h !== undefined))
      expect([...used].sort(), family.name).toEqual(family.dependsOn.includes("http-client") ? ["fetch", "node:http", "undici"] : ["fetch"])
      const rowsRun = new Set(cases.filter((c) => c.family === family.name).map((c) => serverOf(vitest, c.row)))
      expect(rowsRun.size, family.name).toBe(servers(vitest).length)
    }
    expect(contractSuite(vitest)).toHaveLength(cases.length)
  })

  it("witness: one case per family and server row, deterministic, every HTTP client serving several families", () => {
    const node = withHttpClients(["fetch", "undici"])
    const cases = contractSuite(node, { coverage: "witness" })
    expect(cases).toHaveLength(families.length * servers(node).length)
    for (const family of families) checkWitnesses(node, cases, family.name)
    for (const http of node.httpClients) {
      const served = new Set(cases.filter((c) => httpOf(node, c.row) === http).map((c) => c.family))
      expect(served.size, http).toBeGreaterThanOrEqual(2)
    }
    const again = contractSuite(node, { coverage: "witness" })
    expect(again.map((c) => `${c.row} ${c.name}`)).toEqual(cases.map((c) => `${c.row} ${c.name}`))
  })

  it("runtime: the families that depend on the runtime get their matrix, the others witnesses", () => {
    const bun = withHttpClients(["fetch", "node:http"])
    const cases = contractSuite(bun, { coverage: "runtime" })
    for (const family of families) {
      const own = cases.filter((c) => c.family === family.name)
      if (family.dependsOn.includes("runtime")) {
        expect(own, family.name).toHaveLength(contractSuite(bun, { families: [family], coverage: "matrix" }).length)
      } else {
        checkWitnesses(bun, cases, family.name)
      }
    }
  })
})
