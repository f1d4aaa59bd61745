/**
 * What the client answers when a server asks it something: elicitation (ask the user), sampling
 * (ask a model), roots (which directories). Giving a handler declares the matching client
 * capability; a server may then ask, in either era: with server-to-client requests on its
 * streams (2024-11-05 through 2025-11-25), or with `input_required` rounds of a call
 * (2026-07-28). See docs/DESIGN.md, "Client capabilities".
 *
 * A handler runs under the budget of what it serves: inside the call's one deadline for an
 * `input_required` round, within the call-phase timeout for a server request on a stream. Its
 * failures and timeouts are typed (`HandlerFailed`); what it returned or failed with never
 * reaches a public field.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"

/**
 * A request's or a result's fields, as the protocol defines them for each method
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`).
 *
 * @since 0.1.0
 * @category models
 */
export type Fields = Readonly<Record<string, unknown>>

/**
 * A handler: the server's request params in, the result to send back out. A failure (any `E`)
 * is reported as `HandlerFailed`, its value kept in process only.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler<E = unknown> = (params: Fields) => Effect.Effect<Fields, E>

/**
 * @since 0.1.0
 * @category models
 */
export interface Handlers {
  /**
   * `elicitation/create`: the result is `{ action: "accept" | "decline" | "cancel", content? }`.
   * For an accepted form, fields the user left out get the defaults of the requested schema.
   */
  readonly elicitation?: Handler | undefined
  /** `sampling/createMessage`: the result is the model's message. */
  readonly sampling?: Handler | undefined
  /** `roots/list`: the result is `{ roots: [{ uri, name? }] }`. */
  readonly roots?: Handler | undefined
}

/**
 * The capability each handler declares.
 *
 * @since 0.1.0
 * @category models
 */
export type Capability = "elicitation" | "sampling" | "roots"

/**
 * The server-to-client methods and the capability each needs.
 *
 * @since 0.1.0
 * @category models
 */
export const capabilityOf: Readonly<Record<string, Capability>> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots"
}

/**
 * The client capabilities the handlers declare (`{}` for each one given).
 *
 * @since 0.1.0
 * @category constructors
 */
export const capabilities = (handlers: Handlers | undefined): Record<string, unknown> => {
  const declared: Record<string, unknown> = {}
  if (handlers?.elicitation !== undefined) declared["elicitation"] = {}
  if (handlers?.sampling !== undefined) declared["sampling"] = {}
  if (handlers?.roots !== undefined) declared["roots"] = {}
  return declared
}
