/**
 * What every format reader gives: the servers of one file as `ServersFile.ServerEntry` values
 * (as written: their references are expanded when a server is started, not when it is read),
 * the inputs the file declares, a note for each setting that was read but not used, and the
 * servers the file turns off.
 *
 * The formats of other clients are read leniently where that is safe (docs/DESIGN.md, "Config
 * files"): a field of the model is decoded strictly; a field the format is known to have and the
 * model does not is noted; `disabled: true` leaves the server out; an unknown field is read past
 * with a note naming it, unless its name speaks of what ignoring it could change (tools, access,
 * credentials, the transport, what and where to run): that one refuses the file.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ServersFile from "../../ServersFile.js"
import * as Glob from "../catalog/glob.js"
import { maxNameLength } from "../catalog/rules.js"

/** A VS Code input: asked for when a server that references it is started. */
export interface InputSpec {
  readonly id: string
  readonly description: string | undefined
  /** Hidden when typed, masked when listed. */
  readonly password: boolean
}

export interface ImportedServer {
  readonly name: string
  readonly entry: ServersFile.ServerEntry
  /** Settings of the file read but not used (never a value): `envFile is not read`. */
  readonly notes: ReadonlyArray<string>
  /** Claude Code's local scope (`projects[<cwd>]` of `~/.claude.json`); else the file's scope. */
  readonly scope?: "local" | undefined
}

/** A server the file defines and turns off (`disabled: true`, Codex's `enabled = false`): left out, with why. */
export interface SkippedServer {
  readonly name: string
  readonly skipped: string
}

export interface Imported {
  readonly servers: ReadonlyArray<ImportedServer>
  readonly inputs: ReadonlyArray<InputSpec>
  /** The servers left out, in order. */
  readonly skipped?: ReadonlyArray<SkippedServer> | undefined
}

/** Why a file's content was refused. `at` names the server or setting (never a value). */
export interface FormatProblem {
  readonly reason: "invalid-value" | "invalid-name" | "unsupported"
  readonly at?: string | undefined
}

export type Reader = (value: unknown, context: ReaderContext) => Either.Either<Imported, FormatProblem>

export interface ReaderContext {
  /** The directory a project is in (Claude Code's local scope is keyed by it). */
  readonly cwd: string
}

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

// A server's name is shown, used on command lines and in records: printable, bounded.
// eslint-disable-next-line no-control-regex -- the control characters a name may not hold, written out
const serverName = /^[^\u0000-\u001f\u007f]{1,128}$/u

/** The entries of a name → server object, names checked. */
export const namedEntries = (value: unknown, at: string): Either.Either<ReadonlyArray<readonly [string, unknown]>, FormatProblem> => {
  if (!isRecord(value)) return Either.left({ reason: "invalid-value", at })
  const entries = Object.entries(value)
  for (const [name] of entries) if (!serverName.test(name)) return Either.left({ reason: "invalid-name", at })
  return Either.right(entries)
}

const decodeEntry = Schema.decodeUnknownEither(ServersFile.ServerEntry, { onExcessProperty: "error", errors: "first" })

/** An entry as the model's, strictly: an unknown field is refused, naming the server. */
export const strictEntry = (name: string, raw: unknown): Either.Either<ServersFile.ServerEntry, FormatProblem> =>
  Either.mapLeft(decodeEntry(raw), (): FormatProblem => ({ reason: "invalid-value", at: name }))

/** What reading one entry gives: the server, or why it is left out. */
export type EntryRead = Either.Either<ImportedServer | SkippedServer, FormatProblem>

const isSkipped = (read: ImportedServer | SkippedServer): read is SkippedServer => "skipped" in read

/** The servers of a file and those it leaves out. */
export interface ServersRead {
  readonly servers: ReadonlyArray<ImportedServer>
  readonly skipped: ReadonlyArray<SkippedServer>
}

/** Reads every entry of a name → server object with `read`, in order. */
export const readServers = (
  value: unknown,
  at: string,
  read: (name: string, raw: unknown) => EntryRead
): Either.Either<ServersRead, FormatProblem> =>
  Either.flatMap(namedEntries(value, at), (entries) => {
    const servers: Array<ImportedServer> = []
    const skipped: Array<SkippedServer> = []
    for (const [name, raw] of entries) {
      const read_ = read(name, raw)
      if (Either.isLeft(read_)) return Either.left(read_.left)
      if (isSkipped(read_.right)) skipped.push(read_.right)
      else servers.push(read_.right)
    }
    return Either.right({ servers, skipped })
  })

/** The fields of the model's entry (`ServersFile.ServerEntry`, either kind, with the catalog's). */
const modelFields: ReadonlySet<string> = new Set(["url", "type", "headers", "auth", "command", "args", "env", "cwd", "prefix", "allowTools", "blockTools"])

/** Fields several clients write that change nothing of how a server is reached or what it is sent. */
const commonNotes: Readonly<Record<string, string>> = {
  gallery: "gallery (where the editor installed the server from) is not read",
  version: "version (the version the editor installed) is not read",
  description: "description is not read",
  autoApprove: "autoApprove is not applied: phasebound asks nobody before a call",
  alwaysAllow: "alwaysAllow is not applied: phasebound asks nobody before a call"
}

/**
 * The name of a field whose meaning, were it ignored, could change how the server is reached or
 * what it is sent or may do: tool filters and permissions, credentials, headers and environment,
 * proxies and TLS, the URL, the command, its arguments and directory, the transport, a sandbox.
 * An unknown field so named refuses the file: read past, it would silently widen what happens.
 */
const consequential =
  /tool|allow|deny|block|filter|exclu|inclu|enabl|disabl|permi|approv|sandbox|trust|proxy|tls|ssl|cert|insecure|verif|header|env|auth|token|secret|passw|credential|key|url|uri|endpoint|host|port|socket|path|dir|cwd|command|arg|exec|run|transport|type|scope/i

/** A field name that can be shown in a note or a refusal's `at` (a plain identifier, bounded). */
const plainFieldName = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

/** Why an unknown field cannot be read past, or `undefined` when it can (and is noted). */
const unknownFieldProblem = (server: string, key: string): FormatProblem | undefined =>
  !plainFieldName.test(key)
    ? { reason: "invalid-value", at: server }
    : consequential.test(key)
    ? { reason: "invalid-value", at: `${server}.${key}` }
    : undefined

/**
 * Sorts a raw entry's fields of another client's format: those it maps kept (`fields`: the
 * model's by default, decoded strictly later), the format's own known ones (`own`) and the
 * `common` ones noted, an unknown one noted by its name, or refused when ignoring it could change
 * what happens (`consequential`).
 */
export const sortFields = (
  server: string,
  raw: Readonly<Record<string, unknown>>,
  own: Readonly<Record<string, string>>,
  fields: ReadonlySet<string> = modelFields,
  common: Readonly<Record<string, string>> = commonNotes
): Either.Either<{ readonly kept: Record<string, unknown>; readonly notes: ReadonlyArray<string> }, FormatProblem> => {
  const kept: Record<string, unknown> = {}
  const notes: Array<string> = []
  for (const [key, value] of Object.entries(raw)) {
    if (fields.has(key)) kept[key] = value
    else if (Object.hasOwn(own, key)) notes.push(own[key]!)
    else if (Object.hasOwn(common, key)) notes.push(common[key]!)
    else {
      const problem = unknownFieldProblem(server, key)
      if (problem !== undefined) return Either.left(problem)
      notes.push(`${key} is not read (unknown to phasebound)`)
    }
  }
  return Either.right({ kept, notes })
}

/** `disabled`: `true` leaves the server out; anything but a boolean is refused. */
const disabledOf = (server: string, raw: Readonly<Record<string, unknown>>): Either.Either<boolean, FormatProblem> => {
  const disabled = raw["disabled"]
  if (disabled === undefined) return Either.right(false)
  return typeof disabled === "boolean" ? Either.right(disabled) : Either.left({ reason: "invalid-value", at: `${server}.disabled` })
}

/**
 * A format's own mapping of a raw entry before its fields are sorted (Windsurf's `serverUrl`,
 * VS Code's `type: "http"`, Claude Code's `oauth`...): the entry to sort, and notes.
 */
export type Prepare = (
  server: string,
  raw: Readonly<Record<string, unknown>>
) => Either.Either<{ readonly raw: Readonly<Record<string, unknown>>; readonly notes?: ReadonlyArray<string> }, FormatProblem>

/**
 * A reader of one entry of another client's format: `disabled`, then the format's mapping, then
 * the fields sorted (`sortFields`) and the model's decoded strictly.
 */
export const foreignEntry = (own: Readonly<Record<string, string>>, prepare?: Prepare) => (name: string, raw: unknown): EntryRead =>
  Either.gen(function*() {
    if (!isRecord(raw)) return yield* Either.left<FormatProblem>({ reason: "invalid-value", at: name })
    if (yield* disabledOf(name, raw)) return { name, skipped: "disabled: left out" }
    const { disabled: _, ...rest } = raw
    const prepared = prepare === undefined ? { raw: rest } : yield* prepare(name, rest)
    const sorted = yield* sortFields(name, prepared.raw, own)
    const entry = yield* strictEntry(name, sorted.kept)
    return { name, entry, notes: [...(prepared.notes ?? []), ...sorted.notes] }
  })

/**
 * Exact tool names as patterns of the catalog's glob syntax (`Glob.literal`), so `get_*` blocks
 * the tool of that very name and no other. A name no tool can have (empty, longer than the MCP
 * bound of 128 characters) matches nothing and is left out.
 */
export const exactToolPatterns = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  names.filter((name) => name.length >= 1 && name.length <= maxNameLength).map(Glob.literal)

/** A list of tool names: an array of strings, else `undefined`. */
export const toolNames = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === "string") ? value : undefined
