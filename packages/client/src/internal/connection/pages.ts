/**
 * A paginated listing of the call phase (resources, resource templates, prompts): every page
 * under one deadline of the call budget (or its overrides), bounded as every listing is
 * (`internal/listing.ts`).
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { McpConnectionError, Stage } from "../../McpConnectionError.js"
import type * as PhasePolicy from "../../PhasePolicy.js"
import { listAll } from "../listing.js"
import type { Core, Operation } from "./core.js"

export const listOf =
  <A, I>(core: Core, operation: Operation, stage: Stage, key: string, item: Schema.Schema<A, I>) =>
  (options?: PhasePolicy.BudgetOptions): Effect.Effect<ReadonlyArray<A>, McpConnectionError> =>
    core.callPhase(
      operation,
      stage,
      options,
      undefined,
      (on, exchange) => Effect.map(listAll(on.session, operation, key, item, exchange, core.policy), ({ bytes, items }) => ({ value: items, bytes }))
    )
