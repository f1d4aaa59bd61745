/**
 * `tools/list` after the discovery: every page under one deadline of the discovery budget,
 * through the response cache (docs/DESIGN.md, "Response cache"); the tools become the session's
 * and are said to `toolList` when they differ (docs/DESIGN.md, "Live tool lists"). A listing of
 * an older session says nothing of the current one.
 */
import * as Effect from "effect/Effect"
import type * as McpClient from "../../McpClient.js"
import type { Exchange } from "../transport/transport.js"
import { listAllTools } from "../listing.js"
import type { Mode } from "../responseCache.js"
import { authorized, maxDiscoveryAuthorizations } from "./authorized.js"
import { cached, isMode } from "./cached.js"
import { type Core, refusedOption } from "./core.js"

/** `tools/list` in a cache mode (the relisting after a change uses `refresh`). */
export const listToolsIn = (core: Core, mode: Mode): McpClient.Connection["listTools"] => {
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
              cached(
                core.cache,
                on,
                "tools",
                undefined,
                mode,
                Effect.map(listAllTools(on.session, core.policy, () => {}), (listing) => ({
                  value: listing,
                  bytes: listing.bytes,
                  hint: listing.cacheable
                }))
              ),
              ({ value: listing }) => core.live.relisted(on, listing) ? core.publish(listing.tools) : Effect.void
            ),
          resent
        ),
      core.observe
    ),
    ({ value: listing }) => listing.tools
  )
}

/**
 * `listTools` lists again (mode `refresh`): the connection already holds the tools of its last
 * listing (`tools`), and an explicit listing is a request to ask the server (docs/DESIGN.md,
 * "Response cache"). Its answer is kept for the connections that share the cache.
 */
export const listTools = (core: Core): McpClient.Connection["listTools"] => listToolsIn(core, "refresh")

/** `listTools` with a per-call cache mode, refused before any I/O when it is not one. */
export const listToolsWith = (core: Core): McpClient.Connection["listToolsWith"] => {
  const modes = { use: listToolsIn(core, "use"), refresh: listToolsIn(core, "refresh"), bypass: listToolsIn(core, "bypass") }
  return (options) =>
    isMode(options?.cache)
      ? modes[options?.cache ?? "use"]
      : refusedOption({ stage: "list-tools", phase: "discovery", budget: core.policy.discovery }, "cache")
}
