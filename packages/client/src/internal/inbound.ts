/**
 * The client's side of what a server asks (docs/DESIGN.md, "Client capabilities"): the
 * capabilities the caller's handlers declare, the JSON-RPC answer to a server-to-client request
 * on a stream (handshake era), and the answer to one input request of an `input_required`
 * round (stateless era). Both go through the same handlers. A URL-mode elicitation goes to the
 * URL handler only once its URL passed the checks of `internal/elicitationUrl.ts`.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  type Capability,
  capabilities,
  capabilityOf,
  type Fields,
  type Handlers,
  type UrlElicitationResult
} from "../ClientHandlers.js"
import { HandlerFailed, type McpConnectionError, ProtocolViolation } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import { clientExtensions } from "../McpSkills.js"
import type { Exchange } from "./transport/transport.js"
import { urlElicitationOf } from "./elicitationUrl.js"
import * as Failures from "./failures.js"
import * as UrlElicitations from "./urlElicitations.js"

export interface Responder {
  /** The client capabilities to declare (in `initialize`, or in every request's `_meta`). */
  readonly capabilities: Record<string, unknown>
  /** The answer to a server request arriving on a stream, worked out within `answerTimeoutMs` (never a failure: an error reply instead). */
  readonly answer: (request: typeof McpSchema.JsonRpcRequest.Type) => Effect.Effect<Record<string, unknown>>
  /**
   * Answers one input request of an `input_required` round, under the caller's deadline. A
   * method without a handler is the server asking for what was never declared.
   */
  readonly fulfil: (method: string, params: Fields | undefined, exchange: Exchange) => Effect.Effect<Fields, McpConnectionError>
  /** The URL elicitations the server may say are complete (`internal/urlElicitations.ts`). */
  readonly elicitations: UrlElicitations.UrlElicitations
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * For an accepted form elicitation, the requested schema's defaults for the fields the answer
 * left out (SEP-1034).
 */
const withDefaults = (params: Fields, result: Fields): Fields => {
  if (result["action"] !== "accept") return result
  const schema = params["requestedSchema"]
  const properties = isRecord(schema) ? schema["properties"] : undefined
  if (!isRecord(properties)) return result
  const content: Record<string, unknown> = isRecord(result["content"]) ? { ...result["content"] } : {}
  for (const [name, property] of Object.entries(properties)) {
    if (!(name in content) && isRecord(property) && "default" in property) content[name] = property["default"]
  }
  return { ...result, content }
}

const handlerOf = (handlers: Handlers | undefined, capability: Capability) => handlers?.[capability]

/** The three answers a URL elicitation may have; anything else is the handler's failure. */
const urlActions: ReadonlySet<unknown> = new Set(["accept", "decline", "cancel"])

/**
 * What becomes of one server request: no handler for its method, an elicitation mode that was
 * not declared, a URL elicitation that cannot be handed on, or the handler's answer to come.
 */
type Handled =
  | { readonly _tag: "NoHandler" }
  | { readonly _tag: "UndeclaredMode" }
  | { readonly _tag: "Invalid" }
  | { readonly _tag: "Run"; readonly capability: Capability; readonly result: Effect.Effect<Fields, unknown> }

const noHandler: Handled = { _tag: "NoHandler" }

export const makeResponder = (handlers: Handlers | undefined, answerTimeoutMs: number): Responder => {
  const elicitations = UrlElicitations.make()
  const urlHandler = handlers?.elicitationUrl

  /**
   * A URL-mode elicitation (docs/DESIGN.md, "Client capabilities", URL mode): checked before the
   * handler sees it; its id expected before the handler runs (the server may say it is complete
   * while the user is still being asked). `onStream`: a 2025-11-25 request, which must have an id.
   */
  const url = (params: Fields, onStream: boolean): Handled => {
    if (urlHandler === undefined) return handlers?.elicitation === undefined ? noHandler : { _tag: "UndeclaredMode" }
    const request = urlElicitationOf(params, onStream)
    if (request === undefined) return { _tag: "Invalid" }
    return {
      _tag: "Run",
      capability: "elicitation",
      result: Effect.suspend(() => {
        if (request.elicitationId !== undefined) elicitations.expect(request.elicitationId)
        return Effect.flatMap(urlHandler(request), (answer) =>
          urlActions.has((answer as Partial<UrlElicitationResult> | undefined)?.action)
            ? Effect.succeed<Fields>({ action: answer.action })
            : Effect.fail("not an elicitation result"))
      })
    }
  }

  /** What becomes of `method` (see `Handled`). */
  const run = (method: string, params: Fields, onStream: boolean): Handled => {
    if (method === "elicitation/create") {
      const mode = params["mode"]
      if (mode === "url") return url(params, onStream)
      if (mode !== undefined && mode !== "form") return handlers?.elicitation === undefined && urlHandler === undefined ? noHandler : { _tag: "Invalid" }
      // A form (the mode is optional for it): the form handler, when there is one.
      if (handlers?.elicitation === undefined) return urlHandler === undefined ? noHandler : { _tag: "UndeclaredMode" }
    }
    const capability = capabilityOf[method]
    const handler = capability === undefined ? undefined : handlerOf(handlers, capability)
    if (capability === undefined || handler === undefined) return noHandler
    return {
      _tag: "Run",
      capability,
      result: Effect.map(
        Effect.suspend(() => handler(params)),
        (result) => (method === "elicitation/create" ? withDefaults(params, result) : result)
      )
    }
  }

  const answer: Responder["answer"] = ({ id, method, params }) => {
    if (method === "ping") return Effect.succeed({ jsonrpc: "2.0", id, result: {} })
    const handled = run(method, params ?? {}, true)
    if (handled._tag === "NoHandler") {
      return Effect.succeed({
        jsonrpc: "2.0",
        id,
        error: { code: McpSchema.ErrorCode.MethodNotFound, message: "Method not found" }
      })
    }
    // A mode the client did not declare, or a URL it will not hand on: invalid params, as the
    // spec has a client answer an undeclared mode.
    if (handled._tag !== "Run") {
      return Effect.succeed({
        jsonrpc: "2.0",
        id,
        error: { code: McpSchema.ErrorCode.InvalidParams, message: "Invalid params" }
      })
    }
    // The handler's own failure (or defect, or throw) stays here: the server only learns that
    // the client could not answer.
    return handled.result.pipe(
      Effect.timeoutFail({ duration: Duration.millis(answerTimeoutMs), onTimeout: () => "timeout" as const }),
      Effect.matchCause({
        onSuccess: (result): Record<string, unknown> => ({ jsonrpc: "2.0", id, result }),
        onFailure: () => ({
          jsonrpc: "2.0",
          id,
          error: { code: McpSchema.ErrorCode.InternalError, message: "The client could not answer" }
        })
      })
    )
  }

  const fulfil: Responder["fulfil"] = (method, params, exchange) => {
    const handled = run(method, params ?? {}, false)
    if (handled._tag === "Invalid") {
      return Effect.fail(
        new ProtocolViolation({
          ...Failures.fields(exchange),
          reason: "invalid-elicitation",
          capability: "elicitation",
          outcome: "not-applied",
          retryable: false
        })
      )
    }
    if (handled._tag !== "Run") {
      const capability = capabilityOf[method]
      return Effect.fail(
        new ProtocolViolation({
          ...Failures.fields(exchange),
          reason: capability === undefined ? "invalid-result" : "undeclared-capability",
          capability,
          outcome: "not-applied",
          retryable: false
        })
      )
    }
    // A failure, a defect or a throw of the handler is its failure, kept in process as the cause
    // (what the handler failed with; for a defect, the whole Cause). An interruption stays an
    // interruption (the call's deadline, or the caller).
    return Effect.catchAllCause(handled.result, (cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.fail(
          new HandlerFailed({
            ...Failures.fields(exchange),
            capability: handled.capability,
            outcome: "not-applied",
            retryable: false
          }, Option.getOrElse(Cause.failureOption(cause), () => cause))
        ))
  }

  // The extensions the client supports are declared beside the handlers' capabilities (docs/DESIGN.md, "Extensions").
  return { capabilities: { ...capabilities(handlers), extensions: clientExtensions }, answer, fulfil, elicitations }
}
