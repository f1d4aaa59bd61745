/**
 * The model of `mapping.ts` as TypeScript source (docs/DESIGN.md, "Typed tools"): an Effect
 * Schema expression, and for the definitions of a reference cycle, the type it decodes to (a
 * `Schema.suspend` needs it written out). Every literal is `JSON.stringify`'s, every comment
 * goes through `text.ts`.
 */
import { literalUnionMax } from "./linearDecode.js"
import { type Check, type Choice, type Definition, kindOfValue, type Node, type Primitive } from "./mapping.js"
import { inlineComment, jsDoc, literal, propertyKey } from "./text.js"

/** The module's own helpers (`module.ts` writes those a module uses). */
export type Helper = "codePointLength" | "objectWith" | "choose" | "oneOf" | "patternOf"

/** Literal values typed one by one; past them, typed by their JSON types (TypeScript caps unions at 100,000 members). */
export const literalTypeMax = 1_000

export interface PrintContext {
  readonly definitions: ReadonlyArray<Definition>
  /** The definitions on a reference cycle: referred to through `Schema.suspend`. */
  readonly cyclic: ReadonlySet<number>
  /**
   * Printing a definition on a reference cycle: its tuples are typed `ReadonlyArray<unknown>`
   * (a `readonly [...]` type alias cannot refer to itself), their Schemas unchanged.
   */
  readonly inCycle?: boolean | undefined
  /** The module's helpers the source uses. */
  readonly helpers: Set<Helper>
}

const number = (n: number) => JSON.stringify(n)

const checkText = (check: Check, ctx: PrintContext): string => {
  switch (check._tag) {
    case "minLength":
    case "maxLength":
      ctx.helpers.add("codePointLength")
      return `Schema.filter((text) => codePointLength(text) ${check._tag === "minLength" ? ">=" : "<="} ${check.n}, { message: () => ${
        literal(`${check._tag === "minLength" ? "at least" : "at most"} ${check.n} characters`)
      } })`
    case "pattern":
      ctx.helpers.add("patternOf")
      return `Schema.pattern(patternOf(${literal(check.source)}))`
    case "gte":
      return `Schema.greaterThanOrEqualTo(${number(check.n)})`
    case "lte":
      return `Schema.lessThanOrEqualTo(${number(check.n)})`
    case "gt":
      return `Schema.greaterThan(${number(check.n)})`
    case "lt":
      return `Schema.lessThan(${number(check.n)})`
    case "multipleOf":
      // The quotient is an integer: Ajv's test (Effect's multipleOf rounds to the divisor's decimals).
      return `Schema.filter((n) => Number.isInteger(n / ${number(check.n)}), { message: () => ${literal(`a multiple of ${number(check.n)}`)} })`
    case "minItems":
      return `Schema.minItems(${check.n})`
    case "maxItems":
      return `Schema.maxItems(${check.n})`
  }
}

const piped = (schema: string, checks: ReadonlyArray<string>) => checks.length === 0 ? schema : `${schema}.pipe(${checks.join(", ")})`

/**
 * What no value matches. Not `Schema.Never`: under `exactOptionalPropertyTypes` it is not a
 * `Schema.Any`, so a tuple or a union would not take it; typed `unknown`.
 */
const never = `Schema.Unknown.pipe(Schema.filter(() => false, { message: () => "no value is allowed here" }))`

/** Whether the Schema of `node` may accept `undefined` (`Unknown`, a union with it, a reference: said yes, to be safe). */
const mayBeUndefined = (node: Node): boolean =>
  node._tag === "Unknown" || node._tag === "Ref" || ((node._tag === "Union" || node._tag === "Choice") && node.members.some(mayBeUndefined))

const primitiveText = (value: Primitive) => JSON.stringify(value)

/** The JSON types of `values`, as a type. */
const primitiveTypes = (values: ReadonlyArray<Primitive>) => [...new Set(values.map(kindOfValue))].join(" | ")

/**
 * A literal of `values`: `Schema.Literal` for a few (Effect tries each in turn), else `oneOf`, one
 * lookup in a `Set`, typed by the values up to `literalTypeMax` and by their JSON types past it.
 */
const literalText = (values: ReadonlyArray<Primitive>, ctx: PrintContext): string => {
  if (values.length <= literalUnionMax) return `Schema.Literal(${values.map(primitiveText).join(", ")})`
  ctx.helpers.add("oneOf")
  const list = `[${values.map(primitiveText).join(", ")}]`
  if (values.length <= literalTypeMax) return `oneOf(${list})`
  return `oneOf<ReadonlyArray<${primitiveTypes(values)}>>(${list}) ${
    inlineComment(`${values.length} values: typed by their JSON types, each value still checked`)
  }`
}

/** `choose`'s route, as the helper reads it. */
const routeText = (route: Choice["route"]): string => {
  const parts: Array<string> = []
  for (const [slot, indices] of Object.entries(route.kinds)) parts.push(`${slot}: [${indices!.join(", ")}]`)
  if (route.objects !== undefined) {
    const cases = route.objects.cases.map(([value, i]) => `[${primitiveText(value)}, ${i}]`).join(", ")
    const absent = route.objects.absent === undefined ? "" : `, absent: ${route.objects.absent}`
    parts.push(`object: { key: ${literal(route.objects.key)}, cases: [${cases}]${absent} }`)
  }
  return `{ ${parts.join(", ")} }`
}

/** The Schema expression of `node`, at `indent` (objects span lines), after a comment where union members were widened into it. */
export const schemaText = (node: Node, ctx: PrintContext, indent: string): string => {
  const text = bareSchemaText(node, ctx, indent)
  return "widened" in node && node.widened !== undefined ? `${inlineComment(node.widened)} ${text}` : text
}

const bareSchemaText = (node: Node, ctx: PrintContext, indent: string): string => {
  const inner = `${indent}  `
  switch (node._tag) {
    case "Unknown":
      return node.why === undefined ? "Schema.Unknown" : `Schema.Unknown ${inlineComment(`not mapped: ${node.why}`)}`
    case "Never":
      return never
    case "String":
      return piped("Schema.String", node.checks.map((check) => checkText(check, ctx)))
    case "Number": {
      const checks = node.checks.map((check) => checkText(check, ctx))
      // Not Schema.Int: it refuses integers past 2^53, which JSON Schema's `integer` accepts.
      if (node.integer) checks.unshift(`Schema.filter((n) => Number.isInteger(n), { message: () => "an integer" })`)
      return piped("Schema.Number", checks)
    }
    case "Boolean":
      return "Schema.Boolean"
    case "Null":
      return "Schema.Null"
    case "Literal":
      return node.values.length === 0 ? never : literalText(node.values, ctx)
    case "Array":
      return piped(`Schema.Array(${schemaText(node.item, ctx, indent)})`, node.checks.map((check) => checkText(check, ctx)))
    case "Tuple": {
      const elements = node.elements.map((element, i) => {
        const text = schemaText(element, ctx, inner)
        return i < node.required ? text : `Schema.optionalElement(${text})`
      })
      // `Schema.Tuple(a, b)`; with a rest, `Schema.Tuple([a, b], rest)`.
      const tuple = node.rest === undefined
        ? `Schema.Tuple(${elements.join(", ")})`
        : `Schema.Tuple([${elements.join(", ")}], ${schemaText(node.rest, ctx, indent)})`
      const checked = piped(tuple, node.checks.map((check) => checkText(check, ctx)))
      return ctx.inCycle === true ? `(${checked} as unknown as Schema.Schema<ReadonlyArray<unknown>>)` : checked
    }
    case "Object": {
      if (node.properties.length === 0) {
        const value = node.additional === "open" ? "Schema.Unknown" : node.additional === "closed" ? never : schemaText(node.additional, ctx, indent)
        return `Schema.Record({ key: Schema.String, value: ${value} })`
      }
      const fields = node.properties.map((property) => {
        const doc = jsDoc([
          ...(property.description === undefined ? [] : [property.description]),
          ...(property.default === undefined ? [] : [`@default ${property.default}`])
        ], inner)
        const value = schemaText(property.node, ctx, inner)
        // A Struct decodes a missing key as `undefined` (a missing `toString` as the prototype's
        // function): where the key's Schema would accept that, a required key is checked to be
        // there. A JSON value is never `undefined`, nor a function.
        const required = mayBeUndefined(property.node)
          ? `${value}.pipe(Schema.filter((value) => value !== undefined && typeof value !== "function", { message: () => "a required key" }))`
          : value
        return `${doc}${inner}${propertyKey(property.key)}: ${property.optional ? `Schema.optional(${value})` : required}`
      })
      // Keys the schema does not name are kept (open), refused (closed) or checked, never dropped.
      ctx.helpers.add("objectWith")
      const rest = node.additional === "open" || node.additional === "closed"
        ? literal(node.additional)
        : `() => ${schemaText(node.additional, ctx, inner)}`
      return `objectWith(Schema.Struct({\n${fields.join(",\n")}\n${indent}}), ${rest})`
    }
    case "Union":
      if (node.members.length === 0) return never
      if (node.members.length === 1) return schemaText(node.members[0]!, ctx, indent)
      return `Schema.Union(${node.members.map((member) => schemaText(member, ctx, indent)).join(", ")})`
    case "Choice":
      ctx.helpers.add("choose")
      return `choose([${node.members.map((member) => schemaText(member, ctx, indent)).join(", ")}], ${routeText(node.route)})`
    case "Ref": {
      if (node.broken) return `Schema.Unknown ${inlineComment("not mapped: a $ref cycle through no object or array")}`
      const name = ctx.definitions[node.def]!.name
      return ctx.cyclic.has(node.def) ? `Schema.suspend((): Schema.Schema<${name}> => ${name})` : name
    }
  }
}

/** The type `schemaText(node)` decodes to (the Schemas printed here have the same type and encoded type). */
export const typeText = (node: Node, ctx: PrintContext, indent: string): string => {
  const inner = `${indent}  `
  switch (node._tag) {
    case "Unknown":
      return "unknown"
    case "Never":
      return "unknown"
    case "String":
      return "string"
    case "Number":
      return "number"
    case "Boolean":
      return "boolean"
    case "Null":
      return "null"
    case "Literal":
      if (node.values.length === 0) return "unknown"
      return node.values.length <= literalTypeMax ? node.values.map(primitiveText).join(" | ") : primitiveTypes(node.values)
    case "Array":
      return `ReadonlyArray<${typeText(node.item, ctx, indent)}>`
    case "Tuple": {
      if (ctx.inCycle === true) return "ReadonlyArray<unknown>"
      const elements = node.elements.map((element, i) => `${typeText(element, ctx, inner)}${i < node.required ? "" : "?"}`)
      if (node.rest !== undefined) elements.push(`...Array<${typeText(node.rest, ctx, indent)}>`)
      return `readonly [${elements.join(", ")}]`
    }
    case "Object": {
      if (node.properties.length === 0) {
        const value = node.additional === "open" || node.additional === "closed" ? "unknown" : typeText(node.additional, ctx, indent)
        return `{ readonly [x: string]: ${value} }`
      }
      const fields = node.properties.map((property) => {
        const value = typeText(property.node, ctx, inner)
        return `${inner}readonly ${propertyKey(property.key)}${property.optional ? `?: (${value}) | undefined` : `: ${value}`}`
      })
      return `{\n${fields.join("\n")}\n${indent}}`
    }
    case "Union":
    case "Choice":
      return node.members.length === 0 ? "unknown" : node.members.map((member) => `(${typeText(member, ctx, indent)})`).join(" | ")
    case "Ref":
      return node.broken ? "unknown" : ctx.definitions[node.def]!.name
  }
}
