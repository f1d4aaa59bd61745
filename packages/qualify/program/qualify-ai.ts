/**
 * The qualification program of @phasebound/ai, run by `node qualify-ai.mjs` and `bun
 * qualify-ai.mjs` in the project where the packed packages were installed (src/run.ts bundles
 * it with esbuild, every package import left external). It imports public entry points only:
 * @phasebound/ai (and one module behind its `./*` export), @phasebound/client,
 * @phasebound/testkit, @effect/ai, effect, @effect/platform and @effect/platform-node.
 *
 * A scripted `LanguageModel` (no network) asks for MCP tools on the testkit's loopback servers
 * through `McpToolkit`: over one connection, the model sees each tool's `inputSchema` as the
 * server listed it and reads the tool's result; a server gone before the call is a tool result
 * naming the failure, without its URL; over a catalog of two servers, each call reaches its own
 * server under its `server__tool` name.
 *
 * Like program/qualify.ts it prints a table and the testkit's report line (`formatReport`),
 * never calls process.exit, and sets process.exitCode on failure.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Tool from "@effect/ai/Tool"
import type * as Response from "@effect/ai/Response"
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { McpToolkit, ToolFailure, ToolSource } from "@phasebound/ai"
import * as McpToolkitModule from "@phasebound/ai/McpToolkit"
import { Authorization, McpCatalog, McpClient, McpServers } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import { Context, Effect, Layer, Stream } from "effect"
import { check, printResults, runScenario } from "./harness.js"

const bunVersion = (globalThis as { readonly Bun?: { readonly version: string } }).Bun?.version
const runtime = bunVersion === undefined ? "node" : "bun"
const results: Array<Testkit.CheckResult> = []

const scenario = async (name: string, body: () => unknown, timeoutMs = 20_000) => {
  results.push(await runScenario(name, body, timeoutMs))
}

/** A model that answers its first request with `calls` and its later ones with nothing; what it was offered. */
const scriptedModel = (calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>) => {
  const offered: Array<ReadonlyArray<{ readonly name: string; readonly parameters: unknown }>> = []
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          offered.push(options.tools.map((tool) => ({ name: tool.name, parameters: Tool.getJsonSchema(tool as never) })))
          return offered.length > 1
            ? []
            : calls.map((call, i): Response.PartEncoded => ({ type: "tool-call", id: `call-${i}`, name: call.name, params: call.params }))
        }),
      streamText: () => Stream.die("the scripted model does not stream")
    })
  )
  return { layer, offered }
}

const toolCalls = (server: Testkit.TestServer) =>
  server.requests.filter((request) => (request.json as { method?: string } | undefined)?.method === "tools/call").length

await scenario("the public exports: McpToolkit, ToolSource, ToolFailure; ./McpToolkit by path", () => {
  check(
    [McpToolkit.make, McpToolkit.fromSource, McpToolkit.fromCatalog, McpToolkit.snapshot].every((f) => typeof f === "function"),
    "McpToolkit.make, fromSource, fromCatalog, snapshot"
  )
  check(typeof ToolSource.fromConnection === "function" && typeof ToolSource.fromCatalog === "function", "ToolSource.fromConnection, fromCatalog")
  check(typeof ToolFailure.fromError === "function", "ToolFailure.fromError")
  check(McpToolkitModule.make === McpToolkit.make, "@phasebound/ai/McpToolkit is the module @phasebound/ai exports")
  return "3 modules"
})

await scenario("generateText calls an MCP tool once; the model saw its inputSchema as listed; a server gone is a result, no URL", async () => {
  const server = await Testkit.startServer()
  const model = scriptedModel([{ name: "echo", params: { text: "qualified" } }])
  const url = server.url
  let closed = false
  try {
    const { echoSchema, gone, response } = await Effect.runPromise(
      Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: server.url, policy: { timeout: "5 seconds" } })
        const response = yield* LanguageModel.generateText({ prompt: "echo it", toolkit: McpToolkit.make(connection) })
        const echoSchema = connection.tools.find((tool) => tool.name === "echo")?.inputSchema
        closed = true
        yield* Effect.promise(() => server.close())
        const gone = yield* LanguageModel.generateText({ prompt: "again", toolkit: McpToolkit.make(connection) }).pipe(
          Effect.provide(scriptedModel([{ name: "echo", params: { text: "late" } }]).layer)
        )
        return { echoSchema, gone, response }
      }).pipe(Effect.scoped, Effect.provide(model.layer), Effect.provide(FetchHttpClient.layer))
    )
    const offered = model.offered[0]?.find((tool) => tool.name === "echo")
    check(offered !== undefined, `echo was not offered: ${model.offered[0]?.map((tool) => tool.name).join(", ")}`)
    check(JSON.stringify(offered.parameters) === JSON.stringify(echoSchema), `the model saw ${JSON.stringify(offered.parameters)}`)
    const result = response.toolResults[0]
    check(result?.isFailure === false, `the call failed: ${JSON.stringify(result?.encodedResult)}`)
    check(JSON.stringify(result.encodedResult).includes("qualified"), `result ${JSON.stringify(result.encodedResult)}`)
    const late = gone.toolResults[0]
    const encoded = JSON.stringify(late?.encodedResult)
    check(late?.isFailure === true, `a call to a closed server: ${encoded}`)
    check(/"_tag":"[A-Za-z]+"/.test(encoded) && encoded.includes("outcome"), `the failure the model reads: ${encoded}`)
    check(!encoded.includes(url) && !encoded.includes("127.0.0.1"), `the failure holds the URL: ${encoded}`)
    return `echo answered; then ${(late.encodedResult as { _tag?: string })._tag}`
  } finally {
    if (!closed) await server.close()
  }
})

await scenario("McpToolkit.fromCatalog over McpServers: server__tool names, each call on its own server", async () => {
  const alpha = await Testkit.startServer()
  const beta = await Testkit.startServer()
  const model = scriptedModel([{ name: "alpha__echo", params: { text: "a" } }, { name: "beta__add", params: { a: 2, b: 3 } }])
  try {
    const response = await Effect.runPromise(
      Effect.gen(function*() {
        const context = yield* Layer.build(McpServers.layer({ servers: { alpha: { url: alpha.url }, beta: { url: beta.url } } }))
        const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
        return yield* LanguageModel.generateText({ prompt: "both", toolkit: McpToolkit.fromCatalog(catalog) })
      }).pipe(
        Effect.scoped,
        Effect.provide(model.layer),
        Effect.provide(
          Layer.mergeAll(FetchHttpClient.layer, Authorization.layerDefaults, NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer)))
        )
      )
    )
    const names = model.offered[0]?.map((tool) => tool.name) ?? []
    check(names.includes("alpha__echo") && names.includes("beta__add"), `offered ${names.join(", ")}`)
    check(response.toolResults.every((part) => !part.isFailure), `results ${JSON.stringify(response.toolResults.map((part) => part.encodedResult))}`)
    check(JSON.stringify(response.toolResults[1]?.encodedResult).includes("5"), `beta__add: ${JSON.stringify(response.toolResults[1]?.encodedResult)}`)
    check(toolCalls(alpha) === 1 && toolCalls(beta) === 1, `tools/call: alpha ${toolCalls(alpha)}, beta ${toolCalls(beta)}`)
    return `${names.length} tools offered; one call on each server`
  } finally {
    await Promise.all([alpha.close(), beta.close()])
  }
})

printResults(`phasebound ai qualification under ${runtime} ${bunVersion ?? process.version}`, results, Testkit.formatReport)
