/**
 * Whether the server is there, under the ping budget: `ping`, or `server/discover` in the
 * 2026-07-28 revision (which removed `ping`; every such server answers it). The round trip in
 * milliseconds.
 */
import * as Effect from "effect/Effect"
import type * as McpClient from "../../McpClient.js"
import type { Exchange } from "../transport/transport.js"
import { authorized } from "./authorized.js"
import type { Core } from "./core.js"

export const ping = (core: Core): McpClient.Connection["ping"] => {
  const exchange: Exchange = { stage: "ping", phase: "call", budget: core.policy.ping }
  return Effect.clockWith((clock) => {
    const started = clock.unsafeCurrentTimeMillis()
    return authorized(
      core.auth,
      "ping",
      1,
      (resent) =>
        core.observed("ping", exchange, (on) => on.session.request(on.session.era === "stateless" ? "server/discover" : "ping", undefined, exchange), resent),
      core.observe
    ).pipe(Effect.map(() => clock.unsafeCurrentTimeMillis() - started))
  })
}
