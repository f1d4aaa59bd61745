/**
 * What `<target>` names: a URL, a `--stdio 'command args...'` line, or a server of the config
 * file. Everything is resolved and validated here, before any I/O, into InvalidOption errors
 * that name the option and never echo a value.
 */
import type { McpClient } from "@phasebound/client"
import type { InvalidOption } from "@phasebound/client/McpConnectionError"
import * as ServersFile from "@phasebound/client/ServersFile"
import * as Effect from "effect/Effect"
import * as ConfigImport from "@phasebound/client/ConfigImport"
import * as Either from "effect/Either"
import * as path from "node:path"
import { type AuthEntry, configFailure, findServer, inputValues, isStdioServer, loadConfig, type HttpServer, type StdioServer } from "./config.js"
import { McpConnectionError } from "@phasebound/client"
import { flag, type FlagName } from "./flags.js"
import { invalidOption } from "./record.js"
import { splitWords } from "./words.js"

export type Target =
  | {
    readonly _tag: "Http"
    readonly url: string
    readonly headers: Readonly<Record<string, string>>
    readonly transport: McpClient.TransportChoice
    /** Every configured secret value, for scrubbing the debug output. */
    readonly secrets: ReadonlyArray<string>
    /**
     * Where a credential of the caller's is configured (an `Authorization` header from
     * `--header` or the config entry, or URL userinfo that becomes one), named as in records;
     * undefined when there is none. With one the connection does no OAuth (the library refuses
     * both).
     */
    readonly authorization: FlagName<"header"> | `${FlagName<"config">} headers` | "target" | undefined
    /** The config entry's `auth` object, as written (its `${VAR}` not expanded yet). */
    readonly auth: AuthEntry | undefined
    /** The directory of the config file the entry came from (relative `privateKeyFile`s are read from there). */
    readonly configDir: string | undefined
  }
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>>
    readonly cwd: string | undefined
    readonly secrets: ReadonlyArray<string>
  }

export interface TargetOptions {
  /** The positional `<target>`, when one was given. */
  readonly target: string | undefined
  readonly stdio: string | undefined
  readonly config: string | undefined
  /** `--format`: the config file's format instead of detecting it. */
  readonly format?: string | undefined
  /** `--header 'Name: value'`, repeated. */
  readonly headers: ReadonlyArray<string>
  readonly transport: McpClient.TransportChoice | undefined
  /** `--env KEY=VALUE`, repeated (stdio only). */
  readonly env?: ReadonlyArray<string> | undefined
  /** `--env-pass NAME`, repeated (stdio only). */
  readonly envPass?: ReadonlyArray<string> | undefined
}

export type Environment = Readonly<Record<string, string | undefined>>

const looksLikeUrl = (text: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(text)

/**
 * Expands `${VAR}` (`${env:VAR}`, `${VAR:-default}`) from the environment, as the client's
 * `ServersFile.expand` does (one pass, no `$VAR`), so secrets stay out of shell history and
 * config files. An unset variable fails with `onUnset`.
 */
export const expandVariables = <E>(value: string, env: Environment, onUnset: () => E): Effect.Effect<string, E> => {
  const expanded = ServersFile.expand(value, (name) => env[name])
  return expanded === undefined ? Effect.fail(onUnset()) : Effect.succeed(expanded)
}

/**
 * A config entry with its variables, inputs and directories resolved, under one budget for the
 * whole entry (`ConfigImport.expandEntry`); a failure names the field (`--config <field>`) or
 * the input (`--config inputs.<id>`), never a value.
 */
const expandedEntry = <Entry extends ConfigImport.Found["entry"]>(
  entry: Entry,
  file: ConfigImport.File,
  values: ConfigImport.Values
): Effect.Effect<Entry, InvalidOption> => {
  const expanded = ConfigImport.expandEntry(entry, file, values)
  if (Either.isRight(expanded)) return Effect.succeed(expanded.right)
  const { field, problem } = expanded.left
  return Effect.fail(
    invalidOption(
      problem !== "too-large" && problem.kind === "input" ? `${flag("config")} inputs.${problem.name}` : `${flag("config")} ${field}`,
      "invalid-value"
    )
  )
}

// RFC 7230 token.
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** `Name: value` into a pair; the value may use `${VAR}`. */
export const parseHeader = (line: string, env: Environment): Effect.Effect<readonly [string, string], InvalidOption> =>
  Effect.gen(function*() {
    const colon = line.indexOf(":")
    const name = colon === -1 ? "" : line.slice(0, colon).trim()
    if (!headerName.test(name)) return yield* Effect.fail(invalidOption(flag("header"), "invalid-value"))
    const value = yield* expandVariables(line.slice(colon + 1).trim(), env, () => invalidOption(flag("header"), "invalid-value"))
    return [name, value] as const
  })

/** Header pairs into a record; later names win, compared case-insensitively. */
const mergeHeaders = (...lists: ReadonlyArray<ReadonlyArray<readonly [string, string]>>): Record<string, string> => {
  const merged = new Map<string, readonly [string, string]>()
  for (const list of lists) for (const pair of list) merged.set(pair[0].toLowerCase(), pair)
  return Object.fromEntries([...merged.values()])
}

const hasAuthorization = (pairs: ReadonlyArray<readonly [string, string]>): boolean => pairs.some(([name]) => name.toLowerCase() === "authorization")

const httpTarget = (
  url: string,
  configured: ReadonlyArray<readonly [string, string]>,
  flagHeaders: ReadonlyArray<readonly [string, string]>,
  transport: McpClient.TransportChoice,
  entry?: { readonly auth: AuthEntry | undefined; readonly configDir: string }
): Effect.Effect<Target, InvalidOption> =>
  Effect.gen(function*() {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return yield* Effect.fail(invalidOption("target", "invalid-url"))
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return yield* Effect.fail(invalidOption("target", "invalid-url"))
    }
    const headers = mergeHeaders(configured, flagHeaders)
    return {
      _tag: "Http",
      url,
      headers,
      transport,
      secrets: McpConnectionError.secretsOf(parsed, headers),
      authorization: hasAuthorization(flagHeaders)
        ? flag("header")
        : hasAuthorization(configured)
        ? `${flag("config")} headers` as const
        : parsed.username !== "" || parsed.password !== ""
        ? "target"
        : undefined,
      auth: entry?.auth,
      configDir: entry?.configDir
    }
  })

const transportOfType = (type: HttpServer["type"]): McpClient.TransportChoice => type === "sse" ? "sse" : type === undefined ? "auto" : "streamable-http"

/** An HTTP entry, already expanded; its `auth` as written (its client secret is expanded where the authorization is made). */
const fromHttpEntry = (
  entry: HttpServer,
  written: HttpServer,
  file: ConfigImport.File,
  options: TargetOptions,
  flagHeaders: ReadonlyArray<readonly [string, string]>
) =>
  httpTarget(entry.url, Object.entries(entry.headers ?? {}), flagHeaders, options.transport ?? transportOfType(entry.type), {
    auth: written.auth,
    configDir: path.dirname(path.resolve(file.path))
  })

const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The variables the flags add to a stdio server's environment: `--env-pass NAME` (from this
 * process's environment, when set), then `--env KEY=VALUE` (`${VAR}` expanded), later ones
 * winning. Both are added on top of the config entry's `env` (packages/cli/README.md, "The
 * server's environment").
 */
export const flagEnvironment = (
  options: Pick<TargetOptions, "env" | "envPass">,
  env: Environment
): Effect.Effect<Record<string, string>, InvalidOption> =>
  Effect.gen(function*() {
    const added: Record<string, string> = {}
    for (const name of options.envPass ?? []) {
      if (!variableName.test(name)) return yield* Effect.fail(invalidOption(flag("envPass"), "invalid-value"))
      const found = env[name]
      if (found !== undefined) added[name] = found
    }
    for (const line of options.env ?? []) {
      const equals = line.indexOf("=")
      const name = equals === -1 ? "" : line.slice(0, equals)
      if (!variableName.test(name)) return yield* Effect.fail(invalidOption(flag("env"), "invalid-value"))
      added[name] = yield* expandVariables(line.slice(equals + 1), env, () => invalidOption(flag("env"), "invalid-value"))
    }
    return added
  })

const stdioTarget = (
  command: string,
  args: ReadonlyArray<string>,
  childEnv: Record<string, string>,
  cwd: string | undefined
): Target => ({
  _tag: "Stdio",
  command,
  args,
  env: childEnv,
  cwd,
  // Every value given to the child (config, --env, --env-pass) is scrubbed like a header value.
  secrets: McpConnectionError.secretValues(Object.values(childEnv))
})

/** A stdio entry, already expanded, with the flags' variables on top of its environment. */
const fromStdioEntry = (entry: StdioServer, flagEnv: Record<string, string>): Target =>
  stdioTarget(entry.command, entry.args ?? [], { ...(entry.env ?? {}), ...flagEnv }, entry.cwd)

/** `--env` and `--env-pass` mean nothing to an HTTP server: refused rather than ignored. */
const refuseEnvFlags = (options: TargetOptions): Effect.Effect<void, InvalidOption> =>
  (options.env ?? []).length > 0
    ? Effect.fail(invalidOption(flag("env"), "invalid-value"))
    : (options.envPass ?? []).length > 0
    ? Effect.fail(invalidOption(flag("envPass"), "invalid-value"))
    : Effect.void

/** Resolves the target, reading the config file only when a server name is given. */
export const resolveTarget = (options: TargetOptions, env: Environment): Effect.Effect<Target, InvalidOption> =>
  Effect.gen(function*() {
    const flagHeaders: Array<readonly [string, string]> = []
    for (const line of options.headers) flagHeaders.push(yield* parseHeader(line, env))

    if (options.stdio !== undefined) {
      if (options.target !== undefined) return yield* Effect.fail(invalidOption("target", "invalid-value"))
      // Headers and a transport choice mean nothing to a child process: refuse rather than ignore.
      if (flagHeaders.length > 0) return yield* Effect.fail(invalidOption(flag("header"), "invalid-value"))
      if (options.transport !== undefined) return yield* Effect.fail(invalidOption(flag("transport"), "invalid-value"))
      const split = splitWords(options.stdio)
      if (split._tag === "Invalid" || split.words.length === 0) return yield* Effect.fail(invalidOption(flag("stdio"), "invalid-value"))
      const [command, ...args] = split.words
      return stdioTarget(command!, args, yield* flagEnvironment(options, env), undefined)
    }

    if (options.target === undefined) return yield* Effect.fail(invalidOption("target", "invalid-value"))
    if (looksLikeUrl(options.target)) {
      yield* refuseEnvFlags(options)
      return yield* httpTarget(options.target, [], flagHeaders, options.transport ?? "auto")
    }

    // A server name: from --config, or the files of the search order (docs/GUIDE.md, "Search order").
    const config = yield* loadConfig(options.config, options.format)
    const found = findServer(config, options.target)
    if (Either.isLeft(found)) return yield* Effect.fail(found.left === undefined ? invalidOption("target", "invalid-value") : configFailure(found.left))
    const server = found.right
    const inputs = yield* inputValues(server, env)
    const values: ConfigImport.Values = { env: (name) => env[name], inputs: (id) => inputs.get(id), home: env["HOME"] ?? env["USERPROFILE"] }
    const written = server.entry
    // An input's value, and a variable's, is a secret wherever it went (an argument, a URL): scrubbed too.
    const referenced = McpConnectionError.secretValues(ConfigImport.secretsOf(server, values))
    const withReferenced = (target: Target): Target => ({ ...target, secrets: [...target.secrets, ...referenced] })
    if (isStdioServer(written)) {
      if (flagHeaders.length > 0) return yield* Effect.fail(invalidOption(flag("header"), "invalid-value"))
      if (options.transport !== undefined) return yield* Effect.fail(invalidOption(flag("transport"), "invalid-value"))
      const flagEnv = yield* flagEnvironment(options, env)
      const entry = yield* expandedEntry(written, server.file, values)
      return withReferenced(fromStdioEntry(entry, flagEnv))
    }
    yield* refuseEnvFlags(options)
    // The auth object is read where the authorization is made (a flag may override its secret).
    const { auth: _, ...reached } = written
    const entry = yield* expandedEntry(reached, server.file, values)
    return withReferenced(yield* fromHttpEntry(entry, written, server.file, options, flagHeaders))
  })
