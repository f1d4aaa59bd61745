/**
 * Protocol eras: how messages are built and how a session starts, apart from the transports
 * that move them (docs/DESIGN.md, "Protocol eras").
 *
 * - The **handshake era** (2024-11-05 through 2025-11-25): `initialize`, then
 *   `notifications/initialized`; a Streamable HTTP server may give the session an
 *   `Mcp-Session-Id`, echoed on everything after and ended with `DELETE`; an interrupted
 *   request is announced with `notifications/cancelled`; an SSE answer may be resumed.
 * - The **stateless era** (2026-07-28): no handshake and no session; every request carries its
 *   revision and the client's identity and capabilities in `_meta`.
 *
 * An era opens a `Session` over a transport. The connection then sends every request through
 * the session, which adds what the era requires and reads what the era defines (a 404 for a
 * known session is `SessionExpired`). Negotiation tries (era, transport) candidates in order
 * under one discovery deadline (`McpClient.connect`).
 *
 * @since 0.1.0
 */
import type { Era } from "./internal/era.js"
import * as handshake from "./internal/handshakeEra.js"
import * as stateless from "./internal/statelessEra.js"

export type {
  /**
   * @since 0.1.0
   * @category models
   */
  Era,
  /**
   * @since 0.1.0
   * @category models
   */
  EraName,
  /**
   * @since 0.1.0
   * @category models
   */
  OpenContext,
  /**
   * @since 0.1.0
   * @category models
   */
  Session
} from "./internal/era.js"

/**
 * The handshake era: revisions 2024-11-05 through 2025-11-25.
 *
 * @since 0.1.0
 * @category eras
 */
export const handshakeEra: Era = handshake.era

/**
 * The stateless era: revision 2026-07-28.
 *
 * @since 0.1.0
 * @category eras
 */
export const statelessEra: Era = stateless.era
