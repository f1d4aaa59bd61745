/**
 * The `mcpServers` shape (the one `ServersFile` decodes), and the formats that are that shape
 * with a few fields of their own: Cursor (`.cursor/mcp.json`, `~/.cursor/mcp.json`), Claude
 * Desktop (`claude_desktop_config.json`) and Windsurf (`~/.codeium/windsurf/mcp_config.json`,
 * whose URL field is `serverUrl`).
 */
import * as Either from "effect/Either"
import { type FormatProblem, type ImportedServer, isRecord, mcpServersEntry, type Reader, readServers, strictEntry, withoutFields } from "./model.js"

const top = (value: unknown): Either.Either<unknown, FormatProblem> =>
  isRecord(value) && Object.hasOwn(value, "mcpServers") ? Either.right(value["mcpServers"]) : Either.left({ reason: "invalid-value", at: "mcpServers" })

/** A file of the `mcpServers` shape, strictly (other top-level keys are the app's own). */
export const read = (ignored: Readonly<Record<string, string>>): Reader => (value) =>
  Either.map(Either.flatMap(top(value), (servers) => readServers(servers, "mcpServers", mcpServersEntry(ignored))), (servers) => ({ servers, inputs: [] }))

export const generic: Reader = read({})

export const claudeDesktop: Reader = read({})

export const cursor: Reader = read({
  envFile: "envFile is not read: set its variables in the environment"
})

const windsurfEntry = (name: string, raw: unknown): Either.Either<ImportedServer | undefined, FormatProblem> => {
  if (!isRecord(raw)) return Either.left({ reason: "invalid-value", at: name })
  if (raw["disabled"] === true) return Either.right(undefined)
  const { notes, raw: kept } = withoutFields(raw, {
    disabled: "disabled is Windsurf's switch",
    disabledTools: "disabledTools is not applied"
  })
  let renamed = kept as Record<string, unknown>
  if (Object.hasOwn(renamed, "serverUrl")) {
    if (Object.hasOwn(renamed, "url")) return Either.left({ reason: "invalid-value", at: name })
    const { serverUrl, ...rest } = renamed
    renamed = { ...rest, url: serverUrl }
  }
  return Either.map(strictEntry(name, renamed), (entry): ImportedServer => ({ name, entry, notes }))
}

export const windsurf: Reader = (value) =>
  Either.map(Either.flatMap(top(value), (servers) => readServers(servers, "mcpServers", windsurfEntry)), (servers) => ({ servers, inputs: [] }))
