/**
 * What the bounds of output checks cost, and what they stop (docs/BENCHMARKS.md, "Bounded output
 * checks"; docs/DESIGN.md, "Typed results"). In process, on the client's own check
 * (`internal/outputSchema.ts`), no network:
 *
 * - per call: the check of the progress-overhead bench's realistic schema and ~1 KB result,
 *   bounded (linear patterns, metered code) against plain Ajv with the options phasebound used
 *   before the bounds;
 * - worst cases: what each hostile schema or result ends with, and how long the check held the
 *   event loop (median of the runs after one warm-up), against no deadline (the ceiling of steps
 *   alone stops it);
 * - compile: time against schema size, up to the compile bound and past it;
 * - end to end: the same `report` call of servers/progressServer.ts with and without its
 *   `outputSchema` (no progress asked, so the difference is the check alone), ABAB blocks.
 *
 *   npm run output-check-bounds -w @phasebound/bench [-- --runs 5 --calls 2000 --blocks 10]
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import Ajv2020 from "ajv/dist/2020.js"
import { Effect, Exit, Layer, Scope } from "effect"
import { compileOutputSchema, type OutputCheck, schemaUnits, validators } from "../../client/src/internal/outputSchema.js"
import { startChild } from "./servers/spawn.js"
import { abab, median, percentile, round } from "./stats.js"
import { outputSchema, structuredContent } from "./servers/reportPayload.js"

const flag = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name)
  return index >= 0 ? Number(process.argv[index + 1]) : fallback
}
const runs = flag("--runs", 5)

const ajv = await Effect.runPromise(validators)
const unbounded = { deadlineAt: Infinity, now: () => performance.now() }
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "")

const compiled = (schema: Record<string, unknown> | boolean): OutputCheck => {
  const check = compileOutputSchema(ajv, schema)
  if (check === "uncompilable") throw new Error("expected a compiled schema")
  return check
}

/** Microseconds per check, over `count` checks after as many for warm-up. */
const perCheck = (check: () => unknown, count: number) => {
  for (let i = 0; i < count; i++) check()
  const started = performance.now()
  for (let i = 0; i < count; i++) check()
  return ((performance.now() - started) / count) * 1_000
}

// Per call: bounded against plain Ajv (the options before the bounds).
const AjvClass = ((Ajv2020 as unknown as { default?: unknown }).default ?? Ajv2020) as new(o: object) => {
  compile: (s: object) => (v: unknown) => boolean
}
const plainAjv = new AjvClass({ strict: false, allErrors: false, ownProperties: true, logger: false }).compile(outputSchema)
const bounded = compiled(outputSchema)
const resultBytes = bytesOf(structuredContent)
if (bounded(structuredContent, { ...unbounded, resultBytes }) !== "valid" || !plainAjv(structuredContent)) {
  throw new Error("the realistic result does not validate")
}
const perCall = {
  resultBytes,
  plainAjvUs: round(median(Array.from({ length: runs }, () => perCheck(() => plainAjv(structuredContent), 20_000)))),
  boundedUs: round(median(Array.from({ length: runs }, () => perCheck(() => bounded(structuredContent, { ...unbounded, resultBytes }), 20_000))))
}

// Worst cases.
interface Case {
  readonly name: string
  readonly schema: Record<string, unknown>
  readonly value: unknown
  readonly resultBytes?: number
}
const doubling = (levels: number) => {
  const $defs: Record<string, unknown> = { [`a${levels}`]: { type: "string" } }
  for (let i = 0; i < levels; i++) $defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] }
  return { $defs, $ref: "#/$defs/a0" }
}
const chain = (links: number) => {
  const $defs: Record<string, unknown> = { [`c${links}`]: { type: "number" } }
  for (let i = 0; i < links; i++) $defs[`c${i}`] = { $ref: `#/$defs/c${i + 1}` }
  return { $defs, $ref: "#/$defs/c0" }
}
const smallObjects = (count: number) => Array.from({ length: count }, (_, i) => ({ k: i }))
const cases: ReadonlyArray<Case> = [
  { name: "pattern ^(a+)+$, 40 chars", schema: { type: "string", pattern: "^(a+)+$" }, value: `${"a".repeat(39)}b` },
  { name: "pattern ^(a+)+$, 100,000 chars", schema: { type: "string", pattern: "^(a+)+$" }, value: `${"a".repeat(100_000)}b` },
  {
    name: "patternProperties ^(a+)+$, 100,000 keys",
    schema: { type: "object", patternProperties: { "^(a+)+$": { type: "number" } } },
    value: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`${"a".repeat(30)}${i}`, 1]))
  },
  {
    name: "uniqueItems, 30,000 objects (distinct)",
    schema: { type: "array", uniqueItems: true },
    value: Array.from({ length: 30_000 }, (_, i) => ({ id: i, name: "item" }))
  },
  {
    name: "uniqueItems, 300,000 objects (distinct)",
    schema: { type: "array", uniqueItems: true },
    value: Array.from({ length: 300_000 }, (_, i) => ({ id: i, name: "item" }))
  },
  { name: "$ref doubling, 40 levels (2^40 paths)", schema: doubling(40), value: 1 },
  {
    name: "enum of 1,000 objects x 30,000 items",
    schema: { type: "array", items: { enum: smallObjects(1_000) } },
    value: Array.from({ length: 30_000 }, () => ({ k: 999 }))
  },
  { name: "$ref chain, 600 links", schema: chain(600), value: 1 },
  { name: "$ref chain, 1,000 links", schema: chain(1_000), value: 1 },
  {
    name: "maxLength x 200 anyOf branches x 30,000 strings",
    schema: { type: "array", items: { anyOf: Array.from({ length: 200 }, (_, i) => ({ maxLength: i })) } },
    value: Array.from({ length: 30_000 }, () => "x".repeat(198))
  },
  {
    name: "pattern ^(?:a|b)*a(?:a|b){20}$ (a large DFA), 100,000 chars",
    schema: { type: "string", pattern: "^(?:a|b)*a(?:a|b){20}$" },
    value: "ab".repeat(50_000)
  },
  // A result padded elsewhere (in `content`) raises the ceiling to its cap.
  { name: "$ref doubling, 40 levels, 1 MB result", schema: doubling(40), value: 1, resultBytes: 1_000_000 }
]
const worst = cases.map(({ name, schema, value, resultBytes }) => {
  const compileStarted = performance.now()
  const check = compileOutputSchema(ajv, schema)
  const compileMs = performance.now() - compileStarted
  if (check === "uncompilable") return { name, units: schemaUnits(schema) ?? "over", outcome: "uncompilable", compileMs: round(compileMs, 1) }
  const bytes = resultBytes ?? bytesOf(value)
  let outcome = ""
  const times = Array.from({ length: runs + 1 }, () => {
    const started = performance.now()
    outcome = check(value, { ...unbounded, resultBytes: bytes })
    return performance.now() - started
  }).slice(1)
  return { name, units: schemaUnits(schema), resultBytes: bytes, outcome, compileMs: round(compileMs, 1), checkMs: round(median(times), 2) }
})

// Compile time against size: a flat object of N string properties.
const wide = (count: number) => ({
  type: "object",
  properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`property_name_${i}`, { type: "string", maxLength: 100 }])),
  additionalProperties: false
})
const compiles = [16, 64, 128, 256, 500, 512, 1_000, 20_000].map((count) => {
  const schema = wide(count)
  const times = Array.from({ length: runs }, () => {
    const started = performance.now()
    const check = compileOutputSchema(ajv, schema)
    return [performance.now() - started, check === "uncompilable" ? "uncompilable" : "compiled"] as const
  })
  return {
    properties: count,
    bytes: bytesOf(schema),
    units: schemaUnits(schema) ?? "over the bound",
    outcome: times[0]![1],
    compileMs: round(median(times.map(([ms]) => ms)), 1)
  }
})

// End to end: plain against typed, no progress, over undici, sequential calls.
const calls = flag("--calls", 2_000)
const blocks = flag("--blocks", 10)
const server = await startChild<{ url: string }>("./progressServer.ts", [])
const scope = Effect.runSync(Scope.make())
const http = await Effect.runPromise(Layer.buildWithScope(NodeHttpClient.layerUndici, scope))
const run = <A>(effect: Effect.Effect<A, unknown, any>) => Effect.runPromise(effect.pipe(Effect.provide(http), Scope.extend(scope)) as Effect.Effect<A>)
let endToEnd: Record<string, unknown>
try {
  const open = (path: string) => run(McpClient.connect({ url: `${server.info.url}${path}`, transport: "streamable-http", revisions: ["2025-11-25"] }))
  const connections = { plain: await open("/plain"), checked: await open("/typed") }
  const names = ["plain", "checked"] as const
  const sample = async (name: typeof names[number], count: number) => {
    const times: Array<number> = []
    for (let i = 0; i < count; i++) {
      const started = performance.now()
      await Effect.runPromise(connections[name].callTool("report", {}))
      times.push(performance.now() - started)
    }
    return times
  }
  for (const name of names) await sample(name, 500)
  const p50: Record<string, Array<number>> = { plain: [], checked: [] }
  for (let block = 0; block < blocks; block++) {
    for (const name of abab(names, block)) p50[name]!.push(percentile(await sample(name, calls), 50))
  }
  endToEnd = {
    calls,
    blocks,
    p50Ms: { plain: round(median(p50.plain!)), checked: round(median(p50.checked!)) },
    ratioP50: round(median(p50.checked!) / median(p50.plain!))
  }
} finally {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await server.stop()
}

console.log(JSON.stringify({ runs, perCall, worst, compiles, endToEnd }, null, 2))
