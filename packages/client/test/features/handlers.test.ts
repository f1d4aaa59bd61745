/**
 * Client handlers (elicitation, sampling, roots) end to end:
 *
 * - handshake era over Streamable HTTP, against raw loopback servers: the server's requests on a
 *   POST's SSE answer and on the standalone GET stream are answered with the handlers' results
 *   (SEP-1034 defaults for an accepted form), POSTed with the session's id; the capabilities
 *   declared are exactly those of the handlers given; a failing handler is a generic -32603 and
 *   a method without a handler -32601;
 * - the Promise API's handlers against the testkit server in the stateless era: `ask_name`, a
 *   throwing handler, a handler that never answers (its signal aborted), an aborted caller;
 * - an invalid `handlers` option is refused before anything is sent.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Layer, Scope } from "effect"
import type * as http from "node:http"
import { type ClientHandlers, McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { eventually, failureOf } from "../support/harness.js"
import { json, type RawMcpOptions, rawMcpServer, type RawRequest, sseEvent } from "../support/rawMcpServer.js"

const SESSION = "session-handlers-e2e"
const CANARY = "CANARY-handler-secret-7f3a"

/**
 * A raw handshake-era server (support/rawMcpServer.ts) that refuses `server/discover` with -32601
 * (as 2025 SDK servers do), names its session on `initialize` and lists one tool, `ask`. Every
 * request is recorded; the client's replies are collected.
 */
const sessionServer = (hooks: Pick<RawMcpOptions, "onCall" | "onGet">) =>
  rawMcpServer({
    discover: "method-not-found",
    sessionId: SESSION,
    tools: [{ name: "ask", inputSchema: { type: "object" } }],
    ...hooks
  })

/** Whether `promise` settled within `ms`. */
const within = (promise: Promise<void>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))])

/** The three server requests a `tools/call` sends on its SSE answer. */
const ELICIT = {
  jsonrpc: "2.0",
  id: "e-1",
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Who are you?",
    requestedSchema: {
      type: "object",
      properties: {
        name: { type: "string" },
        color: { type: "string", default: "blue" },
        age: { type: "integer", default: 42 }
      }
    }
  }
}
const SAMPLE = {
  jsonrpc: "2.0",
  id: 7,
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: { type: "text", text: "Say hi" } }], maxTokens: 10 }
}
const ROOTS = { jsonrpc: "2.0", id: "r-1", method: "roots/list" }

/**
 * A server whose `tools/call` sends the three requests on the POST's SSE stream, waits for the
 * three replies (at most 10 s), then answers the call on the same stream.
 */
const askingServer = sessionServer({
  onCall: async ({ message, replied, res }) => {
    res.writeHead(200, { "content-type": "text/event-stream" })
    res.write(sseEvent(ELICIT))
    res.write(sseEvent(SAMPLE))
    res.write(sseEvent(ROOTS))
    await within(replied(3), 10_000)
    res.end(sseEvent({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "done" }] } }))
  }
})

const replyTo = (replies: ReadonlyArray<RawRequest>, id: string | number) => replies.find((r) => r.message.id === id)

const httpTest = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(FetchHttpClient.layer)) as Effect.Effect<void, unknown, never>, timeout)

describe("handlers, handshake era, on a POST's SSE answer", () => {
  httpTest("each request is answered with its handler's result, POSTed with the session id; the capabilities are declared", () =>
    Effect.gen(function*() {
      const server = yield* askingServer
      const seen: Record<string, unknown> = {}
      const handlers: ClientHandlers.Handlers = {
        elicitation: (params) =>
          Effect.sync(() => {
            seen["elicitation"] = params
            return { action: "accept", content: { name: "Ada", color: "red" } }
          }),
        sampling: (params) =>
          Effect.sync(() => {
            seen["sampling"] = params
            return { role: "assistant", content: { type: "text", text: "hi" }, model: "test-model", stopReason: "endTurn" }
          }),
        roots: (params) =>
          Effect.sync(() => {
            seen["roots"] = params
            return { roots: [{ uri: "file:///work", name: "work" }] }
          })
      }
      const connection = yield* McpClient.connect({ url: server.url, handlers })
      expect(connection.protocolVersion).toBe("2025-11-25")
      expect(server.posts("initialize")[0]!.message.params.capabilities).toEqual({
        elicitation: {},
        sampling: {},
        roots: {},
        extensions: { "io.modelcontextprotocol/skills": {} }
      })

      const result = yield* connection.callTool("ask")
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      expect(server.replies).toHaveLength(3)
      expect(replyTo(server.replies, "e-1")!.message).toEqual({
        jsonrpc: "2.0",
        id: "e-1",
        // The schema's defaults for what the answer left out (SEP-1034); what it gave is kept.
        result: { action: "accept", content: { name: "Ada", color: "red", age: 42 } }
      })
      expect(replyTo(server.replies, 7)!.message).toEqual({
        jsonrpc: "2.0",
        id: 7,
        result: { role: "assistant", content: { type: "text", text: "hi" }, model: "test-model", stopReason: "endTurn" }
      })
      expect(replyTo(server.replies, "r-1")!.message).toEqual({
        jsonrpc: "2.0",
        id: "r-1",
        result: { roots: [{ uri: "file:///work", name: "work" }] }
      })
      for (const reply of server.replies) {
        expect(reply.headers["mcp-session-id"]).toBe(SESSION)
        expect(reply.headers["mcp-protocol-version"]).toBe("2025-11-25")
      }
      expect(seen["elicitation"]).toEqual(ELICIT.params)
      expect(seen["sampling"]).toEqual(SAMPLE.params)
      expect(seen["roots"]).toEqual({})
      // The call was sent once.
      expect(server.posts("tools/call")).toHaveLength(1)
    }))

  httpTest("only the capabilities of the handlers given; a method without a handler gets -32601; a decline gets no defaults", () =>
    Effect.gen(function*() {
      const server = yield* askingServer
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: { elicitation: () => Effect.succeed({ action: "decline" }) }
      })
      expect(server.posts("initialize")[0]!.message.params.capabilities).toEqual({ elicitation: {}, extensions: { "io.modelcontextprotocol/skills": {} } })
      expect((yield* connection.callTool("ask")).content).toEqual([{ type: "text", text: "done" }])
      expect(replyTo(server.replies, "e-1")!.message).toEqual({ jsonrpc: "2.0", id: "e-1", result: { action: "decline" } })
      for (const id of [7, "r-1"]) {
        expect(replyTo(server.replies, id)!.message).toEqual({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } })
      }
    }))

  httpTest("no handlers: capabilities {} and every request gets -32601", () =>
    Effect.gen(function*() {
      const server = yield* askingServer
      const connection = yield* McpClient.connect({ url: server.url })
      expect(server.posts("initialize")[0]!.message.params.capabilities).toEqual({ extensions: { "io.modelcontextprotocol/skills": {} } })
      expect((yield* connection.callTool("ask")).content).toEqual([{ type: "text", text: "done" }])
      expect(server.replies.map((r) => r.message.error?.code)).toEqual([-32601, -32601, -32601])
    }))

  httpTest("a handler that fails gets a generic -32603 with nothing of its failure; the others answer; the call completes", () =>
    Effect.gen(function*() {
      const server = yield* askingServer
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: {
          elicitation: () => Effect.succeed({ action: "cancel" }),
          sampling: () => Effect.fail(new Error(`model refused: ${CANARY}`)),
          roots: () => Effect.fail({ secret: CANARY })
        }
      })
      expect((yield* connection.callTool("ask")).content).toEqual([{ type: "text", text: "done" }])
      expect(replyTo(server.replies, "e-1")!.message).toEqual({ jsonrpc: "2.0", id: "e-1", result: { action: "cancel" } })
      for (const id of [7, "r-1"]) {
        const reply = replyTo(server.replies, id)!.message
        expect(reply).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32603, message: expect.any(String) } })
        expect(reply).not.toHaveProperty("result")
      }
      expect(JSON.stringify(server.received.map((r) => r.body))).not.toContain(CANARY)
      expect(JSON.stringify(server.received.map((r) => r.headers))).not.toContain(CANARY)
    }))

  httpTest("a handler that dies or throws gets the same generic -32603: the server is answered, the call completes", () =>
    Effect.gen(function*() {
      const server = yield* askingServer
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: {
          elicitation: () => Effect.die(new Error(CANARY)),
          sampling: () => {
            throw new Error(CANARY)
          },
          roots: () => Effect.succeed({ roots: [] })
        }
      })
      expect((yield* connection.callTool("ask")).content).toEqual([{ type: "text", text: "done" }])
      for (const id of ["e-1", 7]) {
        expect(replyTo(server.replies, id)!.message).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32603 } })
      }
      expect(JSON.stringify(server.received.map((r) => r.body))).not.toContain(CANARY)
    }))
})

describe("a server that floods the client with requests", () => {
  httpTest(
    "costs it a bounded number of handlers: 8 at a time, 32 more queued, the rest dropped and counted; the readers never wait",
    () =>
      Effect.gen(function*() {
        const flood = 200
        const server = yield* sessionServer({
          onCall: ({ message, res }) => {
            res.writeHead(200, { "content-type": "text/event-stream" })
            const asks = Array.from({ length: flood }, (_, i) => sseEvent({ ...ELICIT, id: `f-${i}` }))
            // Every request before the call's answer, in one write: the reader routes them all first.
            res.end(asks.join("") + sseEvent({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "done" }] } }))
          }
        })
        const gate = yield* Deferred.make<void>()
        let started = 0
        let running = 0
        let mostAtOnce = 0
        let finished = 0
        const connection = yield* McpClient.connect({
          url: server.url,
          handlers: {
            elicitation: () =>
              Effect.suspend(() => {
                started++
                mostAtOnce = Math.max(mostAtOnce, ++running)
                return Deferred.await(gate)
              }).pipe(
                Effect.as({ action: "decline" }),
                Effect.ensuring(Effect.sync(() => {
                  running--
                  finished++
                }))
              )
          }
        })
        // The call's answer came after every request (all of them routed), while the handlers wait.
        expect((yield* connection.callTool("ask")).content).toEqual([{ type: "text", text: "done" }])
        yield* eventually(() => started === 8, 20_000)
        // Taken: the 8 answering, the 32 of the full queue, and the few the answering fiber took
        // from the queue before the reader filled it; the others dropped and counted.
        const accepted = flood - (yield* connection.diagnostics).droppedFrames
        expect(accepted).toBeGreaterThanOrEqual(33)
        expect(accepted).toBeLessThanOrEqual(40)
        yield* Deferred.succeed(gate, undefined)
        yield* eventually(() => finished === accepted, 20_000)
        expect(started).toBe(accepted)
        expect(mostAtOnce).toBe(8)
        yield* Effect.promise(() => server.replied(accepted))
        expect(new Set(server.replies.map((r) => r.message.id)).size).toBe(accepted)
      }),
    60_000
  )

  httpTest("closing the connection interrupts the handlers still answering; nothing queued starts after", () =>
    Effect.gen(function*() {
      const server = yield* sessionServer({
        onCall: ({ message, res }) => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          const asks = Array.from({ length: 20 }, (_, i) => sseEvent({ ...ELICIT, id: `c-${i}` }))
          res.end(asks.join("") + sseEvent({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "done" }] } }))
        }
      })
      let started = 0
      let running = 0
      let ended = 0
      const scope = yield* Scope.make()
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: {
          elicitation: () =>
            Effect.suspend(() => {
              started++
              running++
              return Effect.never
            }).pipe(Effect.ensuring(Effect.sync(() => {
              running--
              ended++
            })))
        }
      }).pipe(Scope.extend(scope))
      expect((yield* connection.callTool("ask")).content).toEqual([{ type: "text", text: "done" }])
      yield* eventually(() => started === 8, 20_000)
      yield* Scope.close(scope, Exit.void)
      // Closed means released: the 8 handlers were interrupted, and the 12 queued never ran.
      expect(running).toBe(0)
      expect(ended).toBe(8)
      expect(started).toBe(8)
    }), 60_000)
})

describe("handlers, handshake era, on the standalone GET stream", () => {
  httpTest("the GET stream is opened during discovery, and a request sent on it is answered there", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      let stream: http.ServerResponse | undefined
      const server = yield* sessionServer({
        onGet: ({ req, res }) => {
          if (req.headers["mcp-session-id"] !== SESSION) return void res.writeHead(400).end()
          events.push("GET")
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.flushHeaders()
          stream = res
        },
        onCall: async ({ message, replied, res }) => {
          events.push("tools/call")
          if (stream === undefined) return json(res, { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "no stream" } })
          // Asked on the GET stream, not on this POST's answer, which waits for the reply.
          stream.write(sseEvent(ELICIT))
          if (!(await within(replied(1), 10_000))) {
            return json(res, { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "no reply" } })
          }
          events.push("reply")
          json(res, { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "thanks" }] } })
        }
      })
      const asked: Array<unknown> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: {
          elicitation: (params) =>
            Effect.sync(() => {
              asked.push(params)
              return { action: "accept", content: { name: "Grace" } }
            })
        }
      })
      // Open before discovery ended: after the handshake, before the listing.
      expect(events).toEqual(["GET"])
      const order = server.received.map((r) => (r.method === "POST" ? r.rpcMethod : r.method))
      expect(order).toEqual(["server/discover", "initialize", "notifications/initialized", "GET", "tools/list"])
      const get = server.received.find((r) => r.method === "GET")!
      expect(get.headers["accept"]).toContain("text/event-stream")
      expect(get.headers["mcp-protocol-version"]).toBe("2025-11-25")

      const result = yield* connection.callTool("ask")
      expect(result.content).toEqual([{ type: "text", text: "thanks" }])
      expect(events).toEqual(["GET", "tools/call", "reply"])
      expect(asked).toEqual([ELICIT.params])
      expect(server.replies).toHaveLength(1)
      expect(server.replies[0]!.message).toEqual({
        jsonrpc: "2.0",
        id: "e-1",
        result: { action: "accept", content: { name: "Grace", color: "blue", age: 42 } }
      })
      expect(server.replies[0]!.headers["mcp-session-id"]).toBe(SESSION)
      // One GET only: the stream was not reopened for the call.
      expect(server.received.filter((r) => r.method === "GET")).toHaveLength(1)
    }))
})

describe("handlers through the Promise API, stateless era (testkit server)", () => {
  const withServer = async (body: (srv: Testkit.TestServer) => Promise<void>) => {
    const srv = await Testkit.startServer({ era: "stateless" })
    try {
      await body(srv)
    } finally {
      await srv.close()
    }
  }

  it("ask_name is answered by the elicitation handler: hello <name>", () =>
    withServer(async (srv) => {
      const calls: Array<unknown> = []
      const connection = await connect({
        url: srv.url,
        handlers: {
          elicitation: async (params, { signal }) => {
            calls.push(params)
            expect(signal.aborted).toBe(false)
            return { action: "accept", content: { name: "Ada" } }
          }
        }
      })
      try {
        expect(connection.protocolVersion).toBe("2026-07-28")
        const result = await connection.callTool("ask_name")
        expect(result.content).toEqual([{ type: "text", text: "hello Ada" }])
        expect(calls).toEqual([(Testkit.ASK_NAME_INPUT_REQUESTS["name"] as { params: unknown }).params])
        expect(srv.inputRounds()).toBe(1)
        expect(srv.rpcCalls("tools/call")).toBe(2)
        // server/discover, tools/list and the two rounds of the call: each declares the capability.
        expect(srv.requests.map((r) => r.rpcMethod)).toEqual(["server/discover", "tools/list", "tools/call", "tools/call"])
        const metas = srv.requests.map((r) => r.meta?.[Testkit.META_CLIENT_CAPABILITIES])
        // With the extensions the client declares in every request (docs/DESIGN.md, "Tasks").
        expect(metas).toEqual(Array(4).fill({ elicitation: {}, extensions: { "io.modelcontextprotocol/skills": {}, "io.modelcontextprotocol/tasks": {} } }))
      } finally {
        await connection.close()
      }
    }))

  it("a handler that throws rejects with HandlerFailed, nothing of what it threw in the error's text", () =>
    withServer(async (srv) => {
      const connection = await connect({
        url: srv.url,
        handlers: {
          elicitation: async () => {
            throw new Error(`the user's vault said ${CANARY}`)
          }
        }
      })
      try {
        const error = await connection.callTool("ask_name").then(
          () => undefined,
          (e: unknown) => e
        )
        expect(error).toMatchObject({
          _tag: "HandlerFailed",
          capability: "elicitation",
          stage: "call",
          phase: "call",
          outcome: "not-applied",
          retryable: false
        })
        expect(String(error)).not.toContain(CANARY)
        expect(JSON.stringify(error)).not.toContain(CANARY)
        expect((error as Error).message).not.toContain(CANARY)
        // The input round was not answered: the call was not retried.
        expect(srv.rpcCalls("tools/call")).toBe(1)
      } finally {
        await connection.close()
      }
    }))

  it("a handler that never answers: DeadlineExceeded at the call timeout, and the handler's signal is aborted", () =>
    withServer(async (srv) => {
      let handlerSignal: AbortSignal | undefined
      const connection = await connect({
        url: srv.url,
        handlers: {
          elicitation: (_params, { signal }) => {
            handlerSignal = signal
            return new Promise(() => {})
          }
        }
      })
      try {
        const started = Date.now()
        const error = await connection.callTool("ask_name", {}, { timeout: 500 }).then(
          () => undefined,
          (e: unknown) => e
        )
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: 500 } })
        expect(Date.now() - started).toBeGreaterThanOrEqual(450)
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(handlerSignal).toBeDefined()
        await srv.waitFor(() => handlerSignal!.aborted === true)
        expect(srv.rpcCalls("tools/call")).toBe(1)
      } finally {
        await connection.close()
      }
    }))

  it("an aborted caller signal while the handler runs rejects with the signal's own reason", () =>
    withServer(async (srv) => {
      let handlerSignal: AbortSignal | undefined
      const connection = await connect({
        url: srv.url,
        policy: { call: { timeout: 20_000 } },
        handlers: {
          elicitation: (_params, { signal }) => {
            handlerSignal = signal
            return new Promise(() => {})
          }
        }
      })
      try {
        const controller = new AbortController()
        const reason = new Error("the user closed the dialog")
        const pending = connection.callTool("ask_name", {}, { signal: controller.signal })
        await srv.waitFor(() => handlerSignal !== undefined)
        expect(handlerSignal!.aborted).toBe(false)
        controller.abort(reason)
        await expect(pending).rejects.toBe(reason)
        await srv.waitFor(() => handlerSignal!.aborted === true)
        expect(srv.rpcCalls("tools/call")).toBe(1)
      } finally {
        await connection.close()
      }
    }))
})

describe("an invalid handlers option is refused before anything is sent", () => {
  const invalid: ReadonlyArray<readonly [string, unknown]> = [
    ["a non-function handler", { elicitation: "ask the user" }],
    ["a number as handler", { sampling: 42 }],
    ["an unknown key", { elicit: () => Effect.succeed({}) }],
    ["null", null],
    ["a function instead of an object", () => Effect.succeed({})]
  ]

  for (const [name, handlers] of invalid) {
    it.scopedLive(`Effect API over HTTP: ${name}`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped()
        const { error } = yield* failureOf(
          McpClient.connect({ url: srv.url, handlers: handlers as ClientHandlers.Handlers }).pipe(Effect.provide(FetchHttpClient.layer))
        )
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "handlers", stage: "config", outcome: "not-sent" })
        expect(srv.requests).toHaveLength(0)
      }))
  }

  it.scopedLive("Effect API over stdio: no child is started", () =>
    Effect.gen(function*() {
      const f = yield* Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture()), (f) => Effect.sync(() => f.cleanup()))
      for (const [, handlers] of invalid) {
        const { error } = yield* failureOf(
          McpClient.connectStdio({ command: f.command, args: f.args, handlers: handlers as ClientHandlers.Handlers }).pipe(
            Effect.provide(Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer))
          )
        )
        expect(error).toMatchObject({ _tag: "InvalidOption", option: "handlers" })
      }
      expect(f.pid()).toBeUndefined()
      expect(f.arrivals()).toEqual([])
    }))

  it("Promise API over HTTP: a non-function handler, null", async () => {
    const srv = await Testkit.startServer()
    try {
      // A misspelled key and an array are refused too: nothing is silently dropped.
      const misspelled = { elicitatoin: async () => ({ action: "accept" }) }
      for (const handlers of [{ elicitation: "ask the user" }, { roots: 1 }, null, misspelled, []]) {
        await expect(connect({ url: srv.url, handlers: handlers as never })).rejects.toMatchObject({
          _tag: "InvalidOption",
          option: "handlers"
        })
      }
      expect(srv.requests).toHaveLength(0)
    } finally {
      await srv.close()
    }
  })

  it("Promise API over stdio: a non-function handler; no child is started", async () => {
    const f = Testkit.makeStdioFixture()
    try {
      await expect(connect({ stdio: { command: f.command, args: f.args }, handlers: { sampling: {} } as never })).rejects.toMatchObject({
        _tag: "InvalidOption",
        option: "handlers"
      })
      expect(f.pid()).toBeUndefined()
    } finally {
      f.cleanup()
    }
  })
})
