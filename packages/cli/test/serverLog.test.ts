/**
 * `call --server-log-level`'s reader of the server's log messages, on a PubSub like the connection's:
 * subscribed when it returns, a message published just before the call's answer is not lost,
 * at most 100 kept and the rest counted.
 */
import type { McpSchema } from "@phasebound/client"
import { Effect, PubSub, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { collectServerLog, maxLogs } from "../src/serverLog.js"

const message = (i: number): McpSchema.LogMessage => ({ level: "info", logger: "t", data: `m${i}` })

const run = <A>(effect: Effect.Effect<A, never, import("effect/Scope").Scope>) => Effect.runPromise(Effect.scoped(effect))

describe("collectServerLog", () => {
  it("sees what is published once it returned, even published synchronously right before the end", () =>
    run(Effect.gen(function*() {
      const pubsub = yield* PubSub.sliding<McpSchema.LogMessage>(1000)
      pubsub.unsafeOffer(message(0)) // before the subscription: not the call's
      const finish = yield* collectServerLog(Stream.fromPubSub(pubsub))
      pubsub.unsafeOffer(message(1))
      pubsub.unsafeOffer(message(2))
      const log = yield* finish
      expect(log).toEqual({ logs: [message(1), message(2)], dropped: 0 })
    })))

  it("keeps the first 100 and counts the rest", () =>
    run(Effect.gen(function*() {
      const pubsub = yield* PubSub.sliding<McpSchema.LogMessage>(1000)
      const finish = yield* collectServerLog(Stream.fromPubSub(pubsub))
      for (let i = 0; i < 250; i++) pubsub.unsafeOffer(message(i))
      const log = yield* finish
      expect(log.logs).toHaveLength(maxLogs)
      expect(log.logs[0]).toEqual(message(0))
      expect(log.logs.at(-1)).toEqual(message(maxLogs - 1))
      expect(log.dropped).toBe(150)
    })))

  it("messages that arrive later, asynchronously, are collected; none after the end", () =>
    run(Effect.gen(function*() {
      const pubsub = yield* PubSub.sliding<McpSchema.LogMessage>(1000)
      const finish = yield* collectServerLog(Stream.fromPubSub(pubsub))
      yield* Effect.promise(() =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            pubsub.unsafeOffer(message(1))
            resolve()
          }, 20)
        )
      )
      const log = yield* finish
      pubsub.unsafeOffer(message(2))
      expect(log).toEqual({ logs: [message(1)], dropped: 0 })
    })))
})
