/**
 * `phasebound servers`: the servers the config files define (`--config PATH`, else the search
 * order), where each was found (file, format, scope) and how it would be started (transport,
 * URL, command and arguments, the names of its environment variables and headers, the
 * variables and inputs it reads, its catalog rules), the definitions of the same name it
 * shadows, and the servers a file turns off, with nothing started and nothing expanded. Every
 * value that may be a secret is `***`: header and environment values, a URL's userinfo, query
 * and fragment, and in the arguments a URL's userinfo and query, the value of a flag or a
 * `NAME=value` whose name says key, token, secret, password, auth or credential (and the
 * argument after such a flag), and any argument that holds a `${VAR}` or an `${input:id}`
 * (docs/GUIDE.md, "Listing servers").
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

/** A name that says its value is a secret: `--api-key`, `TOKEN`, `--password`, `DB_AUTH`, `--header`... */
const secretName = /key|token|secret|passw|pwd|auth|credential|bearer|cookie|session|private|header/i

/** An argument that is a credential by its form: `Bearer ...`, `Basic ...`, `Authorization: ...`. */
const credentialForm = /^(?:bearer|basic|token)\s|^[A-Za-z-]*auth[A-Za-z-]*\s*:/i

/** `scheme://...`: a URL, whose userinfo and query may hold credentials. */
const urlLike = /^[a-z][a-z0-9+.-]*:\/\//i

/** A value shown in the arguments: a URL's userinfo, query and fragment masked, else as written. */
const maskedValue = (value: string): string => urlLike.test(value) ? maskedUrl(value) : value

/** A flag that takes its value in the next argument: `-x`, `--name` (no `=`). */
const flagName = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/

/**
 * The arguments as listed: each one that holds a reference to the environment or an input is
 * `***` (what it becomes is a secret of the environment), and so is one that is a credential by
 * its form (`Bearer ...`, `Authorization: ...`); a `--flag=value` or `NAME=value` whose name says
 * it is a secret shows `***` for its value, and so does the argument after such a flag; a URL
 * (alone or as a value) has its userinfo, query and fragment masked.
 */
export const maskedArgs = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const shown: Array<string> = []
  let nextIsSecret = false
  for (const arg of args) {
    const secretValue = nextIsSecret
    nextIsSecret = false
    if (secretValue || credentialForm.test(arg) || ServersFile.referencesOf(arg).some((reference) => reference.kind !== "builtin")) {
      shown.push(mask)
      continue
    }
    const equals = arg.indexOf("=")
    if (equals > 0 && !urlLike.test(arg)) {
      const name = arg.slice(0, equals)
      shown.push(`${name}=${secretName.test(name) ? mask : maskedValue(arg.slice(equals + 1))}`)
      continue
    }
    const flag = flagName.exec(arg)
    if (flag !== null && secretName.test(flag[1]!)) nextIsSecret = true
    shown.push(maskedValue(arg))
  }
  return shown
}

const transportOf = (entry: ServersFile.ServerEntry): string =>
  ServersFile.isStdioServer(entry) ? "stdio" : entry.type === "sse" ? "sse" : entry.type === undefined ? "auto" : "streamable-http"

/** The catalog's rules of an entry (its prefix, allow and block lists: patterns, never secrets), when it has any. */
const catalogOf = (entry: ServersFile.ServerEntry) =>
  entry.prefix === undefined && entry.allowTools === undefined && entry.blockTools === undefined
    ? {}
    : {
      catalog: {
        ...(entry.prefix === undefined ? {} : { prefix: entry.prefix }),
        ...(entry.allowTools === undefined ? {} : { allowTools: entry.allowTools }),
        ...(entry.blockTools === undefined ? {} : { blockTools: entry.blockTools })
      }
    }

/** One definition as listed (where, how it starts, what it reads): nothing of it a secret. */
const describeDefinition = (server: ConfigImport.Definition) => {
  const entry = server.entry
  const where = { file: server.file.path, format: server.file.format, scope: server.scope }
  const inputs = ConfigImport.inputsOf(server).map((input) => ({ id: input.id, password: input.password }))
  // Names, never values: what starting it would read from the environment.
  const reads = { variables: ConfigImport.variablesOf(server), inputs }
  return ServersFile.isStdioServer(entry)
    ? {
      ...where,
      transport: transportOf(entry),
      command: entry.command,
      args: maskedArgs(entry.args ?? []),
      env: masked(entry.env),
      ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
      ...reads,
      ...catalogOf(entry),
      notes: server.notes
    }
    : {
      ...where,
      transport: transportOf(entry),
      url: maskedUrl(entry.url),
      headers: masked(entry.headers),
      ...(entry.auth === undefined
        ? {}
        : { auth: { grant: entry.auth.grant ?? "authorization_code", ...(entry.auth.clientId === undefined ? {} : { clientId: entry.auth.clientId }) } }),
      ...reads,
      ...catalogOf(entry),
      notes: server.notes
    }
}

/** One server as listed: the definition that wins, and those of the same name it shadows (docs/SECURITY.md, "5. The contents of config files"). */
export const describeServer = (server: ConfigImport.Found) => ({
  name: server.name,
  ...describeDefinition(server),
  shadowed: server.shadowed.map(describeDefinition)
})

export interface ServersListing {
  readonly files: ReadonlyArray<
    {
      readonly path: string
      readonly format: string
      readonly scope: string
      readonly servers: number
      /** The servers the file turns off, and why. */
      readonly skipped: ReadonlyArray<{ readonly name: string; readonly note: string }>
    }
  >
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
  const shadowed = listing.servers.flatMap((server) =>
    server.shadowed.map((definition) =>
      `shadowed: ${server.name} of ${definition.file} (${definition.scope}, ${
        "url" in definition ? definition.url : definition.command
      }) by ${server.file} (${server.scope})\n`
    )
  ).join("")
  const reads = listing.servers.filter((server) => server.variables.length > 0).map((server) =>
    `reads: ${server.name}: ${server.variables.map((name) => `\${${name}}`).join(" ")}\n`
  ).join("")
  const skipped = listing.files.flatMap((file) => file.skipped.map((server) => `skipped: ${server.name} in ${file.path} (${server.note})\n`)).join("")
  return table(["NAME", "TRANSPORT", "TARGET", "ENV/HEADERS", "SCOPE", "FILE"], rows) + reads + shadowed + skipped + refused
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
      files: loaded.files.map((file) => ({ path: file.path, format: file.format, scope: file.scope, servers: file.servers.length, skipped: file.skipped })),
      refused: loaded.refused.map((error) => ({ path: error.path, format: error.format, reason: error.reason, at: error.at })),
      servers: loaded.servers.map(describeServer)
    }
  })
