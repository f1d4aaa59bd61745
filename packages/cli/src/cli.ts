/**
 * The commands, with @effect/cli: `tools`, `call`, `resources`, `templates`, `read`, `prompts`,
 * `prompt`, `discover`, `ping`, `login`, `logout` and `demo`. A handler resolves its target,
 * budgets and auth settings (no I/O until all are valid), connects in its own scope, runs its
 * operation, and leaves what to print and the exit code in the run state; the entry point
 * prints them. Failures stay typed (McpConnectionError) for the entry point to turn into the one
 * stderr record. OAuth: see auth.ts. A call's progress bar: progressBar.ts; the server's log
 * messages during a call: serverLog.ts.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Path from "@effect/platform/Path"
import { McpClient, McpSchema, PhasePolicy, Stdio } from "@phasebound/client"
import * as Authorization from "@phasebound/client/Authorization"
import { type Limits, redact, type McpConnectionError, type Stage } from "@phasebound/client/McpConnectionError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import {
  authFlags,
  type AuthFlags,
  authorizedDuringDiscovery,
  type AuthSettings,
  authTimeoutOf,
  entryOption,
  givenAuthFlag,
  interactiveTimeoutOf,
  loginFlags,
  type LoginFlags,
  logoutFlags,
  mergeSecrets,
  needsLogin,
  parsePort,
  renameAuthOption,
  resolveAuth,
  tokenFileOf,
  tokenStoreLayer
} from "./auth.js"
import { openBrowser } from "./browser.js"
import { runDemo } from "./demo.js"
import { openLoopbackRedirect } from "./loopbackRedirect.js"
import {
  renderCall,
  renderDemo,
  renderDiscover,
  renderLogin,
  renderLogout,
  renderPing,
  renderPrompt,
  renderPrompts,
  renderRead,
  renderResources,
  renderTemplates,
  renderTools
} from "./output.js"
import { type Terminal, withProgressBar } from "./progressBar.js"
import { invalidOption, type Position } from "./record.js"
import { collectServerLog } from "./serverLog.js"
import { stderrBlock, stderrModeOf } from "./serverStderr.js"
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
  /**
   * A line for a human after the record (only set in human mode, printed only on a TTY stderr):
   * `run: phasebound login <target>` when a user's authorization is what is missing.
   */
  hint: string | undefined
  /**
   * A stdio target's stderr as a terminal is shown it before the record (`--server-stderr tail`):
   * the labelled, redacted block of its last lines, or "" (packages/cli/README.md).
   */
  serverStderr?: (() => string) | undefined
}

export interface RunContext {
  readonly state: RunState
  readonly env: Environment
  /** Machine output: `--json`, or a stdout that is not a TTY. */
  readonly machine: (json: boolean) => boolean
  /** Shows progress on stderr while the effect runs (only on a TTY, never in machine mode). */
  readonly progress: <A, E, R>(label: string, machine: boolean, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Where a call's progress bar may be drawn: stderr when it is a TTY and not in machine mode. */
  readonly terminal: (machine: boolean) => Terminal | undefined
  /** Writes on stdout at once (`login`'s authorization URL, while the run waits for the browser). */
  readonly print: (text: string) => Effect.Effect<void>
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
  callTimeout: optionalText("call-timeout", "deadline of the operation after discovery (a tool call, a listing, a read, a prompt)"),
  callMaxBytes: optionalText("call-max-bytes", "byte ceiling of that operation's response"),
  releaseTimeout: optionalText(
    "release-timeout",
    "bound of the release after the run or a failure (closing a session; a stdio server: stdin closed, SIGTERM, SIGKILL, a third each; default 6s)"
  ),
  env: Options.text("env").pipe(
    Options.withDescription("KEY=VALUE added to a --stdio server's environment; ${VAR} reads ours; never printed (repeatable)"),
    Options.repeated
  ),
  envPass: Options.text("env-pass").pipe(
    Options.withDescription("NAME: pass this variable of our environment, when set, to a --stdio server (repeatable)"),
    Options.repeated
  ),
  serverStderr: optionalText(
    "server-stderr",
    "a stdio server's stderr: tail (default: kept, its last lines shown on a terminal when the run fails) | inherit (straight to ours) | drop"
  ),
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
      },
      // The whole release is bounded by --release-timeout: a stdio server's has three steps
      // (stdin closed, SIGTERM, SIGKILL), each given a third (packages/cli/README.md).
      releaseTimeout: Option.isSome(flags.releaseTimeout)
        ? (yield* parseDuration("--release-timeout", flags.releaseTimeout.value)) / releaseSteps
        : undefined
    }
  })

/** The steps of a stdio server's release, each bounded by the library's `releaseTimeout`. */
const releaseSteps = 3

/**
 * Test hook (documented in the README): `PHASEBOUND_TEST_DEFECT=after-connect` raises an
 * unexpected defect whose message carries the target's secrets (and the auth settings' client
 * secret and private key), to prove that an internal error is reported as a scrubbed record and
 * that `--debug` scrubs the cause it prints.
 */
const testDefect = (ctx: RunContext, target: Target): Effect.Effect<void> =>
  ctx.env["PHASEBOUND_TEST_DEFECT"] === "after-connect"
    ? Effect.die(new Error(`test defect with ${JSON.stringify({ target, secrets: ctx.state.secrets })}`))
    : Effect.void

/** What a command resolved before any I/O. */
interface Prepared {
  readonly policyOptions: PhasePolicy.Options
  readonly policy: PhasePolicy.PhasePolicy
  readonly revisions: ReadonlyArray<string> | undefined
  readonly target: Target
  /** HTTP without a credential of the caller's: the OAuth settings given to the connection. */
  readonly auth: AuthSettings | undefined
  /** HTTP: the token file (undefined when the environment names no home and none is given). */
  readonly tokenFile: string | undefined
  /** stdio: what becomes of the server's stderr (`--server-stderr`). */
  readonly stderr: Stdio.StderrMode | undefined
}

/** Resolves budgets, target and auth settings (no I/O but reading the config and key files). */
const prepare = (
  ctx: RunContext,
  flags: Common & AuthFlags & Partial<LoginFlags>,
  positional: string | undefined
): Effect.Effect<Prepared, McpConnectionError> =>
  Effect.gen(function*() {
    const policyOptions = yield* policyOf(flags)
    const revisions = yield* revisionsOf(flags.revision)
    const policy = yield* PhasePolicy.make(policyOptions)
    const target = yield* resolveTarget({
      target: positional,
      stdio: value(flags.stdio),
      config: value(flags.config),
      headers: flags.header,
      transport: yield* transportOf(value(flags.transport)),
      env: flags.env,
      envPass: flags.envPass
    }, ctx.env)
    ctx.state.secrets = target.secrets
    const stderr = yield* stderrModeOf(value(flags.serverStderr))
    if (target._tag === "Stdio") {
      // OAuth means nothing to a child process: refused rather than ignored.
      const given = givenAuthFlag(flags)
      if (given !== undefined) return yield* Effect.fail(invalidOption(given, "invalid-value"))
      return { policyOptions, policy, revisions, target, auth: undefined, tokenFile: undefined, stderr }
    }
    // A server's stderr means nothing over HTTP: refused rather than ignored.
    if (Option.isSome(flags.serverStderr)) return yield* Effect.fail(invalidOption("--server-stderr", "invalid-value"))
    const settings = yield* resolveAuth(flags, target, ctx.env)
    ctx.state.secrets = mergeSecrets(target.secrets, settings.secrets)
    // The caller's own credential and OAuth cannot both be sent: explicit settings beside it are refused.
    if (target.authorization !== undefined && settings.explicit !== undefined) {
      return yield* Effect.fail(invalidOption(settings.explicit, "invalid-value"))
    }
    const tokenFile = yield* tokenFileOf(flags.tokenFile, ctx.env)
    return {
      policyOptions,
      policy,
      revisions,
      target,
      // OAuth needs https (or http on loopback): a plain http target off loopback gets none
      // unless asked for explicitly, and then the client refuses it (InvalidOption url).
      auth: target.authorization === undefined &&
          (settings.explicit !== undefined || Authorization.isSecureServerUrl(new URL(target.url)))
        ? settings
        : undefined,
      tokenFile,
      stderr: undefined
    }
  })

/**
 * A stdio target's stderr handling; in `tail` mode the run keeps the reader of the tail for the
 * entry point (shown on a terminal before the record).
 */
const serverStderr = (ctx: RunContext, mode: Stdio.StderrMode): Stdio.StderrHandling => ({
  mode,
  onSpawn: (tail) => {
    ctx.state.serverStderr = () => stderrBlock(Effect.runSync(tail), ctx.state.secrets)
  }
})

type Requirements =
  | HttpClient.HttpClient
  | CommandExecutor.CommandExecutor
  | FileSystem.FileSystem
  | Path.Path
  | Scope.Scope

/**
 * Connects (discovery under its own deadline) in the current scope, keeping the run's position
 * up to date. HTTP targets with OAuth get the file token store (no interactive step: a 401 that
 * needs a user stays `Unauthorized`).
 */
const connectTo = (
  ctx: RunContext,
  flags: Common,
  prepared: Prepared
): Effect.Effect<McpClient.Connection, McpConnectionError, Requirements> =>
  Effect.gen(function*() {
    const { auth, policy, policyOptions, revisions, target, tokenFile } = prepared
    ctx.state.position = { stage: "connect", phase: "discovery", limits: policy.discovery }
    const connecting: Effect.Effect<McpClient.Connection, McpConnectionError, Requirements> = target._tag === "Http"
      ? McpClient.connect({
        url: target.url,
        headers: target.headers,
        transport: target.transport,
        revisions,
        policy: policyOptions,
        ...(auth === undefined ? {} : { auth: auth.options })
      }).pipe(
        Effect.provide(auth === undefined || tokenFile === undefined ? Layer.empty : tokenStoreLayer(tokenFile)),
        Effect.mapError((error) => auth === undefined ? error : renameAuthOption(error, auth.optionOf))
      )
      : McpClient.connectStdio({
        command: target.command,
        args: target.args,
        env: target.env,
        cwd: target.cwd,
        revisions,
        policy: policyOptions,
        ...(prepared.stderr === undefined ? {} : { stderr: serverStderr(ctx, prepared.stderr) })
      })
    const connection = yield* ctx.progress("discovering", ctx.machine(flags.json), connecting)
    ctx.state.position = { stage: "call", phase: "call", limits: policy.call }
    yield* testDefect(ctx, target)
    return connection
  })

/**
 * Prepares, connects and runs `use`; in human mode, a failure a `login` would cure leaves the
 * hint for the entry point.
 */
const withConnection = <A>(
  ctx: RunContext,
  flags: Common & AuthFlags,
  positional: string | undefined,
  use: (connection: McpClient.Connection) => Effect.Effect<A, McpConnectionError>
): Effect.Effect<A, McpConnectionError, Requirements> =>
  Effect.flatMap(prepare(ctx, flags, positional), (prepared) =>
    Effect.flatMap(connectTo(ctx, flags, prepared), use).pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          if (ctx.machine(flags.json) || prepared.auth === undefined || positional === undefined) return
          if (!needsLogin(error, prepared.auth.validated.grant)) return
          ctx.state.hint = `run: phasebound login ${loginArguments(positional, flags, ctx.state.secrets)}`
        })
      )
    ))

/**
 * The arguments of the `login` that would cure a refusal: the target, the config file it was
 * read from, and the client flags that name the token file's entry (never a secret).
 */
const loginArguments = (positional: string, flags: Common & AuthFlags, secrets: ReadonlyArray<string>): string => {
  const words = [positional]
  const config = value(flags.config)
  if (config !== undefined) words.push("--config", config)
  for (const [flag, given] of [["--auth-client-id", flags.authClientId], ["--auth-client-metadata-url", flags.authClientMetadataUrl]] as const) {
    if (Option.isSome(given)) words.push(flag, given.value)
  }
  return redact(words.join(" "), secrets)
}

/** Positionals: `<target>` unless `--stdio` names the server, then one per name of `rest`. */
const splitPositionals = (
  flags: Common,
  positionals: ReadonlyArray<string>,
  rest: ReadonlyArray<string>
): Effect.Effect<{ readonly target: string | undefined; readonly rest: ReadonlyArray<string> }, McpConnectionError> => {
  const hasTarget = Option.isNone(flags.stdio)
  const expected = rest.length + (hasTarget ? 1 : 0)
  if (positionals.length !== expected) {
    // Name what is missing (the target comes first), or the surplus as "arguments".
    const missing = positionals.length > expected
      ? "arguments"
      : hasTarget && positionals.length === 0
      ? "target"
      : rest[positionals.length - (hasTarget ? 1 : 0)]!
    return Effect.fail(invalidOption(missing))
  }
  return Effect.succeed(hasTarget ? { target: positionals[0], rest: positionals.slice(1) } : { target: undefined, rest: positionals })
}

const positionals = Args.text({ name: "target" }).pipe(
  Args.withDescription("a URL (http, https) or a server name of the config file; omit it with --stdio"),
  Args.repeated
)

/** The target, then more positionals (`name` as help shows it: `target> <tool`). */
const positionalsThen = (name: string, description: string) =>
  Args.text({ name: `target> <${name}` }).pipe(
    Args.withDescription(`the target (omit it with --stdio), then ${description}`),
    Args.repeated
  )

/** The run is now at `stage`: an operation after discovery, under the call budget. */
const enter = (ctx: RunContext, stage: Stage, limits: Limits): void => {
  ctx.state.position = { stage, phase: "call", limits }
}

/** The operation is done: what is left is closing the session. */
const closing = (ctx: RunContext): void => {
  ctx.state.position = { ...ctx.state.position, stage: "close", phase: "session" }
}

/** Connects, runs one operation at `stage` under the call budget, and leaves its rendering. */
const runOperation = <A>(
  ctx: RunContext,
  flags: Common & AuthFlags,
  target: string | undefined,
  stage: Stage,
  operation: (connection: McpClient.Connection) => Effect.Effect<A, McpConnectionError>,
  render: (value: A, machine: boolean) => string
): Effect.Effect<void, McpConnectionError, Requirements> =>
  withConnection(ctx, flags, target, (connection) =>
    Effect.gen(function*() {
      enter(ctx, stage, connection.policy.call)
      const value = yield* operation(connection)
      closing(ctx)
      ctx.state.stdout = render(value, ctx.machine(flags.json))
    }))

const isLogLevel = Schema.is(McpSchema.LogLevel)

/**
 * The flag of the server's log level. Not `--log-level`: @effect/cli reserves that one for
 * Effect's own logger and takes it before any command sees it.
 */
const logLevelFlag = "--server-log-level"

/** `--server-log-level`: one of the MCP levels, checked before any I/O. */
const logLevelOf = (text: string | undefined): Effect.Effect<McpSchema.LogLevel | undefined, McpConnectionError> => {
  if (text === undefined) return Effect.succeed(undefined)
  return isLogLevel(text) ? Effect.succeed(text) : Effect.fail(invalidOption(logLevelFlag, "invalid-value"))
}

/**
 * `--server-log-level`: the reader of the server's log messages subscribes first, then the level is
 * set (`logging/setLevel`; in 2026-07-28 the level travels in the call's `_meta` instead).
 * Returns the effect that ends the reading with what was collected.
 */
const startServerLog = (ctx: RunContext, connection: McpClient.Connection, level: McpSchema.LogLevel) =>
  Effect.gen(function*() {
    const finish = yield* collectServerLog(connection.logMessages)
    enter(ctx, "set-log-level", connection.policy.call)
    yield* connection.setLogLevel(level)
    return finish
  })

const tokenFileProblem = () => invalidOption("--token-file", "invalid-value")

/**
 * `login`: the authorization of a user (or a client credentials grant) obtained now and kept in
 * the token file. The stored entry of the target is not read (a login always obtains new
 * tokens); the listener on 127.0.0.1 receives the browser's redirect.
 */
const login = (
  ctx: RunContext,
  flags: Common & AuthFlags & LoginFlags,
  positional: string | undefined
): Effect.Effect<void, McpConnectionError, Requirements> =>
  Effect.gen(function*() {
    const prepared = yield* prepare(ctx, flags, positional)
    const { policy, policyOptions, revisions, target, tokenFile } = prepared
    // A child process has no OAuth; a credential of the caller's leaves nothing to log in for.
    if (target._tag !== "Http") return yield* Effect.fail(invalidOption("target", "invalid-value"))
    if (target.authorization !== undefined) return yield* Effect.fail(invalidOption(target.authorization, "invalid-value"))
    const auth = prepared.auth!
    if (tokenFile === undefined) return yield* Effect.fail(tokenFileProblem())
    const authTimeoutMs = yield* authTimeoutOf(flags.authTimeout)
    const port = Option.isSome(flags.authRedirectPort) ? yield* parsePort(flags.authRedirectPort.value) : auth.redirectPort ?? 0
    const machine = ctx.machine(flags.json)

    const fileStore = yield* Effect.provide(Authorization.TokenStore, tokenStoreLayer(tokenFile))
    const key = Authorization.storeKeyOf(new URL(target.url), auth.validated)
    // A token file that cannot be used is refused before anyone is sent to a browser.
    yield* Effect.mapError(fileStore.get(key), tokenFileProblem)
    const loginStore: Context.Tag.Service<Authorization.TokenStore> = { ...fileStore, get: () => Effect.succeedNone }

    const interactive = auth.validated.grant === "authorization_code"
    const listener = interactive
      ? yield* Effect.mapError(
        openLoopbackRedirect({ port }),
        // The port is in use (or not allowed): named by where it came from.
        () => invalidOption(Option.isNone(flags.authRedirectPort) && auth.redirectPort !== undefined ? entryOption : "--auth-redirect-port")
      )
      : undefined
    const authorize = (url: URL) =>
      Effect.gen(function*() {
        // Before anyone is sent to the browser: only the answer carrying this URL's state completes the login.
        yield* listener!.expect(url)
        yield* ctx.print(machine ? `${JSON.stringify({ authorize: url.href })}\n` : `Open this URL to authorize: ${url.href}\n`)
        yield* openBrowser(url.href, { env: ctx.env })
        // Its timeout fails the interactive step: AuthorizationFailed, interactive-step-failed.
        return yield* listener!.next(authTimeoutMs)
      })
    const services = Layer.merge(
      Layer.succeed(Authorization.TokenStore, loginStore),
      interactive ? Authorization.layerInteractive(authorize) : Layer.empty
    )

    ctx.state.position = { stage: "connect", phase: "discovery", limits: policy.discovery }
    const connection = yield* McpClient.connect({
      url: target.url,
      headers: target.headers,
      transport: target.transport,
      revisions,
      policy: policyOptions,
      auth: {
        ...auth.options,
        redirectUri: listener?.redirectUri,
        interactiveTimeout: interactiveTimeoutOf(authTimeoutMs)
      }
    }).pipe(Effect.provide(services), Effect.mapError((error) => renameAuthOption(error, auth.optionOf)))
    ctx.state.position = { stage: "close", phase: "session", limits: policy.discovery }
    const authorized = authorizedDuringDiscovery(connection)
    if (authorized) {
      // The library keeps going when the store fails (the tokens live on in memory): a login must not.
      const stored = yield* Effect.mapError(fileStore.get(key), tokenFileProblem)
      if (Option.isNone(stored)) return yield* Effect.fail(tokenFileProblem())
    }
    ctx.state.stdout = renderLogin({ authorized, connection }, machine)
  })

/** `logout`: removes the target's entry from the token file (no network). */
const logout = (
  ctx: RunContext,
  flags: {
    readonly config: Option.Option<string>
    readonly authClientId: Option.Option<string>
    readonly authClientMetadataUrl: Option.Option<string>
    readonly tokenFile: Option.Option<string>
    readonly json: boolean
  },
  positional: string | undefined
): Effect.Effect<void, McpConnectionError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const target = yield* resolveTarget(
      { target: positional, stdio: undefined, config: value(flags.config), headers: [], transport: undefined },
      ctx.env
    )
    ctx.state.secrets = target.secrets
    if (target._tag !== "Http") return yield* Effect.fail(invalidOption("target", "invalid-value"))
    const entry = target.auth ?? {}
    const sources = new Map<string, string>()
    const pick = (field: string, flag: Option.Option<string>, fromEntry: string | undefined, name: string) => {
      if (Option.isSome(flag)) sources.set(field, name)
      else if (fromEntry !== undefined) sources.set(field, entryOption)
      return Option.getOrUndefined(flag) ?? fromEntry
    }
    const identity = {
      clientId: pick("clientId", flags.authClientId, entry.clientId, "--auth-client-id"),
      clientMetadataUrl: pick("clientMetadataUrl", flags.authClientMetadataUrl, entry.clientMetadataUrl, "--auth-client-metadata-url")
    }
    const validated = yield* Effect.mapError(
      Authorization.validate(identity),
      (error) => renameAuthOption(error, (field) => sources.get(field) ?? `--auth-${field}`)
    )
    const tokenFile = yield* tokenFileOf(flags.tokenFile, ctx.env)
    if (tokenFile === undefined) return yield* Effect.fail(tokenFileProblem())
    const store = yield* Effect.provide(Authorization.TokenStore, tokenStoreLayer(tokenFile))
    const key = Authorization.storeKeyOf(new URL(target.url), validated)
    const existing = yield* Effect.mapError(store.get(key), tokenFileProblem)
    if (Option.isSome(existing)) yield* Effect.mapError(store.remove(key), tokenFileProblem)
    ctx.state.stdout = renderLogout(Option.isSome(existing), ctx.machine(flags.json))
  })

export const makeCommand = (ctx: RunContext) => {
  const tools = Command.make("tools", { ...common, ...authFlags, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, [])
      yield* withConnection(ctx, flags, target, (connection) =>
        Effect.sync(() => {
          ctx.state.stdout = renderTools(connection.tools, ctx.machine(flags.json))
        }))
    }).pipe(Effect.scoped)).pipe(Command.withDescription("discover a server and list its tools"))

  const call = Command.make("call", {
    ...common,
    ...authFlags,
    args: optionalText("args", "the tool's arguments, a JSON object (default {})"),
    idleTimeout: optionalText(
      "idle-timeout",
      "fail the call (DeadlineExceeded, reason idle-timeout) when the server reported no progress for this long (500ms, 30s, 2m); --call-timeout stays the cap"
    ),
    logLevel: optionalText(
      "server-log-level",
      "ask the server for its log messages at this level and above during the call (debug, info, notice, warning, error, critical, alert, emergency): added to the output (JSON: logs), never to stderr"
    ),
    effectIdentity: optionalText(
      "effect-identity",
      "the call's effect identity: a key of yours, sent in _meta (io.phasebound/effect-identity), that you give again when you retry the same effect, so a server that honours it can tell a retry from a second effect"
    ),
    positionals: positionalsThen("tool", "the tool's name")
  }, (flags) =>
    Effect.gen(function*() {
      const { rest, target } = yield* splitPositionals(flags, flags.positionals, ["tool"])
      const args = yield* parseArguments(value(flags.args))
      // parseDuration validates as the client does: a bad value is refused here, before any I/O.
      const idleTimeoutMs = Option.isSome(flags.idleTimeout) ? yield* parseDuration("--idle-timeout", flags.idleTimeout.value) : undefined
      const logLevel = yield* logLevelOf(value(flags.logLevel))
      const effectIdentity = value(flags.effectIdentity)
      if (effectIdentity !== undefined && !McpClient.isEffectIdentity(effectIdentity)) {
        return yield* Effect.fail(invalidOption("--effect-identity", "invalid-value"))
      }
      const machine = ctx.machine(flags.json)
      yield* withConnection(ctx, flags, target, (connection) =>
        Effect.gen(function*() {
          const finishLog = logLevel === undefined ? undefined : yield* startServerLog(ctx, connection, logLevel)
          enter(ctx, "call", idleTimeoutMs === undefined ? connection.policy.call : { ...connection.policy.call, idleTimeoutMs })
          // Progress is asked for when the bar is drawn, or (by the client) for the idle timeout.
          const result = yield* withProgressBar(ctx.terminal(machine), (onProgress) =>
            connection.callTool(
              rest[0]!,
              args,
              onProgress === undefined && idleTimeoutMs === undefined && effectIdentity === undefined
                ? undefined
                : { onProgress, idleTimeout: idleTimeoutMs, effectIdentity }
            ))
          const serverLog = finishLog === undefined ? undefined : yield* finishLog
          closing(ctx)
          ctx.state.stdout = renderCall(result, machine, serverLog)
          ctx.state.exitCode = result.isError === true ? 1 : 0
        }).pipe(Effect.scoped))
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription(
        "discover a server, then call one tool once (never retried); on a terminal, its progress as a bar on stderr"
      )
    )

  const resources = Command.make("resources", { ...common, ...authFlags, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, [])
      yield* runOperation(ctx, flags, target, "list-resources", (connection) => connection.listResources(), renderResources)
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription("discover a server, then list its resources (every page of resources/list, under the call budget)")
    )

  const templates = Command.make("templates", { ...common, ...authFlags, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, [])
      yield* runOperation(ctx, flags, target, "list-resource-templates", (connection) => connection.listResourceTemplates(), renderTemplates)
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription(
        "discover a server, then list its resource templates (every page of resources/templates/list, under the call budget)"
      )
    )

  const read = Command.make("read", { ...common, ...authFlags, positionals: positionalsThen("uri", "the resource's URI") }, (flags) =>
    Effect.gen(function*() {
      const { rest, target } = yield* splitPositionals(flags, flags.positionals, ["uri"])
      yield* runOperation(ctx, flags, target, "read-resource", (connection) => connection.readResource(rest[0]!), renderRead)
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription(
        "discover a server, then read one resource (resources/read, under the call budget): text as is, a blob as <N bytes, mimeType>; JSON: the contents, blobs in base64"
      )
    )

  const prompts = Command.make("prompts", { ...common, ...authFlags, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, [])
      yield* runOperation(ctx, flags, target, "list-prompts", (connection) => connection.listPrompts(), renderPrompts)
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription(
        "discover a server, then list its prompts and the arguments they take (every page of prompts/list, under the call budget)"
      )
    )

  const prompt = Command.make("prompt", {
    ...common,
    ...authFlags,
    args: optionalText("args", "the prompt's arguments, a JSON object of strings (default {})"),
    positionals: positionalsThen("prompt", "the prompt's name")
  }, (flags) =>
    Effect.gen(function*() {
      const { rest, target } = yield* splitPositionals(flags, flags.positionals, ["prompt"])
      const args = yield* parsePromptArguments(value(flags.args))
      yield* runOperation(ctx, flags, target, "get-prompt", (connection) => connection.getPrompt(rest[0]!, args), renderPrompt)
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription("discover a server, then get one prompt, its arguments filled in (prompts/get, under the call budget)")
    )

  const ping = Command.make("ping", { ...common, ...authFlags, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, [])
      yield* withConnection(ctx, flags, target, (connection) =>
        Effect.map(connection.ping, (ms) => {
          ctx.state.stdout = renderPing(ms, connection, ctx.machine(flags.json))
        }))
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription("discover a server, then check it answers (ping; server/discover in 2026-07-28) under its own small budget")
    )

  const discover = Command.make("discover", { ...common, ...authFlags, positionals }, (flags) =>
    Effect.gen(function*() {
      const { target } = yield* splitPositionals(flags, flags.positionals, [])
      yield* withConnection(ctx, flags, target, (connection) =>
        Effect.sync(() => {
          ctx.state.stdout = renderDiscover(connection, ctx.machine(flags.json))
        }))
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription("discover a server: server info, revision, transport, per-stage timings and bytes")
    )

  const { env: _env, envPass: _envPass, serverStderr: _serverStderr, stdio: _stdio, ...httpCommon } = common
  const loginCommand = Command.make("login", {
    ...httpCommon,
    ...authFlags,
    ...loginFlags,
    positionals: Args.text({ name: "target" }).pipe(
      Args.withDescription("an HTTP server: a URL (http, https) or a server name of the config file"),
      Args.repeated
    )
  }, (flags) =>
    Effect.gen(function*() {
      const httpFlags = { ...flags, stdio: Option.none<string>(), env: [], envPass: [], serverStderr: Option.none<string>() }
      const { target } = yield* splitPositionals(httpFlags, flags.positionals, [])
      yield* login(ctx, httpFlags, target)
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription(
        "authorize phasebound with an HTTP server's OAuth authorization server (prints the URL and opens a browser, receives the redirect on 127.0.0.1) and keep the tokens in the token file for tools, call and discover"
      )
    )

  const logoutCommand = Command.make("logout", {
    config: common.config,
    ...logoutFlags,
    json: common.json,
    debug: common.debug,
    positionals: Args.text({ name: "target" }).pipe(
      Args.withDescription("an HTTP server: a URL or a server name of the config file"),
      Args.repeated
    )
  }, (flags) =>
    Effect.gen(function*() {
      if (flags.positionals.length !== 1) {
        return yield* Effect.fail(invalidOption(flags.positionals.length === 0 ? "target" : "arguments"))
      }
      yield* logout(ctx, flags, flags.positionals[0])
    })).pipe(
      Command.withDescription(
        "forget the tokens stored for an HTTP server (the entry of its URL and client id in the token file; no network)"
      )
    )

  const demo = Command.make("demo", { json: common.json, debug: common.debug }, (flags) =>
    Effect.gen(function*() {
      ctx.state.position = { stage: "connect", phase: "discovery", limits: ctx.state.position.limits }
      const lines = yield* runDemo
      ctx.state.stdout = renderDemo(lines, ctx.machine(flags.json))
    })).pipe(Command.withDescription("a testkit MCP server on loopback and a real session against it"))

  // Without a command there is nothing to do: a usage error (`--help` shows the commands).
  return Command.make("phasebound", {}, () => Effect.fail(invalidOption("command"))).pipe(
    Command.withDescription(
      "an MCP client with phase budgets and one parseable error record. OAuth servers: `phasebound login <target>` once (tokens kept in the token file: --token-file, else $PHASEBOUND_TOKEN_FILE, else the user's config directory), then every command that talks to that server uses them; a 401 that needs a user is Unauthorized (exit 3). Services: --auth-grant client_credentials, no login"
    ),
    Command.withSubcommands([
      tools,
      call,
      resources,
      templates,
      read,
      prompts,
      prompt,
      discover,
      ping,
      loginCommand,
      logoutCommand,
      demo
    ])
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

/** `prompt --args`: a JSON object of strings (MCP prompt arguments are strings), or nothing. */
const parsePromptArguments = (text: string | undefined): Effect.Effect<Record<string, string>, McpConnectionError> =>
  Effect.flatMap(parseArguments(text), (args) => {
    const strings: Record<string, string> = {}
    for (const [name, given] of Object.entries(args)) {
      if (typeof given !== "string") return Effect.fail(invalidOption("--args", "invalid-value"))
      strings[name] = given
    }
    return Effect.succeed(strings)
  })

export const runCli = (ctx: RunContext) => Command.run(makeCommand(ctx), { name: "phasebound", version })
