/**
 * MCP tools as an `@effect/ai` toolkit (docs/DESIGN.md, "AI toolkits").
 *
 * - Each tool of the source's current list becomes a tool whose parameters' JSON Schema is the
 *   server's `inputSchema`, exactly as listed (the same object: no Schema round trip).
 * - Each call goes through the source's `callTool` (a connection's: under its call budget), once,
 *   with the caller's `effectIdentity` when one is given (`@effect/ai` does not hand the model's
 *   tool-call id to a handler, and phasebound never invents an identity).
 * - Success is the server's `CallToolResult`, every string of it cleared of the source's
 *   configured secrets by the source's `callTool`, within the call's deadline (a server that
 *   echoes a header value or token does not hand it to the model). A result with `isError: true`, every typed failure, a tool the
 *   source no longer lists, arguments that are not a JSON object and a defect become a result
 *   the model reads (`ToolFailure`, failure mode `"return"`): never a failure of `generateText`,
 *   never a URL, header, credential, body or stack.
 * - `make` and `fromSource` read the current list each time they run: give the Effect itself as
 *   `generateText`'s `toolkit` and every `generateText` sees the list as it is then, after any
 *   `tools/list_changed`.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { McpClient } from "@phasebound/client"
 * import { McpToolkit } from "@phasebound/ai"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const connection = yield* McpClient.connect({ url: "https://mcp.example.com/mcp" })
 *   const response = yield* LanguageModel.generateText({
 *     prompt: "What is the weather in Paris?",
 *     // Read again at every generateText: the server's current tools.
 *     toolkit: McpToolkit.make(connection, { prefix: "weather_" })
 *   })
 *   return response.toolResults
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import type { McpCatalog, McpClient } from "@phasebound/client"
import { McpConnectionError, McpSchema } from "@phasebound/client"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Subscribable from "effect/Subscribable"
import * as ToolFailure from "./ToolFailure.js"
import * as ToolSource from "./ToolSource.js"

/**
 * The parameters of an MCP tool: what the model gave, passed on exactly as it is (every own key,
 * `__proto__` among them, as a key: the server checks them against its own schema). Its JSON
 * Schema is replaced, tool by tool, by the server's `inputSchema`.
 *
 * Typed `unknown`, as the parameters of a tool whose schema only the server knows: so that a
 * toolkit of them is a `Toolkit.WithHandler` that `generateText` takes. At run time it decodes
 * any value as itself (no copy, so no key is dropped); a handler refuses what is not a JSON
 * object (`ToolFailure.InvalidArguments`), so the model reads why. `fields` is empty: it is
 * declared for `@effect/ai`'s parameter type only.
 *
 * @since 0.1.0
 * @category schemas
 */
export interface Arguments extends Schema.Schema<unknown> {
  readonly fields: Schema.Struct.Fields
  readonly make: unknown
  annotations(annotations: Schema.Annotations.Schema<unknown>): Arguments
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const Arguments: Arguments = Schema.Unknown as unknown as Arguments

/**
 * One MCP tool as an `@effect/ai` tool.
 *
 * @since 0.1.0
 * @category models
 */
export type McpTool = Tool.Tool<string, {
  readonly parameters: Arguments
  readonly success: typeof McpSchema.CallToolResult
  readonly failure: typeof ToolFailure.ToolFailure
  readonly failureMode: "return"
}>

/**
 * The tools of a toolkit, by the name the model calls them.
 *
 * @since 0.1.0
 * @category models
 */
export type McpTools = Record<string, McpTool>

/**
 * A call as the toolkit is about to make it: the name the model used, the source's name for the
 * tool, its server (for a source over several) and the arguments.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCall {
  readonly modelName: string
  readonly name: string
  readonly server: string | undefined
  readonly arguments: Readonly<Record<string, unknown>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Put before every tool's name as the model sees it (letters, digits, `_` and `-`, at most 32
   * characters): `"github_"` makes `search` `github_search`. Default none.
   */
  readonly prefix?: string | undefined
  /**
   * Each call's options (budget overrides, `meta`), validated by the source at each call: a
   * refused option is a `CallFailed` `InvalidOption` result.
   */
  readonly callOptions?: Omit<McpClient.CallOptions, "effectIdentity" | "onProgress"> | undefined
  /**
   * The effect identity of a call (docs/DESIGN.md, "Effect identity"), `undefined` for none
   * (the default). `@effect/ai` gives a handler the arguments only, not the model's tool-call
   * id: derive it from what identifies the effect in your application (a conversation and turn,
   * say) and the call. Called once per call.
   */
  readonly effectIdentity?: ((call: ToolCall) => string | undefined) | undefined
  /**
   * Which of the source's tools to offer (default all).
   */
  readonly include?: ((tool: ToolSource.SourceTool) => boolean) | undefined
  /**
   * Receives the full cause of a defect, in process, before the model reads an
   * `InternalFailure`. What it does (or fails with) does not change the result. Default none.
   */
  readonly onDefect?: ((cause: Cause.Cause<unknown>, call: ToolCall) => Effect.Effect<void>) | undefined
}

/**
 * A source tool left out of a toolkit: its model name is not one every provider accepts
 * (`^[a-zA-Z0-9_-]{1,64}$`, and not `__proto__`), or two tools would have the same one (both are
 * left out: a call could reach the wrong tool).
 *
 * @since 0.1.0
 * @category models
 */
export interface Excluded {
  readonly name: string
  readonly server: string | undefined
  readonly reason: "invalid-name" | "duplicate-name"
}

/**
 * A toolkit with its handlers, ready for `generateText`, the tools it left out, and (a catalog's,
 * `fromCatalog`) the servers that could not be connected when its list was read: their tools
 * are not offered. Empty for any other source.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpToolkit extends Toolkit.WithHandler<McpTools> {
  readonly excluded: ReadonlyArray<Excluded>
  readonly failures: ReadonlyArray<McpCatalog.ServerFailure>
}

/**
 * A toolkit and the layer of its handlers, apart: to merge with other toolkits
 * (`Toolkit.merge`) before handling.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly toolkit: Toolkit.Toolkit<McpTools>
  readonly layer: Layer.Layer<Tool.HandlersFor<McpTools>>
  readonly excluded: ReadonlyArray<Excluded>
}

/**
 * An option of `make`, `fromSource` or `snapshot` refused before anything else.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidToolkitOption extends Schema.TaggedError<InvalidToolkitOption>("@phasebound/ai/InvalidToolkitOption")(
  "InvalidToolkitOption",
  { option: Schema.Literal("options", "prefix", "callOptions", "effectIdentity", "include", "onDefect") }
) {
  override get message(): string {
    return `invalid toolkit option: ${this.option}`
  }
}

const prefixPattern = /^[a-zA-Z0-9_-]{0,32}$/
const modelNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

interface Settings {
  readonly prefix: string
  readonly callOptions: Omit<McpClient.CallOptions, "effectIdentity" | "onProgress"> | undefined
  readonly effectIdentity: ((call: ToolCall) => string | undefined) | undefined
  readonly include: ((tool: ToolSource.SourceTool) => boolean) | undefined
  readonly onDefect: ((cause: Cause.Cause<unknown>, call: ToolCall) => Effect.Effect<void>) | undefined
}

const isOptionalFunction = (value: unknown) => value === undefined || Predicate.isFunction(value)

const settingsOf = (options: Options | undefined): Effect.Effect<Settings, InvalidToolkitOption> => {
  if (options === undefined) {
    return Effect.succeed({ prefix: "", callOptions: undefined, effectIdentity: undefined, include: undefined, onDefect: undefined })
  }
  const refuse = (option: InvalidToolkitOption["option"]) => Effect.fail(new InvalidToolkitOption({ option }))
  if (!Predicate.isRecord(options as unknown)) return refuse("options")
  const prefix: unknown = options.prefix ?? ""
  if (typeof prefix !== "string" || !prefixPattern.test(prefix)) return refuse("prefix")
  const callOptions: unknown = options.callOptions
  if (callOptions !== undefined && (!Predicate.isRecord(callOptions) || "effectIdentity" in callOptions || "onProgress" in callOptions)) {
    return refuse("callOptions")
  }
  if (!isOptionalFunction(options.effectIdentity)) return refuse("effectIdentity")
  if (!isOptionalFunction(options.include)) return refuse("include")
  if (!isOptionalFunction(options.onDefect)) return refuse("onDefect")
  return Effect.succeed({
    prefix,
    callOptions: options.callOptions,
    effectIdentity: options.effectIdentity,
    include: options.include,
    onDefect: options.onDefect
  })
}

interface Entry {
  readonly modelName: string
  readonly source: ToolSource.SourceTool
}

/** The tools offered, by model name, and those left out. */
const select = (tools: ReadonlyArray<ToolSource.SourceTool>, settings: Settings) => {
  const byName = new Map<string, Array<ToolSource.SourceTool>>()
  const excluded: Array<Excluded> = []
  for (const source of tools) {
    if (settings.include !== undefined && !settings.include(source)) continue
    const modelName = `${settings.prefix}${source.name}`
    if (!modelNamePattern.test(modelName) || modelName === "__proto__") {
      excluded.push({ name: source.name, server: source.server, reason: "invalid-name" })
      continue
    }
    const same = byName.get(modelName)
    if (same === undefined) byName.set(modelName, [source])
    else same.push(source)
  }
  const entries: Array<Entry> = []
  for (const [modelName, sources] of byName) {
    if (sources.length === 1) entries.push({ modelName, source: sources[0]! })
    else for (const source of sources) excluded.push({ name: source.name, server: source.server, reason: "duplicate-name" })
  }
  return { entries, excluded }
}

const booleanHint = (annotations: McpSchema.Tool["annotations"], key: string): boolean | undefined => {
  const value = annotations?.[key]
  return typeof value === "boolean" ? value : undefined
}

/** The `@effect/ai` tool of one entry: the server's `inputSchema` is its parameters' JSON Schema. */
const toolOf = (entry: Entry): McpTool => {
  const listed = entry.source.tool
  // A JSON Schema annotation with `type` replaces what Effect would derive, and is returned as
  // it is: `Tool.getJsonSchema` gives the server's own object (`inputSchema.type` is "object").
  const parameters = Arguments.annotations({ jsonSchema: listed.inputSchema })
  let tool: McpTool = Tool.make(entry.modelName, {
    description: listed.description,
    success: McpSchema.CallToolResult,
    failure: ToolFailure.ToolFailure,
    failureMode: "return"
  }).setParameters(parameters)
  const annotations = listed.annotations
  const title = listed.title ?? (typeof annotations?.["title"] === "string" ? annotations["title"] : undefined)
  if (title !== undefined) tool = tool.annotate(Tool.Title, title)
  const readOnly = booleanHint(annotations, "readOnlyHint")
  if (readOnly !== undefined) tool = tool.annotate(Tool.Readonly, readOnly)
  const destructive = booleanHint(annotations, "destructiveHint")
  if (destructive !== undefined) tool = tool.annotate(Tool.Destructive, destructive)
  const idempotent = booleanHint(annotations, "idempotentHint")
  if (idempotent !== undefined) tool = tool.annotate(Tool.Idempotent, idempotent)
  const openWorld = booleanHint(annotations, "openWorldHint")
  if (openWorld !== undefined) tool = tool.annotate(Tool.OpenWorld, openWorld)
  return tool
}

type Handler = (params: unknown) => Effect.Effect<McpSchema.CallToolResult, ToolFailure.ToolFailure>

/**
 * The call of the tool as the source lists it now (the model may have seen an older list): with
 * `resolve`, the tool resolved, called without looking its name up again; `undefined` when the
 * source no longer lists it.
 */
const listedCall = <E>(
  source: ToolSource.ToolSource<E>,
  call: ToolCall
): Effect.Effect<ToolSource.ResolvedTool["call"] | undefined, E | McpConnectionError.McpConnectionError> =>
  source.resolve !== undefined
    ? Effect.map(source.resolve(call.name), (tool) => tool !== undefined && tool.server === call.server ? tool.call : undefined)
    : Effect.map(
      source.toolList.get,
      (current) =>
        current.some((tool) => tool.name === call.name && tool.server === call.server)
          ? (args, options) => source.callTool(call.name, args, options)
          : undefined
    )

/** The handler of one entry: every way a call can end is its success or a `ToolFailure`. */
const handlerOf = <E>(source: ToolSource.ToolSource<E>, entry: Entry, settings: Settings): Handler => (decoded) => {
  // Decoded with `Arguments`: the model's value as it is. MCP arguments are an object.
  if (!Predicate.isRecord(decoded)) return Effect.fail(ToolFailure.invalidArguments(entry.modelName))
  const params: Readonly<Record<string, unknown>> = decoded
  const call: ToolCall = {
    modelName: entry.modelName,
    name: entry.source.name,
    server: entry.source.server,
    arguments: params
  }
  const attempt = Effect.flatMap(
    listedCall(source, call),
    (listed): Effect.Effect<McpSchema.CallToolResult, E | McpConnectionError.McpConnectionError | ToolFailure.UnknownTool> => {
      // A tool no longer listed is not called.
      if (listed === undefined) return Effect.fail(ToolFailure.unknownTool(call.modelName))
      const identity = settings.effectIdentity?.(call)
      const options = identity === undefined ? settings.callOptions : { ...settings.callOptions, effectIdentity: identity }
      // What the model reads is cleared of the source's secrets by the source (an error result too).
      return listed(params, options)
    }
  )
  return Effect.suspend(() => attempt).pipe(
    Effect.catchAllCause((cause): Effect.Effect<never, ToolFailure.ToolFailure> => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) {
        const error = failure.value
        if (Predicate.isTagged(error, "UnknownTool")) return Effect.fail(error as ToolFailure.UnknownTool)
        if (McpConnectionError.isMcpConnectionError(error)) return Effect.fail(ToolFailure.fromError(error))
      }
      if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
      // A defect: the model reads that one happened; the cause stays here.
      const observe = settings.onDefect === undefined ? Effect.void : Effect.exit(Effect.suspend(() => settings.onDefect!(cause, call)))
      return Effect.zipRight(observe, Effect.fail(ToolFailure.internalFailure))
    }),
    Effect.flatMap((result) => result.isError === true ? Effect.fail(result as ToolFailure.ToolReturnedError) : Effect.succeed(result))
  )
}

const build = <E>(source: ToolSource.ToolSource<E>, options: Options | undefined) =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const { entries, excluded } = select(yield* source.toolList.get, settings)
    const toolkit = Toolkit.make(...entries.map(toolOf)) as unknown as Toolkit.Toolkit<McpTools>
    const handlers: Record<string, Handler> = {}
    for (const entry of entries) handlers[entry.modelName] = handlerOf(source, entry, settings)
    return { toolkit, handlers: handlers as unknown as Toolkit.HandlersFrom<McpTools>, excluded }
  })

/**
 * The toolkit of any tool source, with its handlers, from the source's current list. Each run
 * reads the list again: give the Effect itself as `generateText`'s `toolkit` to follow changes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSource = <E = never>(source: ToolSource.ToolSource<E>, options?: Options): Effect.Effect<McpToolkit, InvalidToolkitOption | E> =>
  Effect.gen(function*() {
    const { excluded, handlers, toolkit } = yield* build(source, options)
    const context = yield* toolkit.toContext(handlers)
    const withHandler = yield* Effect.provide(toolkit, context)
    return { tools: withHandler.tools, handle: withHandler.handle, excluded, failures: [] }
  })

/**
 * The toolkit of a connection's current tools, with its handlers (`fromSource` over
 * `ToolSource.fromConnection`). Each run reads the list again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (connection: McpClient.Connection, options?: Options): Effect.Effect<McpToolkit, InvalidToolkitOption> =>
  fromSource(ToolSource.fromConnection(connection), options)

/**
 * The toolkit of a source's current tools and the layer of its handlers, apart, for
 * `Toolkit.merge` with other toolkits. The toolkit is the list as it was when this ran; its
 * handlers still refuse a tool the source no longer lists (`UnknownTool`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const snapshot = <E = never>(source: ToolSource.ToolSource<E>, options?: Options): Effect.Effect<Snapshot, InvalidToolkitOption | E> =>
  Effect.map(build(source, options), ({ excluded, handlers, toolkit }) => ({ toolkit, layer: toolkit.toLayer(handlers), excluded }))

/**
 * The toolkit of a catalog's current tools over several servers, with its handlers (`fromSource`
 * over `ToolSource.fromCatalog`): each tool under its catalog name (`server__tool` by default),
 * each call on its own server. Each run reads the merged listing again, connecting a server on
 * first use. A server that cannot be connected holds back none of the others' tools: its own
 * are not offered (nor a tool whose name it could give too), and it is in `failures`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCatalog = (catalog: McpCatalog.Catalog, options?: Options): Effect.Effect<McpToolkit, InvalidToolkitOption> =>
  Effect.gen(function*() {
    // The options are refused before anything is connected.
    yield* settingsOf(options)
    const listing = yield* catalog.listing
    const source = ToolSource.fromCatalog(catalog)
    // Built from this listing (its tools and its failures agree); each call resolves its name afresh.
    const toolkit = yield* fromSource(
      { ...source, toolList: Subscribable.make({ get: Effect.succeed(listing.tools), changes: source.toolList.changes }) },
      options
    )
    return { ...toolkit, failures: listing.failures }
  })
