/**
 * The pure parts of subscriptions (docs/DESIGN.md, "Subscriptions"): the routing of resource
 * updates and list changes (`internal/notifications.ts`) against hostile input, and the
 * 2026-07-28 subscription's rules (`internal/listen.ts`) under `TestClock`: a new set of URIs is a
 * new subscription that replaces the old one only once acknowledged, a drop is made again after
 * its delay and is a gap, an acknowledgement that does not come in time is a drop, the server's
 * own end ends it, a URI the server does not honour is said so.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, FastCheck as fc, Fiber, Queue, Scope, Stream, TestClock } from "effect"
import type { Core } from "../../src/internal/connection/core.js"
import * as LiveLists from "../../src/internal/connection/liveLists.js"
import * as Listen from "../../src/internal/listen.js"
import * as Notifications from "../../src/internal/notifications.js"
import type { Exchange, Response } from "../../src/internal/transport/transport.js"
import type { McpConnectionError } from "../../src/McpConnectionError.js"
import { RemoteRefusal, TransportFailure } from "../../src/McpConnectionError.js"

const notification = (method: string, params?: unknown) => ({ jsonrpc: "2.0" as const, method, params: params as Record<string, unknown> })

const exchange: Exchange = { stage: "subscribe-resource", phase: "call", budget: { timeoutMs: 5_000, maxBytes: 1_000 } }

describe("notifications: resource updates and list changes", () => {
  it.scoped("an update reaches the watchers of its URI (one pending each) and the change events; another URI's is dropped", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const events = yield* router.changes.subscribe
      const one = yield* router.watch("doc://a")
      const two = yield* router.watch("doc://a")
      for (let i = 0; i < 1_000; i++) yield* router.take(notification("notifications/resources/updated", { uri: "doc://a" }))
      yield* router.take(notification("notifications/resources/updated", { uri: "doc://other" }))
      expect(yield* Queue.size(one.updates)).toBe(1)
      expect(yield* Queue.size(two.updates)).toBe(1)
      const seen = Chunk.toReadonlyArray(yield* Queue.takeAll(events))
      expect(seen.length).toBe(Notifications.changeBuffer)
      expect(seen.every((e) => e._tag === "ResourceUpdated" && e.uri === "doc://a" && !e.gap)).toBe(true)
      yield* one.release
      yield* two.release
      expect(router.watched()).toEqual([])
      yield* router.take(notification("notifications/resources/updated", { uri: "doc://a" }))
      expect(yield* Queue.size(events)).toBe(0)
    }))

  it.scoped("prompt and resource list changes mark their lists (one mark each) and are change events", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const events = yield* router.changes.subscribe
      for (let i = 0; i < 5; i++) {
        yield* router.take(notification("notifications/prompts/list_changed"))
        yield* router.take(notification("notifications/resources/list_changed"))
      }
      expect(Chunk.size(yield* Queue.takeAll(router.promptsChanged))).toBe(1)
      expect(Chunk.size(yield* Queue.takeAll(router.resourcesChanged))).toBe(1)
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(events)).slice(0, 2)).toEqual([
        { _tag: "PromptsListChanged", gap: false },
        { _tag: "ResourcesListChanged", gap: false }
      ])
    }))

  it.scoped("a gap is said for every list and every watched URI", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const events = yield* router.changes.subscribe
      const a = yield* router.watch("doc://a")
      yield* router.watch("doc://b")
      yield* router.missed
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(events))).toEqual([
        { _tag: "ToolsListChanged", gap: true },
        { _tag: "PromptsListChanged", gap: true },
        { _tag: "ResourcesListChanged", gap: true },
        { _tag: "ResourceUpdated", uri: "doc://a", gap: true },
        { _tag: "ResourceUpdated", uri: "doc://b", gap: true }
      ])
      expect(Chunk.toReadonlyArray(yield* Queue.takeAll(a.updates))).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: true }])
    }))

  it.scoped("observeChanges hears every event, synchronously, however far a reader of changes falls behind; a throwing observer changes nothing", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const heard: Array<string> = []
      const stop = router.observeChanges((event) => void heard.push(event._tag))
      router.observeChanges(() => {
        throw new Error("an observer's own failure")
      })
      yield* router.watch("doc://a")
      const events = yield* router.changes.subscribe
      for (let i = 0; i < 1_000; i++) yield* router.take(notification("notifications/resources/updated", { uri: "doc://a" }))
      yield* router.take(notification("notifications/prompts/list_changed"))
      expect(heard.length).toBe(1_001)
      expect(heard.at(-1)).toBe("PromptsListChanged")
      expect(yield* Queue.size(events)).toBe(Notifications.changeBuffer)
      stop()
      yield* router.take(notification("notifications/tools/list_changed"))
      expect(heard.length).toBe(1_001)
    }))

  it.effect.prop(
    "whatever a hostile server sends, nothing fails, only watched URIs are delivered, each watcher holds at most one update",
    [fc.array(
      fc.record({
        method: fc.constantFrom(
          "notifications/resources/updated",
          "notifications/prompts/list_changed",
          "notifications/resources/list_changed",
          "notifications/subscriptions/acknowledged",
          "notifications/tools/list_changed"
        ),
        params: fc.oneof(
          fc.anything(),
          fc.record({ uri: fc.oneof(fc.constantFrom("doc://a", "doc://b"), fc.string(), fc.anything(), fc.string({ minLength: 8_193, maxLength: 9_000 })) })
        )
      }),
      { maxLength: 200 }
    )],
    ([messages]) =>
      Effect.gen(function*() {
        const router = yield* Notifications.make(10)
        const events = yield* router.changes.subscribe
        const a = yield* router.watch("doc://a")
        for (const { method, params } of messages) yield* router.take(notification(method, params))
        expect(yield* Queue.size(a.updates)).toBeLessThanOrEqual(1)
        const seen = Chunk.toReadonlyArray(yield* Queue.takeAll(events))
        expect(seen.length).toBeLessThanOrEqual(Notifications.changeBuffer)
        for (const event of seen) if (event._tag === "ResourceUpdated") expect(event.uri).toBe("doc://a")
      }).pipe(Effect.scoped),
    { fastCheck: { numRuns: 200 } }
  )
})

/** A scripted server side of `subscriptions/listen`: each request is recorded and waits until the test ends it. */
const scripted = Effect.gen(function*() {
  const requests = yield* Queue.unbounded<{ readonly filter: Record<string, unknown>; readonly end: Deferred.Deferred<Response, McpConnectionError> }>()
  const state = { closed: 0 }
  const subscribe = (params: Record<string, unknown>) =>
    Effect.flatMap(Deferred.make<Response, McpConnectionError>(), (end) =>
      Effect.zipRight(
        Queue.offer(requests, { filter: params["notifications"] as Record<string, unknown>, end }),
        // The client closing the request (its stream) is an interruption.
        Effect.onInterrupt(Deferred.await(end), () => Effect.sync(() => void state.closed++))
      ))
  return { requests, subscribe, closed: () => state.closed }
})

const announces: Listen.Announces = { tools: true, prompts: false, resources: true, subscribe: true }
const dropped = new TransportFailure({
  stage: "discover",
  phase: "session",
  limits: { timeoutMs: 5_000, maxBytes: 1_000 },
  reason: "stream-ended",
  outcome: "unknown",
  retryable: false
})

/** A listener let start at once, as discovery does once its listing is answered. */
const listening = (options: Parameters<typeof Listen.make>[0]) => Effect.tap(Listen.make(options), (listener) => listener.start)

describe("the 2026-07-28 subscription", () => {
  it.scoped("is made only once started: nothing is sent before", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      const listener = yield* Listen.make({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      yield* TestClock.adjust("1 minute")
      expect(yield* Queue.size(server.requests)).toBe(0)
      yield* listener.start
      const first = yield* Queue.take(server.requests)
      expect(first.filter).toEqual({ toolsListChanged: true, resourcesListChanged: true })
    }))

  it.scoped("asks for what the server announces; a new set of URIs replaces the subscription once it is acknowledged", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      let gaps = 0
      const listener = yield* listening({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.sync(() => void gaps++) },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      const first = yield* Queue.take(server.requests)
      expect(first.filter).toEqual({ toolsListChanged: true, resourcesListChanged: true })
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      const updated = yield* Effect.fork(listener.update(new Set(["doc://a"]), exchange))
      const second = yield* Queue.take(server.requests)
      expect(second.filter).toEqual({ toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ["doc://a"] })
      // Not acknowledged yet: the first subscription still serves.
      expect(server.closed()).toBe(0)
      expect(updated.unsafePoll()).toBeNull()
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: second.filter }))
      expect([...(yield* Fiber.join(updated))]).toEqual(["doc://a"])
      expect(server.closed()).toBe(1)
      expect(gaps).toBe(0)
      // A URI the server leaves out of what it honours is said so.
      const refused = yield* Effect.fork(listener.update(new Set(["doc://a", "doc://secret"]), exchange))
      const third = yield* Queue.take(server.requests)
      yield* router.take(
        notification("notifications/subscriptions/acknowledged", { notifications: { toolsListChanged: true, resourceSubscriptions: ["doc://a"] } })
      )
      expect([...(yield* Fiber.join(refused))]).toEqual(["doc://a"])
      expect(third.filter["resourceSubscriptions"]).toEqual(["doc://a", "doc://secret"])
    }))

  it.scoped("a dropped subscription is made again after its delay, and its acknowledgement is a gap; a late acknowledgement is a drop", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      let gaps = 0
      const gapped = yield* Deferred.make<void>()
      yield* listening({
        subscribe: server.subscribe,
        hooks: {
          nextAcknowledgement: router.nextAcknowledgement,
          reopened: Effect.zipRight(Effect.sync(() => void gaps++), Deferred.succeed(gapped, undefined))
        },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      const first = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      yield* Deferred.fail(first.end, dropped)
      yield* TestClock.adjust("999 millis")
      expect(yield* Queue.size(server.requests)).toBe(0)
      yield* TestClock.adjust("1 millis")
      const second = yield* Queue.take(server.requests)
      expect(second.filter).toEqual(first.filter)
      // Never acknowledged: after the timeout it counts as dropped (2 s more before the next).
      yield* TestClock.adjust("5 seconds")
      yield* TestClock.adjust("1999 millis")
      expect(yield* Queue.size(server.requests)).toBe(0)
      yield* TestClock.adjust("1 millis")
      const third = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: third.filter }))
      yield* Deferred.await(gapped)
      expect(gaps).toBe(1)
      // The second, never acknowledged, was closed.
      expect(server.closed()).toBe(1)
    }))

  it.scoped("the server's own end ends it: who waits for a new set fails, and nothing is subscribed again", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      const listener = yield* listening({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      const first = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      yield* Deferred.succeed(first.end, { result: {}, bytes: 10 } as unknown as Response)
      yield* Effect.yieldNow()
      yield* TestClock.adjust("60 seconds")
      expect(yield* Queue.size(server.requests)).toBe(0)
      const error = yield* Effect.flip(listener.update(new Set(["doc://a"]), exchange))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "stream-ended", outcome: "not-sent" })
    }))

  it.scoped("replacement refused while the previous stands: who waits fails with the refusal, the previous still serves", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      const listener = yield* listening({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      const first = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      const updated = yield* Effect.fork(listener.update(new Set(["doc://a"]), exchange))
      const second = yield* Queue.take(server.requests)
      const refusal = new RemoteRefusal(
        {
          stage: "discover",
          phase: "session",
          limits: { timeoutMs: 5_000, maxBytes: 1_000 },
          code: -32602,
          outcome: "not-applied",
          retryable: false
        } as unknown as ConstructorParameters<typeof RemoteRefusal>[0]
      )
      yield* Deferred.fail(second.end, refusal)
      const error = yield* Effect.flip(Fiber.join(updated))
      expect(error).toBe(refusal)
      // The first still stands: not closed, not made again; a later set makes a new one.
      expect(server.closed()).toBe(0)
      expect(yield* Queue.size(server.requests)).toBe(0)
      const again = yield* Effect.fork(listener.update(new Set(["doc://b"]), exchange))
      const third = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: third.filter }))
      expect([...(yield* Fiber.join(again))]).toEqual(["doc://b"])
      expect(server.closed()).toBe(1)
    }))

  it.scoped("replacement dropped or never acknowledged while the previous stands: who waits fails, not applied", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      const listener = yield* listening({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      const first = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      // Dropped.
      const dropping = yield* Effect.fork(listener.update(new Set(["doc://a"]), exchange))
      const second = yield* Queue.take(server.requests)
      yield* Deferred.fail(second.end, dropped)
      expect(yield* Effect.flip(Fiber.join(dropping))).toMatchObject({
        _tag: "TransportFailure",
        reason: "stream-ended",
        outcome: "not-applied",
        stage: "subscribe-resource"
      })
      // Never acknowledged: failed once the acknowledgement timeout passes, not at the caller's deadline.
      const late = yield* Effect.fork(listener.update(new Set(["doc://b"]), exchange))
      yield* Queue.take(server.requests)
      yield* TestClock.adjust("5 seconds")
      expect(yield* Effect.flip(Fiber.join(late))).toMatchObject({ _tag: "TransportFailure", reason: "stream-ended", outcome: "not-applied" })
      // The first still serves: only the two replacements were closed.
      expect(server.closed()).toBe(1)
      expect(yield* Queue.size(server.requests)).toBe(0)
    }))

  it.scoped("1,000 re-subscriptions run in one loop: each acknowledged, the fiber's stack stays flat", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      const listener = yield* listening({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void },
        announces,
        acknowledgementTimeoutMs: 5_000
      })
      const first = yield* Queue.take(server.requests)
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      for (let i = 0; i < 1_000; i++) {
        const updated = yield* Effect.fork(listener.update(new Set([`doc://${i}`]), exchange))
        const next = yield* Queue.take(server.requests)
        yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: next.filter }))
        expect([...(yield* Fiber.join(updated))]).toEqual([`doc://${i}`])
      }
      expect(server.closed()).toBe(1_000)
    }))

  it.scoped("the server's end or refusal ends the watchers open then (with the refusal); a later watch is not ended", () =>
    Effect.gen(function*() {
      for (const ending of ["result", "refusal"] as const) {
        const router = yield* Notifications.make(10)
        const server = yield* scripted
        const watch = yield* router.watch("doc://a")
        yield* listening({
          subscribe: server.subscribe,
          hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void, ended: router.endWatches },
          announces,
          acknowledgementTimeoutMs: 5_000
        })
        const first = yield* Queue.take(server.requests)
        yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
        const ended = yield* Effect.fork(watch.ended)
        yield* Effect.yieldNow()
        expect(ended.unsafePoll()).toBeNull()
        const refusal = new RemoteRefusal(
          {
            stage: "discover",
            phase: "session",
            limits: { timeoutMs: 5_000, maxBytes: 1_000 },
            outcome: "not-applied",
            retryable: false
          } as unknown as ConstructorParameters<typeof RemoteRefusal>[0]
        )
        if (ending === "result") yield* Deferred.succeed(first.end, { result: {}, bytes: 10 } as unknown as Response)
        else yield* Deferred.fail(first.end, refusal)
        expect(yield* Fiber.join(ended)).toBe(ending === "result" ? undefined : refusal)
        const later = yield* router.watch("doc://a")
        const laterEnded = yield* Effect.fork(later.ended)
        yield* Effect.yieldNow()
        expect(laterEnded.unsafePoll()).toBeNull()
      }
    }))

  it.scoped("with nothing to ask for, no subscription is open until a URI is subscribed", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const server = yield* scripted
      const listener = yield* listening({
        subscribe: server.subscribe,
        hooks: { nextAcknowledgement: router.nextAcknowledgement, reopened: Effect.void },
        announces: { tools: false, prompts: false, resources: false, subscribe: true },
        acknowledgementTimeoutMs: 5_000
      })
      yield* TestClock.adjust("60 seconds")
      expect(yield* Queue.size(server.requests)).toBe(0)
      const updated = yield* Effect.fork(listener.update(new Set(["doc://a"]), exchange))
      const first = yield* Queue.take(server.requests)
      expect(first.filter).toEqual({ resourceSubscriptions: ["doc://a"] })
      yield* router.take(notification("notifications/subscriptions/acknowledged", { notifications: first.filter }))
      expect([...(yield* Fiber.join(updated))]).toEqual(["doc://a"])
      // The last URI gone: the subscription is closed, none is made.
      yield* listener.update(new Set(), exchange)
      expect(server.closed()).toBe(1)
      expect(yield* Queue.size(server.requests)).toBe(0)
    }))
})

describe("a live list (prompts, resources)", () => {
  /** What a live list reads of the connection: its relist delay and its scope (a pure part). */
  const coreOf = (scope: Scope.Scope) => ({ policy: { relistDelayMs: 200 }, scope }) as unknown as Core

  it.scoped("lists nothing until asked; then each announced change after the relist delay; says a new list only when it differs", () =>
    Effect.gen(function*() {
      const changed = yield* Queue.sliding<void>(1)
      const answers = [["greet"], ["greet"], ["greet", "late"]]
      let listed = 0
      const list = Effect.sync(() => answers[Math.min(listed++, answers.length - 1)]!)
      const live = yield* LiveLists.make(coreOf(yield* Effect.scope), list, changed)
      // Announced before anyone asked: nothing is listed, however long it waits.
      yield* Queue.offer(changed, undefined)
      yield* TestClock.adjust("10 seconds")
      expect(listed).toBe(0)
      const seen: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(Stream.runForEach(live.changes, (names) => Effect.sync(() => void seen.push(names))))
      yield* Effect.yieldNow()
      expect(yield* live.get).toEqual(["greet"])
      expect(listed).toBe(1)
      // A change: listed after the delay, the same list, not said again.
      yield* Queue.offer(changed, undefined)
      yield* TestClock.adjust("199 millis")
      expect(listed).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(listed).toBe(2)
      // Another: a new list, said.
      yield* Queue.offer(changed, undefined)
      yield* TestClock.adjust("200 millis")
      expect(listed).toBe(3)
      expect(yield* live.get).toEqual(["greet", "late"])
      expect(seen).toEqual([["greet"], ["greet", "late"]])
    }))
})
