/**
 * `types`: the typed tools of a server (docs/GUIDE.md, "Typed tools"): the client's
 * `McpCodegen.generate` over the tools the discovery listed, written to `--out` atomically (a
 * temporary file beside it, then renamed over it: a reader never sees half a module) or, without
 * `--out`, printed on stdout. With `--out`, stdout says what was written: the tools, and what
 * was not mapped exactly (`fallback`: `Schema.Unknown`; `unchecked`: kept, not enforced).
 */
import type { McpClient } from "@phasebound/client"
import * as McpCodegen from "@phasebound/client/McpCodegen"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { renameSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import type { Use } from "./command.js"
import { flag, type Flags } from "./flags.js"
import { json, oneLine, table } from "./output.js"
import { invalidOption } from "./record.js"

/** What `types`' own flags resolve to. */
export interface TypesInput {
  /** `--out`, resolved; none: stdout. */
  readonly out: string | undefined
}

export const parseTypes = (flags: Flags): Effect.Effect<TypesInput, McpConnectionError> => {
  const out = Option.getOrUndefined(flags.out)
  if (out === undefined) return Effect.succeed({ out: undefined })
  if (out.trim() === "" || out.includes("\u0000")) return Effect.fail(invalidOption(flag("out")))
  return Effect.succeed({ out: path.resolve(out) })
}

/** Writes `text` to `file` through a temporary file in the same directory; a failure leaves no temporary behind. */
export const writeAtomically = (file: string, text: string): Effect.Effect<void, McpConnectionError> =>
  Effect.try({
    try: () => {
      const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`)
      try {
        // `wx`: never through a file (or a link) already there.
        writeFileSync(temporary, text, { flag: "wx", mode: 0o644 })
        renameSync(temporary, file)
      } catch (error) {
        rmSync(temporary, { force: true })
        throw error
      }
    },
    catch: () => invalidOption(flag("out"))
  })

const title = (connection: McpClient.Connection): string | undefined => {
  const info = connection.serverInfo
  return info === undefined ? undefined : `${info.name}${info.version === undefined ? "" : ` ${info.version}`}`
}

/** `types`: the module of the listed tools, to `--out` or stdout. */
export const types = (connection: McpClient.Connection, { input, machine }: Use<TypesInput>): Effect.Effect<string, McpConnectionError> =>
  Effect.gen(function*() {
    const generated = McpCodegen.generate(connection.tools, { title: title(connection) })
    // The options are the generator's defaults: valid.
    if (Either.isLeft(generated)) return yield* Effect.die(generated.left)
    const { notes, source, tools } = generated.right
    if (input.out === undefined) return source
    yield* writeAtomically(input.out, source)
    if (machine) return json({ out: input.out, tools, notes })
    const counted = `${tools.length} tool${tools.length === 1 ? "" : "s"} written to ${input.out}\n`
    if (notes.length === 0) return counted
    return counted + table(
      ["TOOL", "SIDE", "KIND", "PATH", "REASON"],
      notes.map((note) => [note.tool, note.side, note.kind, oneLine(note.path), note.reason])
    )
  })
