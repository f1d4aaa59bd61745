/**
 * Typed tools (docs/DESIGN.md, "Typed tools"): TypeScript source generated from the JSON
 * Schemas a server declares for its tools. For each tool, an Effect `Schema` of its input and of
 * its output, their types (`typeof X.Type`), and a helper that calls the tool on a connection
 * through `callToolDecoded` (through `callTool` when it declares no output schema). The CLI's
 * `phasebound types` writes such a file.
 *
 * Pure: schemas in, source text out, no I/O. A server's schemas are another party's data: every
 * identifier is derived and made unique here, every string is a `JSON.stringify` literal, no
 * comment can be closed from inside, a `pattern` is checked at decoding only when JavaScript's
 * engine runs it in linear time, and the walk is bounded in depth and in work (what is past the
 * bounds is `Schema.Unknown`). What does not map is `Schema.Unknown` with a comment, and a note.
 * Whatever the schemas, the module parses, type-checks and loads, and each of its Schemas decodes
 * a value in time linear in the value's size (docs/DESIGN.md, "Typed tools").
 *
 * @example
 * import { McpCodegen } from "@phasebound/client"
 * import { Either } from "effect"
 *
 * const generated = McpCodegen.generate([{
 *   name: "get-weather",
 *   inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *   outputSchema: { type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] }
 * }])
 * // The module's text, to write to a file (the CLI's `types --out` does).
 * const source = Either.map(generated, (module) => module.source)
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Limits } from "./internal/codegen/mapping.js"
import * as Module from "./internal/codegen/module.js"
import { Identifiers } from "./internal/codegen/text.js"

/**
 * A tool as the generator reads it: a listed `McpSchema.Tool` is one.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSchemas {
  readonly name: string
  readonly description?: string | undefined
  readonly inputSchema: unknown
  readonly outputSchema?: unknown
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How deep a schema is mapped; deeper is `Schema.Unknown` (default 64, at most 256). */
  readonly maxDepth?: number | undefined
  /** The schema nodes mapped over the whole generation; past it, `Schema.Unknown` (default 200,000, at most 10,000,000). */
  readonly maxNodes?: number | undefined
  /** Where the generated module imports the client's types from (default `@phasebound/client`). */
  readonly importFrom?: string | undefined
  /** Named in the module's header comment (the server's name, say). */
  readonly title?: string | undefined
}

/**
 * What the generated Schemas do not hold exactly as the JSON Schema says: `fallback`, the
 * schema at `path` is `Schema.Unknown`; `unchecked`, a keyword kept as an annotation (a
 * `format`, `oneOf`'s exclusivity, `uniqueItems`...) or union members merged so that a decode
 * stays linear. Either way the Schema accepts at least what the JSON Schema accepts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Note {
  readonly tool: string
  readonly side: "input" | "output"
  readonly kind: "fallback" | "unchecked"
  /** A JSON Pointer into the tool's input or output schema (`/` is its root). */
  readonly path: string
  readonly reason: string
}

/**
 * The names the module gives one tool: its helper, its input Schema, its output Schema (none when
 * the tool declares no output schema).
 *
 * @since 0.1.0
 * @category models
 */
export interface GeneratedTool {
  readonly name: string
  readonly helper: string
  readonly input: string
  readonly output: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Generated {
  /** The module's TypeScript source. */
  readonly source: string
  readonly tools: ReadonlyArray<GeneratedTool>
  readonly notes: ReadonlyArray<Note>
}

/**
 * One server of a module of several: its name (each of its identifiers begins with it) and tools.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerTools {
  readonly name: string
  readonly tools: ReadonlyArray<ToolSchemas>
}

/**
 * An option of the generator that is not valid (no source was generated).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidCodegenOption extends Schema.TaggedError<InvalidCodegenOption>()("InvalidCodegenOption", {
  option: Schema.Literal("maxDepth", "maxNodes", "importFrom")
}) {
  override get message() {
    return `invalid generator option ${this.option}`
  }
}

const settingsOf = (options: Options | undefined): Either.Either<Module.Settings & { readonly maxNodes: number }, InvalidCodegenOption> => {
  const maxDepth = options?.maxDepth ?? 64
  const maxNodes = options?.maxNodes ?? 200_000
  const importFrom = options?.importFrom ?? "@phasebound/client"
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1 || maxDepth > 256) return Either.left(new InvalidCodegenOption({ option: "maxDepth" }))
  if (!Number.isSafeInteger(maxNodes) || maxNodes < 1 || maxNodes > 10_000_000) {
    return Either.left(new InvalidCodegenOption({ option: "maxNodes" }))
  }
  // A module specifier: printed as a literal, but kept to what a package or a path may be.
  if (typeof importFrom !== "string" || !/^[A-Za-z0-9@._/-]{1,214}$/.test(importFrom)) {
    return Either.left(new InvalidCodegenOption({ option: "importFrom" }))
  }
  return Either.right({ maxDepth, maxNodes, importFrom, title: options?.title, server: undefined })
}

/**
 * The module of typed tools for `tools` (ordered by name, whatever their order here).
 *
 * @since 0.1.0
 * @category generation
 */
export const generate = (tools: ReadonlyArray<ToolSchemas>, options?: Options): Either.Either<Generated, InvalidCodegenOption> =>
  Either.map(settingsOf(options), (settings) => {
    const limits: Limits = { maxDepth: settings.maxDepth, nodesLeft: settings.maxNodes }
    const section = Module.toolsSection(tools, settings, new Identifiers(Module.reservedNames), limits)
    return { source: Module.moduleText([section], settings), tools: section.tools, notes: section.notes }
  })

/**
 * One module for several servers (the servers of a config file): each server's identifiers
 * begin with its name in PascalCase (`github` gives `GithubSearchInput`, `githubSearch`).
 *
 * @since 0.1.0
 * @category generation
 */
export const generateServers = (
  servers: ReadonlyArray<ServerTools>,
  options?: Options
): Either.Either<Generated, InvalidCodegenOption> =>
  Either.map(settingsOf(options), (settings) => {
    const limits: Limits = { maxDepth: settings.maxDepth, nodesLeft: settings.maxNodes }
    const identifiers = new Identifiers(Module.reservedNames)
    const sections = [...servers]
      .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
      .map((server) => Module.toolsSection(server.tools, { ...settings, server: server.name }, identifiers, limits))
    return {
      source: Module.moduleText(sections, settings),
      tools: sections.flatMap((section) => section.tools),
      notes: sections.flatMap((section) => section.notes)
    }
  })
