/**
 * A tool source over several servers (the shape of a catalog: entries `{ name, server, tool }`,
 * one `callTool` by the catalog's name), built here over two real loopback servers: the toolkit
 * offers each entry under the source's name, routes every call through the source, leaves out
 * names two entries share, and follows a change of either server's list.
 */
import { FetchHttpClient } from "@effect/platform"
import * as LanguageModel from "@effect/ai/LanguageModel"
import { describe, expect, it } from "@effect/vitest"
import { McpToolkit, type ToolSource } from "@phasebound/ai"
import { McpClient } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as Subscribable from "effect/Subscribable"
import { eventually, scriptedModel, toolCall } from "./support/scriptedModel.js"

type Servers = ReadonlyArray<readonly [string, McpClient.Connection]>

/** Every server's tools, named `server_tool` when `qualified`, else by the tool's own name. */
const entriesOf = (servers: Servers, qualified: boolean): ReadonlyArray<ToolSource.SourceTool> =>
  servers.flatMap(([server, connection]) => connection.tools.map((tool) => ({ name: qualified ? `${server}_${tool.name}` : tool.name, server, tool })))

/** A catalog-shaped source over `servers`, and the calls it routed. */
const catalogOf = (servers: Servers, qualified: boolean) => {
  const routed: Array<{ readonly server: string; readonly tool: string }> = []
  const source: ToolSource.ToolSource = {
    toolList: Subscribable.make({
      get: Effect.sync(() => entriesOf(servers, qualified)),
      changes: Stream.mergeAll(servers.map(([, connection]) => connection.toolList.changes), { concurrency: "unbounded" }).pipe(
        Stream.map(() => entriesOf(servers, qualified))
      )
    }),
    callTool: (name, args, options) => {
      const entry = entriesOf(servers, qualified).find((candidate) => candidate.name === name)!
      routed.push({ server: entry.server!, tool: entry.tool.name })
      const connection = servers.find(([server]) => server === entry.server)![1]
      return connection.callTool(entry.tool.name, args, options)
    }
  }
  return { source, routed }
}

const twoServers = Effect.gen(function*() {
  const connect = (server: Testkit.TestServer) =>
    McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy: { relistDelay: "10 millis" } }).pipe(Effect.provide(FetchHttpClient.layer))
  const alpha = yield* Testkit.scoped({ features: true })
  const beta = yield* Testkit.scoped({})
  const servers: Servers = [["alpha", yield* connect(alpha)], ["beta", yield* connect(beta)]]
  return { alpha, beta, servers }
})

describe("a source over several servers", () => {
  it.scopedLive("offers every entry under the source's name and routes each call to its server", () =>
    Effect.gen(function*() {
      const { alpha, beta, servers } = yield* twoServers
      const { routed, source } = catalogOf(servers, true)
      const model = scriptedModel((_, turn) =>
        Effect.succeed(turn === 0 ? [toolCall("1", "alpha_echo", { text: "from alpha" }), toolCall("2", "beta_echo", { text: "from beta" })] : [])
      )
      const toolkit = yield* McpToolkit.fromSource(source)
      expect(toolkit.excluded).toEqual([])
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit }).pipe(Effect.provide(model.layer))
      const names = model.seen[0]!.tools.map((tool) => tool.name)
      expect(names).toEqual(entriesOf(servers, true).map((entry) => entry.name))
      expect(names).toContain("alpha_weather")
      expect(names).toContain("beta_add")
      expect(response.toolResults.map((part) => [part.name, part.isFailure, part.encodedResult])).toEqual([
        ["alpha_echo", false, { content: [{ type: "text", text: "from alpha" }] }],
        ["beta_echo", false, { content: [{ type: "text", text: "from beta" }] }]
      ])
      expect(routed).toEqual([{ server: "alpha", tool: "echo" }, { server: "beta", tool: "echo" }])
      expect(alpha.rpcCalls("tools/call")).toBe(1)
      expect(beta.rpcCalls("tools/call")).toBe(1)
    }))

  it.scopedLive("leaves out every name two entries share: a call could otherwise reach the wrong server", () =>
    Effect.gen(function*() {
      const { servers } = yield* twoServers
      const { source } = catalogOf(servers, false)
      const toolkit = yield* McpToolkit.fromSource(source)
      const shared = servers[1]![1].tools.map((tool) => tool.name)
      expect(shared).toContain("echo")
      expect(Object.keys(toolkit.tools).filter((name) => shared.includes(name))).toEqual([])
      const byNameAndServer = (a: McpToolkit.Excluded, b: McpToolkit.Excluded) => a.name.localeCompare(b.name) || a.server!.localeCompare(b.server!)
      expect([...toolkit.excluded].sort(byNameAndServer)).toEqual(
        servers.flatMap(([server, connection]) =>
          connection.tools.filter((tool) => shared.includes(tool.name)).map((tool): McpToolkit.Excluded => ({
            name: tool.name,
            server,
            reason: "duplicate-name"
          }))
        ).sort(byNameAndServer)
      )
      // alpha's own tools are offered.
      expect(Object.keys(toolkit.tools)).toContain("weather")
    }))

  it.scopedLive("follows a change of one server's list", () =>
    Effect.gen(function*() {
      const { alpha, servers } = yield* twoServers
      const { source } = catalogOf(servers, true)
      yield* eventually(() => alpha.listChangedListeners() === 1)
      const changed = yield* Effect.fork(
        Stream.runHead(Stream.filter(source.toolList.changes, (entries) => entries.some((entry) => entry.name === "alpha_added_1")))
      )
      expect(alpha.changeTools(1)).toBe(1)
      yield* Fiber.join(changed)
      const model = scriptedModel(() => Effect.succeed([toolCall("n", "alpha_added_1", { text: "new" })]))
      const response = yield* LanguageModel.generateText({ prompt: "p", toolkit: McpToolkit.fromSource(source) }).pipe(Effect.provide(model.layer))
      expect(response.toolResults[0]).toMatchObject({ name: "alpha_added_1", isFailure: false, encodedResult: { content: [{ type: "text", text: "new" }] } })
    }))
})
