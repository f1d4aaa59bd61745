import { afterEach, describe, expect, it } from "vitest"
import { startLegacyServer, type LegacyServerOptions, type LegacyTestServer } from "../src/index.js"
import { closeAllSse, connectLegacy, postRpc, request, type SseConnection } from "./legacyHelpers.js"

const servers: Array<LegacyTestServer> = []
const start = async (options?: LegacyServerOptions) => {
  const server = await startLegacyServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  closeAllSse()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

interface Message {
  readonly id?: number
  readonly method?: string
  readonly params?: any
  readonly result?: any
  readonly error?: { readonly code: number }
}

const next = async (sse: SseConnection): Promise<Message> => JSON.parse((await sse.next()).data) as Message

/** POSTs one message (202) and reads the stream through the answer to `id`. */
const exchange = async (sse: SseConnection, endpoint: string, id: number, method: string, params: unknown = {}) => {
  const response = await postRpc(endpoint, request(id, method, params))
  expect(response.status).toBe(202)
  await response.arrayBuffer()
  const seen: Array<Message> = []
  for (;;) {
    const message = await next(sse)
    seen.push(message)
    if (message.id === id && message.method === undefined) return seen
  }
}

const connect = async (server: LegacyTestServer) => {
  const { sse, endpoint } = await connectLegacy(server.url)
  const init = await exchange(sse, endpoint, 1, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "0" } })
  return { sse, endpoint, capabilities: init.at(-1)?.result.capabilities as Record<string, unknown> }
}

describe("legacy HTTP+SSE: features", () => {
  it("capabilities and tools only with features", async () => {
    const plain = await connect(await start())
    expect(plain.capabilities).toEqual({ tools: { listChanged: false } })
    const server = await start({ features: true })
    const { sse, endpoint, capabilities } = await connect(server)
    expect(capabilities).toEqual({
      tools: { listChanged: true },
      resources: { listChanged: false },
      prompts: { listChanged: false },
      logging: {},
      completions: {}
    })
    const tools = (await exchange(sse, endpoint, 2, "tools/list")).at(-1)?.result.tools as Array<{ name: string }>
    expect(tools.map((tool) => tool.name)).toEqual([
      "add",
      "echo",
      "increment",
      "slow_progress",
      "weather",
      "weather_error",
      "link_resource",
      "log",
      "change_tools",
      "flood_notifications"
    ])
  })

  it("slow_progress: the notifications on the session's stream before the answer; cancellation stops it", async () => {
    const server = await start({ features: true })
    const { sse, endpoint } = await connect(server)
    const messages = await exchange(sse, endpoint, 2, "tools/call", {
      name: "slow_progress",
      arguments: { steps: 3, intervalMs: 5 },
      _meta: { progressToken: "t" }
    })
    expect(messages.map((message) => message.method ?? "#answer")).toEqual([
      "notifications/progress",
      "notifications/progress",
      "notifications/progress",
      "#answer"
    ])
    expect(messages[2]?.params).toEqual({ progressToken: "t", progress: 3, total: 3, message: "step 3 of 3" })
    expect(server.progressSent()).toBe(3)

    await postRpc(endpoint, request(3, "tools/call", { name: "slow_progress", arguments: { steps: 100, intervalMs: 10 }, _meta: { progressToken: 7 } }))
    expect((await next(sse)).params.progress).toBe(1)
    await postRpc(endpoint, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } })
    await server.waitFor(() => server.timelinesStopped() === 1)
    const sent = server.progressSent()
    // The next answer on the stream is for the next request: request 3 was never answered, and
    // its stopped timeline sent nothing more.
    const after = await exchange(sse, endpoint, 4, "ping")
    expect(after.filter((message) => message.id === 3)).toEqual([])
    expect(server.progressSent()).toBe(sent)
    expect(server.toolCalls("slow_progress")).toBe(2)
  })

  it("log under logging/setLevel, weather, resources and prompts", async () => {
    const server = await start({ features: true, pageSize: 3 })
    const { sse, endpoint } = await connect(server)
    const all = await exchange(sse, endpoint, 2, "tools/call", { name: "log", arguments: { level: "info", message: "m", count: 2 } })
    expect(all.map((message) => message.method ?? "#answer")).toEqual(["notifications/message", "notifications/message", "#answer"])
    expect((await exchange(sse, endpoint, 3, "logging/setLevel", { level: "error" })).at(-1)?.result).toEqual({})
    const none = await exchange(sse, endpoint, 4, "tools/call", { name: "log", arguments: { level: "warning", message: "m" } })
    expect(none.map((message) => message.method ?? "#answer")).toEqual(["#answer"])
    expect(server.logMessagesSent()).toBe(2)

    const weather = (await exchange(sse, endpoint, 5, "tools/call", { name: "weather", arguments: { city: "Oslo" } })).at(-1)
    expect(weather?.result.structuredContent).toEqual({ temperature: 21.5, conditions: "sunny" })

    const page1 = (await exchange(sse, endpoint, 6, "resources/list")).at(-1)?.result
    expect(page1.resources).toHaveLength(3)
    const page2 = (await exchange(sse, endpoint, 7, "resources/list", { cursor: page1.nextCursor })).at(-1)?.result
    expect(page2.resources.map((resource: { uri: string }) => resource.uri)).toEqual(["test://blob/1"])
    expect((await exchange(sse, endpoint, 8, "resources/read", { uri: "test://docs/3" })).at(-1)?.result.contents[0].text).toBe("Document 3")
    expect((await exchange(sse, endpoint, 9, "resources/read", { uri: "test://docs/9" })).at(-1)?.error?.code).toBe(-32002)
    expect((await exchange(sse, endpoint, 10, "prompts/get", { name: "greet", arguments: { name: "Li" } })).at(-1)?.result.messages[0].content.text)
      .toBe("Hello, Li")
    expect(server.rpcCalls("resources/read")).toBe(2)
  })

  it("change_tools: the answer, then a list_changed on every session's stream; changeTools and floods likewise", async () => {
    const server = await start({ features: true })
    const a = await connect(server)
    const b = await connect(server)
    expect(server.listChangedListeners()).toBe(2)
    const messages = await exchange(a.sse, a.endpoint, 2, "tools/call", { name: "change_tools", arguments: {} })
    expect(messages.at(-1)?.result.content[0].text).toBe("added 1")
    expect(await next(a.sse)).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    expect(await next(b.sse)).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    const tools = (await exchange(b.sse, b.endpoint, 3, "tools/list")).at(-1)?.result.tools as Array<{ name: string }>
    expect(tools.at(-1)?.name).toBe("added_1")

    expect(server.changeTools(2)).toBe(2)
    expect((await next(a.sse)).method).toBe("notifications/tools/list_changed")
    expect((await next(b.sse)).method).toBe("notifications/tools/list_changed")
    expect(server.floodNotifications(3, 10)).toBe(6)
    for (let i = 0; i < 3; i++) expect((await next(b.sse)).params).toMatchObject({ level: "debug", logger: "testkit" })
    await server.waitFor(() => server.listChangedSent() === 4 && server.logMessagesSent() >= 4)
    expect(server.subscriptionsClosed()).toBe(0)
  })
})
