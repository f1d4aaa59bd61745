/**
 * What an `McpCache` holds (docs/DESIGN.md, "Response cache", "The era per origin"): the
 * response cache, the era per origin, and the key of the fingerprints that name servers and
 * authorization contexts in both. The public service (`McpCache.ts`) gives callers `evict`,
 * `clear` and `stats`; the connections reach these through `internalsOf`.
 *
 * Fingerprints are HMAC-SHA-256 under a key drawn at random for each cache (WebCrypto, in Node
 * and Bun): not reversible, meaningless outside the process, and equal only for equal material
 * within one cache. No URL, header value, token or environment value is kept, only these.
 */
import * as Effect from "effect/Effect"
import * as EraCache from "./eraCache.js"
import * as ResponseCache from "./responseCache.js"

export interface Internals {
  readonly responses: ResponseCache.ResponseCache
  readonly eras: EraCache.EraCache
  /** The fingerprint of `material` (hex), under this cache's key. */
  readonly fingerprint: (material: string) => Effect.Effect<string>
}

export interface Settings extends ResponseCache.Bounds {
  readonly maxOrigins: number
  readonly maxEraAgeMs: number
}

const registry = new WeakMap<object, Internals>()

export const internalsOf = (cache: object): Internals | undefined => registry.get(cache)

const hex = (buffer: ArrayBuffer) => Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("")

interface SyncHmac {
  readonly createHmac: (algorithm: "sha256", key: Uint8Array) => {
    update(data: string): { digest(encoding: "hex"): string }
  }
}

/**
 * The runtime's synchronous HMAC (`node:crypto`, which Node, Bun and Deno have), read without an
 * import so that other runtimes load this module too; `undefined` where there is none. Each
 * connection fingerprints its server and its authorization context: WebCrypto's `sign` answers
 * through the event loop (a thread-pool round trip each time), the synchronous one in a few µs.
 */
const syncHmac = ((): SyncHmac | undefined => {
  try {
    const runtime = (globalThis as { readonly process?: { readonly getBuiltinModule?: (id: string) => unknown } }).process
    const crypto = runtime?.getBuiltinModule?.("node:crypto") as Partial<SyncHmac> | undefined
    return typeof crypto?.createHmac === "function" ? (crypto as SyncHmac) : undefined
  } catch {
    return undefined
  }
})()

export const makeInternals = (settings: Settings): Internals => {
  const raw = globalThis.crypto.getRandomValues(new Uint8Array(32))
  let key: Promise<CryptoKey> | undefined
  const encoder = new TextEncoder()
  const hmac = syncHmac
  return {
    responses: ResponseCache.make(settings),
    eras: EraCache.make(settings.maxOrigins, settings.maxEraAgeMs),
    // The same HMAC-SHA-256 (hex) either way.
    fingerprint: hmac !== undefined
      ? (material) => Effect.sync(() => hmac.createHmac("sha256", raw).update(material).digest("hex"))
      : (material) =>
        Effect.promise(async () => {
          key ??= globalThis.crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
          return hex(await globalThis.crypto.subtle.sign("HMAC", await key, encoder.encode(material)))
        })
  }
}

/** Registers the internals of a public cache value. */
export const register = <A extends object>(cache: A, internals: Internals): A => {
  registry.set(cache, internals)
  return cache
}

/**
 * What one connection uses of a cache: the cache, the fingerprint of its server (`origin`), and
 * the fingerprint of its authorization context at the moment (`identity`: its headers, given
 * once as `context`, and its current OAuth credential, read at each operation; a stdio child's
 * environment), remembered for the last credential.
 */
export interface ConnectionCache {
  readonly internals: Internals
  readonly origin: string
  readonly identity: Effect.Effect<string>
}

export const forConnection = (
  internals: Internals,
  originMaterial: string,
  context: string,
  credential?: () => string
): Effect.Effect<ConnectionCache> =>
  Effect.map(internals.fingerprint(`origin\u0000${originMaterial}`), (origin) => {
    const fixed = `identity\u0000${origin}\u0000${context}`
    let last: { readonly credential: string; readonly fingerprint: string } | undefined
    const identity = Effect.suspend(() => {
      const current = credential?.() ?? ""
      if (last?.credential === current) return Effect.succeed(last.fingerprint)
      return Effect.map(internals.fingerprint(credential === undefined ? fixed : `${fixed}\u0000${current}`), (fingerprint) => {
        last = { credential: current, fingerprint }
        return fingerprint
      })
    })
    return { internals, origin, identity }
  })
