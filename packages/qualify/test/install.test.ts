import { describe, expect, it } from "vitest"
import { floorAliases, type Lockfile, packedEntries, seededLock } from "../src/install.js"

const workspaceLock: Lockfile = {
  packages: {
    "": { name: "workspace" },
    "node_modules/effect": { version: "3.22.4", integrity: "sha512-newest", dev: true, peer: true },
    "node_modules/@effect/platform": { version: "0.97.2", integrity: "sha512-platform", devOptional: true },
    "node_modules/@effect/platform/node_modules/multipasta": { version: "0.2.8", integrity: "sha512-nested" },
    "node_modules/effect-floor": { name: "effect", version: "3.22.0", integrity: "sha512-floor", dev: true },
    "node_modules/effect-floor-platform": { name: "@effect/platform", version: "0.97.0", integrity: "sha512-floor-platform", dev: true },
    "node_modules/effect-floor-platform/node_modules/multipasta": { version: "0.2.7", integrity: "sha512-floor-nested" },
    "node_modules/@phasebound/client": { resolved: "packages/client", link: true },
    "node_modules/node22": { version: "0.0.0", resolved: "file:packages/client/test/conformance/node22-0.0.0.tgz" },
    "node_modules/node22/node_modules/node": { version: "22.23.3", integrity: "sha512-node" },
    "node_modules/optional-native": { version: "1.0.0", integrity: "sha512-native", optional: true },
    "packages/client": { name: "@phasebound/client", version: "0.1.0" }
  }
}
const dependencies = { effect: "3.22.0" }

describe("floorAliases", () => {
  it("reads the effect-floor aliases of the root devDependencies, and only those", () => {
    expect(floorAliases({
      "effect-floor": "npm:effect@3.22.0",
      "effect-floor-platform": "npm:@effect/platform@0.97.0",
      effect: "3.22.4",
      effect4: "npm:effect@4.1.0",
      "effect-floorish": "npm:effect@3.0.0"
    })).toEqual({
      "effect-floor": { name: "effect", version: "3.22.0" },
      "effect-floor-platform": { name: "@effect/platform", version: "0.97.0" }
    })
  })
})

describe("seededLock", () => {
  it("keeps the registry entries, without the workspace's dev and peer flags; links and file: packages (and what they nest) go", () => {
    const lock = seededLock(workspaceLock, dependencies)
    expect(lock.packages[""]).toEqual({ name: "phasebound-qualification", dependencies })
    expect(lock.packages["node_modules/effect"]).toEqual({ version: "3.22.4", integrity: "sha512-newest" })
    expect(lock.packages["node_modules/@effect/platform"]).toEqual({ version: "0.97.2", integrity: "sha512-platform" })
    expect(lock.packages["node_modules/optional-native"]).toEqual({ version: "1.0.0", integrity: "sha512-native", optional: true })
    expect(Object.keys(lock.packages).filter((path) => /phasebound|node22|^packages\//.test(path))).toEqual([])
  })

  it("leaves the floor aliases out when nothing substitutes them", () => {
    const lock = seededLock(workspaceLock, dependencies)
    expect(Object.keys(lock.packages).filter((path) => path.includes("effect-floor"))).toEqual([])
  })

  it("puts each substituted alias, and what it nests, in the place of the package it aliases", () => {
    const lock = seededLock(workspaceLock, dependencies, { "effect-floor": "effect", "effect-floor-platform": "@effect/platform" })
    expect(lock.packages["node_modules/effect"]).toEqual({ version: "3.22.0", integrity: "sha512-floor" })
    expect(lock.packages["node_modules/@effect/platform"]).toEqual({ version: "0.97.0", integrity: "sha512-floor-platform" })
    expect(lock.packages["node_modules/@effect/platform/node_modules/multipasta"]).toEqual({ version: "0.2.7", integrity: "sha512-floor-nested" })
    expect(Object.keys(lock.packages).filter((path) => path.includes("effect-floor"))).toEqual([])
  })

  it("substitutes an alias that is not a floor one (Effect 4 in the place of effect)", () => {
    const lock = seededLock(
      { packages: { ...workspaceLock.packages, "node_modules/effect4": { name: "effect", version: "4.1.0", integrity: "sha512-four" } } },
      { effect: "4.1.0" },
      { effect4: "effect" }
    )
    expect(lock.packages["node_modules/effect"]).toEqual({ version: "4.1.0", integrity: "sha512-four" })
    expect(lock.packages["node_modules/effect4"]).toBeUndefined()
  })
})

describe("packedEntries", () => {
  const manifests: Record<string, Record<string, unknown>> = {
    "/tmp/packs/phasebound-client-0.1.0.tgz": {
      name: "@phasebound/client",
      version: "0.1.0",
      license: "MIT",
      dependencies: { ajv: "8.20.0" },
      peerDependencies: { effect: "^3.22.0" },
      scripts: { prepack: "npm run build" },
      exports: { ".": "./dist/index.js" }
    },
    "/tmp/packs/phasebound-cli-0.1.0.tgz": { name: "@phasebound/cli", version: "0.1.0", bin: { phasebound: "dist/bin.js" }, engines: { node: ">=20" } }
  }
  const manifestOf = (tarball: string) => manifests[tarball]!

  it("locks each file: tarball at node_modules/<name>, with what npm locks of its manifest", () => {
    expect(packedEntries({
      effect: "3.22.4",
      "@phasebound/client": "file:/tmp/packs/phasebound-client-0.1.0.tgz",
      "@phasebound/cli": "file:/tmp/packs/phasebound-cli-0.1.0.tgz"
    }, manifestOf)).toEqual({
      "node_modules/@phasebound/client": {
        resolved: "file:/tmp/packs/phasebound-client-0.1.0.tgz",
        version: "0.1.0",
        license: "MIT",
        dependencies: { ajv: "8.20.0" },
        peerDependencies: { effect: "^3.22.0" }
      },
      "node_modules/@phasebound/cli": {
        resolved: "file:/tmp/packs/phasebound-cli-0.1.0.tgz",
        version: "0.1.0",
        bin: { phasebound: "dist/bin.js" },
        engines: { node: ">=20" }
      }
    })
  })

  it("leaves registry dependencies and file: directories to the seeded lock", () => {
    expect(packedEntries({ effect: "3.22.4", local: "file:../local" }, manifestOf)).toEqual({})
  })
})
