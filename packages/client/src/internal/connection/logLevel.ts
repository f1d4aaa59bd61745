/**
 * The server's log level (docs/DESIGN.md, "Server log messages"): `logging/setLevel` in the 2025
 * revisions; 2026-07-28 has none, and the level goes with each later request (its era reads it).
 * Either way the connection keeps the level for every session it has.
 */
import * as Effect from "effect/Effect"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import type { Core } from "./core.js"

export const setLogLevel = (core: Core): McpClient.Connection["setLogLevel"] => (level) =>
  core.callPhase("logging/setLevel", "set-log-level", undefined, McpSchema.logLevels.includes(level) ? undefined : "level", (on, exchange) => {
    const set = on.session.era === "stateless"
      ? Effect.succeed({ value: undefined, bytes: 0 })
      : Effect.map(on.session.request("logging/setLevel", { level }, exchange), (response) => ({ value: undefined, bytes: response.bytes }))
    return Effect.tap(set, () => {
      core.logLevel.current = level
    })
  })
