import { afterEach, describe, expect, it } from "vitest"
import {
  encodeHeaderValue,
  headerAnnotations,
  INVALID_HEADER_TOOLS,
  startServer,
  type TestServer,
  type TestServerOptions
} from "../src/index.js"
import { callTool, handshake, post } from "./helpers.js"

const servers: Array<TestServer> = []
const start = async (options?: TestServerOptions) => {
  const server = await startServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const VERSION = "2026-07-28"
const CLIENT_INFO = { name: "modern-test", version: "1.0.0" }

interface ModernOptions {
  readonly id?: number | string
  readonly version?: string
  readonly capabilities?: Record<string, unknown>
  /** Replaces the whole `_meta` (undefined keeps the default; null leaves `_meta` out). */
  readonly meta?: Record<string, unknown> | null
  /** Header overrides: a string replaces, null removes. */
  readonly headers?: Record<string, string | null>
  readonly notification?: boolean
  readonly signal?: AbortSignal
}

/** What a correct 2026-07-28 client sends: `_meta` in the body, the metadata headers on the POST. */
const modern = (server: TestServer, method: string, params: Record<string, unknown> = {}, options: ModernOptions = {}) => {
  const version = options.version ?? VERSION
  const meta = options.meta === null ? undefined : options.meta ?? {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO
  }
  const fullParams = meta === undefined ? params : { ...params, _meta: meta }
  const message = options.notification === true
    ? { jsonrpc: "2.0", method, params: fullParams }
    : { jsonrpc: "2.0", id: options.id ?? 1, method, params: fullParams }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": version,
    "mcp-method": method
  }
  const name = method === "resources/read" ? params["uri"] : params["name"]
  if (typeof name === "string" && ["tools/call", "prompts/get", "resources/read"].includes(method)) {
    headers["mcp-name"] = name
  }
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[key.toLowerCase()]
    else headers[key.toLowerCase()] = value
  }
  return fetch(server.url, {
    method: "POST",
    headers,
    body: JSON.stringify(message),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
}

const modernCall = (server: TestServer, name: string, args: Record<string, unknown>, options: ModernOptions = {}) =>
  modern(server, "tools/call", { name, arguments: args }, options)

interface RpcBody {
  readonly jsonrpc: "2.0"
  readonly id: string | number | null
  readonly result?: any
  readonly error?: { readonly code: number; readonly message: string; readonly data?: any }
}

const json = async (response: Response): Promise<RpcBody> => (await response.json()) as RpcBody

/** Expects an HTTP status and a JSON-RPC error code; returns the body. */
const expectRefusal = async (response: Response, status: number, code: number): Promise<RpcBody> => {
  const body = await json(response)
  expect({ status: response.status, code: body.error?.code }).toEqual({ status, code })
  return body
}

const textOf = (body: RpcBody): string | undefined => body.result?.content?.[0]?.text

describe("stateless era: what a correct 2026 client sends gets correct answers", () => {
  it("server/discover names versions, capabilities, serverInfo and cache hints; no session is minted", async () => {
    const server = await start({ era: "stateless", instructions: "be nice" })
    const response = await modern(server, "server/discover", {}, { id: "discover-1" })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(response.headers.get("mcp-session-id")).toBeNull()
    expect(await json(response)).toEqual({
      jsonrpc: "2.0",
      id: "discover-1",
      result: {
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} },
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "phasebound-testkit", version: "0.1.0" } },
        instructions: "be nice",
        ttlMs: 60_000,
        cacheScope: "public"
      }
    })
    // The recorder keeps the headers (lower-case names), the raw and the parsed body, and `_meta`.
    const recorded = server.requests[0]
    expect(recorded?.headers["mcp-method"]).toBe("server/discover")
    expect(recorded?.headers["mcp-protocol-version"]).toBe(VERSION)
    expect(recorded?.rpcMethod).toBe("server/discover")
    expect(recorded?.rpcId).toBe("discover-1")
    expect(recorded?.json).toMatchObject({ method: "server/discover", params: { _meta: {} } })
    expect(recorded?.meta).toEqual({
      "io.modelcontextprotocol/protocolVersion": VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": CLIENT_INFO
    })
    expect(server.rpcCalls("server/discover")).toBe(1)
  })

  it("tools/list lists the era's tools with resultType and cache hints, paginated", async () => {
    const server = await start({ era: "stateless", ttlMs: 0 })
    const body = await json(await modern(server, "tools/list"))
    expect(body.result.resultType).toBe("complete")
    expect(body.result.ttlMs).toBe(0)
    expect(body.result.cacheScope).toBe("public")
    expect(body.result.nextCursor).toBeUndefined()
    expect(body.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "add",
      "echo",
      "increment",
      "region_query",
      "ask_name"
    ])
    const region = body.result.tools.find((tool: { name: string }) => tool.name === "region_query")
    expect(region.inputSchema).toEqual({
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" }, query: { type: "string" } },
      required: ["query"]
    })

    const paged = await start({ era: "stateless", pageSize: 2, extraTools: 2 })
    const names: Array<string> = []
    let cursor: string | undefined
    do {
      const page = await json(await modern(paged, "tools/list", cursor === undefined ? {} : { cursor }))
      expect(page.result.resultType).toBe("complete")
      for (const tool of page.result.tools as Array<{ name: string }>) names.push(tool.name)
      cursor = page.result.nextCursor
    } while (cursor !== undefined)
    expect(names).toEqual(["add", "echo", "increment", "region_query", "ask_name", "tool-0", "tool-1"])
  })

  it("tools/call answers with resultType complete, as JSON or as one SSE event without ids", async () => {
    const server = await start({ era: "stateless" })
    expect(await json(await modernCall(server, "add", { a: 2, b: 3 }, { id: 3 }))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { resultType: "complete", content: [{ type: "text", text: "5" }] }
    })
    expect(textOf(await json(await modernCall(server, "increment", {})))).toBe("1")
    expect(server.counter()).toBe(1)
    const unknown = await json(await modernCall(server, "nope", {}))
    expect(unknown.result).toMatchObject({ resultType: "complete", isError: true })

    const sse = await start({ era: "stateless", mode: "sse" })
    const response = await modernCall(sse, "echo", { text: "hi" }, { id: 7 })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const message = { jsonrpc: "2.0", id: 7, result: { resultType: "complete", content: [{ type: "text", text: "hi" }] } }
    expect(await response.text()).toBe(`event: message\ndata: ${JSON.stringify(message)}\n\n`)
  })

  it("Mcp-Name and Mcp-Param-* may use the Base64 sentinel form", async () => {
    const server = await start({ era: "stateless" })
    const plain = await modernCall(server, "region_query", { region: "us-west1", query: "q" }, {
      headers: { "Mcp-Param-Region": "us-west1" }
    })
    expect(textOf(await json(plain))).toBe("us-west1:q")

    const encoded = await modernCall(server, "region_query", { region: "Zürich ", query: "SELECT 1" }, {
      headers: { "Mcp-Name": encodeHeaderValue("region_query"), "Mcp-Param-Region": encodeHeaderValue("Zürich ") }
    })
    expect(textOf(await json(encoded))).toBe("Zürich :SELECT 1")

    // A value that looks like the sentinel itself travels encoded.
    const literal = "=?base64?literal?="
    const sentinel = await modernCall(server, "region_query", { region: literal, query: "q" }, {
      headers: { "Mcp-Param-Region": encodeHeaderValue(literal) }
    })
    expect(textOf(await json(sentinel))).toBe(`${literal}:q`)
  })

  it("a parameter absent or null in the arguments needs no header", async () => {
    const server = await start({ era: "stateless" })
    expect(textOf(await json(await modernCall(server, "region_query", { query: "q" })))).toBe(":q")
    expect(textOf(await json(await modernCall(server, "region_query", { region: null, query: "q" })))).toBe(":q")
  })

  it("integer, boolean and nested x-mcp-header parameters (typedHeaderTool)", async () => {
    const server = await start({ era: "stateless", typedHeaderTool: true })
    const list = await json(await modern(server, "tools/list"))
    expect(list.result.tools.map((tool: { name: string }) => tool.name)).toContain("typed_headers")
    const args = { count: 42, flag: false, target: { zone: "a" } }
    const ok = await modernCall(server, "typed_headers", args, {
      headers: { "Mcp-Param-Count": "42", "Mcp-Param-Flag": "false", "Mcp-Param-Zone": "a" }
    })
    expect(JSON.parse(textOf(await json(ok)) ?? "")).toEqual(args)
    // Integers compare numerically.
    const numeric = await modernCall(server, "typed_headers", { count: -7 }, { headers: { "Mcp-Param-Count": "-7.0" } })
    expect(numeric.status).toBe(200)
    await numeric.arrayBuffer()
    const badFlag = await modernCall(server, "typed_headers", { flag: true }, { headers: { "Mcp-Param-Flag": "TRUE" } })
    await expectRefusal(badFlag, 400, -32020)
    const missingNested = await modernCall(server, "typed_headers", { target: { zone: "b" } })
    expect((await expectRefusal(missingNested, 400, -32020)).error?.message).toContain("Mcp-Param-Zone")
  })

  it("a notification gets 202; Mcp-Session-Id and Last-Event-ID are ignored; GET and DELETE are 405", async () => {
    const server = await start({ era: "stateless" })
    const notification = await modern(server, "notifications/whatever", {}, { notification: true })
    expect(notification.status).toBe(202)
    expect(await notification.text()).toBe("")

    const withSession = await modern(server, "tools/list", {}, {
      headers: { "Mcp-Session-Id": "stale-session", "Last-Event-ID": "abc-1" }
    })
    expect(withSession.status).toBe(200)
    expect(withSession.headers.get("mcp-session-id")).toBeNull()
    await withSession.arrayBuffer()

    const get = await fetch(server.url, { headers: { accept: "text/event-stream", "last-event-id": "abc-1" } })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST")
    await get.arrayBuffer()
    const del = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": "stale-session" } })
    expect(del.status).toBe(405)
    await del.arrayBuffer()
    expect(server.deletes()).toBe(1)
  })
})

describe("stateless era: each validation failure gets its 400 and its code", () => {
  it("missing or malformed _meta is 400 + -32602 (Invalid params)", async () => {
    const server = await start({ era: "stateless" })
    await expectRefusal(await modern(server, "tools/list", {}, { meta: null }), 400, -32602)
    const noVersion = { "io.modelcontextprotocol/clientCapabilities": {} }
    await expectRefusal(await modern(server, "tools/list", {}, { meta: noVersion }), 400, -32602)
    const noCapabilities = { "io.modelcontextprotocol/protocolVersion": VERSION }
    await expectRefusal(await modern(server, "tools/list", {}, { meta: noCapabilities }), 400, -32602)
    const badCapabilities = { ...noCapabilities, "io.modelcontextprotocol/clientCapabilities": [] }
    await expectRefusal(await modern(server, "tools/list", {}, { meta: badCapabilities }), 400, -32602)
    const badInfo = {
      ...noCapabilities,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "x" }
    }
    await expectRefusal(await modern(server, "tools/list", {}, { meta: badInfo }), 400, -32602)
    // clientInfo is only a SHOULD.
    const minimal = { ...noCapabilities, "io.modelcontextprotocol/clientCapabilities": {} }
    const ok = await modern(server, "tools/list", {}, { meta: minimal })
    expect(ok.status).toBe(200)
    await ok.arrayBuffer()
  })

  it("MCP-Protocol-Version missing or not the _meta version is 400 + -32020 (HeaderMismatch)", async () => {
    const server = await start({ era: "stateless" })
    await expectRefusal(await modern(server, "tools/list", {}, { headers: { "MCP-Protocol-Version": null } }), 400, -32020)
    const mismatch = await modern(server, "tools/list", {}, { headers: { "MCP-Protocol-Version": "2025-11-25" } })
    await expectRefusal(mismatch, 400, -32020)
  })

  it("an unsupported version is 400 + -32022 with data {supported, requested}", async () => {
    const server = await start({ era: "stateless" })
    const body = await expectRefusal(await modern(server, "tools/list", {}, { id: 4, version: "1999-01-01" }), 400, -32022)
    expect(body).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: {
        code: -32022,
        message: "Unsupported protocol version",
        data: { supported: ["2026-07-28"], requested: "1999-01-01" }
      }
    })
    const custom = await start({ era: "stateless", supportedVersions: ["2027-01-01", "2026-07-28"] })
    const accepted = await modern(custom, "server/discover", {}, { version: "2027-01-01" })
    expect((await json(accepted)).result.supportedVersions).toEqual(["2027-01-01", "2026-07-28"])
  })

  it("Mcp-Method and Mcp-Name missing or mismatching are 400 + -32020; nothing runs", async () => {
    const server = await start({ era: "stateless" })
    await expectRefusal(await modern(server, "tools/list", {}, { headers: { "Mcp-Method": null } }), 400, -32020)
    await expectRefusal(await modern(server, "tools/list", {}, { headers: { "Mcp-Method": "tools/call" } }), 400, -32020)
    await expectRefusal(await modernCall(server, "increment", {}, { headers: { "Mcp-Name": null } }), 400, -32020)
    await expectRefusal(await modernCall(server, "increment", {}, { headers: { "Mcp-Name": "add" } }), 400, -32020)
    // Values are case-sensitive; the sentinel must hold valid Base64 of the name.
    await expectRefusal(await modernCall(server, "increment", {}, { headers: { "Mcp-Name": "Increment" } }), 400, -32020)
    await expectRefusal(await modernCall(server, "increment", {}, { headers: { "Mcp-Name": "=?base64?!!!?=" } }), 400, -32020)
    await expectRefusal(
      await modernCall(server, "increment", {}, { headers: { "Mcp-Name": encodeHeaderValue("add") } }),
      400,
      -32020
    )
    expect(server.counter()).toBe(0)
  })

  it("Mcp-Param-* missing, mismatching or unexpected is 400 + -32020", async () => {
    const server = await start({ era: "stateless" })
    const args = { region: "eu", query: "q" }
    const missing = await expectRefusal(await modernCall(server, "region_query", args), 400, -32020)
    expect(missing.error?.message).toContain("Mcp-Param-Region")
    await expectRefusal(await modernCall(server, "region_query", args, { headers: { "Mcp-Param-Region": "us" } }), 400, -32020)
    await expectRefusal(
      await modernCall(server, "region_query", args, { headers: { "Mcp-Param-Region": encodeHeaderValue("us") } }),
      400,
      -32020
    )
    await expectRefusal(
      await modernCall(server, "region_query", { query: "q" }, { headers: { "Mcp-Param-Region": "eu" } }),
      400,
      -32020
    )
    // Header names are case-insensitive.
    const ok = await modernCall(server, "region_query", args, { headers: { "mcp-param-region": "eu" } })
    expect(textOf(await json(ok))).toBe("eu:q")
  })

  it("an unknown method is 404 + -32601 (ping is not a 2026-07-28 method)", async () => {
    const server = await start({ era: "stateless" })
    await expectRefusal(await modern(server, "nope/nope"), 404, -32601)
    await expectRefusal(await modern(server, "ping"), 404, -32601)
  })

  it("initialize is refused with 400 + -32022 naming the supported versions", async () => {
    const server = await start({ era: "stateless" })
    const refused = await post(server, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "legacy", version: "0" }
    })
    expect(refused.headers.get("mcp-session-id")).toBeNull()
    const body = await expectRefusal(refused, 400, -32022)
    expect(body.error?.data).toEqual({ supported: ["2026-07-28"], requested: "2025-06-18" })
  })
})

describe("MRTR: ask_name", () => {
  const elicitation = { elicitation: {} }

  it("asks by input_required, then greets the retry that carries inputResponses and the requestState", async () => {
    const server = await start({ era: "stateless" })
    const first = await json(await modernCall(server, "ask_name", {}, { id: 1, capabilities: elicitation }))
    expect(first.result).toEqual({
      resultType: "input_required",
      inputRequests: {
        name: {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: "Your name?",
            requestedSchema: { type: "object", properties: { name: { type: "string", default: "anon" } } }
          }
        }
      },
      requestState: expect.any(String)
    })
    expect(server.inputRounds()).toBe(1)
    const requestState: string = first.result.requestState

    const retry = await modern(server, "tools/call", {
      name: "ask_name",
      arguments: {},
      inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
      requestState
    }, { id: 2, capabilities: elicitation })
    expect(await json(retry)).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { resultType: "complete", content: [{ type: "text", text: "hello Ada" }] }
    })
    expect(server.inputRounds()).toBe(1)
    expect(server.requests.map((request) => request.rpcId)).toEqual([1, 2])

    const forged = await modern(server, "tools/call", {
      name: "ask_name",
      arguments: {},
      inputResponses: { name: { action: "accept", content: { name: "Eve" } } },
      requestState: requestState + "x"
    }, { id: 3, capabilities: elicitation })
    const error = (await json(forged)).error
    expect(error).toEqual({ code: -32602, message: "invalid requestState" })
  })

  it("asks again when the answer is missing; decline is an isError result", async () => {
    const server = await start({ era: "stateless", mode: "sse" })
    const parse = async (response: Response) => JSON.parse((await response.text()).replace(/^event: message\ndata: /, "")) as RpcBody
    const first = await parse(await modernCall(server, "ask_name", {}, { capabilities: elicitation }))
    const again = await parse(
      await modern(server, "tools/call", { name: "ask_name", requestState: first.result.requestState }, {
        id: 2,
        capabilities: elicitation
      })
    )
    expect(again.result.resultType).toBe("input_required")
    const declined = await parse(
      await modern(server, "tools/call", {
        name: "ask_name",
        inputResponses: { name: { action: "decline" } },
        requestState: again.result.requestState
      }, { id: 3, capabilities: elicitation })
    )
    expect(declined.result).toMatchObject({ resultType: "complete", isError: true })
    expect(server.inputRounds()).toBe(2)
  })

  it("a client that did not declare elicitation gets 400 + -32021", async () => {
    const server = await start({ era: "stateless" })
    const body = await expectRefusal(await modernCall(server, "ask_name", {}), 400, -32021)
    expect(body.error?.data).toEqual({ requiredCapabilities: { elicitation: {} } })
    expect(server.inputRounds()).toBe(0)
  })
})

describe("invalid x-mcp-header declarations (invalidHeaderTools)", () => {
  it("lists one invalid tool per rule next to the valid region_query", async () => {
    const server = await start({ era: "stateless", invalidHeaderTools: true })
    const tools = (await json(await modern(server, "tools/list"))).result.tools as Array<{ name: string; inputSchema: unknown }>
    expect(tools.map((tool) => tool.name)).toEqual([
      "add",
      "echo",
      "increment",
      "region_query",
      "ask_name",
      "bad_header_empty",
      "bad_header_space",
      "bad_header_duplicate",
      "bad_header_number",
      "bad_header_in_items",
      "bad_header_in_oneof"
    ])
    const invalid = tools.filter((tool) => !headerAnnotations(tool.inputSchema).valid).map((tool) => tool.name)
    expect(invalid).toEqual(INVALID_HEADER_TOOLS.map((tool) => tool.name))
    // Without the option (and in the handshake era) they are not listed.
    const plain = await start({ era: "stateless" })
    const names = (await json(await modern(plain, "tools/list"))).result.tools.map((tool: { name: string }) => tool.name)
    expect(names).not.toContain("bad_header_empty")
  })
})

describe("dual era", () => {
  it("serves 2026 requests statelessly and initialize as a 2025 session, side by side", async () => {
    const server = await start({ era: "dual" })
    const discover = await json(await modern(server, "server/discover"))
    expect(discover.result.supportedVersions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    const modernList = await json(await modern(server, "tools/list"))
    expect(modernList.result.resultType).toBe("complete")
    expect(modernList.result.tools.map((tool: { name: string }) => tool.name)).toContain("region_query")

    const { sessionId, protocolVersion } = await handshake(server, "2025-11-25")
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(protocolVersion).toBe("2025-11-25")
    const legacyList = await json(await post(server, "tools/list", {}, { id: 2, sessionId }))
    expect(legacyList.result).toEqual({ tools: expect.any(Array) })
    expect(legacyList.result.tools.map((tool: { name: string }) => tool.name)).toEqual(["add", "echo", "increment"])
    const legacyCall = await json(await callTool(server, "increment", {}, { id: 3, sessionId }))
    expect(legacyCall.result).toEqual({ content: [{ type: "text", text: "1" }] })
    const modernCall2 = await json(await modernCall(server, "increment", {}))
    expect(modernCall2.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "2" }] })

    // Without a session and without modern _meta, the 2025 rules apply.
    const noSession = await post(server, "tools/list")
    await expectRefusal(noSession, 400, -32000)
    // A 2025 version in modern _meta is not served statelessly, but is named in -32022.
    const old = await expectRefusal(await modern(server, "tools/list", {}, { version: "2025-11-25" }), 400, -32022)
    expect(old.error?.data.supported).toEqual(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])

    const deleted = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": sessionId ?? "" } })
    expect(deleted.status).toBe(200)
    await deleted.arrayBuffer()
  })

  it("a dual server also validates the 2026 request it recognises by header", async () => {
    const server = await start({ era: "dual" })
    // MCP-Protocol-Version: 2026-07-28 but no _meta: a malformed 2026 request, not a missing session.
    await expectRefusal(await modern(server, "tools/list", {}, { meta: null }), 400, -32602)
  })
})

describe("handshake era (default) and 2026 clients", () => {
  it("a 2026 request without a session is 400 missing Mcp-Session-Id (-32000)", async () => {
    const server = await start()
    const body = await expectRefusal(await modern(server, "server/discover"), 400, -32000)
    expect(body.error?.message).toContain("Mcp-Session-Id")
    const get = await fetch(server.url, { headers: { accept: "text/event-stream" } })
    expect(get.status).toBe(405)
    await get.arrayBuffer()
  })
})

describe("faults in the stateless era", () => {
  it("unsupported-version: once, or forever with times: Infinity (a hostile -32022 loop)", async () => {
    const server = await start({ era: "stateless" })
    server.script({ on: "server/discover", kind: "unsupported-version", supported: ["2099-01-01"] })
    const once = await expectRefusal(await modern(server, "server/discover", {}, { id: 5 }), 400, -32022)
    expect(once).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: {
        code: -32022,
        message: "Unsupported protocol version",
        data: { supported: ["2099-01-01"], requested: "2026-07-28" }
      }
    })
    expect((await modern(server, "server/discover")).status).toBe(200)

    server.script({ on: "tools/call", kind: "unsupported-version", supported: ["2026-07-28"], times: Infinity })
    for (let i = 0; i < 5; i++) {
      await expectRefusal(await modernCall(server, "increment", {}, { id: 10 + i }), 400, -32022)
    }
    expect(server.counter()).toBe(5) // the request ran; only its answer is replaced
  })

  it("input-required: asks for input (times: Infinity forever); its fresh requestState is one ask_name accepts", async () => {
    const server = await start({ era: "stateless" })
    server.script({ on: "tools/call", kind: "input-required", requestState: "opaque-1", times: 2 })
    for (let i = 0; i < 2; i++) {
      const body = await json(await modernCall(server, "echo", { text: "x" }, { id: i }))
      expect(body.result).toMatchObject({
        resultType: "input_required",
        inputRequests: { name: { method: "elicitation/create" } },
        requestState: "opaque-1"
      })
    }
    expect(textOf(await json(await modernCall(server, "echo", { text: "x" })))).toBe("x")
    expect(server.inputRounds()).toBe(2)

    server.script({ on: "tools/call", kind: "input-required" })
    const fresh = await json(await modernCall(server, "ask_name", {}, { capabilities: { elicitation: {} } }))
    const requestState = fresh.result.requestState as string
    expect(typeof requestState).toBe("string")
    const retry = await modern(server, "tools/call", {
      name: "ask_name",
      inputResponses: { name: { action: "accept", content: { name: "Bo" } } },
      requestState
    }, { id: 9, capabilities: { elicitation: {} } })
    expect(textOf(await json(retry))).toBe("hello Bo")

    server.script({ on: "tools/call", kind: "input-required", times: Infinity })
    for (let i = 0; i < 4; i++) {
      expect((await json(await modernCall(server, "add", { a: 1, b: 1 }))).result.resultType).toBe("input_required")
    }
    expect(server.inputRounds()).toBe(7)
  })

  it("result-type: the normal result with an unknown resultType", async () => {
    const server = await start({ era: "stateless" })
    server.script({ on: "tools/call", kind: "result-type", value: "bogus" })
    expect((await json(await modernCall(server, "add", { a: 1, b: 2 }))).result).toEqual({
      resultType: "bogus",
      content: [{ type: "text", text: "3" }]
    })
    server.script({ on: "server/discover", kind: "result-type", value: "bogus" })
    expect((await json(await modern(server, "server/discover"))).result).toMatchObject({
      resultType: "bogus",
      supportedVersions: ["2026-07-28"]
    })
  })

  it("rejects malformed new faults at script() time", async () => {
    const server = await start({ era: "stateless" })
    expect(() => server.script({ on: "x", kind: "unsupported-version", supported: "2026-07-28" as never })).toThrow(TypeError)
    expect(() => server.script({ on: "x", kind: "result-type", value: 1 as never })).toThrow(TypeError)
  })

  for (const as of ["json", "sse"] as const) {
    it(`exact-size on server/discover keeps the result intact around the pad (${as})`, async () => {
      const server = await start({ era: "stateless" })
      server.script({ on: "server/discover", kind: "exact-size", bytes: 4000, as })
      const bytes = new Uint8Array(await (await modern(server, "server/discover", {}, { id: 2 })).arrayBuffer())
      expect(bytes.length).toBe(4000)
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
      const body = JSON.parse(as === "sse" ? text.replace(/^event: message\ndata: /, "") : text) as RpcBody
      expect(body.result).toMatchObject({
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "phasebound-testkit" } },
        ttlMs: 60_000,
        cacheScope: "public"
      })
      expect(typeof body.result.instructions).toBe("string")

      server.script({ on: "tools/call", kind: "exact-size", bytes: 300, as })
      const call = new TextDecoder().decode(await (await modernCall(server, "increment", {})).arrayBuffer())
      expect(call).toContain("\"resultType\":\"complete\"")
    })
  }

  it("status, jsonrpc-error, delay and response-never-sent on server/discover", async () => {
    const server = await start({ era: "stateless" })
    server.script({ on: "server/discover", kind: "status", status: 503 })
    const unavailable = await modern(server, "server/discover")
    expect(unavailable.status).toBe(503)
    await unavailable.arrayBuffer()

    server.script({ on: "server/discover", kind: "jsonrpc-error", code: -32603, message: "boom" })
    expect((await json(await modern(server, "server/discover", {}, { id: 6 }))).error).toEqual({ code: -32603, message: "boom" })

    server.script({ on: "server/discover", kind: "delay", ms: 150 })
    const started = Date.now()
    const delayed = await json(await modern(server, "server/discover"))
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(delayed.result.resultType).toBe("complete")

    server.script({ on: "server/discover", kind: "response-never-sent" })
    const controller = new AbortController()
    const stalled = await modern(server, "server/discover", {}, { signal: controller.signal })
    expect(stalled.status).toBe(200)
    const read = stalled.arrayBuffer()
    setTimeout(() => controller.abort(), 50)
    await expect(read).rejects.toThrow()
    await server.waitFor(() => server.abortedResponses() === 1)
  })

  it("a validation failure is answered before any fault is taken", async () => {
    const server = await start({ era: "stateless" })
    server.script({ on: "server/discover", kind: "status", status: 503 })
    await expectRefusal(await modern(server, "server/discover", {}, { headers: { "Mcp-Method": null } }), 400, -32020)
    const faulted = await modern(server, "server/discover")
    expect(faulted.status).toBe(503)
    await faulted.arrayBuffer()
  })
})
