/**
 * Checks of `structuredContent` against a tool's `outputSchema` (docs/DESIGN.md, "Typed
 * results"), with Ajv (docs/GUIDE.md, "Typed results", says why this validator). Each schema is compiled once, when
 * the tools are listed; Ajv and RE2 are loaded only when a listing first declares one.
 *
 * - The dialect is the schema's `$schema` when it names one Ajv knows (2020-12, 2019-09,
 *   draft-07), else JSON Schema 2020-12, MCP's default. A schema of any other dialect, one that
 *   is not a valid schema of its dialect, one that names another document (`$ref` to a URL:
 *   nothing is ever fetched), one too deep or too large to compile in bounded time, one with
 *   a pattern that cannot run in linear time, or an `$async` one (its check would answer with a
 *   promise) cannot be compiled: its tool is left out of the listing, since its results could
 *   not be checked.
 * - A schema may be `true` or `false`; a value may be any JSON value.
 * - `format` is an annotation, as 2020-12 says by default; `required` counts own properties
 *   only (so `required: ["constructor"]` is not met by `{}`).
 * - Every check is bounded: patterns run on a linear-time engine (`internal/linearRegExp.ts`),
 *   `uniqueItems` is linear (`internal/meteredHelpers.ts`), and the generated code is metered
 *   (`internal/meteredSource.ts`, `internal/checkMeter.ts`): a check stops at the call's
 *   deadline or at its ceiling of steps, whichever comes first.
 * - A check that throws (it should not; a stack overflow on data nested deeper than the
 *   engine's stack) is a failed check: the safe side.
 * - The compiled schema is dropped from Ajv's own cache at once: a connection relisted for
 *   hours keeps only the checks of its current listing.
 */
import * as Effect from "effect/Effect"
import { CheckStopped, meter, meterHelper, metered, type StopReason } from "./checkMeter.js"
import { linearRegExp, type RegExpEngine } from "./linearRegExp.js"
import { codePointLength, itemsAreUnique, jsonEqual } from "./meteredHelpers.js"
import { meterSource } from "./meteredSource.js"

/** What a check concluded: the value matches, it does not, or the check was stopped. */
export type CheckOutcome = "valid" | "invalid" | StopReason

/** The bounds a call gives the check of its result. */
export interface CallBounds {
  /** The call's deadline, on the `now` clock (milliseconds). */
  readonly deadlineAt: number
  readonly now: () => number
  /** The size of the result as received: the ceiling of steps grows with it. */
  readonly resultBytes: number
}

export type OutputCheck = (value: unknown, bounds: CallBounds) => CheckOutcome

/**
 * The ceilings (docs/BENCHMARKS.md, "Bounded output checks", has the measurements behind them).
 *
 * - A check may take `baseSteps + stepsPerByteUnit × resultBytes × schemaUnits` steps (a linear
 *   validation reads each value once per keyword that applies to it: far below this), never
 *   more than `maxCheckSteps`, about 10-45 ms of the slowest steps here: no check holds the event
 *   loop (every other fiber) for longer, whatever the deadline.
 * - A schema of more than `maxCompileUnits` objects, arrays and keys, or nested deeper than
 *   `maxSchemaDepth`, is not compiled: Ajv's compile cannot be interrupted, and costs about
 *   10-30 µs per unit.
 */
export const maxCheckSteps = 4_000_000
const baseSteps = 65_536
const stepsPerByteUnit = 4
export const maxCompileUnits = 2_048
export const maxSchemaDepth = 256

type Dialect = "2020-12" | "2019-09" | "draft-07"

const dialects: ReadonlyMap<string, Dialect> = new Map([
  ["https://json-schema.org/draft/2020-12/schema", "2020-12"],
  ["https://json-schema.org/draft/2019-09/schema", "2019-09"],
  ["http://json-schema.org/draft-07/schema", "draft-07"]
])

const dialectOf = (declared: unknown): Dialect | undefined => {
  if (declared === undefined) return "2020-12"
  return typeof declared === "string" ? dialects.get(declared.replace(/#$/, "")) : undefined
}

type Schema = Readonly<Record<string, unknown>> | boolean

/** What phasebound uses of an Ajv instance. */
interface AjvCore {
  readonly compile: (schema: Schema) => (value: unknown) => unknown
  readonly removeSchema: (schema: Schema) => unknown
  readonly removeKeyword: (keyword: string) => unknown
  readonly addKeyword: (definition: Readonly<Record<string, unknown>>) => unknown
}

/** A CommonJS module's export, however the loader wraps it. */
const defaultOf = <A>(module: { readonly default?: unknown }): A => {
  const exported = module.default as { readonly default?: unknown } | undefined
  return (typeof exported === "function" ? exported : exported?.default) as A
}
type AjvClass = new(options: Record<string, unknown>) => AjvCore

/** Where the generated code finds the meter: `self[meterProperty]`, `self` being the instance. */
const meterProperty = "phaseboundMeter"

const optionsWith = (regExp: RegExpEngine) => ({
  strict: false,
  allErrors: false,
  ownProperties: true,
  logger: false,
  // A check needs a yes or no: no error messages to build.
  messages: false,
  // Loops rather than unrolled comparisons past 16 values: each iteration is a metered step.
  loopEnum: 16,
  loopRequired: 16,
  code: {
    // Ajv's optimisation passes make a large compile about 5 times slower (docs/BENCHMARKS.md).
    optimize: false,
    regExp,
    process: (source: string) => {
      const processed = meterSource(source, meterProperty)
      if (processed === undefined) throw new Error("generated code of an unexpected shape")
      return processed
    }
  }
})

const make = (Class: AjvClass, regExp: RegExpEngine): AjvCore => {
  const instance = new Class(optionsWith(regExp))
  Object.defineProperty(instance, meterProperty, { value: meter })
  instance.removeKeyword("uniqueItems")
  instance.addKeyword({
    keyword: "uniqueItems",
    type: "array",
    schemaType: "boolean",
    errors: false,
    validate: (unique: boolean, items: ReadonlyArray<unknown>) => !unique || itemsAreUnique(items)
  })
  return instance
}

/** One Ajv per dialect, loaded and made on first use, shared by the process. */
let loaded: Promise<Readonly<Record<Dialect, AjvCore>>> | undefined
const load = () =>
  loaded ??= Promise.all([
    import("ajv/dist/2020.js"),
    import("ajv/dist/2019.js"),
    import("ajv"),
    import("ajv/dist/runtime/equal.js"),
    import("ajv/dist/runtime/ucs2length.js"),
    import("re2js")
  ]).then(([v2020, v2019, draft07, equal, ucs2length, re2]) => {
    meterHelper(defaultOf(equal), jsonEqual)
    meterHelper(defaultOf(ucs2length), codePointLength)
    const regExp = linearRegExp(re2.RE2JS)
    return {
      "2020-12": make(defaultOf(v2020), regExp),
      "2019-09": make(defaultOf(v2019), regExp),
      "draft-07": make(defaultOf(draft07), regExp)
    }
  })

/** The validators, loaded when a listing first needs them. */
export const validators: Effect.Effect<Readonly<Record<Dialect, AjvCore>>> = Effect.promise(load)

/**
 * The size of a schema for the compile bound: its objects, arrays and object keys (walked
 * without recursion), or `undefined` past `maxCompileUnits` or `maxSchemaDepth`.
 */
export const schemaUnits = (schema: unknown): number | undefined => {
  let units = 0
  const pending: Array<readonly [unknown, number]> = [[schema, 1]]
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!
    if (typeof value !== "object" || value === null) continue
    if (depth > maxSchemaDepth) return undefined
    const children = Array.isArray(value) ? value : Object.values(value)
    units += 1 + (Array.isArray(value) ? 0 : children.length)
    if (units > maxCompileUnits) return undefined
    for (const child of children) pending.push([child, depth + 1])
  }
  return units
}

/** A compiled `outputSchema`, or `"uncompilable"` (see the module comment). */
export const compileOutputSchema = (
  ajv: Readonly<Record<Dialect, AjvCore>>,
  schema: Schema
): OutputCheck | "uncompilable" => {
  const dialect = dialectOf(typeof schema === "boolean" ? undefined : schema["$schema"])
  if (dialect === undefined) return "uncompilable"
  const units = schemaUnits(schema)
  if (units === undefined) return "uncompilable"
  const instance = ajv[dialect]
  let validate: (value: unknown) => unknown
  try {
    validate = instance.compile(schema)
    // An `$async` schema's check returns a promise, rejected for a mismatch: unhandled, it
    // could end the process. Never a tool's output schema.
    if ("$async" in validate) return "uncompilable"
  } catch {
    return "uncompilable"
  } finally {
    try {
      instance.removeSchema(schema)
    } catch {
      // Nothing was cached.
    }
  }
  // V8 compiles a function on its first call, in time proportional to its size: done here,
  // in the listing, rather than in the first call's check.
  try {
    metered({ maxSteps: baseSteps, deadlineAt: Infinity, now: () => 0 }, () => validate(undefined))
  } catch {
    // A check of nothing proves nothing.
  }
  const stepsPerByte = stepsPerByteUnit * units
  return (value, bounds) => {
    const maxSteps = Math.min(maxCheckSteps, baseSteps + stepsPerByte * bounds.resultBytes)
    try {
      const result = metered({ maxSteps, deadlineAt: bounds.deadlineAt, now: bounds.now }, () => validate(value))
      return result instanceof CheckStopped ? result.reason : result === true ? "valid" : "invalid"
    } catch {
      return "invalid"
    }
  }
}
