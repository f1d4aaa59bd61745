/**
 * The `mcpServers` config file that Claude Desktop, Cursor, Claude Code (`.mcp.json`) and
 * mcporter users already have, validated strictly with effect Schema:
 *
 * ```json
 * { "mcpServers": {
 *     "remote": { "url": "https://example.com/mcp", "type": "http", "headers": { "Authorization": "Bearer ${TOKEN}" } },
 *     "oauth": { "url": "https://example.com/mcp", "auth": { "grant": "client_credentials", "clientId": "svc", "clientSecret": "${SVC_SECRET}" } },
 *     "local": { "command": "npx", "args": ["-y", "some-server"], "env": { "API_KEY": "${API_KEY}" }, "cwd": "/srv" } } }
 * ```
 *
 * A server entry is either HTTP (`url`, optional `type`, `headers`, `auth`) or stdio (`command`,
 * optional `type: "stdio"`, `args`, `env`, `cwd`); an unknown field in an entry (or in its
 * `auth`) is refused. Other top-level keys are ignored: desktop apps keep their own settings
 * beside `mcpServers`.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import type { InvalidOption } from "@phasebound/client/McpConnectionError"
import { invalidOption } from "./record.js"

const StringRecord = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * OAuth settings of an HTTP entry (each one overridden by its `--auth-*` flag): see auth.ts.
 * `clientSecret` may use `${VAR}`; a relative `privateKeyFile` is read from the config file's
 * directory.
 */
export const AuthEntry = Schema.Struct({
  grant: Schema.optional(Schema.Literal("authorization_code", "client_credentials")),
  clientId: Schema.optional(Schema.NonEmptyString),
  clientSecret: Schema.optional(Schema.NonEmptyString),
  clientMetadataUrl: Schema.optional(Schema.NonEmptyString),
  privateKeyFile: Schema.optional(Schema.NonEmptyString),
  privateKeyAlg: Schema.optional(Schema.Literal("RS256", "ES256")),
  scope: Schema.optional(Schema.NonEmptyString),
  redirectPort: Schema.optional(Schema.Int.pipe(Schema.between(0, 65535)))
})
export type AuthEntry = typeof AuthEntry.Type

export const HttpServer = Schema.Struct({
  url: Schema.NonEmptyString,
  // "http" is Claude Code's name for Streamable HTTP.
  type: Schema.optional(Schema.Literal("http", "streamable-http", "streamableHttp", "sse")),
  headers: Schema.optional(StringRecord),
  auth: Schema.optional(AuthEntry)
})
export type HttpServer = typeof HttpServer.Type

export const StdioServer = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.NonEmptyString,
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(StringRecord),
  cwd: Schema.optional(Schema.String)
})
export type StdioServer = typeof StdioServer.Type

export const ServerEntry = Schema.Union(HttpServer, StdioServer)
export type ServerEntry = typeof ServerEntry.Type

export const ConfigFile = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: ServerEntry })
})
export type ConfigFile = typeof ConfigFile.Type

// Excess fields are errors inside server entries (a typo must not silently drop a header).
const decodeConfig = Schema.decodeUnknownEither(ConfigFile, { onExcessProperty: "error", errors: "first" })

export const isStdioServer = (entry: ServerEntry): entry is StdioServer => "command" in entry

/**
 * Reads and validates the file. Any failure (missing, unreadable, not JSON, not the schema) is
 * InvalidOption naming `--config`: the file's content and path are never echoed.
 */
export const loadConfig = (path: string): Effect.Effect<ConfigFile, InvalidOption> =>
  Effect.gen(function*() {
    let text: string
    try {
      text = readFileSync(path, "utf8")
    } catch {
      return yield* Effect.fail(invalidOption("--config", "invalid-value"))
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      return yield* Effect.fail(invalidOption("--config", "invalid-json"))
    }
    // The top level may hold other settings: keep only mcpServers, then decode it strictly.
    if (typeof json !== "object" || json === null || Array.isArray(json) || !("mcpServers" in json)) {
      return yield* Effect.fail(invalidOption("--config", "invalid-value"))
    }
    const decoded = decodeConfig({ mcpServers: json.mcpServers })
    if (Either.isLeft(decoded)) return yield* Effect.fail(invalidOption("--config", "invalid-value"))
    return decoded.right
  })
