/**
 * The handshake era (revisions 2024-11-05 through 2025-11-25), over any transport:
 *
 * - discovery starts with `initialize` (never cancelled) and `notifications/initialized`;
 * - a Streamable HTTP server may name the session (`Mcp-Session-Id` on the `initialize`
 *   answer): it is echoed with `MCP-Protocol-Version` on everything after, the session is
 *   ended with `DELETE` when the connection closes, and a 404 to a request that carried it is
 *   `SessionExpired` (the request was not applied; nothing is sent on that session again);
 * - an interrupted request is announced with `notifications/cancelled`, in the background;
 * - an SSE answer that ends early after events with ids may be resumed (2025-11-25).
 *
 * See docs/DESIGN.md, "Protocol eras".
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { McpConnectionError } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type { Era, Session } from "./era.js"
import type { Exchange, Outgoing, Request, Response } from "./transport/transport.js"
import * as Failures from "./failures.js"

const decodeInitialize = Schema.decodeUnknown(McpSchema.InitializeResult)

const cancelNotice = (id: McpSchema.RequestId): Outgoing => ({
  method: "notifications/cancelled",
  params: { requestId: id, reason: "interrupted" }
})

/** A 404 to a message that carried the session id: the server no longer knows the session. */
const isExpiry = (error: McpConnectionError) => error.status === 404

export const era: Era = {
  name: "handshake",
  revisions: McpSchema.handshakeRevisions,
  open: (transport, context) =>
    Effect.gen(function*() {
      const headers = context.sessionHeaders
      let sessionId: string | undefined
      let expired = false

      /** Sends one message of the session, mapping a 404 on a known session to its expiry. */
      const send = <A>(exchange: Exchange, effect: Effect.Effect<A, McpConnectionError>) => {
        if (expired) return Effect.fail(Failures.sessionExpired(exchange, "not-sent"))
        if (sessionId === undefined) return effect
        return Effect.catchIf(effect, isExpiry, () => {
          expired = true
          return Effect.fail(Failures.sessionExpired(exchange, "not-applied", 404))
        })
      }
      const request = (method: string, params: Record<string, unknown> | undefined, exchange: Exchange) => {
        const message: Request = { method, params, cancelNotice, resumable: true }
        return send(exchange, transport.request(message, exchange))
      }

      const initializeExchange = context.exchange("initialize")
      const initialized: Response = yield* transport.request({
        method: "initialize",
        params: { protocolVersion: context.revisions[0], capabilities: context.capabilities, clientInfo: context.clientInfo },
        // `initialize` is never cancelled.
        resumable: true
      }, initializeExchange)
      context.record("initialize", initialized.bytes)
      const header = initialized.headers["mcp-session-id"]
      if (header !== undefined && header.length > 0) {
        sessionId = header
        headers.current = { "mcp-session-id": sessionId }
      }
      // Ends the session on the server when the connection closes (also when this discovery
      // fails from here on), unless it is already gone.
      yield* Effect.flatMap(Effect.scope, (scope) =>
        Scope.addFinalizer(scope, Effect.suspend(() => (sessionId === undefined || expired ? Effect.void : transport.endSession ?? Effect.void))))
      const result = yield* decodeInitialize(initialized.result).pipe(
        Effect.mapError((cause) =>
          Failures.protocol(initializeExchange, "invalid-result", { observedBytes: initialized.bytes }, cause)
        )
      )
      const revision = context.revisions.find((candidate) => candidate === result.protocolVersion)
      if (revision === undefined) {
        return yield* Effect.fail(
          Failures.protocol(initializeExchange, "unsupported-protocol-version", { observedBytes: initialized.bytes })
        )
      }
      headers.current = { ...headers.current, "mcp-protocol-version": revision }

      const initializedExchange = context.exchange("initialized")
      const notified = send(initializedExchange, transport.notify({ method: "notifications/initialized" }, initializedExchange))
      // The server's own messages may come on a stream of their own (Streamable HTTP's GET), asked
      // for beside the notification: both answered before the first listing, so that no change
      // the server announces after that listing's snapshot can be missed. A server that refused
      // the stream for any reason but 405 (it offers none) is asked once more, now that it has
      // the notification (docs/DESIGN.md, "Live tool lists").
      const listen = transport.listen
      if (listen === undefined) yield* notified
      else {
        const [, first] = yield* Effect.all([notified, listen], { concurrency: 2 })
        if (first._tag === "Refused" && first.status !== 405) yield* listen
      }
      context.record("initialized", 0)

      return {
        era: "handshake",
        protocolVersion: revision,
        serverInfo: result.serverInfo,
        capabilities: result.capabilities,
        instructions: result.instructions,
        request,
        admits: () => true
      } satisfies Session
    })
}
