/**
 * phasebound's Promise API with no Effect to install: `@phasebound/client/promise` and everything
 * it runs on (effect, @effect/platform, @effect/platform-node, ajv, re2js) in one bundle, and
 * plain declarations (src/types.ts) that import nothing.
 *
 * ```ts
 * import { connect } from "@phasebound/promise"
 *
 * const connection = await connect({ url: "http://127.0.0.1:3000/mcp", policy: { timeout: 30_000 } })
 * try {
 *   const result = await connection.callTool("add", { a: 1, b: 2 }, { timeout: 5_000 })
 * } finally {
 *   await connection.close()
 * }
 * ```
 *
 * @since 0.1.0
 */
import { connect as connectThroughClient, createCache as createCacheThroughClient } from "@phasebound/client/promise"
import type { Cache, CacheOptions, Connection, ConnectOptions } from "./types.js"

export type * from "./types.js"

/**
 * Connects and discovers. Resolves once the tools are listed. The client's own `connect`, typed
 * with the plain declarations: this assignment is where the typecheck holds them to it (options
 * accepted here are accepted there; what it resolves with is a `Connection` here).
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect: (options: ConnectOptions) => Promise<Connection> = connectThroughClient

/**
 * Makes a cache for connections to share (pass it as `cache` to each `connect`): public
 * responses and the era per origin. Throws the `InvalidOption` of a bound that is not valid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createCache: (options?: CacheOptions) => Cache = createCacheThroughClient
