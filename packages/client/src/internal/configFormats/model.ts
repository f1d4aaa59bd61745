/**
 * What every format reader gives: the servers of one file as `ServersFile.ServerEntry` values
 * (as written: their references are expanded when a server is started, not when it is read),
 * the inputs the file declares, and a note for each setting that was read but not used.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ServersFile from "../../ServersFile.js"

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

export interface Imported {
  readonly servers: ReadonlyArray<ImportedServer>
  readonly inputs: ReadonlyArray<InputSpec>
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

/**
 * A raw entry without the fields a format has and the model does not: each removed field
 * present becomes a note.
 */
export const withoutFields = (
  raw: unknown,
  ignored: Readonly<Record<string, string>>
): { readonly raw: unknown; readonly notes: ReadonlyArray<string> } => {
  if (!isRecord(raw)) return { raw, notes: [] }
  const kept: Record<string, unknown> = {}
  const notes: Array<string> = []
  for (const [key, value] of Object.entries(raw)) {
    if (Object.hasOwn(ignored, key)) notes.push(ignored[key]!)
    else kept[key] = value
  }
  return { raw: kept, notes }
}

/** Reads every entry of a name → server object with `read`, in order. */
export const readServers = (
  value: unknown,
  at: string,
  read: (name: string, raw: unknown) => Either.Either<ImportedServer | undefined, FormatProblem>
): Either.Either<ReadonlyArray<ImportedServer>, FormatProblem> =>
  Either.flatMap(namedEntries(value, at), (entries) => {
    const servers: Array<ImportedServer> = []
    for (const [name, raw] of entries) {
      const read_ = read(name, raw)
      if (Either.isLeft(read_)) return Either.left(read_.left)
      if (read_.right !== undefined) servers.push(read_.right)
    }
    return Either.right(servers)
  })

/** A reader of the `mcpServers` shape, with a format's own fields removed first (noted). */
export const mcpServersEntry = (ignored: Readonly<Record<string, string>>) => (name: string, raw: unknown) => {
  const { notes, raw: kept } = withoutFields(raw, ignored)
  return Either.map(strictEntry(name, kept), (entry): ImportedServer => ({ name, entry, notes }))
}
