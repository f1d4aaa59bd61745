/**
 * `watch`'s own parts (src/watch.ts): its flags checked before any I/O, and each event's line, in
 * machine mode (one JSON object) and on a terminal (one line, control characters replaced).
 */
import type { McpClient } from "@phasebound/client"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { completeFlags } from "../src/flags.js"
import type { RunContext } from "../src/runContext.js"
import { parseWatch, renderEvent, watch } from "../src/watch.js"

/** What `watch` reads of a connection: its call budget, `changes`, `subscribeResource`. */
const fakeConnection = (
  changes: PubSub.PubSub<McpClient.ChangeEvent>,
  subscribeResource: (uri: string) => Effect.Effect<Stream.Stream<McpClient.ResourceUpdate>>
) => ({ policy: { call: { timeoutMs: 1_000, maxBytes: 100 } }, changes: Stream.fromPubSub(changes), subscribeResource }) as unknown as McpClient.Connection

/** A run context that keeps what is printed, and says when `lines` are. */
const countingContextOf = (printed: Array<string>, lines: number, enough: Deferred.Deferred<void>) =>
  ({
    state: {},
    print: (text: string) =>
      Effect.suspend(() => {
        printed.push(text)
        return printed.length >= lines ? Deferred.succeed(enough, undefined) : Effect.void
      })
  }) as unknown as RunContext

/** A run context that keeps what is printed. */
const contextOf = (printed: Array<string>) => ({ state: {}, print: (text: string) => Effect.sync(() => void printed.push(text)) }) as unknown as RunContext

describe("watch", () => {
  it("watches the lists without --resource, each URI once with it, and refuses an empty one", () => {
    expect(Effect.runSync(parseWatch(completeFlags({})))).toEqual({ resources: [], lists: true })
    expect(Effect.runSync(parseWatch(completeFlags({ resource: ["doc://a", "doc://a", "doc://b"] })))).toEqual({
      resources: ["doc://a", "doc://b"],
      lists: false
    })
    expect(Effect.runSync(parseWatch(completeFlags({ resource: ["doc://a"], lists: true })))).toEqual({ resources: ["doc://a"], lists: true })
    expect(Effect.runSync(Effect.flip(parseWatch(completeFlags({ resource: [""] }))))).toMatchObject({
      _tag: "InvalidOption",
      option: "--resource",
      stage: "config",
      outcome: "not-sent"
    })
  })

  it("one JSON line per event in machine mode, one plain line on a terminal", () => {
    expect(renderEvent({ _tag: "ResourceUpdated", uri: "doc://a", gap: false }, true)).toBe(
      "{\"event\":\"ResourceUpdated\",\"uri\":\"doc://a\",\"gap\":false}\n"
    )
    expect(renderEvent({ _tag: "PromptsListChanged", gap: true }, true)).toBe("{\"event\":\"PromptsListChanged\",\"gap\":true}\n")
    expect(renderEvent({ _tag: "Watching", resources: ["doc://a"], lists: true }, false)).toBe("watching doc://a, the lists (Ctrl-C ends)\n")
    expect(renderEvent({ _tag: "ResourceUpdated", uri: "doc://a\u001b[2J\nx", gap: false }, false)).toBe("doc://a [2J x updated\n")
    expect(renderEvent({ _tag: "ToolsListChanged", gap: true }, false)).toBe("tools may have changed (a stream was restored)\n")
    for (
      const line of [renderEvent({ _tag: "ResourcesListChanged", gap: false }, false), renderEvent({ _tag: "ResourceUpdated", uri: "x\ny", gap: true }, false)]
    ) {
      expect(line.slice(0, -1)).not.toContain("\n")
    }
  })

  it("a resource's updates the server ended for good end the watch with TransportFailure stream-ended", () =>
    Effect.runPromise(Effect.gen(function*() {
      const changes = yield* PubSub.sliding<McpClient.ChangeEvent>(16)
      const printed: Array<string> = []
      const connection = fakeConnection(
        changes,
        (uri) => Effect.succeed(Stream.make({ _tag: "ResourceUpdated", uri, gap: false } as const))
      )
      const error = yield* Effect.flip(
        watch(contextOf(printed))(connection, {
          input: { resources: ["doc://a"], lists: true },
          machine: true
        } as never)
      )
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "stream-ended", stage: "subscribe-resource", outcome: "not-applied" })
      expect(printed).toHaveLength(2)
    })))

  it("a list change announced while the resources are subscribed is printed (the lists are read from first)", () =>
    Effect.runPromise(Effect.gen(function*() {
      const changes = yield* PubSub.sliding<McpClient.ChangeEvent>(16)
      const printed: Array<string> = []
      const enough = yield* Deferred.make<void>()
      const connection = fakeConnection(
        changes,
        () => Effect.as(PubSub.publish(changes, { _tag: "PromptsListChanged", gap: false }), Stream.never)
      )
      const running = yield* Effect.fork(
        watch(countingContextOf(printed, 2, enough))(connection, {
          input: { resources: ["doc://a"], lists: true },
          machine: true
        } as never)
      )
      yield* Deferred.await(enough)
      yield* Fiber.interrupt(running)
      expect(printed).toEqual([
        "{\"event\":\"Watching\",\"resources\":[\"doc://a\"],\"lists\":true}\n",
        "{\"event\":\"PromptsListChanged\",\"gap\":false}\n"
      ])
    })))
})
