/**
 * A catalog over several servers as the toolkit's source (`McpToolkit.fromCatalog`, over
 * `McpServers` and `McpCatalog` of `@phasebound/client`), against real loopback servers: the
 * toolkit offers each tool under its catalog name and routes every call to its own server; the
 * catalog's conflicts and allow/block lists decide what the model is offered; a change of
 * either server's list is followed; a server that cannot be connected is a typed failure.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as LanguageModel from "@effect/ai/LanguageModel"
import { describe, expect, it } from "@effect/vitest"
import { McpToolkit, ToolSource } from "@phasebound/ai"
import { Authorization, McpCatalog, McpServers } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
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

  it.scopedLive("a server that cannot be connected fails the toolkit with its typed error, nothing offered from a partial list", () =>
    Effect.gen(function*() {
      const alpha = yield* Testkit.scoped({})
      const context = yield* Layer.build(
        McpServers.layer({
          servers: { alpha: { url: alpha.url }, gone: { url: "http://127.0.0.1:1/mcp", policy: { discovery: { timeout: "2 seconds" } } } }
        }).pipe(Layer.provide(platform))
      )
      const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
      const exit = yield* Effect.exit(McpToolkit.fromCatalog(catalog))
      const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(error).toMatchObject({ _tag: "TransportFailure", phase: "discovery" })
      expect(JSON.stringify(error)).not.toContain("127.0.0.1:1")
    }))
})
