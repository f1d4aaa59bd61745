/**
 * From a command's flags to a connection: the budgets, target and auth settings are resolved
 * before any I/O (`prepare`), then the client connects in the current scope (`connectTo`),
 * keeping the run's position up to date for an interruption or an internal error.
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Path from "@effect/platform/Path"
import { McpClient, McpSchema, PhasePolicy } from "@phasebound/client"
import * as Authorization from "@phasebound/client/Authorization"
import { type Limits, type McpConnectionError, mergeSecrets, redact, type Stage } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import {
  type AuthSettings,
  givenAuthFlag,
  needsLogin,
  renameAuthOption,
  resolveAuth,
  tokenFileOf,
  tokenStoreLayer
} from "./auth.js"
import { flag, type Flags, type PolicyField, policyFlags, type TextFlagKey } from "./flags.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"
import { stderrBlock, stderrModeOf } from "./serverStderr.js"
import { resolveTarget, type Target } from "./target.js"
import { parseDuration, parseSize } from "./units.js"
import { leaveElicitations } from "./urlElicitation.js"

const value = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

const isTransportChoice = Schema.is(McpClient.TransportChoice)

const transportOf = (text: string | undefined): Effect.Effect<McpClient.TransportChoice | undefined, McpConnectionError> =>
  text === undefined || isTransportChoice(text) ? Effect.succeed(text) : Effect.fail(invalidOption(flag("transport"), "invalid-value"))

/** The `--revision` flags: each must be a revision the client speaks; none given means all. */
export const revisionsOf = (texts: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string> | undefined, McpConnectionError> =>
  texts.length === 0
    ? Effect.succeed(undefined)
    : texts.every(McpSchema.isSupportedRevision)
    ? Effect.succeed(texts)
    : Effect.fail(invalidOption(flag("revision"), "invalid-value"))

/** The budget flags (the table's `policy` column) into client policy options; each is parsed here, in table order, then validated by the client. */
export const policyOf = (flags: Flags): Effect.Effect<PhasePolicy.Options, McpConnectionError> =>
  Effect.gen(function*() {
    const values: Partial<Record<PolicyField, number>> = {}
    for (const { field, key } of policyFlags) {
      const text = flags[key]
      if (Option.isNone(text)) continue
      values[field] = field.endsWith("maxBytes") ? yield* parseSize(flag(key), text.value) : yield* parseDuration(flag(key), text.value)
    }
    return {
      timeout: values.timeout,
      maxBytes: values.maxBytes,
      discovery: { timeout: values["discovery.timeout"], maxBytes: values["discovery.maxBytes"] },
      call: { timeout: values["call.timeout"], maxBytes: values["call.maxBytes"] },
      // The whole release is bounded by --release-timeout: a stdio server's has three steps
      // (stdin closed, SIGTERM, SIGKILL), each given a third (packages/cli/README.md).
      releaseTimeout: values.releaseTimeout === undefined ? undefined : values.releaseTimeout / releaseSteps,
      task: { timeout: values["task.timeout"] }
    }
  })

/** The steps of a stdio server's release, each bounded by the library's `releaseTimeout`. */
const releaseSteps = 3

/**
 * Test hook (documented in the README): `PHASEBOUND_TEST_DEFECT=after-connect` raises an
 * unexpected defect whose message carries the target's secrets (and the auth settings' client
 * secret and private key, and the proxy variables' values; with `--catalog`, a server's options
 * as resolved, `Redacted` values unwrapped), to prove that an internal error is reported as a
 * scrubbed record and that `--debug` scrubs the cause it prints.
 */
export const testDefect = (ctx: RunContext, target: unknown): Effect.Effect<void> =>
  ctx.env["PHASEBOUND_TEST_DEFECT"] === "after-connect"
    ? Effect.dieSync(() =>
      new Error(`test defect with ${
        JSON.stringify(
          {
            target,
            secrets: ctx.state.secrets,
            proxies: ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"].map((name) => ctx.env[name])
          },
          // The holder's own value: a `Redacted` would have been turned into "<redacted>" already.
          function(this: Record<string, unknown>, key, value: unknown) {
            const own = this[key]
            return Redacted.isRedacted(own) ? Redacted.value(own) : value
          }
        )
      }`)
    )
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
  readonly stderr: McpClient.StderrMode | undefined
}

/** Resolves budgets, target and auth settings (no I/O but reading the config and key files). */
export const prepare = (
  ctx: RunContext,
  flags: Flags,
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
      format: value(flags.format),
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
    if (Option.isSome(flags.serverStderr)) return yield* Effect.fail(invalidOption(flag("serverStderr"), "invalid-value"))
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
const serverStderr = (ctx: RunContext, mode: McpClient.StderrMode): McpClient.StderrHandling => ({
  mode,
  onSpawn: (tail) => {
    ctx.state.serverStderr = () => stderrBlock(Effect.runSync(tail), ctx.state.secrets)
  }
})

/** What connecting needs from the platform (bin.ts provides it), and the scope it connects in. */
export type Requirements =
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
export const connectTo = (
  ctx: RunContext,
  flags: Flags,
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
        // Tokens in the file, else in memory for this connection; no interactive step (that is `login`'s).
        Effect.provide(Layer.merge(
          auth === undefined || tokenFile === undefined ? Authorization.layerMemoryTokenStore : tokenStoreLayer(tokenFile),
          Authorization.layerNoInteraction
        )),
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
 * hint for the entry point; a refusal until URL elicitations are done leaves them (urlElicitation.ts).
 */
export const withConnection = <A>(
  ctx: RunContext,
  flags: Flags,
  positional: string | undefined,
  use: (connection: McpClient.Connection) => Effect.Effect<A, McpConnectionError>
): Effect.Effect<A, McpConnectionError, Requirements> =>
  Effect.flatMap(prepare(ctx, flags, positional), (prepared) =>
    Effect.flatMap(connectTo(ctx, flags, prepared), use).pipe(
      // A refusal until the user opens URLs: what to open, beside the record (urlElicitation.ts).
      Effect.tapError((error) => leaveElicitations(ctx, ctx.machine(flags.json), error)),
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
const loginArguments = (positional: string, flags: Flags, secrets: ReadonlyArray<string>): string => {
  const words = [positional]
  for (const key of loginArgumentFlags) {
    const given = flags[key]
    if (Option.isSome(given)) words.push(flag(key), given.value)
  }
  return redact(words.join(" "), secrets)
}

/** The flags a hinted `login` repeats, in this order. */
const loginArgumentFlags = ["config", "authClientId", "authClientMetadataUrl"] as const satisfies ReadonlyArray<TextFlagKey>

/** The run is now at `stage`: an operation after discovery, under the call budget. */
export const enter = (ctx: RunContext, stage: Stage, limits: Limits): void => {
  ctx.state.position = { stage, phase: "call", limits }
}

/** The operation is done: what is left is closing the session. */
export const closing = (ctx: RunContext): void => {
  ctx.state.position = { ...ctx.state.position, stage: "close", phase: "session" }
}
