/**
 * A paginated listing of the call phase (resources, resource templates, prompts): every page
 * under one deadline of the call budget (or its overrides), bounded as every listing is
 * (`internal/listing.ts`), through the response cache (`cached.ts`).
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as McpCache from "../../McpCache.js"
import type { McpConnectionError, Stage } from "../../McpConnectionError.js"
import type * as PhasePolicy from "../../PhasePolicy.js"
import { listAll } from "../listing.js"
import type { Kind } from "../responseCache.js"
import { cached, isMode } from "./cached.js"
import type { Core, Operation } from "./core.js"

export const listOf =
  <A, I>(core: Core, operation: Operation, stage: Stage, key: string, item: Schema.Schema<A, I>, kind: Kind) =>
  (options?: PhasePolicy.BudgetOptions & McpCache.CacheOptions): Effect.Effect<ReadonlyArray<A>, McpConnectionError> =>
    core.callPhase(
      operation,
      stage,
      options,
      isMode(options?.cache) ? undefined : "cache",
      (on, exchange) =>
        cached(
          core.cache,
          on,
          kind,
          undefined,
          options?.cache ?? "use",
          Effect.map(listAll(on.session, operation, key, item, exchange, core.policy), ({ bytes, cacheable, items }) => ({
            value: items,
            bytes,
            hint: cacheable
          }))
        )
    )
