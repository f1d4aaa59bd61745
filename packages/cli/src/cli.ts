/**
 * The commands, with @effect/cli: `tools`, `call`, `discover` and `demo`. A handler resolves
 * its target and budgets (no I/O until both are valid), connects in its own scope, and leaves
 * what to print and the exit code in the run state; the entry point prints them. Failures stay
 * typed (McpConnectionError) for the entry point to turn into the one stderr record.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as HttpClient from "@effect/platform/HttpClient"
import { McpClient, McpSchema, PhasePolicy } from "@phasebound/client"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { runDemo } from "./demo.js"
import { renderCall, renderDemo, renderDiscover, renderTools } from "./output.js"
import { invalidOption, type Position } from "./record.js"
import { resolveTarget, type Environment, type Target } from "./target.js"
import { parseDuration, parseSize } from "./units.js"

export const version = "0.1.0"

/** What a run leaves for the entry point. Mutable: it is the run's own, and read after it ends. */
export interface RunState {
  /** Where the run is, for an interruption or an internal error. */
  position: Position
  /** Secret values of the resolved target, scrubbed from the debug output. */
  secrets: ReadonlyArray<string>
  stdout: string
  exitCode: number
}

export interface RunContext {
  readonly state: RunState
  readonly env: Environment
  /** Machine output: `--json`, or a stdout that is not a TTY. */
  readonly machine: (json: boolean) => boolean
  /** Shows progress on stderr while the effect runs (only on a TTY, never in machine mode). */
  readonly progress: <A, E, R>(label: string, machine: boolean, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

// ---------------------------------------------------------------------------------------------
// Options shared by the commands that talk to a server
// ---------------------------------------------------------------------------------------------

const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const common = {
  stdio: optionalText("stdio", "run the server as a child process: 'command args...' (split like a shell would, no shell run)"),
  config: optionalText("config", "mcpServers config file for server names (default ./.mcp.json when present)"),
  header: Options.text("header").pipe(
    Options.withDescription("'Name: value' sent with every HTTP request; ${VAR} reads the environment (repeatable)"),
    Options.repeated
  ),
  // Text, checked in transportOf: a bad value is then an InvalidOption naming --transport.
  transport: optionalText("transport", "auto | streamable-http | sse (default auto: Streamable HTTP, then legacy HTTP+SSE)"),
  revision: Options.text("revision").pipe(
    Options.withDescription("a protocol revision the client may speak, e.g. 2026-07-28 or 2025-11-25 (repeatable; default all)"),
    Options.repeated
  ),
  timeout: optionalText("timeout", "baseline deadline of each phase (500ms, 30s, 2m; default 60s)"),
  maxBytes: optionalText("max-bytes", "baseline byte ceiling of each response (1048576, 64KiB, 16MiB; default 16MiB)"),
  discoveryTimeout: optionalText("discovery-timeout", "deadline of the whole discovery"),
  discoveryMaxBytes: optionalText("discovery-max-bytes", "byte ceiling of each discovery response"),
  callTimeout: optionalText("call-timeout", "deadline of the tool call"),
  callMaxBytes: optionalText("call-max-bytes", "byte ceiling of the tool call's response"),
  json: Options.boolean("json").pipe(Options.withDescription("machine output (JSON) even on a TTY")),
  debug: Options.boolean("debug").pipe(
    Options.withDescription("on an internal error, print its scrubbed cause on stderr after the record")
  )
}

type Common = {
  readonly [K in keyof typeof common]: (typeof common)[K] extends Options.Options<infer A> ? A : never
}

const value = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

const transportOf = (text: string | undefined): Effect.Effect<McpClient.TransportChoice | undefined, McpConnectionError> =>
  text === undefined || text === "auto" || text === "streamable-http" || text === "sse"
    ? Effect.succeed(text)
    : Effect.fail(invalidOption("--transport", "invalid-value"))

/** `--revision` flags: each must be a revision the client speaks; none given means all. */
const revisionsOf = (texts: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string> | undefined, McpConnectionError> =>
  texts.length === 0
    ? Effect.succeed(undefined)
    : texts.every(McpSchema.isSupportedRevision)
    ? Effect.succeed(texts)
    : Effect.fail(invalidOption("--revision", "invalid-value"))

/** The budget flags into client policy options; every string is parsed, then validated. */
const policyOf = (flags: Common): Effect.Effect<PhasePolicy.Options, McpConnectionError> =>
  Effect.gen(function*() {
    const duration = (flag: string, text: Option.Option<string>) =>
      Option.isSome(text) ? Effect.map(parseDuration(flag, text.value), (n) => n as number | undefined) : Effect.succeed(undefined)
    const size = (flag: string, text: Option.Option<string>) =>
      Option.isSome(text) ? Effect.map(parseSize(flag, text.value), (n) => n as number | undefined) : Effect.succeed(undefined)
    return {
      timeout: yield* duration("--timeout", flags.timeout),
      maxBytes: yield* size("--max-bytes", flags.maxBytes),
      discovery: {
        timeout: yield* duration("--discovery-timeout", flags.discoveryTimeout),
        maxBytes: yield* size("--discovery-max-bytes", flags.discoveryMaxBytes)
      },
      call: {
        timeout: yield* duration("--call-timeout", flags.callTimeout),
        maxBytes: yield* size("--call-max-bytes", flags.callMaxBytes)
      }
    }
  })

/**
 * Test hook (documented in the README): `PHASEBOUND_TEST_DEFECT=after-connect` raises an
 * unexpected defect whose message carries the target's secrets, to prove that an internal
 * error is reported as a scrubbed record and that `--debug` scrubs the cause it prints.
 */
const testDefect = (ctx: RunContext, target: Target): Effect.Effect<void> =>
  ctx.env["PHASEBOUND_TEST_DEFECT"] === "after-connect"
    ? Effect.die(new Error(`test defect with ${JSON.stringify(target)}`))
    : Effect.void

/**
 * Resolves target and budgets, then connects (discovery under its own deadline) in the
 * current scope, keeping the run's position up to date.
 */
const connectTo = (
  ctx: RunContext,
  flags: Common,
  positional: string | undefined
): Effect.Effect<McpClient.Connection, McpConnectionError, HttpClient.HttpClient | CommandExecutor.CommandExecutor | Scope.Scope> =>
  Effect.gen(function*() {
    const policyOptions = yield* policyOf(flags)
    const revisions = yield* revisionsOf(flags.revision)
    const policy = yield* PhasePolicy.make(policyOptions)
    const target = yield* resolveTarget({
      target: positional,
      stdio: value(flags.stdio),
      config: value(flags.config),
      headers: flags.header,
      transport: yield* transportOf(value(flags.transport))
    }, ctx.env)
    ctx.state.secrets = target.secrets
    ctx.state.position = { stage: "connect", phase: "discovery", limits: policy.discovery }
    const connecting: Effect.Effect<
      McpClient.Connection,
      McpConnectionError,
      HttpClient.HttpClient | CommandExecutor.CommandExecutor | Scope.Scope
    > = target._tag === "Http"
      ? McpClient.connect({ url: target.url, headers: target.headers, transport: target.transport, revisions, policy: policyOptions })
      : McpClient.connectStdio({
        command: target.command,
        args: target.args,
        env: target.env,
        cwd: target.cwd,
        revisions,
        policy: policyOptions
      })
    const connection = yield* ctx.progress("discovering", ctx.machine(flags.json), connecting)
    ctx.state.position = { stage: "call", phase: "call", limits: policy.call }
    yield* testDefect(ctx, target)
    return connection
  })

/** Positionals: `<target>` unless `--stdio` names the server, then `rest` more. */
const splitPositionals = (
  flags: Common,
  positionals: ReadonlyArray<string>,
  rest: number
): Effect.Effect<{ readonly target: string | undefined; readonly rest: ReadonlyArray<string> }, McpConnectionError> => {
  const hasTarget = Option.isNone(flags.stdio)
  const expected = rest + (hasTarget ? 1 : 0)
  if (positionals.length !== expected) {
    // Name what is missing (the target comes first), or the surplus as "arguments".
    const missing = positionals.length > expected ? "arguments" : hasTarget && positionals.length === 0 ? "target" : "tool"
    return Effect.fail(invalidOption(missing))
  }
  return Effect.succeed(hasTarget ? { target: positionals[0], rest: positionals.slice(1) } : { target: undefined, rest: positionals })
}

const positionals = Args.text({ name: "target" }).pipe(
  Args.withDescription("a URL (http, https) or a server name of the config file; omit it with --stdio"),
  Args.repeated
)

export const makeCommand = (ctx: RunContext) => {
  const tools = Command.make("tools", { ...common, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, 0)
      const connection = yield* connectTo(ctx, flags, target)
      ctx.state.stdout = renderTools(connection.tools, ctx.machine(flags.json))
    }).pipe(Effect.scoped)).pipe(Command.withDescription("discover a server and list its tools"))

  const call = Command.make("call", {
    ...common,
    args: optionalText("args", "the tool's arguments, a JSON object (default {})"),
    positionals: Args.text({ name: "target> <tool" }).pipe(
      Args.withDescription("the target (omit it with --stdio), then the tool's name"),
      Args.repeated
    )
  }, (flags) =>
    Effect.gen(function*() {
      const { rest, target } = yield* splitPositionals(flags, flags.positionals, 1)
      const args = yield* parseArguments(value(flags.args))
      const connection = yield* connectTo(ctx, flags, target)
      const result = yield* connection.callTool(rest[0]!, args)
      ctx.state.position = { ...ctx.state.position, stage: "close", phase: "session" }
      ctx.state.stdout = renderCall(result, ctx.machine(flags.json))
      ctx.state.exitCode = result.isError === true ? 1 : 0
    }).pipe(Effect.scoped)).pipe(Command.withDescription("discover a server, then call one tool once (never retried)"))

  const discover = Command.make("discover", { ...common, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, 0)
      const connection = yield* connectTo(ctx, flags, target)
      ctx.state.stdout = renderDiscover(connection, ctx.machine(flags.json))
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription("discover a server: server info, revision, transport, per-stage timings and bytes")
    )

  const demo = Command.make("demo", { json: common.json, debug: common.debug }, (flags) =>
    Effect.gen(function*() {
      ctx.state.position = { stage: "connect", phase: "discovery", limits: ctx.state.position.limits }
      const lines = yield* runDemo
      ctx.state.stdout = renderDemo(lines, ctx.machine(flags.json))
    })).pipe(Command.withDescription("a testkit MCP server on loopback and a real session against it"))

  // Without a command there is nothing to do: a usage error (`--help` shows the commands).
  return Command.make("phasebound", {}, () => Effect.fail(invalidOption("command"))).pipe(
    Command.withDescription("an MCP client with phase budgets and one parseable error record"),
    Command.withSubcommands([tools, call, discover, demo])
  )
}

/** `--args`: a JSON object, or nothing. */
const parseArguments = (text: string | undefined): Effect.Effect<Record<string, unknown>, McpConnectionError> => {
  if (text === undefined) return Effect.succeed({})
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return Effect.succeed(parsed as Record<string, unknown>)
    }
  } catch {
    // falls through to the refusal below
  }
  return Effect.fail(invalidOption("--args", "invalid-value"))
}

export const runCli = (ctx: RunContext) => Command.run(makeCommand(ctx), { name: "phasebound", version })
