/**
 * Claude Code: a project's `.mcp.json` (the `mcpServers` shape), and the user's
 * `~/.claude.json`, whose `mcpServers` are the user scope and whose
 * `projects[<directory>].mcpServers` are the local scope of the project in that directory (the
 * current one). A local server shadows a user one of the same name, as in Claude Code.
 */
import * as Either from "effect/Either"
import { type ImportedServer, isRecord, mcpServersEntry, type Reader, readServers } from "./model.js"

const ignored = { headersHelper: "headersHelper is not run: give the headers in headers" }

export const project: Reader = (value) => {
  if (!isRecord(value) || !Object.hasOwn(value, "mcpServers")) return Either.left({ reason: "invalid-value", at: "mcpServers" })
  return Either.map(readServers(value["mcpServers"], "mcpServers", mcpServersEntry(ignored)), (servers) => ({ servers, inputs: [] }))
}

/** `~/.claude.json`: both scopes, local first. */
export const user: Reader = (value, context) => {
  if (!isRecord(value)) return Either.left({ reason: "invalid-value" })
  const projects = value["projects"]
  const local = isRecord(projects) && Object.hasOwn(projects, context.cwd) && isRecord(projects[context.cwd])
    ? (projects[context.cwd] as Record<string, unknown>)["mcpServers"]
    : undefined
  const localServers = local === undefined ? Either.right([]) : readServers(local, "projects.mcpServers", mcpServersEntry(ignored))
  const userServers = Object.hasOwn(value, "mcpServers") ? readServers(value["mcpServers"], "mcpServers", mcpServersEntry(ignored)) : Either.right([])
  return Either.zipWith(localServers, userServers, (locals, users) => ({
    servers: [...locals.map((server): ImportedServer => ({ ...server, scope: "local" })), ...users],
    inputs: []
  }))
}
