/**
 * JSON Schema to a small model of Effect Schemas (docs/DESIGN.md, "Typed tools"): what maps,
 * what is kept but not checked, what falls back to `Schema.Unknown`. The walk is bounded: its
 * depth by `maxDepth` (deeper is `Unknown`), its work by a budget of nodes (past it, `Unknown`),
 * each definition is mapped once, from a work list (a chain of `$ref`s never deepens the stack).
 * Every fallback is sound: the model accepts at least what the JSON Schema accepts.
 */

/** A check of a string, a number or an array. Lengths count code points, as JSON Schema does. */
export type Check =
  | { readonly _tag: "minLength" | "maxLength" | "minItems" | "maxItems"; readonly n: number }
  | { readonly _tag: "pattern"; readonly source: string }
  | { readonly _tag: "gte" | "lte" | "gt" | "lt" | "multipleOf"; readonly n: number }

export type Primitive = string | number | boolean | null

export interface Property {
  readonly key: string
  readonly node: Node
  readonly optional: boolean
  readonly description: string | undefined
  readonly default: string | undefined
}

/** Set where `linearDecode.ts` widened union members into this node: why, for a comment in the module. */
export interface Widened {
  readonly widened?: string | undefined
}

export type Node =
  | { readonly _tag: "Unknown"; readonly why: string | undefined }
  | { readonly _tag: "Never" }
  | { readonly _tag: "String"; readonly checks: ReadonlyArray<Check> } & Widened
  | { readonly _tag: "Number"; readonly integer: boolean; readonly checks: ReadonlyArray<Check> } & Widened
  | { readonly _tag: "Boolean" } & Widened
  | { readonly _tag: "Null" } & Widened
  | { readonly _tag: "Literal"; readonly values: ReadonlyArray<Primitive> } & Widened
  | { readonly _tag: "Array"; readonly item: Node; readonly checks: ReadonlyArray<Check> } & Widened
  | {
    readonly _tag: "Tuple"
    readonly elements: ReadonlyArray<Node>
    readonly required: number
    readonly rest: Node | undefined
    readonly checks: ReadonlyArray<Check>
  }
  | { readonly _tag: "Object"; readonly properties: ReadonlyArray<Property>; readonly additional: "open" | "closed" | Node } & Widened
  /** `path`: where the union is, for the notes of `linearDecode.ts`. */
  | { readonly _tag: "Union"; readonly members: ReadonlyArray<Node>; readonly path: string }
  | Choice
  | Ref

/** The JSON types (`type` without `integer`), in the order a schema without `type` is mapped to a union of them. */
const jsonTypes = ["null", "boolean", "object", "array", "number", "string"] as const

/** A JSON value's type, as a value is dispatched on it. */
export type Kind = (typeof jsonTypes)[number]

/** The JSON type of a primitive value. */
export const kindOfValue = (value: Primitive): Kind => value === null ? "null" : typeof value as "boolean" | "number" | "string"

/**
 * A union decoded by choosing (made by `linearDecode.ts`, never by the mapping): a value is tried
 * only by the members `route` lists for its JSON type, and an object with `objects` only by the
 * member the value of its `key` names (`absent`: the member for an object without the key).
 * `other` lists the members that may take a value of no JSON type (only `Unknown` does).
 */
export interface Choice extends Widened {
  readonly _tag: "Choice"
  readonly members: ReadonlyArray<Node>
  readonly route: Route
}

export interface Route {
  readonly kinds: { readonly [K in Kind | "other"]?: ReadonlyArray<number> }
  readonly objects?: {
    readonly key: string
    readonly cases: ReadonlyArray<readonly [Primitive, number]>
    readonly absent: number | undefined
  } | undefined
}

/** A reference to a definition; `guarded` when an object or an array lies between it and its definition's root. */
export interface Ref {
  readonly _tag: "Ref"
  readonly def: number
  readonly guarded: boolean
  /** Set when the reference closes a cycle through no object or array (it would never end): printed as `Unknown`. */
  broken: boolean
}

/** What is not exactly as the JSON Schema says: `fallback` (Unknown instead), `unchecked` (kept, not enforced). */
export interface Note {
  readonly kind: "fallback" | "unchecked"
  readonly path: string
  readonly reason: string
}

export interface Definition {
  readonly key: string
  readonly name: string
  readonly description: string | undefined
  node: Node
  /** The references in `node` (not through other definitions). */
  refs: Array<Ref>
}

export interface Limits {
  readonly maxDepth: number
  /** Shared by every schema of one generation. */
  nodesLeft: number
}

/** One JSON Schema document (a tool's input or output schema) and its definitions. */
export interface Document {
  readonly root: Node
  readonly definitions: ReadonlyArray<Definition>
  readonly notes: ReadonlyArray<Note>
}

/** Elements of `prefixItems` mapped one by one; past them, the rest is `Unknown` (TypeScript refuses very long tuple types). */
const maxTupleElements = 256

/** The notes of one document: past them, no more are kept. */
export const maxNotes = 1_000

/** Properties of one object mapped one by one; past them, the object is open (TypeScript and Effect slow down on huge object types). */
export const maxProperties = 1_000

const hasOwn = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key)

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

const own = (value: Readonly<Record<string, unknown>>, key: string): unknown => hasOwn(value, key) ? value[key] : undefined

const isPrimitive = (value: unknown): value is Primitive =>
  value === null || typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

const unknown = (why?: string): Node => ({ _tag: "Unknown", why })

/** Keywords whose meaning the model cannot hold: the node is `Unknown`. */
const unmapped = [
  "not",
  "if",
  "then",
  "else",
  "dependentSchemas",
  "dependencies",
  "patternProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "$dynamicRef",
  "$recursiveRef"
] as const

/** Keywords that only restrict: the model without them accepts more, never less. */
const restricting = ["uniqueItems", "minProperties", "maxProperties", "contains", "propertyNames", "dependentRequired"] as const

const stringKeywords = ["minLength", "maxLength", "pattern", "format"] as const
const numberKeywords = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"] as const
const objectKeywords = ["properties", "required", "additionalProperties"] as const
const arrayKeywords = ["items", "prefixItems", "additionalItems", "minItems", "maxItems"] as const
const typedKeywords = [...stringKeywords, ...numberKeywords, ...objectKeywords, ...arrayKeywords] as const

type JsonType = Kind | "integer"

const nonNegativeInteger = (value: unknown): number | undefined => typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined

const finite = (value: unknown): number | undefined => typeof value === "number" && Number.isFinite(value) ? value : undefined

/** A key as a JSON Pointer segment: `~` is `~0`, `/` is `~1` (`pointerSegment` reads it back). */
export const pointerToken = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1")

/** A JSON Pointer segment (`~1` is `/`, `~0` is `~`), percent-decoded as a URI fragment is. */
const pointerSegment = (segment: string): string | undefined => {
  let decoded: string
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    return undefined
  }
  return decoded.replace(/~1/g, "/").replace(/~0/g, "~")
}

/** The mapper of one document; `define` gives each definition's constant its name. */
export const mapDocument = (
  schema: unknown,
  limits: Limits,
  define: (definitionName: string) => string,
  isLinearPattern: (source: string) => boolean
): Document => {
  const notes: Array<Note> = []
  const definitions: Array<Definition> = []
  const byKey = new Map<string, number>()
  const pending: Array<{ readonly index: number; readonly schema: unknown }> = []
  const root = isObject(schema) ? schema : undefined
  let current: Definition | undefined

  const note = (kind: Note["kind"], path: string, reason: string) => {
    if (notes.length < maxNotes) notes.push({ kind, path: path === "" ? "/" : path, reason })
  }
  const fallback = (path: string, reason: string): Node => {
    note("fallback", path, reason)
    return unknown(reason)
  }

  /** The definition a local `$ref` names (`#/$defs/x`, `#/definitions/x`), mapped later from the work list. */
  const reference = (ref: string, path: string, guarded: boolean): Node => {
    const match = /^#\/(\$defs|definitions)\/([^/]*)$/.exec(ref)
    if (match === null) return fallback(path, "$ref: only #/$defs/<name> and #/definitions/<name> are resolved (no other pointer, no other document)")
    const container = match[1]!
    const name = pointerSegment(match[2]!)
    const defs = root === undefined ? undefined : own(root, container)
    if (name === undefined || !isObject(defs) || !hasOwn(defs, name)) return fallback(path, "$ref: no such definition")
    const key = `${container}/${name}`
    let index = byKey.get(key)
    if (index === undefined) {
      index = definitions.length
      const target = defs[name]
      definitions.push({
        key,
        name: define(name),
        description: isObject(target) && typeof target["description"] === "string" ? target["description"] : undefined,
        node: unknown(),
        refs: []
      })
      byKey.set(key, index)
      pending.push({ index, schema: target })
    }
    const node: Ref = { _tag: "Ref", def: index, guarded, broken: false }
    current?.refs.push(node)
    return node
  }

  /** `allOf` whose members are all objects (local `$ref`s to objects resolved): one object, the members' properties merged. */
  const mergeAllOf = (node: Readonly<Record<string, unknown>>, members: ReadonlyArray<unknown>): Record<string, unknown> | undefined => {
    const properties: Record<string, unknown> = Object.create(null)
    const required: Array<unknown> = []
    const parts: Array<unknown> = [...members, node]
    for (let part of parts) {
      for (let hops = 0; isObject(part) && typeof part["$ref"] === "string" && hops < 8; hops++) {
        const match = /^#\/(\$defs|definitions)\/([^/]*)$/.exec(part["$ref"])
        const name = match === null ? undefined : pointerSegment(match[2]!)
        const defs = root === undefined || match === null ? undefined : own(root, match[1]!)
        part = name !== undefined && isObject(defs) && hasOwn(defs, name) ? defs[name] : undefined
      }
      if (part === true) continue
      if (!isObject(part)) return undefined
      for (const key of Object.keys(part)) {
        if (part === node && key === "allOf") continue
        if (!["type", "properties", "required", "additionalProperties", ...annotations].includes(key)) return undefined
      }
      if (hasOwn(part, "type") && part["type"] !== "object") return undefined
      if (hasOwn(part, "additionalProperties") && part["additionalProperties"] !== true) return undefined
      const props = own(part, "properties")
      if (props !== undefined) {
        if (!isObject(props)) return undefined
        for (const key of Object.keys(props)) {
          properties[key] = hasOwn(properties, key) ? { allOf: [properties[key], props[key]] } : props[key]
        }
      }
      const req = own(part, "required")
      if (Array.isArray(req)) { for (const key of req) required.push(key) }
    }
    return { type: "object", properties, required }
  }

  const checksOf = (node: Readonly<Record<string, unknown>>, path: string, type: "string" | "number" | "array"): Array<Check> => {
    const checks: Array<Check> = []
    if (type === "string") {
      const min = nonNegativeInteger(own(node, "minLength"))
      const max = nonNegativeInteger(own(node, "maxLength"))
      if (min !== undefined && min > 0) checks.push({ _tag: "minLength", n: min })
      if (max !== undefined) checks.push({ _tag: "maxLength", n: max })
      const pattern = own(node, "pattern")
      if (typeof pattern === "string") {
        if (isLinearPattern(pattern)) checks.push({ _tag: "pattern", source: pattern })
        else note("unchecked", path, "pattern: not one that JavaScript's engine runs in linear time")
      }
      if (hasOwn(node, "format")) note("unchecked", path, "format: an annotation")
    } else if (type === "number") {
      const minimum = finite(own(node, "minimum"))
      const maximum = finite(own(node, "maximum"))
      const exclusiveMinimum = own(node, "exclusiveMinimum")
      const exclusiveMaximum = own(node, "exclusiveMaximum")
      if (minimum !== undefined) checks.push({ _tag: exclusiveMinimum === true ? "gt" : "gte", n: minimum })
      if (maximum !== undefined) checks.push({ _tag: exclusiveMaximum === true ? "lt" : "lte", n: maximum })
      if (finite(exclusiveMinimum) !== undefined) checks.push({ _tag: "gt", n: exclusiveMinimum as number })
      if (finite(exclusiveMaximum) !== undefined) checks.push({ _tag: "lt", n: exclusiveMaximum as number })
      const multipleOf = finite(own(node, "multipleOf"))
      if (multipleOf !== undefined && multipleOf > 0) checks.push({ _tag: "multipleOf", n: multipleOf })
    } else {
      const min = nonNegativeInteger(own(node, "minItems"))
      const max = nonNegativeInteger(own(node, "maxItems"))
      if (min !== undefined && min > 0) checks.push({ _tag: "minItems", n: min })
      if (max !== undefined) checks.push({ _tag: "maxItems", n: max })
    }
    return checks
  }

  const mapArray = (node: Readonly<Record<string, unknown>>, path: string, depth: number): Node => {
    const checks = checksOf(node, path, "array")
    const prefixItems = own(node, "prefixItems")
    const items = own(node, "items")
    const minItems = nonNegativeInteger(own(node, "minItems")) ?? 0
    // `maxItems: 0` is the empty array (Effect's `maxItems` takes no 0).
    if (nonNegativeInteger(own(node, "maxItems")) === 0) {
      return minItems > 0 ? { _tag: "Never" } : { _tag: "Tuple", elements: [], required: 0, rest: undefined, checks: [] }
    }
    const prefix = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined
    if (prefix === undefined) {
      return { _tag: "Array", item: items === undefined ? unknown() : map(items, `${path}/items`, depth + 1, true), checks }
    }
    const restSchema = Array.isArray(prefixItems) ? items : own(node, "additionalItems")
    const mapped = prefix.slice(0, maxTupleElements)
    const elements = mapped.map((element, i) => map(element, `${path}/prefixItems/${i}`, depth + 1, true))
    let rest = restSchema === undefined ? unknown() : restSchema === false ? undefined : map(restSchema, `${path}/items`, depth + 1, true)
    if (prefix.length > mapped.length) rest = fallback(`${path}/prefixItems/${maxTupleElements}`, `prefixItems past the ${maxTupleElements}th: not checked`)
    const required = Math.min(minItems, elements.length)
    // minItems up to the prefix's length is the required elements; past it, still a check.
    const kept = checks.filter((check) => !(check._tag === "minItems" && check.n <= elements.length))
    return { _tag: "Tuple", elements, required, rest, checks: kept }
  }

  const mapObject = (node: Readonly<Record<string, unknown>>, path: string, depth: number): Node => {
    const props = own(node, "properties")
    const propertyMap = isObject(props) ? props : {}
    const requiredList = own(node, "required")
    const required = new Set(Array.isArray(requiredList) ? requiredList.filter((key): key is string => typeof key === "string") : [])
    limits.nodesLeft -= required.size
    const allKeys = Object.keys(propertyMap)
    if (allKeys.includes("__proto__") || required.has("__proto__")) return fallback(path, "a property named __proto__")
    const undescribedKeys = [...required].filter((key) => !hasOwn(propertyMap, key))
    // Past maxProperties, the first ones are mapped and the object is open: it accepts more, never less.
    const capped = allKeys.length + undescribedKeys.length > maxProperties
    if (capped) note("unchecked", path, `properties past the ${maxProperties}th: not checked (the object is open)`)
    const keys = allKeys.slice(0, maxProperties)
    const additionalSchema = own(node, "additionalProperties")
    const additional: "open" | "closed" | Node = capped || additionalSchema === undefined || additionalSchema === true
      ? "open"
      : additionalSchema === false
      ? "closed"
      : map(additionalSchema, `${path}/additionalProperties`, depth + 1, true)
    const properties: Array<Property> = keys.map((key) => {
      const schema = propertyMap[key]
      const described = isObject(schema) ? schema : {}
      const description = own(described, "description")
      const value = own(described, "default")
      return {
        key,
        node: map(schema, `${path}/properties/${pointerToken(key)}`, depth + 1, true),
        optional: !required.has(key),
        description: typeof description === "string" ? description : undefined,
        default: hasOwn(described, "default") ? (isPrimitive(value) ? JSON.stringify(value) : "(a JSON object or array)") : undefined
      }
    })
    // A required key the schema does not describe holds what `additionalProperties` allows.
    const undescribed: Node = additional === "open" ? unknown() : additional === "closed" ? { _tag: "Never" } : additional
    for (const key of undescribedKeys.slice(0, maxProperties - keys.length)) {
      properties.push({ key, node: undescribed, optional: false, description: undefined, default: undefined })
    }
    return { _tag: "Object", properties, additional }
  }

  const branch = (type: JsonType, node: Readonly<Record<string, unknown>>, path: string, depth: number): Node => {
    switch (type) {
      case "null":
        return { _tag: "Null" }
      case "boolean":
        return { _tag: "Boolean" }
      case "string":
        return { _tag: "String", checks: checksOf(node, path, "string") }
      case "number":
      case "integer":
        return { _tag: "Number", integer: type === "integer", checks: checksOf(node, path, "number") }
      case "array":
        return mapArray(node, path, depth)
      case "object":
        return mapObject(node, path, depth)
    }
  }

  /** `type`, `enum`, `const` and the keywords of each type: the schema without its combinators. */
  const base = (node: Readonly<Record<string, unknown>>, path: string, depth: number): Node | undefined => {
    const type = own(node, "type")
    let types: Array<JsonType> | undefined
    if (type !== undefined) {
      const list = Array.isArray(type) ? type : [type]
      if (!list.every((t): t is JsonType => typeof t === "string" && ([...jsonTypes, "integer"] as ReadonlyArray<string>).includes(t))) {
        return fallback(path, "type: not a JSON type")
      }
      types = [...new Set(list)]
      if (types.includes("number")) types = types.filter((t) => t !== "integer")
    }
    const hasTyped = typedKeywords.some((keyword) => hasOwn(node, keyword))
    if (hasOwn(node, "const") || hasOwn(node, "enum")) {
      const values = hasOwn(node, "const") ? [node["const"]] : own(node, "enum")
      if (!Array.isArray(values)) return fallback(path, "enum: not an array")
      limits.nodesLeft -= values.length
      if (!values.every(isPrimitive)) return fallback(path, "enum or const with an object or array value")
      if (hasOwn(node, "const") && hasOwn(node, "enum")) note("unchecked", path, "enum beside const")
      if (hasTyped) note("unchecked", path, "keywords beside enum or const")
      const matching = values.filter((value) => types === undefined || types.some((t) => t === "integer" ? Number.isInteger(value) : t === kindOfValue(value)))
      return { _tag: "Literal", values: [...new Set(matching)] }
    }
    if (types === undefined) {
      if (!hasTyped) return undefined
      // Without `type`, each keyword constrains only values of its own type.
      types = [...jsonTypes]
    }
    const members = types.map((t) => branch(t, node, path, depth))
    return members.length === 1 ? members[0]! : { _tag: "Union", members, path: path === "" ? "/" : path }
  }

  /** The model of `schema`; `guarded` once an object or an array lies between it and its definition's root. */
  const map = (schema: unknown, path: string, depth: number, guarded: boolean): Node => {
    if (schema === true) return unknown()
    if (schema === false) return { _tag: "Never" }
    if (!isObject(schema)) return fallback(path, "not a schema")
    if (depth > limits.maxDepth) return fallback(path, "nested deeper than maxDepth")
    if (--limits.nodesLeft < 0) return fallback(path, "past the generation's budget of nodes")
    for (const keyword of unmapped) {
      if (hasOwn(schema, keyword)) return fallback(path, `the keyword ${keyword}`)
    }
    for (const keyword of restricting) {
      if (hasOwn(schema, keyword)) note("unchecked", path, `${keyword}: not checked`)
    }
    const ref = own(schema, "$ref")
    const anyOf = own(schema, "anyOf")
    const oneOf = own(schema, "oneOf")
    const allOf = own(schema, "allOf")
    if (allOf !== undefined) {
      if (!Array.isArray(allOf)) return fallback(path, "allOf: not an array")
      const merged = ref === undefined && anyOf === undefined && oneOf === undefined ? mergeAllOf(schema, allOf) : undefined
      return merged === undefined ? fallback(path, "allOf: only objects are merged") : map(merged, path, depth + 1, guarded)
    }
    const combinators: Array<Node> = []
    if (typeof ref === "string") combinators.push(reference(ref, path, guarded))
    else if (ref !== undefined) return fallback(path, "$ref: not a string")
    for (const [keyword, list] of [["anyOf", anyOf], ["oneOf", oneOf]] as const) {
      if (list === undefined) continue
      if (!Array.isArray(list)) return fallback(path, `${keyword}: not an array`)
      if (keyword === "oneOf") note("unchecked", path, "oneOf: a union (that only one member matches is not checked)")
      const members = list.map((member, i) => map(member, `${path}/${keyword}/${i}`, depth + 1, guarded))
      combinators.push(members.length === 1 ? members[0]! : { _tag: "Union", members, path: `${path}/${keyword}` })
    }
    const plain = base(schema, path, depth)
    if (combinators.length === 0) return plain ?? unknown()
    if (combinators.length > 1) {
      note("unchecked", path, "$ref, anyOf, oneOf together: the first only")
    }
    if (plain !== undefined) note("unchecked", path, "keywords beside $ref, anyOf or oneOf: not checked")
    return combinators[0]!
  }

  const rootNode = map(schema, "", 0, false)
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    current = definitions[next.index]!
    current.node = map(next.schema, `/${current.key}`, 0, false)
  }
  current = undefined
  breakUnguardedCycles(definitions, notes)
  return { root: rootNode, definitions, notes }
}

const annotations = [
  "title",
  "description",
  "$comment",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$schema",
  "$id",
  "$anchor",
  "$defs",
  "definitions",
  "contentMediaType",
  "contentEncoding"
]

/**
 * The strongly connected components of the definitions (Tarjan's, with an explicit stack), over
 * the references `follow` keeps, in an order where a component comes after those it refers to.
 */
export const components = (definitions: ReadonlyArray<Definition>, follow: (ref: Ref) => boolean): Array<Array<number>> => {
  const index = new Array<number>(definitions.length).fill(-1)
  const low = new Array<number>(definitions.length).fill(0)
  const onStack = new Array<boolean>(definitions.length).fill(false)
  const stack: Array<number> = []
  const out: Array<Array<number>> = []
  let counter = 0
  for (let start = 0; start < definitions.length; start++) {
    if (index[start] !== -1) continue
    const frames: Array<{ readonly v: number; i: number }> = [{ v: start, i: 0 }]
    index[start] = low[start] = counter++
    stack.push(start)
    onStack[start] = true
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      const refs = definitions[frame.v]!.refs
      if (frame.i < refs.length) {
        const ref = refs[frame.i++]!
        if (!follow(ref)) continue
        const w = ref.def
        if (index[w] === -1) {
          index[w] = low[w] = counter++
          stack.push(w)
          onStack[w] = true
          frames.push({ v: w, i: 0 })
        } else if (onStack[w]) {
          low[frame.v] = Math.min(low[frame.v]!, index[w]!)
        }
        continue
      }
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent !== undefined) low[parent.v] = Math.min(low[parent.v]!, low[frame.v]!)
      if (low[frame.v] === index[frame.v]) {
        const component: Array<number> = []
        let w: number
        do {
          w = stack.pop()!
          onStack[w] = false
          component.push(w)
        } while (w !== frame.v)
        out.push(component.sort((a, b) => a - b))
      }
    }
  }
  return out
}

/** A cycle of references through no object or array would never end at decoding: its references become `Unknown`. */
const breakUnguardedCycles = (definitions: ReadonlyArray<Definition>, notes: Array<Note>) => {
  const unguarded = components(definitions, (ref) => !ref.guarded)
  const componentOf = new Array<number>(definitions.length)
  unguarded.forEach((component, i) => {
    for (const v of component) componentOf[v] = i
  })
  for (const [v, definition] of definitions.entries()) {
    for (const ref of definition.refs) {
      if (!ref.guarded && componentOf[ref.def] === componentOf[v]) {
        ref.broken = true
        if (notes.length < maxNotes) notes.push({ kind: "fallback", path: `/${definition.key}`, reason: "$ref: a cycle through no object or array" })
      }
    }
  }
}
