import { describe, expect, it } from "vitest"
import { closedSubpaths, type Exposure, exportedModules, judgeExposure } from "../src/exposed.js"

const modules = ["Client", "Schema", "index", "promise"]
const refusedAll: Record<string, string> = Object.fromEntries(
  closedSubpaths.map((name) => [name, name.startsWith("internal/") ? "ERR_PACKAGE_PATH_NOT_EXPORTED" : "ERR_MODULE_NOT_FOUND"])
)
const clean: Exposure = {
  loaded: { Client: ["connect"], Schema: ["Tool"], index: ["Client", "Schema"], promise: ["connect"] },
  refused: refusedAll,
  leaks: []
}
const judged = (exposure: Exposure) => judgeExposure(modules, `some output\n${JSON.stringify(exposure)}\n`)

describe("the exposure check", () => {
  it("takes the exported modules from the tarball's top-level dist/*.js", () => {
    expect(exportedModules(["dist/index.js", "dist/index.d.ts", "dist/internal/era.js", "src/Client.ts", "dist/promise.js", "dist/Client.js"]))
      .toEqual(["Client", "index", "promise"])
  })

  it("passes an index of the other modules, each loading, every closed subpath refused", () => {
    expect(judged(clean)).toEqual([])
  })

  it("names a module that does not load, an index that is not the other modules, a closed subpath that resolves, a leak", () => {
    const { Schema: _schema, ...loaded } = clean.loaded
    const { Stdio: _stdio, ...refused } = clean.refused
    expect(judged({
      loaded: { ...loaded, index: ["Client", "Schema", "Transport"], Stdio: ["make"] },
      refused: { ...refused, Schema: "ERR_INTERNAL_ASSERTION", Transport: "SyntaxError" },
      leaks: ["index: Client.make is dist/internal/transport/stdio.js#make"]
    })).toEqual([
      "Schema does not load: ERR_INTERNAL_ASSERTION",
      "the index exports Client, Schema, Transport; the exported modules are Client, Schema",
      "Transport: SyntaxError",
      "Stdio resolves",
      "index: Client.make is dist/internal/transport/stdio.js#make"
    ])
    expect(judgeExposure(modules, "Error: boom\n")).toEqual(["no exposure printed: Error: boom"])
  })
})
