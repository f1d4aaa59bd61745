/**
 * Argument completion (docs/DESIGN.md, "Completion"): `completion/complete` for an argument of a
 * prompt (`ref/prompt`) or of a resource template (`ref/resource`), with the values already
 * chosen for the other arguments (`context.arguments`), under the call budget.
 *
 * - The request is checked before any I/O: a bad `ref`, `argument` or `context` is
 *   `InvalidOption` naming it.
 * - A server that did not declare the `completions` capability is not asked: `InvalidOption`
 *   `completions`, reason `undeclared-capability`, outcome `not-sent` (the spec makes the
 *   declaration a MUST of every server that completes; the capabilities read are those of the
 *   session the request would go on, a new one included).
 * - The result is decoded strictly: more than 100 values (the spec's bound) is a
 *   `ProtocolViolation` `invalid-result`, counted before any value is decoded, never cut short;
 *   an answer that arrived proves the request was processed (`applied`).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as McpClient from "../../McpClient.js"
import { InvalidOption } from "../../McpConnectionError.js"
import * as McpSchema from "../../McpSchema.js"
import type { Exchange, Response } from "../transport/transport.js"
import * as Failures from "../failures.js"
import { type Core, decodedAs, resultViolation } from "./core.js"

const decodeRequest = Schema.decodeUnknownEither(McpSchema.CompleteRequest, { onExcessProperty: "ignore" })
const decodeResult = Schema.decodeUnknownEither(McpSchema.CompleteResult)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The request as checked (only the fields of the spec, so a caller's object carries nothing else
 * to the server), or the part of it that failed its check (the first key of the first issue's path).
 */
const checked = (request: unknown): Either.Either<McpSchema.CompleteRequest, string> =>
  Either.mapLeft(decodeRequest(request), (error) => {
    const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.path[0]
    return first === "ref" || first === "argument" || first === "context" ? first : "request"
  })

/** Whether the session's server declared `completions` (an object, as the spec writes it). */
const declaresCompletions = (capabilities: Readonly<Record<string, unknown>>): boolean => isRecord(capabilities["completions"])

/**
 * The result, strictly: the number of values is looked at first, so a server that sends a
 * million of them costs one length check, not a million decodings.
 */
const decodedResult = (exchange: Exchange) => (response: Response) => {
  const completion = isRecord(response.result) ? response.result["completion"] : undefined
  const values = isRecord(completion) ? completion["values"] : undefined
  if (Array.isArray(values) && values.length > McpSchema.maxCompletionValues) {
    return Effect.fail(resultViolation(exchange, "invalid-result", response.bytes, `${values.length} completion values`))
  }
  return Effect.mapError(decodedAs(decodeResult, exchange)(response), (error) => Failures.withOutcome(error, "applied"))
}

/** A server that did not declare `completions` is not asked. */
const undeclared = (exchange: Exchange) =>
  Effect.fail(
    new InvalidOption({
      ...Failures.fields(exchange),
      option: "completions",
      reason: "undeclared-capability",
      outcome: "not-sent",
      retryable: false
    })
  )

export const complete = (core: Core): McpClient.Connection["complete"] => (request, options) =>
  Effect.suspend(() => {
    // Checked when the effect runs: what it sends is the request as it is then.
    const input = checked(request)
    // A refused input never runs: callPhase refuses it before any I/O.
    const valid = Either.getOrUndefined(input)
    return core.callPhase(
      "completion/complete",
      "complete",
      options,
      Either.isLeft(input) ? input.left : undefined,
      (on, exchange) =>
        declaresCompletions(on.session.capabilities)
          ? Effect.flatMap(on.session.request("completion/complete", valid, exchange), decodedResult(exchange))
          : undeclared(exchange)
    )
  })
