/**
 * The `phasebound` entry point, under Node, Bun and the compiled executable: picks the platform
 * layers, runs the command as one interruptible fiber, and turns its end into stdout, at most
 * one stderr record and an exit code.
 *
 * The stderr rule is enforced here: runtime warnings are silenced, @effect/cli's own error
 * printing is muted (its usage errors become an InvalidOption record), logs are off, and a
 * stray exception anywhere becomes the scrubbed InternalError record.
 */
// First: the modules below evaluate without capturing stack traces (moduleLoad.ts).
import { endModuleLoad } from "./moduleLoad.js"
import * as ValidationError from "@effect/cli/ValidationError"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { HttpProxy, McpConnectionError } from "@phasebound/client"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { runCli } from "./cli.js"
import { flag, flagNames } from "./flags.js"
import {
  cliRecord,
  exitCodeOf,
  exitCodes,
  invalidOption,
  recordLine,
  redactRecord,
  startPosition,
  type RecordBody
} from "./record.js"
import type { RunContext, RunState } from "./runContext.js"

endModuleLoad()

// Warnings (ExperimentalWarning, MaxListenersExceededWarning...) would be a second stderr line.
process.removeAllListeners("warning")
process.on("warning", () => {})

const argv = process.argv
const debug = argv.includes(flag("debug")) || process.env["PHASEBOUND_DEBUG"] === "1"

const state: RunState = { position: startPosition, secrets: [], stdout: "", exitCode: 0, hint: undefined }

const write = (stream: NodeJS.WriteStream, text: string): Promise<void> =>
  text === "" ? Promise.resolve() : new Promise((resolve) => stream.write(text, () => resolve()))

let finished = false

const proxySecrets = HttpProxy.secretsOf(process.env)

/** Prints what the run leaves and exits; only the first caller gets to do it. */
const finish = async (code: number, stdout: string, record?: RecordBody, debugText?: string): Promise<void> => {
  if (finished) return
  finished = true
  // The commands set the target's secrets (with its config entry's inputs and variables); every
  // proxy variable's credentials come from the environment. Both are scrubbed from the record's
  // peer text (redactRecord) and from the debug dump.
  state.secrets = McpConnectionError.mergeSecrets(state.secrets, proxySecrets)
  await write(process.stdout, stdout)
  // For a human only: a stdio server's last stderr lines, labelled, before the record
  // (--server-stderr tail). When stderr is not a terminal it stays the record alone.
  if (record !== undefined && process.stderr.isTTY === true) await write(process.stderr, state.serverStderr?.() ?? "")
  if (record !== undefined) await write(process.stderr, recordLine(redactRecord(record, state.secrets)))
  // For a human only: a command set it in human mode, and stderr is a terminal.
  if (record !== undefined && state.hint !== undefined && process.stderr.isTTY === true) {
    await write(process.stderr, `${state.hint}\n`)
  }
  if (debugText !== undefined) await write(process.stderr, `${McpConnectionError.redact(debugText, state.secrets)}\n`)
  // Exit now: a keep-alive socket or a stdin reader must not hold the process open.
  process.exit(code)
}

const internalError = (cause: unknown) =>
  finish(
    exitCodes.internal,
    "",
    cliRecord("InternalError", state.position),
    debug ? (Cause.isCause(cause) ? Cause.pretty(cause, { renderErrorCause: true }) : String((cause as Error)?.stack ?? cause)) : undefined
  )

process.on("uncaughtException", (error) => void internalError(error))
process.on("unhandledRejection", (reason) => void internalError(reason))

/** Progress may be drawn on stderr when it is a TTY, never in machine mode. */
const terminal: RunContext["terminal"] = (machine) =>
  machine || process.stderr.isTTY !== true
    ? undefined
    : { columns: () => process.stderr.columns, write: (text) => void process.stderr.write(text) }

/** Progress on a TTY stderr while discovery runs; never in machine mode. */
const progress: RunContext["progress"] = (label, machine, effect) => {
  if (terminal(machine) === undefined) return effect
  const frames = ["|", "/", "-", "\\"]
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      let frame = 0
      // The first frame comes after 120 ms: a fast discovery draws nothing.
      const timer = setInterval(() => {
        process.stderr.write(`\r${frames[frame++ % frames.length]} ${label}...`)
      }, 120)
      return { timer, drawn: () => frame > 0 }
    }),
    () => effect,
    ({ drawn, timer }) =>
      Effect.sync(() => {
        clearInterval(timer)
        if (drawn()) process.stderr.write("\r\x1b[K")
      })
  )
}

const ctx: RunContext = {
  state,
  env: process.env,
  machine: (json) => json || process.stdout.isTTY !== true,
  progress,
  terminal,
  print: (text) => Effect.promise(() => write(process.stdout, text))
}

// @effect/cli prints usage errors with Console.error: muted, the record says it instead.
// Help and --version use Console.log, which stays on stdout.
const quietConsole = Effect.map(Console.consoleWith(Effect.succeed), (console): Console.Console => ({
  ...console,
  error: () => Effect.void,
  warn: () => Effect.void,
  unsafe: { ...console.unsafe, error: () => {}, warn: () => {} }
}))

// The HTTP client: node:http under Node, fetch under Bun (native there). Node 20's fetch loads its
// own copy of undici on first use, about 150 ms of CPU at start-up (docs/BENCHMARKS.md, "CLI
// start-up"); node:http is part of Node, and neither follows redirects. A static import: a
// dynamic one would make the bundler keep far more of effect (+75 KB minified).
// With a proxy in the environment (HTTPS_PROXY, HTTP_PROXY, their lower-case forms), HttpProxy's
// client on either runtime: undici under Node, loaded only then (docs/DESIGN.md, "Proxies").
const httpClient = HttpProxy.isConfigured(process.env)
  ? HttpProxy.layerEnv
  : process.versions["bun"] === undefined
  ? NodeHttpClient.layer
  : FetchHttpClient.layer

// The Node command executor works under Bun too.
const platform = Layer.mergeAll(
  httpClient,
  Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer),
  NodeFileSystem.layer,
  NodePath.layer,
  NodeTerminal.layer,
  Logger.replace(Logger.defaultLogger, Logger.none)
)

const program = Effect.flatMap(quietConsole, (console) => runCli(ctx)(argv).pipe(Effect.withConsole(console), Effect.provide(platform)))

const usageRecord = (error: ValidationError.ValidationError): RecordBody => {
  const text = JSON.stringify(error.error)
  // A flag's name is safe to put in a record (never a value).
  const flag = (text.match(/--[a-z-]+/g) ?? []).find((name) => flagNames.has(name))
  const option = flag ?? (error._tag === "CommandMismatch" || error._tag === "MissingSubcommand" ? "command" : "arguments")
  return McpConnectionError.toRecord(invalidOption(option, "invalid-value"))
}

// A reader that went away (`phasebound tools URL | head -1`) is not an internal error.
process.stdout.on("error", () => process.exit(state.exitCode))

/** The exit code of the first signal received: 130 for SIGINT, 143 for SIGTERM. */
let interruptedBy: number | undefined
const fiber = Effect.runFork(program)

const onSignal = (code: number) => () => {
  if (interruptedBy !== undefined) {
    // A second signal does not wait for the bounded release any more.
    void (state.endsOnInterrupt === true ? finish(0, "") : finish(interruptedBy, "", cliRecord("Interrupted", state.position)))
    return
  }
  interruptedBy = code
  // Interrupting the fiber runs its finalizers: the child is stopped, the session DELETEd.
  fiber.unsafeInterruptAsFork(fiber.id())
}
process.on("SIGINT", onSignal(exitCodes.interrupted))
process.on("SIGTERM", onSignal(exitCodes.terminated))

// No top-level await: the Node build is a CommonJS script, so that the launcher can keep its V8
// code cache (docs/BENCHMARKS.md, "CLI start-up").
void Effect.runPromise(Fiber.await(fiber)).then(async (exit) => {
  if (interruptedBy !== undefined && state.endsOnInterrupt === true) {
    // `watch`: the interruption is how it ends (its subscriptions and session released).
    await finish(0, "")
  } else if (interruptedBy !== undefined) {
    await finish(interruptedBy, "", cliRecord("Interrupted", state.position))
  } else if (Exit.isSuccess(exit)) {
    await finish(state.exitCode, state.stdout)
  } else {
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure) && McpConnectionError.isMcpConnectionError(failure.value)) {
      const record = McpConnectionError.toRecord(failure.value)
      await finish(exitCodeOf(record.tag), "", record)
    } else if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) {
      await finish(exitCodes.invalid, "", usageRecord(failure.value))
    } else {
      await internalError(exit.cause)
    }
  }
})
