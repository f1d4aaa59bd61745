/**
 * Paginated listings (docs/DESIGN.md, "Listings"): every page of `tools/list`, and of
 * `resources/list`, `resources/templates/list` and `prompts/list`, under the one deadline the
 * caller puts around the whole listing, bounded by `maxPages`, and for tools by `maxTools` and
 * `maxSchemaBytes`.
 *
 * A listed tool the session cannot use correctly is left out (and named in `excluded`): a
 * stateless tool whose header declarations are invalid, or a tool whose `outputSchema` cannot
 * be compiled (its results could not be checked). Each `outputSchema` is compiled here, once
 * (docs/DESIGN.md, "Typed results").
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { LimitExceeded, type McpConnectionError, type Stage } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type * as PhasePolicy from "../PhasePolicy.js"
import type { Exchange } from "../Transport.js"
import type { Session } from "./era.js"
import * as Failures from "./failures.js"
import { compileOutputSchema, type OutputCheck, validators } from "./outputSchema.js"

/** A listing: the tools the session can use, and what came with them. */
export interface Listing {
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly cacheHint: McpSchema.CacheHint | undefined
  /** The names of the tools left out. */
  readonly excluded: ReadonlySet<string>
  /** The compiled `outputSchema` of each tool that declares one. */
  readonly outputChecks: ReadonlyMap<string, OutputCheck>
  readonly bytes: number
}

const decodeListPage = Schema.decodeUnknown(McpSchema.ListToolsPage)
const decodeTool = Schema.decodeUnknown(McpSchema.Tool)

export const limitExceeded = (exchange: Exchange, limit: "maxTools" | "maxPages" | "maxSchemaBytes") =>
  new LimitExceeded({
    stage: exchange.stage,
    phase: exchange.phase,
    limits: exchange.budget,
    limit,
    outcome: "applied",
    retryable: false
  })

export const invalidResult = (exchange: Exchange, bytes: number) => (cause: unknown) =>
  Failures.protocol(exchange, "invalid-result", { observedBytes: bytes }, cause)

const utf8Length = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value)).length

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
    const excluded = new Set<string>()
    let bytes = 0
    for (let page = 1;; page++) {
      if (page > policy.maxPages) return yield* Effect.fail(limitExceeded(exchange, "maxPages"))
      const response = yield* session.request("tools/list", cursor === undefined ? undefined : { cursor }, exchange)
      record("list-tools", response.bytes)
      bytes += response.bytes
      const decoded = yield* decodeListPage(response.result).pipe(Effect.mapError(invalidResult(exchange, response.bytes)))
      if (tools.length + excluded.size + decoded.tools.length > policy.maxTools) {
        return yield* Effect.fail(limitExceeded(exchange, "maxTools"))
      }
      for (const candidate of decoded.tools) {
        const tool = yield* decodeTool(candidate).pipe(Effect.mapError(invalidResult(exchange, response.bytes)))
        if (
          utf8Length(tool.inputSchema) > policy.maxSchemaBytes ||
          (tool.outputSchema !== undefined && utf8Length(tool.outputSchema) > policy.maxSchemaBytes)
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
      if (decoded.ttlMs !== undefined && decoded.cacheScope !== undefined) {
        cacheHint = {
          ttlMs: Math.min(decoded.ttlMs, cacheHint?.ttlMs ?? decoded.ttlMs),
          cacheScope: cacheHint?.cacheScope === "private" ? "private" : decoded.cacheScope
        }
      }
      if (decoded.nextCursor === undefined) return { tools, cacheHint, excluded, outputChecks, bytes }
      cursor = decoded.nextCursor
    }
  })

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
  maxPages: number
): Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly bytes: number }, McpConnectionError> => {
  const decodeItems = Schema.decodeUnknown(Schema.Array(item))
  return Effect.gen(function*() {
    const items: Array<A> = []
    let cursor: string | undefined
    let bytes = 0
    for (let page = 1;; page++) {
      if (page > maxPages) return yield* Effect.fail(limitExceeded(exchange, "maxPages"))
      const response = yield* session.request(method, cursor === undefined ? undefined : { cursor }, exchange)
      bytes += response.bytes
      const invalid = invalidResult(exchange, bytes)
      const decoded = yield* decodePage(response.result).pipe(Effect.mapError(invalid))
      items.push(...yield* decodeItems(response.result[key]).pipe(Effect.mapError(invalid)))
      if (decoded.nextCursor === undefined) return { items, bytes }
      cursor = decoded.nextCursor
    }
  })
}
