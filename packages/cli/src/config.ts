/**
 * The `mcpServers` config file (Claude Desktop, Cursor, Claude Code's `.mcp.json`, mcporter):
 * its schema is the client's `ServersFile`, which `McpServers.layerFile` reads too; this module
 * reads it for the CLI and names every problem after `--config`.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { readFileSync } from "node:fs"
import type { InvalidOption } from "@phasebound/client/McpConnectionError"
import * as ServersFile from "@phasebound/client/ServersFile"
import { flag } from "./flags.js"
import { invalidOption } from "./record.js"

export type { AuthEntry, HttpServer, ServerEntry, ServersFile as ConfigFile, StdioServer } from "@phasebound/client/ServersFile"
export const isStdioServer = ServersFile.isStdioServer

/**
 * Reads and validates the file. Any failure (missing, unreadable, not JSON, not the schema) is
 * InvalidOption naming `--config`: the file's content and path are never echoed.
 */
export const loadConfig = (path: string): Effect.Effect<ServersFile.ServersFile, InvalidOption> =>
  Effect.gen(function*() {
    let text: string
    try {
      text = readFileSync(path, "utf8")
    } catch {
      return yield* Effect.fail(invalidOption(flag("config"), "invalid-value"))
    }
    const parsed = ServersFile.parse(text)
    return Either.isLeft(parsed) ? yield* Effect.fail(invalidOption(flag("config"), parsed.left)) : parsed.right
  })
