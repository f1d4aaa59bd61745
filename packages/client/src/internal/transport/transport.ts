/**
 * The seam every transport provides (Streamable HTTP, legacy HTTP+SSE, stdio). Transports move
 * JSON-RPC messages under the budgets and know nothing of protocol eras: what a message says
 * (its params and `_meta`, its HTTP headers, how an interrupted request is cancelled, whether
 * its answer may be resumed) is decided by the era that builds it (`internal/era.ts`), and the
 * handshake, sessions and negotiation live there too. See docs/DESIGN.md, "The transport seam".
 *
 * A transport owns its wire: framing, the byte ceilings of the responses it reads, correlation
 * of responses with requests, background messages and release. The client owns phases and
 * deadlines: it runs `request` under a deadline that interrupts it, so a transport must let
 * itself be interrupted at any point and release what it holds when it is.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { AuthorizationStep, McpConnectionError, Phase, Stage } from "../../McpConnectionError.js"
import * as McpSchema from "../../McpSchema.js"
import type { Budget } from "../../PhasePolicy.js"

/**
 * @since 0.1.0
 * @category models
 */
export type TransportKind = "streamable-http" | "sse" | "stdio"

/**
 * How a standalone stream's first answer went: open (or, unanswered in time, asked again in the
 * background), or refused by the server with the status it gave (405 says it offers none; a 200
 * that is no SSE stream is a refusal too).
 */
export type Listening = { readonly _tag: "Listening" } | { readonly _tag: "Refused"; readonly status: number }

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
  /** Phase `authorization`: the step this exchange belongs to, named in its failures. */
  readonly authorizationStep?: AuthorizationStep | undefined
}

/**
 * One message to send, as the era built it. The transport adds the JSON-RPC envelope (and, for
 * a request, the id it correlates the answer with).
 *
 * @since 0.1.0
 * @category models
 */
export interface Outgoing {
  readonly method: string
  readonly params?: Record<string, unknown> | undefined
  /** Headers of this message, for a transport with `capabilities.messageHeaders` (others ignore them). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * A request to send. Whatever the transport, an interrupted request stops being read and its
 * answer stream is closed (over Streamable HTTP that close is itself the cancellation signal of
 * 2026-07-28); `cancelNotice` adds an explicit notice on top.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request extends Outgoing {
  /**
   * The notice that announces the interruption of this request, given its id
   * (`notifications/cancelled`), sent in the background and bounded by the release timeout.
   * Absent: nothing is sent (`initialize` is never cancelled; 2026-07-28 HTTP closes the stream).
   */
  readonly cancelNotice?: ((id: McpSchema.RequestId) => Outgoing) | undefined
  /**
   * Whether an SSE answer that ends early, after events with ids, may be resumed with
   * `GET` + `Last-Event-ID` (2025-11-25). Absent: it may not.
   */
  readonly resumable?: boolean | undefined
  /**
   * A request answered only when it ends (a 2026-07-28 subscription), held on purpose: counted
   * in `Diagnostics.standing`, never as pending.
   */
  readonly standing?: boolean | undefined
}

/**
 * A decoded response, the raw bytes read for it, and the HTTP headers of the answer that
 * carried it (empty for stdio and for answers on a shared stream).
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly result: Record<string, unknown>
  readonly bytes: number
  /** The nodes of the message that brought it (docs/DESIGN.md, "Structure bounds"). */
  readonly nodes: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The `input_required` rounds before this final answer (2026-07-28), when there were any. */
  readonly rounds?: number | undefined
}

/**
 * What the server sends that is not a response: its requests and its notifications, handed over
 * by whichever stream's reader read them. The connection provides it; it does not depend on the
 * transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface Inbound {
  /**
   * Takes one request of the server's; its answer (a JSON-RPC result or error object) goes to
   * `reply`, which sends it on the transport that brought the request as a best-effort message
   * (in the transport's background, bounded by the release timeout; never fails). The reader
   * runs it before it reads on, so it must never block.
   */
  readonly request: (
    request: typeof McpSchema.JsonRpcRequest.Type,
    reply: (body: Record<string, unknown>) => Effect.Effect<void>
  ) => Effect.Effect<void>
  /**
   * Takes one notification of the server's (progress, list changes, log messages), on whatever
   * stream it came. The stream's reader runs it before it reads on, so it must never block.
   * Absent: notifications are ignored.
   */
  readonly notification?: ((notification: typeof McpSchema.JsonRpcNotification.Type) => Effect.Effect<void>) | undefined
  /**
   * A stream of the server's own messages was opened again after it ended: what the server said
   * meanwhile is lost (a tool list change, say). Must never block. Absent: nothing to do.
   */
  readonly reopened?: Effect.Effect<void> | undefined
}

/**
 * The answers of a client that declares no capabilities: `ping` gets an empty result, any other
 * request method-not-found.
 *
 * @since 0.1.0
 * @category constructors
 */
export const answerWithoutCapabilities: Inbound = {
  request: ({ id, method }, reply) =>
    reply(
      method === "ping"
        ? { jsonrpc: "2.0", id, result: {} }
        : { jsonrpc: "2.0", id, error: { code: McpSchema.ErrorCode.MethodNotFound, message: "Method not found" } }
    )
}

/**
 * Headers that belong to the session rather than to one message (`Mcp-Session-Id`,
 * `MCP-Protocol-Version` of a 2025-era session), read each time an HTTP transport sends
 * something: requests, notices, replies, resumptions and the session's end. The era that owns
 * the session writes them; the transport only sends them.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionHeaders {
  current: Readonly<Record<string, string>>
}

/**
 * What a transport can do, which the eras read instead of asking which transport it is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Capabilities {
  /**
   * Each message may carry headers of its own beside its body (Streamable HTTP): an era may
   * mirror fields there (`Outgoing.headers`), and a tool's header declarations matter.
   */
  readonly messageHeaders: boolean
  /**
   * Closing a request's answer stream tells the server the request was given up (Streamable
   * HTTP): an era of that revision sends no cancellation notice.
   */
  readonly cancelsByClosing: boolean
  /**
   * A request the server does not understand may go unanswered rather than refused (stdio: no
   * status line answers for a silent server), so a probe must bound its own wait. Read by the
   * stateless era's probe, which never runs over legacy HTTP+SSE.
   */
  readonly mayIgnoreUnknownRequests: boolean
  /**
   * The server keeps sessions it may forget (HTTP): a `SessionExpired` says the session is lost,
   * and the connection starts a new one.
   */
  readonly forgetfulSessions: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Transport {
  readonly kind: TransportKind
  readonly capabilities: Capabilities
  /**
   * Sends one request and waits for its response. A JSON-RPC error object fails with
   * `RemoteRefusal`. The request is sent at most once.
   */
  readonly request: (request: Request, exchange: Exchange) => Effect.Effect<Response, McpConnectionError>
  /** Sends one notification and waits until the server accepted it. */
  readonly notify: (notification: Outgoing, exchange: Exchange) => Effect.Effect<void, McpConnectionError>
  /**
   * Ends the remote session (Streamable HTTP: `DELETE` with the session headers), bounded by the
   * release timeout; never fails. Absent where the session ends with the transport itself (the
   * legacy GET stream, the child process).
   */
  readonly endSession?: Effect.Effect<void> | undefined
  /**
   * Opens the stream of the server's own messages (Streamable HTTP: the standalone `GET`, when the
   * server offers it): waits for its answer's headers (at most the release timeout), then reads it
   * in the background until the current scope closes; its requests are answered, frames are
   * bounded by the unsolicited ceiling. Never fails; a server that offers none is fine, and says
   * so with the status it answered (`refused`). Absent where the transport's own stream already
   * is that stream (the legacy GET stream, stdout).
   */
  readonly listen?: Effect.Effect<Listening, never, Scope.Scope> | undefined
  /** The last 64 KiB of the server's own log (stdio stderr), in process only. Absent: the server has none here. */
  readonly logTail?: Effect.Effect<string> | undefined
  /**
   * Whether the session's own stream is gone for good (legacy HTTP+SSE: its GET stream ended or
   * was given up), so that nothing more can be exchanged on it. Absent: never.
   */
  readonly ended?: (() => boolean) | undefined
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
  /** Standing requests (subscriptions), held until the connection closes or the server ends them. */
  readonly standing: number
  /** Background messages in flight (replies, cancellation notices). */
  readonly background: number
  /**
   * Frames dropped: on a shared stream, unsolicited ones over their bound, late answers and
   * banners; and the server requests that found the connection's answering queue full.
   */
  readonly droppedFrames: number
}
