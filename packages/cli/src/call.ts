/**
 * `call`: one tool call, never retried. Its own flags are checked before any I/O; on a terminal
 * its progress is a bar on stderr (progressBar.ts); with `--server-log-level` the server's log
 * messages during the call are collected into the output (serverLog.ts).
 */
import { McpClient, McpSchema } from "@phasebound/client"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Use } from "./command.js"
import { closing, enter } from "./connection.js"
import { flag, type Flags } from "./flags.js"
import { parseArguments } from "./jsonArguments.js"
import { renderCall } from "./output.js"
import { withProgressBar } from "./progressBar.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"
import { collectServerLog } from "./serverLog.js"
import { callAsTask } from "./tasks.js"
import { parseDuration } from "./units.js"

/** What `call`'s own flags resolve to. */
export interface CallInput {
  readonly args: Record<string, unknown>
  readonly idleTimeoutMs: number | undefined
  readonly logLevel: McpSchema.LogLevel | undefined
  readonly effectIdentity: string | undefined
  /** `--task`: the call as a task, not waited for (tasks.ts). */
  readonly task: boolean
}

/** `--server-log-level`: one of the MCP levels. */
const logLevelOf = (text: string | undefined): Effect.Effect<McpSchema.LogLevel | undefined, McpConnectionError> => {
  if (text === undefined) return Effect.succeed(undefined)
  return Schema.is(McpSchema.LogLevel)(text)
    ? Effect.succeed(text)
    : Effect.fail(invalidOption(flag("serverLogLevel"), "invalid-value"))
}

/** `call`'s own flags, in this order. */
export const parseCall = (flags: Flags): Effect.Effect<CallInput, McpConnectionError> =>
  Effect.gen(function*() {
    const args = yield* parseArguments(Option.getOrUndefined(flags.args))
    // parseDuration validates as the client does: a bad value is refused here, before any I/O.
    const idleTimeoutMs = Option.isSome(flags.idleTimeout) ? yield* parseDuration(flag("idleTimeout"), flags.idleTimeout.value) : undefined
    const logLevel = yield* logLevelOf(Option.getOrUndefined(flags.serverLogLevel))
    const effectIdentity = Option.getOrUndefined(flags.effectIdentity)
    if (effectIdentity !== undefined && !McpClient.isEffectIdentity(effectIdentity)) {
      return yield* Effect.fail(invalidOption(flag("effectIdentity"), "invalid-value"))
    }
    return { args, idleTimeoutMs, logLevel, effectIdentity, task: flags.task }
  })

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

/** The call itself: its rendering, and exit code 1 when the tool reports an error. */
export const callTool =
  (ctx: RunContext) => (connection: McpClient.Connection, { input, machine, rest }: Use<CallInput>): Effect.Effect<string, McpConnectionError> =>
    Effect.gen(function*() {
      const { args, effectIdentity, idleTimeoutMs, logLevel } = input
      if (input.task) {
        enter(ctx, "call", connection.policy.call)
        const { isError, text } = yield* callAsTask(connection, rest[0]!, args, effectIdentity, machine)
        closing(ctx)
        ctx.state.exitCode = isError ? 1 : 0
        return text
      }
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
      ctx.state.exitCode = result.isError === true ? 1 : 0
      return renderCall(result, machine, serverLog)
    }).pipe(Effect.scoped)
