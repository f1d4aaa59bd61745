/**
 * The `mcpServers` shape (the one `ServersFile` decodes), and the formats that are that shape
 * with a few fields of their own: Cursor (`.cursor/mcp.json`, `~/.cursor/mcp.json`), Claude
 * Desktop (`claude_desktop_config.json`) and Windsurf (`~/.codeium/windsurf/mcp_config.json`,
 * whose URL field is `serverUrl` and whose `disabledTools` are the catalog's block list). The
 * plain file (`mcp-servers`, phasebound's own) stays strict; the others are read as another
 * client's format (`model.ts`, `foreignEntry`).
 */
import * as Either from "effect/Either"
import {
  exactToolPatterns,
  type FormatProblem,
  foreignEntry,
  type ImportedServer,
  isRecord,
  type Prepare,
  type Reader,
  readServers,
  strictEntry,
  toolNames
} from "./model.js"

const top = (value: unknown): Either.Either<unknown, FormatProblem> =>
  isRecord(value) && Object.hasOwn(value, "mcpServers") ? Either.right(value["mcpServers"]) : Either.left({ reason: "invalid-value", at: "mcpServers" })

/** A file of the `mcpServers` shape, each entry read with `entry` (other top-level keys are the app's own). */
const read = (entry: (name: string, raw: unknown) => ReturnType<ReturnType<typeof foreignEntry>>): Reader => (value) =>
  Either.map(Either.flatMap(top(value), (servers) => readServers(servers, "mcpServers", entry)), (read) => ({ ...read, inputs: [] }))

/** The plain file: every entry decoded strictly, an unknown field refused. */
export const generic: Reader = read((name, raw) => Either.map(strictEntry(name, raw), (entry): ImportedServer => ({ name, entry, notes: [] })))

export const claudeDesktop: Reader = read(foreignEntry({}))

export const cursor: Reader = read(foreignEntry({
  envFile: "envFile is not read: set its variables in the environment"
}))

/** Windsurf: `serverUrl` is the URL; `disabledTools` (exact names) join the catalog's block list. */
const windsurfFields: Prepare = (name, raw) => {
  const refuse = (field: string) => Either.left<FormatProblem>({ reason: "invalid-value", at: `${name}.${field}` })
  const { disabledTools, serverUrl, ...rest } = raw
  const prepared: Record<string, unknown> = { ...rest }
  if (serverUrl !== undefined) {
    if (Object.hasOwn(raw, "url")) return refuse("serverUrl")
    prepared["url"] = serverUrl
  }
  if (disabledTools !== undefined) {
    const names = toolNames(disabledTools)
    const own = raw["blockTools"] === undefined ? [] : toolNames(raw["blockTools"])
    if (names === undefined || own === undefined) return refuse("disabledTools")
    prepared["blockTools"] = [...own, ...exactToolPatterns(names)]
  }
  return Either.right({ raw: prepared })
}

export const windsurf: Reader = read(foreignEntry({}, windsurfFields))
