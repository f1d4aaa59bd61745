/**
 * The MCP config files people already have, read into `ServersFile.ServerEntry` values
 * (docs/DESIGN.md, "Config files"; docs/GUIDE.md, "Config files"): VS Code (`.vscode/mcp.json`,
 * the user's `mcp.json`, `settings.json`), Cursor, Claude Desktop, Claude Code (`.mcp.json`,
 * `~/.claude.json`), Windsurf, Codex (`config.toml`) and the MCP registry's `server.json`.
 *
 * A file is found by path (its format detected from its name, then its content; or given) or by
 * the search order (`searchOrder`: the project's files, then the user's). Its content is
 * another party's text: bounded in size before it is read (`ServersFile.maxFileBytes`), in
 * structure before and after it is parsed, with no `__proto__` key; a refusal is a
 * `ConfigFileError` naming the file's path, its format and a reason, never its content. A
 * world-writable file is refused (any local user could choose the command it starts); a
 * symbolic link is followed, and its target checked.
 *
 * Nothing is expanded here: `${VAR}`, `${input:id}` and the rest stay as written until a server
 * is started (`McpServers.fromFile`, the CLI), so what a listing shows holds no secret from the
 * environment.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ServersFile from "./ServersFile.js"
import * as ClaudeCode from "./internal/configFormats/claudeCode.js"
import * as Codex from "./internal/configFormats/codex.js"
import * as McpServersShape from "./internal/configFormats/mcpServers.js"
import type * as Model from "./internal/configFormats/model.js"
import * as Expand from "./internal/configFormats/expand.js"
import * as ServerJson from "./internal/configFormats/serverJson.js"
import * as Text from "./internal/configFormats/text.js"
import * as VsCode from "./internal/configFormats/vscode.js"

/**
 * The formats read. `mcp-servers` is the plain `mcpServers` file (mcporter's, and any other),
 * decoded strictly as `ServersFile`.
 *
 * @since 0.1.0
 * @category models
 */
export const Format = Schema.Literal(
  "mcp-servers",
  "claude-code",
  "claude-desktop",
  "cursor",
  "vscode",
  "vscode-settings",
  "windsurf",
  "codex",
  "server-json"
)

/**
 * @since 0.1.0
 * @category models
 */
export type Format = typeof Format.Type

/**
 * Where a file's servers apply: a project's file, a user's, Claude Code's local scope (one
 * project's servers in the user's file), or a file named by path.
 *
 * @since 0.1.0
 * @category models
 */
export type Scope = "project" | "user" | "local" | "file"

/**
 * Why a file was refused.
 *
 * @since 0.1.0
 * @category models
 */
export const Reason = Schema.Literal(
  "not-found",
  "unreadable",
  "too-large",
  "world-writable",
  "unknown-format",
  "invalid-syntax",
  "too-deep",
  "too-many-nodes",
  "forbidden-key",
  "invalid-value",
  "invalid-name",
  "unsupported"
)

/**
 * @since 0.1.0
 * @category models
 */
export type Reason = typeof Reason.Type

/**
 * A config file refused: its path, its format when known, why, and where in it (`at`: a
 * server's name or a setting's, never a value).
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigFileError extends Schema.TaggedError<ConfigFileError>("@phasebound/client/ConfigFileError")("ConfigFileError", {
  path: Schema.String,
  format: Schema.optional(Format),
  reason: Reason,
  at: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `config file refused (${this.reason}${this.at === undefined ? "" : ` at ${this.at}`}): ${this.path}`
  }
}

/**
 * An input a file declares (VS Code's `inputs`, or a value `server.json` leaves to the user).
 *
 * @since 0.1.0
 * @category models
 */
export type Input = Model.InputSpec

/**
 * One server of a file, as written.
 *
 * @since 0.1.0
 * @category models
 */
export interface Server {
  readonly name: string
  readonly entry: ServersFile.ServerEntry
  readonly scope: Scope
  /** Settings of the file that were read but are not used (never a value). */
  readonly notes: ReadonlyArray<string>
}

/**
 * A file read: where, its format, its servers in order, its inputs, and the directory
 * `${workspaceFolder}` names (the project's: the parent of `.vscode`, `.cursor` or `.codex`, else
 * the file's directory).
 *
 * @since 0.1.0
 * @category models
 */
export interface File {
  readonly path: string
  readonly format: Format
  readonly scope: Scope
  readonly servers: ReadonlyArray<Server>
  readonly inputs: ReadonlyArray<Input>
  readonly workspaceFolder: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  /** The format, instead of detecting it. */
  readonly format?: Format | undefined
  readonly scope?: Scope | undefined
  /** The current project's directory (Claude Code's local scope): `process.cwd()` by default. */
  readonly cwd?: string | undefined
}

/** `~/.claude.json` holds `projects` beside (or instead of) `mcpServers`. */
const isClaudeUserFile = (value: unknown): boolean => typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, "projects")

const readers: Readonly<Record<Format, Model.Reader>> = {
  "mcp-servers": McpServersShape.generic,
  "claude-code": (value, context) => isClaudeUserFile(value) ? ClaudeCode.user(value, context) : ClaudeCode.project(value, context),
  "claude-desktop": McpServersShape.claudeDesktop,
  cursor: McpServersShape.cursor,
  vscode: VsCode.mcpJson,
  "vscode-settings": VsCode.settings,
  windsurf: McpServersShape.windsurf,
  codex: Codex.read,
  "server-json": ServerJson.read
}

const baseName = (path: string): string => path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1)
const parentName = (path: string): string => {
  const trimmed = path.slice(0, Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")))
  return baseName(trimmed)
}

/**
 * The format a file's name says, if it says one: `mcp.json` under `.vscode` or VS Code's
 * `User` directory (`vscode`), under `.cursor` (`cursor`); `.mcp.json` and `.claude.json`
 * (`claude-code`); `claude_desktop_config.json`; `mcp_config.json` (`windsurf`);
 * `settings.json` (`vscode-settings`); `server.json`; a `.toml` file (`codex`).
 *
 * @since 0.1.0
 * @category detection
 */
export const formatOfName = (path: string): Format | undefined => {
  const name = baseName(path).toLowerCase()
  const parent = parentName(path).toLowerCase()
  if (name === "mcp.json") return parent === ".cursor" ? "cursor" : parent === ".vscode" || parent === "user" ? "vscode" : undefined
  if (name === ".mcp.json" || name === ".claude.json") return "claude-code"
  if (name === "claude_desktop_config.json") return "claude-desktop"
  if (name === "mcp_config.json") return "windsurf"
  if (name === "settings.json") return "vscode-settings"
  if (name === "server.json") return "server-json"
  if (name.endsWith(".toml")) return "codex"
  return undefined
}

/**
 * The format a parsed JSON value's shape says: `servers` (VS Code), `mcp.servers` (VS Code
 * settings), `packages` or `remotes` with a `name` (`server.json`), `projects` (Claude Code's
 * user file), `mcpServers` (the plain file).
 *
 * @since 0.1.0
 * @category detection
 */
export const formatOfContent = (value: unknown): Format | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const has = (key: string) => Object.hasOwn(value, key)
  if (has("mcpServers")) return has("projects") ? "claude-code" : "mcp-servers"
  if (has("servers")) return "vscode"
  if (has("projects")) return "claude-code"
  if (has("mcp_servers")) return "codex"
  if (has("name") && (has("packages") || has("remotes"))) return "server-json"
  const mcp = (value as Record<string, unknown>)["mcp"]
  if (typeof mcp === "object" && mcp !== null && Object.hasOwn(mcp, "servers")) return "vscode-settings"
  return undefined
}

const workspaceOf = (path: string): string => {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"))
  const directory = cut <= 0 ? (cut === 0 ? path.slice(0, 1) : ".") : path.slice(0, cut)
  const parent = parentName(path)
  if (parent === ".vscode" || parent === ".cursor" || parent === ".codex") {
    const up = Math.max(directory.lastIndexOf("/"), directory.lastIndexOf("\\"))
    return up <= 0 ? (up === 0 ? directory.slice(0, 1) : ".") : directory.slice(0, up)
  }
  return directory
}

const currentDirectory = (): string => typeof process === "object" && typeof process.cwd === "function" ? process.cwd() : "."

/**
 * Parses and reads one file's text (already bounded in size), refusing with `ConfigFileError`.
 * A `.toml` file is TOML, any other JSON with comments and trailing commas.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (text: string, path: string, options: ReadOptions = {}): Either.Either<File, ConfigFileError> => {
  const byName = options.format ?? formatOfName(path)
  const refuse = (reason: Reason, format: Format | undefined, at?: string) => Either.left(new ConfigFileError({ path, format, reason, at }))
  if (text.length > ServersFile.maxFileBytes) return refuse("too-large", byName)
  const toml = byName === "codex" || (byName === undefined && path.toLowerCase().endsWith(".toml"))
  const parsed = toml ? Text.parseToml(text) : Text.parseJsonc(text)
  if (parsed._tag === "Refused") return refuse(parsed.problem, byName)
  const format = byName ?? formatOfContent(parsed.value)
  if (format === undefined) return refuse("unknown-format", undefined)
  const read = readers[format](parsed.value, { cwd: options.cwd ?? currentDirectory() })
  if (Either.isLeft(read)) return refuse(read.left.reason, format, read.left.at)
  const scope = options.scope ?? "file"
  return Either.right({
    path,
    format,
    scope,
    servers: read.right.servers.map((server): Server => ({ name: server.name, entry: server.entry, notes: server.notes, scope: server.scope ?? scope })),
    inputs: read.right.inputs,
    workspaceFolder: workspaceOf(path)
  })
}

/**
 * Reads one file: its size checked before it is read, a world-writable one refused, then
 * `parse`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (path: string, options: ReadOptions = {}): Effect.Effect<File, ConfigFileError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const format = options.format ?? formatOfName(path)
    const refuse = (reason: Reason) => new ConfigFileError({ path, format, reason })
    const info = yield* Effect.mapError(fs.stat(path), (error) =>
      refuse(error._tag === "SystemError" && error.reason === "NotFound" ? "not-found" : "unreadable"))
    if (info.type !== "File") {
      return yield* Effect.fail(refuse("unreadable"))
    }
    if (Number(info.size) > ServersFile.maxFileBytes) {
      return yield* Effect.fail(refuse("too-large"))
    }
    if (isWorldWritable(info.mode)) {
      return yield* Effect.fail(refuse("world-writable"))
    }
    const bytes = yield* Effect.mapError(fs.readFile(path), () =>
      refuse("unreadable"))
    // The file may have grown between the two calls: bounded again.
    if (bytes.byteLength > ServersFile.maxFileBytes) return yield* Effect.fail(refuse("too-large"))
    let text: string
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    } catch {
      return yield* Effect.fail(refuse("invalid-syntax"))
    }
    return yield* parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, path, options)
  })

const isWorldWritable = (mode: number): boolean => typeof process === "object" && process.platform !== "win32" && (mode & 0o002) !== 0

/**
 * One place the search looks.
 *
 * @since 0.1.0
 * @category models
 */
export interface Candidate {
  readonly path: string
  readonly format: Format
  readonly scope: Scope
}

/**
 * Where the search looks, and what it needs to know.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchOptions {
  /** The project's directory: `process.cwd()` by default. */
  readonly cwd?: string | undefined
  /** `process.env` by default (`HOME`, `APPDATA`, `XDG_CONFIG_HOME`, `CODEX_HOME`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** `process.platform` by default. */
  readonly platform?: string | undefined
}

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/**
 * The search order (docs/GUIDE.md, "Search order"): the project's files, then the user's; a
 * server's first definition wins.
 *
 * Project (in `cwd`): `.mcp.json` (Claude Code), `.vscode/mcp.json`, `.cursor/mcp.json`,
 * `.codex/config.toml`. User: `~/.claude.json` (Claude Code: the local scope of `cwd`, then
 * the user scope), VS Code's user `mcp.json`, `~/.cursor/mcp.json`, Claude Desktop's
 * `claude_desktop_config.json`, `~/.codeium/windsurf/mcp_config.json`,
 * `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`). A user file is skipped when the
 * environment names no home.
 *
 * @since 0.1.0
 * @category search
 */
export const searchOrder = (path: Path.Path, options: SearchOptions = {}): ReadonlyArray<Candidate> => {
  const cwd = options.cwd ?? currentDirectory()
  const env = options.env ?? (typeof process === "object" ? process.env : {})
  const platform = options.platform ?? (typeof process === "object" ? process.platform : "linux")
  const candidates: Array<Candidate> = [
    { path: path.join(cwd, ".mcp.json"), format: "claude-code", scope: "project" },
    { path: path.join(cwd, ".vscode", "mcp.json"), format: "vscode", scope: "project" },
    { path: path.join(cwd, ".cursor", "mcp.json"), format: "cursor", scope: "project" },
    { path: path.join(cwd, ".codex", "config.toml"), format: "codex", scope: "project" }
  ]
  const home = platform === "win32" ? env["USERPROFILE"] : env["HOME"]
  const appData = platform === "win32"
    ? (nonEmpty(env["APPDATA"]) ? env["APPDATA"] : nonEmpty(home) ? path.join(home, "AppData", "Roaming") : undefined)
    : undefined
  const xdg = env["XDG_CONFIG_HOME"]
  const configDir = platform === "win32"
    ? appData
    : platform === "darwin"
    ? nonEmpty(home) ? path.join(home, "Library", "Application Support") : undefined
    : nonEmpty(xdg) && xdg.startsWith("/")
    ? xdg
    : nonEmpty(home)
    ? path.join(home, ".config")
    : undefined
  const user = (file: string | undefined, format: Format) => {
    if (file !== undefined) candidates.push({ path: file, format, scope: "user" })
  }
  const inHome = (...parts: Array<string>) => nonEmpty(home) ? path.join(home, ...parts) : undefined
  user(inHome(".claude.json"), "claude-code")
  user(configDir === undefined ? undefined : path.join(configDir, "Code", "User", "mcp.json"), "vscode")
  user(inHome(".cursor", "mcp.json"), "cursor")
  user(configDir === undefined ? undefined : path.join(configDir, "Claude", "claude_desktop_config.json"), "claude-desktop")
  user(inHome(".codeium", "windsurf", "mcp_config.json"), "windsurf")
  user(nonEmpty(env["CODEX_HOME"]) ? path.join(env["CODEX_HOME"], "config.toml") : inHome(".codex", "config.toml"), "codex")
  return candidates
}

/**
 * What the search found: the files read, in the search order, and those that exist but were
 * refused (a missing file is no finding).
 *
 * @since 0.1.0
 * @category models
 */
export interface Discovered {
  readonly files: ReadonlyArray<File>
  readonly refused: ReadonlyArray<ConfigFileError>
}

/**
 * Reads every file of the search order that exists.
 *
 * @since 0.1.0
 * @category search
 */
export const discover = (options: SearchOptions = {}): Effect.Effect<Discovered, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const files: Array<File> = []
    const refused: Array<ConfigFileError> = []
    for (const candidate of searchOrder(path, options)) {
      const found = yield* Effect.either(read(candidate.path, { format: candidate.format, scope: candidate.scope, cwd: options.cwd }))
      if (Either.isRight(found)) files.push(found.right)
      else if (found.left.reason !== "not-found") refused.push(found.left)
    }
    return { files, refused }
  })

/**
 * A server as found, with the file it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Found extends Server {
  readonly file: File
}

/**
 * The servers of files by name: the first definition of a name wins (the search order puts
 * the project's first), in the order found.
 *
 * @since 0.1.0
 * @category search
 */
export const serversOf = (files: ReadonlyArray<File>): ReadonlyArray<Found> => {
  const seen = new Set<string>()
  const found: Array<Found> = []
  for (const file of files) {
    for (const server of file.servers) {
      if (seen.has(server.name)) continue
      seen.add(server.name)
      found.push({ ...server, file })
    }
  }
  return found
}

/**
 * The inputs a server's settings reference, with their declarations when the file has them.
 *
 * @since 0.1.0
 * @category variables
 */
export const inputsOf = (server: Found): ReadonlyArray<Input> => {
  const ids = new Set<string>()
  for (const value of ServersFile.valuesOf(server.entry)) {
    for (const reference of ServersFile.referencesOf(value)) if (reference.kind === "input") ids.add(reference.name)
  }
  return [...ids].map((id) => server.file.inputs.find((input) => input.id === id) ?? { id, description: undefined, password: false })
}

/**
 * The environment variable an input is read from when nobody is asked: `PHASEBOUND_INPUT_` and
 * the id in upper case, each character other than a letter or a digit as `_` (`github-token`:
 * `PHASEBOUND_INPUT_GITHUB_TOKEN`).
 *
 * @since 0.1.0
 * @category variables
 */
export const inputVariable: (id: string) => string = Expand.inputVariable

/**
 * Where `expand` looks references up: the environment, the inputs' values, the home directory
 * (`${userHome}`); `${workspaceFolder}` is the file's.
 *
 * @since 0.1.0
 * @category variables
 */
export interface Values {
  readonly env: (name: string) => string | undefined
  readonly inputs: (id: string) => string | undefined
  readonly home: string | undefined
}

/**
 * A value of a file's entry with its references resolved in one pass (docs/GUIDE.md,
 * "Variables"): the value, or what was missing (a variable's name or an input's id: the caller
 * decides what it may show), or `too-large`.
 *
 * @since 0.1.0
 * @category variables
 */
export const expand = (
  value: string,
  file: Pick<File, "workspaceFolder">,
  values: Values
): Either.Either<string, { readonly kind: "variable" | "input" | "builtin"; readonly name: string } | "too-large"> => {
  const expanded = Expand.expand(value, {
    variable: values.env,
    input: values.inputs,
    builtin: (name) => name === "workspaceFolder" ? file.workspaceFolder : values.home
  })
  return expanded._tag === "Expanded"
    ? Either.right(expanded.value)
    : expanded._tag === "TooLarge"
    ? Either.left("too-large")
    : Either.left({ kind: expanded.reference.kind, name: expanded.reference.name })
}
