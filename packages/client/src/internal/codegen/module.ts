/**
 * A module of typed tools (docs/DESIGN.md, "Typed tools"): for each tool, in the order of their
 * names, the Schemas of its definitions, its input and its output, their types, and a helper that
 * calls it through `callToolDecoded` (`callTool` when it declares no output schema).
 */
import { isBacktrackFree } from "../linearRegExp.js"
import { components, type Definition, type Limits, mapDocument, type Node, type Note } from "./mapping.js"
import { type PrintContext, schemaText, typeText } from "./printer.js"
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
  /** Prefixes every identifier (one server of a config among others). */
  readonly prefix: string
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
  readonly helpers: Set<"codePointLength" | "additionalMatch">
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

export const reservedNames = ["Schema", "Effect", "McpClient", "McpConnectionError", "McpSchema", "codePointLength", "additionalMatch"]

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
  const sorted = [...tools].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  for (const tool of sorted) {
    const base = `${settings.prefix}${pascalCase(tool.name, "Tool")}`
    const inputName = identifiers.fresh(`${base}Input`)
    const hasOutput = tool.outputSchema !== undefined && tool.outputSchema !== null
    const outputName = hasOutput ? identifiers.fresh(`${base}Output`) : undefined
    const helper = identifiers.fresh(camelCase(settings.prefix === "" ? tool.name : `${settings.prefix} ${tool.name}`, "tool"))
    const side = (sideName: "input" | "output", constName: string, schema: unknown) => {
      const document = mapDocument(
        schema,
        limits,
        (definition) => identifiers.fresh(`${constName}${pascalCase(definition, "Definition")}`),
        isLinearPattern
      )
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

const helperSources = {
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
  additionalMatch: `/** \`additionalProperties\` with a schema: every key the object does not name holds a value of \`value\`. */
const additionalMatch = (known: ReadonlyArray<string>, value: () => Schema.Schema.AnyNoContext) => {
  const names = new Set(known)
  let is: ((input: unknown) => boolean) | undefined
  return (object: object): boolean => {
    const check = is ??= Schema.is(value())
    return Object.entries(object).every(([key, item]) => names.has(key) || check(item))
  }
}
`
} as const

/** The whole module: a header, the imports its sections use, the helpers, the sections. */
export const moduleText = (sections: ReadonlyArray<Section>, settings: Settings): string => {
  const uses = new Set(sections.flatMap((section) => [...section.uses]))
  const helpers = new Set(sections.flatMap((section) => [...section.helpers]))
  const header = jsDoc(
    [
      `Typed tools${settings.title === undefined ? "" : ` of ${settings.title}`}, generated by phasebound (\`phasebound types\`).`,
      "Do not edit: generate the file again when the tools change. Each tool has the Schemas of its input and output, their",
      "types, and a helper that calls it on a connection. What was not mapped is `Schema.Unknown` with a comment saying why."
    ],
    ""
  )
  const clientTypes = (["McpClient", "McpConnectionError", "McpSchema"] as const).filter((name) => uses.has(name))
  const imports = [
    ...(clientTypes.length === 0 ? [] : [`import type { ${clientTypes.join(", ")} } from ${literal(settings.importFrom)}`]),
    ...(uses.has("Effect") ? [`import type { Effect } from "effect"`] : []),
    ...(uses.has("Schema") ? [`import { Schema } from "effect"`] : [])
  ]
  const helperText = [...helpers].sort().map((name) => helperSources[name])
  return [header + imports.join("\n") + (imports.length > 0 ? "\n" : ""), ...helperText, ...sections.map((section) => section.text)]
    .filter((part) => part !== "")
    .join("\n")
}
