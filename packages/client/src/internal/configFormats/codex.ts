/**
 * Codex: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`) and a project's
 * `.codex/config.toml`, one `[mcp_servers.<name>]` table per server. What the model has is
 * mapped: `command`, `args`, `env`, `cwd`, `url`, `http_headers`; `bearer_token_env_var` becomes
 * `Authorization: Bearer ${VAR}`, each `env_http_headers` entry `Name: ${VAR}`, each
 * `env_vars` name `NAME=${NAME:-}`; `enabled = false` leaves the server out.
 *
 * Tool filters become the catalog's lists (`McpCatalog`): `enabled_tools` (exact names) the
 * allow list, `disabled_tools` the block list, each name's glob characters escaped. The catalog's
 * own keys are written as Codex writes its keys, in snake case: `prefix`, `allow_tools` and
 * `block_tools` (glob patterns). `enabled_tools` and `allow_tools` together are refused (which
 * one should narrow the other?); `disabled_tools` and `block_tools` add up.
 *
 * Timeouts and OAuth settings are read past with a note; an unknown key is noted, or refused
 * when its name says ignoring it could change what happens (`model.ts`, `sortFields`).
 */
import * as Either from "effect/Either"
import type * as ServersFile from "../../ServersFile.js"
import { exactToolPatterns, type EntryRead, type FormatProblem, isRecord, type Reader, readServers, sortFields, strictEntry, toolNames } from "./model.js"

const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/

const strings = (value: unknown): value is ReadonlyArray<string> => Array.isArray(value) && value.every((item) => typeof item === "string")
const stringTable = (value: unknown): value is Readonly<Record<string, string>> =>
  isRecord(value) && Object.values(value).every((item) => typeof item === "string")

const notes: Readonly<Record<string, string>> = {
  startup_timeout_sec: "startup_timeout_sec is not applied: the discovery budget bounds the start",
  startup_timeout_ms: "startup_timeout_ms is not applied: the discovery budget bounds the start",
  tool_timeout_sec: "tool_timeout_sec is not applied: the call budget bounds each call",
  scopes: "scopes is not applied: give auth.scope",
  oauth_resource: "oauth_resource is not applied"
}

const mapped = new Set([
  "command",
  "args",
  "env",
  "env_vars",
  "cwd",
  "url",
  "bearer_token_env_var",
  "http_headers",
  "env_http_headers",
  "enabled",
  "enabled_tools",
  "disabled_tools",
  "prefix",
  "allow_tools",
  "block_tools"
])

/** The catalog's fields of a table: its prefix, and its allow and block lists from both spellings. */
const catalogFields = (
  raw: Readonly<Record<string, unknown>>
): Either.Either<Pick<ServersFile.ServerEntry, "prefix" | "allowTools" | "blockTools">, string> => {
  const list = (key: string): Either.Either<ReadonlyArray<string> | undefined, string> => {
    if (raw[key] === undefined) return Either.right(undefined)
    const names = toolNames(raw[key])
    return names === undefined ? Either.left(key) : Either.right(names)
  }
  return Either.gen(function*() {
    const enabled = yield* list("enabled_tools")
    const disabled = yield* list("disabled_tools")
    const allow = yield* list("allow_tools")
    const block = yield* list("block_tools")
    if (enabled !== undefined && allow !== undefined) return yield* Either.left("allow_tools")
    const prefix = raw["prefix"]
    if (prefix !== undefined && typeof prefix !== "string" && prefix !== false) return yield* Either.left("prefix")
    const allowTools = allow ?? (enabled === undefined ? undefined : exactToolPatterns(enabled))
    const blockTools = block === undefined && disabled === undefined ? undefined : [...(block ?? []), ...exactToolPatterns(disabled ?? [])]
    return {
      ...(prefix === undefined ? {} : { prefix: prefix as string | false }),
      ...(allowTools === undefined ? {} : { allowTools }),
      ...(blockTools === undefined ? {} : { blockTools })
    }
  })
}

const entry = (name: string, raw: unknown): EntryRead => {
  const refuse = (field?: string) => Either.left<FormatProblem>({ reason: "invalid-value", at: field === undefined ? name : `${name}.${field}` })
  if (!isRecord(raw)) return refuse()
  if (raw["enabled"] !== undefined && typeof raw["enabled"] !== "boolean") return refuse("enabled")
  if (raw["enabled"] === false) return Either.right({ name, skipped: "enabled = false: left out" })
  // Codex's own keys, mapped below; none of the other clients' common fields is noted.
  const sorted = sortFields(name, raw, notes, mapped, {})
  if (Either.isLeft(sorted)) return Either.left(sorted.left)
  const catalog = catalogFields(raw)
  if (Either.isLeft(catalog)) return refuse(catalog.left)
  let shaped: ServersFile.ServerEntry | Record<string, unknown>
  if (raw["url"] !== undefined) {
    if (raw["command"] !== undefined || raw["args"] !== undefined || raw["env"] !== undefined || raw["env_vars"] !== undefined || raw["cwd"] !== undefined) {
      return refuse()
    }
    const headers: Record<string, string> = {}
    if (raw["http_headers"] !== undefined) {
      if (!stringTable(raw["http_headers"])) return refuse()
      Object.assign(headers, raw["http_headers"])
    }
    if (raw["env_http_headers"] !== undefined) {
      if (!stringTable(raw["env_http_headers"])) return refuse()
      for (const [header, variable] of Object.entries(raw["env_http_headers"])) {
        if (!variableName.test(variable)) return refuse()
        headers[header] = `\${${variable}}`
      }
    }
    const bearer = raw["bearer_token_env_var"]
    if (bearer !== undefined) {
      if (typeof bearer !== "string" || !variableName.test(bearer)) return refuse()
      headers["Authorization"] = `Bearer \${${bearer}}`
    }
    shaped = { url: raw["url"], ...(Object.keys(headers).length > 0 ? { headers } : {}), ...catalog.right }
  } else {
    if (raw["http_headers"] !== undefined || raw["env_http_headers"] !== undefined || raw["bearer_token_env_var"] !== undefined) return refuse()
    const env: Record<string, string> = {}
    if (raw["env_vars"] !== undefined) {
      if (!strings(raw["env_vars"]) || !raw["env_vars"].every((variable) => variableName.test(variable))) return refuse()
      for (const variable of raw["env_vars"]) env[variable] = `\${${variable}:-}`
    }
    if (raw["env"] !== undefined) {
      if (!stringTable(raw["env"])) return refuse()
      Object.assign(env, raw["env"])
    }
    if (raw["args"] !== undefined && !strings(raw["args"])) return refuse()
    shaped = {
      command: raw["command"],
      ...(raw["args"] === undefined ? {} : { args: raw["args"] }),
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(raw["cwd"] === undefined ? {} : { cwd: raw["cwd"] }),
      ...catalog.right
    }
  }
  return Either.map(strictEntry(name, shaped), (entry) => ({ name, entry, notes: sorted.right.notes }))
}

export const read: Reader = (value) => {
  if (!isRecord(value) || !Object.hasOwn(value, "mcp_servers")) return Either.left({ reason: "invalid-value", at: "mcp_servers" })
  return Either.map(readServers(value["mcp_servers"], "mcp_servers", entry), (read) => ({ ...read, inputs: [] }))
}
