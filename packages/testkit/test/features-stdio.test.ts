import { afterEach, describe, expect, it } from "vitest"
import { makeStdioFixture, stdioServerCommand, stdioServerScript, type StdioFixture, type StdioFixtureOptions } from "../src/StdioServer.js"
import { modernMeta, modernParams, parseLine, spawnStdio, type StdioDriver } from "./stdio-helpers.js"

const fixtures: Array<StdioFixture> = []
const drivers: Array<StdioDriver> = []

const start = (options: StdioFixtureOptions = {}) => {
  const fixture = makeStdioFixture(options)
  fixtures.push(fixture)
  const driver = spawnStdio(fixture)
  drivers.push(driver)
  return { fixture, driver }
}

afterEach(async () => {
  for (const driver of drivers.splice(0)) {
    if (driver.exit() === undefined) {
      driver.child.kill("SIGKILL")
      await driver.exited
    }
  }
  for (const fixture of fixtures.splice(0)) fixture.cleanup()
})

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
const LOG_LEVEL = "io.modelcontextprotocol/logLevel"
const CAPABILITIES = { tools: { listChanged: true }, resources: { listChanged: false }, prompts: { listChanged: false }, logging: {}, completions: {} }

const initialize = (driver: StdioDriver) =>
  driver.request(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } })

/** Every stdout message from line `from`, through the answer to `id`. */
const through = async (driver: StdioDriver, id: number | string, from: number) => {
  const end = await driver.waitForLine((line) => parseLine(line)["id"] === id, 3000, from)
  return driver.lines.slice(from, end + 1).map(parseLine)
}
const methods = (messages: ReadonlyArray<Record<string, unknown>>) => messages.map((message) => message["method"] ?? "#answer")
const result = (message: Record<string, unknown> | undefined) => message?.["result"] as any

describe("stdio server: features, handshake era", () => {
  it("adds capabilities and tools only with --features", async () => {
    expect(stdioServerCommand({ features: true, resources: 2, eventsFile: "/tmp/e" }).args).toEqual([
      stdioServerScript(),
      "--features",
      "--resources",
      "2",
      "--events-file",
      "/tmp/e"
    ])
    expect(() => stdioServerCommand({ resources: -1 })).toThrow(RangeError)
    const plain = start()
    expect(result(await initialize(plain.driver)).capabilities).toEqual({ tools: { listChanged: false } })
    expect((await plain.driver.request(2, "resources/list"))["error"]).toMatchObject({ code: -32601 })

    const { driver } = start({ features: true })
    expect(result(await initialize(driver)).capabilities).toEqual(CAPABILITIES)
    const tools = result(await driver.request(2, "tools/list")).tools as Array<{ name: string }>
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

  it("slow_progress: notifications on stdout before the answer, none without a token; cancellation stops it", async () => {
    const { fixture, driver } = start({ features: true })
    await initialize(driver)
    const from = driver.lines.length
    driver.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "slow_progress", arguments: { steps: 3, intervalMs: 5 }, _meta: { progressToken: "p" } }
    })
    const messages = await through(driver, 2, from)
    expect(methods(messages)).toEqual(["notifications/progress", "notifications/progress", "notifications/progress", "#answer"])
    expect(messages[0]?.["params"]).toEqual({ progressToken: "p", progress: 1, total: 3, message: "step 1 of 3" })
    expect(result(messages[3])).toEqual({ content: [{ type: "text", text: "done" }] })

    const quiet = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "slow_progress", arguments: { steps: 2, intervalMs: 1 } } })
    expect(methods(await through(driver, 3, quiet))).toEqual(["#answer"])
    expect(fixture.progressSent()).toBe(3)

    const cancelled = driver.lines.length
    driver.send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "slow_progress", arguments: { steps: 100, intervalMs: 10 }, _meta: { progressToken: 4 } }
    })
    await driver.waitForLine((line) => parseLine(line)["method"] === "notifications/progress", 3000, cancelled)
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 4 } })
    await fixture.waitFor(() => fixture.timelinesStopped() === 1)
    const sent = fixture.progressSent()
    expect(await driver.request(5, "ping")).toMatchObject({ id: 5 })
    expect(driver.lines.slice(cancelled).map(parseLine).filter((message) => message["id"] === 4)).toEqual([])
    expect(fixture.progressSent()).toBe(sent)
    expect(fixture.toolCalls("slow_progress")).toBe(3)
  })

  it("log obeys logging/setLevel; weather, resources and prompts", async () => {
    const { fixture, driver } = start({ features: true, pageSize: 2 })
    await initialize(driver)
    let from = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "log", arguments: { level: "debug", message: "m", count: 2 } } })
    expect(methods(await through(driver, 2, from))).toEqual(["notifications/message", "notifications/message", "#answer"])
    expect(result(await driver.request(3, "logging/setLevel", { level: "critical" }))).toEqual({})
    expect((await driver.request(4, "logging/setLevel", { level: "nope" }))["error"]).toMatchObject({ code: -32602 })
    from = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "log", arguments: { level: "error", message: "m" } } })
    const filtered = await through(driver, 5, from)
    expect(methods(filtered)).toEqual(["#answer"])
    expect(result(filtered[0]).content[0].text).toBe("logged 0")
    expect(fixture.logMessagesSent()).toBe(2)

    const weather = result(await driver.request(6, "tools/call", { name: "weather", arguments: { city: "x", mode: "extra" } }))
    expect(weather.structuredContent).toEqual({ temperature: 1, conditions: "x", wind: 3 })
    expect(result(await driver.request(7, "tools/call", { name: "weather_error", arguments: {} }))).toMatchObject({ isError: true })

    const page1 = result(await driver.request(8, "resources/list"))
    expect(page1.resources.map((resource: { uri: string }) => resource.uri)).toEqual(["test://docs/1", "test://docs/2"])
    const page2 = result(await driver.request(9, "resources/list", { cursor: page1.nextCursor }))
    expect(page2.resources.map((resource: { uri: string }) => resource.uri)).toEqual(["test://docs/3", "test://blob/1"])
    expect(page2.nextCursor).toBeUndefined()
    const blob = result(await driver.request(10, "resources/read", { uri: "test://blob/1" }))
    expect(Buffer.from(blob.contents[0].blob, "base64")).toEqual(Buffer.from(Array.from({ length: 256 }, (_, i) => i)))
    expect((await driver.request(11, "resources/read", { uri: "test://docs/0" }))["error"]).toEqual({
      code: -32002,
      message: "Resource not found",
      data: { uri: "test://docs/0" }
    })
    expect(result(await driver.request(12, "resources/templates/list")).resourceTemplates).toHaveLength(1)
    expect(result(await driver.request(13, "prompts/list")).prompts.map((prompt: { name: string }) => prompt.name)).toEqual(["greet", "plain"])
    expect((await driver.request(14, "prompts/get", { name: "greet", arguments: {} }))["error"]).toMatchObject({ code: -32602 })
    expect(fixture.rpcCalls("resources/read")).toBe(2)
    expect(fixture.toolCalls("weather")).toBe(1)
  })

  it("change_tools: the answer, then one list_changed on stdout; the new tool is listed and callable", async () => {
    const { fixture, driver } = start({ features: true })
    await initialize(driver)
    const from = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "change_tools", arguments: { count: 2 } } })
    const index = await driver.waitForLine((line) => parseLine(line)["method"] === "notifications/tools/list_changed", 3000, from)
    expect(driver.lines.slice(from, index + 1).map(parseLine)).toEqual([
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "added 2" }] } },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" }
    ])
    const tools = result(await driver.request(3, "tools/list")).tools as Array<{ name: string }>
    expect(tools.slice(-2).map((tool) => tool.name)).toEqual(["added_1", "added_2"])
    expect(result(await driver.request(4, "tools/call", { name: "added_1", arguments: { text: "yo" } })).content[0].text).toBe("yo")
    expect(fixture.listChangedSent()).toBe(1)

    const flood = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "flood_notifications", arguments: { count: 3 } } })
    await fixture.waitFor(() => fixture.logMessagesSent() === 3)
    const flooded = await through(driver, 5, flood)
    expect(methods(flooded)).toEqual(["#answer"])
    await driver.waitForLine((line) => parseLine(line)["method"] === "notifications/message", 3000, flood)
  })
})

describe("stdio server: features, stateless era", () => {
  it("discover names the capabilities; subscriptions/listen is acknowledged, then each list_changed carries the subscriptionId", async () => {
    const { fixture, driver } = start({ era: "stateless", features: true })
    expect(result(await driver.request(1, "server/discover", modernParams())).capabilities).toEqual(CAPABILITIES)

    driver.send({
      jsonrpc: "2.0",
      id: "sub",
      method: "subscriptions/listen",
      params: modernParams({ notifications: { toolsListChanged: true, resourcesListChanged: true } })
    })
    const ack = parseLine(driver.lines[await driver.waitForLine((line) => parseLine(line)["method"] !== undefined)] ?? Buffer.alloc(0))
    expect(ack).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID]: "sub" } }
    })

    const from = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: modernParams({ name: "change_tools", arguments: {} }) })
    const index = await driver.waitForLine((line) => parseLine(line)["method"] === "notifications/tools/list_changed", 3000, from)
    expect(driver.lines.slice(from, index + 1).map(parseLine)).toEqual([
      { jsonrpc: "2.0", id: 2, result: { resultType: "complete", content: [{ type: "text", text: "added 1" }] } },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [SUBSCRIPTION_ID]: "sub" } } }
    ])

    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "sub" } })
    await fixture.waitFor(() => fixture.subscriptionsClosed() === 1)
    expect(fixture.arrivals()).toContain("notifications/cancelled")
    const after = driver.lines.length
    await driver.request(3, "tools/call", modernParams({ name: "change_tools", arguments: {} }))
    // A list change goes in the same turn as its call's answer, so one would be on the wire
    // before the answer to a later ping.
    await driver.request(4, "ping")
    expect(driver.lines.slice(after).map(parseLine).filter((message) => message["method"] !== undefined)).toEqual([])
    expect(fixture.listChangedSent()).toBe(1)
    expect(fixture.toolCalls("change_tools")).toBe(2)
  })

  it("log only under the _meta log level, at or above it; an invalid level is -32602; no logging/setLevel", async () => {
    const { fixture, driver } = start({ era: "stateless", features: true })
    let from = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: modernParams({ name: "log", arguments: { level: "alert", message: "m" } }) })
    expect(methods(await through(driver, 1, from))).toEqual(["#answer"])
    from = driver.lines.length
    driver.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: modernParams({ name: "log", arguments: { level: "warning", message: "w", count: 2 } }, { ...modernMeta(), [LOG_LEVEL]: "warning" })
    })
    const logged = await through(driver, 2, from)
    expect(methods(logged)).toEqual(["notifications/message", "notifications/message", "#answer"])
    expect(logged[0]?.["params"]).toEqual({ level: "warning", logger: "testkit", data: "w" })
    expect(fixture.logMessagesSent()).toBe(2)
    const invalid = await driver.request(
      3,
      "tools/call",
      modernParams({ name: "log", arguments: { level: "info", message: "m" } }, { ...modernMeta(), [LOG_LEVEL]: "chatty" })
    )
    expect(invalid["error"]).toMatchObject({ code: -32602 })
    expect((await driver.request(4, "logging/setLevel", modernParams({ level: "info" })))["error"]).toMatchObject({ code: -32601 })
    expect((await driver.request(5, "subscriptions/listen", modernParams({})))["error"]).toMatchObject({ code: -32602 })
  })

  it("resources and prompts carry resultType and caching hints; an unknown resource is -32602", async () => {
    const { driver } = start({ era: "stateless", features: true, ttlMs: 99 })
    expect(result(await driver.request(1, "resources/list", modernParams()))).toMatchObject({ resultType: "complete", ttlMs: 99, cacheScope: "public" })
    expect(result(await driver.request(2, "resources/read", modernParams({ uri: "test://docs/1" })))).toEqual({
      resultType: "complete",
      contents: [{ uri: "test://docs/1", mimeType: "text/plain", text: "Document 1" }],
      ttlMs: 99,
      cacheScope: "public"
    })
    expect((await driver.request(3, "resources/read", modernParams({ uri: "test://x" })))["error"]).toEqual({
      code: -32602,
      message: "Resource not found",
      data: { uri: "test://x" }
    })
    const greet = result(await driver.request(4, "prompts/get", modernParams({ name: "greet", arguments: { name: "Al" } })))
    expect(greet).toEqual({
      resultType: "complete",
      description: "Greets someone",
      messages: [{ role: "user", content: { type: "text", text: "Hello, Al" } }]
    })
    const big = result(await driver.request(5, "resources/read", modernParams({ uri: "test://big/5000" })))
    expect(Buffer.byteLength(big.contents[0].text)).toBe(5000)
  })

  it("without --features, subscriptions/listen stays unknown", async () => {
    const { driver } = start({ era: "stateless" })
    expect((await driver.request(1, "subscriptions/listen", modernParams({ notifications: { toolsListChanged: true } })))["error"])
      .toMatchObject({ code: -32601 })
  })
})
