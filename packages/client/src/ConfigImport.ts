/**
 * The MCP config files people already have, read into `ServersFile.ServerEntry` values
 * (docs/DESIGN.md, "Config files"; docs/GUIDE.md, "Config files"): VS Code (`.vscode/mcp.json`,
 * the user's `mcp.json`, `settings.json`), Cursor, Claude Desktop, Claude Code (`.mcp.json`,
 * `~/.claude.json`), Windsurf, Codex (`config.toml`) and the MCP registry's `server.json`.
 *
 * A file is found by path (its format detected from its name, then its content; or given) or by
 * the search order (`searchOrder`: the project's files, then the user's). Its content is
 * another party's text: bounded in size before it is read (`ServersFile.maxFileBytes`;
 * `maxClaudeUserFileBytes` for Claude Code's `~/.claude.json`, of which only the servers are
 * ever built), in structure before and after it is parsed, with no `__proto__` key; a refusal
 * is a `ConfigFileError` naming the file's path, its format and a reason, never its content. A
 * world-writable file is refused (any local user could choose the command it starts); a
 * symbolic link is followed, and its target checked.
 *
 * Nothing is expanded here: `${VAR}`, `${input:id}` and the rest stay as written until a server
 * is started (`expandEntry`, used by `McpServers` and the CLI), so what a listing shows holds no
 * secret from the environment. A server defined again further down the search order is listed
 * with the definitions it shadows (`Found.shadowed`).
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
import { currentDirectory, placeOf } from "./internal/configFormats/search.js"
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
 * A config file refused: its path, its format when known, its scope when it was read with one
 * (the search order's), why, and where in it (`at`: a server's name or a setting's, never a
 * value).
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigFileError extends Schema.TaggedError<ConfigFileError>("@phasebound/client/ConfigFileError")("ConfigFileError", {
  path: Schema.String,
  format: Schema.optional(Format),
  scope: Schema.optional(Schema.Literal("project", "user", "local", "file")),
  reason: Reason,
  at: Schema.optional(Schema.String)
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `config file refused (${this.reason}${this.at === undefined ? "" : ` at ${this.at}`}): ${this.path}`
  }
}

/**
 * The reason of the `InvalidOption` a refused file becomes (`McpServers.fromDiscovered`, the
 * CLI's `--config`): `invalid-json` when its syntax or structure was refused (`invalid-syntax`,
 * `too-deep`, `too-many-nodes`), else `invalid-value`.
 *
 * @since 0.1.0
 * @category errors
 */
export const invalidOptionReason = (error: Pick<ConfigFileError, "reason">): "invalid-json" | "invalid-value" =>
  error.reason === "invalid-syntax" || error.reason === "too-deep" || error.reason === "too-many-nodes" ? "invalid-json" : "invalid-value"

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
 * A server a file defines and turns off (`disabled: true`, Codex's `enabled = false`): left out
 * of its servers (it shadows nothing), with why.
 *
 * @since 0.1.0
 * @category models
 */
export interface Skipped {
  readonly name: string
  readonly note: string
}

/**
 * A file read: where, its format, its servers in order, those it turns off, its inputs, and the
 * directory `${workspaceFolder}` names (the project's: the parent of `.vscode`, `.cursor` or
 * `.codex`, else the file's directory).
 *
 * @since 0.1.0
 * @category models
 */
export interface File {
  readonly path: string
  readonly format: Format
  readonly scope: Scope
  readonly servers: ReadonlyArray<Server>
  readonly skipped: ReadonlyArray<Skipped>
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

/**
 * The largest `~/.claude.json` read, in bytes. Claude Code keeps its history in that file (tens
 * of megabytes for a heavy user); only its `mcpServers` and the current project's are ever
 * built (`internal/configFormats/text.ts`, `extractJsonc`), the rest is scanned once.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxClaudeUserFileBytes = 64 * 1024 * 1024

/**
 * Claude Code's user file, by its name, read as Claude Code's (the format given, or the name's:
 * `formatOfName` says `claude-code` for it): read by extraction, under its own size bound.
 */
const isClaudeUserPath = (path: string, format: Format | undefined): boolean => baseName(path).toLowerCase() === ".claude.json" && format === "claude-code"

/**
 * The largest file of this path and format that is read: `maxClaudeUserFileBytes` for Claude
 * Code's `.claude.json`, `ServersFile.maxFileBytes` for every other.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBytesOf = (path: string, format?: Format | undefined): number =>
  isClaudeUserPath(path, format ?? formatOfName(path)) ? maxClaudeUserFileBytes : ServersFile.maxFileBytes

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

/**
 * Parses and reads one file's text (already bounded in size), refusing with `ConfigFileError`.
 * A `.toml` file is TOML, any other JSON with comments and trailing commas.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (text: string, path: string, options: ReadOptions = {}): Either.Either<File, ConfigFileError> => {
  const byName = options.format ?? formatOfName(path)
  const refuse = (reason: Reason, format: Format | undefined, at?: string) =>
    Either.left(new ConfigFileError({ path, format, scope: options.scope, reason, at }))
  if (text.length > maxBytesOf(path, byName)) return refuse("too-large", byName)
  const cwd = options.cwd ?? currentDirectory()
  const toml = byName === "codex" || (byName === undefined && path.toLowerCase().endsWith(".toml"))
  const parsed = isClaudeUserPath(path, byName) ? claudeUserMembers(text, cwd) : toml ? Text.parseToml(text) : Text.parseJsonc(text)
  if (parsed._tag === "Refused") return refuse(parsed.problem, byName)
  const format = byName ?? formatOfContent(parsed.value)
  if (format === undefined) return refuse("unknown-format", undefined)
  const read = readers[format](parsed.value, { cwd })
  if (Either.isLeft(read)) return refuse(read.left.reason, format, read.left.at)
  const scope = options.scope ?? "file"
  return Either.right({
    path,
    format,
    scope,
    servers: read.right.servers.map((server): Server => ({ name: server.name, entry: server.entry, notes: server.notes, scope: server.scope ?? scope })),
    skipped: (read.right.skipped ?? []).map((server): Skipped => ({ name: server.name, note: server.skipped })),
    inputs: read.right.inputs,
    workspaceFolder: workspaceOf(path)
  })
}

/**
 * What the Claude Code reader needs of `~/.claude.json`, and nothing more: `mcpServers` and the
 * current project's `projects[cwd].mcpServers`, extracted from one scan of the text (the rest,
 * its history among it, is never built), each parsed under the usual bounds.
 */
const claudeUserMembers = (text: string, cwd: string): Text.ParsedText => {
  const extracted = Text.extractJsonc(text, [["mcpServers"], ["projects", cwd, "mcpServers"]])
  if (extracted._tag === "Refused") return extracted
  const { keys, values } = extracted
  const value: Record<string, unknown> = {}
  if (keys.has("mcpServers")) value["mcpServers"] = values.get(0)
  if (keys.has("projects")) value["projects"] = values.has(1) ? { [cwd]: { mcpServers: values.get(1) } } : {}
  return { _tag: "Parsed", value }
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
    const refuse = (reason: Reason) => new ConfigFileError({ path, format, scope: options.scope, reason })
    const info = yield* Effect.mapError(fs.stat(path), (error) =>
      refuse(error._tag === "SystemError" && error.reason === "NotFound" ? "not-found" : "unreadable"))
    if (info.type !== "File") {
      return yield* Effect.fail(refuse("unreadable"))
    }
    const maxBytes = maxBytesOf(path, format)
    if (Number(info.size) > maxBytes) {
      return yield* Effect.fail(refuse("too-large"))
    }
    if (isWorldWritable(info.mode)) {
      return yield* Effect.fail(refuse("world-writable"))
    }
    const bytes = yield* Effect.mapError(fs.readFile(path), () =>
      refuse("unreadable"))
    // The file may have grown between the two calls: bounded again.
    if (bytes.byteLength > maxBytes) return yield* Effect.fail(refuse("too-large"))
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
  /** `process.env` by default (`HOME`, `APPDATA`, `XDG_CONFIG_HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`). */
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
 * the user scope; `$CLAUDE_CONFIG_DIR/.claude.json` when that variable is set, as Claude Code
 * reads it), VS Code's user `mcp.json`, `~/.cursor/mcp.json`, Claude Desktop's
 * `claude_desktop_config.json`, `~/.codeium/windsurf/mcp_config.json`,
 * `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`). A user file is skipped when the
 * environment names no home.
 *
 * @since 0.1.0
 * @category search
 */
export const searchOrder = (path: Path.Path, options: SearchOptions = {}): ReadonlyArray<Candidate> => {
  const { cwd, env, home, platform } = placeOf(options)
  const candidates: Array<Candidate> = [
    { path: path.join(cwd, ".mcp.json"), format: "claude-code", scope: "project" },
    { path: path.join(cwd, ".vscode", "mcp.json"), format: "vscode", scope: "project" },
    { path: path.join(cwd, ".cursor", "mcp.json"), format: "cursor", scope: "project" },
    { path: path.join(cwd, ".codex", "config.toml"), format: "codex", scope: "project" }
  ]
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
  const claudeDir = env["CLAUDE_CONFIG_DIR"]
  user(nonEmpty(claudeDir) ? path.join(claudeDir, ".claude.json") : inHome(".claude.json"), "claude-code")
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
 * A definition of a server, with the file it is in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition extends Server {
  readonly file: File
}

/**
 * A server as found: the definition that wins, with the file it came from, and the definitions
 * of the same name further down the search order that it shadows (a project's `.mcp.json` that
 * redefines the user's `github`, say: docs/SECURITY.md, "5. The contents of config files").
 *
 * @since 0.1.0
 * @category models
 */
export interface Found extends Definition {
  readonly shadowed: ReadonlyArray<Definition>
}

/**
 * The servers of files by name: the first definition of a name wins (the search order puts
 * the project's first), in the order found; the later ones are its `shadowed`.
 *
 * @since 0.1.0
 * @category search
 */
export const serversOf = (files: ReadonlyArray<File>): ReadonlyArray<Found> => {
  const found = new Map<string, { readonly first: Definition; readonly shadowed: Array<Definition> }>()
  for (const file of files) {
    for (const server of file.servers) {
      const definition: Definition = { ...server, file }
      const seen = found.get(server.name)
      if (seen === undefined) found.set(server.name, { first: definition, shadowed: [] })
      else seen.shadowed.push(definition)
    }
  }
  return [...found.values()].map(({ first, shadowed }): Found => ({ ...first, shadowed }))
}

/**
 * The names of the environment variables a server's values reference (`${NAME}`,
 * `${env:NAME}`, `${NAME:-default}`), in order, each once: what starting it would read from the
 * environment. Names, never values.
 *
 * @since 0.1.0
 * @category variables
 */
export const variablesOf = (server: Pick<Server, "entry">): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const value of ServersFile.valuesOf(server.entry)) for (const name of ServersFile.variablesOf(value)) names.add(name)
  return [...names]
}

/**
 * The secrets of a server's entry: the values its `${VAR}`s and `${input:id}`s take in `values`
 * (each once; an unset one has none), secrets wherever they go (an argument, a URL's path, a
 * part of a header value: docs/SECURITY.md, "1. The MCP server"). `${workspaceFolder}` and
 * `${userHome}` are not. What `McpServers` gives a config file's server as its `secrets`, and
 * what the CLI adds to a run's; `McpConnectionError.secretValues` gives the forms a peer could
 * quote them in.
 *
 * @since 0.1.0
 * @category variables
 */
export const secretsOf = (server: Pick<Server, "entry">, values: Pick<Values, "env" | "inputs">): ReadonlyArray<string> => {
  const secrets = new Set<string>()
  for (const value of ServersFile.valuesOf(server.entry)) {
    for (const reference of ServersFile.referencesOf(value)) {
      const found = reference.kind === "variable" ? values.env(reference.name) : reference.kind === "input" ? values.inputs(reference.name) : undefined
      if (found !== undefined) secrets.add(found)
    }
  }
  return [...secrets]
}

/**
 * A file of the search order as it may be shown in a failure: its path relative to the project
 * (`.vscode/mcp.json`) or to the home directory (`~/.claude.json`), else its name alone, so that
 * no other directory of the machine is named.
 *
 * @since 0.1.0
 * @category search
 */
export const shownPath = (path: string, where: { readonly cwd?: string | undefined; readonly home?: string | undefined }): string => {
  const under = (directory: string | undefined) => {
    if (directory === undefined || directory === "") return undefined
    const prefix = directory.endsWith("/") || directory.endsWith("\\") ? directory : `${directory}/`
    const windows = prefix.replace(/\/$/, "\\")
    return path.startsWith(prefix) ? path.slice(prefix.length) : path.startsWith(windows) ? path.slice(windows.length) : undefined
  }
  const inProject = under(where.cwd)
  if (inProject !== undefined) return inProject
  const inHome = under(where.home)
  return inHome !== undefined ? `~/${inHome}` : baseName(path)
}

/**
 * The inputs a server's settings reference, with their declarations when the file has them.
 *
 * @since 0.1.0
 * @category variables
 */
export const inputsOf = (server: Pick<Definition, "entry" | "file">): ReadonlyArray<Input> => {
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
 * The fields of an entry whose values are expanded, as a failure names them.
 *
 * @since 0.1.0
 * @category variables
 */
export type EntryField = "url" | "headers" | "auth.clientSecret" | "command" | "args" | "env" | "cwd"

/**
 * Why an entry could not be expanded: the field, and what was missing (a variable's name or an
 * input's id: the caller decides what it may show), or `too-large` (one value past 1 MiB, or
 * the entry's values past `maxExpandedEntryLength` all together).
 *
 * @since 0.1.0
 * @category variables
 */
export interface EntryExpansionFailure {
  readonly field: EntryField
  readonly problem: { readonly kind: "variable" | "input" | "builtin"; readonly name: string } | "too-large"
}

/**
 * The most an entry's values may expand to, all together (1 MiB): an entry of 100,000
 * arguments, each `${PATH}`, is refused, not built.
 *
 * @since 0.1.0
 * @category variables
 */
export const maxExpandedEntryLength: number = Expand.maxExpandedEntryLength

/**
 * An entry with every reference resolved (`expand` on each value: the URL and header values, or
 * the command, arguments, environment values and directory, and a client secret), under one
 * budget for the whole entry (`maxExpandedEntryLength`). What `McpServers` and the CLI start.
 *
 * @since 0.1.0
 * @category variables
 */
export const expandEntry = <Entry extends ServersFile.ServerEntry>(
  entry: Entry,
  file: Pick<File, "workspaceFolder">,
  values: Values
): Either.Either<Entry, EntryExpansionFailure> => {
  let left = Expand.maxExpandedEntryLength
  const lookup = lookupOf(file, values)
  const one = (field: EntryField, value: string): Either.Either<string, EntryExpansionFailure> =>
    Either.mapBoth(expandWith(value, lookup, left), {
      onLeft: (problem) => ({ field, problem }),
      onRight: (expanded) => {
        left -= expanded.length
        return expanded
      }
    })
  const record = (field: EntryField, record: Readonly<Record<string, string>> | undefined) =>
    record === undefined
      ? Either.right(undefined)
      : Either.map(
        Either.all(Object.entries(record).map(([name, value]) => Either.map(one(field, value), (expanded) => [name, expanded] as const))),
        Object.fromEntries
      )
  return Either.gen(function*() {
    if (ServersFile.isStdioServer(entry)) {
      const command = yield* one("command", entry.command)
      const args = entry.args === undefined ? undefined : yield* Either.all(entry.args.map((arg) => one("args", arg)))
      const env = yield* record("env", entry.env)
      const cwd = entry.cwd === undefined ? undefined : yield* one("cwd", entry.cwd)
      return {
        ...entry,
        command,
        ...(args === undefined ? {} : { args }),
        ...(env === undefined ? {} : { env }),
        ...(cwd === undefined ? {} : { cwd })
      }
    }
    const url = yield* one("url", entry.url)
    const headers = yield* record("headers", entry.headers)
    const clientSecret = entry.auth?.clientSecret === undefined ? undefined : yield* one("auth.clientSecret", entry.auth.clientSecret)
    return {
      ...entry,
      url,
      ...(headers === undefined ? {} : { headers }),
      ...(entry.auth === undefined ? {} : { auth: { ...entry.auth, ...(clientSecret === undefined ? {} : { clientSecret }) } })
    }
  })
}

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
): Either.Either<string, EntryExpansionFailure["problem"]> => expandWith(value, lookupOf(file, values), Expand.maxExpandedLength)

/** The lookup of `expand` and `expandEntry`: `${workspaceFolder}` is the file's, `${userHome}` the values' home. */
const lookupOf = (file: Pick<File, "workspaceFolder">, values: Values): Expand.Lookup => ({
  variable: values.env,
  input: values.inputs,
  builtin: (name) => name === "workspaceFolder" ? file.workspaceFolder : values.home
})

/** One value expanded, its result at most `limit` long, or what stopped it. */
const expandWith = (value: string, lookup: Expand.Lookup, limit: number): Either.Either<string, EntryExpansionFailure["problem"]> => {
  const expanded = Expand.expand(value, lookup, limit)
  return expanded._tag === "Expanded"
    ? Either.right(expanded.value)
    : expanded._tag === "TooLarge"
    ? Either.left("too-large")
    : Either.left({ kind: expanded.reference.kind, name: expanded.reference.name })
}
