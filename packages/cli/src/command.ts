/**
 * The one way a command is declared: its name, help text, positionals and run; its flags are the
 * table's (flags.ts). `command` is the general form (login, logout, demo); `connectingCommand`
 * is a command that connects to a server and runs one operation on it, its positionals checked,
 * then its own flags (`parse`), before any I/O. Failures stay typed (McpConnectionError) for the
 * entry point to turn into the one stderr record.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type { McpClient } from "@phasebound/client"
import type { McpConnectionError, Stage } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { closing, enter, type Requirements, withConnection } from "./connection.js"
import { type CommandName, commandOptions, completeFlags, type Flags, type Section } from "./flags.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"

/** A command's positionals: how help shows them, and the names of those after the target. */
export interface Positionals {
  readonly args: Args.Args<Array<string>>
  readonly rest: ReadonlyArray<string>
}

const repeatedText = (name: string, description: string) => Args.text({ name }).pipe(Args.withDescription(description), Args.repeated)

/** `<target>`: a URL or a server name; none with `--stdio`. */
export const target: Positionals = {
  args: repeatedText("target", "a URL (http, https) or a server name of the config file; omit it with --stdio"),
  rest: []
}

/** The target, then one more positional (`name` as help shows it: `target> <tool`). */
export const targetThen = (name: string, description: string): Positionals => ({
  args: repeatedText(`target> <${name}`, `the target (omit it with --stdio), then ${description}`),
  rest: [name]
})

/** The target of a command that only talks HTTP (`login`, `logout`). */
export const httpTarget = (description: string): Positionals => ({ args: repeatedText("target", description), rest: [] })

/** The positionals, split: `<target>` unless `--stdio` names the server, then one per name of `rest`. */
export interface Split {
  readonly target: string | undefined
  readonly rest: ReadonlyArray<string>
}

/** Names what is missing (the target comes first), or the surplus as "arguments". */
export const splitPositionals = (
  flags: Flags,
  positionals: ReadonlyArray<string>,
  rest: ReadonlyArray<string>
): Effect.Effect<Split, McpConnectionError> => {
  // `--catalog` (tools, call): the servers are those of the config file, no target is named.
  const hasTarget = Option.isNone(flags.stdio) && !flags.catalog
  const expected = rest.length + (hasTarget ? 1 : 0)
  if (positionals.length !== expected) {
    const missing = positionals.length > expected
      ? "arguments"
      : hasTarget && positionals.length === 0
      ? "target"
      : rest[positionals.length - (hasTarget ? 1 : 0)]!
    return Effect.fail(invalidOption(missing))
  }
  return Effect.succeed(hasTarget ? { target: positionals[0], rest: positionals.slice(1) } : { target: undefined, rest: positionals })
}

export interface CommandSpec<E> {
  readonly name: CommandName
  readonly description: string
  /** None: the command takes no positional (`demo`). */
  readonly positionals?: Positionals
  /** The order of the flag sections in its help (flags.ts `defaultSections` when not given). */
  readonly sections?: ReadonlyArray<Section>
  /** When it says so for the parsed flags, no positional at all is accepted too (`types --all-servers`). */
  readonly withoutPositionals?: (flags: Flags) => boolean
  /** Runs in its own scope, with the positionals already split. */
  readonly run: (flags: Flags, positionals: Split) => Effect.Effect<void, E, Requirements>
}

/** A command of the table's flags for `name`. */
export const command = <E>(spec: CommandSpec<E>) => {
  const { positionals } = spec
  const config = { ...commandOptions(spec.name, spec.sections), ...(positionals === undefined ? {} : { positionals: positionals.args }) }
  return Command.make(spec.name, config, (parsed) => {
    const flags = completeFlags(parsed)
    const given = (parsed["positionals"] ?? []) as ReadonlyArray<string>
    const split: Effect.Effect<Split, McpConnectionError> = positionals === undefined
        || (given.length === 0 && spec.withoutPositionals?.(flags) === true)
      ? Effect.succeed({ target: undefined, rest: [] })
      : splitPositionals(flags, given, positionals.rest)
    return Effect.flatMap(split, (split) => spec.run(flags, split)).pipe(Effect.scoped)
  }).pipe(Command.withDescription(spec.description))
}

/** What an operation on a connection is given. */
export interface Use<P> {
  readonly flags: Flags
  /** The positionals after the target (`call`'s tool). */
  readonly rest: ReadonlyArray<string>
  /** What the command's `parse` resolved. */
  readonly input: P
  readonly machine: boolean
}

export interface ConnectingSpec<P> {
  readonly name: CommandName
  readonly description: string
  /** After the target: one more positional, its name and help text. */
  readonly then?: { readonly name: string; readonly description: string }
  /** The command's own flags, checked after the positionals and before any I/O. */
  readonly parse?: (flags: Flags) => Effect.Effect<P, McpConnectionError>
  /** The operation; its result is what the run prints on stdout. */
  readonly use: (connection: McpClient.Connection, use: Use<P>) => Effect.Effect<string, McpConnectionError>
  /** With `--catalog` (catalog.ts): the operation over the config file's catalog instead of one connection. */
  readonly catalog?: (use: Use<P>) => Effect.Effect<string, McpConnectionError, Requirements>
}

/** A command that connects to its target, runs one operation and prints what it returns. */
export const connectingCommand = <P = void>(ctx: RunContext, spec: ConnectingSpec<P>) =>
  command({
    name: spec.name,
    description: spec.description,
    positionals: spec.then === undefined ? target : targetThen(spec.then.name, spec.then.description),
    run: (flags, { rest, target }) =>
      Effect.gen(function*() {
        const input = spec.parse === undefined ? (undefined as P) : yield* spec.parse(flags)
        const machine = ctx.machine(flags.json)
        if (flags.catalog && spec.catalog !== undefined) {
          ctx.state.stdout = yield* spec.catalog({ flags, rest, input, machine })
          return
        }
        ctx.state.stdout = yield* withConnection(ctx, flags, target, (connection) => spec.use(connection, { flags, rest, input, machine }))
      })
  })

/** The `use` of one request at `stage`, under the call budget, its answer rendered. */
export const operation = <A, P>(
  ctx: RunContext,
  stage: Stage,
  request: (connection: McpClient.Connection, use: Use<P>) => Effect.Effect<A, McpConnectionError>,
  render: (value: A, machine: boolean) => string
) =>
(connection: McpClient.Connection, use: Use<P>): Effect.Effect<string, McpConnectionError> =>
  Effect.gen(function*() {
    enter(ctx, stage, connection.policy.call)
    const value = yield* request(connection, use)
    closing(ctx)
    return render(value, use.machine)
  })
