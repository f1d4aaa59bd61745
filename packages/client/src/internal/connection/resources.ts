/**
 * Resources: `resources/list` and `resources/templates/list` (every page under one deadline of
 * the call budget), and `resources/read` of one URI (sent once, never retried); each through the
 * response cache (docs/DESIGN.md, "Response cache").
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { hintOf } from "../listing.js"
import { cached, isMode } from "./cached.js"
import { type Core, decodedAs } from "./core.js"
import { listOf } from "./pages.js"

const decodeReadResource = Schema.decodeUnknownEither(McpSchema.ReadResourceResult)

export interface Resources {
  readonly listResources: McpClient.Connection["listResources"]
  readonly listResourceTemplates: McpClient.Connection["listResourceTemplates"]
  readonly readResource: McpClient.Connection["readResource"]
}

export const make = (core: Core): Resources => ({
  listResources: listOf(core, "resources/list", "list-resources", "resources", McpSchema.Resource, "resources"),
  listResourceTemplates: listOf(
    core,
    "resources/templates/list",
    "list-resource-templates",
    "resourceTemplates",
    McpSchema.ResourceTemplate,
    "templates"
  ),
  readResource: (uri, options) =>
    core.callPhase(
      "resources/read",
      "read-resource",
      options,
      typeof uri !== "string" || uri.length === 0 ? "uri" : !isMode(options?.cache) ? "cache" : undefined,
      (on, exchange) =>
        cached(
          core.cache,
          on,
          "read",
          uri,
          options?.cache ?? "use",
          Effect.flatMap(on.session.request("resources/read", { uri }, exchange), (response) =>
            Effect.map(decodedAs(decodeReadResource, exchange)(response), ({ bytes, value }) => ({
              value,
              bytes,
              hint: hintOf(response.result),
              rounds: response.rounds
            })))
        )
    )
})
