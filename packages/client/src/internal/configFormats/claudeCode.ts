/**
 * Claude Code: a project's `.mcp.json` (the `mcpServers` shape), and the user's
 * `~/.claude.json`, whose `mcpServers` are the user scope and whose
 * `projects[<directory>].mcpServers` are the local scope of the project in that directory (the
 * current one). A local server shadows a user one of the same name, as in Claude Code.
 *
 * An entry's `oauth` (`clientId`, `callbackPort`: a client registered in advance, and the port
 * of its redirect) is the model's `auth.clientId` and `auth.redirectPort`; any other key of it
 * refuses the file (ignored, it could send the user's authorization elsewhere).
 */
import * as Either from "effect/Either"
import { type FormatProblem, foreignEntry, type ImportedServer, isRecord, type Prepare, type Reader, readServers } from "./model.js"

const notes = { headersHelper: "headersHelper is not run: give the headers in headers" }

const oauthFields: Prepare = (name, raw) => {
  if (raw["oauth"] === undefined) return Either.right({ raw })
  const refuse = Either.left<FormatProblem>({ reason: "invalid-value", at: `${name}.oauth` })
  const { oauth, ...rest } = raw
  if (!isRecord(oauth) || Object.keys(oauth).some((key) => key !== "clientId" && key !== "callbackPort")) return refuse
  const auth = rest["auth"] === undefined ? {} : rest["auth"]
  if (!isRecord(auth)) return refuse
  const { callbackPort, clientId } = oauth
  if (clientId !== undefined && auth["clientId"] !== undefined && auth["clientId"] !== clientId) return refuse
  if (callbackPort !== undefined && auth["redirectPort"] !== undefined && auth["redirectPort"] !== callbackPort) return refuse
  return Either.right({
    raw: {
      ...rest,
      auth: { ...auth, ...(clientId === undefined ? {} : { clientId }), ...(callbackPort === undefined ? {} : { redirectPort: callbackPort }) }
    }
  })
}

const entry = foreignEntry(notes, oauthFields)

export const project: Reader = (value) => {
  if (!isRecord(value) || !Object.hasOwn(value, "mcpServers")) return Either.left({ reason: "invalid-value", at: "mcpServers" })
  return Either.map(readServers(value["mcpServers"], "mcpServers", entry), (read) => ({ ...read, inputs: [] }))
}

/** `~/.claude.json`: both scopes, local first. */
export const user: Reader = (value, context) => {
  if (!isRecord(value)) return Either.left({ reason: "invalid-value" })
  const projects = value["projects"]
  const local = isRecord(projects) && Object.hasOwn(projects, context.cwd) && isRecord(projects[context.cwd])
    ? (projects[context.cwd] as Record<string, unknown>)["mcpServers"]
    : undefined
  const none = Either.right({ servers: [], skipped: [] })
  const localServers = local === undefined ? none : readServers(local, "projects.mcpServers", entry)
  const userServers = Object.hasOwn(value, "mcpServers") ? readServers(value["mcpServers"], "mcpServers", entry) : none
  return Either.zipWith(localServers, userServers, (locals, users) => ({
    servers: [...locals.servers.map((server): ImportedServer => ({ ...server, scope: "local" })), ...users.servers],
    skipped: [...locals.skipped, ...users.skipped],
    inputs: []
  }))
}
