/**
 * The JSON answer of an OAuth endpoint that is POSTed to (the token endpoint, `token.ts`; the
 * registration endpoint, `registration.ts`): read whole under the exchange's byte ceiling,
 * decoded as UTF-8, parsed as JSON.
 *
 * For exchanges of the `authorization` phase, where no MCP request is on the way: every
 * failure is `not-sent`. A body over the ceiling is `ByteCeilingExceeded` (`observedBytes` =
 * bytes read, the crossing chunk included); a body that breaks off is a `connection-closed`
 * `TransportFailure`; a body that is not UTF-8 or not JSON is a `ProtocolViolation`
 * (`invalid-utf8`, `invalid-json`); one past the structure bound is `LimitExceeded`. No cause is kept: a `ResponseError` holds the request (its
 * form, its headers), and a parser's message quotes the body (a token or a client secret,
 * maybe).
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ByteCeilingExceeded, LimitExceeded, ProtocolViolation, TransportFailure } from "../../McpConnectionError.js"
import type { Exchange } from "../transport/transport.js"
import { readBody } from "../bodyReader.js"
import { decodeUtf8 } from "../byteCount.js"
import * as Failures from "../failures.js"
import * as JsonText from "../jsonText.js"
import { structureExceeded, structureOf } from "../messages.js"

/**
 * An authority's text as JSON, under the structure bound like every peer's (docs/DESIGN.md,
 * "Structure bounds"): its value, `"invalid-json"` (the parser's message quotes the body, a token
 * maybe: it is not kept), or the limit it passes (`not-sent`: no MCP request is on the way).
 */
export const parseAuthorityJson = (
  exchange: Exchange,
  text: string,
  details: { readonly observedBytes: number; readonly status: number }
): Either.Either<unknown, "invalid-json" | LimitExceeded> => {
  const parsed = JsonText.parse(text, structureOf(exchange))
  switch (parsed._tag) {
    case "Parsed":
      return Either.right(parsed.value)
    case "Invalid":
      return Either.left("invalid-json")
    default:
      return Either.left(structureExceeded(exchange, parsed._tag === "TooDeep" ? "maxDepth" : "maxNodes", details, "not-sent"))
  }
}

/** A parsed answer and the bytes it took. */
export interface JsonAnswer {
  readonly json: unknown
  readonly observedBytes: number
}

/**
 * Reads `response`'s body as JSON under `exchange.budget.maxBytes`. `repeatable` says whether
 * the request may be sent again, and so whether a body that broke off is retryable.
 */
export const readJsonAnswer = (
  response: HttpClientResponse.HttpClientResponse,
  exchange: Exchange,
  repeatable: boolean
): Effect.Effect<JsonAnswer, ByteCeilingExceeded | TransportFailure | ProtocolViolation | LimitExceeded> => {
  const base = Failures.fields(exchange)
  const status = response.status
  const closed = () => new TransportFailure({ ...base, reason: "connection-closed", outcome: "not-sent", retryable: repeatable })
  const violation = (reason: "invalid-utf8" | "invalid-json", observedBytes: number) =>
    new ProtocolViolation({ ...base, reason, observedBytes, status, outcome: "not-sent", retryable: false })
  return readBody(response, exchange.budget.maxBytes).pipe(
    Effect.catchTags({
      FrameTooLarge: (tooLarge) =>
        Effect.fail(
          new ByteCeilingExceeded({
            ...base,
            observedBytes: tooLarge.observedBytes,
            status,
            outcome: "not-sent",
            retryable: false
          })
        ),
      // Neither is kept as a cause: a ResponseError holds the request.
      BodyReadFailed: () => Effect.fail(closed()),
      ResponseError: () => Effect.fail(closed())
    }),
    Effect.flatMap((bytes): Effect.Effect<JsonAnswer, ProtocolViolation | LimitExceeded> => {
      const observedBytes = bytes.length
      const text = decodeUtf8(bytes)
      if (Either.isLeft(text)) return Effect.fail(violation("invalid-utf8", observedBytes))
      return Either.match(parseAuthorityJson(exchange, text.right, { observedBytes, status }), {
        onLeft: (refused) => Effect.fail(refused === "invalid-json" ? violation("invalid-json", observedBytes) : refused),
        onRight: (json) => Effect.succeed({ json, observedBytes })
      })
    })
  )
}
