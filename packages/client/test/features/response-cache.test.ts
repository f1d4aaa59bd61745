/**
 * The response cache (docs/DESIGN.md, "Response cache") end to end, against a loopback server
 * of the 2026-07-28 revision whose caching hints each test chooses, and which counts what it
 * receives (by method and by credential): a fresh listing or read is served without a request,
 * a stale one is fetched (TTL under `TestClock`), `refresh` and `bypass`, `private` entries kept
 * apart by credential (a header, or the token of an OAuth connection) while `public` ones are
 * shared, answers after `input_required` never kept, eviction by the server's notifications
 * and by the public `evict`, the bounds (a huge `ttlMs`, many entries, large answers), refused
 * modes, and the Promise API.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Layer, TestClock } from "effect"
import type * as http from "node:http"
import { Authorization, McpCache, McpClient } from "../../src/index.js"
import * as CacheService from "../../src/internal/cacheService.js"
import * as PromiseApi from "../../src/promise.js"
import { consentingUser, oauthServer, redirectUri } from "../support/oauth.js"
import { json, rawHttpServer, type RawRequest, SSE_HEADERS, sseEvent } from "../support/rawMcpServer.js"

type Hint = { readonly ttlMs: number; readonly cacheScope: "public" | "private" } | undefined

interface Script {
  /** The hint of each method's answers (none: no hint, as a 2025 server answers). */
  hints: Partial<Record<string, Hint>>
  /** Bumped by a test: every read answers the version it was read at. */
  version: number
  /** `resources/read` asks for one `input_required` round first. */
  readRound: boolean
  /** Pads every read's text to this many characters. */
  readPad: number
  /** The hint of a read by URI, overriding `hints` (for generated cases). */
  readHint?: ((uri: string) => Record<string, unknown> | undefined) | undefined
  /** The hint of each generated fetch, by its number. */
  readonly fetched: Array<Record<string, unknown>>
  /** Open subscription streams (`subscriptions/listen`), to send notifications on. */
  readonly streams: Array<http.ServerResponse>
  /** The issuer of the authorization server that protects the endpoint (none: unprotected). */
  protectedBy?: string | undefined
}

const modernMeta = (message: any) => message?.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== undefined

/** A 2026-07-28 server that answers every listing and read with the hint its script gives. */
const cachingServer = (initial: Partial<Script> = {}) =>
  Effect.gen(function*() {
    const script: Script = { hints: {}, version: 1, readRound: false, readPad: 0, readHint: undefined, fetched: [], streams: [], ...initial }
    const answer = (res: http.ServerResponse, id: unknown, method: string, result: Record<string, unknown>) =>
      json(res, { jsonrpc: "2.0", id, result: { resultType: "complete", ...result, ...(script.hints[method] ?? {}) } })
    const server = yield* rawHttpServer((_req, res, request) => {
      // Protected by an authorization server (a test's `protectedBy`): its metadata, and a 401 without a token.
      if (script.protectedBy !== undefined) {
        const resource = `http://${request.headers["host"]}/mcp`
        if (request.path === "/.well-known/oauth-protected-resource/mcp" || request.path === "/.well-known/oauth-protected-resource") {
          return json(res, { resource, authorization_servers: [script.protectedBy] })
        }
        if (request.headers["authorization"] === undefined) {
          res.writeHead(401, { "www-authenticate": `Bearer resource_metadata="http://${request.headers["host"]}/.well-known/oauth-protected-resource/mcp"` })
          res.end()
          return
        }
      }
      if (request.method !== "POST") {
        res.writeHead(405)
        res.end()
        return
      }
      const message = request.message
      const id = message?.id
      if (!modernMeta(message)) {
        res.writeHead(400, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32022, message: "unsupported", data: { supported: ["2026-07-28"] } } }))
        return
      }
      switch (message.method) {
        case "server/discover":
          return answer(res, id, "server/discover", {
            supportedVersions: ["2026-07-28"],
            capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} }
          })
        case "subscriptions/listen":
          res.writeHead(200, SSE_HEADERS)
          res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: {} }))
          script.streams.push(res)
          return
        case "tools/list":
          return answer(res, id, "tools/list", { tools: [{ name: `echo-${script.version}`, inputSchema: { type: "object" } }] })
        case "resources/list":
          return answer(res, id, "resources/list", { resources: [{ uri: "test://a", name: `a-${script.version}` }] })
        case "resources/templates/list":
          return answer(res, id, "resources/templates/list", { resourceTemplates: [{ uriTemplate: "test://{x}", name: "x" }] })
        case "prompts/list":
          return answer(res, id, "prompts/list", { prompts: [{ name: `p-${script.version}` }] })
        case "resources/read": {
          const uri = message.params.uri
          if (script.readRound && message.params.requestState === undefined) {
            return json(res, { jsonrpc: "2.0", id, result: { resultType: "input_required", requestState: "s1" } })
          }
          const text = `${uri} v${script.version}`.padEnd(script.readPad, ".")
          const scoped = script.readHint?.(uri)
          if (scoped !== undefined) {
            // The answer names its fetch and who asked: a private one must never reach another credential.
            const whom = String(request.headers["authorization"] ?? "anonymous")
            script.fetched.push(scoped)
            return json(res, {
              jsonrpc: "2.0",
              id,
              result: { resultType: "complete", contents: [{ uri, text: `#${script.fetched.length - 1} for ${whom}` }], ...scoped }
            })
          }
          return answer(res, id, "resources/read", { contents: [{ uri, text }] })
        }
        default:
          return json(res, { jsonrpc: "2.0", id, error: { code: -32601, message: "no such method" } })
      }
    })
    const notify = (method: string, params: Record<string, unknown> = {}) => {
      for (const stream of script.streams) stream.write(sseEvent({ jsonrpc: "2.0", method, params }))
    }
    const count = (method: string, authorization?: string) =>
      server.received.filter((r: RawRequest) => r.rpcMethod === method && (authorization === undefined || r.headers["authorization"] === authorization)).length
    return { url: `${server.origin}/mcp`, script, notify, count, server }
  })

const minute = { ttlMs: 60_000, cacheScope: "public" } as const
const everything = (hint: Hint): Partial<Record<string, Hint>> => ({
  "tools/list": hint,
  "resources/list": hint,
  "resources/templates/list": hint,
  "prompts/list": hint,
  "resources/read": hint
})

const text = (result: { readonly contents: ReadonlyArray<unknown> }) => (result.contents[0] as { text: string }).text

describe("the response cache", () => {
  it.scoped("a fresh read is served without a request; at its ttlMs it is fetched again (TestClock)", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything({ ttlMs: 10_000, cacheScope: "public" }) })
      const connection = yield* McpClient.connect({ url: srv.url })
      expect(text(yield* connection.readResource("test://a"))).toBe("test://a v1")
      srv.script.version = 2
      yield* TestClock.adjust(9_999)
      // Still fresh one millisecond before its end: the server is not asked.
      expect(text(yield* connection.readResource("test://a"))).toBe("test://a v1")
      expect(srv.count("resources/read")).toBe(1)
      yield* TestClock.adjust(1)
      expect(text(yield* connection.readResource("test://a"))).toBe("test://a v2")
      expect(srv.count("resources/read")).toBe(2)
      // The key is the URI: another one is another request.
      expect(text(yield* connection.readResource("test://b"))).toBe("test://b v2")
      expect(srv.count("resources/read")).toBe(3)
      // A hit reads nothing, and says so.
      const reads = (yield* connection.observations).filter((o) => o.operation === "resources/read")
      expect(reads.map((o) => [o.bytes > 0, o.cached ?? false])).toEqual([[true, false], [false, true], [true, false], [true, false]])
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("every listing is cached as a whole, with its own hint; no hint or ttlMs 0 is never kept", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({
        hints: { "tools/list": minute, "prompts/list": { ttlMs: 0, cacheScope: "public" }, "resources/list": minute, "resources/templates/list": undefined }
      })
      const connection = yield* McpClient.connect({ url: srv.url })
      // The discovery's listing was kept: listToolsWith (mode use) asks nothing; listTools lists again.
      expect((yield* connection.listToolsWith()).map((t) => t.name)).toEqual(["echo-1"])
      expect(srv.count("tools/list")).toBe(1)
      yield* connection.listTools
      expect(srv.count("tools/list")).toBe(2)
      yield* connection.listResources()
      yield* connection.listResources()
      expect(srv.count("resources/list")).toBe(1)
      yield* connection.listPrompts()
      yield* connection.listPrompts()
      expect(srv.count("prompts/list")).toBe(2)
      yield* connection.listResourceTemplates()
      yield* connection.listResourceTemplates()
      expect(srv.count("resources/templates/list")).toBe(2)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("refresh asks the server and keeps the answer; bypass asks and keeps nothing", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute) })
      const connection = yield* McpClient.connect({ url: srv.url })
      expect(text(yield* connection.readResource("test://a"))).toBe("test://a v1")
      srv.script.version = 2
      expect(text(yield* connection.readResource("test://a", { cache: "bypass" }))).toBe("test://a v2")
      // bypass kept nothing: the entry of v1 is still the answer.
      expect(text(yield* connection.readResource("test://a"))).toBe("test://a v1")
      expect(text(yield* connection.readResource("test://a", { cache: "refresh" }))).toBe("test://a v2")
      srv.script.version = 3
      expect(text(yield* connection.readResource("test://a"))).toBe("test://a v2")
      expect(srv.count("resources/read")).toBe(3)
      // Tools, the same way.
      srv.script.version = 4
      expect((yield* connection.listToolsWith({ cache: "refresh" })).map((t) => t.name)).toEqual(["echo-4"])
      expect(connection.tools.map((t) => t.name)).toEqual(["echo-4"])
      expect((yield* connection.listToolsWith({ cache: "use" })).map((t) => t.name)).toEqual(["echo-4"])
      expect(srv.count("tools/list")).toBe(2)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a mode that is not one is refused before any I/O", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute) })
      const connection = yield* McpClient.connect({ url: srv.url })
      const refused = yield* Effect.flip(connection.readResource("test://a", { cache: "sometimes" as never }))
      expect(refused).toMatchObject({ _tag: "InvalidOption", option: "cache", outcome: "not-sent" })
      const listing = yield* Effect.flip(connection.listResources({ cache: 1 as never }))
      expect(listing).toMatchObject({ _tag: "InvalidOption", option: "cache" })
      const tools = yield* Effect.flip(connection.listToolsWith({ cache: "" as never }))
      expect(tools).toMatchObject({ _tag: "InvalidOption", option: "cache", stage: "list-tools" })
      expect(srv.count("resources/read") + srv.count("resources/list")).toBe(0)
      expect(srv.count("tools/list")).toBe(1)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("private entries serve only their credential; public ones every connection of the shared cache", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({
        hints: { "resources/read": { ttlMs: 60_000, cacheScope: "private" }, "resources/list": minute, "tools/list": minute }
      })
      const alice = yield* McpClient.connect({ url: srv.url, headers: { authorization: "Bearer alice-token-0001" } })
      const bob = yield* McpClient.connect({ url: srv.url, headers: { authorization: "Bearer bob-token-0002" } })
      // Bob's discovery listed nothing: the public tool listing of Alice's was his answer.
      expect(srv.count("tools/list")).toBe(1)
      expect(bob.discovery.filter((o) => o.stage === "list-tools")).toMatchObject([{ bytes: 0, outcome: "ok", cached: true }])
      yield* alice.readResource("test://a")
      yield* alice.readResource("test://a")
      expect(srv.count("resources/read", "Bearer alice-token-0001")).toBe(1)
      // Another credential never gets Alice's private answer: Bob's read reaches the server.
      yield* bob.readResource("test://a")
      expect(srv.count("resources/read", "Bearer bob-token-0002")).toBe(1)
      yield* bob.readResource("test://a")
      expect(srv.count("resources/read")).toBe(2)
      // A public listing is one answer for both.
      yield* alice.listResources()
      yield* bob.listResources()
      expect(srv.count("resources/list")).toBe(1)
      // A third connection, same credential as Alice: her private entry serves it.
      const again = yield* McpClient.connect({ url: srv.url, headers: { authorization: "Bearer alice-token-0001" } })
      yield* again.readResource("test://a")
      expect(srv.count("resources/read")).toBe(2)
      // The cache holds fingerprints, never the credential.
      const cache = yield* McpCache.McpCache
      expect(JSON.stringify(yield* cache.stats)).not.toContain("alice")
    }).pipe(Effect.provide(Layer.merge(McpCache.layer(), FetchHttpClient.layer))))

  it.scoped("generated: whatever hints a server gives (any ttlMs, scope, or none), no answer for one credential reaches another", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: { "tools/list": minute } })
      const cache = yield* McpCache.make({ maxEntries: 16 })
      const tokens = ["Bearer alice-0000001", "Bearer bob-00000002", undefined] as const
      const connections = yield* Effect.forEach(tokens, (token) =>
        McpClient.connect({ url: srv.url, headers: token === undefined ? {} : { authorization: token } }).pipe(
          Effect.provideService(McpCache.McpCache, cache)
        ))
      const hint = FastCheck.oneof(
        FastCheck.constant(undefined),
        FastCheck.record({
          ttlMs: FastCheck.oneof(FastCheck.integer({ min: -5, max: 120_000 }), FastCheck.constant(Number.MAX_SAFE_INTEGER), FastCheck.double()),
          cacheScope: FastCheck.constantFrom("public", "private", "PRIVATE", "")
        }, { requiredKeys: [] })
      )
      const step = FastCheck.record({
        who: FastCheck.integer({ min: 0, max: 2 }),
        uri: FastCheck.constantFrom("test://x", "test://y", "test://z"),
        hint,
        wait: FastCheck.integer({ min: 0, max: 70_000 })
      })
      const cases = FastCheck.sample(FastCheck.array(step, { minLength: 5, maxLength: 25 }), { numRuns: 15, seed: 2549 })
      let reused = 0
      for (const steps of cases) {
        yield* cache.clear
        for (const { hint: given, uri, wait, who } of steps) {
          srv.script.readHint = () =>
            given === undefined ? {} : given
          const got = text(yield* connections[who]!.readResource(uri))
          const [, fetch, fetchedFor] = /^#(\d+) for (.*)$/.exec(got)!
          const served = srv.script.fetched[Number(fetch)]!
          // An answer fetched for another credential was served by the cache: only a public one may be.
          if (fetchedFor !== (tokens[who] ?? "anonymous")) {
            expect(served, `${uri} for ${tokens[who]}, fetched for ${fetchedFor}`).toMatchObject({ cacheScope: "public" })
            reused++
          }
          expect((yield* cache.stats).entries).toBeLessThanOrEqual(16)
          yield* TestClock.adjust(wait)
        }
      }
      // The generated cases did share public answers (else the check above proved nothing).
      expect(reused).toBeGreaterThan(0)
      yield* cache.clear
      srv.script.readHint = () => ({ ttlMs: 60_000, cacheScope: "private" })
      const alice = text(yield* connections[0]!.readResource("test://p"))
      const bob = text(yield* connections[1]!.readResource("test://p"))
      expect([alice.endsWith("alice-0000001"), bob.endsWith("bob-00000002")]).toEqual([true, true])
      expect(text(yield* connections[0]!.readResource("test://p"))).toBe(alice)
    }).pipe(Effect.provide(FetchHttpClient.layer)), 60_000)

  it.scoped("connections without a shared cache share nothing", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute) })
      const first = yield* McpClient.connect({ url: srv.url })
      const second = yield* McpClient.connect({ url: srv.url })
      yield* first.readResource("test://a")
      yield* second.readResource("test://a")
      expect(srv.count("resources/read")).toBe(2)
      expect(srv.count("tools/list")).toBe(2)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("an answer that took input_required rounds is never kept", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute), readRound: true })
      const connection = yield* McpClient.connect({ url: srv.url })
      yield* connection.readResource("test://a")
      yield* connection.readResource("test://a")
      // Two reads, each of two rounds.
      expect(srv.count("resources/read")).toBe(4)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("the server's notifications evict what they name, in every connection of its partition", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute) })
      const connection = yield* McpClient.connect({ url: srv.url, policy: { relistDelay: 1 } })
      const other = yield* McpClient.connect({ url: srv.url })
      yield* Effect.promise(async () => {
        while (srv.script.streams.length < 2) await new Promise((resolve) => setTimeout(resolve, 5))
      })
      yield* connection.readResource("test://a")
      yield* connection.readResource("test://b")
      yield* connection.listResources()
      yield* connection.listPrompts()
      const cache = yield* McpCache.McpCache
      const before = yield* cache.stats
      // An update names its URI: that read and the resource listing go, nothing else.
      srv.script.version = 2
      srv.notify("notifications/resources/updated", { uri: "test://a" })
      yield* Effect.promise(async () => {
        while ((await Effect.runPromise(cache.stats)).entries > before.entries - 2) await new Promise((resolve) => setTimeout(resolve, 5))
      })
      expect(text(yield* other.readResource("test://a"))).toBe("test://a v2")
      expect(text(yield* other.readResource("test://b"))).toBe("test://b v1")
      expect((yield* other.listPrompts()).map((p) => p.name)).toEqual(["p-1"])
      // A list change: the listing of its kind.
      srv.notify("notifications/prompts/list_changed")
      yield* Effect.promise(async () => {
        while ((await Effect.runPromise(cache.stats)).entries > before.entries - 2) await new Promise((resolve) => setTimeout(resolve, 5))
      })
      expect((yield* other.listPrompts()).map((p) => p.name)).toEqual(["p-2"])
      // Tools: evicted at once, and listed again (asking the server) by the connection's relisting.
      const listed = srv.count("tools/list")
      srv.notify("notifications/tools/list_changed")
      // The relisting waits `relistDelay` on the test's clock: moved on a millisecond at a time.
      for (let i = 0; i < 1_000 && connection.tools[0]?.name !== "echo-2"; i++) {
        yield* TestClock.adjust(1)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
      expect(connection.tools.map((t) => t.name)).toEqual(["echo-2"])
      expect(srv.count("tools/list")).toBe(listed + 1)
      // The relisting kept its answer: the other connection's listing in mode use is that one.
      expect((yield* other.listToolsWith()).map((t) => t.name)).toEqual(["echo-2"])
      expect(srv.count("tools/list")).toBe(listed + 1)
    }).pipe(Effect.provide(Layer.merge(McpCache.layer(), FetchHttpClient.layer))))

  it.scoped("McpCache.evict removes a kind or a URI everywhere", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute) })
      const connection = yield* McpClient.connect({ url: srv.url })
      const cache = yield* McpCache.McpCache
      yield* connection.readResource("test://a")
      yield* connection.listPrompts()
      yield* cache.evict({ uri: "test://a" })
      yield* connection.readResource("test://a")
      yield* connection.listPrompts()
      expect([srv.count("resources/read"), srv.count("prompts/list")]).toEqual([2, 1])
      yield* cache.evict("prompts")
      yield* connection.listPrompts()
      expect(srv.count("prompts/list")).toBe(2)
      yield* cache.clear
      expect(yield* cache.stats).toMatchObject({ entries: 0, bytes: 0, origins: 0 })
    }).pipe(Effect.provide(Layer.merge(McpCache.layer(), FetchHttpClient.layer))))

  it.scoped("bounded: a huge ttlMs is cut to maxTtl, entries past maxEntries and answers past a quarter of maxBytes go", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything({ ttlMs: Number.MAX_SAFE_INTEGER, cacheScope: "public" }) })
      const cache = yield* McpCache.make({ maxTtl: "1 minute", maxEntries: 4, maxBytes: 8_192 })
      const connection = yield* McpClient.connect({ url: srv.url }).pipe(Effect.provideService(McpCache.McpCache, cache))
      yield* connection.readResource("test://a")
      yield* TestClock.adjust("1 minute")
      yield* connection.readResource("test://a")
      expect(srv.count("resources/read")).toBe(2)
      // Many URIs: never more than maxEntries kept, the least recently used first out.
      for (let i = 0; i < 50; i++) yield* connection.readResource(`test://many/${i}`)
      expect((yield* cache.stats).entries).toBe(4)
      yield* connection.readResource("test://many/49")
      yield* connection.readResource("test://many/0")
      expect(srv.count("resources/read")).toBe(2 + 50 + 1)
      // An answer larger than a quarter of maxBytes is not kept.
      srv.script.readPad = 4_096
      yield* connection.readResource("test://big")
      yield* connection.readResource("test://big")
      expect(srv.count("resources/read")).toBe(2 + 50 + 1 + 2)
      expect((yield* cache.stats).bytes).toBeLessThanOrEqual(8_192)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("its bounds are validated like the policy", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(McpCache.make({ maxEntries: 0 }))).toMatchObject({ _tag: "InvalidOption", option: "cache.maxEntries" })
      expect(yield* Effect.flip(McpCache.make({ maxBytes: 1.5 }))).toMatchObject({ option: "cache.maxBytes", reason: "not-integer" })
      expect(yield* Effect.flip(McpCache.make({ maxTtl: Infinity }))).toMatchObject({ option: "cache.maxTtl", reason: "not-finite" })
      expect(() => PromiseApi.createCache({ maxOrigins: -1 })).toThrow(expect.objectContaining({ option: "cache.maxOrigins" }))
    }))

  it.scopedLive("the Promise API: a cache shared by createCache, and the per-call mode", () =>
    Effect.gen(function*() {
      const srv = yield* cachingServer({ hints: everything(minute) })
      const cache = PromiseApi.createCache()
      const first = yield* Effect.promise(() => PromiseApi.connect({ url: srv.url, cache }))
      const second = yield* Effect.promise(() => PromiseApi.connect({ url: srv.url, cache }))
      yield* Effect.promise(() => first.readResource("test://a"))
      yield* Effect.promise(() => second.readResource("test://a"))
      expect(srv.count("resources/read")).toBe(1)
      yield* Effect.promise(() => second.readResource("test://a", { cache: "refresh" }))
      yield* Effect.promise(() => second.listTools({ cache: "bypass" }))
      expect([srv.count("resources/read"), srv.count("tools/list")]).toEqual([2, 2])
      expect(cache.stats()).toMatchObject({ hits: 2 })
      cache.evict("read")
      yield* Effect.promise(() => first.readResource("test://a"))
      expect(srv.count("resources/read")).toBe(3)
      yield* Effect.promise(() => Promise.all([first.close(), second.close()]))
    }))
})

describe("a connection's cache identity (internal/cacheService.ts)", () => {
  it.effect("its headers are written once; the identity follows the credential of the moment, fingerprinted once per change", () =>
    Effect.gen(function*() {
      const internals = CacheService.makeInternals({ ...McpCache.defaults })
      const materials: Array<string> = []
      const counted: CacheService.Internals = {
        ...internals,
        fingerprint: (material) => Effect.zipRight(Effect.sync(() => materials.push(material)), internals.fingerprint(material))
      }
      let token = "alice-token"
      const alice = yield* CacheService.forConnection(counted, "http\u0000https://example.com/mcp", "[]", () => token)
      const first = yield* alice.identity
      expect(yield* alice.identity).toBe(first)
      // The origin, then one identity: the same credential asks for no new fingerprint.
      expect(materials).toHaveLength(2)
      token = "refreshed-token"
      const refreshed = yield* alice.identity
      expect(refreshed).not.toBe(first)
      expect(materials).toHaveLength(3)
      // Another connection of the same headers and another credential never shares the identity;
      // with the same credential, it does.
      const bob = yield* CacheService.forConnection(counted, "http\u0000https://example.com/mcp", "[]", () => "bob-token")
      expect([first, refreshed]).not.toContain(yield* bob.identity)
      const same = yield* CacheService.forConnection(counted, "http\u0000https://example.com/mcp", "[]", () => "refreshed-token")
      expect(yield* same.identity).toBe(refreshed)
      // Without a credential (stdio), the context alone.
      const child = yield* CacheService.forConnection(counted, "stdio", "")
      expect(yield* child.identity).toBe(yield* child.identity)
    }))
})

describe("the response cache and OAuth", () => {
  it.scopedLive("two OAuth connections (two tokens) sharing one McpCache never serve each other's private reads", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      // Each read answers who asked (its bearer token), privately.
      const srv = yield* cachingServer({ readHint: () => ({ ttlMs: 60_000, cacheScope: "private" }), protectedBy: oauth.issuer })
      const user = consentingUser(oauth)
      // Each its own token store: each its own token.
      const connect = McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(
        Effect.provide(Layer.merge(user.layer, Authorization.layerMemoryTokenStore))
      )
      const alice = yield* connect
      const bob = yield* connect
      const reads = () => srv.server.received.filter((r: RawRequest) => r.rpcMethod === "resources/read").map((r) => String(r.headers["authorization"]))
      const aliceRead = text(yield* alice.readResource("test://a"))
      expect(text(yield* alice.readResource("test://a"))).toBe(aliceRead)
      expect(reads()).toHaveLength(1)
      const bobRead = text(yield* bob.readResource("test://a"))
      expect(text(yield* bob.readResource("test://a"))).toBe(bobRead)
      const [aliceToken, bobToken] = reads()
      expect(reads()).toHaveLength(2)
      expect(aliceToken).toMatch(/^Bearer ./)
      expect(bobToken).not.toBe(aliceToken)
      expect(aliceRead).toBe(`#0 for ${aliceToken}`)
      expect(bobRead).toBe(`#1 for ${bobToken}`)
    }).pipe(Effect.provide(Layer.merge(McpCache.layer(), FetchHttpClient.layer))))
})
