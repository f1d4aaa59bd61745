/**
 * The cache of a connection (docs/DESIGN.md, "Response cache", "The era per origin"): the
 * results a 2026-07-28 server marks cacheable (`ttlMs`, `cacheScope`) for listings and reads,
 * and the era each server spoke, so that the next discovery of the same server starts with it.
 *
 * A connection made without one has a cache of its own, which its session renewals share. To
 * share one across connections (public entries, the era per origin), provide `McpCache.layer`
 * where the connections are made, as an application that connects again and again would;
 * `McpServers` shares one across its servers. Entries are partitioned by server, transport,
 * revision and authorization context: a `private` entry never serves another credential.
 *
 * @example
 * ```ts
 * import { McpCache, McpClient } from "@phasebound/client"
 * import { FetchHttpClient } from "@effect/platform"
 * import { Effect, Layer } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const connection = yield* McpClient.connect({ url: "http://127.0.0.1:3000/mcp" })
 *   // Served from the cache while the server's hint says the listing is fresh.
 *   const resources = yield* connection.listResources()
 *   // Asks the server whatever the cache holds, and keeps the answer.
 *   const fresh = yield* connection.listResources({ cache: "refresh" })
 *   return [resources, fresh]
 * }).pipe(Effect.scoped, Effect.provide(Layer.merge(McpCache.layer(), FetchHttpClient.layer)))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as CacheService from "./internal/cacheService.js"
import * as EraCache from "./internal/eraCache.js"
import { Count, decoder, Timeout } from "./internal/optionSchema.js"
import * as ResponseCache from "./internal/responseCache.js"
import type { InvalidOption } from "./McpConnectionError.js"

/**
 * How one operation uses the cache: `use` (the default) serves a fresh entry and keeps what it
 * fetches; `refresh` asks the server and keeps the answer; `bypass` asks the server and keeps
 * nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type CacheMode = ResponseCache.Mode

/**
 * The modes, as a Schema.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CacheMode: Schema.Literal<["use", "refresh", "bypass"]> = Schema.Literal("use", "refresh", "bypass")

/**
 * The per-call option of the operations that go through the cache: the listings
 * (`listToolsWith`, `listResources`, `listResourceTemplates`, `listPrompts`) and `readResource`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheOptions {
  /** How this operation uses the cache (default `use`); anything else is `InvalidOption` `cache`. */
  readonly cache?: CacheMode | undefined
}

/**
 * What a cached entry answers: a listing (`tools`, `prompts`, `resources`, `templates`) or a
 * read (`read`).
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = ResponseCache.Kind

/**
 * What `evict` removes: every entry of a kind, or the reads of one URI.
 *
 * @since 0.1.0
 * @category models
 */
export type Target = ResponseCache.Target

/**
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Responses kept, and their bytes as read from the wire. */
  readonly entries: number
  readonly bytes: number
  /** Lookups served, and lookups that found nothing fresh. */
  readonly hits: number
  readonly misses: number
  /** Servers whose era is remembered. */
  readonly origins: number
}

/**
 * The bounds of a cache, validated like the policy (a count is a safe integer >= 1, a duration
 * finite and > 0).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Most responses kept (default 512); the least recently used goes first. */
  readonly maxEntries?: number | undefined
  /**
   * Most bytes kept, counted as read from the wire (default 2 MiB); a response larger than a
   * quarter of it is not kept.
   */
  readonly maxBytes?: number | undefined
  /** The longest a response is kept, whatever `ttlMs` the server gives (default 1 hour). */
  readonly maxTtl?: Duration.DurationInput | undefined
  /** Most servers whose era is remembered (default 256). */
  readonly maxOrigins?: number | undefined
  /**
   * How long a server's era is remembered (default 1 hour): then its next discovery negotiates
   * from the first candidate again, and sees a server that learnt a newer era meanwhile.
   */
  readonly maxEraAge?: Duration.DurationInput | undefined
}

/**
 * The cache service: what callers may do with it. The connections that use it reach the rest.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cache {
  /**
   * Evicts every entry of a kind, or the reads of one URI, for every server. A connection evicts
   * its own server's entries itself when the server says they changed.
   */
  readonly evict: (target: Target) => Effect.Effect<void>
  /** Forgets every response and every era. */
  readonly clear: Effect.Effect<void>
  readonly stats: Effect.Effect<Stats>
}

/**
 * The cache the connections made in its scope share.
 *
 * @since 0.1.0
 * @category tags
 */
export class McpCache extends Context.Tag("@phasebound/client/McpCache")<McpCache, Cache>() {}

/**
 * The defaults of `Options`.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaults = {
  maxEntries: ResponseCache.defaultBounds.maxEntries,
  maxBytes: ResponseCache.defaultBounds.maxBytes,
  maxTtlMs: ResponseCache.defaultBounds.maxTtlMs,
  maxOrigins: EraCache.defaultMaxOrigins,
  maxEraAgeMs: EraCache.defaultMaxAgeMs
} as const

const OptionsSchema = Schema.Struct({
  maxEntries: Schema.optional(Count),
  maxBytes: Schema.optional(Count),
  maxTtl: Schema.optional(Timeout),
  maxOrigins: Schema.optional(Count),
  maxEraAge: Schema.optional(Timeout)
})

const decodeOptions = decoder(OptionsSchema, { prefix: "cache.", root: "cache" })

const build = (options: typeof OptionsSchema.Type): Cache => {
  const internals = CacheService.makeInternals({
    maxEntries: options.maxEntries ?? defaults.maxEntries,
    maxBytes: options.maxBytes ?? defaults.maxBytes,
    maxTtlMs: options.maxTtl ?? defaults.maxTtlMs,
    maxOrigins: options.maxOrigins ?? defaults.maxOrigins,
    maxEraAgeMs: options.maxEraAge ?? defaults.maxEraAgeMs
  })
  return CacheService.register<Cache>({
    evict: (target) => Effect.sync(() => internals.responses.evict(target)),
    clear: Effect.sync(() => {
      internals.responses.clear()
      internals.eras.clear()
    }),
    stats: Effect.sync(() => ({ ...internals.responses.stats(), origins: internals.eras.size() }))
  }, internals)
}

/**
 * Makes a cache; its options are validated first (`InvalidOption`, named `cache.maxEntries`,
 * ...).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Cache, InvalidOption> => Effect.map(decodeOptions(options), build)

/**
 * One cache for every connection made where it is provided.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<McpCache, InvalidOption> => Layer.effect(McpCache, make(options))
