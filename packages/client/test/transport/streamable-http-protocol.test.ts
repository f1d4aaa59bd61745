/**
 * Streamable HTTP protocol details over real loopback HTTP: session and version headers,
 * DELETE on close, session expiry, status and content mapping, discovery limits, resumable
 * SSE streams.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { McpClient } from "../../src/index.js"
import * as StreamableHttp from "../../src/internal/transport/streamableHttp.js"
import { expectReleased, failureOf, httpClients, server } from "../support/harness.js"
import { rawMcpServer, SSE_HEADERS } from "../support/rawMcpServer.js"

/**
 * A raw 2025 Streamable HTTP server (no session, support/rawMcpServer.ts) whose `tools/call`
 * answer never comes: the POST's SSE stream, and every resumption of it, carries one priming
 * event (an id, `retry`, empty data) and ends. Records the bytes it wrote on those streams and
 * every resumption GET (a GET without Last-Event-ID, the standalone stream, is answered 405).
 */
const endlesslyResumable = (retryMs: number) =>
  Effect.gen(function*() {
    let calls = 0
    let streamBytes = 0
    const resumptions: Array<string> = []
    const primingEvent = (n: number) => {
      const event = `id: stream-${n}\nretry: ${retryMs}\ndata: \n\n`
      streamBytes += Buffer.byteLength(event)
      return event
    }
    const raw = yield* rawMcpServer({
      onGet: ({ req, res }) => {
        const last = req.headers["last-event-id"]
        if (typeof last !== "string") return void res.writeHead(405, { allow: "POST" }).end()
        resumptions.push(last)
        res.writeHead(200, SSE_HEADERS)
        res.end(primingEvent(Number(last.slice("stream-".length)) + 1))
      },
      onCall: ({ res }) => {
        calls++
        res.writeHead(200, SSE_HEADERS)
        res.end(primingEvent(1))
      }
    })
    return { url: raw.url, calls: () => calls, streamBytes: () => streamBytes, resumptions }
  })

describe.each(httpClients)("Streamable HTTP protocol through %s", (_, httpClient) => {
  const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
    it.scopedLive(name, () => body().pipe(Effect.provide(httpClient)) as Effect.Effect<void, unknown, never>)

  scoped("captures Mcp-Session-Id, echoes it, sends MCP-Protocol-Version after initialize, DELETEs on close", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const scope = yield* Scope.make()
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Scope.extend(scope))
      yield* connection.callTool("echo", { text: "hi" })
      // The stateless probe first (no session, its own headers), refused by this 2025 server;
      // then the handshake on the same endpoint.
      // POSTs in order; the standalone GET of the session (this server refuses it) is forked
      // and may land anywhere among them.
      const posts = srv.requests.filter((r) => r.method === "POST")
      const [discover, initialize, ...rest] = posts
      const listen = srv.requests.filter((r) => r.method === "GET")
      expect(listen).toHaveLength(1)
      expect(listen[0]!.headers["mcp-session-id"]).toBe(rest[0]!.headers["mcp-session-id"])
      expect(discover!.rpcMethod).toBe("server/discover")
      expect(discover!.headers["mcp-session-id"]).toBeUndefined()
      expect(discover!.headers["mcp-protocol-version"]).toBe("2026-07-28")
      expect(discover!.headers["mcp-method"]).toBe("server/discover")
      expect(initialize!.rpcMethod).toBe("initialize")
      expect(initialize!.headers["mcp-session-id"]).toBeUndefined()
      expect(initialize!.headers["mcp-protocol-version"]).toBeUndefined()
      expect(initialize!.headers["accept"]).toBe("application/json, text/event-stream")
      const sessionIds = new Set(rest.map((r) => r.headers["mcp-session-id"]))
      expect(sessionIds.size).toBe(1)
      expect([...sessionIds][0]).toMatch(/.+/)
      for (const request of rest) expect(request.headers["mcp-protocol-version"]).toBe("2025-11-25")
      expect(rest.map((r) => r.rpcMethod)).toEqual(["notifications/initialized", "tools/list", "tools/call"])
      yield* Scope.close(scope, Exit.void)
      expect(srv.deletes()).toBe(1)
      const afterClose = yield* failureOf(connection.callTool("echo", { text: "late" }))
      expect(afterClose.error).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", outcome: "not-sent" })
    }))

  scoped("echoes the server's revision when it answers an older one", () =>
    Effect.gen(function*() {
      const srv = yield* server({ protocolVersion: "2025-03-26" })
      const connection = yield* McpClient.connect({ url: srv.url })
      expect(connection.protocolVersion).toBe("2025-03-26")
      yield* connection.callTool("echo", { text: "x" })
      expect(srv.requests.at(-1)!.headers["mcp-protocol-version"]).toBe("2025-03-26")
    }))

  scoped("refuses a revision it does not speak", () =>
    Effect.gen(function*() {
      const srv = yield* server({ protocolVersion: "1999-01-01" })
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url }))
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "unsupported-protocol-version", stage: "initialize" })
      // The session the server opened is ended all the same, with its id.
      const deletes = srv.requests.filter((r) => r.method === "DELETE")
      expect(deletes).toHaveLength(1)
      expect(deletes[0]!.headers["mcp-session-id"]).toMatch(/.+/)
    }))

  scoped("a 404 for a known session is SessionExpired (not applied, retryable); nothing more is sent on that session", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      const oldSession = srv.requests.find((r) => r.headers["mcp-session-id"] !== undefined)!.headers["mcp-session-id"]
      srv.expireSession()
      const first = yield* failureOf(connection.callTool("increment"))
      expect(first.error).toMatchObject({ _tag: "SessionExpired", status: 404, stage: "call", outcome: "not-applied", retryable: true })
      expect(srv.counter()).toBe(0)
      // The next call runs on a new session (sessions-heal.e2e.test.ts); the old id is never sent again.
      const before = srv.requests.length
      yield* connection.callTool("increment")
      expect(srv.requests.slice(before).every((r) => r.headers["mcp-session-id"] !== oldSession)).toBe(true)
      expect(srv.counter()).toBe(1)
      yield* expectReleased(connection)
    }))

  describe("statuses and bodies keep distinct tags", () => {
    // A JSON body that ends before it parses is the contract suite's (no replay: a close
    // mid-answer, on the JSON rows).
    const cases = [
      [{ kind: "status", status: 401 }, { _tag: "Unauthorized", status: 401, outcome: "not-applied" }],
      [{ kind: "status", status: 403 }, { _tag: "Forbidden", status: 403, outcome: "not-applied" }],
      [{ kind: "status", status: 500 }, { _tag: "UpstreamFailure", status: 500, outcome: "unknown" }],
      [{ kind: "status", status: 503 }, { _tag: "UpstreamFailure", status: 503 }],
      [{ kind: "status", status: 405 }, { _tag: "UpstreamFailure", status: 405 }],
      [{ kind: "jsonrpc-error", code: -32602, message: "bad arguments" }, {
        _tag: "RemoteRefusal",
        code: -32602,
        remoteMessage: "bad arguments",
        outcome: "not-applied"
      }],
      [{ kind: "wrong-content-type" }, { _tag: "ProtocolViolation", reason: "unexpected-content-type" }],
      [{ kind: "invalid-utf8", as: "json" }, { _tag: "ProtocolViolation", reason: "invalid-utf8" }],
      [{ kind: "invalid-utf8", as: "sse" }, { _tag: "ProtocolViolation", reason: "invalid-utf8" }],
      [{ kind: "invalid-json", as: "sse" }, { _tag: "ProtocolViolation", reason: "invalid-json" }]
    ] as const
    for (const [fault, expected] of cases) {
      scoped(`${JSON.stringify(fault)} on tools/call`, () =>
        Effect.gen(function*() {
          const srv = yield* server()
          const connection = yield* McpClient.connect({ url: srv.url })
          srv.script({ on: "tools/call", ...fault })
          const { error } = yield* failureOf(connection.callTool("increment"))
          expect(error).toMatchObject({ ...expected, stage: "call", phase: "call", retryable: false })
          expect(srv.counter()).toBe(1)
          yield* expectReleased(connection)
        }))
    }

    scoped("a 401 during discovery fails discovery as Unauthorized, at stage initialize", () =>
      Effect.gen(function*() {
        const srv = yield* server()
        srv.script({ on: "initialize", kind: "status", status: 401 })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url }))
        expect(error).toMatchObject({ _tag: "Unauthorized", stage: "initialize", phase: "discovery" })
      }))

    scoped("a 503 during discovery is retryable (discovery is idempotent)", () =>
      Effect.gen(function*() {
        const srv = yield* server()
        srv.script({ on: "tools/list", kind: "status", status: 503 })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url }))
        expect(error).toMatchObject({ _tag: "UpstreamFailure", stage: "list-tools", retryable: true })
      }))

    scoped("a refused port is a TransportFailure at the first POST (the stateless probe), not sent, retryable", () =>
      Effect.gen(function*() {
        const srv = yield* server()
        const url = srv.url
        yield* Effect.promise(() => srv.close())
        const { error } = yield* failureOf(McpClient.connect({ url }))
        expect(error).toMatchObject({ _tag: "TransportFailure", stage: "discover", outcome: "not-sent", retryable: true })
      }))
  })

  describe("discovery limits", () => {
    scoped("maxTools", () =>
      Effect.gen(function*() {
        const srv = yield* server({ extraTools: 10 })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { maxTools: 12 } }))
        expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxTools", stage: "list-tools" })
        const ok = yield* McpClient.connect({ url: srv.url, policy: { maxTools: 13 } })
        expect(ok.tools).toHaveLength(13)
      }))

    scoped("maxPages, with every page under the one discovery deadline", () =>
      Effect.gen(function*() {
        const srv = yield* server({ extraTools: 10, pageSize: 2 })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { maxPages: 6 } }))
        expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxPages", stage: "list-tools" })
        const ok = yield* McpClient.connect({ url: srv.url, policy: { maxPages: 7 } })
        expect(ok.tools).toHaveLength(13)
        expect(ok.discovery.filter((o) => o.stage === "list-tools")).toHaveLength(7)
      }))

    scoped("maxSchemaBytes", () =>
      Effect.gen(function*() {
        const srv = yield* server({ schemaPadBytes: 10_000 })
        const { error } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { maxSchemaBytes: 5_000 } }))
        expect(error).toMatchObject({ _tag: "LimitExceeded", limit: "maxSchemaBytes", stage: "list-tools" })
        const ok = yield* McpClient.connect({ url: srv.url, policy: { maxSchemaBytes: 20_000 } })
        // The padded schema is accepted whole under the larger limit.
        const add = ok.tools.find((tool) => tool.name === "add")!
        expect(Buffer.byteLength(JSON.stringify(add.inputSchema))).toBeGreaterThan(10_000)
        expect(Buffer.byteLength(JSON.stringify(add.inputSchema))).toBeLessThanOrEqual(20_000)
      }))

    scoped("a slow page sequence fails at the single discovery deadline", () =>
      Effect.gen(function*() {
        const srv = yield* server({ extraTools: 10, pageSize: 2 })
        srv.script({ on: "tools/list", kind: "delay", ms: 150, times: Infinity })
        const { error, elapsedMs } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 500 } } }))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "list-tools", limits: { timeoutMs: 500 } })
        // One deadline for all seven pages (each 150 ms, under any per-page deadline): it is
        // what ended the listing.
        expect(elapsedMs).toBeGreaterThanOrEqual(450)
        expect(elapsedMs).toBeLessThan(3_000)
      }))
  })

  describe("resumable SSE (2025-11-25)", () => {
    scoped("reconnects with Last-Event-ID after retry and gets the response; the call arrived once", () =>
      Effect.gen(function*() {
        const srv = yield* server({ mode: "sse" })
        const connection = yield* McpClient.connect({ url: srv.url })
        srv.script({ on: "tools/call", kind: "resumable", retryMs: 50 })
        const result = yield* connection.callTool("increment")
        expect(result.content).toEqual([{ type: "text", text: "1" }])
        // The standalone GET (refused 405 by this server) carries no Last-Event-ID.
        const resume = srv.requests.find((r) => r.method === "GET" && r.headers["last-event-id"] !== undefined)
        expect(resume?.headers["last-event-id"]).toMatch(/-1$/)
        expect(srv.counter()).toBe(1)
        expect(srv.rpcCalls("tools/call")).toBe(1)
      }))

    scoped("the reconnection stays inside the call deadline", () =>
      Effect.gen(function*() {
        const srv = yield* server({ mode: "sse" })
        const connection = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300 } } })
        srv.script({ on: "tools/call", kind: "resumable", retryMs: 5_000 })
        const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
        expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call", limits: { timeoutMs: 300 }, outcome: "unknown" })
        // The call deadline ended the wait for the server's retry (5 s).
        expect(elapsedMs).toBeGreaterThanOrEqual(250)
        expect(elapsedMs).toBeLessThan(3_000)
        // The wait was interrupted before the failure came back: no resumption was, or will be, sent.
        expect(srv.requests.filter((r) => r.method === "GET" && r.headers["last-event-id"] !== undefined)).toHaveLength(0)
        expect(srv.counter()).toBe(1)
      }))

    // docs/GUIDE.md, "Decisions": at most 16 resumptions, after the server's retry, inside the
    // request's deadline.
    scoped("a stream that ends after every event is resumed exactly 16 times, then the call fails: missing-response", () =>
      Effect.gen(function*() {
        const retryMs = 25
        const raw = yield* endlesslyResumable(retryMs)
        const connection = yield* McpClient.connect({ url: raw.url, policy: { call: { timeout: 30_000 } } })
        const { error, elapsedMs } = yield* failureOf(connection.callTool("increment"))
        expect(StreamableHttp.maxResumptions).toBe(16)
        expect(error).toMatchObject({
          _tag: "ProtocolViolation",
          reason: "missing-response",
          stage: "call",
          phase: "call",
          status: 200,
          // Every event of the POST's stream and of its 16 resumptions, counted.
          observedBytes: raw.streamBytes(),
          outcome: "unknown",
          retryable: false
        })
        // Each resumption names the last event id, in order: a continuation, not a replay.
        expect(raw.resumptions).toEqual(Array.from({ length: 16 }, (_, i) => `stream-${i + 1}`))
        // The server's retry was waited for before each one.
        expect(elapsedMs).toBeGreaterThanOrEqual(16 * retryMs)
        // The read loop has ended when the failure comes back: there is no 17th GET.
        yield* expectReleased(connection)
        expect(raw.resumptions).toHaveLength(16)
        expect(raw.calls()).toBe(1)
      }))
  })
})
