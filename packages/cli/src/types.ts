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
import { loadConfig } from "./config.js"
import { type Requirements, withConnection } from "./connection.js"
import { flag, type Flags } from "./flags.js"
import { json, table } from "./output.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"

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

/** The module to `--out` (then what was written) or stdout. */
const emit = (
  generated: Either.Either<McpCodegen.Generated, McpCodegen.InvalidCodegenOption>,
  input: TypesInput,
  machine: boolean
): Effect.Effect<string, McpConnectionError> =>
  Effect.gen(function*() {
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
      notes.map((note) => [note.tool, note.side, note.kind, note.path, note.reason])
    )
  })

/** `types` on one connection: the module of its listed tools. */
export const types = (connection: McpClient.Connection, input: TypesInput, machine: boolean): Effect.Effect<string, McpConnectionError> =>
  emit(McpCodegen.generate(connection.tools, { title: title(connection) }), input, machine)

/**
 * `types`: one target, or with `--all-servers` every server of the config file, one after the
 * other (each connection closed before the next opens), in one module.
 */
export const runTypes = (ctx: RunContext, flags: Flags, target: string | undefined): Effect.Effect<void, McpConnectionError, Requirements> =>
  Effect.gen(function*() {
    const input = yield* parseTypes(flags)
    const machine = ctx.machine(flags.json)
    if (!flags.allServers) {
      ctx.state.stdout = yield* withConnection(ctx, flags, target, (connection) => types(connection, input, machine))
      return
    }
    if (target !== undefined || Option.isSome(flags.stdio)) return yield* Effect.fail(invalidOption(flag("allServers")))
    // `--config`, else the files of the search order (docs/GUIDE.md, "Search order").
    const config = yield* loadConfig(Option.getOrUndefined(flags.config), Option.getOrUndefined(flags.format))
    if (config.servers.length === 0) return yield* Effect.fail(invalidOption(flag("config")))
    const servers: Array<McpCodegen.ServerTools> = []
    for (const { name } of config.servers) {
      const tools = yield* Effect.scoped(withConnection(ctx, flags, name, (connection) => Effect.succeed(connection.tools)))
      servers.push({ name, tools })
    }
    ctx.state.stdout = yield* emit(McpCodegen.generateServers(servers), input, machine)
  })
