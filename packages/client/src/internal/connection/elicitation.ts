/**
 * A connection's side of URL elicitations that complete out of band (docs/DESIGN.md, "Client
 * capabilities", URL mode): the stream of completions the server announced
 * (`notifications/elicitation/complete`, 2025-11-25), and a wait for one of them under a
 * budget of the call phase (stage `elicitation`). Nothing is sent to the server: the wait's
 * failures are `not-sent`.
 */
import * as Effect from "effect/Effect"
import type * as McpClient from "../../McpClient.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import type { Exchange } from "../transport/transport.js"
import { withDeadline } from "../deadline.js"
import { isElicitationId } from "../elicitationUrl.js"
import * as Failures from "../failures.js"
import { clientSpan } from "../tracing.js"
import { type Core, refusedOption } from "./core.js"

export interface Elicitation {
  readonly elicitationCompletions: McpClient.Connection["elicitationCompletions"]
  readonly awaitElicitation: McpClient.Connection["awaitElicitation"]
}

export const make = (core: Core): Elicitation => ({
  elicitationCompletions: core.elicitations.completions,
  awaitElicitation: (elicitationId, options) =>
    Effect.flatMap(PhasePolicy.callBudget(core.policy, options === undefined ? undefined : { timeout: options.timeout }), (budget) => {
      const exchange: Exchange = { stage: "elicitation", phase: "call", budget }
      if (!isElicitationId(elicitationId)) return refusedOption(exchange, "elicitationId")
      // The id is the server's: never an attribute.
      return clientSpan("mcp.elicitation.await", { "mcp.phase": "call", "mcp.stage": "elicitation" }, (annotate) =>
        withDeadline(
          core.elicitations.completion(elicitationId, () => Failures.transport(exchange, "session-closed", "not-sent")),
          budget.timeoutMs,
          () => Failures.deadline(exchange, "not-sent")
        ).pipe(
          Effect.tapBoth({
            onFailure: (error) => Effect.sync(() => annotate({ "mcp.outcome": error._tag })),
            onSuccess: () => Effect.sync(() => annotate({ "mcp.outcome": "ok" }))
          })
        ))
    })
})
