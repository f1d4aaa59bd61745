/**
 * `phasebound watch <target> [--resource URI ...] [--lists]` (packages/cli/README.md, "Watching a server: `watch`";
 * docs/DESIGN.md, "Subscriptions"): subscribes to each `--resource` (under the call budget, each
 * refused before any I/O when the server does not declare `resources.subscribe`), then prints
 * one line per event until interrupted: first `Watching`, then each `ResourceUpdated` of a
 * watched URI and, with `--lists` (the default without `--resource`), each list change
 * (`ToolsListChanged`, `PromptsListChanged`, `ResourcesListChanged`). `gap: true` says a stream
 * was lost and restored: re-read. JSON lines in machine mode, a short sentence per event on a
 * terminal. SIGINT or SIGTERM is its normal end: it unsubscribes, closes the session, exits 0
 * with no record. A failure before it watches is the one record, as for every command; so is
 * the end of a watched resource's updates by the server (a 2026-07-28 subscription it ended for
 * good): `TransportFailure` `stream-ended`.
 */
import type { McpClient } from "@phasebound/client"
import { type McpConnectionError, TransportFailure } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type * as Take from "effect/Take"
import type { Use } from "./command.js"
import { enter } from "./connection.js"
import { flag, type Flags } from "./flags.js"
import { oneLine } from "./output.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"

export interface WatchInput {
  readonly resources: ReadonlyArray<string>
  readonly lists: boolean
}

/** The URIs to watch (each non-empty, none twice) and whether the lists are watched. */
export const parseWatch = (flags: Flags): Effect.Effect<WatchInput, McpConnectionError> => {
  const resources = flags.resource
  if (resources.some((uri) => uri.length === 0)) return Effect.fail(invalidOption(flag("resource")))
  return Effect.succeed({ resources: [...new Set(resources)], lists: flags.lists || resources.length === 0 })
}

/** One event as its output line. */
export const renderEvent = (
  event: McpClient.ChangeEvent | { readonly _tag: "Watching"; readonly resources: ReadonlyArray<string>; readonly lists: boolean },
  machine: boolean
): string => {
  const { _tag, ...fields } = event
  if (machine) return `${JSON.stringify({ event: _tag, ...fields })}\n`
  switch (event._tag) {
    case "Watching":
      return `watching ${[...event.resources.map(oneLine), ...(event.lists ? ["the lists"] : [])].join(", ")} (Ctrl-C ends)\n`
    case "ResourceUpdated":
      // One line on a terminal, whatever the URI holds.
      return `${oneLine(event.uri)} ${event.gap ? "may have changed (a stream was restored)" : "updated"}\n`
    default: {
      const what = event._tag === "ToolsListChanged" ? "tools" : event._tag === "PromptsListChanged" ? "prompts" : "resources"
      return `${what} ${event.gap ? "may have changed (a stream was restored)" : "changed"}\n`
    }
  }
}

export const watch = (ctx: RunContext) => (connection: McpClient.Connection, { input, machine }: Use<WatchInput>): Effect.Effect<string, McpConnectionError> =>
  Effect.scoped(Effect.gen(function*() {
    enter(ctx, "subscribe-resource", connection.policy.call)
    // The lists are read from before the subscriptions: a change announced meanwhile is not lost.
    // `changes` subscribes when it runs: its reader is forked in the scope and waited for until it
    // waits for its first event (suspended), so its subscription is taken. A sliding buffer, as `changes`.
    const taken = yield* Queue.sliding<Take.Take<McpClient.ChangeEvent>>(256)
    if (input.lists) {
      const reader = yield* Effect.forkScoped(
        Stream.runIntoQueue(Stream.filter(connection.changes, (event) => event._tag !== "ResourceUpdated"), taken)
      )
      while ((yield* Fiber.status(reader))._tag === "Running") yield* Effect.yieldNow()
    }
    const lists: Stream.Stream<McpClient.ChangeEvent> = input.lists ? Stream.flattenTake(Stream.fromQueue(taken)) : Stream.empty
    // A resource's updates end only when the server ended them for good: the watch fails then.
    const ended = new TransportFailure({
      stage: "subscribe-resource",
      phase: "call",
      limits: { timeoutMs: connection.policy.call.timeoutMs, maxBytes: connection.policy.call.maxBytes },
      reason: "stream-ended",
      outcome: "not-applied",
      retryable: false
    })
    const updates = yield* Effect.forEach(
      input.resources,
      (uri) => Effect.map(connection.subscribeResource(uri), (stream) => Stream.concat(stream, Stream.fail(ended)))
    )
    // From here an interruption is the watch's normal end (bin.ts).
    ctx.state.endsOnInterrupt = true
    yield* ctx.print(renderEvent({ _tag: "Watching", resources: input.resources, lists: input.lists }, machine))
    yield* Stream.mergeAll<McpClient.ChangeEvent, McpConnectionError, never>([lists, ...updates], { concurrency: "unbounded" }).pipe(
      Stream.runForEach((event) => ctx.print(renderEvent(event, machine)))
    )
    // The lists never end on their own: only an interruption (or a resource's end) ends the watch.
    return yield* Effect.never
  }))
