/**
 * Paginated listings (docs/DESIGN.md, "Listings"): every page of `tools/list`, and of
 * `resources/list`, `resources/templates/list` and `prompts/list`, under the one deadline the
 * caller puts around the whole listing, bounded by `maxPages`, `maxListingBytes` and `maxNodes`
 * over all its pages (what a listing may cost in memory: docs/DESIGN.md, "Structure bounds"),
 * and for tools by `maxTools` and `maxSchemaBytes`.
 *
 * A listed tool the session cannot use correctly is left out (and named in `excluded`): a
 * stateless tool whose header declarations are invalid, or a tool whose `outputSchema` cannot
 * be compiled (its results could not be checked). Each `outputSchema` is compiled here, once
 * (docs/DESIGN.md, "Typed results").
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { LimitExceeded, type McpConnectionError, type Stage } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type * as PhasePolicy from "../PhasePolicy.js"
import type { Exchange, Response } from "./transport/transport.js"
import type { Session } from "./era.js"
import * as Failures from "./failures.js"
import { compileOutputSchema, type OutputCheck, validators } from "./outputSchema.js"

/** A listing: the tools the session can use, and what came with them. */
export interface Listing {
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly cacheHint: McpSchema.CacheHint | undefined
  /**
   * The hint the response cache keeps the listing by: the most cautious of the pages', none when
   * a page had none (absent means stale: docs/DESIGN.md, "Response cache").
   */
  readonly cacheable?: McpSchema.CacheHint | undefined
  /** The names of the tools left out. */
  readonly excluded: ReadonlySet<string>
  /** The compiled `outputSchema` of each tool that declares one. */
  readonly outputChecks: ReadonlyMap<string, OutputCheck>
  readonly bytes: number
}

// Decoded synchronously: a listing of many tools decodes each one, and a decode run as an
// Effect costs a few fiber steps more per tool than the decode itself.
const decodeListPage = Schema.decodeUnknownEither(McpSchema.ListToolsPage)
const decodeTool = Schema.decodeUnknownEither(McpSchema.Tool)

const isPlainRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A listed tool that `McpSchema.Tool` accepts as it is, checked by hand (the usual case, with no
 * copy made); `undefined` for anything else, which the Schema then decodes (and whose failure
 * is the one reported). Never broader than the Schema.
 */
const plainTool = (u: unknown): McpSchema.Tool | undefined => {
  if (!isPlainRecord(u)) return undefined
  const { annotations, description, inputSchema, name, outputSchema, title } = u
  if (typeof name !== "string" || name.length === 0) return undefined
  if ((title !== undefined && typeof title !== "string") || (description !== undefined && typeof description !== "string")) {
    return undefined
  }
  if (!isPlainRecord(inputSchema) || inputSchema["type"] !== "object") return undefined
  if ((outputSchema !== undefined && !isPlainRecord(outputSchema)) || (annotations !== undefined && !isPlainRecord(annotations))) {
    return undefined
  }
  return u as McpSchema.Tool
}

/** A page of `tools/list` without a cache hint, as `McpSchema.ListToolsPage` decodes it, checked by hand; else `undefined`. */
const plainPage = (u: unknown): typeof McpSchema.ListToolsPage.Type | undefined => {
  if (!isPlainRecord(u)) return undefined
  const { cacheScope, nextCursor, tools, ttlMs } = u
  if (!Array.isArray(tools) || (nextCursor !== undefined && typeof nextCursor !== "string")) return undefined
  return ttlMs === undefined && cacheScope === undefined ? (u as typeof McpSchema.ListToolsPage.Type) : undefined
}

export const pageOf = (u: unknown): Either.Either<typeof McpSchema.ListToolsPage.Type, ParseResult.ParseError> => {
  const plain = plainPage(u)
  return plain === undefined ? decodeListPage(u) : Either.right(plain)
}

/** One listed tool, decoded: by hand when it is plainly valid, else by its Schema. */
export const toolOf = (u: unknown): Either.Either<McpSchema.Tool, ParseResult.ParseError> => {
  const plain = plainTool(u)
  return plain === undefined ? decodeTool(u) : Either.right(plain)
}

export const limitExceeded = (
  exchange: Exchange,
  limit: "maxTools" | "maxPages" | "maxSchemaBytes" | "maxListingBytes" | "maxNodes",
  observedBytes?: number
) =>
  new LimitExceeded({
    ...Failures.fields(exchange),
    limit,
    observedBytes,
    outcome: "applied",
    retryable: false
  })

/** What a listing read so far, over all its pages, against its bounds. */
interface Totals {
  bytes: number
  nodes: number
}

/** Adds one page to a listing's totals: the limit it passes, if any. */
const addPage = (
  totals: Totals,
  response: Response,
  bounds: { readonly maxListingBytes: number; readonly maxNodes: number }
): "maxListingBytes" | "maxNodes" | undefined => {
  totals.bytes += response.bytes
  totals.nodes += response.nodes
  if (totals.bytes > bounds.maxListingBytes) return "maxListingBytes"
  if (totals.nodes > bounds.maxNodes) return "maxNodes"
  return undefined
}

export const invalidResult = (exchange: Exchange, bytes: number) => (cause: unknown) =>
  Failures.protocol(exchange, "invalid-result", { observedBytes: bytes }, cause)

/**
 * The caching hint of a result (2026-07-28): both fields, `ttlMs` an integer (a negative one
 * read as 0, as the spec asks), `cacheScope` one of its two values; else none.
 */
export const hintOf = (result: Record<string, unknown>): McpSchema.CacheHint | undefined => {
  const { cacheScope, ttlMs } = result
  if (typeof ttlMs !== "number" || !Number.isSafeInteger(ttlMs)) return undefined
  if (cacheScope !== "public" && cacheScope !== "private") return undefined
  return { ttlMs: Math.max(0, ttlMs), cacheScope }
}

/** The most cautious hint of a listing's pages (the shortest `ttlMs`, private if any page is); none if a page had none. */
const cacheableHints = () => {
  let hint: McpSchema.CacheHint | undefined
  let missing = false
  return {
    add: (result: Record<string, unknown>) => {
      const page = hintOf(result)
      if (page === undefined) missing = true
      else {
        hint = {
          ttlMs: Math.min(page.ttlMs, hint?.ttlMs ?? page.ttlMs),
          cacheScope: hint?.cacheScope === "private" ? "private" : page.cacheScope
        }
      }
    },
    hint: () => (missing ? undefined : hint)
  }
}

/**
 * Whether a value's JSON text is at most `max` bytes of UTF-8, counted without encoding it (and
 * without counting at all when its length alone decides: a UTF-16 unit is 1 to 3 bytes).
 * `JSON.stringify` escapes lone surrogates, so every surrogate in its text is half of a pair
 * (4 bytes for the pair).
 */
export const jsonWithin = (value: unknown, max: number): boolean => {
  const text = JSON.stringify(value)
  if (text.length * 3 <= max) return true
  if (text.length > max) return false
  let bytes = text.length
  for (let i = 0; i < text.length && bytes <= max; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    // 2 bytes below U+0800, else 3; a surrogate pair (2 UTF-16 units) is 4.
    bytes += code < 0x800 ? 1 : code >= 0xd800 && code <= 0xdfff ? 1 : 2
  }
  return bytes <= max
}

/**
 * How many times its source text the JSON a parsed value is written back as can be, at most:
 * `JSON.stringify` writes strings and structure no longer than they came (escapes only shrink
 * or stay, whitespace goes), and a number at most 21 / 4 times (`1e20` is written with 21
 * digits). A page of `bytes` therefore holds no schema longer than `bytes * maxJsonGrowth`.
 */
export const maxJsonGrowth = 6

/**
 * Lists every page of tools. The cache hint is the most cautious of the pages' (the shortest
 * `ttlMs`; private if any page is).
 */
export const listAllTools = (
  session: Session,
  policy: PhasePolicy.PhasePolicy,
  record: (stage: Stage, bytes: number) => void
): Effect.Effect<Listing, McpConnectionError> =>
  Effect.gen(function*() {
    const exchange: Exchange = { stage: "list-tools", phase: "discovery", budget: policy.discovery }
    const tools: Array<McpSchema.Tool> = []
    const outputChecks = new Map<string, OutputCheck>()
    let cursor: string | undefined
    let cacheHint: McpSchema.CacheHint | undefined
    const cacheable = cacheableHints()
    const excluded = new Set<string>()
    const totals: Totals = { bytes: 0, nodes: 0 }
    for (let page = 1;; page++) {
      if (page > policy.maxPages) return yield* Effect.fail(limitExceeded(exchange, "maxPages"))
      const response = yield* session.request("tools/list", cursor === undefined ? undefined : { cursor }, exchange).pipe(
        Effect.catchIf(
          (error) => page === 1 && declaresNoTools(session, error),
          () => Effect.succeed(undefined)
        )
      )
      // A server without tools (a skills or resources server) may not know the method: no tools.
      if (response === undefined) return { tools, cacheHint, excluded, outputChecks, bytes: 0 }
      record("list-tools", response.bytes)
      const passed = addPage(totals, response, policy)
      if (passed !== undefined) return yield* Effect.fail(limitExceeded(exchange, passed, totals.bytes))
      const pageResult = pageOf(response.result)
      if (Either.isLeft(pageResult)) return yield* Effect.fail(invalidResult(exchange, response.bytes)(pageResult.left))
      const decoded = pageResult.right
      if (tools.length + excluded.size + decoded.tools.length > policy.maxTools) {
        return yield* Effect.fail(limitExceeded(exchange, "maxTools"))
      }
      // A page too small to hold a schema past the bound is not measured schema by schema.
      const measured = response.bytes * maxJsonGrowth > policy.maxSchemaBytes
      for (const candidate of decoded.tools) {
        const listed = toolOf(candidate)
        if (Either.isLeft(listed)) return yield* Effect.fail(invalidResult(exchange, response.bytes)(listed.left))
        const tool = listed.right
        if (
          measured && (
            !jsonWithin(tool.inputSchema, policy.maxSchemaBytes) ||
            (tool.outputSchema !== undefined && !jsonWithin(tool.outputSchema, policy.maxSchemaBytes))
          )
        ) {
          return yield* Effect.fail(limitExceeded(exchange, "maxSchemaBytes"))
        }
        let check: OutputCheck | "uncompilable" | undefined
        if (tool.outputSchema !== undefined) {
          check = compileOutputSchema(yield* validators, tool.outputSchema)
          // A compile is synchronous: the listing's deadline can fire between two.
          yield* Effect.yieldNow()
        }
        if (!session.admits(tool) || check === "uncompilable") {
          excluded.add(tool.name)
          continue
        }
        tools.push(tool)
        if (check !== undefined) outputChecks.set(tool.name, check)
      }
      cacheable.add(response.result)
      if (decoded.ttlMs !== undefined && decoded.cacheScope !== undefined) {
        cacheHint = {
          ttlMs: Math.min(decoded.ttlMs, cacheHint?.ttlMs ?? decoded.ttlMs),
          cacheScope: cacheHint?.cacheScope === "private" ? "private" : decoded.cacheScope
        }
      }
      if (decoded.nextCursor === undefined) {
        return { tools, cacheHint, cacheable: cacheable.hint(), excluded, outputChecks, bytes: totals.bytes }
      }
      cursor = decoded.nextCursor
    }
  })

/** A server that declared no `tools` capability and answers `tools/list` with "method not found" has none. */
const declaresNoTools = (session: Session, error: McpConnectionError): boolean =>
  session.capabilities["tools"] === undefined && error._tag === "RemoteRefusal" && error.code === McpSchema.ErrorCode.MethodNotFound

const Page = Schema.Struct({ nextCursor: Schema.optional(Schema.String) }).annotations({
  parseOptions: { onExcessProperty: "preserve" }
})
const decodePage = Schema.decodeUnknown(Page)

/**
 * Lists every page of a list method other than tools (`key` names the array in each page),
 * each item decoded strictly; the items and the bytes read.
 */
export const listAll = <A, I>(
  session: Session,
  method: string,
  key: string,
  item: Schema.Schema<A, I>,
  exchange: Exchange,
  bounds: Pick<PhasePolicy.PhasePolicy, "maxPages" | "maxListingBytes" | "maxNodes">
): Effect.Effect<
  { readonly items: ReadonlyArray<A>; readonly bytes: number; readonly cacheable: McpSchema.CacheHint | undefined },
  McpConnectionError
> => {
  const decodeItems = Schema.decodeUnknown(Schema.Array(item))
  return Effect.gen(function*() {
    const items: Array<A> = []
    const cacheable = cacheableHints()
    let cursor: string | undefined
    const totals: Totals = { bytes: 0, nodes: 0 }
    for (let page = 1;; page++) {
      if (page > bounds.maxPages) return yield* Effect.fail(limitExceeded(exchange, "maxPages"))
      const response = yield* session.request(method, cursor === undefined ? undefined : { cursor }, exchange)
      const passed = addPage(totals, response, bounds)
      if (passed !== undefined) return yield* Effect.fail(limitExceeded(exchange, passed, totals.bytes))
      const invalid = invalidResult(exchange, totals.bytes)
      const decoded = yield* decodePage(response.result).pipe(Effect.mapError(invalid))
      // Pushed one by one: spreading a large page would pass each item as an argument (a RangeError past ~100,000).
      for (const decodedItem of yield* decodeItems(response.result[key]).pipe(Effect.mapError(invalid))) {
        items.push(decodedItem)
      }
      cacheable.add(response.result)
      if (decoded.nextCursor === undefined) return { items, bytes: totals.bytes, cacheable: cacheable.hint() }
      cursor = decoded.nextCursor
    }
  })
}
