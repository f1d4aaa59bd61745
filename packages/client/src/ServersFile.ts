/**
 * The `mcpServers` file that Claude Desktop, Cursor, Claude Code (`.mcp.json`) and mcporter
 * users already have, validated strictly with effect Schema (docs/DESIGN.md, "Services"):
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
 * `auth`) is refused. Either kind may add the catalog's `prefix`, `allowTools` and `blockTools`
 * (`McpCatalog`; see `CatalogFields`). Other top-level keys are ignored: desktop apps keep their own settings
 * beside `mcpServers`. The CLI and `McpServers.layerFile` read the same file; the other
 * formats (VS Code, Codex, `server.json`...) are read into the same entries by `ConfigImport`.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Expand from "./internal/configFormats/expand.js"
import * as JsonText from "./internal/jsonText.js"

const StringRecord = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * OAuth settings of an HTTP entry (`Authorization.Options`). `clientSecret` may use `${VAR}`; a
 * relative `privateKeyFile` is read from the file's directory; `issuer` binds the client's
 * credentials to that authorization server; `redirectPort` is the CLI's loopback redirect.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuthEntry = Schema.Struct({
  grant: Schema.optional(Schema.Literal("authorization_code", "client_credentials")),
  clientId: Schema.optional(Schema.NonEmptyString),
  clientSecret: Schema.optional(Schema.NonEmptyString),
  clientMetadataUrl: Schema.optional(Schema.NonEmptyString),
  privateKeyFile: Schema.optional(Schema.NonEmptyString),
  privateKeyAlg: Schema.optional(Schema.Literal("RS256", "ES256")),
  scope: Schema.optional(Schema.NonEmptyString),
  issuer: Schema.optional(Schema.NonEmptyString),
  allowPrivateAuthority: Schema.optional(Schema.Boolean),
  allowScopeStepUp: Schema.optional(Schema.Boolean),
  redirectPort: Schema.optional(Schema.Int.pipe(Schema.between(0, 65535)))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type AuthEntry = typeof AuthEntry.Type

// ---------------------------------------------------------------------------------------------
// The catalog's fields of an entry (docs/DESIGN.md, "Catalog"), either kind of server.

/**
 * What any entry may add for `McpCatalog`: `prefix` (a string, or `false` for the tools' own
 * names), `allowTools` and `blockTools` (glob patterns on the server's own tool names; block
 * wins). Their syntax is checked when a catalog is made (`McpCatalog.layer`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CatalogFields = {
  prefix: Schema.optional(Schema.Union(Schema.String, Schema.Literal(false))),
  allowTools: Schema.optional(Schema.Array(Schema.String)),
  blockTools: Schema.optional(Schema.Array(Schema.String))
}

/**
 * The catalog rules of the file's entries, by server (`undefined` when no entry has any).
 *
 * @since 0.1.0
 * @category catalog
 */
export const catalogRulesOf = (
  file: ServersFile
):
  | Record<string, { readonly prefix?: string | false; readonly allowTools?: ReadonlyArray<string>; readonly blockTools?: ReadonlyArray<string> }>
  | undefined =>
{
  const rules: Record<string, { prefix?: string | false; allowTools?: ReadonlyArray<string>; blockTools?: ReadonlyArray<string> }> = {}
  let any = false
  for (const [name, entry] of Object.entries(file.mcpServers)) {
    if (entry.prefix === undefined && entry.allowTools === undefined && entry.blockTools === undefined) continue
    any = true
    rules[name] = {
      ...(entry.prefix === undefined ? {} : { prefix: entry.prefix }),
      ...(entry.allowTools === undefined ? {} : { allowTools: entry.allowTools }),
      ...(entry.blockTools === undefined ? {} : { blockTools: entry.blockTools })
    }
  }
  return any ? rules : undefined
}

// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category schemas
 */
export const HttpServer = Schema.Struct({
  ...CatalogFields,
  url: Schema.NonEmptyString,
  // "http" is Claude Code's name for Streamable HTTP.
  type: Schema.optional(Schema.Literal("http", "streamable-http", "streamableHttp", "sse")),
  headers: Schema.optional(StringRecord),
  auth: Schema.optional(AuthEntry)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type HttpServer = typeof HttpServer.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const StdioServer = Schema.Struct({
  ...CatalogFields,
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.NonEmptyString,
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(StringRecord),
  cwd: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type StdioServer = typeof StdioServer.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const ServerEntry = Schema.Union(HttpServer, StdioServer)

/**
 * @since 0.1.0
 * @category schemas
 */
export type ServerEntry = typeof ServerEntry.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const ServersFile = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: ServerEntry })
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type ServersFile = typeof ServersFile.Type

/**
 * The largest file read, in bytes: a list of servers, never a data file.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxFileBytes = 1024 * 1024

// Excess fields are errors inside server entries (a typo must not silently drop a header).
const decodeFile = Schema.decodeUnknownEither(ServersFile, { onExcessProperty: "error", errors: "first" })

/**
 * @since 0.1.0
 * @category guards
 */
export const isStdioServer = (entry: ServerEntry): entry is StdioServer => "command" in entry

/**
 * Why a file was refused: not JSON, or not the schema. Never its content.
 *
 * @since 0.1.0
 * @category models
 */
export type Problem = "invalid-json" | "invalid-value"

/**
 * Parses and validates the file's text. The top level may hold other settings: only
 * `mcpServers` is kept, then decoded strictly.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (text: string): Either.Either<ServersFile, Problem> => {
  // A config file is another party's text: parsed under the default structure bound
  // (docs/DESIGN.md, "Structure bounds"); past it, the file is refused as it is.
  const parsed = JsonText.parse(text, JsonText.defaultStructure)
  if (parsed._tag === "Invalid") return Either.left("invalid-json")
  if (parsed._tag !== "Parsed") return Either.left("invalid-value")
  const json = parsed.value
  if (typeof json !== "object" || json === null || Array.isArray(json) || !("mcpServers" in json)) {
    return Either.left("invalid-value")
  }
  return Either.mapLeft(decodeFile({ mcpServers: json.mcpServers }), (): Problem => "invalid-value")
}

/**
 * The `${...}` references of a value, in order of appearance (docs/GUIDE.md, "Variables"):
 * `${VAR}`, `${env:VAR}`, `${VAR:-default}`, `${input:id}`, `${workspaceFolder}`, `${userHome}`.
 *
 * @since 0.1.0
 * @category variables
 */
export const referencesOf: (value: string) => ReadonlyArray<Expand.Reference> = Expand.referencesOf

/**
 * The names of the environment variables a value references, in order of appearance.
 *
 * @since 0.1.0
 * @category variables
 */
export const variablesOf = (value: string): ReadonlyArray<string> =>
  referencesOf(value).flatMap((reference) => reference.kind === "variable" ? [reference.name] : [])

/**
 * Expands `${VAR}`, `${env:VAR}` and `${VAR:-default}` with `lookup`, in one pass (a value
 * holding `${X}` after substitution stays literal; no `$VAR`), so secrets stay out of shell
 * history and config files. `undefined` when a variable without a default is unset, when the
 * value references an input or a directory (`ConfigImport` resolves those), or when the result
 * would pass `maxFileBytes`.
 *
 * @since 0.1.0
 * @category variables
 */
export const expand = (value: string, lookup: (name: string) => string | undefined): string | undefined => {
  const expanded = Expand.expand(value, Expand.environmentOnly(lookup))
  return expanded._tag === "Expanded" ? expanded.value : undefined
}

/**
 * The values of an entry that are expanded when its server is started: the URL and header
 * values, or the command, arguments, environment values and directory (and a client secret).
 *
 * @since 0.1.0
 * @category variables
 */
export const valuesOf = (entry: ServerEntry): ReadonlyArray<string> =>
  isStdioServer(entry)
    ? [entry.command, ...(entry.args ?? []), ...Object.values(entry.env ?? {}), ...(entry.cwd === undefined ? [] : [entry.cwd])]
    : [entry.url, ...Object.values(entry.headers ?? {}), ...(entry.auth?.clientSecret === undefined ? [] : [entry.auth.clientSecret])]
