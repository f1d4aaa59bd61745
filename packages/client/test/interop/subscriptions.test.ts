/**
 * Subscriptions (docs/DESIGN.md, "Subscriptions"), end to end against real peers on loopback:
 * the official SDK v1 server (2025 revisions: Streamable HTTP with JSON and SSE answers, legacy
 * HTTP+SSE, stdio) and the SDK v2 server (2026-07-28, `subscriptions/listen` with JSON and SSE
 * answers, and its `serveStdio`), all serving `test/support/subscriptionsPeer.mjs`'s tools. Each row: an update reaches the
 * subscriber, unsubscribing reaches the server, a server without `resources.subscribe` is
 * refused before any I/O, a flood is coalesced, a dropped stream (or a new session) is
 * subscribed again with a gap, and the prompt and resource lists are live once asked for.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Authorization, McpClient, McpServers } from "../../src/index.js"
import { connect as connectPromise } from "../../src/promise.js"
import { eventually, failureOf } from "../support/harness.js"
import { json, rawHttpServer, SSE_HEADERS, sseEvent } from "../support/rawMcpServer.js"
import { start2025, start2026, startLegacy } from "../support/subscriptionsServers.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const peerProgram = path.join(here, "../support/subscriptionsPeer.mjs")
const peerProgramV2 = path.join(here, "../support/subscriptionsPeerV2.mjs")
const WAIT_MS = 15_000
const until = (predicate: () => boolean) => eventually(predicate, WAIT_MS)

const live = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 40_000) =>
  it.scopedLive(
    name,
    () => body().pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(NodeContext.layer)) as Effect.Effect<void, unknown, never>,
    timeout
  )

const server2025 = (jsonResponse: boolean, subscribe = true) =>
  Effect.acquireRelease(Effect.promise(() => start2025({ jsonResponse, subscribe })), (s) => Effect.promise(() => s.close()))
const server2026 = (answers: "json" | "sse", subscribe = true) =>
  Effect.acquireRelease(Effect.promise(() => start2026({ answers, subscribe })), (s) => Effect.promise(() => s.close()))

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) => result.content.map((c) => (c as { text?: string }).text ?? "").join("")

/** Pulls whatever the stream has ready now, as one chunk (the stream's queue, taken whole). */
const pullOnce = <A>(pull: Effect.Effect<Chunk.Chunk<A>, Option.Option<never>>) => Effect.map(Effect.orDie(pull), Chunk.toReadonlyArray)

const observed = (connection: McpClient.Connection, operation: McpClient.Observation["operation"]) =>
  Effect.runSync(connection.observations).filter((o) => o.operation === operation)

// ---------------------------------------------------------------------------------------------
// 2025 revisions over Streamable HTTP (the SDK v1 server), JSON and SSE answers
// ---------------------------------------------------------------------------------------------

describe.each([["JSON", true], ["SSE", false]] as const)("2025 Streamable HTTP (%s answers)", (_, jsonResponse) => {
  live("an update reaches the subscriber; closing its scope unsubscribes", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      yield* until(() => srv.getStreams() === 1)
      const scope = yield* Scope.make()
      const updates = yield* Scope.extend(connection.subscribeResource("doc://a"), scope)
      expect(srv.counts.subscribes).toEqual({ "doc://a": 1 })
      const events: Array<McpClient.ChangeEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(connection.changes, (e) => Effect.sync(() => void events.push(e))))
      const first = yield* Effect.fork(Stream.runHead(updates))
      expect(textOf(yield* connection.callTool("touch", { uri: "doc://a" }))).toBe("sent")
      expect(yield* Fiber.join(first)).toEqual(Option.some({ _tag: "ResourceUpdated", uri: "doc://a", gap: false }))
      yield* until(() => events.some((e) => e._tag === "ResourceUpdated"))
      yield* Scope.close(scope, Exit.void)
      expect(srv.counts.unsubscribes).toEqual({ "doc://a": 1 })
      expect(textOf(yield* connection.callTool("touch", { uri: "doc://a" }))).toBe("not subscribed")
      expect(observed(connection, "resources/subscribe").map((o) => o.outcome)).toEqual(["ok"])
      expect(observed(connection, "resources/unsubscribe").map((o) => o.outcome)).toEqual(["ok"])
    }))

  live("two subscribers of one URI share the server's subscription: the last one ends it", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      const one = yield* Scope.make()
      const two = yield* Scope.make()
      yield* Scope.extend(connection.subscribeResource("doc://a"), one)
      yield* Scope.extend(connection.subscribeResource("doc://a"), two)
      yield* Scope.close(one, Exit.void)
      expect(srv.counts.unsubscribes).toEqual({})
      yield* Scope.close(two, Exit.void)
      expect(srv.counts.unsubscribes).toEqual({ "doc://a": 1 })
    }))

  live("a server without resources.subscribe is refused before any I/O", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse, false)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      const { error } = yield* failureOf(Effect.scoped(connection.subscribeResource("doc://a")))
      expect(error).toMatchObject({
        _tag: "InvalidOption",
        stage: "subscribe-resource",
        phase: "call",
        option: "uri",
        reason: "undeclared-capability",
        outcome: "not-sent",
        retryable: false
      })
      expect(srv.counts.subscribes).toEqual({})
      expect(observed(connection, "resources/subscribe")).toEqual([])
    }))

  live("a refused subscribe is a redacted RemoteRefusal (not-applied); nothing stays watched", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      const events: Array<McpClient.ChangeEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(connection.changes, (e) => Effect.sync(() => void events.push(e))))
      const uri = "doc://forbidden?token=S3CRET-TOKEN"
      const { error } = yield* failureOf(Effect.scoped(connection.subscribeResource(uri)))
      expect(error).toMatchObject({ _tag: "RemoteRefusal", stage: "subscribe-resource", code: -32602, outcome: "not-applied", retryable: false })
      const text = JSON.stringify(error) + String(error) + error.message
      expect(text).not.toContain("S3CRET")
      expect(text).not.toContain("forbidden")
      // Its watch was released with the scope: an update of that URI reaches no one. The
      // session's GET stream carries them in order: once b's update is seen, the other was read.
      yield* until(() => srv.getStreams() === 1)
      const sentinel = yield* Stream.toPull(yield* connection.subscribeResource("doc://b"))
      yield* connection.callTool("touch", { uri, force: true })
      yield* connection.callTool("touch", { uri: "doc://b" })
      expect(yield* pullOnce(sentinel)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://b", gap: false }])
      yield* until(() => events.length >= 1)
      expect(events).toEqual([{ _tag: "ResourceUpdated", uri: "doc://b", gap: false }])
    }))

  live("a subscribe the server never answers ends at the call deadline (its override), and holds nothing", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      const { elapsedMs, error } = yield* failureOf(Effect.scoped(connection.subscribeResource("doc://silent", { timeout: 300 })))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "subscribe-resource", phase: "call", limits: { timeoutMs: 300 }, outcome: "unknown" })
      expect(elapsedMs).toBeLessThan(5_000)
      // Nothing was counted as subscribed, the lock is free: the next subscribe goes through.
      yield* Effect.scoped(connection.subscribeResource("doc://a"))
      expect(srv.counts.subscribes).toEqual({ "doc://a": 1 })
      expect(srv.counts.unsubscribes).toEqual({ "doc://a": 1 })
      expect((yield* connection.diagnostics).pending).toBe(0)
    }))

  live("an unsubscribe the server never answers holds the closing scope no longer than the release timeout", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"], policy: { releaseTimeout: 300 } })
      const scope = yield* Scope.make()
      yield* Scope.extend(connection.subscribeResource("doc://sticky"), scope)
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(srv.counts.unsubscribes).toEqual({ "doc://sticky": 1 })
      expect(observed(connection, "resources/unsubscribe")).toMatchObject([{ outcome: "DeadlineExceeded", stage: "unsubscribe-resource" }])
      expect((yield* connection.diagnostics).pending).toBe(0)
    }))

  live("a flood of updates is coalesced: a reader that did not keep up finds one", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      yield* until(() => srv.getStreams() === 1)
      const flooded = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      const sentinel = yield* connection.subscribeResource("doc://b")
      yield* connection.callTool("flood", { uri: "doc://a", count: 2_000 })
      // Both go on the session's GET stream, in order: once b's update is read, every one of a's is.
      const marked = yield* Effect.fork(Stream.runHead(sentinel))
      yield* connection.callTool("touch", { uri: "doc://b" })
      yield* Fiber.join(marked)
      expect(yield* pullOnce(flooded)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      const diagnostics = yield* connection.diagnostics
      expect(diagnostics.pending).toBe(0)
    }), 60_000)

  live("a GET stream the server ends is opened again: every URI is subscribed again, with a gap", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      yield* until(() => srv.getStreams() === 1)
      const updates = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      srv.dropStreams()
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: true }])
      expect(srv.counts.subscribes).toEqual({ "doc://a": 2 })
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
    }))

  live("a new session (the server forgot the last) is subscribed again, with a gap", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      const updates = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      yield* Effect.promise(() => srv.forgetSessions())
      const { error } = yield* failureOf(connection.callTool("counts"))
      expect(error).toMatchObject({ _tag: "SessionExpired" })
      yield* connection.callTool("counts")
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: true }])
      expect(srv.sessions()).toBe(2)
      expect(srv.counts.subscribes).toEqual({ "doc://a": 2 })
      yield* until(() => srv.getStreams() === 1)
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
    }))

  live("prompts and resources are listed only once asked for, then kept live", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(jsonResponse)
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      yield* until(() => srv.getStreams() === 1)
      const events: Array<McpClient.ChangeEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(connection.changes, (e) => Effect.sync(() => void events.push(e))))
      // Announced before anyone asked for the prompts (that nothing is listed then is proven
      // under TestClock in test/unit/subscriptions.test.ts): the first listing has it.
      yield* connection.callTool("add_prompt", { name: "early" })
      yield* until(() => events.some((e) => e._tag === "PromptsListChanged"))

      const prompts: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(
        Stream.runForEach(connection.promptList.changes, (list) => Effect.sync(() => void prompts.push(list.map((p) => p.name))))
      )
      yield* until(() => prompts.length === 1)
      expect(prompts[0]).toEqual(["greet", "early"])
      yield* connection.callTool("add_prompt", { name: "late" })
      yield* until(() => prompts.length === 2)
      expect(prompts[1]).toEqual(["greet", "early", "late"])
      expect((yield* connection.promptList.get).map((p) => p.name)).toEqual(["greet", "early", "late"])

      const resources: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(
        Stream.runForEach(connection.resourceList.changes, (list) => Effect.sync(() => void resources.push(list.map((r) => r.uri))))
      )
      yield* until(() => resources.length === 1)
      yield* connection.callTool("add_resource", { name: "c" })
      yield* until(() => resources.length === 2)
      expect(resources[1]).toEqual(["doc://a", "doc://b", "doc://c"])
      expect(events.some((e) => e._tag === "ResourcesListChanged" && !e.gap)).toBe(true)
    }))
})

// ---------------------------------------------------------------------------------------------
// Legacy HTTP+SSE (the SDK v1's SSEServerTransport)
// ---------------------------------------------------------------------------------------------

describe("legacy HTTP+SSE", () => {
  live("an update on the GET stream; a stream that ends is a new session, subscribed again with a gap", () =>
    Effect.gen(function*() {
      const srv = yield* Effect.acquireRelease(Effect.promise(() => startLegacy()), (s) => Effect.promise(() => s.close()))
      const connection = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      expect(connection.transport).toBe("sse")
      const updates = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      yield* Effect.promise(() => srv.dropStreams())
      // The next operation starts a new session (docs/DESIGN.md, "Sessions that heal").
      yield* Effect.eventually(connection.callTool("counts"))
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: true }])
      expect(srv.sessions()).toBe(2)
      expect(srv.counts.subscribes).toEqual({ "doc://a": 2 })
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
    }))
})

// ---------------------------------------------------------------------------------------------
// 2026-07-28 (the SDK v2 server's listen router), JSON and SSE answers
// ---------------------------------------------------------------------------------------------

describe.each(["json", "sse"] as const)("2026-07-28 subscriptions/listen (%s answers)", (answers) => {
  live("the filter asks for every list the server announces; a subscribed URI joins it, and leaves it", () =>
    Effect.gen(function*() {
      const srv = yield* server2026(answers)
      const connection = yield* McpClient.connect({ url: srv.url })
      expect(connection.protocolVersion).toBe("2026-07-28")
      yield* until(() => srv.listening() === 1)
      expect(srv.filters()).toEqual([{ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }])
      const scope = yield* Scope.make()
      const updates = yield* Stream.toPull(yield* Scope.extend(connection.subscribeResource("doc://a"), scope))
      expect(srv.filters()[1]).toEqual({
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: ["doc://a"]
      })
      // The new subscription is acknowledged before the old one is closed.
      yield* until(() => srv.listening() === 1)
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      yield* Scope.close(scope, Exit.void)
      expect(srv.filters()[2]).toEqual({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true })
      yield* until(() => srv.listening() === 1)
      expect(observed(connection, "resources/subscribe").map((o) => o.outcome)).toEqual(["ok"])
      expect(observed(connection, "resources/unsubscribe").map((o) => o.outcome)).toEqual(["ok"])
    }))

  live("a dropped subscription is made again with the same URIs, and the gap is said", () =>
    Effect.gen(function*() {
      const srv = yield* server2026(answers)
      const connection = yield* McpClient.connect({ url: srv.url })
      const updates = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      yield* until(() => srv.listening() === 1)
      const before = srv.filters().length
      srv.dropListens()
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: true }])
      expect(srv.filters().length).toBe(before + 1)
      expect(srv.filters().at(-1)?.["resourceSubscriptions"]).toEqual(["doc://a"])
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
    }))

  live("a flood of updates on the subscription's stream is coalesced", () =>
    Effect.gen(function*() {
      const srv = yield* server2026(answers)
      const connection = yield* McpClient.connect({ url: srv.url })
      const flooded = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      const sentinel = yield* connection.subscribeResource("doc://b")
      yield* connection.callTool("flood", { uri: "doc://a", count: 2_000 })
      // One stream carries both, in order: once b's update is read, every one of a's is.
      const marked = yield* Effect.fork(Stream.runHead(sentinel))
      yield* connection.callTool("touch", { uri: "doc://b" })
      yield* Fiber.join(marked)
      expect(yield* pullOnce(flooded)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      expect((yield* connection.diagnostics).pending).toBe(0)
    }), 60_000)

  live("a server without resources.subscribe is refused before any I/O", () =>
    Effect.gen(function*() {
      const srv = yield* server2026(answers, false)
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* until(() => srv.listening() === 1)
      const { error } = yield* failureOf(Effect.scoped(connection.subscribeResource("doc://a")))
      expect(error).toMatchObject({ _tag: "InvalidOption", reason: "undeclared-capability", outcome: "not-sent" })
      expect(srv.filters().length).toBe(1)
    }))

  live("prompt and resource list changes reach the live lists", () =>
    Effect.gen(function*() {
      const srv = yield* server2026(answers)
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* until(() => srv.listening() === 1)
      const prompts: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(
        Stream.runForEach(connection.promptList.changes, (list) => Effect.sync(() => void prompts.push(list.map((p) => p.name))))
      )
      yield* until(() => prompts.length === 1)
      yield* connection.callTool("add_prompt", { name: "late" })
      yield* until(() => prompts.length === 2)
      expect(prompts[1]).toEqual(["greet", "late"])
      const resources = yield* connection.resourceList.get
      expect(resources.map((r) => r.uri)).toEqual(["doc://a", "doc://b"])
      yield* connection.callTool("add_resource", { name: "c" })
      yield* until(() => observed(connection, "resources/list").length === 2)
      expect((yield* connection.resourceList.get).map((r) => r.uri)).toEqual(["doc://a", "doc://b", "doc://c"])
    }))
})

// ---------------------------------------------------------------------------------------------
// A hostile 2026-07-28 server (raw loopback): it declares resources.subscribe, then honours no
// URI, and floods its subscription with acknowledgements and updates nobody asked for. (A server
// that acknowledges a URI and never sends its updates is a liar no client can catch.)
// ---------------------------------------------------------------------------------------------

describe("a hostile 2026-07-28 server", () => {
  live(
    "a URI the acknowledgement leaves out is InvalidOption not-applied; floods of strangers' updates and extra acknowledgements are dropped",
    () =>
      Effect.gen(function*() {
        const listens: Array<Record<string, unknown>> = []
        const srv = yield* rawHttpServer((_, res, request) => {
          const { id, method, params } = request.message ?? {}
          const result = (value: Record<string, unknown>) => json(res, { jsonrpc: "2.0", id, result: value })
          switch (method) {
            case "server/discover":
              return result({ supportedVersions: ["2026-07-28"], capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } } })
            case "tools/list":
              return result({ tools: [] })
            case "subscriptions/listen": {
              listens.push(params?.notifications ?? {})
              res.writeHead(200, SSE_HEADERS)
              // Honours the list changes, none of the URIs, again and again; and a flood of updates
              // of what nobody asked for.
              for (let i = 0; i < 500; i++) {
                res.write(
                  sseEvent({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: { notifications: { resourcesListChanged: true } } })
                )
                res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: `doc://stranger/${i}` } }))
              }
              return
            }
            default:
              return json(res, { jsonrpc: "2.0", id, error: { code: -32601, message: "no" } })
          }
        })
        const connection = yield* McpClient.connect({ url: `${srv.origin}/mcp`, revisions: ["2026-07-28"] })
        yield* until(() => listens.length === 1)
        const { error } = yield* failureOf(Effect.scoped(connection.subscribeResource("doc://a")))
        expect(error).toMatchObject({
          _tag: "InvalidOption",
          stage: "subscribe-resource",
          option: "uri",
          reason: "undeclared-capability",
          outcome: "not-applied"
        })
        yield* until(() => listens.length === 2)
        expect(listens[1]).toEqual({ resourcesListChanged: true, resourceSubscriptions: ["doc://a"] })
        // The refused URI left the filter: the next subscription (another URI) does not carry it.
        const other = yield* Effect.flip(Effect.scoped(connection.subscribeResource("doc://b")))
        expect(other).toMatchObject({ _tag: "InvalidOption", outcome: "not-applied" })
        yield* until(() => listens.length === 3)
        expect(listens[2]).toEqual({ resourcesListChanged: true, resourceSubscriptions: ["doc://b"] })
        const diagnostics = yield* connection.diagnostics
        expect(diagnostics.pending).toBe(0)
      })
  )
})

describe("a 2026-07-28 server that ends its subscription for good", () => {
  live("the watchers end: resourceUpdates fails with TransportFailure stream-ended, subscribeResource's stream ends", () =>
    Effect.gen(function*() {
      const listens: Array<{ readonly id: unknown; readonly res: import("node:http").ServerResponse }> = []
      const srv = yield* rawHttpServer((_, res, request) => {
        const { id, method, params } = request.message ?? {}
        const result = (value: Record<string, unknown>) => json(res, { jsonrpc: "2.0", id, result: value })
        switch (method) {
          case "server/discover":
            return result({ supportedVersions: ["2026-07-28"], capabilities: { tools: {}, resources: { subscribe: true } } })
          case "tools/list":
            return result({ tools: [] })
          case "subscriptions/listen": {
            listens.push({ id, res })
            res.writeHead(200, SSE_HEADERS)
            res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: { notifications: params?.notifications ?? {} } }))
            return
          }
          default:
            return json(res, { jsonrpc: "2.0", id, error: { code: -32601, message: "no" } })
        }
      })
      const connection = yield* McpClient.connect({ url: `${srv.origin}/mcp`, revisions: ["2026-07-28"] })
      const quiet = yield* connection.subscribeResource("doc://a")
      const quietRun = yield* Effect.fork(Stream.runCollect(quiet))
      const failing = yield* Effect.fork(Stream.runCollect(connection.resourceUpdates("doc://b")))
      yield* until(() => listens.length === 2)
      // The server ends the subscription with both URIs with a result, after its acknowledgement
      // (on the same stream: the acknowledgement is read first).
      const last = listens[1]!
      last.res.end(sseEvent({ jsonrpc: "2.0", id: last.id, result: {} }))
      const error = yield* Effect.flip(Fiber.join(failing))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "stream-ended", stage: "subscribe-resource", outcome: "not-applied" })
      expect(Chunk.toReadonlyArray(yield* Fiber.join(quietRun))).toEqual([])
    }))
})

// ---------------------------------------------------------------------------------------------
// stdio (the SDK v1 server as a child process)
// ---------------------------------------------------------------------------------------------

describe("2025 stdio", () => {
  const countsOf = (connection: McpClient.Connection) =>
    Effect.map(connection.callTool("counts"), (result) => JSON.parse(textOf(result)) as { subscribes: object; unsubscribes: object })

  live("subscribe, update, unsubscribe over stdin and stdout", () =>
    Effect.gen(function*() {
      const connection = yield* McpClient.connectStdio({ command: process.execPath, args: [peerProgram], revisions: ["2025-11-25"] })
      const scope = yield* Scope.make()
      const updates = yield* Stream.toPull(yield* Scope.extend(connection.subscribeResource("doc://a"), scope))
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      yield* Scope.close(scope, Exit.void)
      expect(yield* countsOf(connection)).toEqual({ subscribes: { "doc://a": 1 }, unsubscribes: { "doc://a": 1 } })
    }))

  live("an update of a URI nobody subscribed to is dropped", () =>
    Effect.gen(function*() {
      const connection = yield* McpClient.connectStdio({ command: process.execPath, args: [peerProgram], revisions: ["2025-11-25"] })
      const updates = yield* Stream.toPull(yield* connection.subscribeResource("doc://a"))
      const events: Array<McpClient.ChangeEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(connection.changes, (e) => Effect.sync(() => void events.push(e))))
      yield* connection.callTool("touch", { uri: "doc://other", force: true })
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      yield* until(() => events.length >= 1)
      expect(events).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
    }))

  live("refused before any I/O without resources.subscribe", () =>
    Effect.gen(function*() {
      const connection = yield* McpClient.connectStdio({ command: process.execPath, args: [peerProgram, "--no-subscribe"], revisions: ["2025-11-25"] })
      const { error } = yield* failureOf(Effect.scoped(connection.subscribeResource("doc://a")))
      expect(error).toMatchObject({ _tag: "InvalidOption", reason: "undeclared-capability", outcome: "not-sent" })
      expect(yield* countsOf(connection)).toEqual({ subscribes: {}, unsubscribes: {} })
    }))
})

describe("2026-07-28 stdio (the SDK v2 serveStdio)", () => {
  live("subscriptions/listen on stdin and stdout: the URI joins the filter, its update arrives, the prompts are live", () =>
    Effect.gen(function*() {
      const connection = yield* McpClient.connectStdio({ command: process.execPath, args: [peerProgramV2] })
      expect(connection.protocolVersion).toBe("2026-07-28")
      const scope = yield* Scope.make()
      const updates = yield* Stream.toPull(yield* Scope.extend(connection.subscribeResource("doc://a"), scope))
      yield* connection.callTool("touch", { uri: "doc://a" })
      expect(yield* pullOnce(updates)).toEqual([{ _tag: "ResourceUpdated", uri: "doc://a", gap: false }])
      const prompts: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(
        Stream.runForEach(connection.promptList.changes, (list) => Effect.sync(() => void prompts.push(list.map((p) => p.name))))
      )
      yield* until(() => prompts.length === 1)
      yield* connection.callTool("add_prompt", { name: "late" })
      yield* until(() => prompts.length === 2)
      expect(prompts[1]).toEqual(["greet", "late"])
      yield* Scope.close(scope, Exit.void)
      expect(observed(connection, "resources/unsubscribe").map((o) => o.outcome)).toEqual(["ok"])
      const diagnostics = yield* connection.diagnostics
      expect(diagnostics.standing).toBe(1)
    }))
})

// ---------------------------------------------------------------------------------------------
// The Promise API: callbacks and the function that unsubscribes
// ---------------------------------------------------------------------------------------------

describe("the Promise API", () => {
  const waitFor = async (predicate: () => boolean) => {
    const started = Date.now()
    while (!predicate()) {
      if (Date.now() - started > WAIT_MS) throw new Error("condition not met in time")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  it.each([["2025-11-25", "2025"], ["2026-07-28", "2026"]] as const)(
    "%s: onUpdate, onChange, onPromptsChanged, and the unsubscribe function",
    async (revision, era) => {
      const srv = era === "2025" ? await start2025({ jsonResponse: false }) : await start2026({ answers: "sse" })
      const events: Array<McpClient.ChangeEvent> = []
      const prompts: Array<ReadonlyArray<string>> = []
      const connection = await connectPromise({
        url: srv.url,
        revisions: [revision],
        onChange: (event) => void events.push(event),
        onPromptsChanged: (list) => {
          prompts.push(list.map((p) => p.name))
          throw new Error("ignored")
        }
      })
      try {
        await waitFor(() => prompts.length === 1)
        const updates: Array<McpClient.ResourceUpdate> = []
        const unsubscribe = await connection.subscribeResource("doc://a", (update) => void updates.push(update))
        await connection.callTool("touch", { uri: "doc://a" })
        await waitFor(() => updates.length === 1)
        expect(updates[0]).toEqual({ _tag: "ResourceUpdated", uri: "doc://a", gap: false })
        await connection.callTool("add_prompt", { name: "late" })
        await waitFor(() => prompts.length === 2)
        expect(prompts[1]).toContain("late")
        expect(events.some((e) => e._tag === "PromptsListChanged")).toBe(true)
        await unsubscribe()
        await unsubscribe()
        const unsubscribes = observed(connection.effect, "resources/unsubscribe")
        expect(unsubscribes.map((o) => o.outcome)).toEqual(["ok"])
        if (era === "2025") expect((srv as Awaited<ReturnType<typeof start2025>>).counts.unsubscribes).toEqual({ "doc://a": 1 })
      } finally {
        await connection.close()
        await srv.close()
      }
    },
    40_000
  )

  it("after close, subscribeResource rejects with the typed error, nothing sent", async () => {
    const srv = await start2025({ jsonResponse: true })
    const connection = await connectPromise({ url: srv.url, revisions: ["2025-11-25"] })
    try {
      await connection.close()
      await expect(connection.subscribeResource("doc://a", () => {})).rejects.toMatchObject({
        _tag: "TransportFailure",
        reason: "session-closed",
        outcome: "not-sent"
      })
      expect(srv.counts.subscribes).toEqual({})
    } finally {
      await srv.close()
    }
  }, 40_000)

  it("a refusal before any I/O rejects with the typed error", async () => {
    const srv = await start2025({ jsonResponse: true, subscribe: false })
    const connection = await connectPromise({ url: srv.url, revisions: ["2025-11-25"] })
    try {
      await expect(connection.subscribeResource("doc://a", () => {})).rejects.toMatchObject({
        _tag: "InvalidOption",
        reason: "undeclared-capability",
        outcome: "not-sent"
      })
      expect(srv.counts.subscribes).toEqual({})
    } finally {
      await connection.close()
      await srv.close()
    }
  }, 40_000)
})

// ---------------------------------------------------------------------------------------------
// The McpServers service
// ---------------------------------------------------------------------------------------------

describe("McpServers", () => {
  live("resourceUpdates and changes of a named server, on its shared connection", () =>
    Effect.gen(function*() {
      const srv = yield* server2025(true)
      // Built in the test's scope: the service lives until the test ends.
      const context = yield* Layer.build(
        McpServers.layer({ servers: { notes: { url: srv.url, revisions: ["2025-11-25"] } } }).pipe(
          Layer.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, Authorization.layerDefaults))
        )
      )
      const servers = Context.get(context, McpServers.McpServers)
      const events: Array<McpClient.ChangeEvent> = []
      yield* Effect.forkScoped(Stream.runForEach(servers.changes("notes"), (e) => Effect.sync(() => void events.push(e))))
      const first = yield* Effect.fork(Stream.runHead(servers.resourceUpdates("notes", "doc://a")))
      yield* until(() => srv.counts.subscribes["doc://a"] === 1)
      yield* servers.callTool("notes", "touch", { uri: "doc://a" })
      expect(yield* Fiber.join(first)).toEqual(Option.some({ _tag: "ResourceUpdated", uri: "doc://a", gap: false }))
      // The stream ended: unsubscribed.
      yield* until(() => srv.counts.unsubscribes["doc://a"] === 1)
      yield* until(() => events.length >= 1)
      expect(srv.sessions()).toBe(1)
    }))
})
