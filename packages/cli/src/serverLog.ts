/**
 * The server's log messages during one call (`call --server-log-level`). The reader subscribes before
 * the level is set and the call is sent, keeps at most `maxLogs` messages and counts the rest;
 * what it collected goes in the output, never on stderr (stderr is the failure record's).
 */
import type { McpSchema } from "@phasebound/client"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberStatus from "effect/FiberStatus"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ServerLog } from "./output.js"

export const maxLogs = 100

/**
 * Until the reader waits for the next message (or has ended). Asking a fiber its status is a
 * message it answers after those before it: a message delivered to the reader earlier (its
 * start, a log message the call's answer came after) is handled first.
 */
const settled = (reader: Fiber.RuntimeFiber<void>): Effect.Effect<void> =>
  Effect.flatMap(Fiber.status(reader), (status) => FiberStatus.isRunning(status) ? Effect.zipRight(Effect.yieldNow(), settled(reader)) : Effect.void)

/**
 * Starts reading `messages` in the current scope and returns once the reader is subscribed;
 * the effect it returns takes what was read so far and stops the reader.
 */
export const collectServerLog = (
  messages: Stream.Stream<McpSchema.LogMessage>
): Effect.Effect<Effect.Effect<ServerLog>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const logs: Array<McpSchema.LogMessage> = []
    let dropped = 0
    const reader = yield* Effect.forkScoped(Stream.runForEach(messages, (message) =>
      Effect.sync(() => {
        if (logs.length < maxLogs) logs.push(message)
        else dropped++
      })))
    yield* settled(reader)
    return Effect.gen(function*() {
      yield* settled(reader)
      yield* Fiber.interrupt(reader)
      return { logs: [...logs], dropped }
    })
  })
