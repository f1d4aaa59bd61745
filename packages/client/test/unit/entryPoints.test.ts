/**
 * The package's entry points offer no seam that nothing can use: `connect` takes neither a
 * transport nor an era, so both are internal (docs/DESIGN.md, "Module map"). The index exports
 * the public modules and no other, no public module exports a transport's constructor or an era,
 * and the subpaths of the modules that left resolve no more. The same is checked against the
 * installed tarball by the qualification (packages/qualify/src/exposed.ts).
 */
import { readdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import * as Index from "../../src/index.js"
import * as HandshakeEra from "../../src/internal/handshakeEra.js"
import * as StatelessEra from "../../src/internal/statelessEra.js"
import * as LegacySse from "../../src/internal/transport/legacySse.js"
import * as Stdio from "../../src/internal/transport/stdio.js"
import * as StreamableHttp from "../../src/internal/transport/streamableHttp.js"
import * as Transport from "../../src/internal/transport/transport.js"
import * as McpClient from "../../src/McpClient.js"

/** The modules the package exports: every `src/*.ts` (`"./*"`; the index is `"."`). */
const topLevel = readdirSync(new URL("../../src/", import.meta.url))
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -".ts".length))
  .sort()

/** What the transports and the eras hold that is not a plain number or string. */
const internalValues: ReadonlyMap<unknown, string> = new Map(
  Object.entries({ HandshakeEra, StatelessEra, LegacySse, Stdio, StreamableHttp, Transport }).flatMap(([module, exports]) =>
    Object.entries(exports)
      .filter(([, value]) => (typeof value === "object" && value !== null) || typeof value === "function")
      .map(([name, value]) => [value, `${module}.${name}`] as const)
  )
)

/** Every value a module exports, one level into the namespaces it exports (the index's). */
const valuesOf = (exports: Record<string, unknown>): ReadonlyArray<readonly [string, unknown]> =>
  Object.entries(exports).flatMap(([name, value]) =>
    typeof value === "object" && value !== null && Object.prototype.toString.call(value) === "[object Module]"
      ? [[name, value] as const, ...Object.entries(value).map(([inner, v]) => [`${name}.${inner}`, v] as const)]
      : [[name, value] as const]
  )

describe("the package's entry points", () => {
  it("the index exports the public modules, each of the top-level modules but itself and the Promise API", () => {
    const publicModules = [
      "Authorization",
      "ClientHandlers",
      "ConfigImport",
      "HttpProxy",
      "McpCache",
      "McpCatalog",
      "McpClient",
      "McpCodegen",
      "McpConnection",
      "McpConnectionError",
      "McpSchema",
      "McpServers",
      "McpSkills",
      "McpTask",
      "PhasePolicy",
      "ServersFile"
    ]
    expect(Object.keys(Index).sort()).toEqual(publicModules)
    expect(topLevel).toEqual([...publicModules, "index", "promise"].sort())
  })

  it("no public module exports a transport, a transport's constructor or an era", async () => {
    expect(internalValues.size).toBeGreaterThanOrEqual(8) // make ×3, two eras, answerWithoutCapabilities, ...
    const leaks: Array<string> = []
    for (const name of topLevel) {
      const exports = (await import(name === "index" ? "@phasebound/client" : `@phasebound/client/${name}`)) as Record<string, unknown>
      for (const [path, value] of valuesOf(exports)) {
        const internal = internalValues.get(value)
        if (internal !== undefined) leaks.push(`${name}: ${path} is ${internal}`)
      }
    }
    expect(leaks).toEqual([])
  })

  it("the subpaths of the transports and the eras resolve no more, nor does anything under internal/", async () => {
    // A public module resolves through the same "./*" export, and is the module itself.
    expect((await import("@phasebound/client/McpClient")).connect).toBe(McpClient.connect)
    for (const gone of ["Transport", "StreamableHttp", "LegacySse", "Stdio", "ProtocolEra", "internal/transport/transport", "internal/era"]) {
      await expect(import(`@phasebound/client/${gone}`), gone).rejects.toThrow()
    }
  })
})
