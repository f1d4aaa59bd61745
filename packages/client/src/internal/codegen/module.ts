/**
 * A module of typed tools (docs/DESIGN.md, "Typed tools"): for each tool, in the order of their
 * names, the Schemas of its definitions, its input and its output, their types, and a helper that
 * calls it through `callToolDecoded` (`callTool` when it declares no output schema).
 */
import { isBacktrackFree } from "../linearRegExp.js"
import { linearDecode } from "./linearDecode.js"
import { components, type Definition, type Limits, mapDocument, type Node, type Note } from "./mapping.js"
import { type Helper, type PrintContext, schemaText, typeText } from "./printer.js"
import { camelCase, Identifiers, jsDoc, literal, pascalCase } from "./text.js"

export interface ToolSchemas {
  readonly name: string
  readonly description?: string | undefined
  readonly inputSchema: unknown
  readonly outputSchema?: unknown
}

export interface Settings {
  readonly maxDepth: number
  readonly maxNodes: number
  readonly importFrom: string
  readonly title: string | undefined
  /**
   * One server of a config among others: its name in PascalCase prefixes every identifier, and a
   * suffix of a taken name is derived from it.
   */
  readonly server: string | undefined
}

export interface ToolNote extends Note {
  readonly tool: string
  readonly side: "input" | "output"
}

export interface GeneratedTool {
  readonly name: string
  readonly helper: string
  readonly input: string
  readonly output: string | undefined
}

export interface Section {
  readonly text: string
  readonly notes: ReadonlyArray<ToolNote>
  readonly tools: ReadonlyArray<GeneratedTool>
  readonly uses: Set<"Effect" | "McpClient" | "McpConnectionError" | "McpSchema" | "Schema">
  readonly helpers: Set<Helper>
}

/** Whether a pattern may run on JavaScript's own engine at decoding: valid as a `u` pattern, and one that cannot backtrack more than linearly. */
const isLinearPattern = (source: string): boolean => {
  if (!isBacktrackFree(source)) return false
  try {
    new RegExp(source, "u")
    return true
  } catch {
    return false
  }
}

/** One document's constants: its definitions (those it refers to first), then its root. */
const documentText = (name: string, root: Node, definitions: ReadonlyArray<Definition>, ctx: Omit<PrintContext, "definitions" | "cyclic">): string => {
  const order = components(definitions, (ref) => !ref.broken)
  const cyclic = new Set<number>()
  for (const component of order) {
    const only = component[0]!
    if (component.length > 1 || definitions[only]!.refs.some((ref) => !ref.broken && ref.def === only)) {
      for (const v of component) cyclic.add(v)
    }
  }
  const print: PrintContext = { ...ctx, definitions, cyclic }
  const out: Array<string> = []
  for (const component of order) {
    for (const v of component) {
      const definition = definitions[v]!
      const doc = jsDoc(definition.description === undefined ? [] : [definition.description], "")
      if (cyclic.has(v)) {
        out.push(
          `${doc}export type ${definition.name} = ${typeText(definition.node, { ...print, inCycle: true }, "")}\n` +
            `export const ${definition.name}: Schema.Schema<${definition.name}> = ${schemaText(definition.node, { ...print, inCycle: true }, "")}\n`
        )
      } else {
        out.push(
          `${doc}export const ${definition.name} = ${schemaText(definition.node, print, "")}\n` +
            `export type ${definition.name} = typeof ${definition.name}.Type\n`
        )
      }
    }
  }
  out.push(`export const ${name} = ${schemaText(root, print, "")}\nexport type ${name} = typeof ${name}.Type\n`)
  return out.join("\n")
}

/** The root as an object, for the helper's `args`: its own node, or the definition it refers to. */
const objectOf = (root: Node, definitions: ReadonlyArray<Definition>): Node | undefined => {
  const node = root._tag === "Ref" && !root.broken ? definitions[root.def]!.node : root
  return node._tag === "Object" ? node : undefined
}

/** The section of a module for a list of tools (sorted by name: the same tools give the same text). */
export const toolsSection = (tools: ReadonlyArray<ToolSchemas>, settings: Settings, identifiers: Identifiers, limits: Limits): Section => {
  const notes: Array<ToolNote> = []
  const generated: Array<GeneratedTool> = []
  const uses: Section["uses"] = new Set()
  const helpers: Section["helpers"] = new Set()
  const out: Array<string> = []
  const prefix = settings.server === undefined ? "" : pascalCase(settings.server, "Server")
  const sorted = [...tools].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  for (const tool of sorted) {
    // What a taken name's suffix is derived from: one tool of one server, one suffix for its names.
    const origin = `${settings.server ?? ""}\u0000${tool.name}`
    const base = `${prefix}${pascalCase(tool.name, "Tool")}`
    const inputName = identifiers.fresh(`${base}Input`, origin)
    const hasOutput = tool.outputSchema !== undefined && tool.outputSchema !== null
    const outputName = hasOutput ? identifiers.fresh(`${base}Output`, origin) : undefined
    const helper = identifiers.fresh(camelCase(prefix === "" ? tool.name : `${prefix} ${tool.name}`, "tool"), origin)
    const side = (sideName: "input" | "output", constName: string, schema: unknown) => {
      const mapped = mapDocument(
        schema,
        limits,
        (definition) => identifiers.fresh(`${constName}${pascalCase(definition, "Definition")}`, `${origin}\u0000${sideName}\u0000${definition}`),
        isLinearPattern
      )
      const document = linearDecode(mapped, limits)
      for (const note of document.notes) notes.push({ ...note, tool: tool.name, side: sideName })
      uses.add("Schema")
      return { document, text: documentText(constName, document.root, document.definitions, { helpers }) }
    }
    out.push(`// The tool ${literal(tool.name).replace(/[\u2028\u2029]/g, " ")}\n`)
    const input = side("input", inputName, tool.inputSchema)
    out.push(input.text)
    if (outputName !== undefined) out.push(side("output", outputName, tool.outputSchema).text)
    const inputObject = objectOf(input.document.root, input.document.definitions)
    const argsType = inputObject === undefined ? "Readonly<Record<string, unknown>>" : inputName
    const argsOptional = inputObject === undefined || (inputObject._tag === "Object" && inputObject.properties.every((p) => p.optional))
    uses.add("Effect")
    uses.add("McpClient")
    uses.add("McpConnectionError")
    const description = typeof tool.description === "string" && tool.description !== "" ? [tool.description, ""] : []
    const call = outputName === undefined
      ? `Effect.Effect<McpSchema.CallToolResult, McpConnectionError.McpConnectionError> =>\n  connection.callTool(${literal(tool.name)}, args, options)`
      : `Effect.Effect<McpClient.DecodedResult<${outputName}>, McpConnectionError.McpConnectionError> =>\n  connection.callToolDecoded(${outputName}, ${
        literal(tool.name)
      }, args, options)`
    if (outputName === undefined) uses.add("McpSchema")
    out.push(
      jsDoc(
        [
          ...description,
          outputName === undefined
            ? "Calls the tool once (never retried); it declares no output schema: the result as it came."
            : `Calls the tool once (never retried); its \`structuredContent\` decoded with \`${outputName}\`.`
        ],
        ""
      ) +
        `export const ${helper} = (\n  connection: McpClient.Connection,\n  args${
          argsOptional ? "?" : ""
        }: ${argsType},\n  options?: McpClient.CallOptions\n): ${call}\n`
    )
    generated.push({ name: tool.name, helper, input: inputName, output: outputName })
  }
  return { text: out.join("\n"), notes, tools: generated, uses, helpers }
}

const helperSources: Record<Helper | "kindOf", string> = {
  codePointLength: `/** The length of a string in code points, as JSON Schema counts it. */
const codePointLength = (text: string): number => {
  let length = 0
  for (let i = 0; i < text.length; i++) {
    length++
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
  }
  return length
}
`,
  kindOf: `type Kind = "null" | "boolean" | "number" | "string" | "array" | "object"

/** A value's JSON type (\`other\`: not a JSON value, as a missing key's \`undefined\`). */
const kindOf = (input: unknown): Kind | "other" =>
  input === null
    ? "null"
    : Array.isArray(input)
    ? "array"
    : typeof input === "object"
    ? "object"
    : typeof input === "string"
    ? "string"
    : typeof input === "number"
    ? "number"
    : typeof input === "boolean"
    ? "boolean"
    : "other"
`,
  objectWith: `/**
 * An object: the keys \`struct\` names decoded by it, any other key kept (\`"open"\`), refused
 * (\`"closed"\`) or checked by \`rest\`, each found in a \`Set\` (Effect's own check of excess keys
 * tries every named key in turn, for each key of the value). Every key of the value is kept.
 */
const objectWith = <A>(
  struct: Schema.Schema<A> & { readonly fields: Readonly<Record<string, unknown>> },
  rest: "open" | "closed" | (() => Schema.Schema.AnyNoContext)
): Schema.Schema<A> => {
  const names = new Set(Object.keys(struct.fields))
  let is: ((input: unknown) => boolean) | undefined
  const parse = (fields: Schema.Schema<A>, decoding: boolean) => {
    const run = decoding ? ParseResult.decodeUnknownEither(fields) : ParseResult.encodeUnknownEither(fields)
    return (input: unknown, options: SchemaAST.ParseOptions, ast: SchemaAST.AST) => {
      if (kindOf(input) !== "object") return ParseResult.fail(new ParseResult.Type(ast, input))
      const value = input as Readonly<Record<string, unknown>>
      const others: Record<string, unknown> = {}
      for (const key of Object.keys(value)) {
        if (names.has(key)) continue
        if (rest === "closed") return ParseResult.fail(new ParseResult.Type(ast, input, \`no key \${JSON.stringify(key)} is expected\`))
        if (rest !== "open" && !(is ??= Schema.is(rest()))(value[key])) {
          return ParseResult.fail(new ParseResult.Type(ast, input, \`the key \${JSON.stringify(key)} holds what its schema refuses\`))
        }
        Object.defineProperty(others, key, { value: value[key], enumerable: true, writable: true, configurable: true })
      }
      return ParseResult.map(run(input, { ...options, onExcessProperty: "ignore" }), (named) => Object.assign(others, named) as A)
    }
  }
  return Schema.declare([struct], { decode: (fields) => parse(fields, true), encode: (fields) => parse(fields, false) })
}
`,
  choose: `/** Where \`choose\` sends a value: by JSON type, the members to try; objects maybe by the value of one key. */
interface Route {
  readonly null?: ReadonlyArray<number>
  readonly boolean?: ReadonlyArray<number>
  readonly number?: ReadonlyArray<number>
  readonly string?: ReadonlyArray<number>
  readonly array?: ReadonlyArray<number>
  readonly object?: ReadonlyArray<number> | {
    readonly key: string
    readonly cases: ReadonlyArray<readonly [unknown, number]>
    readonly absent?: number
  }
  readonly other?: ReadonlyArray<number>
}

/**
 * A union that tries on a value only the members \`route\` lists for its JSON type (an array or an
 * object goes to one member at most): each value is descended into once, whatever the unions
 * above it, so a decode stays linear in the value's size.
 */
const choose = <const M extends ReadonlyArray<Schema.Schema.AnyNoContext>>(
  members: M,
  route: Route
): Schema.Schema<Schema.Schema.Type<M[number]>> => {
  const objects = route.object
  const cases = objects === undefined || Array.isArray(objects) ? undefined : new Map((objects as Exclude<typeof objects, ReadonlyArray<number>>).cases)
  const tried = (input: unknown): ReadonlyArray<number> => {
    const kind = kindOf(input)
    if (kind !== "object") return route[kind] ?? []
    if (cases === undefined) return (objects as ReadonlyArray<number> | undefined) ?? []
    const { absent, key } = objects as { readonly key: string; readonly absent?: number }
    const chosen = Object.prototype.hasOwnProperty.call(input, key) ? cases.get((input as Readonly<Record<string, unknown>>)[key]) : absent
    return chosen === undefined ? [] : [chosen]
  }
  const parse = (schemas: ReadonlyArray<Schema.Schema.AnyNoContext>, decoding: boolean) => {
    const runs = schemas.map((schema) => decoding ? ParseResult.decodeUnknownEither(schema) : ParseResult.encodeUnknownEither(schema))
    return (input: unknown, options: SchemaAST.ParseOptions, ast: SchemaAST.AST) => {
      const issues: Array<ParseResult.ParseIssue> = []
      for (const i of tried(input)) {
        const result = runs[i]!(input, options)
        if (result._tag === "Right") return result
        issues.push(result.left)
      }
      return ParseResult.fail(issues.length === 1 ? issues[0]! : new ParseResult.Type(ast, input))
    }
  }
  const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = members
  return Schema.declare(schemas, {
    decode: (...typeParameters) => parse(typeParameters, true),
    encode: (...typeParameters) => parse(typeParameters, false)
  }) as unknown as Schema.Schema<Schema.Schema.Type<M[number]>>
}
`,
  oneOf: `/** One of \`values\`, found in a \`Set\`: one step whatever their number (\`Schema.Literal\` tries each in turn). */
const oneOf = <const A extends ReadonlyArray<string | number | boolean | null>>(values: A): Schema.Schema<A[number]> => {
  const set = new Set<unknown>(values)
  return Schema.declare((input: unknown): input is A[number] => set.has(input), { description: \`one of \${values.length} values\` })
}
`,
  patternOf: `/** A \`pattern\` as a \`u\` RegExp; one this engine cannot compile is not checked (a check only restricts). */
const patternOf = (source: string): RegExp => {
  try {
    return new RegExp(source, "u")
  } catch {
    return /(?:)/u
  }
}
`
}

/** The client's types a module may import. */
const clientTypeNames = ["McpClient", "McpConnectionError", "McpSchema"] as const

/**
 * The names a module's own declarations take, which no tool's may: what it imports, and what its
 * helpers declare at their top level (`kindOf` and its `Kind`, `choose` and its `Route`, ...).
 */
export const reservedNames: ReadonlyArray<string> = [
  ...clientTypeNames,
  "Effect",
  "Schema",
  "ParseResult",
  "SchemaAST",
  ...Object.values(helperSources).flatMap((source) => [...source.matchAll(/^(?:const|let|function|type|interface) (\w+)/gm)].map((match) => match[1]!))
]

/** The whole module: a header, the imports its sections use, the helpers, the sections. */
export const moduleText = (sections: ReadonlyArray<Section>, settings: Settings): string => {
  const uses = new Set(sections.flatMap((section) => [...section.uses]))
  const helpers = new Set(sections.flatMap((section) => [...section.helpers]))
  const header = jsDoc(
    [
      `Typed tools${settings.title === undefined ? "" : ` of ${settings.title}`}, generated by phasebound (\`phasebound types\`).`,
      "Do not edit: generate the file again when the tools change. Each tool has the Schemas of its input and output, their",
      "types, and a helper that calls it on a connection. What was not mapped is `Schema.Unknown` with a comment saying why;",
      "union members widened so that every decode stays linear in the value's size have a comment too."
    ],
    ""
  )
  const clientTypes = clientTypeNames.filter((name) => uses.has(name))
  const parsing = helpers.has("objectWith") || helpers.has("choose")
  const imports = [
    ...(clientTypes.length === 0 ? [] : [`import type { ${clientTypes.join(", ")} } from ${literal(settings.importFrom)}`]),
    ...(uses.has("Effect") ? [`import type { Effect } from "effect"`] : []),
    ...(uses.has("Schema") ? [parsing ? `import { ParseResult, Schema, type SchemaAST } from "effect"` : `import { Schema } from "effect"`] : [])
  ]
  const used: ReadonlyArray<Helper | "kindOf"> = [...(parsing ? ["kindOf" as const] : []), ...[...helpers].sort()]
  const helperText = used.map((name) => helperSources[name])
  return [header + imports.join("\n") + (imports.length > 0 ? "\n" : ""), ...helperText, ...sections.map((section) => section.text)]
    .filter((part) => part !== "")
    .join("\n")
}
