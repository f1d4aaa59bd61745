/**
 * The client under test for the MCP conformance suite (`@modelcontextprotocol/conformance`).
 *
 *   MCP_CONFORMANCE_SCENARIO=<scenario> tsx --conditions=@phasebound/source client.ts <server-url>
 *
 * The conformance CLI starts a scenario's server, then runs this program with the server's URL
 * as the last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO (plus
 * MCP_CONFORMANCE_PROTOCOL_VERSION, the revision the scenario runs at, and, for some scenarios,
 * MCP_CONFORMANCE_CONTEXT, a JSON object of scenario data). It does what the scenario expects
 * of a client and exits 0, or logs the error and exits 1. The CLI's own checks decide the
 * verdict (see README.md beside this file for each scenario). Either way its stdout ends with
 * the child report (@phasebound/testkit's formatReport): one result named after the scenario,
 * ok when it ran to its end, with how it ended; conformance.test.ts reads it from the CLI's
 * results directory, so a client that died before its end (a signal reads as exit 0 to the
 * CLI) or ran another scenario than the one asked is seen.
 *
 * Only the public Promise API of the library is used (and the testkit's report line).
 *
 * Revisions: by default the program speaks the revision the CLI asks for
 * (MCP_CONFORMANCE_PROTOCOL_VERSION): `["2026-07-28"]` for a 2026 run, the handshake revisions
 * from the asked one down for a dated run (a scenario server may counter-offer an older one).
 * PHASEBOUND_CONFORMANCE_REVISIONS=all leaves `revisions` out (the library's default, every
 * revision it supports, stateless first); a comma-separated list passes that list.
 */
import { type AuthOptions, connect, type HttpConnectOptions } from "@phasebound/client/promise"
import { formatReport } from "@phasebound/testkit/childReport"

type Connection = Awaited<ReturnType<typeof connect>>
type JsonObject = Record<string, unknown>

const handshakeRevisions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

const revisionsFor = (asked: string | undefined): ReadonlyArray<string> | undefined => {
  const override = process.env.PHASEBOUND_CONFORMANCE_REVISIONS
  if (override === "all") return undefined
  if (override !== undefined && override !== "") return override.split(",").map((s) => s.trim())
  if (asked === undefined || asked === "") return undefined
  if (asked === "2026-07-28") return ["2026-07-28"]
  // Dated revisions compare as strings.
  const older = handshakeRevisions.filter((revision) => revision <= asked)
  return older.length > 0 ? older : [asked]
}

const log = (...parts: ReadonlyArray<unknown>) => console.error(`[conformance-client +${Math.round(performance.now())}ms]`, ...parts)

/**
 * A form filled as a person who accepts without touching the prefilled fields: fields with a
 * `default` are left out (the library fills them in, SEP-1034: that is what the
 * elicitation-sep1034 scenario checks), the others get the first enum value or a plain value of
 * their type.
 */
const fillForm = (requestedSchema: unknown): JsonObject => {
  const properties = (requestedSchema as { properties?: Record<string, JsonObject> } | undefined)?.properties ?? {}
  const content: JsonObject = {}
  for (const [name, field] of Object.entries(properties)) {
    if ("default" in field) continue
    else if (Array.isArray(field.enum) && field.enum.length > 0) content[name] = field.enum[0]
    else if (field.type === "boolean") content[name] = true
    else if (field.type === "number" || field.type === "integer") content[name] = 0
    else if (field.type === "string") content[name] = "conformance"
  }
  return content
}

/** Arguments that satisfy a tool's input schema in the plainest way (required properties only). */
const argumentsFor = (inputSchema: unknown): JsonObject => {
  const schema = (inputSchema ?? {}) as { properties?: Record<string, JsonObject>; required?: Array<string> }
  const args: JsonObject = {}
  for (const name of schema.required ?? []) {
    const field = schema.properties?.[name] ?? {}
    switch (field.type) {
      case "number":
      case "integer":
        args[name] = 1
        break
      case "boolean":
        args[name] = true
        break
      case "object":
        args[name] = {}
        break
      case "array":
        args[name] = []
        break
      case "null":
        args[name] = null
        break
      default:
        args[name] = "conformance"
    }
  }
  return args
}

const text = (result: { readonly content?: ReadonlyArray<unknown> }) => (result.content ?? []).map((c) => (c as { text?: string }).text ?? "").join("")

const expectOk = (name: string, result: { readonly isError?: boolean | undefined; readonly content?: ReadonlyArray<unknown> }) => {
  if (result.isError === true) throw new Error(`tool ${name} answered isError: ${text(result)}`)
  return result
}

// --- scenarios --------------------------------------------------------------------------------

type Scenario = (connection: Connection, context: ScenarioContext) => Promise<void>

interface ScenarioContext {
  readonly data: JsonObject | undefined
  /** Called by the elicitation handler, to let a scenario act while a request is in its rounds. */
  onElicitation: ((params: JsonObject) => Promise<void>) | undefined
}

const scenarios: Record<string, Scenario> = {
  // Connecting is the scenario (the handshake, or server/discover, then tools/list).
  initialize: async () => {},
  "json-schema-ref-no-deref": async () => {},
  "request-metadata": async (connection) => {
    await connection.listTools()
  },

  tools_call: async (connection) => {
    const tool = connection.tools.find((t) => t.name === "add_numbers") ?? connection.tools[0]
    if (tool === undefined) throw new Error("no tool listed")
    const result = expectOk(tool.name, await connection.callTool(tool.name, { a: 2, b: 3 }))
    log("tools_call:", text(result))
  },

  "elicitation-sep1034-client-defaults": async (connection) => {
    const result = expectOk(
      "test_client_elicitation_defaults",
      await connection.callTool("test_client_elicitation_defaults", {})
    )
    log("elicitation:", text(result))
  },

  "sse-retry": async (connection) => {
    // The server closes the call's stream after a priming event; the answer comes on the GET
    // stream the client must reopen (after `retry` ms, with Last-Event-ID).
    const result = expectOk("test_reconnection", await connection.callTool("test_reconnection", {}))
    log("sse-retry:", text(result))
  },

  "sep-2322-client-request-state": async (connection, context) => {
    // While the first call waits for its input, an unrelated call goes out: it must carry
    // neither the other call's inputResponses nor its requestState.
    let unrelatedDone = false
    context.onElicitation = async () => {
      if (unrelatedDone) return
      unrelatedDone = true
      expectOk("test_mrtr_unrelated", await connection.callTool("test_mrtr_unrelated", {}))
    }
    expectOk("test_mrtr_echo_state", await connection.callTool("test_mrtr_echo_state", {}))
    context.onElicitation = undefined
    if (!unrelatedDone) expectOk("test_mrtr_unrelated", await connection.callTool("test_mrtr_unrelated", {}))
    expectOk("test_mrtr_no_state", await connection.callTool("test_mrtr_no_state", {}))
    expectOk("test_mrtr_no_result_type", await connection.callTool("test_mrtr_no_result_type", {}))
  },

  "http-standard-headers": async (connection) => {
    // Mcp-Name goes with tools/call, resources/read and prompts/get: each is exercised.
    for (const tool of connection.tools) expectOk(tool.name, await connection.callTool(tool.name, {}))
    for (const resource of await connection.listResources()) await connection.readResource(resource.uri)
    for (const prompt of await connection.listPrompts()) {
      const args = Object.fromEntries((prompt.arguments ?? []).map((arg) => [arg.name, "conformance"]))
      await connection.getPrompt(prompt.name, args)
    }
  },

  "http-custom-headers": async (connection, context) => {
    const calls = (context.data?.toolCalls ?? []) as ReadonlyArray<{ name: string; arguments: JsonObject }>
    if (calls.length === 0) throw new Error("MCP_CONFORMANCE_CONTEXT has no toolCalls")
    for (const call of calls) expectOk(call.name, await connection.callTool(call.name, call.arguments))
  },

  "http-invalid-tool-headers": async (connection) => {
    // Calls every tool the library lists. A tool with an invalid x-mcp-header declaration must
    // not be listed (so never called); the valid one must be.
    log("listed:", connection.tools.map((t) => t.name).join(", "))
    for (const tool of connection.tools) {
      expectOk(tool.name, await connection.callTool(tool.name, argumentsFor(tool.inputSchema)))
    }
  },

  "json-schema-2020-12-preservation": async (connection) => {
    const focal = connection.tools.find((t) => t.name === "json_schema_2020_12_tool")
    if (focal === undefined) throw new Error("json_schema_2020_12_tool not listed")
    expectOk("json_schema_echo", await connection.callTool("json_schema_echo", { schema: focal.inputSchema }))
  }
}

// --- skills (the skills extension) ---------------------------------------------------------

/** The typed reason of a refusal, when the library gave one. */
const reasonOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && typeof (error as { reason?: unknown }).reason === "string"
    ? `${(error as { _tag?: string })._tag}: ${(error as { reason: string }).reason}`
    : undefined

/**
 * What a host does with a skill it decides to use: read its SKILL.md (verified by the library
 * against the entry: size, digest, frontmatter), and only then the other files it lists, each
 * verified too. A skill that fails verification is not loaded: the refusal is logged with its
 * typed reason and the next skill goes on.
 */
const loadSkills = async (connection: Connection) => {
  const { skills } = await connection.listSkills()
  log("skills:", skills.map((s) => s.uri).join(", "))
  for (const skill of skills) {
    try {
      const manifest = await connection.readSkillFile(skill)
      log("loaded", skill.uri, JSON.stringify(manifest.frontmatter))
      for (const file of skill.resources === "dynamic" ? [] : skill.resources) {
        if (file.uri !== skill.uri) log("read", (await connection.readSkillFile(skill, file.uri)).uri)
      }
    } catch (error) {
      const reason = reasonOf(error)
      if (reason === undefined) throw error
      log("not loaded", skill.uri, reason)
    }
  }
}

const skillScenarios: Record<string, Scenario> = {
  // Listing is all: no file may be read before a skill is loaded.
  "sep-2640-client-no-prefetch": async (connection) => {
    const { skills } = await connection.listSkills()
    log("skills listed, none loaded:", skills.map((s) => `${s.uri} (${s.frontmatter.name})`).join(", "))
  },
  "sep-2640-client-verify-digest": loadSkills,
  "sep-2640-client-verify-size": loadSkills,
  "sep-2640-client-verify-frontmatter": loadSkills
}

// --- authorization --------------------------------------------------------------------------

/** The scenarios' Client ID Metadata Document URL (used where the authorization server supports them). */
const clientMetadataUrl = "https://conformance-test.local/client-metadata.json"

/**
 * The interactive step without a browser: the scenario's authorization server grants consent on
 * the first request and answers with a redirect, whose `Location` is the redirect URL.
 */
const followAuthorization = async (url: URL, { signal }: { readonly signal: AbortSignal }): Promise<string> => {
  const response = await fetch(url, { redirect: "manual", signal })
  const location = response.headers.get("location")
  await response.body?.cancel()
  if (location === null) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`)
  return location
}

/** How each auth scenario's client identifies itself (context data from the CLI where it gives some). */
const authFor = (scenario: string, data: JsonObject | undefined): AuthOptions => {
  const text = (name: string) => {
    const value = data?.[name]
    if (typeof value !== "string") throw new Error(`MCP_CONFORMANCE_CONTEXT has no ${name}`)
    return value
  }
  switch (scenario) {
    case "auth/client-credentials-basic":
      return { grant: "client_credentials", clientId: text("client_id"), clientSecret: text("client_secret") }
    case "auth/client-credentials-jwt":
      return {
        grant: "client_credentials",
        clientId: text("client_id"),
        privateKey: text("private_key_pem"),
        privateKeyAlgorithm: text("signing_algorithm") as "ES256" | "RS256"
      }
    case "auth/pre-registration":
      return {
        redirectUri: "http://localhost:3000/callback",
        authorize: followAuthorization,
        clientId: text("client_id"),
        clientSecret: text("client_secret")
      }
    default:
      return { redirectUri: "http://localhost:3000/callback", authorize: followAuthorization, clientMetadataUrl }
  }
}

/** Connecting (discovery, with the authorization it needs) and one call of the scenario's tool. */
const authorizedSession: Scenario = async (connection) => {
  const tool = connection.tools.find((t) => t.name === "test-tool") ?? connection.tools[0]
  if (tool === undefined) throw new Error("no tool listed")
  expectOk(tool.name, await connection.callTool(tool.name, {}))
}

// --- main -------------------------------------------------------------------------------------

const scenarioName = process.env.MCP_CONFORMANCE_SCENARIO

/** What the scenario ended with, for the report: the connection, or the error. */
let connected = "not connected"

const main = async (): Promise<void> => {
  const serverUrl = process.argv.at(-1)
  if (scenarioName === undefined || serverUrl === undefined || !/^https?:\/\//.test(serverUrl)) {
    throw new Error("usage: MCP_CONFORMANCE_SCENARIO=<scenario> client.ts <server-url>")
  }
  const isAuth = scenarioName.startsWith("auth/")
  const scenario = isAuth ? authorizedSession : scenarios[scenarioName] ?? skillScenarios[scenarioName]
  if (scenario === undefined) {
    throw new Error(`unknown scenario ${scenarioName}; known: ${[...Object.keys(scenarios), ...Object.keys(skillScenarios)].sort().join(", ")}`)
  }
  const rawContext = process.env.MCP_CONFORMANCE_CONTEXT
  const context: ScenarioContext = {
    data: rawContext === undefined || rawContext === "" ? undefined : (JSON.parse(rawContext) as JsonObject),
    onElicitation: undefined
  }
  const revisions = revisionsFor(process.env.MCP_CONFORMANCE_PROTOCOL_VERSION)
  log(`scenario ${scenarioName}, revisions ${revisions === undefined ? "(library default)" : revisions.join(",")}`)

  const options = {
    url: serverUrl,
    clientInfo: { name: "phasebound-conformance-client", version: "0.1.0" },
    ...(revisions === undefined ? {} : { revisions }),
    handlers: {
      elicitation: async (params) => {
        log("elicitation/create:", JSON.stringify(params))
        await context.onElicitation?.(params)
        return { action: "accept", content: fillForm(params.requestedSchema) }
      },
      sampling: (params) => {
        log("sampling/createMessage:", JSON.stringify(params))
        return {
          role: "assistant",
          content: { type: "text", text: "sampled by the phasebound conformance client" },
          model: "phasebound-conformance",
          stopReason: "endTurn"
        }
      },
      roots: () => ({ roots: [] })
    },
    // Well under the CLI's 30 s limit on the program, so a call that hangs fails here, with its error.
    policy: { timeout: 10_000 },
    ...(isAuth ? { auth: authFor(scenarioName, context.data) } : {})
  } satisfies HttpConnectOptions
  const connection = await connect(options)
  try {
    connected = `connected: ${connection.protocolVersion} over ${connection.transport}; tools: ${connection.tools.map((t) => t.name).join(", ")}`
    log(connected)
    await scenario(connection, context)
  } finally {
    await connection.close()
    log("closed")
  }
}

/** The report line, then the exit once it is written (stdout may be a pipe the CLI reads). */
const finish = (ok: boolean, detail: string) =>
  process.stdout.write(
    formatReport({ results: [{ name: scenarioName ?? "(no MCP_CONFORMANCE_SCENARIO)", ok, detail, ms: Math.round(performance.now()) }] }),
    () => process.exit(ok ? 0 : 1)
  )

main().then(
  () => finish(true, connected),
  (error: unknown) => {
    console.error("[conformance-client] failed:", error)
    finish(false, `${connected}; failed: ${String(error).slice(0, 500)}`)
  }
)
