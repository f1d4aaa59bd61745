/**
 * An operation under authorization (docs/AUTHORIZATION.md, "Answering a refusal"): when a 401, or a 403
 * `insufficient_scope`, refused its request before it was processed, a new credential is
 * obtained (outside the operation's deadline, under the authorization budget) and the operation
 * runs once more, at most `maxResends` times in all. Without authorization, the operation as it is.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as McpClient from "../../McpClient.js"
import type { McpConnectionError, Stage } from "../../McpConnectionError.js"
import * as Failures from "../failures.js"
import { authChallengeOf } from "../http.js"
import type { ConnectionAuthorization } from "../oauth/authorizer.js"

/**
 * Authorizations one discovery (or listing) may need: a 401 (a token), then a 403
 * `insufficient_scope` or two (step-ups, each also bounded by `maxStepUps`). Discovery requests
 * are idempotent.
 */
export const maxDiscoveryAuthorizations = 3

export const authorized = <A, R>(
  auth: ConnectionAuthorization | undefined,
  stage: Stage,
  maxResends: number,
  operation: (resent: boolean) => Effect.Effect<A, McpConnectionError, R>,
  observe: (observation: McpClient.Observation) => void
): Effect.Effect<A, McpConnectionError, R> => {
  if (auth === undefined) return operation(false)
  const attempt = (resends: number): Effect.Effect<A, McpConnectionError, R> => {
    const started = auth.generation()
    return Effect.catchAll(operation(resends > 0), (error) => {
      const challenge = authChallengeOf(error)
      if (challenge === undefined || resends >= maxResends) return Effect.fail(error)
      return Effect.clockWith((clock) => {
        const startedAt = clock.unsafeCurrentTimeMillis()
        return auth.recover(error, challenge, { stage: error.stage, generation: started }).pipe(
          // The refused request reached the server, which did not process it.
          Effect.mapError((failure) => failure.outcome === "not-sent" ? Failures.withOutcome(failure, "not-applied") : failure),
          Effect.onExit((exit) =>
            Effect.sync(() => {
              const outcome = Exit.isSuccess(exit) ? "ok" : Option.getOrUndefined(Cause.failureOption(exit.cause))?._tag
              if (outcome === undefined) return
              const durationMs = clock.unsafeCurrentTimeMillis() - startedAt
              observe({ operation: "authorization", stage: error.stage, durationMs, bytes: 0, outcome })
            })
          ),
          Effect.zipRight(Effect.suspend(() => attempt(resends + 1)))
        )
      })
    })
  }
  return Effect.zipRight(auth.prepare(stage), Effect.suspend(() => attempt(0)))
}
