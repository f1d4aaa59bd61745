import { afterEach, describe, expect, it } from "vitest"
import { makeStdioFixture, stdioServerScript, stdioServerCommand, type StdioFixture, type StdioFixtureOptions } from "../src/StdioServer.js"
import {
  MODERN_VERSION,
  modernMeta,
  modernParams,
  parseLine,
  spawnStdio,
  type StdioDriver
} from "./stdio-helpers.js"

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

const initializeParams = (protocolVersion = "2025-11-25") => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "stdio-test", version: "0" }
})

const SERVER_INFO = { name: "phasebound-testkit", version: "0.1.0" }
const DUAL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
const ELICITING = modernMeta({ clientCapabilities: { elicitation: {} } })
const ASK_NAME_INPUT_REQUESTS = {
  name: {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: "Your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string", default: "anon" } } }
    }
  }
}

const result = (response: Record<string, unknown>) => response["result"] as Record<string, unknown>
const toolNames = (response: Record<string, unknown>) => (result(response)["tools"] as Array<{ name: string }>).map((tool) => tool.name)
const ids = (driver: StdioDriver) => driver.lines.map((line) => parseLine(line)["id"])
const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

describe("stdio server eras: options", () => {
  it("passes era, supportedVersions, ttlMs and silentOnUnknown as arguments, nothing by default", () => {
    expect(stdioServerCommand().args).toEqual([stdioServerScript()])
    const command = stdioServerCommand({
      era: "dual",
      supportedVersions: ["2026-07-28", "2027-01-01"],
      ttlMs: 5,
      silentOnUnknown: true,
      faults: [{ kind: "unsupported-version", on: "server/discover", supported: ["2027-01-01"], times: Infinity }]
    })
    expect(command.args.slice(1)).toEqual([
      "--era",
      "dual",
      "--supported-version",
      "2026-07-28",
      "--supported-version",
      "2027-01-01",
      "--ttl-ms",
      "5",
      "--silent-on-unknown",
      "--fault",
      `{"kind":"unsupported-version","on":"server/discover","supported":["2027-01-01"],"times":null}`
    ])
    expect(command.env).toEqual({})

    expect(() => stdioServerCommand({ era: "modern" as never })).toThrow(RangeError)
    expect(() => stdioServerCommand({ supportedVersions: [] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ supportedVersions: [""] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ ttlMs: -1 })).toThrow(RangeError)
    expect(() => stdioServerCommand({ ttlMs: 1.5 })).toThrow(RangeError)
    expect(() => stdioServerCommand({ faults: [{ kind: "input-required", on: "tools/call", inputRequests: null, requestState: null }] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ faults: [{ kind: "result-type", on: "tools/call", times: 0 }] })).toThrow(RangeError)
  })
})

describe("stdio server: the handshake era stays as it was", () => {
  it("answers server/discover with -32601 and ignores modern _meta", async () => {
    const { fixture, driver } = start()
    expect(await driver.request(1, "server/discover", modernParams())).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: "Method not found: server/discover" }
    })
    const list = await driver.request(2, "tools/list", modernParams())
    expect(result(list)).not.toHaveProperty("resultType")
    expect(toolNames(list)).toEqual(["add", "echo", "increment"])
    expect((await driver.request(3, "initialize", initializeParams()))["result"]).toMatchObject({ protocolVersion: "2025-11-25" })
    expect(fixture.arrivals()).toEqual(["server/discover", "tools/list", "initialize"])
  })

  it("with silentOnUnknown never answers server/discover (nor another unknown method), and goes on serving", async () => {
    const { fixture, driver } = start({ silentOnUnknown: true })
    driver.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: modernParams() })
    driver.send({ jsonrpc: "2.0", id: 2, method: "no/such-method", params: {} })
    const init = await driver.request(3, "initialize", initializeParams())
    expect(init["result"]).toMatchObject({ protocolVersion: "2025-11-25" })
    driver.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    // The server reads lines in order and answers through one output queue: once 4 is answered,
    // an answer to 1 or 2 would already be out.
    await driver.request(4, "ping")
    expect(ids(driver)).toEqual([3, 4]) // 1 and 2 never answered
    expect(fixture.rpcCalls("server/discover")).toBe(1)
    expect(fixture.arrivals()).toEqual(["server/discover", "no/such-method", "initialize", "notifications/initialized", "ping"])
  })

  it("lets a scripted fault on server/discover win over silentOnUnknown", async () => {
    const { driver } = start({
      silentOnUnknown: true,
      faults: [{ kind: "jsonrpc-error", on: "server/discover", code: -32602, message: "Bad Request: no session" }]
    })
    expect(await driver.request(1, "server/discover", modernParams())).toMatchObject({ error: { code: -32602 } })
    driver.send({ jsonrpc: "2.0", id: 2, method: "server/discover", params: modernParams() })
    await driver.request(3, "initialize", initializeParams())
    expect(ids(driver)).toEqual([1, 3])
  })
})

describe("stdio server: the stateless era", () => {
  it("serves server/discover, tools/list and tools/call without a handshake", async () => {
    const { fixture, driver } = start({ era: "stateless" })
    expect(await driver.request(1, "server/discover", modernParams())).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} },
        _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
        ttlMs: 60_000,
        cacheScope: "public"
      }
    })
    const list = result(await driver.request(2, "tools/list", modernParams()))
    expect(list).toMatchObject({ resultType: "complete", ttlMs: 60_000, cacheScope: "public" })
    expect(Object.keys(list)).toEqual(["resultType", "tools", "ttlMs", "cacheScope"])
    expect(toolNames({ result: list })).toEqual(["add", "echo", "increment", "ask_name"])

    expect(await driver.request(3, "tools/call", modernParams({ name: "increment", arguments: {} }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { resultType: "complete", content: [{ type: "text", text: "1" }] }
    })
    expect(fixture.counter()).toBe(1)
    expect(result(await driver.request(4, "tools/call", modernParams({ name: "add", arguments: { a: 2, b: 3 } })))).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "5" }]
    })
    expect(result(await driver.request(5, "tools/call", modernParams({ name: "nope", arguments: {} })))).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "Unknown tool: nope" }],
      isError: true
    })
    // clientInfo is optional.
    const bare = modernMeta({ clientInfo: undefined })
    expect(Object.keys(bare)).toHaveLength(2)
    expect(await driver.request(6, "tools/list", { _meta: bare })).toHaveProperty("result")
    expect(fixture.arrivals()).toEqual(["server/discover", "tools/list", "tools/call", "tools/call", "tools/call", "tools/list"])
  })

  it("paginates with nextCursor, ttlMs as configured", async () => {
    const { driver } = start({ era: "stateless", extraTools: 3, pageSize: 4, ttlMs: 0 })
    const page1 = result(await driver.request(1, "tools/list", modernParams()))
    expect(page1).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "public", nextCursor: expect.any(String) })
    expect(toolNames({ result: page1 })).toEqual(["add", "echo", "increment", "ask_name"])
    const page2 = result(await driver.request(2, "tools/list", modernParams({ cursor: page1["nextCursor"] })))
    expect(toolNames({ result: page2 })).toEqual(["tool-0", "tool-1", "tool-2"])
    expect(page2).not.toHaveProperty("nextCursor")
    expect((await driver.request(3, "server/discover", modernParams()))["result"]).toMatchObject({ ttlMs: 0 })
    expect(await driver.request(4, "tools/list", modernParams({ cursor: "garbage" }))).toMatchObject({ error: { code: -32602 } })
  })

  it("refuses missing or malformed per-request _meta with -32602", async () => {
    const { driver } = start({ era: "stateless" })
    const cases: Array<unknown> = [
      undefined,
      {},
      { _meta: {} },
      { _meta: "x" },
      { _meta: modernMeta({ protocolVersion: undefined }) },
      { _meta: modernMeta({ protocolVersion: 20260728 }) },
      { _meta: modernMeta({ clientCapabilities: undefined }) },
      { _meta: modernMeta({ clientCapabilities: [] }) },
      { _meta: modernMeta({ clientCapabilities: "none" }) },
      { _meta: modernMeta({ clientInfo: "me" }) },
      { _meta: modernMeta({ clientInfo: { name: "me" } }) },
      [1, 2]
    ]
    let id = 0
    for (const params of cases) {
      id += 1
      for (const method of ["server/discover", "tools/list", "tools/call"]) {
        const message = params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }
        driver.send(message)
        const index = await driver.waitForLine((line) => parseLine(line)["id"] === id, 3000, driver.lines.length)
        const answer = parseLine(driver.lines[index] ?? Buffer.alloc(0))
        expect(answer, `${method} ${JSON.stringify(params)}`).toMatchObject({ id, error: { code: -32602 } })
        id += 1
      }
    }
  })

  it("answers an unsupported version with -32022 listing the supported ones", async () => {
    const { driver } = start({ era: "stateless" })
    const old = modernMeta({ protocolVersion: "1900-01-01" })
    for (const [id, method] of [[1, "server/discover"], [2, "tools/list"], [3, "tools/call"]] as const) {
      expect(await driver.request(id, method, modernParams({ name: "echo", arguments: { text: "x" } }, old))).toEqual({
        jsonrpc: "2.0",
        id,
        error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28"], requested: "1900-01-01" } }
      })
    }
    // A legacy revision in _meta is no modern version either.
    expect(await driver.request(4, "tools/list", modernParams({}, modernMeta({ protocolVersion: "2025-11-25" })))).toMatchObject({
      error: { code: -32022, data: { requested: "2025-11-25" } }
    })
    // The version is checked before the capabilities (as the Streamable HTTP server does).
    expect(await driver.request(5, "tools/list", { _meta: modernMeta({ protocolVersion: "1900-01-01", clientCapabilities: undefined }) }))
      .toMatchObject({ error: { code: -32022 } })
    expect(await driver.request(6, "tools/list", { _meta: modernMeta({ protocolVersion: undefined, clientCapabilities: undefined }) }))
      .toMatchObject({ error: { code: -32602 } })
  })

  it("dual: a supportedVersions list of its own is named as given", async () => {
    const { driver } = start({ era: "dual", supportedVersions: ["2027-01-01", "2025-06-18"] })
    expect(result(await driver.request(1, "server/discover", modernParams({}, modernMeta({ protocolVersion: "2027-01-01" })))))
      .toMatchObject({ supportedVersions: ["2027-01-01", "2025-06-18"] })
    expect(await driver.request(2, "tools/list", modernParams())).toMatchObject({
      error: { code: -32022, data: { supported: ["2027-01-01", "2025-06-18"], requested: "2026-07-28" } }
    })
    expect((await driver.request(3, "initialize", initializeParams("2025-06-18")))["result"]).toMatchObject({ protocolVersion: "2025-06-18" })
  })

  it("serves the versions of supportedVersions and lists them", async () => {
    const { driver } = start({ era: "stateless", supportedVersions: ["2027-01-01", "2026-07-28"] })
    expect(result(await driver.request(1, "server/discover", modernParams()))["supportedVersions"]).toEqual(["2027-01-01", "2026-07-28"])
    expect(await driver.request(2, "tools/list", modernParams({}, modernMeta({ protocolVersion: "2027-01-01" })))).toHaveProperty("result")
    expect(await driver.request(3, "tools/list", modernParams({}, modernMeta({ protocolVersion: "2026-01-01" })))).toMatchObject({
      error: { code: -32022, data: { supported: ["2027-01-01", "2026-07-28"], requested: "2026-01-01" } }
    })
  })

  it("refuses initialize with -32022 naming its versions; knows no ping; ignores notifications/initialized", async () => {
    const { fixture, driver } = start({ era: "stateless", supportedVersions: ["2026-07-28", "2027-01-01"] })
    expect(await driver.request(1, "initialize", initializeParams())).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32022,
        message: "Unsupported protocol version",
        data: { supported: ["2026-07-28", "2027-01-01"], requested: "2025-11-25" }
      }
    })
    driver.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    expect(await driver.request(2, "ping", modernParams())).toMatchObject({ error: { code: -32601 } })
    expect(await driver.request(3, "ping")).toMatchObject({ error: { code: -32601 } })
    expect(ids(driver)).toEqual([1, 2, 3])
    expect(fixture.arrivals()).toEqual(["initialize", "notifications/initialized", "ping", "ping"])
  })

  it("counts cancellations, and sends nothing more for a cancelled request whose answer was held back", async () => {
    const { fixture, driver } = start({ era: "stateless", faults: [{ kind: "delay", on: "tools/call", ms: 300, times: 2 }] })
    driver.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: modernParams({ name: "increment", arguments: {} }) })
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: modernParams({ name: "increment", arguments: {} }) })
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "deadline" } })
    // 1's delay started before 2's and is as long: had it not been dropped, its answer would have
    // gone out before 2's (the later request 3 checks it again).
    await driver.waitForLine((line) => parseLine(line)["id"] === 2)
    expect(ids(driver)).toEqual([2]) // 1 was cancelled: never answered
    expect(fixture.rpcCalls("notifications/cancelled")).toBe(1)
    expect(fixture.counter()).toBe(2) // the work happened on arrival
    // A cancellation for an unknown or already answered request is ignored.
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } })
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "nope" } })
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled" })
    await driver.request(3, "tools/list", modernParams())
    expect(fixture.rpcCalls("notifications/cancelled")).toBe(4)
    expect(ids(driver)).toEqual([2, 3])
  })

  it("the handshake era still sends a held-back answer after its cancellation, as before", async () => {
    const { fixture, driver } = start({ faults: [{ kind: "delay", on: "tools/call", ms: 200 }] })
    await driver.request(1, "initialize", initializeParams())
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "increment", arguments: {} } })
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } })
    await driver.waitForLine((line) => parseLine(line)["id"] === 2)
    expect(fixture.rpcCalls("notifications/cancelled")).toBe(1)
  })
})

describe("stdio server: the dual era", () => {
  it("serves modern requests statelessly and initialize with the handshake, in one process", async () => {
    const { fixture, driver } = start({ era: "dual" })
    // It names the handshake versions too; those are served through initialize only.
    expect(result(await driver.request(1, "server/discover", modernParams()))).toMatchObject({
      resultType: "complete",
      supportedVersions: DUAL_VERSIONS
    })
    // server/discover belongs to the stateless era only: without _meta it is malformed.
    expect(await driver.request(2, "server/discover")).toMatchObject({ error: { code: -32602 } })
    expect(await driver.request(3, "server/discover", modernParams({}, modernMeta({ protocolVersion: "2025-11-25" })))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32022, message: "Unsupported protocol version", data: { supported: DUAL_VERSIONS, requested: "2025-11-25" } }
    })

    expect(await driver.request(4, "initialize", initializeParams("2025-06-18"))).toMatchObject({
      result: { protocolVersion: "2025-06-18", serverInfo: SERVER_INFO }
    })
    driver.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    const legacy = await driver.request(5, "tools/list")
    expect(result(legacy)).not.toHaveProperty("resultType")
    expect(toolNames(legacy)).toEqual(["add", "echo", "increment"])
    expect(result(await driver.request(6, "tools/call", { name: "ask_name", arguments: {} }))).toEqual({
      content: [{ type: "text", text: "Unknown tool: ask_name" }],
      isError: true
    })
    expect(await driver.request(7, "ping")).toEqual({ jsonrpc: "2.0", id: 7, result: {} })

    const modern = await driver.request(8, "tools/list", modernParams())
    expect(result(modern)).toMatchObject({ resultType: "complete", cacheScope: "public" })
    expect(toolNames(modern)).toEqual(["add", "echo", "increment", "ask_name"])
    expect(result(await driver.request(9, "tools/call", modernParams({ name: "increment", arguments: {} })))).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "1" }]
    })
    expect(result(await driver.request(10, "tools/call", { name: "increment", arguments: {} }))).toEqual({
      content: [{ type: "text", text: "2" }]
    })
    // A request with only part of the modern _meta is a malformed modern request.
    expect(await driver.request(11, "tools/list", { _meta: modernMeta({ clientCapabilities: undefined }) })).toMatchObject({
      error: { code: -32602 }
    })
    expect(fixture.counter()).toBe(2)
    expect(fixture.rpcCalls("server/discover")).toBe(3)
    expect(fixture.rpcCalls("initialize")).toBe(1)
  })
})

describe("stdio server: multi round-trip requests (ask_name)", () => {
  it("asks for a name, then greets the name of the retry", async () => {
    const { fixture, driver } = start({ era: "stateless" })
    const first = await driver.request(1, "tools/call", modernParams({ name: "ask_name", arguments: {} }, ELICITING))
    const asked = result(first)
    expect(Object.keys(asked)).toEqual(["resultType", "inputRequests", "requestState"])
    expect(asked).toEqual({ resultType: "input_required", inputRequests: ASK_NAME_INPUT_REQUESTS, requestState: expect.any(String) })
    const requestState = asked["requestState"] as string

    const retry = (id: number, extra: Record<string, unknown>) =>
      driver.request(id, "tools/call", modernParams({ name: "ask_name", arguments: {}, ...extra }, ELICITING))

    expect(await retry(2, { inputResponses: { name: { action: "accept", content: { name: "Ada" } } }, requestState })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { resultType: "complete", content: [{ type: "text", text: "hello Ada" }] }
    })
    // No name in an accepted form: the schema's default.
    expect(result(await retry(3, { inputResponses: { name: { action: "accept", content: {} } }, requestState }))).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "hello anon" }]
    })
    expect(result(await retry(4, { inputResponses: { name: { action: "decline" } }, requestState }))).toMatchObject({
      resultType: "complete",
      isError: true
    })
    // The state is right, the input is missing: asked again, with a fresh state.
    const again = result(await retry(5, { inputResponses: {}, requestState }))
    expect(again).toMatchObject({ resultType: "input_required", inputRequests: ASK_NAME_INPUT_REQUESTS })
    expect(again["requestState"]).not.toBe(requestState)
    expect(fixture.rpcCalls("tools/call")).toBe(5)
  })

  it("refuses an unknown, edited or missing requestState with -32602 invalid requestState", async () => {
    const { driver } = start({ era: "stateless" })
    const asked = result(await driver.request(1, "tools/call", modernParams({ name: "ask_name", arguments: {} }, ELICITING)))
    const requestState = asked["requestState"] as string
    const answer = { name: { action: "accept", content: { name: "Ada" } } }
    const edited = requestState.slice(0, -2) + (requestState.endsWith("AA") ? "BB" : "AA")
    const [payload] = requestState.split(".")
    let id = 1
    for (const state of ["garbage", edited, `${payload}.`, `${requestState}.x`, 42, ""] as const) {
      id += 1
      expect(
        await driver.request(id, "tools/call", modernParams({ name: "ask_name", arguments: {}, inputResponses: answer, requestState: state }, ELICITING)),
        String(state)
      ).toEqual({ jsonrpc: "2.0", id, error: { code: -32602, message: "invalid requestState" } })
    }
    // inputResponses without the requestState that came with the question.
    expect(await driver.request(20, "tools/call", modernParams({ name: "ask_name", arguments: {}, inputResponses: answer }, ELICITING))).toEqual({
      jsonrpc: "2.0",
      id: 20,
      error: { code: -32602, message: "invalid requestState" }
    })
    expect(
      await driver.request(21, "tools/call", modernParams({ name: "ask_name", arguments: {}, inputResponses: "Ada", requestState }, ELICITING))
    ).toMatchObject({ error: { code: -32602 } })
    // The real one still works.
    expect(
      result(await driver.request(22, "tools/call", modernParams({ name: "ask_name", arguments: {}, inputResponses: answer, requestState }, ELICITING)))
    ).toMatchObject({ content: [{ type: "text", text: "hello Ada" }] })
  })

  it("keeps no state: a requestState from one process is good in another", async () => {
    const a = start({ era: "stateless" }).driver
    const asked = result(await a.request(1, "tools/call", modernParams({ name: "ask_name", arguments: {} }, ELICITING)))
    const b = start({ era: "dual" }).driver
    const retried = await b.request(
      1,
      "tools/call",
      modernParams({
        name: "ask_name",
        arguments: {},
        inputResponses: { name: { action: "accept", content: { name: "Grace" } } },
        requestState: asked["requestState"]
      }, ELICITING)
    )
    expect(result(retried)).toEqual({ resultType: "complete", content: [{ type: "text", text: "hello Grace" }] })
  })

  it("asks nothing of a client that did not declare elicitation (-32021)", async () => {
    const { driver } = start({ era: "stateless" })
    expect(await driver.request(1, "tools/call", modernParams({ name: "ask_name", arguments: {} }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32021,
        message: "Server requires the elicitation capability for this request",
        data: { requiredCapabilities: { elicitation: {} } }
      }
    })
  })
})

describe("stdio server: stateless-era faults", () => {
  it("unsupported-version: -32022 with a scripted supported list, forever if asked", async () => {
    const { fixture, driver } = start({
      era: "stateless",
      faults: [{ kind: "unsupported-version", on: "server/discover", supported: ["2027-01-01"], times: Infinity }]
    })
    for (let id = 1; id <= 4; id++) {
      expect(await driver.request(id, "server/discover", modernParams())).toEqual({
        jsonrpc: "2.0",
        id,
        error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2027-01-01"], requested: MODERN_VERSION } }
      })
    }
    expect(fixture.rpcCalls("server/discover")).toBe(4)
    // Other methods are unaffected.
    expect(await driver.request(5, "tools/list", modernParams())).toHaveProperty("result")
  })

  it("unsupported-version on initialize is how a modern-only server refuses a legacy client, on any era", async () => {
    const { driver } = start({ faults: [{ kind: "unsupported-version", on: "initialize" }] })
    expect(await driver.request(1, "initialize", initializeParams())).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28"], requested: "2025-11-25" } }
    })
    expect((await driver.request(2, "initialize", initializeParams()))["result"]).toMatchObject({ protocolVersion: "2025-11-25" })
  })

  it("input-required forever on tools/call; once used up, the retry is an ordinary call", async () => {
    const forever = start({ era: "stateless", faults: [{ kind: "input-required", on: "tools/call", times: Infinity }] })
    let state: unknown
    for (let id = 1; id <= 3; id++) {
      const params = id === 1
        ? { name: "echo", arguments: { text: "x" } }
        : { name: "echo", arguments: { text: "x" }, inputResponses: { name: { action: "accept", content: { name: "Ada" } } }, requestState: state }
      const answer = result(await forever.driver.request(id, "tools/call", modernParams(params)))
      expect(answer).toMatchObject({ resultType: "input_required", inputRequests: ASK_NAME_INPUT_REQUESTS, requestState: expect.any(String) })
      expect(answer["requestState"]).not.toBe(state)
      state = answer["requestState"]
    }

    const once = start({
      era: "stateless",
      faults: [{ kind: "input-required", on: "tools/call", inputRequests: null, requestState: "shed-load" }]
    })
    expect(result(await once.driver.request(1, "tools/call", modernParams({ name: "increment", arguments: {} })))).toEqual({
      resultType: "input_required",
      requestState: "shed-load"
    })
    expect(once.fixture.counter()).toBe(1) // the fault replaces only the answer
    expect(result(await once.driver.request(2, "tools/call", modernParams({ name: "echo", arguments: { text: "y" }, requestState: "shed-load" })))).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "y" }]
    })

    // Its default requestState is one ask_name accepts.
    const askFirst = start({ era: "stateless", faults: [{ kind: "input-required", on: "tools/call" }] })
    const asked = result(await askFirst.driver.request(1, "tools/call", modernParams({ name: "ask_name", arguments: {} }, ELICITING)))
    expect(
      result(
        await askFirst.driver.request(
          2,
          "tools/call",
          modernParams({
            name: "ask_name",
            arguments: {},
            inputResponses: { name: { action: "accept", content: { name: "Lin" } } },
            requestState: asked["requestState"]
          }, ELICITING)
        )
      )
    ).toMatchObject({ content: [{ type: "text", text: "hello Lin" }] })
  })

  it("result-type: an unknown resultType, or none", async () => {
    const { driver } = start({
      era: "stateless",
      faults: [
        { kind: "result-type", on: "tools/call", value: "bogus" },
        { kind: "result-type", on: "server/discover", value: null },
        { kind: "result-type", on: "tools/list" }
      ]
    })
    expect(result(await driver.request(1, "tools/call", modernParams({ name: "echo", arguments: { text: "x" } })))).toEqual({
      resultType: "bogus",
      content: [{ type: "text", text: "x" }]
    })
    const discovered = result(await driver.request(2, "server/discover", modernParams()))
    expect(discovered).not.toHaveProperty("resultType")
    expect(discovered).toMatchObject({ supportedVersions: ["2026-07-28"] })
    expect(result(await driver.request(3, "tools/list", modernParams()))).toMatchObject({ resultType: "bogus", cacheScope: "public" })
    expect(result(await driver.request(4, "tools/call", modernParams({ name: "echo", arguments: { text: "x" } })))).toMatchObject({
      resultType: "complete"
    })
    // An error answer is sent as is.
    const onError = start({ era: "stateless", faults: [{ kind: "result-type", on: "tools/list", value: "bogus" }] }).driver
    expect(await onError.request(1, "tools/list", modernParams({}, modernMeta({ protocolVersion: "1900-01-01" })))).toMatchObject({
      error: { code: -32022 }
    })
    expect(result(await onError.request(2, "tools/list", modernParams()))).toMatchObject({ resultType: "complete" })
  })

  for (const [on, bytes] of [["server/discover", 600], ["tools/call", 400], ["tools/list", 1200]] as const) {
    it(`exact-size on ${on}: a stateless answer of exactly ${bytes} bytes that keeps its fields`, async () => {
      const { driver } = start({ era: "stateless", faults: [{ kind: "exact-size", on, bytes, chunkSize: 3, chunkDelayMs: 1 }] })
      const before = driver.stdoutBytes()
      const params = on === "tools/call" ? modernParams({ name: "echo", arguments: { text: "x" } }) : modernParams()
      const answer = result(await driver.request(9, on, params))
      const wire = driver.stdout().subarray(before)
      expect(wire.length).toBe(bytes)
      expect(() => strictUtf8.decode(wire)).not.toThrow()
      expect(answer["resultType"]).toBe("complete")
      if (on === "server/discover") {
        expect(answer).toMatchObject({
          supportedVersions: ["2026-07-28"],
          _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO },
          instructions: expect.any(String),
          ttlMs: 60_000,
          cacheScope: "public"
        })
      }
      if (on === "tools/list") expect(answer).toMatchObject({ ttlMs: 60_000, cacheScope: "public" })
    })
  }

  it("exact-size, delay and never-answer on server/discover in the handshake era too", async () => {
    const { driver } = start({
      faults: [
        { kind: "never-answer", on: "server/discover" },
        { kind: "delay", on: "server/discover", ms: 250 },
        { kind: "exact-size", on: "server/discover", bytes: 300 }
      ]
    })
    driver.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: modernParams() })
    const sentAt = Date.now()
    expect(await driver.request(2, "server/discover", modernParams())).toMatchObject({ error: { code: -32601 } })
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(240)
    const before = driver.stdoutBytes()
    await driver.request(3, "server/discover", modernParams())
    expect(driver.stdout().length - before).toBe(300)
    expect(ids(driver)).toEqual([2, 3])
  })

  it("delay and never-answer on server/discover in the stateless era", async () => {
    const { fixture, driver } = start({
      era: "stateless",
      faults: [
        { kind: "never-answer", on: "server/discover" },
        { kind: "delay", on: "server/discover", ms: 250 }
      ]
    })
    driver.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: modernParams() })
    const sentAt = Date.now()
    expect(await driver.request(2, "server/discover", modernParams())).toMatchObject({ result: { resultType: "complete" } })
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(240)
    expect(ids(driver)).toEqual([2])
    expect(fixture.rpcCalls("server/discover")).toBe(2)
  })
})
