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
  /**
   * URL-mode `elicitation/create` (docs/DESIGN.md, "Client capabilities", URL mode): the server
   * asks the user to open a URL out of band. Given, it declares the `url` mode of the
   * `elicitation` capability (beside `form` when `elicitation` is given too). The handler gets
   * only a URL phasebound checked (see `UrlElicitation`) and must ask the user's consent before
   * opening it; it answers `accept` (the user agreed to open it, not that the interaction is
   * done), `decline` or `cancel`.
   */
  readonly elicitationUrl?: UrlHandler | undefined
}

/**
 * A URL-mode elicitation, checked before it is handed on: `url` is an absolute `https` URL (or
 * `http` to a loopback host), without userinfo, control, invisible or white-space characters,
 * at most 8,192 characters, normalized as a browser would open it. Show the whole URL and
 * `host` (prominently: a look-alike subdomain is the common trick) before the user consents;
 * warn when `punycode` is true. Never fetch it beforehand.
 *
 * This is the one place phasebound hands a server's URL to the caller: it is never in an
 * error's public fields, a span or an observation.
 *
 * @since 0.1.0
 * @category models
 */
export interface UrlElicitation {
  readonly mode: "url"
  /** Why the server asks, as it wrote it. */
  readonly message: string
  /** The URL to open, normalized. */
  readonly url: string
  /** The URL's host name (punycode as the URL has it). */
  readonly host: string
  /** Whether a label of the host is punycode (`xn--`): the name may imitate another. */
  readonly punycode: boolean
  /**
   * The server's id for this elicitation (2025-11-25), by which it says it is complete
   * (`notifications/elicitation/complete`); `undefined` in 2026-07-28, which has no such
   * notification.
   */
  readonly elicitationId: string | undefined
}

/**
 * The user's answer to a URL elicitation. `accept` says the user agreed to open the URL; the
 * interaction itself happens out of band.
 *
 * @since 0.1.0
 * @category models
 */
export interface UrlElicitationResult {
  readonly action: "accept" | "decline" | "cancel"
}

/**
 * The handler of URL-mode elicitations. A failure (any `E`), or an answer that is not one of
 * the three actions, is reported as `HandlerFailed` (or a generic error reply).
 *
 * @since 0.1.0
 * @category models
 */
export type UrlHandler<E = unknown> = (request: UrlElicitation) => Effect.Effect<UrlElicitationResult, E>

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
 * The client capabilities the handlers declare (`{}` for each one given). `elicitation` names
 * the modes its handlers support: `{}` (form only, as the spec reads an empty object) for
 * `elicitation` alone, `{ url: {} }` for `elicitationUrl` alone, `{ form: {}, url: {} }` for
 * both.
 *
 * @since 0.1.0
 * @category constructors
 */
export const capabilities = (handlers: Handlers | undefined): Record<string, unknown> => {
  const declared: Record<string, unknown> = {}
  const form = handlers?.elicitation !== undefined
  const url = handlers?.elicitationUrl !== undefined
  if (form || url) declared["elicitation"] = url ? { ...(form ? { form: {} } : {}), url: {} } : {}
  if (handlers?.sampling !== undefined) declared["sampling"] = {}
  if (handlers?.roots !== undefined) declared["roots"] = {}
  return declared
}
