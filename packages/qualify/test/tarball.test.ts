import { describe, expect, it } from "vitest"
import { checkEffectPeers, checkTarball, entryPoints, type Manifest } from "../src/tarball.js"

const library: Manifest = {
  exports: {
    ".": { "@phasebound/source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" },
    "./*": { "@phasebound/source": "./src/*.ts", types: "./dist/*.d.ts", default: "./dist/*.js" }
  },
  types: "./dist/index.d.ts"
}
const modules = ["index", "Client"]
const complete = [
  "package.json",
  "dist/index.js",
  "dist/index.d.ts",
  "dist/index.js.map",
  "dist/Client.js",
  "dist/Client.d.ts",
  "dist/Client.js.map",
  "src/index.ts",
  "src/Client.ts"
]
const sourcesOf = (map: string) => [`../src/${map.slice("dist/".length).replace(/\.js\.map$/, ".ts")}`]
const problems = (files: ReadonlyArray<string>, manifest = library, mapSources = sourcesOf) =>
  Object.fromEntries(checkTarball(manifest, files, modules, mapSources).map((check) => [check.name, check.problems]))
const none = (files: ReadonlyArray<string>, manifest = library) => Object.values(problems(files, manifest)).flat()

describe("the tarball checks", () => {
  it("expand a wildcard export over the package's modules; the source condition ships nowhere", () => {
    expect([...entryPoints(library, modules)].sort()).toEqual(["dist/Client.d.ts", "dist/Client.js", "dist/index.d.ts", "dist/index.js"])
  })

  it("pass a complete tarball", () => {
    expect(none(complete)).toEqual([])
  })

  it("name each missing entry point, declaration, mapped source and shipped test", () => {
    expect(none(complete.filter((file) => file !== "dist/Client.js"))).toEqual(["missing: dist/Client.js"])
    const withoutTypes: Manifest = { exports: { ".": "./dist/index.js" } }
    expect(none(["dist/index.js", "dist/index.js.map", "src/index.ts"], withoutTypes)).toEqual(["missing: dist/index.d.ts"])
    expect(none(complete.filter((file) => file !== "src/Client.ts"))).toEqual(["dist/Client.js.map -> src/Client.ts"])
    expect(none([...complete, "dist/Client.test.js", "test/x.ts"])).toEqual(["shipped: dist/Client.test.js", "shipped: test/x.ts"])
    expect(none(["package.json"], { exports: { ".": "./lib/index.js" } })).toEqual([
      "no entry point in dist/",
      "outside dist/ and src/: lib/index.js",
      "missing: lib/index.js"
    ])
  })

  it("ask no declarations of a bin-only package", () => {
    expect(none(["dist/bin.js"], { bin: { tool: "./dist/bin.js" } })).toEqual([])
  })
})

describe("the Effect peers check", () => {
  it("passes caret peers beside other dependencies, and a bundle with none at all", () => {
    expect(checkEffectPeers({ dependencies: { ajv: "8.20.0" }, peerDependencies: { effect: "^3.22.0", "@effect/platform": "^0.97.0" } }).problems).toEqual([])
    expect(checkEffectPeers({}).problems).toEqual([])
  })

  it("names an Effect package among the dependencies, and a peer range that is not a caret", () => {
    expect(
      checkEffectPeers({
        dependencies: { effect: "3.22.4", "@effect/workflow": "0.19.1", re2js: "2.10.0" },
        peerDependencies: { "@effect/platform": "0.97.2", "@effect/platform-node": ">=0.108.0", "@phasebound/client": "0.1.0" }
      }).problems
    ).toEqual([
      "a dependency: effect",
      "a dependency: @effect/workflow",
      "not a caret range: @effect/platform 0.97.2",
      "not a caret range: @effect/platform-node >=0.108.0"
    ])
  })
})
