import { describe, expect, it } from "vitest"
import { buildPlan, prepackBuilds } from "../src/builds.js"

describe("prepackBuilds", () => {
  it("reads a chain of builds as package directories, the package's own last", () => {
    expect(prepackBuilds("packages/client", "npm run build")).toEqual(["packages/client"])
    expect(prepackBuilds("packages/promise", "npm run build --prefix ../client && npm run build")).toEqual([
      "packages/client",
      "packages/promise"
    ])
  })

  it("is undefined for anything else: the qualification then cannot build the package as its prepack does", () => {
    expect(prepackBuilds("packages/client", undefined)).toBeUndefined()
    expect(prepackBuilds("packages/client", "")).toBeUndefined()
    expect(prepackBuilds("packages/client", "npm run build && node strip.mjs")).toBeUndefined()
    expect(prepackBuilds("packages/client", "npm run build; rm -rf dist")).toBeUndefined()
    expect(prepackBuilds("packages/promise", "npm run build && npm run build --prefix ../client")).toBeUndefined()
  })
})

describe("buildPlan", () => {
  const chains = [
    ["packages/client"],
    ["packages/client", "packages/promise"],
    ["packages/testkit"],
    ["packages/cli"],
    ["packages/client", "packages/workflow"]
  ]

  it("names each build once, each after the builds that precede it in a chain", () => {
    const plan = buildPlan(chains)
    expect(plan.map((build) => build.dir).sort()).toEqual([
      "packages/cli",
      "packages/client",
      "packages/promise",
      "packages/testkit",
      "packages/workflow"
    ])
    expect(Object.fromEntries(plan.map((build) => [build.dir, build.after]))).toEqual({
      "packages/client": [],
      "packages/promise": ["packages/client"],
      "packages/testkit": [],
      "packages/cli": [],
      "packages/workflow": ["packages/client"]
    })
  })

  it("orders every build after those it waits for", () => {
    const plan = buildPlan([["c", "b", "a"], ["b", "a"], ["d", "c"]])
    const position = (dir: string) => plan.findIndex((build) => build.dir === dir)
    for (const build of plan) for (const earlier of build.after) expect(position(earlier)).toBeLessThan(position(build.dir))
    expect([...plan.find((build) => build.dir === "a")!.after].sort()).toEqual(["b", "c"])
  })

  it("refuses chains that order two builds both ways", () => {
    expect(() => buildPlan([["a", "b"], ["b", "a"]])).toThrow(/cycle: a, b/)
  })
})
