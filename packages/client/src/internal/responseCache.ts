/**
 * The response cache (docs/DESIGN.md, "Response cache"): results of `tools/list`,
 * `prompts/list`, `resources/list`, `resources/templates/list` (each a whole listing, every
 * page) and `resources/read` (one URI), kept as long as the server's caching hint (`ttlMs`,
 * `cacheScope`, 2026-07-28) says they are fresh.
 *
 * - **Partitioned.** An entry belongs to one partition: the server (`origin`: an HTTP URL's
 *   origin, path and a fingerprint of its query; a stdio command's fingerprint), the transport
 *   and the protocol revision the answer came in. Inside it, a `public` entry serves every
 *   caller of the partition; a `private` one only the authorization context that fetched it,
 *   named by a fingerprint (`internal/cacheIdentity.ts`), never by the credential itself.
 * - **Bounded.** At most `maxEntries` entries and `maxBytes` bytes (the wire bytes of the
 *   answers), least recently used first out; an answer larger than a quarter of `maxBytes` is
 *   not kept. A `ttlMs` past `maxTtlMs` is cut to it: a server cannot pin an answer for ever.
 * - **Timed by `Clock`.** Fresh while `now < received + ttlMs` (a listing: its earliest
 *   page's end), read on the fiber's clock, so a `TestClock` drives it.
 * - **Evicted** by kind (`tools`, `prompts`, `resources`, `templates`, every read) or by URI,
 *   in one partition (a notification of that server's) or everywhere (the public `evict`).
 *
 * Synchronous and single-threaded (JavaScript): every operation is a few map steps, bounded by
 * `maxEntries`.
 */
import type * as McpSchema from "../McpSchema.js"

/** What a cached answer is the answer to. */
export type Kind = "tools" | "prompts" | "resources" | "templates" | "read"

/** How one operation uses the cache: `use` a fresh entry, `refresh` it (fetch and keep), or `bypass` it. */
export type Mode = "use" | "refresh" | "bypass"

/** What to evict: every entry of a kind, or the reads of one URI. */
export type Target = Kind | { readonly uri: string }

/** The server, transport and revision an entry belongs to (no secret in any of them). */
export interface Partition {
  readonly origin: string
  readonly transport: string
  readonly revision: string
}

export interface Bounds {
  readonly maxEntries: number
  readonly maxBytes: number
  readonly maxTtlMs: number
}

export const defaultBounds: Bounds = {
  maxEntries: 512,
  maxBytes: 2 * 1024 * 1024,
  maxTtlMs: 60 * 60 * 1000
}

interface Entry {
  readonly value: unknown
  readonly bytes: number
  readonly expiresAt: number
  readonly base: string
  readonly kind: Kind
  readonly uri: string | undefined
}

export interface Stats {
  readonly entries: number
  readonly bytes: number
  readonly hits: number
  readonly misses: number
}

export interface ResponseCache {
  readonly bounds: Bounds
  /** A fresh entry for this caller (its own private one first, then the public one), or `undefined`. */
  readonly get: (
    partition: Partition,
    identity: string,
    kind: Kind,
    uri: string | undefined,
    now: number
  ) => { readonly value: unknown } | undefined
  /** Keeps an answer as its hint allows (nothing for a `ttlMs` of 0, or an answer too large). */
  readonly set: (
    partition: Partition,
    identity: string,
    kind: Kind,
    uri: string | undefined,
    hint: McpSchema.CacheHint,
    receivedAt: number,
    value: unknown,
    bytes: number
  ) => void
  /** Evicts the target in one server's partitions (every revision and transport), or everywhere. */
  readonly evict: (target: Target, origin?: string) => void
  readonly clear: () => void
  readonly stats: () => Stats
}

// NUL separates the parts: none of them (an origin, a revision, a fingerprint, a kind) has one,
// and a URI that has one cannot reach another entry's key since it comes last.
const baseOf = (partition: Partition) => `${partition.origin}\u0000${partition.transport}\u0000${partition.revision}`
const keyOf = (base: string, scope: string, kind: Kind, uri: string | undefined) => `${base}\u0000${scope}\u0000${kind}\u0000${uri ?? ""}`

export const make = (bounds: Bounds = defaultBounds): ResponseCache => {
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  const entries = new Map<string, Entry>()
  let bytes = 0
  let hits = 0
  let misses = 0

  const remove = (key: string, entry: Entry) => {
    entries.delete(key)
    bytes -= entry.bytes
  }

  const lookup = (key: string, now: number): Entry | undefined => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (now >= entry.expiresAt) {
      remove(key, entry)
      return undefined
    }
    entries.delete(key)
    entries.set(key, entry)
    return entry
  }

  return {
    bounds,
    get: (partition, identity, kind, uri, now) => {
      const base = baseOf(partition)
      const entry = lookup(keyOf(base, `private:${identity}`, kind, uri), now) ?? lookup(keyOf(base, "public", kind, uri), now)
      if (entry === undefined) {
        misses++
        return undefined
      }
      hits++
      return { value: entry.value }
    },
    set: (partition, identity, kind, uri, hint, receivedAt, value, size) => {
      const base = baseOf(partition)
      const privateKey = keyOf(base, `private:${identity}`, kind, uri)
      const publicKey = keyOf(base, "public", kind, uri)
      // What was kept before for this request is replaced, whatever its scope.
      for (const key of [privateKey, publicKey]) {
        const old = entries.get(key)
        if (old !== undefined) remove(key, old)
      }
      const ttlMs = Math.min(Math.max(0, hint.ttlMs), bounds.maxTtlMs)
      if (ttlMs <= 0 || size > bounds.maxBytes / 4) return
      const entry: Entry = { value, bytes: size, expiresAt: receivedAt + ttlMs, base, kind, uri }
      entries.set(hint.cacheScope === "private" ? privateKey : publicKey, entry)
      bytes += size
      for (const [key, oldest] of entries) {
        if (entries.size <= bounds.maxEntries && bytes <= bounds.maxBytes) break
        remove(key, oldest)
      }
    },
    evict: (target, origin) => {
      const prefix = origin === undefined ? undefined : `${origin}\u0000`
      for (const [key, entry] of [...entries]) {
        if (prefix !== undefined && !entry.base.startsWith(prefix)) continue
        const matches = typeof target === "string" ? entry.kind === target : entry.kind === "read" && entry.uri === target.uri
        if (matches) remove(key, entry)
      }
    },
    clear: () => {
      entries.clear()
      bytes = 0
    },
    stats: () => ({ entries: entries.size, bytes, hits, misses })
  }
}

/**
 * What a notification of the server's evicts (docs/DESIGN.md, "Response cache"): a list change
 * its listing, a resource update the reads of its URI (and the listing of resources, whose
 * sizes may have changed with it). `undefined` for any other notification.
 */
export const evictionOf = (method: string, params: unknown): ReadonlyArray<Target> | undefined => {
  switch (method) {
    case "notifications/tools/list_changed":
      return ["tools"]
    case "notifications/prompts/list_changed":
      return ["prompts"]
    case "notifications/resources/list_changed":
      return ["resources", "templates"]
    case "notifications/resources/updated": {
      const uri = typeof params === "object" && params !== null ? (params as { readonly uri?: unknown }).uri : undefined
      // An update that does not say which resource: every read may be stale.
      return typeof uri === "string" ? [{ uri }, "resources"] : ["read", "resources"]
    }
    default:
      return undefined
  }
}

/** Every kind: what a stream opened again evicts (changes of any kind may have been missed). */
export const allKinds: ReadonlyArray<Kind> = ["tools", "prompts", "resources", "templates", "read"]
