import { afterEach, describe, expect, it } from "vitest"
import { FEATURE_CAPABILITIES, startServer, type TestServer, type TestServerOptions } from "../src/index.js"
import {
  answerOf,
  bodyOf,
  closeStreams,
  handshake2025,
  messagesOf,
  openGet,
  post2025,
  post2026,
  type RpcBody,
  sseOf,
  textOf
} from "./features-helpers.js"

const servers: Array<TestServer> = []
const start = async (options?: TestServerOptions) => {
  const server = await startServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  closeStreams()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
const LOG_LEVEL = "io.modelcontextprotocol/logLevel"
const FEATURE_TOOL_NAMES = ["slow_progress", "weather", "weather_error", "link_resource", "log", "change_tools", "flood_notifications"]
const BLOB = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString("base64")

const call2025 = (server: TestServer, sessionId: string | undefined, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>, id = 7) =>
  post2025(server, "tools/call", { name, arguments: args }, { sessionId, id, ...(meta === undefined ? {} : { meta }) })
const call2026 = (server: TestServer, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>, id = 7) =>
  post2026(server, "tools/call", { name, arguments: args }, { id, ...(meta === undefined ? {} : { meta }) })
const methods = (messages: ReadonlyArray<RpcBody>) => messages.map((message) => message.method ?? "#answer")

describe("features: capabilities and listings", () => {
  it("are unchanged without features: no feature tool, no resources, no GET stream, no subscriptions/listen", async () => {
    const server = await start({ era: "dual" })
    const { sessionId, capabilities } = await handshake2025(server)
    expect(capabilities).toEqual({ tools: { listChanged: false } })
    const tools = await answerOf(await post2025(server, "tools/list", {}, { sessionId }))
    expect(tools.result.tools.map((tool: { name: string }) => tool.name)).toEqual(["add", "echo", "increment"])
    expect((await answerOf(await post2025(server, "resources/list", {}, { sessionId }))).error?.code).toBe(-32601)
    expect((await answerOf(await post2025(server, "logging/setLevel", { level: "info" }, { sessionId }))).error?.code).toBe(-32601)
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", "mcp-session-id": sessionId ?? "" } })
    expect(get.status).toBe(405)
    await get.arrayBuffer()
    const discover = await answerOf(await post2026(server, "server/discover"))
    expect(discover.result.capabilities).toEqual({ tools: {} })
    const listen = await post2026(server, "subscriptions/listen", { notifications: { toolsListChanged: true } })
    expect(listen.response.status).toBe(404)
    expect((await answerOf(listen)).error?.code).toBe(-32601)
    expect(() => server.changeTools()).toThrow(TypeError)
  })

  it("add listChanged tools, resources, prompts and logging in both eras, and the feature tools after every other", async () => {
    const server = await start({ era: "dual", features: true })
    const { sessionId, capabilities } = await handshake2025(server)
    expect(capabilities).toEqual(FEATURE_CAPABILITIES)
    expect(capabilities).toEqual({
      tools: { listChanged: true },
      resources: { listChanged: false },
      prompts: { listChanged: false },
      logging: {},
      completions: {}
    })
    const tools = (await answerOf(await post2025(server, "tools/list", {}, { sessionId }))).result.tools as Array<{ name: string; outputSchema?: unknown }>
    expect(tools.map((tool) => tool.name)).toEqual(["add", "echo", "increment", ...FEATURE_TOOL_NAMES])
    expect(tools.find((tool) => tool.name === "weather")?.outputSchema).toEqual({
      type: "object",
      properties: { temperature: { type: "number" }, conditions: { type: "string" } },
      required: ["temperature", "conditions"],
      additionalProperties: false
    })
    const discover = await answerOf(await post2026(server, "server/discover"))
    expect(discover.result.capabilities).toEqual(FEATURE_CAPABILITIES)
    const modern = await answerOf(await post2026(server, "tools/list"))
    expect(modern.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "add",
      "echo",
      "increment",
      "region_query",
      "ask_name",
      ...FEATURE_TOOL_NAMES
    ])
  })
})

describe("features: slow_progress", () => {
  it("sse, handshake era: N progress notifications on the POST's stream before the result, none without a token", async () => {
    const server = await start({ mode: "sse", features: true })
    const { sessionId } = await handshake2025(server)
    const started = Date.now()
    const messages = await messagesOf(await call2025(server, sessionId, "slow_progress", { steps: 3, intervalMs: 20 }, { progressToken: "p-1" }))
    expect(Date.now() - started).toBeGreaterThanOrEqual(55)
    expect(methods(messages)).toEqual(["notifications/progress", "notifications/progress", "notifications/progress", "#answer"])
    expect(messages.slice(0, 3).map((message) => message.params)).toEqual([1, 2, 3].map((i) => ({
      progressToken: "p-1",
      progress: i,
      total: 3,
      message: `step ${i} of 3`
    })))
    expect(messages[3]).toEqual({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "done" }] } })
    expect(server.progressSent()).toBe(3)

    const quiet = await messagesOf(await call2025(server, sessionId, "slow_progress", { steps: 2, intervalMs: 5 }, undefined, 8))
    expect(methods(quiet)).toEqual(["#answer"])
    expect(server.progressSent()).toBe(3)
    expect(server.toolCalls("slow_progress")).toBe(2)
  })

  it("silentAfter sends k notifications, then stays silent for the rest of the steps' time", async () => {
    const server = await start({ mode: "sse", features: true, sessions: false })
    const started = Date.now()
    const messages = await messagesOf(await call2025(server, undefined, "slow_progress", { steps: 4, intervalMs: 25, silentAfter: 1 }, { progressToken: 42 }))
    expect(Date.now() - started).toBeGreaterThanOrEqual(95)
    expect(methods(messages)).toEqual(["notifications/progress", "#answer"])
    expect(messages[0]?.params).toMatchObject({ progressToken: 42, progress: 1, total: 4 })
  })

  it("json, handshake era: on the session's GET stream if one is open, else nowhere", async () => {
    const server = await start({ mode: "json", features: true })
    const { sessionId } = await handshake2025(server)
    const none = await call2025(server, sessionId, "slow_progress", { steps: 2, intervalMs: 1 }, { progressToken: "a" })
    expect(none.response.headers.get("content-type")).toBe("application/json")
    expect(textOf(await answerOf(none))).toBe("done")
    expect(server.progressSent()).toBe(0)

    const get = await openGet(server, sessionId)
    expect(get.response.status).toBe(200)
    await server.waitFor(() => server.listChangedListeners() === 1)
    const answered = await answerOf(await call2025(server, sessionId, "slow_progress", { steps: 2, intervalMs: 1 }, { progressToken: "b" }))
    expect(textOf(answered)).toBe("done")
    expect([bodyOf(await get.next()), bodyOf(await get.next())].map((message) => message.params.progress)).toEqual([1, 2])
    expect(server.progressSent()).toBe(2)
  })

  it("holdAnswers: a JSON answer waits for the release while its reports go on time", async () => {
    const server = await start({ mode: "json", features: true })
    const { sessionId } = await handshake2025(server)
    const get = await openGet(server, sessionId)
    await server.waitFor(() => server.listChangedListeners() === 1)
    const release = server.holdAnswers()
    let answered = false
    const pending = call2025(server, sessionId, "slow_progress", { steps: 2, intervalMs: 1 }, { progressToken: "h" }).then((posted) => {
      answered = true
      return posted
    })
    expect([bodyOf(await get.next()), bodyOf(await get.next())].map((message) => message.params.progress)).toEqual([1, 2])
    // A later exchange goes through while the answer waits.
    expect((await post2025(server, "ping", {}, { sessionId, id: 8 })).response.status).toBe(200)
    expect(answered).toBe(false)
    release()
    expect(textOf(await answerOf(await pending))).toBe("done")
  })

  it("stateless era: on the POST's stream in sse mode; nowhere in json mode", async () => {
    const sse = await start({ era: "stateless", mode: "sse", features: true })
    const messages = await messagesOf(await call2026(sse, "slow_progress", { steps: 2, intervalMs: 1 }, { progressToken: "s" }))
    expect(methods(messages)).toEqual(["notifications/progress", "notifications/progress", "#answer"])
    expect(messages[2]?.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "done" }] })
    expect(sse.progressSent()).toBe(2)

    const json = await start({ era: "stateless", mode: "json", features: true })
    const answered = await call2026(json, "slow_progress", { steps: 2, intervalMs: 1 }, { progressToken: "s" })
    expect(answered.response.headers.get("content-type")).toBe("application/json")
    expect(textOf(await answerOf(answered))).toBe("done")
    expect(json.progressSent()).toBe(0)
  })

  it("a client that closes the POST stream stops what is left of it", async () => {
    const server = await start({ era: "stateless", mode: "sse", features: true })
    const posted = await call2026(server, "slow_progress", { steps: 50, intervalMs: 10 }, { progressToken: "x" })
    const stream = sseOf(posted.response, posted.controller)
    expect(bodyOf(await stream.next()).method).toBe("notifications/progress")
    stream.close()
    await server.waitFor(() => server.timelinesStopped() === 1)
    const sent = server.progressSent()
    expect(sent).toBeLessThan(50)
    // A stopped timeline sends nothing more: a later exchange finds the count where it was.
    expect(textOf(await answerOf(await call2026(server, "weather", { city: "Oslo" })))).toBeDefined()
    expect(server.progressSent()).toBe(sent)
  })
})

describe("features: structured results and links", () => {
  for (const era of ["handshake", "stateless"] as const) {
    it(`weather modes, weather_error and link_resource (${era})`, async () => {
      const server = await start({ era, features: true, sessions: false })
      const call = (name: string, args: Record<string, unknown>) =>
        (era === "stateless" ? call2026(server, name, args) : call2025(server, undefined, name, args)).then(answerOf).then((body) => {
          const { resultType, ...rest } = body.result as Record<string, unknown>
          expect(resultType).toBe(era === "stateless" ? "complete" : undefined)
          return rest
        })
      const ok = { temperature: 21.5, conditions: "sunny" }
      expect(await call("weather", { city: "Paris" })).toEqual({ content: [{ type: "text", text: JSON.stringify(ok) }], structuredContent: ok })
      expect((await call("weather", { city: "Paris", mode: "mismatch" }))["structuredContent"]).toEqual({ temperature: "hot", conditions: "sunny" })
      expect(await call("weather", { city: "Paris", mode: "missing" })).toEqual({ content: [{ type: "text", text: JSON.stringify(ok) }] })
      expect((await call("weather", { city: "Paris", mode: "extra" }))["structuredContent"]).toEqual({ temperature: 1, conditions: "x", wind: 3 })
      expect(await call("weather", { city: "Paris", mode: "bogus" })).toMatchObject({ isError: true })
      const failed = await call("weather_error", { city: "Paris" })
      expect(failed).toMatchObject({ isError: true })
      expect(failed).not.toHaveProperty("structuredContent")
      expect(await call("link_resource", {})).toEqual({
        content: [{ type: "resource_link", uri: "test://docs/1", name: "doc-1", mimeType: "text/plain" }]
      })
      expect(server.toolCalls("weather")).toBe(5)
    })
  }
})

describe("features: logging", () => {
  it("handshake era: everything before logging/setLevel, then only at or above the level; an invalid level is -32602", async () => {
    const server = await start({ mode: "sse", features: true })
    const { sessionId } = await handshake2025(server)
    const debug = await messagesOf(await call2025(server, sessionId, "log", { level: "debug", message: "hello", count: 2 }))
    expect(methods(debug)).toEqual(["notifications/message", "notifications/message", "#answer"])
    expect(debug[0]?.params).toEqual({ level: "debug", logger: "testkit", data: "hello" })
    expect(textOf(debug[2] as RpcBody)).toBe("logged 2")

    expect(await answerOf(await post2025(server, "logging/setLevel", { level: "warning" }, { sessionId, id: 3 }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: {}
    })
    const info = await messagesOf(await call2025(server, sessionId, "log", { level: "info", message: "dropped" }))
    expect(methods(info)).toEqual(["#answer"])
    expect(textOf(info[0] as RpcBody)).toBe("logged 0")
    const error = await messagesOf(await call2025(server, sessionId, "log", { level: "error", message: "kept" }))
    expect(methods(error)).toEqual(["notifications/message", "#answer"])
    expect((await answerOf(await post2025(server, "logging/setLevel", { level: "loud" }, { sessionId }))).error?.code).toBe(-32602)
    expect(server.logMessagesSent()).toBe(3)
    expect(server.rpcCalls("logging/setLevel")).toBe(2)
  })

  it("stateless era: nothing without the _meta log level, only at or above it, on the request's own stream", async () => {
    const server = await start({ era: "stateless", mode: "sse", features: true })
    const silent = await messagesOf(await call2026(server, "log", { level: "emergency", message: "m", count: 3 }))
    expect(methods(silent)).toEqual(["#answer"])
    expect(textOf(silent[0] as RpcBody)).toBe("logged 0")
    const warned = await messagesOf(await call2026(server, "log", { level: "notice", message: "m", count: 2 }, { [LOG_LEVEL]: "info" }))
    expect(methods(warned)).toEqual(["notifications/message", "notifications/message", "#answer"])
    const below = await messagesOf(await call2026(server, "log", { level: "debug", message: "m" }, { [LOG_LEVEL]: "info" }))
    expect(methods(below)).toEqual(["#answer"])
    expect(server.logMessagesSent()).toBe(2)

    const invalid = await call2026(server, "log", { level: "info", message: "m" }, { [LOG_LEVEL]: "verbose" })
    expect(invalid.response.status).toBe(400)
    expect((await answerOf(invalid)).error?.code).toBe(-32602)
    const setLevel = await post2026(server, "logging/setLevel", { level: "info" })
    expect(setLevel.response.status).toBe(404)
    expect((await answerOf(setLevel)).error?.code).toBe(-32601)
  })
})

describe("features: list changes", () => {
  it("handshake era: change_tools answers, then a list_changed goes on every open GET stream; tools/list has the new tools", async () => {
    const server = await start({ mode: "json", features: true })
    const a = await handshake2025(server)
    const b = await handshake2025(server)
    const getA = await openGet(server, a.sessionId)
    const getB = await openGet(server, b.sessionId)
    expect(getA.response.headers.get("content-type")).toBe("text/event-stream")
    await server.waitFor(() => server.listChangedListeners() === 2)

    expect(textOf(await answerOf(await call2025(server, a.sessionId, "change_tools", { count: 2 })))).toBe("added 2")
    expect(bodyOf(await getA.next())).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    expect(bodyOf(await getB.next())).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    const tools = (await answerOf(await post2025(server, "tools/list", {}, { sessionId: b.sessionId }))).result.tools as Array<{ name: string }>
    expect(tools.map((tool) => tool.name).slice(-2)).toEqual(["added_1", "added_2"])
    expect(textOf(await answerOf(await call2025(server, b.sessionId, "added_2", { text: "hi" })))).toBe("hi")

    expect(server.changeTools()).toBe(2)
    expect(bodyOf(await getA.next()).method).toBe("notifications/tools/list_changed")
    await server.waitFor(() => server.listChangedSent() === 4)
    const more = (await answerOf(await post2025(server, "tools/list", {}, { sessionId: a.sessionId }))).result.tools as Array<{ name: string }>
    expect(more.at(-1)?.name).toBe("added_3")

    // DELETE ends the session's GET stream.
    const deleted = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": a.sessionId ?? "" } })
    expect(deleted.status).toBe(200)
    await getA.ended()
    await server.waitFor(() => server.listChangedListeners() === 1)
  })

  it("a GET stream needs a known session", async () => {
    const server = await start({ features: true })
    const missing = await fetch(server.url, { headers: { accept: "text/event-stream" } })
    expect(missing.status).toBe(400)
    await missing.arrayBuffer()
    const unknown = await fetch(server.url, { headers: { accept: "text/event-stream", "mcp-session-id": "nope" } })
    expect(unknown.status).toBe(404)
    await unknown.arrayBuffer()
  })

  for (const mode of ["json", "sse"] as const) {
    it(`stateless era (${mode}): subscriptions/listen is acknowledged first, then each list_changed carries the subscriptionId`, async () => {
      const server = await start({ era: "stateless", mode, features: true })
      const listen = await post2026(server, "subscriptions/listen", {
        notifications: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["test://docs/1"] }
      }, { id: "sub-1" })
      expect(listen.response.status).toBe(200)
      expect(listen.response.headers.get("content-type")).toBe("text/event-stream")
      const stream = sseOf(listen.response, listen.controller)
      expect(bodyOf(await stream.next())).toEqual({
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID]: "sub-1" } }
      })
      expect(server.listChangedListeners()).toBe(1)

      expect(textOf(await answerOf(await call2026(server, "change_tools", {})))).toBe("added 1")
      expect(bodyOf(await stream.next())).toEqual({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: { [SUBSCRIPTION_ID]: "sub-1" } }
      })
      const tools = (await answerOf(await post2026(server, "tools/list"))).result.tools as Array<{ name: string }>
      expect(tools.at(-1)?.name).toBe("added_1")
      expect(server.listChangedSent()).toBe(1)

      stream.close()
      await server.waitFor(() => server.subscriptionsClosed() === 1)
      expect(server.listChangedListeners()).toBe(0)
    })
  }

  it("stateless era: a subscription without toolsListChanged hears nothing; endSubscriptions ends each gracefully", async () => {
    const server = await start({ era: "stateless", features: true })
    const quiet = await post2026(server, "subscriptions/listen", { notifications: { resourcesListChanged: true } }, { id: 5 })
    const quietStream = sseOf(quiet.response, quiet.controller)
    expect(bodyOf(await quietStream.next()).params).toEqual({ notifications: {}, _meta: { [SUBSCRIPTION_ID]: 5 } })
    const loud = await post2026(server, "subscriptions/listen", { notifications: { toolsListChanged: true } }, { id: 6 })
    const loudStream = sseOf(loud.response, loud.controller)
    await loudStream.next()
    expect(server.listChangedListeners()).toBe(1)
    expect(server.changeTools(1)).toBe(1)
    expect(bodyOf(await loudStream.next()).method).toBe("notifications/tools/list_changed")

    expect(server.endSubscriptions()).toBe(2)
    expect(bodyOf(await quietStream.next())).toEqual({ jsonrpc: "2.0", id: 5, result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: 5 } } })
    expect(bodyOf(await loudStream.next())).toEqual({ jsonrpc: "2.0", id: 6, result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: 6 } } })
    await quietStream.ended()
    await loudStream.ended()
    expect(server.subscriptionsClosed()).toBe(0)

    const noFilter = await post2026(server, "subscriptions/listen", {})
    expect((await answerOf(noFilter)).error?.code).toBe(-32602)
  })

  it("dual era: one change reaches the GET stream of a 2025 session and a 2026 subscription", async () => {
    const server = await start({ era: "dual", features: true })
    const { sessionId } = await handshake2025(server)
    const get = await openGet(server, sessionId)
    const listen = await post2026(server, "subscriptions/listen", { notifications: { toolsListChanged: true } }, { id: 9 })
    const stream = sseOf(listen.response, listen.controller)
    await stream.next()
    await server.waitFor(() => server.listChangedListeners() === 2)
    expect(server.changeTools()).toBe(2)
    expect(bodyOf(await get.next())).toEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
    expect(bodyOf(await stream.next()).params).toEqual({ _meta: { [SUBSCRIPTION_ID]: 9 } })
  })
})

describe("features: floods", () => {
  it("flood_notifications answers, then floods every listener, bypassing the log level", async () => {
    const server = await start({ features: true })
    const { sessionId } = await handshake2025(server)
    const get = await openGet(server, sessionId)
    await server.waitFor(() => server.listChangedListeners() === 1)
    await answerOf(await post2025(server, "logging/setLevel", { level: "emergency" }, { sessionId }))
    expect(textOf(await answerOf(await call2025(server, sessionId, "flood_notifications", { count: 5, bytes: 50 })))).toBe("flooding 5")
    for (let i = 0; i < 5; i++) {
      const message = bodyOf(await get.next())
      expect(message.params.level).toBe("debug")
      expect(Buffer.byteLength(message.params.data)).toBe(50)
    }
    expect(server.logMessagesSent()).toBe(5)
    expect(server.floodNotifications(2)).toBe(2)
    expect(Buffer.byteLength(bodyOf(await get.next()).params.data)).toBe(100)
  })

  it("one oversized frame: flood_notifications { count: 1, bytes: 10_000_000 }", async () => {
    const server = await start({ era: "stateless", features: true })
    const listen = await post2026(server, "subscriptions/listen", { notifications: { toolsListChanged: true } })
    const stream = sseOf(listen.response, listen.controller)
    await stream.next()
    const before = stream.received
    await answerOf(await call2026(server, "flood_notifications", { count: 1, bytes: 10_000_000 }))
    // readUntil drops what it reads: a linear read of the one big frame.
    await stream.readUntil(before + 10_000_000)
    expect(server.logMessagesSent()).toBe(1)
    expect(server.notificationsSent("notifications/message")).toBe(1)
  })
})

describe("features: resources and prompts", () => {
  it("handshake era: paginated resources/list, resources/read of text, blob, big and unknown, templates, prompts", async () => {
    const server = await start({ features: true, pageSize: 2, resources: 3 })
    const { sessionId } = await handshake2025(server)
    const rpc = (method: string, params: Record<string, unknown> = {}) => post2025(server, method, params, { sessionId }).then(answerOf)
    const first = await rpc("resources/list")
    expect(first.result.resources).toEqual([
      { uri: "test://docs/1", name: "doc-1", mimeType: "text/plain" },
      { uri: "test://docs/2", name: "doc-2", mimeType: "text/plain" }
    ])
    const second = await rpc("resources/list", { cursor: first.result.nextCursor })
    expect(second.result.resources).toEqual([
      { uri: "test://docs/3", name: "doc-3", mimeType: "text/plain" },
      { uri: "test://blob/1", name: "blob-1", mimeType: "application/octet-stream" }
    ])
    expect(second.result.nextCursor).toBeUndefined()
    expect((await rpc("resources/list", { cursor: "bogus" })).error?.code).toBe(-32602)

    expect((await rpc("resources/read", { uri: "test://docs/2" })).result).toEqual({
      contents: [{ uri: "test://docs/2", mimeType: "text/plain", text: "Document 2" }]
    })
    expect((await rpc("resources/read", { uri: "test://blob/1" })).result).toEqual({
      contents: [{ uri: "test://blob/1", mimeType: "application/octet-stream", blob: BLOB }]
    })
    expect(Buffer.byteLength((await rpc("resources/read", { uri: "test://big/1000" })).result.contents[0].text)).toBe(1000)
    expect((await rpc("resources/read", { uri: "test://docs/4" })).error).toEqual({
      code: -32002,
      message: "Resource not found",
      data: { uri: "test://docs/4" }
    })
    expect((await rpc("resources/templates/list")).result).toEqual({
      resourceTemplates: [{ uriTemplate: "test://docs/{id}", name: "doc", mimeType: "text/plain" }]
    })

    const prompts = await rpc("prompts/list")
    expect(prompts.result.prompts).toEqual([
      { name: "greet", description: "Greets someone", arguments: [{ name: "name", required: true }] },
      { name: "plain" }
    ])
    expect((await rpc("prompts/get", { name: "greet", arguments: { name: "Ada" } })).result).toEqual({
      description: "Greets someone",
      messages: [{ role: "user", content: { type: "text", text: "Hello, Ada" } }]
    })
    expect((await rpc("prompts/get", { name: "greet" })).error?.code).toBe(-32602)
    expect((await rpc("prompts/get", { name: "nope" })).error?.code).toBe(-32602)
    expect(server.rpcCalls("resources/read")).toBe(4)
    expect(server.rpcCalls("prompts/get")).toBe(3)
  })

  it("stateless era: resultType and caching hints, -32602 for an unknown resource, and the Mcp-Name rule", async () => {
    const server = await start({ era: "stateless", features: true, mode: "sse", ttlMs: 1234 })
    const list = await answerOf(await post2026(server, "resources/list"))
    expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 1234, cacheScope: "public" })
    expect(list.result.resources).toHaveLength(4)
    const read = await answerOf(await post2026(server, "resources/read", { uri: "test://docs/1" }))
    expect(read.result).toEqual({
      resultType: "complete",
      contents: [{ uri: "test://docs/1", mimeType: "text/plain", text: "Document 1" }],
      ttlMs: 1234,
      cacheScope: "public"
    })
    const unknown = await answerOf(await post2026(server, "resources/read", { uri: "test://nope" }))
    expect(unknown.error).toEqual({ code: -32602, message: "Resource not found", data: { uri: "test://nope" } })
    expect((await answerOf(await post2026(server, "resources/templates/list"))).result).toMatchObject({ resultType: "complete", ttlMs: 1234 })
    expect((await answerOf(await post2026(server, "prompts/list"))).result).toMatchObject({ resultType: "complete", ttlMs: 1234 })
    const greet = await answerOf(await post2026(server, "prompts/get", { name: "greet", arguments: { name: "Bo" } }))
    expect(greet.result).toMatchObject({ resultType: "complete", messages: [{ content: { text: "Hello, Bo" } }] })
    expect(greet.result).not.toHaveProperty("ttlMs")

    const mismatch = await post2026(server, "resources/read", { uri: "test://docs/1" }, { headers: { "mcp-name": "test://docs/2" } })
    expect(mismatch.response.status).toBe(400)
    expect((await answerOf(mismatch)).error?.code).toBe(-32020)
    const missing = await post2026(server, "prompts/get", { name: "plain" }, { headers: { "mcp-name": null } })
    expect(missing.response.status).toBe(400)
    expect((await answerOf(missing)).error?.code).toBe(-32020)
    expect(server.rpcCalls("resources/read")).toBe(3)
  })
})
