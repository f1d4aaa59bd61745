/**
 * The config files: `--config PATH` (any format the client's `ConfigImport` reads, detected from
 * the file's name and content, or `--format`), else the search order (the project's files, then
 * the user's: docs/GUIDE.md, "Search order"). Every problem is an InvalidOption naming
 * `--config` (or `--format`); the file's content is never echoed, and its path and the reason
 * only in the hint a terminal is shown.
 */
import { SystemError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as ConfigImport from "@phasebound/client/ConfigImport"
import type { InvalidOption } from "@phasebound/client/McpConnectionError"
import * as ServersFile from "@phasebound/client/ServersFile"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { readFileSync, statSync } from "node:fs"
import * as Schema from "effect/Schema"
import { flag } from "./flags.js"
import { invalidOption } from "./record.js"

export type { AuthEntry, HttpServer, ServerEntry, StdioServer } from "@phasebound/client/ServersFile"
export const isStdioServer = ServersFile.isStdioServer

/** What the config files gave: every server found (the first definition of a name wins). */
export interface LoadedConfig {
  readonly files: ReadonlyArray<ConfigImport.File>
  readonly servers: ReadonlyArray<ConfigImport.Found>
  /** Files of the search order that exist but were refused (never with `--config`: that fails). */
  readonly refused: ReadonlyArray<ConfigImport.ConfigFileError>
}

/**
 * The two file operations the reading needs, synchronous: the CLI resolves its target before
 * any other I/O, in one step.
 */
const systemError = (method: string, error: unknown) =>
  new SystemError({
    module: "FileSystem",
    method,
    reason: typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT" ? "NotFound" : "Unknown"
  })

const syncFiles = FileSystem.layerNoop({
  stat: (path) =>
    Effect.try({
      try: (): FileSystem.File.Info => {
        const info = statSync(path)
        return {
          type: info.isFile() ? "File" : info.isDirectory() ? "Directory" : "Unknown",
          mtime: Option.some(info.mtime),
          atime: Option.some(info.atime),
          birthtime: Option.some(info.birthtime),
          dev: info.dev,
          ino: Option.some(info.ino),
          mode: info.mode,
          nlink: Option.some(info.nlink),
          uid: Option.some(info.uid),
          gid: Option.some(info.gid),
          rdev: Option.some(info.rdev),
          size: FileSystem.Size(info.size),
          blksize: Option.some(FileSystem.Size(info.blksize)),
          blocks: Option.some(info.blocks)
        }
      },
      catch: (error) => systemError("stat", error)
    }),
  readFile: (path) => Effect.try({ try: () => new Uint8Array(readFileSync(path)), catch: (error) => systemError("readFile", error) })
})

const platform = Layer.merge(syncFiles, NodePath.layer)

/** A refused file as the record's reason: JSON syntax is `invalid-json`, the rest `invalid-value`. */
/** The line a terminal is shown under the record: the file and why (never its content). */
export const hintOf = (error: ConfigImport.ConfigFileError): string =>
  `config file ${error.path}: ${error.reason}${error.format === undefined ? "" : ` (${error.format})`}${error.at === undefined ? "" : ` at ${error.at}`}`

/** The config file's error as the run's InvalidOption (`--config`). */
export const configFailure = (error: ConfigImport.ConfigFileError): InvalidOption => invalidOption(flag("config"), ConfigImport.invalidOptionReason(error))

/** `--format`: one of `ConfigImport.Format`. */
export const formatOf = (format: string | undefined): Effect.Effect<ConfigImport.Format | undefined, InvalidOption> =>
  format === undefined
    ? Effect.succeed(undefined)
    : Schema.is(ConfigImport.Format)(format)
    ? Effect.succeed(format)
    : Effect.fail(invalidOption(flag("format"), "invalid-value"))

/**
 * Reads `--config` (a refusal fails with the file's error), else every file of the search order
 * in `cwd` that exists.
 */
export const loadConfigFiles = (
  path: string | undefined,
  format: string | undefined,
  cwd: string = process.cwd()
): Effect.Effect<LoadedConfig, InvalidOption | ConfigImport.ConfigFileError> =>
  Effect.gen(function*() {
    const chosen = yield* formatOf(format)
    if (path === undefined) {
      if (chosen !== undefined) return yield* Effect.fail(invalidOption(flag("format"), "invalid-value"))
      const found = yield* ConfigImport.discover({ cwd })
      return { files: found.files, servers: ConfigImport.serversOf(found.files), refused: found.refused }
    }
    const file = yield* ConfigImport.read(path, { format: chosen, cwd })
    return { files: [file], servers: ConfigImport.serversOf([file]), refused: [] }
  }).pipe(Effect.provide(platform))

/** `loadConfigFiles`, a refused file as the run's InvalidOption (`--config`). */
export const loadConfig = (
  path: string | undefined,
  format?: string | undefined,
  cwd?: string | undefined
): Effect.Effect<LoadedConfig, InvalidOption> =>
  loadConfigFiles(path, format, cwd ?? process.cwd()).pipe(Effect.catchTag("ConfigFileError", (error) => Effect.fail(configFailure(error))))

/** The server of that name, or the reason there is none (a refused file of the search may have held it). */
export const findServer = (
  config: LoadedConfig,
  name: string
): Either.Either<ConfigImport.Found, ConfigImport.ConfigFileError | undefined> => {
  const found = config.servers.find((server) => server.name === name)
  return found !== undefined ? Either.right(found) : Either.left(config.refused[0])
}

/** Reads one line from a terminal, not echoed when `hidden` (a `password` input). */
const askLine = (question: string, hidden: boolean): Effect.Effect<string | undefined> =>
  Effect.async<string | undefined>((resume) => {
    const stdin = process.stdin
    const chunks: Array<string> = []
    const wasRaw = stdin.isRaw
    // No echo before the question shows: an answer typed as soon as it appears must not echo.
    if (hidden) stdin.setRawMode(true)
    process.stderr.write(question)
    const finish = (line: string | undefined) => {
      stdin.off("data", onData)
      if (hidden) stdin.setRawMode(wasRaw)
      stdin.pause()
      process.stderr.write("\n")
      resume(Effect.succeed(line))
    }
    const onData = (data: Buffer) => {
      for (const char of data.toString("utf8")) {
        if (char === "\r" || char === "\n") return finish(chunks.join(""))
        if (char === "\u0003" || char === "\u0004") return finish(undefined)
        if (char === "\u007f" || char === "\b") chunks.pop()
        else chunks.push(char)
        if (chunks.length > 65536) return finish(undefined)
      }
    }
    stdin.setEncoding("utf8")
    stdin.on("data", onData)
    stdin.resume()
    return Effect.sync(() => finish(undefined))
  })

/**
 * The values of the inputs a server references: `PHASEBOUND_INPUT_<ID>` when set, else asked on
 * a terminal (hidden when `password`), else an InvalidOption naming the input
 * (`--config inputs.<id>`), never a value.
 */
export const inputValues = (
  server: ConfigImport.Found,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<ReadonlyMap<string, string>, InvalidOption> =>
  Effect.gen(function*() {
    const values = new Map<string, string>()
    for (const input of ConfigImport.inputsOf(server)) {
      const given = env[ConfigImport.inputVariable(input.id)]
      if (given !== undefined) {
        values.set(input.id, given)
        continue
      }
      const asked = process.stdin.isTTY === true && process.stderr.isTTY === true
        ? yield* askLine(`${input.description ?? input.id} (${input.id}${input.password ? ", hidden" : ""}): `, input.password)
        : undefined
      if (asked === undefined) return yield* Effect.fail(invalidOption(`${flag("config")} inputs.${input.id}`, "invalid-value"))
      values.set(input.id, asked)
    }
    return values
  })
