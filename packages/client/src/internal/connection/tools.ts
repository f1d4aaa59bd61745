/**
 * `tools/list` after the discovery: every page under one deadline of the discovery budget; the
 * tools become the session's and are said to `toolList` when they differ (docs/DESIGN.md, "Live
 * tool lists"). A listing of an older session says nothing of the current one.
 */
import * as Effect from "effect/Effect"
import type * as McpClient from "../../McpClient.js"
import type { Exchange } from "../transport/transport.js"
import { listAllTools } from "../listing.js"
import { authorized, maxDiscoveryAuthorizations } from "./authorized.js"
import type { Core } from "./core.js"

export const listTools = (core: Core): McpClient.Connection["listTools"] => {
  const exchange: Exchange = { stage: "list-tools", phase: "discovery", budget: core.policy.discovery }
  return Effect.map(
    authorized(
      core.auth,
      "list-tools",
      maxDiscoveryAuthorizations,
      (resent) =>
        core.observed(
          "tools/list",
          exchange,
          (on) =>
            Effect.tap(
              listAllTools(on.session, core.policy, () => {}),
              (listing) => core.live.relisted(on, listing) ? core.publish(listing.tools) : Effect.void
            ),
          resent
        ),
      core.observe
    ),
    (listing) => listing.tools
  )
}
