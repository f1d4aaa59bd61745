/**
 * `phasebound types` as the Node bundle runs it against the testkit's features: `--out` writes
 * the module (and prints what it wrote), without `--out` the module is stdout; `--all-servers`
 * writes one module that type-checks, loads and calls each server; a file that cannot be
 * written is one InvalidOption record naming `--out`, and no temporary file is left.
 */
import { FetchHttpClient } from "@effect/platform"
import { McpClient } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { typeCheck } from "../../client/test/support/codegen.js"
import { cliDir, expectFailure, expectJson, run } from "./support/cli.js"

let server: Testkit.TestServer
let dir: string
beforeAll(async () => {
  server = await Testkit.startServer({ features: true })
  dir = mkdtempSync(path.join(tmpdir(), "phasebound-types-"))
})
afterAll(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

const node = (args: ReadonlyArray<string>) => run("node", args)

describe("types", () => {
  it("--out: the module written atomically over what was there; stdout says what was written", async () => {
    const out = path.join(dir, "tools.ts")
    writeFileSync(out, "old")
    const report = expectJson(await node(["types", server.url, "--out", out])) as {
      readonly out: string
      readonly tools: ReadonlyArray<{ readonly name: string; readonly helper: string }>
      readonly notes: ReadonlyArray<unknown>
    }
    expect(report.out).toBe(out)
    expect(report.tools.find((tool) => tool.name === "weather")).toEqual({ name: "weather", helper: "weather", input: "WeatherInput", output: "WeatherOutput" })
    expect(report.notes).toEqual([])
    const source = readFileSync(out, "utf8")
    expect(source).toContain(`connection.callToolDecoded(WeatherOutput, "weather", args, options)`)
    expect(source).toContain(`import { ParseResult, Schema, type SchemaAST } from "effect"`)
    expect(readdirSync(dir)).toEqual(["tools.ts"])
    // Without --out, the same module on stdout.
    const printed = await node(["types", server.url])
    expect({ code: printed.code, stderr: printed.stderr }).toEqual({ code: 0, stderr: "" })
    expect(printed.stdout).toBe(source)
  })

  it("--all-servers: every server of the config file in one module, each server's names prefixed", async () => {
    const config = path.join(dir, "servers.json")
    writeFileSync(config, JSON.stringify({ mcpServers: { alpha: { url: server.url }, "beta-two": { url: server.url } } }))
    // Under test/.generated (gitignored), where `effect` resolves, to be type-checked and loaded.
    const generated = path.join(cliDir, "test", ".generated")
    mkdirSync(generated, { recursive: true })
    const out = path.join(generated, "all-servers.ts")
    const report = expectJson(await node(["types", "--all-servers", "--config", config, "--out", out])) as {
      readonly tools: ReadonlyArray<{ readonly name: string; readonly helper: string }>
    }
    const helpers = report.tools.filter((tool) => tool.name === "weather").map((tool) => tool.helper)
    expect(helpers).toEqual(["alphaWeather", "betaTwoWeather"])
    const source = readFileSync(out, "utf8")
    expect(source).toContain("export const AlphaWeatherOutput = ")
    expect(source).toContain("export const BetaTwoWeatherOutput = ")
    // The module type-checks against `effect` and the client's declarations, loads, and its helpers call.
    expect(typeCheck([out]).get(out)).toEqual([])
    const loaded = await import(/* @vite-ignore */ out) as Record<string, any>
    const weather = await Effect.runPromise(
      Effect.flatMap(
        McpClient.connect({ url: server.url }),
        (connection) => loaded["betaTwoWeather"](connection, { city: "Lima" }) as Effect.Effect<McpClient.DecodedResult<unknown>>
      )
        .pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
    )
    expect(weather.isError === false && weather.value).toEqual(weather.result.structuredContent)
    rmSync(out)
    rmSync(config)
    // A target beside --all-servers is a usage error, before any I/O.
    const record = expectFailure(await node(["types", server.url, "--all-servers", "--config", config]), 2, "InvalidOption")
    expect(record.option).toBe("--all-servers")
  })

  it("a file that cannot be written: InvalidOption --out, nothing left behind", async () => {
    const record = expectFailure(await node(["types", server.url, "--out", path.join(dir, "missing", "tools.ts")]), 2, "InvalidOption")
    expect(record.option).toBe("--out")
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([])
  })
})
