/**
 * A catalog over several servers as the toolkit's source (`McpToolkit.fromCatalog`, over
 * `McpServers` and `McpCatalog` of `@phasebound/client`), against real loopback servers: the
 * toolkit offers each tool under its catalog name and routes every call to its own server; the
 * catalog's conflicts and allow/block lists decide what the model is offered; a change of
 * either server's list is followed; a server that cannot be connected holds back none of the others.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as LanguageModel from "@effect/ai/LanguageModel"
import { describe, expect, it } from "@effect/vitest"
import { McpToolkit, ToolSource } from "@phasebound/ai"
import { Authorization, McpCatalog, McpClient, McpServers } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { eventually, scriptedModel, toolCall } from "./support/scriptedModel.js"

const platform = Layer.mergeAll(
  FetchHttpClient.layer,
  NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer)),
  Authorization.layerDefaults
)

/** Two testkit servers (alpha announces list changes) and a catalog over them. */
const catalogOver = (catalog?: McpCatalog.Options) =>
  Effect.gen(function*() {
    const alpha = yield* Testkit.scoped({ features: true })
    const beta = yield* Testkit.scoped({})
    const policy = { relistDelay: "10 millis" } as const
    const context = yield* Layer.build(
      McpServers.layer({
        servers: { alpha: { url: alpha.url, revisions: ["2025-11-25"], policy }, beta: { url: beta.url, revisions: ["2025-11-25"], policy } }
      }).pipe(Layer.provide(platform))
    )
    return { alpha, beta, catalog: yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers), catalog) }
  })

describe("a catalog as the toolkit's source", () => {
  it.scopedLive("offers every tool under its catalog name and routes each call to its own server, once", () =>
    Effect.gen(function*() {
      const { alpha, beta, catalog } = yield* catalogOver()
      const model = scriptedModel((_, turn) =>
        Effect.succeed(turn === 0 ? [toolCall("1", "alpha__echo", { text: "from alpha" }), toolCall("2", "beta__echo", { text: "from beta" })] : [])
      )
      const toolkit = yield* McpToolkit.fromCatalog(catalog)
      expect(toolkit.excluded).toEqual([])
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      const names = model.seen[0]!.tools.map((tool) => tool.name)
      expect(names).toEqual((yield* catalog.listTools).map((tool) => tool.name))
      expect(names).toEqual(expect.arrayContaining(["alpha__weather", "alpha__echo", "beta__add", "beta__echo"]))
      expect(response.toolResults.map((part) => [part.name, part.isFailure, part.encodedResult])).toEqual([
        ["alpha__echo", false, { content: [{ type: "text", text: "from alpha" }] }],
        ["beta__echo", false, { content: [{ type: "text", text: "from beta" }] }]
      ])
      expect([alpha.rpcCalls("tools/call"), beta.rpcCalls("tools/call")]).toEqual([1, 1])
      // The parameters the model saw are the server's own inputSchema.
      const listed = (yield* catalog.listTools).find((tool) => tool.name === "beta__add")!
      expect(model.seen[0]!.tools.find((tool) => tool.name === "beta__add")!.parameters).toStrictEqual(listed.tool.inputSchema)
    }))

  it.scopedLive("a call looks its name up once: the tool resolved is the one called, without routing the name again", () =>
    Effect.gen(function*() {
      const { beta, catalog } = yield* catalogOver()
      const source = ToolSource.fromCatalog(catalog)
      const resolved: Array<string> = []
      let routedCalls = 0
      const counted: ToolSource.ToolSource = {
        ...source,
        resolve: (name) => Effect.suspend(() => (resolved.push(name), source.resolve!(name))),
        callTool: (name, args, options) => Effect.suspend(() => (routedCalls++, source.callTool(name, args, options)))
      }
      const model = scriptedModel((_, turn) => Effect.succeed(turn === 0 ? [toolCall("1", "beta__echo", { text: "once" })] : []))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.fromSource(counted) }).pipe(Effect.provide(model.layer))
      expect(response.toolResults[0]).toMatchObject({ isFailure: false, encodedResult: { content: [{ type: "text", text: "once" }] } })
      expect(resolved).toEqual(["beta__echo"])
      expect(routedCalls).toBe(0)
      expect(beta.rpcCalls("tools/call")).toBe(1)
    }))

  it.scopedLive("what the catalog leaves out is never offered: both sides of a conflict, a blocked tool, one outside the allow list", () =>
    Effect.gen(function*() {
      const { alpha, beta, catalog } = yield* catalogOver({
        prefix: false,
        servers: { alpha: { allowTools: ["e*", "weather"] }, beta: { blockTools: ["add"] } }
      })
      const listing = yield* catalog.listing
      expect(listing.conflicts.map((conflict) => conflict.name)).toContain("echo")
      const toolkit = yield* McpToolkit.fromCatalog(catalog)
      const offered = Object.keys(toolkit.tools)
      expect(offered).toEqual(listing.tools.map((tool) => tool.name))
      expect(offered).toContain("weather")
      expect(offered).not.toContain("echo")
      expect(offered).not.toContain("add")
      const own = (server: string) => listing.tools.filter((tool) => tool.server === server).map((tool) => tool.tool.name)
      expect(own("alpha").filter((name) => !/^e|^weather$/.test(name))).toEqual([])
      expect(own("beta").length).toBeGreaterThan(0)
      expect(own("beta")).not.toContain("add")
      expect([alpha.rpcCalls("tools/call"), beta.rpcCalls("tools/call")]).toEqual([0, 0])
    }))

  it.scopedLive("follows a change of one server's list", () =>
    Effect.gen(function*() {
      const { alpha, catalog } = yield* catalogOver()
      const source = ToolSource.fromCatalog(catalog)
      yield* source.toolList.get
      yield* eventually(() => alpha.listChangedListeners() === 1)
      const changed = yield* Effect.fork(
        Stream.runHead(Stream.filter(source.toolList.changes, (entries) => entries.some((entry) => entry.name === "alpha__added_1")))
      )
      expect(alpha.changeTools(1)).toBe(1)
      yield* Fiber.join(changed)
      const model = scriptedModel(() => Effect.succeed([toolCall("n", "alpha__added_1", { text: "new" })]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.fromCatalog(catalog) }).pipe(
        Effect.provide(model.layer)
      )
      expect(response.toolResults[0]).toMatchObject({ name: "alpha__added_1", isFailure: false, encodedResult: { content: [{ type: "text", text: "new" }] } })
    }))

  it.scopedLive("a server that cannot be connected holds back none of the others: generateText offers and calls their tools; the toolkit names it", () =>
    Effect.gen(function*() {
      const alpha = yield* Testkit.scoped({})
      const context = yield* Layer.build(
        McpServers.layer({ servers: { alpha: { url: alpha.url }, gone: { url: "http://127.0.0.1:1/mcp" } } }).pipe(Layer.provide(platform))
      )
      const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
      const model = scriptedModel(() => Effect.succeed([toolCall("1", "alpha__echo", { text: "still here" })]))
      const toolkit = yield* McpToolkit.fromCatalog(catalog)
      expect(toolkit.failures).toMatchObject([{ server: "gone", error: { _tag: "TransportFailure", phase: "discovery", server: "gone" } }])
      expect(JSON.stringify(toolkit.failures)).not.toContain("127.0.0.1:1")
      // The same value given to every generateText, as an Effect, works the same way.
      for (const given of [Effect.succeed(toolkit), McpToolkit.fromCatalog(catalog)]) {
        const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: given }).pipe(Effect.provide(model.layer))
        expect(response.toolResults.map((part) => [part.name, part.isFailure, part.encodedResult])).toEqual([
          ["alpha__echo", false, { content: [{ type: "text", text: "still here" }] }]
        ])
      }
      const offered = model.seen[0]!.tools.map((tool) => tool.name)
      expect(offered).toEqual(expect.arrayContaining(["alpha__add", "alpha__echo"]))
      expect(offered.every((name) => name.startsWith("alpha__"))).toBe(true)
      expect(alpha.rpcCalls("tools/call")).toBe(2)
    }))

  it.scoped("a server that stalls holds back the toolkit once, for its first discovery, and never a call to another (TestClock)", () =>
    Effect.gen(function*() {
      const alpha = yield* Testkit.scoped({})
      const beta = yield* Testkit.scoped({})
      beta.script({ on: "initialize", kind: "never-answer", times: Infinity })
      const context = yield* Layer.build(
        McpServers.layer({
          servers: {
            alpha: { url: alpha.url },
            beta: { url: beta.url, transport: "streamable-http", revisions: ["2025-11-25"], policy: { discovery: { timeout: "3 seconds" } } }
          }
        }).pipe(Layer.provide(platform))
      )
      const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
      // The first list waits for beta's first discovery, bounded by its deadline.
      const building = yield* Effect.fork(McpToolkit.fromCatalog(catalog))
      yield* eventually(() => beta.rpcCalls("initialize") === 1)
      yield* TestClock.adjust("3 seconds")
      const toolkit = yield* Fiber.join(building)
      expect(toolkit.failures).toMatchObject([{ server: "beta", error: { _tag: "DeadlineExceeded", stage: "initialize", server: "beta" } }])
      // Past beta's backoff: a new list and a call go on at once (under the test clock a wait would never end).
      yield* TestClock.adjust("1 second")
      const model = scriptedModel(() => Effect.succeed([toolCall("1", "alpha__echo", { text: "no wait" })]))
      for (const given of [Effect.succeed(toolkit), McpToolkit.fromCatalog(catalog)]) {
        const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: given }).pipe(Effect.provide(model.layer))
        expect(response.toolResults[0]).toMatchObject({
          name: "alpha__echo",
          isFailure: false,
          encodedResult: { content: [{ type: "text", text: "no wait" }] }
        })
      }
      expect(model.seen[1]!.tools.every((tool) => tool.name.startsWith("alpha__"))).toBe(true)
      // The new list tried beta again, in the background.
      yield* eventually(() => beta.rpcCalls("initialize") === 2)
    }))

  it.scopedLive("the effect identity the caller derives travels with a catalog's call to its own server; none is made up otherwise", () =>
    Effect.gen(function*() {
      const { alpha, beta, catalog } = yield* catalogOver()
      const calls: Array<McpToolkit.ToolCall> = []
      const toolkit = McpToolkit.fromCatalog(catalog, {
        effectIdentity: (call) => {
          calls.push(call)
          return `conversation-9/turn-2/${call.modelName}`
        }
      })
      const model = scriptedModel(() => Effect.succeed([toolCall("1", "beta__echo", { text: "x" })]))
      yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.fromCatalog(catalog) }).pipe(Effect.provide(model.layer))
      expect(calls).toEqual([{ modelName: "beta__echo", name: "beta__echo", server: "beta", arguments: { text: "x" } }])
      const identities = (srv: Testkit.TestServer) =>
        srv.requests.filter((request) => request.rpcMethod === "tools/call").map((request) => request.meta?.[McpClient.effectIdentityMetaKey])
      expect(identities(beta)).toEqual(["conversation-9/turn-2/beta__echo", undefined])
      expect(identities(alpha)).toEqual([])
    }))

  it.scopedLive("what a server echoes of its own configured header reaches the model redacted", () =>
    Effect.gen(function*() {
      const secret = "catalog-toolkit-key-CANARY-2b9f"
      const alpha = yield* Testkit.scoped({})
      const context = yield* Layer.build(
        McpServers.layer({ servers: { alpha: { url: alpha.url, headers: { "x-api-key": secret } } } }).pipe(Layer.provide(platform))
      )
      const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
      // The model asks `echo` to repeat the key (a prompt injection would do this): the server answers it.
      const model = scriptedModel((_, turn) => Effect.succeed(turn === 0 ? [toolCall("1", "alpha__echo", { text: `key=${secret}` })] : []))
      const toolkit = McpToolkit.fromCatalog(catalog)
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      expect(response.toolResults[0]).toMatchObject({ isFailure: false, encodedResult: { content: [{ type: "text", text: "key=[redacted]" }] } })
      expect(alpha.requests.find((request) => request.rpcMethod === "tools/call")?.headers["x-api-key"]).toBe(secret)
    }))
})
