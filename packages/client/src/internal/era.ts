/**
 * The models of a protocol era, apart from the eras themselves so that each era's module,
 * negotiation and the discovery depend on them without depending on each other
 * (docs/DESIGN.md, "Protocol eras").
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { McpConnectionError, Stage } from "../McpConnectionError.js"
import type * as McpSchema from "../McpSchema.js"
import type { Exchange, Response, SessionHeaders, Transport } from "./transport/transport.js"
import type { ListenHooks, Listener } from "./listen.js"

/**
 * @since 0.1.0
 * @category models
 */
export type EraName = "handshake" | "stateless"

/**
 * What an era gets from the discovery that runs it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenContext {
  /** The revisions of this era the client may speak, newest first (never empty). */
  readonly revisions: ReadonlyArray<McpSchema.Revision>
  readonly clientInfo: McpSchema.Implementation
  /** The exchange of a discovery stage; the stage is also what a deadline would report. */
  readonly exchange: (stage: Stage) => Exchange
  /** Records the cost of a discovery stage (the bytes of its answer; the time since the last). */
  readonly record: (stage: Stage, bytes: number, failure?: McpConnectionError) => void
  /** The session headers the transport sends with everything (HTTP). */
  readonly sessionHeaders: SessionHeaders
  /** Most `input_required` rounds one request may take (the policy's `maxInputRounds`). */
  readonly maxInputRounds: number
  /** Bound of each frame of a stream that answers no request (a 2026-07-28 subscription). */
  readonly unsolicitedMaxBytes: number
  /**
   * The log level the connection asked for, read at each request: the stateless era sends it
   * in every request's `_meta` (docs/DESIGN.md, "Server log messages").
   */
  readonly logLevel: () => McpSchema.LogLevel | undefined
  /** The client capabilities the caller's handlers declare. */
  readonly capabilities: Readonly<Record<string, unknown>>
  /**
   * What a 2026-07-28 subscription (`subscriptions/listen`) hears of its acknowledgements and
   * tells of its gaps (`internal/listen.ts`, docs/DESIGN.md, "Subscriptions").
   */
  readonly listening: ListenHooks
  /** Answers one input request of an `input_required` round with the caller's handlers. */
  readonly fulfil: (
    method: string,
    params: Readonly<Record<string, unknown>> | undefined,
    exchange: Exchange
  ) => Effect.Effect<Readonly<Record<string, unknown>>, McpConnectionError>
}

/**
 * A started session: who the server is, and how requests of this era are sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  readonly era: EraName
  readonly protocolVersion: McpSchema.Revision
  /** Who the server says it is (optional in 2026-07-28). */
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly capabilities: Readonly<Record<string, unknown>>
  readonly instructions: string | undefined
  /**
   * Sends one request of this era and waits for its final response. `tool` is the listed tool a
   * `tools/call` calls, when known (its declarations may shape the request). Never re-sends
   * what failed; a round the server asked for (`input_required`) is a new request, not a
   * re-send.
   */
  readonly request: (
    method: string,
    params: Record<string, unknown> | undefined,
    exchange: Exchange,
    tool?: McpSchema.Tool
  ) => Effect.Effect<Response, McpConnectionError>
  /** Whether a listed tool can be used in this session (left out of the listing if not). */
  readonly admits: (tool: McpSchema.Tool) => boolean
  /**
   * The session's `subscriptions/listen` (2026-07-28, when the server announces anything), which
   * resource subscriptions are made through; absent in the 2025 era (`resources/subscribe`).
   */
  readonly listener?: Listener | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Era {
  readonly name: EraName
  /** The revisions of this era, newest first. */
  readonly revisions: ReadonlyArray<McpSchema.Revision>
  /**
   * Starts a session over `transport`: the era's own discovery steps (before `tools/list`).
   * What it opens belongs to the scope it runs in (the connection's, once negotiation chose it).
   */
  readonly open: (transport: Transport, context: OpenContext) => Effect.Effect<Session, McpConnectionError, Scope.Scope>
}
