/**
 * The catalog over `McpServers` (docs/DESIGN.md, "Catalog"), against real loopback servers of
 * the testkit (Streamable HTTP in the 2025 era and in 2026-07-28): one merged list of three
 * servers named `server__tool`, a change one server announces followed by the merged list, calls
 * routed by catalog name under each server's own policy and headers, and the refusals that send
 * nothing (blocked, conflicted, unknown), proven by the servers' own counters. The servers file's
 * catalog fields, the layer and the Promise API too.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import type * as Testkit from "@phasebound/testkit"
import { Context, Effect, Exit, Fiber, FiberRef, Layer, Option, Redacted, Scope, Stream, TestClock } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Authorization, McpCatalog, McpServers, PhasePolicy, ServersFile } from "../../src/index.js"
import * as Promise_ from "../../src/promise.js"
import { eventually, server } from "../support/harness.js"
import { everythingReceivedBy, oauthServer, protectedServer } from "../support/oauth.js"

const TOKEN = "catalog-token-CANARY-5e21"

const commandExecutor = NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer))
const platform = Layer.mergeAll(FetchHttpClient.layer, commandExecutor, NodeFileSystem.layer, NodePath.layer, Authorization.layerDefaults)

const calls = (srv: Testkit.TestServer) => srv.rpcCalls("tools/call")

/** The servers' service in the test's scope, and a catalog over it. */
const catalogOf = (options: McpServers.Options, catalog?: McpCatalog.Options) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const context = yield* Layer.buildWithScope(McpServers.layer(options).pipe(Layer.provide(platform)), scope)
    const servers = Context.get(context, McpServers.McpServers)
    return { servers, catalog: yield* McpCatalog.fromServers(servers, catalog) }
  })

const namesOf = (tools: ReadonlyArray<McpCatalog.CatalogTool>) => tools.map((tool) => tool.name)

const tempFile = (content: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "phasebound-catalog-"))
      const file = join(dir, "mcp.json")
      writeFileSync(file, content)
      return { dir, file }
    }),
    ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map(({ file }) => file))

describe.concurrent("McpCatalog", () => {
  it.scopedLive("three servers, one list: server__tool names, each tool as its server lists it; calls routed to the owner, once", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server({ era: "stateless" })
      const c = yield* server({ extraTools: 2 })
      const { catalog } = yield* catalogOf({ servers: { a: { url: a.url }, b: { url: b.url }, c: { url: c.url } } })
      const tools = yield* catalog.listTools
      const own = (srv: string) => tools.filter((tool) => tool.server === srv).map((tool) => tool.tool.name)
      expect(own("a")).toContain("add")
      expect(own("c")).toEqual(expect.arrayContaining(["add", "tool-0", "tool-1"]))
      for (const tool of tools) expect(tool.name).toBe(`${tool.server}__${tool.tool.name}`)
      expect(namesOf(tools)).toContain("b__add")
      const result = yield* catalog.callTool("b__add", { a: 2, b: 3 })
      expect(result.content[0]).toMatchObject({ type: "text", text: "5" })
      expect([calls(a), calls(b), calls(c)]).toEqual([0, 1, 0])
      yield* catalog.callTool("c__increment", {})
      expect(c.counter()).toBe(1)
      expect([calls(a), calls(b), calls(c)]).toEqual([0, 1, 1])
      const listing = yield* catalog.listing
      expect(listing.conflicts).toEqual([])
    }))

  it.scopedLive("a blocked name known from its prefix is refused with no connection made; one known only from a listing sends no tools/call", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server()
      const { catalog } = yield* catalogOf(
        { servers: { a: { url: a.url }, b: { url: b.url } } },
        { servers: { a: { blockTools: ["incr*"] }, b: { allowTools: ["add", "echo"] } } }
      )
      const blocked = yield* Effect.flip(catalog.callTool("a__increment", {}))
      expect(blocked).toMatchObject({ _tag: "InvalidOption", option: "tool", reason: "tool-blocked", outcome: "not-sent", retryable: false })
      const notAllowed = yield* Effect.flip(catalog.callTool("b__increment", {}))
      expect(notAllowed).toMatchObject({ _tag: "InvalidOption", reason: "tool-blocked" })
      // Nothing at all reached either server: not even a discovery.
      expect([a.requests.length, b.requests.length]).toEqual([0, 0])
      const unknown = yield* Effect.flip(catalog.callTool("nobody__add", {}))
      expect(unknown).toMatchObject({ _tag: "InvalidOption", reason: "unknown-tool", outcome: "not-sent" })
      expect([a.requests.length, b.requests.length]).toEqual([0, 0])
      // A name of a server's prefix whose tool it does not list: refused after the listing.
      const missing = yield* Effect.flip(catalog.callTool("a__no_such_tool", {}))
      expect(missing).toMatchObject({ _tag: "InvalidOption", reason: "unknown-tool" })
      expect(namesOf(yield* catalog.listTools)).toEqual(expect.arrayContaining(["a__add", "b__add", "b__echo"]))
      expect(namesOf(yield* catalog.listTools)).not.toContain("a__increment")
      expect(namesOf(yield* catalog.listTools).filter((name) => name.startsWith("b__")).sort()).toEqual(["b__add", "b__echo"])
      // The counters, read after a later call on each connection answered: none of the refused ones arrived.
      yield* catalog.callTool("a__add", { a: 1, b: 1 })
      yield* catalog.callTool("b__add", { a: 1, b: 1 })
      expect([calls(a), calls(b)]).toEqual([1, 1])
      expect([a.counter(), b.counter()]).toEqual([0, 0])
    }))

  it.scopedLive("a naming function: a blocked tool is refused from the listing, and no tools/call is sent", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const { catalog } = yield* catalogOf({ servers: { a: { url: a.url } } }, {
        prefix: (srv, tool) => `${tool}_at_${srv}`,
        servers: { a: { blockTools: ["increment"] } }
      })
      expect(namesOf(yield* catalog.listTools)).toContain("add_at_a")
      const blocked = yield* Effect.flip(catalog.callTool("increment_at_a", {}))
      expect(blocked).toMatchObject({ _tag: "InvalidOption", reason: "tool-blocked", outcome: "not-sent" })
      yield* catalog.callTool("add_at_a", { a: 1, b: 1 })
      expect(calls(a)).toBe(1)
      expect(a.counter()).toBe(0)
    }))

  it.scopedLive("two servers' tools of one name (prefix false): both left out and reported; calling it sends nothing to either", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server({ era: "stateless" })
      const { catalog } = yield* catalogOf({ servers: { a: { url: a.url }, b: { url: b.url } } }, { prefix: false, servers: { b: { prefix: "beta" } } })
      const listing = yield* catalog.listing
      expect(namesOf(listing.tools)).toContain("beta__add")
      const both = yield* catalogOf({ servers: { a: { url: a.url }, b: { url: b.url } } }, { prefix: false })
      const conflicted = yield* both.catalog.listing
      expect(namesOf(conflicted.tools)).not.toContain("add")
      expect(conflicted.conflicts).toContainEqual({ name: "add", tools: [{ server: "a", tool: "add" }, { server: "b", tool: "add" }] })
      const refused = yield* Effect.flip(both.catalog.callTool("increment", {}))
      expect(refused).toMatchObject({ _tag: "InvalidOption", option: "tool", reason: "tool-conflict", outcome: "not-sent" })
      expect([calls(a), calls(b), a.counter(), b.counter()]).toEqual([0, 0, 0, 0])
    }))

  it.scopedLive("the merged list follows one server's tools/list_changed; the others' tools stay as they were", () =>
    Effect.gen(function*() {
      const a = yield* server({ features: true })
      const b = yield* server({ era: "stateless" })
      const { catalog, servers } = yield* catalogOf({
        servers: { a: { url: a.url, policy: { relistDelay: 20 } }, b: { url: b.url } }
      }, { servers: { a: { blockTools: ["added_2"] } } })
      const lists: Array<ReadonlyArray<string>> = []
      yield* Effect.forkScoped(Stream.runForEach(catalog.toolList.changes, (tools) => Effect.sync(() => void lists.push(namesOf(tools)))))
      yield* eventually(() => lists.length === 1, 10_000)
      expect(lists[0]).not.toContain("a__added_1")
      expect(lists[0]).toContain("b__add")
      yield* Effect.promise(() => a.waitFor(() => a.listChangedListeners() > 0, 10_000))
      a.changeTools(1)
      yield* eventually(() => lists.length === 2, 10_000)
      expect(lists[1]).toContain("a__added_1")
      expect(lists[1]!.filter((name) => name.startsWith("b__"))).toEqual(lists[0]!.filter((name) => name.startsWith("b__")))
      expect(namesOf(yield* catalog.toolList.get)).toEqual(lists[1])
      // A second change adds only a blocked tool: the merged list is the same, so nothing new is emitted;
      // a third adds one that is listed, and only that list follows.
      const connectionA = yield* servers.connection("a")
      a.changeTools(1)
      yield* eventually(() => connectionA.tools.some((tool) => tool.name === "added_2"), 10_000)
      a.changeTools(1)
      yield* eventually(() => lists.length === 3, 10_000)
      expect(lists[2]).toContain("a__added_3")
      expect(lists[2]).not.toContain("a__added_2")
      expect(lists).toHaveLength(3)
    }))

  it.scoped("each server's own policy holds through the catalog: a stalled call fails at that server's call deadline, not the other's", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server({ era: "stateless" })
      const { catalog, servers } = yield* catalogOf({
        policy: { call: { timeout: "30 seconds" } },
        servers: { a: { url: a.url, policy: { call: { timeout: "2 seconds" } } }, b: { url: b.url, headers: { authorization: `Bearer ${TOKEN}` } } }
      })
      yield* catalog.listTools
      expect((yield* servers.connection("b")).policy.call.timeoutMs).toBe(30_000)
      a.script({ on: "tools/call", kind: "never-answer" })
      const call = yield* Effect.fork(Effect.flip(catalog.callTool("a__add", { a: 1, b: 1 })))
      yield* eventually(() => calls(a) === 1, 10_000)
      yield* TestClock.adjust("1999 millis")
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(call))).toBe(true)
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(call)
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", phase: "call", limits: { timeoutMs: 2_000 } })
      // b's own header went to b only.
      yield* catalog.callTool("b__add", { a: 1, b: 1 })
      expect(b.requests.find((r) => r.rpcMethod === "tools/call")?.headers["authorization"]).toBe(`Bearer ${TOKEN}`)
      expect(a.requests.every((r) => r.headers["authorization"] === undefined)).toBe(true)
      expect(calls(a)).toBe(1)
    }))

  it.scopedLive("a bad option is refused before any I/O", () =>
    Effect.gen(function*() {
      const c = yield* server()
      const refused = yield* Effect.flip(catalogOf({ servers: { c: { url: c.url } } }, { servers: { c: { blockTools: ["[bad"] } } }))
      expect(refused).toMatchObject({ _tag: "InvalidOption", option: "blockTools", outcome: "not-sent" })
      const unknownServer = yield* Effect.flip(catalogOf({ servers: { c: { url: c.url } } }, { servers: { typo: { prefix: false } } }))
      expect(unknownServer).toMatchObject({ _tag: "InvalidOption", option: "catalog.servers" })
      expect(c.requests.length).toBe(0)
    }))

  it.scopedLive("the layer over McpServers: the Tag's service", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const live = McpCatalog.layer({ servers: { a: { prefix: "alpha" } } }).pipe(
        Layer.provide(McpServers.layer({ servers: { a: { url: a.url } } }).pipe(Layer.provide(platform)))
      )
      const result = yield* Effect.flatMap(McpCatalog.McpCatalog, (catalog) => catalog.callTool("alpha__add", { a: 4, b: 5 })).pipe(Effect.provide(live))
      expect(result.content[0]).toMatchObject({ text: "9" })
    }))
})

/** Moves the test clock a second at a time (a failed server's backoff is 1 s) until `done` holds. */
const advanceUntil = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !done(); i++) {
      yield* TestClock.adjust("1 second")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
    expect(done()).toBe(true)
  })

describe.concurrent("McpCatalog, a server that fails", () => {
  it.scoped("a stalled server holds back no other: a call connects only the servers that could have its name; the listing names the failed server", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server()
      b.script({ on: "initialize", kind: "never-answer", times: Infinity })
      const { catalog } = yield* catalogOf({
        servers: {
          a: { url: a.url },
          b: { url: b.url, transport: "streamable-http", revisions: ["2025-11-25"], policy: { discovery: { timeout: "3 seconds" } } }
        }
      })
      // Under the test clock a wait for b's deadline would never end: a's call does not wait for b.
      const result = yield* catalog.callTool("a__echo", { text: "from a" })
      expect(result.content[0]).toMatchObject({ type: "text", text: "from a" })
      expect(calls(a)).toBe(1)
      expect(b.requests.length).toBe(0)
      // The first listing waits for b's first discovery (its deadline), then gives a's tools and b's failure.
      const listing = yield* Effect.fork(catalog.listing)
      yield* eventually(() => b.rpcCalls("initialize") === 1, 10_000)
      yield* TestClock.adjust("3 seconds")
      const merged = yield* Fiber.join(listing)
      expect(namesOf(merged.tools)).toEqual(expect.arrayContaining(["a__add", "a__echo", "a__increment"]))
      expect(merged.tools.every((tool) => tool.server === "a")).toBe(true)
      expect(merged.failures).toHaveLength(1)
      expect(merged.failures[0]).toMatchObject({ server: "b", error: { _tag: "DeadlineExceeded", stage: "initialize", phase: "discovery", server: "b" } })
      expect(merged.unresolved).toEqual([])
      expect(JSON.stringify(merged.failures)).not.toContain(b.url)
      expect(JSON.stringify(merged.failures)).not.toContain(String(b.port))
      // A call to b's tool fails with b's own error, naming it; within its backoff nothing is sent again.
      const failure = yield* Effect.flip(catalog.callTool("b__add", { a: 1, b: 1 }))
      expect(failure).toMatchObject({ _tag: "DeadlineExceeded", server: "b" })
      expect(failure.message).toContain("server b")
      expect(b.rpcCalls("initialize")).toBe(1)
      // Nor does the next listing wait for b.
      const again = yield* catalog.listing
      expect(again.failures.map((entry) => entry.server)).toEqual(["b"])
      expect(namesOf(again.tools)).toEqual(namesOf(merged.tools))
      expect(b.rpcCalls("initialize")).toBe(1)
    }))

  it.scoped("a retry in the background belongs to the servers' scope: closing it during the retry ends the retry's fibers, none left as a daemon", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server()
      b.script({ on: "initialize", kind: "never-answer", times: Infinity })
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        McpServers.layer({
          servers: {
            a: { url: a.url },
            b: { url: b.url, transport: "streamable-http", revisions: ["2025-11-25"], policy: { discovery: { timeout: "3 seconds" } } }
          }
        }).pipe(Layer.provide(platform)),
        scope
      )
      const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
      const first = yield* Effect.fork(catalog.listing)
      yield* eventually(() => b.rpcCalls("initialize") === 1, 10_000)
      yield* TestClock.adjust("3 seconds")
      expect((yield* Fiber.join(first)).failures.map((failure) => failure.server)).toEqual(["b"])
      // Past b's backoff, a listing answers at once and tries b again in the background; every
      // fiber of that retry carries the marker.
      yield* TestClock.adjust("1 second")
      const marker = FiberRef.unsafeMake<boolean>(false)
      const marked = Effect.map(Fiber.roots, (roots) => roots.filter((fiber) => fiber.getFiberRef(marker)))
      expect((yield* Effect.locally(catalog.listing, marker, true)).failures.map((failure) => failure.server)).toEqual(["b"])
      yield* eventually(() => b.rpcCalls("initialize") === 2, 10_000)
      expect((yield* marked).length).toBeGreaterThan(0)
      yield* Scope.close(scope, Exit.void)
      expect(yield* marked).toEqual([])
    }))

  it.scopedLive("a name a failed server could also give is held back, never offered; calling it fails with that server's error, nothing sent", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const { catalog } = yield* catalogOf(
        { servers: { a: { url: a.url }, gone: { url: "http://127.0.0.1:1/mcp" } } },
        { prefix: false, servers: { gone: { blockTools: ["incr*"] } } }
      )
      const listing = yield* catalog.listing
      // `gone` could have `add` and `echo` (no prefix, not blocked there), but never `increment`.
      expect(namesOf(listing.tools)).toEqual(["increment"])
      expect(listing.unresolved).toEqual(expect.arrayContaining([
        { name: "add", server: "a", tool: "add", failed: ["gone"] },
        { name: "echo", server: "a", tool: "echo", failed: ["gone"] }
      ]))
      expect(listing.failures).toMatchObject([{ server: "gone", error: { _tag: "TransportFailure", server: "gone" } }])
      const refused = yield* Effect.flip(catalog.callTool("add", { a: 1, b: 2 }))
      expect(refused).toMatchObject({ _tag: "TransportFailure", server: "gone" })
      expect(calls(a)).toBe(0)
      expect(yield* Effect.flip(catalog.resolve("add"))).toMatchObject({ _tag: "TransportFailure", server: "gone" })
      expect(yield* catalog.resolve("increment")).toMatchObject({ name: "increment", server: "a", tool: { name: "increment" } })
      // A name only `a` could have, and does not: unknown, whatever `gone` lists.
      expect(yield* catalog.resolve("increment_twice")).toBeUndefined()
      expect(yield* Effect.flip(catalog.callTool("increment_twice", {}))).toMatchObject({ _tag: "InvalidOption", reason: "unknown-tool" })
      yield* catalog.callTool("increment", {})
      expect([calls(a), a.counter()]).toEqual([1, 1])
    }))

  it.scoped("the live listing survives a server that fails: it is reported, tried again after its backoff, and its tools join once it answers", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server()
      b.script({ on: "initialize", kind: "status", status: 503 })
      const { catalog } = yield* catalogOf({ servers: { a: { url: a.url }, b: { url: b.url, transport: "streamable-http", revisions: ["2025-11-25"] } } })
      const listings: Array<McpCatalog.Listing> = []
      yield* Effect.forkScoped(Stream.runForEach(catalog.listings, (listing) => Effect.sync(() => void listings.push(listing))))
      yield* eventually(() => listings.length === 1, 10_000)
      expect(listings[0]!.failures).toMatchObject([{ server: "b", error: { _tag: "UpstreamFailure", status: 503, server: "b" } }])
      expect(namesOf(listings[0]!.tools)).toContain("a__add")
      expect(namesOf(listings[0]!.tools).some((name) => name.startsWith("b__"))).toBe(false)
      yield* advanceUntil(() => listings.length === 2)
      expect(namesOf(listings[1]!.tools)).toEqual(expect.arrayContaining(["a__add", "b__add"]))
      expect(listings[1]!.failures).toEqual([])
      expect(b.rpcCalls("initialize")).toBe(2)
    }))

  it.scopedLive("a refusal carries the call budget in force (the server's own, with the call's overrides); a name too long to be a tool name is unknown, not blocked", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const { catalog } = yield* catalogOf(
        { policy: { call: { timeout: "7 seconds" } }, servers: { a: { url: a.url, policy: { call: { timeout: "2 seconds", maxBytes: 4096 } } } } },
        { servers: { a: { blockTools: ["incr*"] } } }
      )
      const blocked = yield* Effect.flip(catalog.callTool("a__increment", {}))
      expect(blocked).toMatchObject({ _tag: "InvalidOption", reason: "tool-blocked", server: "a", limits: { timeoutMs: 2_000, maxBytes: 4096 } })
      const overridden = yield* Effect.flip(catalog.callTool("a__increment", {}, { timeout: 500, idleTimeout: 100 }))
      expect(overridden.limits).toEqual({ timeoutMs: 500, maxBytes: 4096, idleTimeoutMs: 100 })
      const unknown = yield* Effect.flip(catalog.callTool("nobody__add", {}))
      expect(unknown).toMatchObject({ reason: "unknown-tool", limits: { timeoutMs: 7_000, maxBytes: PhasePolicy.defaults.maxBytes } })
      expect(unknown.server).toBeUndefined()
      const badOverride = yield* Effect.flip(catalog.callTool("a__increment", {}, { timeout: -1 }))
      expect(badOverride).toMatchObject({ _tag: "InvalidOption", option: "call.timeout", outcome: "not-sent" })
      // No list blocks it: a name past 128 characters is no tool name at all.
      for (const name of [`a__${"x".repeat(129)}`, "a__has space", ""]) {
        expect(yield* Effect.flip(catalog.callTool(name, {}))).toMatchObject({ _tag: "InvalidOption", reason: "unknown-tool", outcome: "not-sent" })
      }
      expect(a.requests.length).toBe(0)
    }))

  it.scopedLive("each server's credential goes to that server only: two static headers and an OAuth client's token", () =>
    Effect.gen(function*() {
      const [keyA, keyB, clientSecret] = ["catalog-key-A-CANARY-71c2", "catalog-key-B-CANARY-93d4", "catalog-client-secret-CANARY-5a8e"]
      const oauth = yield* oauthServer({ clients: [{ clientId: "reporting", clientSecret, grantTypes: ["client_credentials"] }] })
      const c = yield* protectedServer(oauth)
      const a = yield* server()
      const b = yield* server({ era: "stateless" })
      const { catalog } = yield* catalogOf({
        servers: {
          a: { url: a.url, headers: { "x-api-key": keyA } },
          b: { url: b.url, headers: { authorization: `Bearer ${keyB}` } },
          c: { url: c.url, auth: { grant: "client_credentials", clientId: "reporting", clientSecret: Redacted.make(clientSecret) } }
        }
      })
      const listing = yield* catalog.listing
      expect(listing.failures).toEqual([])
      expect(namesOf(listing.tools)).toEqual(expect.arrayContaining(["a__add", "b__add", "c__add"]))
      for (const name of ["a__add", "b__add", "c__add"]) yield* catalog.callTool(name, { a: 1, b: 2 })
      expect([calls(a), calls(b), calls(c)]).toEqual([1, 1, 1])
      const [issued] = oauth.issuedTokens()
      const token = issued!.accessToken
      const received = (srv: Testkit.TestServer) => JSON.stringify(srv.requests.map((request) => request.headers))
      const credentials = { a: keyA, b: keyB, c: token, oauth: clientSecret }
      const expectOnly = (text: string, own: keyof typeof credentials | undefined) => {
        for (const [owner, credential] of Object.entries(credentials)) {
          if (owner === own) expect(text).toContain(credential)
          else expect(text).not.toContain(credential)
        }
      }
      expectOnly(received(a), "a")
      expectOnly(received(b), "b")
      expectOnly(received(c), "c")
      // The authorization server saw its client's secret (Basic), and no server's header.
      const atAuthority = everythingReceivedBy(oauth.requests)
      expect(atAuthority).toContain(Buffer.from(`reporting:${clientSecret}`).toString("base64"))
      for (const credential of [keyA, keyB]) expect(atAuthority).not.toContain(credential)
    }))
})

describe.concurrent("McpCatalog from the servers file", () => {
  it.scopedLive("prefix, allowTools and blockTools in the entries; the catalog's options laid over them, field by field", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server()
      const file = yield* tempFile(JSON.stringify({
        mcpServers: {
          a: { url: a.url, prefix: "first", blockTools: ["incr*"] },
          b: { url: b.url, type: "http", prefix: false, allowTools: ["add"] }
        }
      }))
      const scope = yield* Effect.scope
      const context = yield* Layer.buildWithScope(McpServers.layerFile(file).pipe(Layer.provide(platform)), scope)
      const servers = Context.get(context, McpServers.McpServers)
      expect(servers.catalog).toEqual({ servers: { a: { prefix: "first", blockTools: ["incr*"] }, b: { prefix: false, allowTools: ["add"] } } })
      const catalog = yield* McpCatalog.fromServers(servers)
      const names = namesOf(yield* catalog.listTools)
      expect(names).toContain("first__add")
      expect(names).not.toContain("first__increment")
      expect(names.filter((name) => !name.startsWith("first__"))).toEqual(["add"])
      const over = yield* McpCatalog.fromServers(servers, { servers: { a: { prefix: "alpha" } } })
      const overNames = namesOf(yield* over.listTools)
      expect(overNames).toContain("alpha__add")
      expect(overNames).not.toContain("alpha__increment")
      const blocked = yield* Effect.flip(over.callTool("alpha__increment", {}))
      expect(blocked).toMatchObject({ reason: "tool-blocked" })
      expect(a.counter()).toBe(0)
    }))

  it("the file refuses an unknown field beside the catalog's, and a catalog field of the wrong type", () => {
    const parse = (entry: unknown) => ServersFile.parse(JSON.stringify({ mcpServers: { s: entry } }))
    expect(parse({ url: "http://127.0.0.1:1/mcp", prefix: "p", allowTools: ["a*"], blockTools: [] })._tag).toBe("Right")
    expect(parse({ command: "x", prefix: false })._tag).toBe("Right")
    expect(parse({ url: "http://127.0.0.1:1/mcp", allowTool: ["a*"] })._tag).toBe("Left")
    expect(parse({ url: "http://127.0.0.1:1/mcp", prefix: true })._tag).toBe("Left")
    expect(parse({ url: "http://127.0.0.1:1/mcp", blockTools: "a*" })._tag).toBe("Left")
  })
})

describe.concurrent("the Promise API's catalog", () => {
  it("createCatalog: lists, calls, follows changes and refuses what is blocked without sending it", async () => {
    const a = await startTestServer({ features: true })
    const b = await startTestServer({ era: "stateless" })
    const changes: Array<ReadonlyArray<string>> = []
    const catalog = await Promise_.createCatalog({
      servers: { a: { url: a.url, policy: { relistDelay: 20 } }, b: { url: b.url } },
      catalog: { servers: { b: { blockTools: ["increment"] } } },
      onToolsChanged: (tools) => changes.push(namesOf(tools))
    })
    try {
      const tools = await catalog.listTools()
      expect(namesOf(tools)).toEqual(expect.arrayContaining(["a__add", "b__add"]))
      expect(namesOf(tools)).not.toContain("b__increment")
      const result = await catalog.callTool("b__add", { a: 20, b: 22 }, { timeout: 5_000 })
      expect(result.content[0]).toMatchObject({ text: "42" })
      await expect(catalog.callTool("b__increment", {})).rejects.toMatchObject({ _tag: "InvalidOption", reason: "tool-blocked" })
      expect(b.counter()).toBe(0)
      await a.waitFor(() => a.listChangedListeners() > 0, 10_000)
      a.changeTools(1)
      await a.waitFor(() => changes.some((list) => list.includes("a__added_1")), 10_000)
      expect((await catalog.listing()).conflicts).toEqual([])
      const aborted = new AbortController()
      const reason = new Error("caller gave up")
      aborted.abort(reason)
      await expect(catalog.callTool("a__add", { a: 1, b: 1 }, { signal: aborted.signal })).rejects.toBe(reason)
    } finally {
      await catalog.close()
      await Promise.all([a.close(), b.close()])
    }
    await expect(Promise_.createCatalog({ servers: { s: { url: a.url } }, catalog: { separator: "::" } })).rejects.toMatchObject({
      _tag: "InvalidOption",
      option: "separator"
    })
  })
})

describe.concurrent("the Promise API's catalog, a server that fails", () => {
  it("onToolsChanged outlives a server's failure; onError names the server; its tools join once it answers", async () => {
    const a = await startTestServer({})
    const b = await startTestServer({})
    b.script({ on: "initialize", kind: "status", status: 503 })
    const changes: Array<ReadonlyArray<string>> = []
    const errors: Array<unknown> = []
    const catalog = await Promise_.createCatalog({
      servers: { a: { url: a.url }, b: { url: b.url, transport: "streamable-http", revisions: ["2025-11-25"] } },
      onToolsChanged: (tools) => changes.push(namesOf(tools)),
      onError: (error) => errors.push(error)
    })
    try {
      await a.waitFor(() => errors.length === 1 && changes.length === 1, 10_000)
      expect(errors[0]).toMatchObject({ _tag: "UpstreamFailure", status: 503, server: "b" })
      expect(JSON.stringify(errors[0])).not.toContain(b.url)
      expect(changes[0]).toContain("a__add")
      expect(changes[0]!.some((name) => name.startsWith("b__"))).toBe(false)
      // Tried again after its backoff (1 s): b answers now, and its tools join the list.
      await a.waitFor(() => changes.some((list) => list.includes("b__add")), 10_000)
      expect(errors).toHaveLength(1)
      expect((await catalog.listing()).failures).toEqual([])
    } finally {
      await catalog.close()
      await Promise.all([a.close(), b.close()])
    }
  })
})

const startTestServer = async (options: Testkit.TestServerOptions) => (await import("@phasebound/testkit")).startServer(options)
