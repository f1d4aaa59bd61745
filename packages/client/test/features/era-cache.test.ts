/**
 * The era per origin (docs/DESIGN.md, "The era per origin"), against a loopback Streamable HTTP
 * server whose era a test switches (a 2025 server that refuses `server/discover` as a stateful
 * SDK server does, or a 2026-07-28-only server that refuses `initialize` with `-32022`), and which
 * counts what it receives: the second discovery of a 2025 server sends no `server/discover`; a
 * server that changed its era is negotiated again from the first candidate, under the same
 * deadline, and remembered anew; failures that do not mean a change keep the entry; a
 * connection whose transport or revisions are narrowed remembers nothing; connections that share
 * no cache share no era.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Fiber, Layer, TestClock } from "effect"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Authorization, McpCache, McpClient, McpServers } from "../../src/index.js"
import { json, rawHttpServer } from "../support/rawMcpServer.js"

type Behaviour = "handshake" | "stateless" | "broken" | "stateless-stalled"

const modernMeta = (message: any) => message?.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== undefined
const tools = [{ name: "echo", inputSchema: { type: "object" } }]

/** A server of one era at a time; `broken` answers 503 to everything (a server in trouble, not changed). */
const switchingServer = (initial: Behaviour) =>
  Effect.gen(function*() {
    const state = { behaviour: initial }
    const server = yield* rawHttpServer((_req, res, request) => {
      const message = request.message
      const id = message?.id
      const refuse = (status: number, code: number, data?: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message: "refused", ...(data === undefined ? {} : { data }) } }))
      }
      if (state.behaviour === "broken") {
        res.writeHead(503)
        res.end()
        return
      }
      if (request.method !== "POST") {
        res.writeHead(405)
        res.end()
        return
      }
      if (state.behaviour === "handshake") {
        // A stateful SDK server's answer to anything before initialize.
        if (modernMeta(message)) return refuse(400, -32000)
        switch (message?.method) {
          case "initialize":
            return json(res, {
              jsonrpc: "2.0",
              id,
              result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "old", version: "1" } }
            })
          case "tools/list":
            return json(res, { jsonrpc: "2.0", id, result: { tools } })
          default:
            if (id === undefined) {
              res.writeHead(202)
              res.end()
              return
            }
            return refuse(200, -32601)
        }
      }
      if (!modernMeta(message)) return refuse(400, -32022, { supported: ["2026-07-28"], requested: "2025-11-25" })
      // A stateless server whose discover never answers: the re-probe runs into the deadline.
      if (state.behaviour === "stateless-stalled") return
      switch (message.method) {
        case "server/discover":
          return json(res, { jsonrpc: "2.0", id, result: { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: { tools: {} } } })
        case "tools/list":
          return json(res, { jsonrpc: "2.0", id, result: { resultType: "complete", tools } })
        default:
          return refuse(404, -32601)
      }
    })
    const count = (method: string) => server.received.filter((r) => r.rpcMethod === method).length
    return { url: `${server.origin}/mcp`, state, count }
  })

const attemptsOf = (connection: McpClient.Connection) => [
  ...new Set(connection.discovery.flatMap((o) => (o.attempt === undefined ? [] : [`${o.attempt.era}/${o.attempt.transport}`])))
]

const shared = Layer.merge(McpCache.layer(), FetchHttpClient.layer)
const servicesPlatform = Layer.mergeAll(
  FetchHttpClient.layer,
  NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer)),
  Authorization.layerDefaults
)

describe("the era per origin", () => {
  it.scoped("the second discovery of a 2025 server sends no server/discover", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      const first = yield* McpClient.connect({ url: srv.url })
      expect(first.protocolVersion).toBe("2025-11-25")
      expect(attemptsOf(first)).toEqual(["stateless/streamable-http", "handshake/streamable-http"])
      expect(srv.count("server/discover")).toBe(1)
      const second = yield* McpClient.connect({ url: srv.url })
      expect(second.protocolVersion).toBe("2025-11-25")
      expect(attemptsOf(second)).toEqual(["handshake/streamable-http"])
      expect([srv.count("server/discover"), srv.count("initialize")]).toEqual([1, 2])
      expect((yield* (yield* McpCache.McpCache).stats).origins).toBe(1)
    }).pipe(Effect.provide(shared)))

  it.scoped("a server that became 2026-only: the remembered initialize is refused, the whole negotiation runs, the new era is remembered", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      yield* McpClient.connect({ url: srv.url })
      srv.state.behaviour = "stateless"
      const changed = yield* McpClient.connect({ url: srv.url })
      expect(changed.protocolVersion).toBe("2026-07-28")
      expect(attemptsOf(changed)).toEqual(["handshake/streamable-http", "stateless/streamable-http"])
      // Refused once (the remembered era), then probed.
      expect([srv.count("initialize"), srv.count("server/discover")]).toEqual([2, 2])
      const next = yield* McpClient.connect({ url: srv.url })
      expect(attemptsOf(next)).toEqual(["stateless/streamable-http"])
      expect([srv.count("initialize"), srv.count("server/discover")]).toEqual([2, 3])
      // And back to 2025: the stateless era is first anyway, and falls back as in any negotiation.
      srv.state.behaviour = "handshake"
      const back = yield* McpClient.connect({ url: srv.url })
      expect(back.protocolVersion).toBe("2025-11-25")
      const again = yield* McpClient.connect({ url: srv.url })
      expect(attemptsOf(again)).toEqual(["handshake/streamable-http"])
      expect(srv.count("server/discover")).toBe(4)
    }).pipe(Effect.provide(shared)))

  it.scoped("a legacy HTTP+SSE server: the second discovery opens the GET stream first, no refused POST before it", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy({ postToSsePath: 404 })
      const first = yield* McpClient.connect({ url: srv.url })
      expect(first.transport).toBe("sse")
      expect(srv.requests.map((r) => r.rpcMethod ?? r.method).slice(0, 3)).toEqual(["server/discover", "initialize", "GET"])
      const before = srv.requests.length
      const second = yield* McpClient.connect({ url: srv.url })
      expect(second.transport).toBe("sse")
      expect(attemptsOf(second)).toEqual(["handshake/sse"])
      // The first request of the second discovery is the legacy GET.
      expect(srv.requests[before]).toMatchObject({ method: "GET" })
      expect(srv.requests.slice(before).filter((r) => r.rpcMethod === "server/discover")).toHaveLength(0)
      yield* second.callTool("increment")
    }).pipe(Effect.provide(shared)))

  it.scoped("the re-probe runs under the discovery's one deadline (TestClock)", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      yield* McpClient.connect({ url: srv.url })
      srv.state.behaviour = "stateless-stalled"
      const connecting = yield* Effect.fork(Effect.flip(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 5_000 } } })))
      // Once the re-probe reached the server, the clock moves: not failed a millisecond before the deadline.
      yield* Effect.promise(async () => {
        while (srv.count("server/discover") < 2) await new Promise((resolve) => setTimeout(resolve, 5))
      })
      yield* TestClock.adjust(4_999)
      expect(yield* Fiber.poll(connecting)).toMatchObject({ _tag: "None" })
      yield* TestClock.adjust(1)
      const error = yield* Fiber.join(connecting)
      expect(error).toMatchObject({
        _tag: "DeadlineExceeded",
        stage: "discover",
        limits: { timeoutMs: 5_000 },
        attempts: [
          { era: "handshake", stage: "initialize", tag: "RemoteRefusal", code: -32022 },
          { era: "stateless", stage: "discover", tag: "DeadlineExceeded" }
        ]
      })
    }).pipe(Effect.provide(shared)))

  it.scoped("an era is remembered for maxEraAge: then the whole negotiation runs again (TestClock)", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      const cache = yield* McpCache.make({ maxEraAge: "10 minutes" })
      const connect = McpClient.connect({ url: srv.url }).pipe(Effect.provideService(McpCache.McpCache, cache))
      yield* connect
      yield* TestClock.adjust("9 minutes")
      expect(attemptsOf(yield* connect)).toEqual(["handshake/streamable-http"])
      // Not remembered anew by a discovery the remembered era held for: ten minutes from the first.
      yield* TestClock.adjust("9 minutes")
      expect(attemptsOf(yield* connect)).toEqual(["stateless/streamable-http", "handshake/streamable-http"])
      expect(srv.count("server/discover")).toBe(2)
      // That re-probe learnt it again: ten minutes from it.
      yield* TestClock.adjust("9 minutes")
      expect(attemptsOf(yield* connect)).toEqual(["handshake/streamable-http"])
      expect(srv.count("server/discover")).toBe(2)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("connecting every half maxEraAge still re-probes once maxEraAge has passed since the era was learnt (TestClock)", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      const cache = yield* McpCache.make({ maxEraAge: "10 minutes" })
      const connect = McpClient.connect({ url: srv.url }).pipe(Effect.provideService(McpCache.McpCache, cache))
      const probed: Array<number> = []
      for (let round = 0; round < 5; round++) {
        if (round > 0) yield* TestClock.adjust("5 minutes")
        yield* connect
        probed.push(srv.count("server/discover"))
      }
      // Learnt at 0 and 10 and 20 minutes (each a full negotiation); held at 5 and 15.
      expect(probed).toEqual([1, 1, 2, 2, 3])
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a failure that does not mean a change (a 503) ends the discovery as it is, and the era stays remembered", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      yield* McpClient.connect({ url: srv.url })
      srv.state.behaviour = "broken"
      const failure = yield* Effect.flip(McpClient.connect({ url: srv.url }))
      expect(failure).toMatchObject({ _tag: "UpstreamFailure", status: 503, stage: "initialize" })
      // Only the remembered candidate was tried: no probe after a 503.
      expect(srv.count("server/discover")).toBe(1)
      srv.state.behaviour = "handshake"
      const recovered = yield* McpClient.connect({ url: srv.url })
      expect(attemptsOf(recovered)).toEqual(["handshake/streamable-http"])
      expect(srv.count("server/discover")).toBe(1)
    }).pipe(Effect.provide(shared)))

  it.scoped("a re-probe that fails forgets the era: the next discovery starts from the first candidate", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      const cache = yield* McpCache.McpCache
      yield* McpClient.connect({ url: srv.url })
      // The remembered initialize is refused as a changed server refuses it; the probe then fails too.
      srv.state.behaviour = "stateless"
      const failed = yield* Effect.flip(McpClient.connect({ url: srv.url, policy: { maxBytes: 10 } }))
      // The refusal, over this connection's 10-byte ceiling, is a 400 without a JSON-RPC body that
      // can be read: a changed server's answer to initialize.
      expect(failed).toMatchObject({
        _tag: "ByteCeilingExceeded",
        stage: "discover",
        attempts: [
          { era: "handshake", stage: "initialize", tag: "UpstreamFailure", status: 400 },
          { era: "stateless", stage: "discover", tag: "ByteCeilingExceeded" }
        ]
      })
      expect((yield* cache.stats).origins).toBe(0)
      srv.state.behaviour = "handshake"
      const next = yield* McpClient.connect({ url: srv.url })
      expect(attemptsOf(next)).toEqual(["stateless/streamable-http", "handshake/streamable-http"])
    }).pipe(Effect.provide(shared)))

  it.scoped("a connection that could not choose the stateless era records nothing; Streamable HTTP forced records as auto does", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      const cache = yield* McpCache.McpCache
      // Without 2026-07-28 a dual-era server would be remembered as a 2025 one: nothing is.
      yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })
      expect([(yield* cache.stats).origins, srv.count("server/discover")]).toEqual([0, 0])
      yield* McpClient.connect({ url: srv.url, transport: "streamable-http" })
      expect([(yield* cache.stats).origins, srv.count("server/discover")]).toEqual([1, 1])
      const auto = yield* McpClient.connect({ url: srv.url })
      expect(attemptsOf(auto)).toEqual(["handshake/streamable-http"])
      expect(srv.count("server/discover")).toBe(1)
    }).pipe(Effect.provide(shared)))

  it.scoped("without a shared cache, every connection probes", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      yield* McpClient.connect({ url: srv.url })
      yield* McpClient.connect({ url: srv.url })
      expect(srv.count("server/discover")).toBe(2)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("another path of the same host is another server", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      yield* McpClient.connect({ url: srv.url })
      yield* McpClient.connect({ url: `${srv.url}/other` })
      expect(srv.count("server/discover")).toBe(2)
    }).pipe(Effect.provide(shared)))

  it.scoped("McpServers shares one cache across its servers: two names of one server probe once", () =>
    Effect.gen(function*() {
      const srv = yield* switchingServer("handshake")
      const servers = yield* McpServers.make({ servers: { first: { url: srv.url }, second: { url: srv.url } } })
      yield* servers.connection("first")
      yield* servers.connection("second")
      expect([srv.count("server/discover"), srv.count("initialize")]).toEqual([1, 2])
    }).pipe(Effect.provide(servicesPlatform)))
})
