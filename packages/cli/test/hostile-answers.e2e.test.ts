/**
 * The CLI against a hostile stdio server (the testkit's scripted one), as a subprocess (the
 * Node bundle and the compiled executable): what a server sends can end a run only with one
 * typed record and its exit code, never an internal error (docs/DESIGN.md, "Structure bounds");
 * and a result whose `structuredContent` is not an object is a result like any other
 * (docs/DESIGN.md, "Typed results").
 */
import * as Testkit from "@phasebound/testkit"
import { afterAll, describe, expect, it } from "vitest"
import { expectFailure, expectJson, run, type Runtime, shellQuote } from "./support/cli.js"

const cases: Array<Testkit.HostileStdioCase> = []
afterAll(() => cases.forEach((c) => c.cleanup()))

/** The CLI's flags for a scripted stdio server whose `method` answers `results` (one line each, in turn). */
const hostile = (era: Testkit.HostileEra, method: string, results: ReadonlyArray<string>) => {
  const script = Testkit.hostileStdioCase({
    era,
    answers: { [method]: results.map((result) => ({ text: `{"jsonrpc":"2.0","id":${Testkit.ID_PLACEHOLDER},"result":${result}}\n` })) }
  })
  cases.push(script)
  return ["--stdio", shellQuote([script.command, ...script.args]), "--env", `PHASEBOUND_HOSTILE_SCRIPT=${script.env["PHASEBOUND_HOSTILE_SCRIPT"]}`]
}

const complete = (era: Testkit.HostileEra) => era === "stateless" ? `"resultType":"complete",` : ""

describe.each(["node", "compiled"] as ReadonlyArray<Runtime>)("a hostile stdio server, %s", (runtime) => {
  for (const era of ["stateless", "handshake"] as const) {
    it(`${era}: an input schema nested 100,000 deep is LimitExceeded maxDepth, exit 5, one record`, async () => {
      const deep = `{"type":"object","properties":{"p":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`
      const flags = hostile(era, "tools/list", [`{${complete(era)}"tools":[{"name":"deep","inputSchema":${deep}}]}`])
      const result = await run(runtime, ["tools", ...flags, "--json"])
      const record = expectFailure(result, 5, "LimitExceeded")
      expect(record).toMatchObject({ limit: "maxDepth", stage: "list-tools", phase: "discovery", outcome: "applied" })
    })

    it(`${era}: a structuredContent that is a number, an array or null is printed as sent`, async () => {
      const values = ["5", `[1,"two"]`, "null"]
      for (const value of values) {
        const flags = hostile(era, "tools/call", [`{${complete(era)}"content":[{"type":"text","text":"ok"}],"structuredContent":${value}}`])
        const printed = expectJson(await run(runtime, ["call", ...flags, "echo"])) as { structuredContent: unknown }
        expect(printed.structuredContent).toEqual(JSON.parse(value))
      }
    })
  }
})
