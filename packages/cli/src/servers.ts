/**
 * `phasebound servers`: the servers the config files define (`--config PATH`, else the search
 * order), where each was found (file, format, scope) and how it would be started (transport,
 * URL, command and arguments, the names of its environment variables and headers), with
 * nothing started and nothing expanded. Every value that may be a secret is `***`: header and
 * environment values, a URL's userinfo, query and fragment (docs/GUIDE.md, "Listing servers").
 */
import * as ConfigImport from "@phasebound/client/ConfigImport"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as ServersFile from "@phasebound/client/ServersFile"
import * as Effect from "effect/Effect"
import { configFailure, hintOf, loadConfigFiles } from "./config.js"
import { json, table } from "./output.js"

export const mask = "***"

/**
 * A URL as written, its userinfo, query and fragment masked. Textual (the URL may hold
 * `${VAR}` references and not parse yet): the userinfo is what precedes an `@` in the
 * authority.
 */
export const maskedUrl = (url: string): string => {
  const scheme = url.indexOf("://")
  const authorityStart = scheme === -1 ? 0 : scheme + 3
  let rest = url.slice(authorityStart)
  const cut = rest.search(/[?#]/)
  const tail = cut === -1 ? "" : rest[cut] === "?" ? `?${mask}` : `#${mask}`
  if (cut !== -1) rest = rest.slice(0, cut)
  const slash = rest.indexOf("/")
  const authority = slash === -1 ? rest : rest.slice(0, slash)
  const at = authority.lastIndexOf("@")
  const host = at === -1 ? rest : `${mask}@${rest.slice(at + 1)}`
  return url.slice(0, authorityStart) + host + tail
}

const masked = (values: Readonly<Record<string, string>> | undefined): Record<string, string> =>
  Object.fromEntries(Object.keys(values ?? {}).map((name) => [name, mask]))

const transportOf = (entry: ServersFile.ServerEntry): string =>
  ServersFile.isStdioServer(entry) ? "stdio" : entry.type === "sse" ? "sse" : entry.type === undefined ? "auto" : "streamable-http"

/** One server as listed: nothing of it a secret. */
export const describeServer = (server: ConfigImport.Found, inputs: ReadonlyArray<ConfigImport.Input>) => {
  const entry = server.entry
  const where = { file: server.file.path, format: server.file.format, scope: server.scope }
  const referenced = inputs.map((input) => ({ id: input.id, password: input.password }))
  return ServersFile.isStdioServer(entry)
    ? {
      name: server.name,
      ...where,
      transport: transportOf(entry),
      command: entry.command,
      args: entry.args ?? [],
      env: masked(entry.env),
      ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
      inputs: referenced,
      notes: server.notes
    }
    : {
      name: server.name,
      ...where,
      transport: transportOf(entry),
      url: maskedUrl(entry.url),
      headers: masked(entry.headers),
      ...(entry.auth === undefined
        ? {}
        : { auth: { grant: entry.auth.grant ?? "authorization_code", ...(entry.auth.clientId === undefined ? {} : { clientId: entry.auth.clientId }) } }),
      inputs: referenced,
      notes: server.notes
    }
}

export interface ServersListing {
  readonly files: ReadonlyArray<{ readonly path: string; readonly format: string; readonly scope: string; readonly servers: number }>
  readonly refused: ReadonlyArray<{ readonly path: string; readonly format: string | undefined; readonly reason: string; readonly at: string | undefined }>
  readonly servers: ReadonlyArray<ReturnType<typeof describeServer>>
}

export const renderServers = (listing: ServersListing, machine: boolean): string => {
  if (machine) return json(listing)
  if (listing.servers.length === 0 && listing.refused.length === 0) return "no servers found\n"
  const rows = listing.servers.map((server) => [
    server.name,
    server.transport,
    "url" in server ? server.url : [server.command, ...server.args].join(" "),
    [...Object.keys("env" in server ? server.env : server.headers)].join(",") || "-",
    server.scope,
    `${server.file} (${server.format})`
  ])
  const refused = listing.refused.map((file) => `refused: ${file.path} (${file.reason}${file.at === undefined ? "" : ` at ${file.at}`})\n`).join("")
  return table(["NAME", "TRANSPORT", "TARGET", "ENV/HEADERS", "SCOPE", "FILE"], rows) + refused
}

/** The listing of `--config`, or of the search order: a refused `--config` fails (its hint names the file and why). */
export const listServers = (
  config: string | undefined,
  format: string | undefined,
  setHint: (hint: string) => void
): Effect.Effect<ServersListing, McpConnectionError> =>
  Effect.gen(function*() {
    const loaded = yield* loadConfigFiles(config, format).pipe(
      Effect.catchTag("ConfigFileError", (error) => {
        setHint(hintOf(error))
        return Effect.fail(configFailure(error))
      })
    )
    return {
      files: loaded.files.map((file) => ({ path: file.path, format: file.format, scope: file.scope, servers: file.servers.length })),
      refused: loaded.refused.map((error) => ({ path: error.path, format: error.format, reason: error.reason, at: error.at })),
      servers: loaded.servers.map((server) => describeServer(server, ConfigImport.inputsOf(server)))
    }
  })
