/**
 * Checks of `structuredContent` against a tool's `outputSchema` (docs/DESIGN.md, "Typed
 * results"), with Ajv (the README says why this validator). Each schema is compiled once, when
 * the tools are listed; Ajv itself is loaded only when a listing first declares one.
 *
 * - The dialect is the schema's `$schema` when it names one Ajv knows (2020-12, 2019-09,
 *   draft-07), else JSON Schema 2020-12, MCP's default. A schema of any other dialect, one that
 *   is not a valid schema of its dialect, one that names another document (`$ref` to a URL:
 *   nothing is ever fetched) or one too deep to compile cannot be compiled: its tool is left
 *   out of the listing, since its results could not be checked.
 * - `format` is an annotation, as 2020-12 says by default; `required` counts own properties
 *   only (so `required: ["constructor"]` is not met by `{}`).
 * - A check that throws (it should not) is a failed check: the safe side.
 * - The compiled schema is dropped from Ajv's own cache at once: a connection relisted for
 *   hours keeps only the checks of its current listing.
 */
import * as Effect from "effect/Effect"

export type OutputCheck = (value: unknown) => boolean

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

/** What phasebound uses of an Ajv instance. */
interface AjvCore {
  readonly compile: (schema: Readonly<Record<string, unknown>>) => (value: unknown) => unknown
  readonly removeSchema: (schema: Readonly<Record<string, unknown>>) => unknown
}

/** A CommonJS module's class, however the loader wraps it. */
type AjvClass = new(options: Record<string, unknown>) => AjvCore
const classOf = (module: { readonly default?: unknown }): AjvClass => {
  const exported = module.default as { readonly default?: unknown } | undefined
  return (typeof exported === "function" ? exported : exported?.default) as AjvClass
}

const options = { strict: false, allErrors: false, ownProperties: true, logger: false } as const

/** One Ajv per dialect, loaded and made on first use, shared by the process. */
let loaded: Promise<Readonly<Record<Dialect, AjvCore>>> | undefined
const load = () =>
  loaded ??= Promise.all([import("ajv/dist/2020.js"), import("ajv/dist/2019.js"), import("ajv")]).then(
    ([v2020, v2019, draft07]) => ({
      "2020-12": new (classOf(v2020))(options),
      "2019-09": new (classOf(v2019))(options),
      "draft-07": new (classOf(draft07))(options)
    })
  )

/** The validators, loaded when a listing first needs them. */
export const validators: Effect.Effect<Readonly<Record<Dialect, AjvCore>>> = Effect.promise(load)

/** A compiled `outputSchema`, or `"uncompilable"` (see the module comment). */
export const compileOutputSchema = (
  ajv: Readonly<Record<Dialect, AjvCore>>,
  schema: Readonly<Record<string, unknown>>
): OutputCheck | "uncompilable" => {
  const dialect = dialectOf(schema["$schema"])
  if (dialect === undefined) return "uncompilable"
  const instance = ajv[dialect]
  let validate: (value: unknown) => unknown
  try {
    validate = instance.compile(schema)
  } catch {
    return "uncompilable"
  } finally {
    try {
      instance.removeSchema(schema)
    } catch {
      // Nothing was cached.
    }
  }
  return (value) => {
    try {
      return validate(value) === true
    } catch {
      return false
    }
  }
}
