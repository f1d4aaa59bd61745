/**
 * URL-mode elicitation end to end, handshake era over Streamable HTTP, against raw loopback
 * servers (support/rawMcpServer.ts):
 *
 * - the `elicitation` capability declares exactly the modes of the handlers given;
 * - a URL request on a call's SSE answer (or the standalone GET stream) reaches the
 *   `elicitationUrl` handler with its checked URL, host, id and message; the reply is the action
 *   alone; a completion notification for it reaches `elicitationCompletions` and
 *   `awaitElicitation`, one for an unknown id is ignored;
 * - a hostile URL (javascript:, file:, data:, plain http to another host, userinfo, invisible
 *   characters, 8 KiB and more) is answered -32602 and never reaches the handler; an undeclared
 *   mode is -32602, an undeclared capability -32601, a handler's bad answer -32603;
 * - `-32042` is `UrlElicitationRequired`: its elicitations through the getter only (never in the
 *   record, message, JSON or own properties), completed through the standalone stream, then the
 *   call retried: two sends, each refused or answered once;
 * - `awaitElicitation` is bounded (TestClock), validated, and fails when the connection closes.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Schema, Scope, Stream, TestClock } from "effect"
import type * as http from "node:http"
import { type ClientHandlers, McpClient, McpConnectionError } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { eventually } from "../support/harness.js"
import { type Recorded, recordingTracer } from "../support/recordingTracer.js"
import { json, rawMcpServer, type RawRequest, SSE_HEADERS, sseEvent } from "../support/rawMcpServer.js"

/** The extensions the client declares on every connection, whatever its handlers. */
const extensions = { extensions: { "io.modelcontextprotocol/skills": {} } }

const SESSION = "session-url-elicitation"
const TARGET = "https://accounts.example.com/connect?elicitation=e-1"
const TARGET_HOST = "accounts.example.com"

const urlRequest = (id: string | number, params: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "elicitation/create",
  params: { mode: "url", message: "Connect your account", elicitationId: "e-1", url: TARGET, ...params }
})

const complete = (elicitationId: string) => ({
  jsonrpc: "2.0",
  method: "notifications/elicitation/complete",
  params: { elicitationId }
})

const within = (promise: Promise<void>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))])

/**
 * A session server whose `tools/call` sends `requests` on the POST's SSE stream, waits for their
 * replies, then sends `after` (notifications) and answers the call.
 */
const askingServer = (requests: ReadonlyArray<unknown>, after: ReadonlyArray<unknown> = []) =>
  rawMcpServer({
    discover: "method-not-found",
    sessionId: SESSION,
    tools: [{ name: "connect", inputSchema: { type: "object" } }],
    onCall: async ({ message, replied, replies, res }) => {
      const before = replies.length
      res.writeHead(200, SSE_HEADERS)
      for (const request of requests) res.write(sseEvent(request))
      await within(replied(before + requests.length), 10_000)
      for (const notification of after) res.write(sseEvent(notification))
      res.end(sseEvent({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "done" }] } }))
    }
  })

const replyTo = (replies: ReadonlyArray<RawRequest>, id: string | number) => replies.find((r) => r.message.id === id)?.message

const httpTest = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(FetchHttpClient.layer)) as Effect.Effect<void, unknown, never>, timeout)

const accept: ClientHandlers.UrlHandler = () => Effect.succeed({ action: "accept" })

describe("URL elicitation: the capability", () => {
  const capabilitiesWith = (handlers: ClientHandlers.Handlers) =>
    Effect.gen(function*() {
      const server = yield* askingServer([])
      yield* McpClient.connect({ url: server.url, handlers })
      return server.posts("initialize")[0]!.message.params.capabilities
    })

  httpTest("declares exactly the modes of the handlers given", () =>
    Effect.gen(function*() {
      const form = () => Effect.succeed({ action: "decline" })
      // Beside the extensions the client always declares (docs/DESIGN.md, "Extensions").
      expect(yield* capabilitiesWith({ elicitation: form })).toEqual({ elicitation: {}, ...extensions })
      expect(yield* capabilitiesWith({ elicitationUrl: accept })).toEqual({ elicitation: { url: {} }, ...extensions })
      expect(yield* capabilitiesWith({ elicitation: form, elicitationUrl: accept })).toEqual({ elicitation: { form: {}, url: {} }, ...extensions })
      expect(yield* capabilitiesWith({ elicitationUrl: accept, roots: () => Effect.succeed({ roots: [] }) })).toEqual({
        elicitation: { url: {} },
        roots: {},
        ...extensions
      })
    }))
})

describe("URL elicitation: a request on a call's SSE answer", () => {
  httpTest("reaches the handler checked; the reply is the action; its completion is delivered, an unknown one ignored", () =>
    Effect.gen(function*() {
      const server = yield* askingServer(
        [urlRequest("u-1", { url: "HTTPS://Accounts.Example.COM/connect?elicitation=e-1" })],
        [complete("never-asked"), complete("e-1"), complete("e-1")]
      )
      const seen: Array<ClientHandlers.UrlElicitation> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request), { action: "accept" as const })) }
      })
      const completions = yield* Stream.runCollect(Stream.take(connection.elicitationCompletions, 1)).pipe(Effect.fork)
      yield* Effect.yieldNow()
      expect((yield* connection.callTool("connect")).content).toEqual([{ type: "text", text: "done" }])
      expect(seen).toEqual([{
        mode: "url",
        message: "Connect your account",
        elicitationId: "e-1",
        // Normalized: what a browser opens is what the user is shown.
        url: TARGET,
        host: TARGET_HOST,
        punycode: false
      }])
      expect(replyTo(server.replies, "u-1")).toEqual({ jsonrpc: "2.0", id: "u-1", result: { action: "accept" } })
      // The unknown id was ignored; e-1 completed once (its repeat ignored).
      expect(Chunk.toReadonlyArray(yield* Fiber.join(completions))).toEqual(["e-1"])
      // Awaited after its completion: at once.
      yield* connection.awaitElicitation("e-1")
    }))

  httpTest("on the standalone GET stream too: the request reaches the handler, its reply is POSTed with the session", () =>
    Effect.gen(function*() {
      const streams: Array<http.ServerResponse> = []
      const server = yield* rawMcpServer({
        discover: "method-not-found",
        sessionId: SESSION,
        onGet: ({ res }) => {
          res.writeHead(200, SSE_HEADERS)
          res.write(": open\n\n")
          streams.push(res)
        }
      })
      const seen: Array<string> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request.url), { action: "accept" as const })) }
      })
      yield* eventually(() => streams.length > 0)
      streams[0]!.write(sseEvent(urlRequest("g-1", {})))
      yield* Effect.promise(() => server.replied(1))
      expect(seen).toEqual([TARGET])
      const reply = server.replies[0]!
      expect(reply.message).toEqual({ jsonrpc: "2.0", id: "g-1", result: { action: "accept" } })
      expect(reply.headers["mcp-session-id"]).toBe(SESSION)
      streams[0]!.write(sseEvent(complete("e-1")))
      yield* connection.awaitElicitation("e-1", { timeout: "5 seconds" })
    }))

  httpTest("a hostile URL never reaches the handler: -32602, and the call goes on", () =>
    Effect.gen(function*() {
      const hostile = [
        "javascript:alert(document.cookie)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "http://accounts.example.com/connect",
        "https://user:hunter2@accounts.example.com/connect",
        "https://:token@accounts.example.com/",
        "https://accounts.example.com/\u202eexe.txt",
        "https://accounts.example.com/a b",
        "https://accounts.example.com/\n",
        "ftp://accounts.example.com/",
        "/relative/path",
        `https://accounts.example.com/${"a".repeat(8_192)}`,
        42
      ]
      const server = yield* askingServer([
        ...hostile.map((url, i) => urlRequest(`h-${i}`, { url })),
        // No id where 2025-11-25 requires one; an id that is not a string; no message.
        urlRequest("no-id", { elicitationId: undefined }),
        urlRequest("bad-id", { elicitationId: 7 }),
        urlRequest("no-message", { message: undefined })
      ])
      let asked = 0
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: { elicitationUrl: () => Effect.sync(() => (asked++, { action: "accept" as const })) }
      })
      expect((yield* connection.callTool("connect")).content).toEqual([{ type: "text", text: "done" }])
      expect(asked).toBe(0)
      for (const id of [...hostile.map((_, i) => `h-${i}`), "no-id", "bad-id", "no-message"]) {
        expect(replyTo(server.replies, id)).toEqual({ jsonrpc: "2.0", id, error: { code: -32602, message: "Invalid params" } })
      }
      // Loopback http is development, and allowed.
    }))

  httpTest("http to loopback is handed on (development); a punycode host is flagged", () =>
    Effect.gen(function*() {
      const server = yield* askingServer([
        urlRequest("l-1", { url: "http://127.0.0.1:8765/callback", elicitationId: "l-1" }),
        urlRequest("p-1", { url: "https://xn--80ak6aa92e.com/login", elicitationId: "p-1" }),
        urlRequest("p-2", { url: "https://\u0430pple.com/login", elicitationId: "p-2" })
      ])
      const seen: Array<ClientHandlers.UrlElicitation> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request), { action: "cancel" as const })) }
      })
      yield* connection.callTool("connect")
      expect(seen.map(({ host, punycode, url }) => ({ url, host, punycode }))).toEqual([
        { url: "http://127.0.0.1:8765/callback", host: "127.0.0.1", punycode: false },
        { url: "https://xn--80ak6aa92e.com/login", host: "xn--80ak6aa92e.com", punycode: true },
        // A Cyrillic look-alike is shown in punycode, and flagged.
        { url: "https://xn--pple-43d.com/login", host: "xn--pple-43d.com", punycode: true }
      ])
      expect(replyTo(server.replies, "l-1")).toEqual({ jsonrpc: "2.0", id: "l-1", result: { action: "cancel" } })
    }))

  httpTest("an undeclared mode is -32602; no elicitation handler at all -32601; a bad answer -32603", () =>
    Effect.gen(function*() {
      const form = {
        jsonrpc: "2.0",
        id: "f-1",
        method: "elicitation/create",
        params: { message: "Name?", requestedSchema: { type: "object", properties: {} } }
      }
      const formOnly = yield* askingServer([urlRequest("u-1", {})])
      const c1 = yield* McpClient.connect({ url: formOnly.url, handlers: { elicitation: () => Effect.succeed({ action: "accept" }) } })
      yield* c1.callTool("connect")
      expect(replyTo(formOnly.replies, "u-1")).toEqual({ jsonrpc: "2.0", id: "u-1", error: { code: -32602, message: "Invalid params" } })

      const urlOnly = yield* askingServer([form, { ...form, id: "f-2", params: { ...form.params, mode: "other" } }])
      const c2 = yield* McpClient.connect({ url: urlOnly.url, handlers: { elicitationUrl: accept } })
      yield* c2.callTool("connect")
      expect(replyTo(urlOnly.replies, "f-1")).toEqual({ jsonrpc: "2.0", id: "f-1", error: { code: -32602, message: "Invalid params" } })
      expect(replyTo(urlOnly.replies, "f-2")).toEqual({ jsonrpc: "2.0", id: "f-2", error: { code: -32602, message: "Invalid params" } })

      const none = yield* askingServer([urlRequest("u-2", {})])
      const c3 = yield* McpClient.connect({ url: none.url, handlers: { roots: () => Effect.succeed({ roots: [] }) } })
      yield* c3.callTool("connect")
      expect(replyTo(none.replies, "u-2")).toEqual({ jsonrpc: "2.0", id: "u-2", error: { code: -32601, message: "Method not found" } })

      const bad = yield* askingServer([urlRequest("u-3", {}), urlRequest("u-4", { elicitationId: "e-4" })])
      const c4 = yield* McpClient.connect({
        url: bad.url,
        handlers: {
          elicitationUrl: (request) =>
            request.elicitationId === "e-1"
              ? Effect.succeed({ action: "maybe" } as unknown as ClientHandlers.UrlElicitationResult)
              : Effect.fail(new Error(`cannot open ${request.url}`))
        }
      })
      yield* c4.callTool("connect")
      for (const id of ["u-3", "u-4"]) {
        const reply = replyTo(bad.replies, id)
        expect(reply).toEqual({ jsonrpc: "2.0", id, error: { code: -32603, message: "The client could not answer" } })
      }
    }))
})

/** What a public view of an error may show: its record, message, text, JSON and own values. */
const publicViews = (error: McpConnectionError.McpConnectionError) => [
  JSON.stringify(McpConnectionError.toRecord(error)),
  JSON.stringify(error),
  error.message,
  String(error),
  JSON.stringify(Object.values(error)),
  JSON.stringify({ ...error })
]

describe("URL elicitation: -32042", () => {
  /**
   * A session server whose first `tools/call` is refused -32042 (JSON); `complete` writes on the
   * standalone GET stream; later calls are answered.
   */
  const requiringServer = (elicitations: ReadonlyArray<unknown>, message = `Connect first at ${TARGET} (token s3cr3t-api-key)`) =>
    Effect.gen(function*() {
      const streams: Array<http.ServerResponse> = []
      let calls = 0
      const server = yield* rawMcpServer({
        discover: "method-not-found",
        sessionId: SESSION,
        tools: [{ name: "connect", inputSchema: { type: "object" } }],
        onGet: ({ res }) => {
          res.writeHead(200, SSE_HEADERS)
          res.write(": open\n\n")
          streams.push(res)
        },
        onCall: ({ message: call, res }) => {
          calls++
          if (calls === 1) return json(res, { jsonrpc: "2.0", id: call.id, error: { code: -32042, message, data: { elicitations } } })
          return json(res, { jsonrpc: "2.0", id: call.id, result: { content: [{ type: "text", text: "connected" }] } })
        }
      })
      return {
        server,
        streamOpen: () => streams.length > 0,
        complete: (id: string) => streams.at(-1)!.write(sseEvent(complete(id)))
      }
    })

  const ELICITATIONS = [
    { mode: "url", elicitationId: "e-1", url: TARGET, message: "Authorize Example Co" },
    { mode: "url", elicitationId: "e-2", url: "https://pay.example.com/checkout?order=9", message: "Pay" }
  ]

  httpTest("is UrlElicitationRequired: the elicitations through the getter only; completed, the call is retried once", () =>
    Effect.gen(function*() {
      const { complete: completeOne, server, streamOpen } = yield* requiringServer(ELICITATIONS)
      const connection = yield* McpClient.connect({
        url: server.url,
        headers: { "x-api-key": "s3cr3t-api-key" },
        handlers: { elicitationUrl: accept }
      })
      const error = yield* Effect.flip(connection.callTool("connect", {}, { effectIdentity: "order-9" }))
      expect(error).toBeInstanceOf(McpConnectionError.UrlElicitationRequired)
      expect(McpConnectionError.toRecord(error)).toEqual({
        tag: "UrlElicitationRequired",
        stage: "call",
        phase: "call",
        limits: { timeoutMs: 60_000, maxBytes: 16_777_216 },
        observedBytes: expect.any(Number),
        status: 200,
        code: -32042,
        remoteMessage: "Connect first at [url] (token [redacted])",
        outcome: "not-applied",
        retryable: true
      })
      const elicitations = (error as McpConnectionError.UrlElicitationRequired).elicitations
      expect(elicitations.map(({ elicitationId, host, url }) => ({ elicitationId, url, host }))).toEqual([
        { elicitationId: "e-1", url: TARGET, host: TARGET_HOST },
        { elicitationId: "e-2", url: "https://pay.example.com/checkout?order=9", host: "pay.example.com" }
      ])
      expect(McpConnectionError.urlElicitationsOf(error)).toEqual(elicitations)
      for (const view of publicViews(error)) {
        for (const leak of ["example.com", "https:", "elicitation=", "order=9", "e-1", "s3cr3t"]) expect(view).not.toContain(leak)
      }
      // Encoded for storage: the public fields only; decoded, no elicitations (they never left the process).
      const encoded = Schema.encodeSync(McpConnectionError.McpConnectionError)(error)
      expect(JSON.stringify(encoded)).not.toContain("example.com")
      const decoded = Schema.decodeUnknownSync(McpConnectionError.McpConnectionError)(encoded)
      expect(decoded).toBeInstanceOf(McpConnectionError.UrlElicitationRequired)
      expect((decoded as McpConnectionError.UrlElicitationRequired).elicitations).toEqual([])

      // The server says both are complete on its standalone stream: the waits resume.
      yield* eventually(streamOpen)
      const waits = yield* Effect.fork(Effect.all([connection.awaitElicitation("e-1"), connection.awaitElicitation("e-2")]))
      yield* Effect.yieldNow()
      completeOne("e-2")
      completeOne("e-1")
      yield* Fiber.join(waits)
      // The retry: the same effect, the call's second send (the first was refused unprocessed).
      const result = yield* connection.callTool("connect", {}, { effectIdentity: "order-9" })
      expect(result.content).toEqual([{ type: "text", text: "connected" }])
      expect(server.posts("tools/call")).toHaveLength(2)
    }))

  httpTest("the Promise API rejects with the same error: its elicitations through the getter", () =>
    Effect.gen(function*() {
      const { server } = yield* requiringServer(ELICITATIONS)
      const connection = yield* Effect.promise(() => connect({ url: server.url }))
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      const rejected = yield* Effect.promise(() => connection.callTool("connect").then(() => undefined, (error: unknown) => error))
      expect(rejected).toBeInstanceOf(McpConnectionError.UrlElicitationRequired)
      expect((rejected as McpConnectionError.UrlElicitationRequired).elicitations.map((e) => e.elicitationId)).toEqual(["e-1", "e-2"])
      expect(JSON.stringify(rejected)).not.toContain("example.com")
      expect(Object.keys(rejected as object)).not.toContain("elicitations")
    }))

  httpTest("elicitations it cannot hand on in full: a RemoteRefusal with reason invalid-elicitation, nothing to act on", () =>
    Effect.gen(function*() {
      for (
        const elicitations of [
          [{ ...ELICITATIONS[0], url: "javascript:alert(1)" }],
          [ELICITATIONS[0], { ...ELICITATIONS[1], elicitationId: undefined }],
          [],
          Array(17).fill(ELICITATIONS[0]),
          [{ ...ELICITATIONS[0], mode: "form" }]
        ]
      ) {
        const { server } = yield* requiringServer(elicitations)
        const connection = yield* McpClient.connect({ url: server.url })
        const error = yield* Effect.flip(connection.callTool("connect"))
        expect(error).toMatchObject({ _tag: "RemoteRefusal", code: -32042, reason: "invalid-elicitation", outcome: "not-applied", retryable: false })
        expect(McpConnectionError.urlElicitationsOf(error)).toEqual([])
      }
    }))
})

describe("URL elicitation: spans", () => {
  httpTest("no URL, host or elicitation id in any span (the handler's request, a -32042, a wait)", () =>
    Effect.gen(function*() {
      const spans: Array<Recorded> = []
      const server = yield* askingServer([urlRequest("u-1", {})], [complete("e-1")])
      yield* Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: server.url, handlers: { elicitationUrl: accept } })
        yield* connection.callTool("connect")
        yield* connection.awaitElicitation("e-1")
      }).pipe(Effect.withTracer(recordingTracer(spans)))
      expect(spans.map((span) => span.name)).toEqual(expect.arrayContaining(["mcp.connect", "mcp.tools.call", "mcp.elicitation.await"]))
      const wait = spans.find((span) => span.name === "mcp.elicitation.await")!
      expect(Object.fromEntries(wait.attributes)).toEqual({ "mcp.phase": "call", "mcp.stage": "elicitation", "mcp.outcome": "ok" })
      const attributes = JSON.stringify(spans.map((span) => [span.name, [...span.attributes]]))
      for (const leak of ["example.com", "https:", "e-1", "Connect your account"]) expect(attributes).not.toContain(leak)
    }))
})

describe("URL elicitation: awaitElicitation", () => {
  it.scoped("is bounded by the call timeout or its own (TestClock); validated; ends when the connection closes", () =>
    Effect.gen(function*() {
      const server = yield* askingServer([])
      const scope = yield* Scope.make()
      const connection = yield* McpClient.connect({ url: server.url, policy: { call: { timeout: "20 seconds" } } }).pipe(Scope.extend(scope))

      const byPolicy = yield* Effect.fork(Effect.flip(connection.awaitElicitation("never")))
      const byOption = yield* Effect.fork(Effect.flip(connection.awaitElicitation("never-either", { timeout: "2 seconds" })))
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(byOption)).toMatchObject({
        _tag: "DeadlineExceeded",
        stage: "elicitation",
        phase: "call",
        limits: { timeoutMs: 2_000 },
        outcome: "not-sent"
      })
      yield* TestClock.adjust("18 seconds")
      expect(yield* Fiber.join(byPolicy)).toMatchObject({ _tag: "DeadlineExceeded", stage: "elicitation", limits: { timeoutMs: 20_000 } })

      for (const id of ["", "x".repeat(1_025), 7 as unknown as string]) {
        expect(yield* Effect.flip(connection.awaitElicitation(id))).toMatchObject({
          _tag: "InvalidOption",
          option: "elicitationId",
          stage: "elicitation",
          outcome: "not-sent"
        })
      }
      expect(yield* Effect.flip(connection.awaitElicitation("e", { timeout: -1 }))).toMatchObject({ _tag: "InvalidOption", option: "call.timeout" })

      const waiting = yield* Effect.fork(Effect.flip(connection.awaitElicitation("pending")))
      const done = yield* Deferred.make<void>()
      const streamEnds = yield* Effect.fork(Effect.ensuring(Stream.runDrain(connection.elicitationCompletions), Deferred.succeed(done, undefined)))
      yield* Effect.yieldNow()
      yield* Scope.close(scope, Exit.void)
      expect(yield* Fiber.join(waiting)).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", stage: "elicitation", outcome: "not-sent" })
      yield* Fiber.join(streamEnds)
      yield* Deferred.await(done)
      expect(yield* Effect.flip(connection.awaitElicitation("later"))).toMatchObject({ _tag: "TransportFailure", reason: "session-closed" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))
  it.scoped("refuses an id with an invisible character before it waits (the TestClock never moves: a wait would never end)", () =>
    Effect.gen(function*() {
      const server = yield* askingServer([])
      const connection = yield* McpClient.connect({ url: server.url, policy: { call: { timeout: "20 seconds" } } })
      for (const id of ["a\u200b", "\u202ee-1", "e 1", "e-1\n"]) {
        expect(yield* Effect.flip(connection.awaitElicitation(id))).toMatchObject({
          _tag: "InvalidOption",
          option: "elicitationId",
          reason: "invalid-value",
          stage: "elicitation",
          outcome: "not-sent"
        })
      }
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})

describe("URL elicitation: the Promise API", () => {
  httpTest("a Promise handler, onElicitationComplete and awaitElicitation (its deadline a rejection)", () =>
    Effect.gen(function*() {
      const server = yield* askingServer([urlRequest("u-1", {})], [complete("e-1")])
      const completed: Array<string> = []
      const seen: Array<string> = []
      const connection = yield* Effect.promise(() =>
        connect({
          url: server.url,
          handlers: {
            elicitationUrl: async (request, { signal }) => {
              expect(signal.aborted).toBe(false)
              seen.push(request.url)
              return { action: "accept" }
            }
          },
          onElicitationComplete: (id) => void completed.push(id)
        })
      )
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      expect(server.posts("initialize")[0]!.message.params.capabilities).toEqual({ elicitation: { url: {} }, ...extensions })
      yield* Effect.promise(() => connection.callTool("connect"))
      expect(seen).toEqual([TARGET])
      yield* Effect.promise(() => connection.awaitElicitation("e-1", { timeout: 5_000 }))
      yield* eventually(() => completed.length === 1)
      expect(completed).toEqual(["e-1"])
      const rejected = yield* Effect.promise(() => connection.awaitElicitation("never", { timeout: 50 }).then(() => undefined, (error: unknown) => error))
      expect(rejected).toMatchObject({ _tag: "DeadlineExceeded", stage: "elicitation" })
    }))
})
