/**
 * The seam every transport provides (Streamable HTTP, legacy HTTP+SSE, stdio). `McpClient`
 * depends on this interface only.
 *
 * A transport owns its wire: framing, byte ceilings of the responses it reads, correlation of
 * responses with requests, cancellation notices and release. The client owns phases and
 * deadlines: it runs `request` under a deadline that interrupts it, so a transport must let itself be
 * interrupted at any point and release what it holds when it is.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { McpConnectionError, Phase, Stage } from "./McpConnectionError.js"
import type { Budget } from "./PhasePolicy.js"

/**
 * @since 0.1.0
 * @category models
 */
export type TransportKind = "streamable-http" | "sse" | "stdio"

/**
 * What a transport needs to know about one exchange to bound it and to describe its failures.
 *
 * @since 0.1.0
 * @category models
 */
export interface Exchange {
  readonly stage: Stage
  readonly phase: Phase
  /** The budget of the phase (or the per-call override): its `maxBytes` bounds the response. */
  readonly budget: Budget
  /**
   * Whether an interrupted request is announced with `notifications/cancelled`. Never for
   * `initialize`.
   */
  readonly cancellable: boolean
}

/**
 * A decoded response and the raw bytes read for it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly result: Record<string, unknown>
  readonly bytes: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Transport {
  readonly kind: TransportKind
  /**
   * Sends one request and waits for its response. A JSON-RPC error object fails with
   * `RemoteRefusal`. The request is sent at most once.
   */
  readonly request: (
    method: string,
    params: Record<string, unknown> | undefined,
    exchange: Exchange
  ) => Effect.Effect<Response, McpConnectionError>
  /** Sends one notification. */
  readonly notify: (
    method: string,
    params: Record<string, unknown> | undefined,
    exchange: Exchange
  ) => Effect.Effect<void, McpConnectionError>
  /** Called once `initialize` has agreed on a revision (Streamable HTTP echoes it in a header). */
  readonly setProtocolVersion: (revision: string) => Effect.Effect<void>
  /** The last 64 KiB of the server's own log (stdio stderr), in process only; "" elsewhere. */
  readonly logTail?: Effect.Effect<string> | undefined
  /** What the transport still holds: requests awaiting a response, background fibers. */
  readonly diagnostics: Effect.Effect<Diagnostics>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Diagnostics {
  /** Requests awaiting a response. */
  readonly pending: number
  /** Background messages in flight (replies, cancellation notices). */
  readonly background: number
  /** Frames dropped on a shared stream (unsolicited over their bound, late answers, banners). */
  readonly droppedFrames: number
}
