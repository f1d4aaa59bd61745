/**
 * Codex: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`) and a project's
 * `.codex/config.toml`, one `[mcp_servers.<name>]` table per server. What the model has is
 * mapped: `command`, `args`, `env`, `cwd`, `url`, `http_headers`; `bearer_token_env_var` becomes
 * `Authorization: Bearer ${VAR}`, each `env_http_headers` entry `Name: ${VAR}`, each
 * `env_vars` name `NAME=${NAME:-}`; `enabled = false` leaves the server out. The rest
 * (timeouts, tool filters, OAuth settings) is read past with a note.
 */
import * as Either from "effect/Either"
import type * as ServersFile from "../../ServersFile.js"
import { type FormatProblem, type ImportedServer, isRecord, type Reader, readServers, strictEntry } from "./model.js"

const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/

const strings = (value: unknown): value is ReadonlyArray<string> => Array.isArray(value) && value.every((item) => typeof item === "string")
const stringTable = (value: unknown): value is Readonly<Record<string, string>> =>
  isRecord(value) && Object.values(value).every((item) => typeof item === "string")

const notes: Readonly<Record<string, string>> = {
  startup_timeout_sec: "startup_timeout_sec is not applied: the discovery budget bounds the start",
  startup_timeout_ms: "startup_timeout_ms is not applied: the discovery budget bounds the start",
  tool_timeout_sec: "tool_timeout_sec is not applied: the call budget bounds each call",
  enabled_tools: "enabled_tools is not applied",
  disabled_tools: "disabled_tools is not applied",
  scopes: "scopes is not applied: give auth.scope",
  oauth_resource: "oauth_resource is not applied"
}

const mapped = new Set(["command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers", "env_http_headers", "enabled"])

const entry = (name: string, raw: unknown): Either.Either<ImportedServer | undefined, FormatProblem> => {
  const refuse = Either.left<FormatProblem>({ reason: "invalid-value", at: name })
  if (!isRecord(raw)) return refuse
  if (raw["enabled"] !== undefined && typeof raw["enabled"] !== "boolean") return refuse
  if (raw["enabled"] === false) return Either.right(undefined)
  const read: Array<string> = []
  for (const key of Object.keys(raw)) if (!mapped.has(key)) read.push(notes[key] ?? `${key} is not read`)
  let shaped: ServersFile.ServerEntry | Record<string, unknown>
  if (raw["url"] !== undefined) {
    if (raw["command"] !== undefined || raw["args"] !== undefined || raw["env"] !== undefined || raw["env_vars"] !== undefined || raw["cwd"] !== undefined) {
      return refuse
    }
    const headers: Record<string, string> = {}
    if (raw["http_headers"] !== undefined) {
      if (!stringTable(raw["http_headers"])) return refuse
      Object.assign(headers, raw["http_headers"])
    }
    if (raw["env_http_headers"] !== undefined) {
      if (!stringTable(raw["env_http_headers"])) return refuse
      for (const [header, variable] of Object.entries(raw["env_http_headers"])) {
        if (!variableName.test(variable)) return refuse
        headers[header] = `\${${variable}}`
      }
    }
    const bearer = raw["bearer_token_env_var"]
    if (bearer !== undefined) {
      if (typeof bearer !== "string" || !variableName.test(bearer)) return refuse
      headers["Authorization"] = `Bearer \${${bearer}}`
    }
    shaped = { url: raw["url"], ...(Object.keys(headers).length > 0 ? { headers } : {}) }
  } else {
    if (raw["http_headers"] !== undefined || raw["env_http_headers"] !== undefined || raw["bearer_token_env_var"] !== undefined) return refuse
    const env: Record<string, string> = {}
    if (raw["env_vars"] !== undefined) {
      if (!strings(raw["env_vars"]) || !raw["env_vars"].every((variable) => variableName.test(variable))) return refuse
      for (const variable of raw["env_vars"]) env[variable] = `\${${variable}:-}`
    }
    if (raw["env"] !== undefined) {
      if (!stringTable(raw["env"])) return refuse
      Object.assign(env, raw["env"])
    }
    if (raw["args"] !== undefined && !strings(raw["args"])) return refuse
    shaped = {
      command: raw["command"],
      ...(raw["args"] === undefined ? {} : { args: raw["args"] }),
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(raw["cwd"] === undefined ? {} : { cwd: raw["cwd"] })
    }
  }
  return Either.map(strictEntry(name, shaped), (entry): ImportedServer => ({ name, entry, notes: read }))
}

export const read: Reader = (value) => {
  if (!isRecord(value) || !Object.hasOwn(value, "mcp_servers")) return Either.left({ reason: "invalid-value", at: "mcp_servers" })
  return Either.map(readServers(value["mcp_servers"], "mcp_servers", entry), (servers) => ({ servers, inputs: [] }))
}
