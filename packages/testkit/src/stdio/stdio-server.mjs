#!/usr/bin/env node
// @ts-check
/**
 * phasebound testkit: a scriptable MCP server over stdio, normal by default and hostile on
 * request. A client spawns it as a child process and speaks newline-delimited JSON-RPC on
 * stdin/stdout; stderr is its log.
 *
 * Plain JavaScript with only `node:` imports, so that it runs as is under Node 20 and Bun, with
 * no TypeScript loader. It duplicates the small MCP behaviour of ../mcp.ts (initialize, ping,
 * tools/list with pagination, tools/call for add, echo, increment and generated tools) and the
 * padding of ../payload.ts. The typed, test-facing side is ../StdioServer.ts
 * (`stdioServerCommand`, `makeStdioFixture`), which builds the arguments below.
 *
 * Eras (--era):
 *   handshake (default)  2024-11-05..2025-11-25: initialize, notifications/initialized; any other
 *                        method, server/discover included, is -32601 Method not found.
 *   stateless            2026-07-28: no handshake. Every request carries in params._meta
 *                        "io.modelcontextprotocol/protocolVersion" (a string),
 *                        ".../clientCapabilities" (an object) and optionally ".../clientInfo"
 *                        (an object with string name and version); missing or malformed: -32602.
 *                        Checked in this order: the version (a string, else -32602; served, else
 *                        -32022 with data { supported, requested }), then the rest (-32602).
 *                        Methods: server/discover, tools/list, tools/call (results carry
 *                        resultType "complete"; discover and tools/list also ttlMs and
 *                        cacheScope). The extra tool `ask_name` answers with MRTR (an
 *                        input_required result carrying an elicitation and a requestState).
 *                        initialize is refused with -32022 (data.supported names the versions).
 *   dual                 a request carrying modern _meta (and server/discover always) is served
 *                        as in "stateless"; initialize, and any request without modern _meta, as
 *                        in "handshake". Both can be used in one process.
 *
 * Features (--features, as in ../features.ts): capabilities, the tools slow_progress, weather,
 * weather_error, link_resource, log, change_tools and flood_notifications (after every other
 * tool, in both eras), resources, resource templates, prompts; logging/setLevel in the handshake
 * era, the per-request _meta log level and subscriptions/listen in the stateless era. A
 * request's notifications (progress, log messages) go on stdout before its answer. List changes
 * and floods go to every listener: stdout itself once initialize was served (handshake era), and
 * each subscription that agreed to toolsListChanged (its subscriptionId in _meta). A
 * notifications/cancelled naming a request still playing out stops it (no answer), naming a
 * subscription ends it.
 *
 * Effect tools (--effect-tools, as in ../effects.ts): lookup (readOnlyHint), upsert
 * (idempotentHint) and append (neither: a ledger), after the generated tools in both eras; each
 * applies its effect on arrival and answers after its delayMs argument.
 *
 * Arguments (each flag takes one value, except --silent-on-unknown, --features and --effect-tools):
 *   --counter-file PATH      the `increment` counter, rewritten synchronously before each answer
 *   --log-file PATH          one line per received message, appended synchronously on arrival:
 *                            its method, or "#response", "#invalid-json", "#invalid-utf8",
 *                            "#not-jsonrpc", "#batch"
 *   --protocol-version V     what initialize answers (default: the client's version if supported)
 *   --extra-tools N          generated tools "tool-0".."tool-N-1"
 *   --page-size N            tools/list page size (nextCursor pagination)
 *   --schema-pad-bytes N     pads the `add` tool's input schema description to N bytes
 *   --fault JSON             a scripted behaviour (repeatable), see ../StdioServer.ts
 *   --era E                  handshake | stateless | dual (default handshake)
 *   --supported-version V    a version the server names in server/discover and -32022 (repeatable;
 *                            default 2026-07-28, in "dual" also the handshake versions, newest
 *                            first); all are served statelessly, but in "dual" the handshake
 *                            versions only through initialize
 *   --ttl-ms N               ttlMs of server/discover and tools/list results (default 60000)
 *   --silent-on-unknown      a request for an unknown method gets no answer at all (instead of
 *                            -32601), as some legacy servers do with server/discover
 *   --features               the features above (default: none of them, listings as before)
 *   --resources N            with --features: how many test://docs/i resources are listed (default 3)
 *   --effect-tools           the effect tools above (default: none of them)
 *   --events-file PATH       one line per event, appended synchronously: "tool NAME" when a
 *                            tools/call is run (then "identity NAME JSON" when it carried an
 *                            effect identity, JSON its string), "sent METHOD" when a notification is handed to
 *                            stdout, "subscription-closed ID" when the client ends a subscription
 *
 * Per-method faults (`on`, `times`: default 1; null, which is what JSON.stringify makes of
 * Infinity, means always) replace only the answer: the request's side effects (the counter) have
 * already happened. On a notification only `exit` applies. They apply in every era, to whatever
 * the method is (server/discover included, also where it is unknown). A fault replaces what the
 * request would play out too (`delay` only postpones it), but a list change still goes out at once.
 */
import { createHmac } from "node:crypto"
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"

const SUPPORTED_PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
const DEFAULT_PROTOCOL_VERSION = "2025-06-18"
const SERVER_INFO = { name: "phasebound-testkit", version: "0.1.0" }

const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ResourceNotFound: -32002,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022
}

const ERAS = new Set(["handshake", "stateless", "dual"])
const DEFAULT_SUPPORTED_VERSIONS = ["2026-07-28"]
const DEFAULT_TTL_MS = 60_000
const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

const DEFAULT_CHUNK_SIZE = 7
const DEFAULT_EXIT_CODE = 3
const DEFAULT_BANNER = "Server starting... ready"
const NEVER_ENDING_CHUNK = Buffer.alloc(64 * 1024, 0x61) // "a"
/** Exit code for a bad command line (a testkit bug, not a scripted fault). */
const USAGE_EXIT_CODE = 64

const METHOD_FAULTS = new Set([
  "exact-size", "never-ending-line", "exit", "exit-mid-answer", "never-answer", "invalid-utf8", "invalid-json",
  "not-jsonrpc", "wrong-id", "delay", "jsonrpc-error", "unsupported-version", "input-required", "result-type"
])
const GLOBAL_FAULTS = new Set(["banner", "stderr-flood", "ignore-sigterm", "linger-after-stdin-close", "write-pid"])

// ---------------------------------------------------------------------------------------------
// Logging (stderr) and configuration

/** @param {string} text */
const log = (text) => {
  process.stderr.write(`[phasebound-testkit stdio ${process.pid}] ${text}\n`)
}

/** @param {string} text @returns {never} */
const usage = (text) => {
  log(`usage error: ${text}`)
  process.exit(USAGE_EXIT_CODE)
}

/** @param {string | undefined} value @param {string} flag */
const intArg = (value, flag) => {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 0) usage(`${flag} needs a non-negative integer`)
  return n
}

/** @param {unknown} value @returns {value is Record<string, any>} */
const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

const readConfig = () => {
  let parsed
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: {
        "counter-file": { type: "string" },
        "log-file": { type: "string" },
        "protocol-version": { type: "string" },
        "extra-tools": { type: "string" },
        "page-size": { type: "string" },
        "schema-pad-bytes": { type: "string" },
        fault: { type: "string", multiple: true },
        era: { type: "string" },
        "supported-version": { type: "string", multiple: true },
        "ttl-ms": { type: "string" },
        "silent-on-unknown": { type: "boolean" },
        features: { type: "boolean" },
        resources: { type: "string" },
        "effect-tools": { type: "boolean" },
        "events-file": { type: "string" }
      },
      strict: true,
      allowPositionals: false
    })
  } catch (error) {
    usage(error instanceof Error ? error.message : String(error))
  }
  const values = parsed.values
  /** @type {Array<Record<string, any>>} */
  const faults = []
  for (const text of values.fault ?? []) {
    let fault
    try {
      fault = JSON.parse(text)
    } catch {
      usage(`--fault is not JSON: ${text}`)
    }
    if (!isRecord(fault) || typeof fault.kind !== "string") usage(`--fault needs a "kind": ${text}`)
    if (METHOD_FAULTS.has(fault.kind)) {
      if (typeof fault.on !== "string") usage(`fault ${fault.kind} needs "on" (a JSON-RPC method)`)
    } else if (!GLOBAL_FAULTS.has(fault.kind)) {
      usage(`unknown fault kind ${fault.kind}`)
    }
    faults.push(fault)
  }
  const pageSize = intArg(values["page-size"], "--page-size")
  const era = values.era ?? "handshake"
  if (!ERAS.has(era)) usage(`--era must be handshake, stateless or dual: ${era}`)
  const supportedVersions = values["supported-version"] ??
    (era === "dual" ? [...DEFAULT_SUPPORTED_VERSIONS, ...[...SUPPORTED_PROTOCOL_VERSIONS].reverse()] : DEFAULT_SUPPORTED_VERSIONS)
  if (supportedVersions.some((version) => version === "")) usage("--supported-version needs a non-empty version")
  return {
    era,
    supportedVersions,
    /** The versions served statelessly: in "dual", the handshake versions are initialize's. */
    statelessVersions: era === "dual"
      ? supportedVersions.filter((version) => !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      : supportedVersions,
    ttlMs: intArg(values["ttl-ms"], "--ttl-ms") ?? DEFAULT_TTL_MS,
    silentOnUnknown: values["silent-on-unknown"] === true,
    features: values.features === true,
    effectTools: values["effect-tools"] === true,
    resources: intArg(values.resources, "--resources") ?? 3,
    eventsFile: values["events-file"],
    counterFile: values["counter-file"],
    logFile: values["log-file"],
    protocolVersion: values["protocol-version"],
    extraTools: intArg(values["extra-tools"], "--extra-tools") ?? 0,
    pageSize: pageSize === undefined ? undefined : Math.max(1, pageSize),
    schemaPadBytes: intArg(values["schema-pad-bytes"], "--schema-pad-bytes") ?? 0,
    faults
  }
}

const config = readConfig()

/** @param {string} kind */
const globalFault = (kind) => config.faults.find((fault) => fault.kind === kind)

/** Scripted per-method faults in order; the first one matching a method is applied. */
const methodFaults = config.faults
  .filter((fault) => METHOD_FAULTS.has(fault.kind))
  .map((fault) => ({ fault, remaining: fault.times === undefined ? 1 : fault.times === null ? Infinity : fault.times }))

/**
 * Takes one application of the first fault for `method`, if any.
 * @param {string} method @param {boolean} notification
 */
const takeFault = (method, notification) => {
  const index = methodFaults.findIndex((entry) =>
    entry.fault.on === method && (!notification || entry.fault.kind === "exit")
  )
  const entry = methodFaults[index]
  if (entry === undefined) return undefined
  entry.remaining -= 1
  if (entry.remaining <= 0) methodFaults.splice(index, 1)
  return entry.fault
}

/** @param {string} line */
const record = (line) => {
  if (config.logFile !== undefined) appendFileSync(config.logFile, line + "\n")
}

/** @param {string} line */
const event = (line) => {
  if (config.eventsFile !== undefined) appendFileSync(config.eventsFile, line + "\n")
}

// ---------------------------------------------------------------------------------------------
// Padding (as in ../payload.ts): 1-, 2-, 3- and 4-byte characters that JSON does not escape

/** "é" (2 bytes) + "€" (3) + "😀" (4) + "a" (1) = 10 bytes. */
const PAD_UNIT = "é€😀a"
const PAD_UNIT_BYTES = 10

/** A string of exactly `bytes` UTF-8 bytes. @param {number} bytes */
const padString = (bytes) => PAD_UNIT.repeat(Math.floor(bytes / PAD_UNIT_BYTES)) + "a".repeat(bytes % PAD_UNIT_BYTES)

/**
 * Where a method's padded result carries its pad: tools/call as its text content (keeping a
 * stateless-era `resultType`), initialize and server/discover in `instructions`, tools/list in the
 * first tool's description, anything else in `_meta` (next to what `_meta` already holds).
 * @param {string} method @param {any} normal @returns {(pad: string) => unknown}
 */
const paddedResultTemplate = (method, normal) => {
  const base = isRecord(normal) ? normal : {}
  /** @param {string} pad */
  const padMeta = (pad) => ({ ...(isRecord(base._meta) ? base._meta : {}), "phasebound/pad": pad })
  switch (method) {
    case "tools/call":
      return "resultType" in base
        ? (pad) => ({ resultType: base.resultType, content: [{ type: "text", text: pad }] })
        : (pad) => ({ content: [{ type: "text", text: pad }] })
    case "initialize":
    case "server/discover":
      return (pad) => ({ ...base, instructions: pad })
    case "tools/list": {
      /** @type {Array<Record<string, unknown>>} */
      const tools = Array.isArray(base.tools) ? base.tools : []
      if (tools.length === 0) return (pad) => ({ ...base, tools: [], _meta: padMeta(pad) })
      return (pad) => ({
        ...base,
        tools: tools.map((tool, i) => (i === 0 ? { ...tool, description: String(tool.description ?? "") + pad } : tool))
      })
    }
    default:
      return (pad) => ({ ...base, _meta: padMeta(pad) })
  }
}

/**
 * The response line, `\n` included, of exactly `bytes` bytes; undefined if it cannot be that small.
 * @param {string | number} id @param {string} method @param {any} normal @param {number} bytes
 */
const exactLine = (id, method, normal, bytes) => {
  const template = paddedResultTemplate(method, normal)
  /** @param {string} pad */
  const render = (pad) => JSON.stringify({ jsonrpc: "2.0", id, result: template(pad) }) + "\n"
  const minimum = Buffer.byteLength(render(""))
  if (bytes < minimum) return { minimum, line: undefined }
  return { minimum, line: Buffer.from(render(padString(bytes - minimum)), "utf8") }
}

// ---------------------------------------------------------------------------------------------
// MCP behaviour (as in ../mcp.ts)

/** @param {unknown} result */
const ok = (result) => ({ result })
/** @param {number} code @param {string} message @param {unknown} [data] */
const fail = (code, message, data) => ({ error: data === undefined ? { code, message } : { code, message, data } })
/** -32601; `unknownMethod` lets --silent-on-unknown hold the answer back. @param {string} method */
const methodNotFound = (method) => ({ ...fail(ErrorCode.MethodNotFound, `Method not found: ${method}`), unknownMethod: true })
/** @param {string} value @param {boolean} [isError] */
const text = (value, isError = false) =>
  ok(isError ? { content: [{ type: "text", text: value }], isError: true } : { content: [{ type: "text", text: value }] })

const makeTools = () => {
  /** @type {Record<string, unknown>} */
  const addSchema = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }
  if (config.schemaPadBytes > 0) addSchema.description = padString(config.schemaPadBytes)
  const extra = Array.from({ length: config.extraTools }, (_, i) => ({
    name: `tool-${i}`,
    description: `Generated tool number ${i}`,
    inputSchema: { type: "object", properties: {} }
  }))
  const base = [
    { name: "add", description: "Adds two numbers", inputSchema: addSchema },
    {
      name: "echo",
      description: "Returns its text argument",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
    },
    {
      name: "increment",
      description: "Increments a server-side counter (a side effect) and returns the new value",
      inputSchema: { type: "object", properties: {} }
    }
  ]
  const askName = {
    name: "ask_name",
    description: "Asks for a name (an elicitation, by multi round-trip request) and greets it",
    inputSchema: { type: "object", properties: {} }
  }
  return { handshake: [...base, ...extra], stateless: [...base, askName, ...extra] }
}

/** The handshake era's tools, and the stateless era's (the same plus `ask_name`, after `increment`). */
const toolLists = makeTools()
/** The tools of each era as they are now: with --features, the feature tools and those added come last. */
const handshakeTools = () => [...toolLists.handshake, ...effectTools(), ...featureTools()]
const statelessTools = () => [...toolLists.stateless, ...effectTools(), ...featureTools()]
let counter = 0

/** @param {number} value */
const writeCounter = (value) => {
  if (config.counterFile !== undefined) writeFileSync(config.counterFile, String(value))
}

/** @param {number} offset */
const encodeCursor = (offset) => Buffer.from(JSON.stringify({ offset })).toString("base64url")
/** @param {unknown} cursor @returns {number | undefined} */
const decodeCursor = (cursor) => {
  if (typeof cursor !== "string") return undefined
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    const offset = isRecord(parsed) ? parsed.offset : undefined
    return Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined
  } catch {
    return undefined
  }
}

/** @param {any} params */
const initialize = (params) => {
  const requested = isRecord(params) ? params.protocolVersion : undefined
  const protocolVersion = config.protocolVersion ??
    (typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : DEFAULT_PROTOCOL_VERSION)
  const capabilities = config.features ? FEATURE_CAPABILITIES : { tools: { listChanged: false } }
  return ok({ protocolVersion, capabilities, serverInfo: SERVER_INFO })
}

/**
 * The page of `list` that params.cursor asks for, under `key`.
 * @param {string} key @param {ReadonlyArray<unknown>} list @param {any} params
 */
const listPage = (key, list, params) => {
  const cursor = isRecord(params) ? params.cursor : undefined
  const offset = cursor === undefined ? 0 : decodeCursor(cursor)
  if (offset === undefined || offset > list.length) return fail(ErrorCode.InvalidParams, "Invalid cursor")
  const end = Math.min(offset + (config.pageSize ?? list.length), list.length)
  const page = list.slice(offset, end)
  return ok(end < list.length ? { [key]: page, nextCursor: encodeCursor(end) } : { [key]: page })
}

/** @param {any} params @param {ReadonlyArray<Record<string, unknown>>} [list] */
const listTools = (params, list = handshakeTools()) => listPage("tools", list, params)

/** @param {any} params @param {boolean} [stateless] */
const callTool = (params, stateless = false) => {
  if (!isRecord(params) || typeof params.name !== "string") return fail(ErrorCode.InvalidParams, "tools/call needs a tool name")
  const args = isRecord(params.arguments) ? params.arguments : {}
  switch (params.name) {
    case "add":
      return typeof args.a === "number" && typeof args.b === "number"
        ? text(String(args.a + args.b))
        : text("add expects numbers a and b", true)
    case "echo":
      return typeof args.text === "string" ? text(args.text) : text("echo expects a string text", true)
    case "increment":
      counter += 1
      writeCounter(counter) // before the answer is even built, let alone sent
      return text(String(counter))
    default:
      return (config.effectTools ? callEffectTool(params.name, args) : undefined) ??
        (config.features ? callFeatureTool(params.name, args, params, stateless) : undefined) ??
        (handshakeTools().some((tool) => tool.name === params.name)
          ? text(params.name)
          : text(`Unknown tool: ${params.name}`, true))
  }
}

/** Runs one request of the handshake era, side effects included. @param {string} method @param {unknown} params */
const handle = (method, params) => {
  switch (method) {
    case "initialize":
      return initialize(params)
    case "ping":
      return ok({})
    case "tools/list":
      return listTools(params)
    case "tools/call":
      if (isRecord(params) && typeof params.name === "string") toolEvents(params.name, params)
      return callTool(params)
    default:
      return (config.features ? handleFeature(method, params, false) : undefined) ?? methodNotFound(method)
  }
}

// ---------------------------------------------------------------------------------------------
// The stateless era (2026-07-28)

const MODERN_METHODS = new Set(["server/discover", "tools/list", "tools/call"])

/** @param {unknown} params @returns {Record<string, unknown> | undefined} */
const metaOf = (params) => (isRecord(params) && isRecord(params._meta) ? params._meta : undefined)

/** Whether a request carries the stateless era's per-request metadata. @param {unknown} params */
const hasModernMeta = (params) => {
  const meta = metaOf(params)
  return meta !== undefined && (META_PROTOCOL_VERSION in meta || META_CLIENT_CAPABILITIES in meta)
}

/**
 * Whether a request is served statelessly: every request in "stateless"; in "dual" the ones with
 * modern _meta, and server/discover (a method of that era only), never initialize.
 * @param {string} method @param {unknown} params
 */
const isModernRequest = (method, params) =>
  config.era === "stateless" ||
  (config.era === "dual" && method !== "initialize" && (method === "server/discover" || hasModernMeta(params)))

/** The version a request asks for: its modern _meta's, else initialize's `protocolVersion`. @param {unknown} params */
const requestedVersion = (params) => {
  const fromMeta = metaOf(params)?.[META_PROTOCOL_VERSION]
  if (typeof fromMeta === "string") return fromMeta
  const fromInitialize = isRecord(params) ? params.protocolVersion : undefined
  return typeof fromInitialize === "string" ? fromInitialize : ""
}

/** @param {string} requested @param {ReadonlyArray<string>} [supported] */
const unsupportedVersion = (requested, supported = config.supportedVersions) =>
  fail(ErrorCode.UnsupportedProtocolVersion, "Unsupported protocol version", { supported: [...supported], requested })

/**
 * The refusal of a request's per-request metadata, if any, in the order the HTTP server checks it
 * too: a string version (-32602), a version served statelessly (-32022), then the capabilities
 * object and the optional clientInfo (-32602).
 * @param {unknown} params
 */
const checkModernMeta = (params) => {
  if (params !== undefined && !isRecord(params)) return fail(ErrorCode.InvalidParams, "Invalid params: params must be an object")
  const meta = metaOf(params)
  if (meta === undefined) return fail(ErrorCode.InvalidParams, "Invalid params: missing _meta")
  const version = meta[META_PROTOCOL_VERSION]
  if (typeof version !== "string") {
    return fail(ErrorCode.InvalidParams, `Invalid params: _meta needs a string "${META_PROTOCOL_VERSION}"`)
  }
  if (!config.statelessVersions.includes(version)) return unsupportedVersion(version)
  if (!isRecord(meta[META_CLIENT_CAPABILITIES])) {
    return fail(ErrorCode.InvalidParams, `Invalid params: _meta needs an object "${META_CLIENT_CAPABILITIES}"`)
  }
  const info = meta[META_CLIENT_INFO]
  if (info !== undefined && !(isRecord(info) && typeof info.name === "string" && typeof info.version === "string")) {
    return fail(ErrorCode.InvalidParams, `Invalid params: "${META_CLIENT_INFO}" needs a string name and version`)
  }
  return undefined
}

/**
 * A result of the era, its timeline kept.
 * @param {{ result?: unknown, error?: unknown, timeline?: Timeline }} outcome @param {Record<string, unknown>} [extra]
 */
const complete = (outcome, extra = {}) =>
  "result" in outcome && isRecord(outcome.result) ? { ...outcome, result: { resultType: "complete", ...outcome.result, ...extra } } : outcome

const cacheable = () => ({ ttlMs: config.ttlMs, cacheScope: "public" })

const discover = () =>
  ok({
    resultType: "complete",
    supportedVersions: [...config.supportedVersions],
    capabilities: config.features ? FEATURE_CAPABILITIES : { tools: {} },
    _meta: { [META_SERVER_INFO]: SERVER_INFO },
    ...cacheable()
  })

// MRTR: `requestState` is "<payload>.<mac>", the payload base64url JSON, the mac an HMAC-SHA256
// under a fixed key. Any token this script issued verifies, in any process (it is stateless);
// anything else, an edited token included, does not.
const REQUEST_STATE_KEY = "phasebound-testkit stdio requestState"
let issuedStates = 0

/** @param {string} payload */
const mac = (payload) => createHmac("sha256", REQUEST_STATE_KEY).update(payload).digest("base64url")

/** @param {string} tool */
const issueRequestState = (tool) => {
  issuedStates += 1
  const payload = Buffer.from(JSON.stringify({ tool, n: issuedStates, pid: process.pid })).toString("base64url")
  return `${payload}.${mac(payload)}`
}

/** @param {unknown} state @param {string} tool */
const verifyRequestState = (state, tool) => {
  if (typeof state !== "string") return false
  const [payload, tag, ...rest] = state.split(".")
  if (payload === undefined || tag === undefined || rest.length > 0 || mac(payload) !== tag) return false
  try {
    const decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    return isRecord(decoded) && decoded.tool === tool
  } catch {
    return false
  }
}

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

/** @param {unknown} inputRequests @param {string | undefined} requestState */
const inputRequired = (inputRequests, requestState) => {
  /** @type {Record<string, unknown>} */
  const result = { resultType: "input_required" }
  if (inputRequests !== undefined) result.inputRequests = inputRequests
  if (requestState !== undefined) result.requestState = requestState
  return ok(result)
}

/**
 * `ask_name`: asks for a name by elicitation (only of a client that declared `elicitation`),
 * then greets the name given in the retry's inputResponses.name.
 * @param {Record<string, any>} params
 */
const askName = (params) => {
  const capabilities = metaOf(params)?.[META_CLIENT_CAPABILITIES]
  const ask = () =>
    isRecord(capabilities) && isRecord(capabilities.elicitation)
      ? inputRequired(ASK_NAME_INPUT_REQUESTS, issueRequestState("ask_name"))
      : fail(ErrorCode.MissingRequiredClientCapability, "Server requires the elicitation capability for this request", {
        requiredCapabilities: { elicitation: {} }
      })
  const responses = params.inputResponses
  if (responses !== undefined && !isRecord(responses)) return fail(ErrorCode.InvalidParams, "invalid inputResponses")
  if (params.requestState === undefined) {
    return responses === undefined ? ask() : fail(ErrorCode.InvalidParams, "invalid requestState")
  }
  if (!verifyRequestState(params.requestState, "ask_name")) return fail(ErrorCode.InvalidParams, "invalid requestState")
  const answer = responses?.name
  if (answer === undefined) return ask() // the input is still missing: ask again
  if (!isRecord(answer)) return fail(ErrorCode.InvalidParams, "invalid inputResponses")
  switch (answer.action) {
    case "accept": {
      const name = isRecord(answer.content) && typeof answer.content.name === "string" ? answer.content.name : "anon"
      return text(`hello ${name}`)
    }
    case "decline":
    case "cancel":
      return text(`ask_name: the elicitation was ${answer.action === "cancel" ? "cancelled" : "declined"}`, true)
    default:
      return fail(ErrorCode.InvalidParams, "invalid inputResponses")
  }
}

/**
 * Runs one request of the stateless era, side effects included.
 * @param {string} method @param {unknown} params
 * @returns {{ result?: unknown, error?: unknown, unknownMethod?: boolean, timeline?: Timeline, listen?: Record<string, unknown> }}
 */
const handleModern = (method, params) => {
  if (!(MODERN_METHODS.has(method) || (config.features && FEATURE_MODERN_METHODS.has(method)))) return methodNotFound(method)
  const invalid = checkModernMeta(params) ?? (config.features ? checkLogLevel(params) : undefined)
  if (invalid !== undefined) return invalid
  const args = /** @type {Record<string, any>} */ (params)
  switch (method) {
    case "server/discover":
      return discover()
    case "tools/list":
      return complete(listTools(args, statelessTools()), cacheable())
    case "tools/call":
      if (typeof args.name !== "string") return fail(ErrorCode.InvalidParams, "tools/call needs a tool name")
      toolEvents(args.name, args)
      return complete(args.name === "ask_name" ? askName(args) : callTool(args, true))
    case "subscriptions/listen":
      return listen(args)
    default: {
      const outcome = handleFeature(method, args, true) ?? methodNotFound(method)
      return complete(outcome, CACHEABLE.has(method) ? cacheable() : {})
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Effect tools (--effect-tools, as in ../effects.ts) and the effect identity of every call

const META_EFFECT_IDENTITY = "io.phasebound/effect-identity"
const MAX_EFFECT_DELAY_MS = 60_000
const effectDelaySchema = { type: "integer", minimum: 0, maximum: MAX_EFFECT_DELAY_MS, default: 0 }
const EFFECT_TOOLS = [
  {
    name: "lookup",
    description: "Reads key from the server's store (read-only)",
    inputSchema: { type: "object", properties: { key: { type: "string" }, delayMs: effectDelaySchema }, required: ["key"] },
    annotations: { readOnlyHint: true }
  },
  {
    name: "upsert",
    description: "Sets key to value in the server's store (idempotent)",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, value: { type: "string" }, delayMs: effectDelaySchema },
      required: ["key", "value"]
    },
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false }
  },
  {
    name: "append",
    description: "Appends entry to the ledger and answers its new length (not idempotent)",
    inputSchema: { type: "object", properties: { entry: { type: "string" }, delayMs: effectDelaySchema }, required: ["entry"] },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false }
  }
]
const effectTools = () => (config.effectTools ? EFFECT_TOOLS : [])
/** @type {Map<string, string>} */
const effectStore = new Map()
/** @type {Array<string>} */
const ledger = []

/** "tool NAME", then "identity NAME JSON" when the call carried an effect identity. @param {string} name @param {unknown} params */
const toolEvents = (name, params) => {
  event(`tool ${name}`)
  const identity = metaOf(params)?.[META_EFFECT_IDENTITY]
  if (typeof identity === "string") event(`identity ${name} ${JSON.stringify(identity)}`)
}

/** @param {{ result?: unknown, error?: unknown }} outcome @param {number} delayMs */
const delayedAnswer = (outcome, delayMs) =>
  outcome.result !== undefined && delayMs > 0
    ? playing(outcome.result, { notifications: [], answerAtMs: delayMs, broadcast: [] })
    : outcome

/**
 * Runs an effect tool; undefined for any other tool.
 * @param {string} name @param {Record<string, any>} args
 * @returns {{ result?: unknown, error?: unknown, timeline?: Timeline } | undefined}
 */
const callEffectTool = (name, args) => {
  if (!EFFECT_TOOLS.some((tool) => tool.name === name)) return undefined
  const delayMs = integerArg(args.delayMs, 0, MAX_EFFECT_DELAY_MS)
  if (delayMs === undefined) return text(`${name} expects an integer delayMs (<= ${MAX_EFFECT_DELAY_MS})`, true)
  switch (name) {
    case "lookup":
      if (typeof args.key !== "string") return text("lookup expects a string key", true)
      return delayedAnswer(text(effectStore.get(args.key) ?? ""), delayMs)
    case "upsert":
      if (typeof args.key !== "string" || typeof args.value !== "string") return text("upsert expects string key and value", true)
      effectStore.set(args.key, args.value)
      return delayedAnswer(text(args.value), delayMs)
    default:
      if (typeof args.entry !== "string") return text("append expects a string entry", true)
      ledger.push(args.entry)
      return delayedAnswer(text(String(ledger.length)), delayMs)
  }
}

// ---------------------------------------------------------------------------------------------
// Features (--features, as in ../features.ts)

/**
 * What a request plays out around its answer: notifications at their offsets from its arrival,
 * the answer, then what every list-change listener gets.
 * @typedef {{ notifications: Array<{ atMs: number, notification: Notification }>, answerAtMs: number, broadcast: Array<Notification> }} Timeline
 * @typedef {{ jsonrpc: "2.0", method: string, params?: Record<string, unknown> }} Notification
 */

const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
const META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
const LOGGER = "testkit"
const MAX_BIG_RESOURCE_BYTES = 256 * 1024 * 1024
const MAX_STEPS = 10_000
const MAX_INTERVAL_MS = 60_000
const MAX_LOG_COUNT = 100_000
const MAX_ADDED_TOOLS = 1_000
const MAX_FLOOD_COUNT = 1_000_000
const MAX_FLOOD_BYTES = 100_000_000
const DEFAULT_FLOOD_BYTES = 100

const FEATURE_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: false },
  prompts: { listChanged: false },
  logging: {}
}
/** Methods --features adds to the stateless era. */
const FEATURE_MODERN_METHODS = new Set([
  "resources/list", "resources/read", "resources/templates/list", "prompts/list", "prompts/get", "subscriptions/listen"
])
/** Results of the stateless era that carry caching hints (tools/list aside). */
const CACHEABLE = new Set(["resources/list", "resources/templates/list", "resources/read", "prompts/list"])

const WEATHER_OUTPUT_SCHEMA = {
  type: "object",
  properties: { temperature: { type: "number" }, conditions: { type: "string" } },
  required: ["temperature", "conditions"],
  additionalProperties: false
}

const FEATURE_TOOLS = [
  {
    name: "slow_progress",
    description: "Works for steps × intervalMs, sending a progress notification per step when asked for progress",
    inputSchema: {
      type: "object",
      properties: {
        steps: { type: "integer", default: 3 },
        intervalMs: { type: "integer", default: 10 },
        silentAfter: { type: "integer" }
      }
    }
  },
  {
    name: "weather",
    description: "Structured weather; mode ok, mismatch (breaks the outputSchema), missing (no structuredContent) or extra",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string" }, mode: { type: "string", enum: ["ok", "mismatch", "missing", "extra"] } },
      required: ["city"]
    },
    outputSchema: WEATHER_OUTPUT_SCHEMA
  },
  {
    name: "weather_error",
    description: "Declares the weather outputSchema and fails: a tool error, with no structuredContent",
    inputSchema: { type: "object", properties: { city: { type: "string" } } },
    outputSchema: WEATHER_OUTPUT_SCHEMA
  },
  {
    name: "link_resource",
    description: "Returns a resource_link to test://docs/1",
    inputSchema: { type: "object", properties: {} }
  },
  {
    name: "log",
    description: "Sends count log messages at level (those the log level lets through), then answers",
    inputSchema: {
      type: "object",
      properties: {
        level: { type: "string", enum: [...LOG_LEVELS] },
        message: { type: "string" },
        count: { type: "integer", default: 1 }
      },
      required: ["level", "message"]
    }
  },
  {
    name: "change_tools",
    description: "Adds count tools (added_1, added_2, …), answers, then notifies every listener that the tool list changed",
    inputSchema: { type: "object", properties: { count: { type: "integer", default: 1 } } }
  },
  {
    name: "flood_notifications",
    description: "Answers, then sends every listener count debug log messages of about bytes bytes each",
    inputSchema: {
      type: "object",
      properties: { count: { type: "integer" }, bytes: { type: "integer", default: DEFAULT_FLOOD_BYTES } },
      required: ["count"]
    }
  }
]

/** @type {Array<Record<string, unknown>>} */
const addedTools = []
const featureTools = () => (config.features ? [...FEATURE_TOOLS, ...addedTools] : [])

const RESOURCES = [
  ...Array.from({ length: config.resources }, (_, i) => ({ uri: `test://docs/${i + 1}`, name: `doc-${i + 1}`, mimeType: "text/plain" })),
  { uri: "test://blob/1", name: "blob-1", mimeType: "application/octet-stream" }
]
const RESOURCE_TEMPLATES = [{ uriTemplate: "test://docs/{id}", name: "doc", mimeType: "text/plain" }]
const PROMPTS = [
  { name: "greet", description: "Greets someone", arguments: [{ name: "name", required: true }] },
  { name: "plain" }
]
/** Bytes 0..255, the content of test://blob/1. */
const BLOB = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString("base64")
/** @type {Record<string, Record<string, unknown> | undefined>} */
const WEATHER = {
  ok: { temperature: 21.5, conditions: "sunny" },
  mismatch: { temperature: "hot", conditions: "sunny" },
  missing: undefined,
  extra: { temperature: 1, conditions: "x", wind: 3 }
}

/** The level logging/setLevel set (handshake era); none set means every message goes. @type {string | undefined} */
let logLevel

/** @param {unknown} value */
const isLogLevel = (value) => typeof value === "string" && LOG_LEVELS.includes(value)

/** @param {string} method @param {Record<string, unknown>} [params] @returns {Notification} */
const notification = (method, params) => (params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params })

/** @param {unknown} result @param {Timeline} timeline */
const playing = (result, timeline) => ({ result, timeline })

/** An integer argument: its default when absent, undefined when not an integer in range. @param {unknown} value @param {number | undefined} fallback @param {number} max */
const integerArg = (value, fallback, max) => {
  if (value === undefined) return fallback
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= max ? value : undefined
}

/** Adds `count` tools; returns the notification that says so. @param {number} count */
const changeTools = (count) => {
  for (let i = 0; i < count; i++) {
    const n = addedTools.length + 1
    addedTools.push({
      name: `added_${n}`,
      description: `Added by change_tools (number ${n}); returns its text argument`,
      inputSchema: { type: "object", properties: { text: { type: "string" } } }
    })
  }
  return notification("notifications/tools/list_changed")
}

/** @param {Record<string, any>} args @param {Record<string, any>} params */
const slowProgress = (args, params) => {
  const steps = integerArg(args.steps, 3, MAX_STEPS)
  const intervalMs = integerArg(args.intervalMs, 10, MAX_INTERVAL_MS)
  const silentAfter = integerArg(args.silentAfter, steps, MAX_STEPS)
  if (steps === undefined || intervalMs === undefined || silentAfter === undefined) {
    return text(`slow_progress expects integers steps (<= ${MAX_STEPS}), intervalMs (<= ${MAX_INTERVAL_MS}) and silentAfter`, true)
  }
  const progressToken = metaOf(params)?.progressToken
  const isToken = typeof progressToken === "string" || Number.isSafeInteger(progressToken)
  const sent = isToken ? Math.min(steps, silentAfter) : 0
  const notifications = Array.from({ length: sent }, (_, i) => ({
    atMs: (i + 1) * intervalMs,
    notification: notification("notifications/progress", {
      progressToken,
      progress: i + 1,
      total: steps,
      message: `step ${i + 1} of ${steps}`
    })
  }))
  return playing({ content: [{ type: "text", text: "done" }] }, { notifications, answerAtMs: steps * intervalMs, broadcast: [] })
}

/** @param {Record<string, any>} args */
const weather = (args) => {
  if (typeof args.city !== "string") return text("weather expects a string city", true)
  const mode = args.mode ?? "ok"
  if (typeof mode !== "string" || !(mode in WEATHER)) return text("weather expects mode ok, mismatch, missing or extra", true)
  const structured = WEATHER[mode]
  const content = [{ type: "text", text: JSON.stringify(structured ?? WEATHER.ok) }]
  return ok(structured === undefined ? { content } : { content, structuredContent: structured })
}

/** @param {Record<string, any>} args @param {Record<string, any>} params @param {boolean} stateless */
const logTool = (args, params, stateless) => {
  const count = integerArg(args.count, 1, MAX_LOG_COUNT)
  if (!isLogLevel(args.level) || typeof args.message !== "string" || count === undefined) {
    return text(`log expects a level (${LOG_LEVELS.join(", ")}), a string message and an integer count`, true)
  }
  // Stateless: only under a level the request asked for; handshake: the level set, else all.
  const requested = metaOf(params)?.[META_LOG_LEVEL]
  const threshold = stateless ? (isLogLevel(requested) ? requested : undefined) : logLevel ?? "debug"
  const sent = threshold !== undefined && LOG_LEVELS.indexOf(args.level) >= LOG_LEVELS.indexOf(String(threshold)) ? count : 0
  const message = notification("notifications/message", { level: args.level, logger: LOGGER, data: args.message })
  const notifications = Array.from({ length: sent }, () => ({ atMs: 0, notification: message }))
  return playing({ content: [{ type: "text", text: `logged ${sent}` }] }, { notifications, answerAtMs: 0, broadcast: [] })
}

/**
 * Runs a feature tool (or one change_tools added); undefined for any other tool.
 * @param {string} name @param {Record<string, any>} args @param {Record<string, any>} params @param {boolean} stateless
 * @returns {{ result?: unknown, error?: unknown, timeline?: Timeline } | undefined}
 */
const callFeatureTool = (name, args, params, stateless) => {
  switch (name) {
    case "slow_progress":
      return slowProgress(args, params)
    case "weather":
      return weather(args)
    case "weather_error":
      return text("weather_error: the weather service is unavailable", true)
    case "link_resource":
      return ok({ content: [{ type: "resource_link", uri: "test://docs/1", name: "doc-1", mimeType: "text/plain" }] })
    case "log":
      return logTool(args, params, stateless)
    case "change_tools": {
      const count = integerArg(args.count, 1, MAX_ADDED_TOOLS)
      if (count === undefined) return text(`change_tools expects an integer count (<= ${MAX_ADDED_TOOLS})`, true)
      const changed = changeTools(count)
      return playing({ content: [{ type: "text", text: `added ${count}` }] }, { notifications: [], answerAtMs: 0, broadcast: [changed] })
    }
    case "flood_notifications": {
      const count = integerArg(args.count, undefined, MAX_FLOOD_COUNT)
      const bytes = integerArg(args.bytes, DEFAULT_FLOOD_BYTES, MAX_FLOOD_BYTES)
      if (count === undefined || bytes === undefined) {
        return text(`flood_notifications expects integers count (<= ${MAX_FLOOD_COUNT}) and bytes (<= ${MAX_FLOOD_BYTES})`, true)
      }
      const message = notification("notifications/message", { level: "debug", logger: LOGGER, data: padString(bytes) })
      const broadcast = Array.from({ length: count }, () => message)
      return playing({ content: [{ type: "text", text: `flooding ${count}` }] }, { notifications: [], answerAtMs: 0, broadcast })
    }
  }
  if (!addedTools.some((tool) => tool.name === name)) return undefined
  return text(typeof args.text === "string" ? args.text : name)
}

/** @param {unknown} params @param {boolean} stateless */
const readResource = (params, stateless) => {
  const uri = isRecord(params) ? params.uri : undefined
  if (typeof uri !== "string") return fail(ErrorCode.InvalidParams, "resources/read needs a uri")
  const doc = /^test:\/\/docs\/([1-9][0-9]*)$/.exec(uri)
  if (doc !== null && Number(doc[1]) <= config.resources) {
    return ok({ contents: [{ uri, mimeType: "text/plain", text: `Document ${doc[1]}` }] })
  }
  if (uri === "test://blob/1") return ok({ contents: [{ uri, mimeType: "application/octet-stream", blob: BLOB }] })
  const big = /^test:\/\/big\/(0|[1-9][0-9]*)$/.exec(uri)
  if (big !== null && Number(big[1]) <= MAX_BIG_RESOURCE_BYTES) {
    return ok({ contents: [{ uri, mimeType: "text/plain", text: padString(Number(big[1])) }] })
  }
  // -32002 until 2025-11-25; 2026-07-28 makes it -32602 (and asks clients to accept both).
  return fail(stateless ? ErrorCode.InvalidParams : ErrorCode.ResourceNotFound, "Resource not found", { uri })
}

/** @param {unknown} params */
const getPrompt = (params) => {
  const name = isRecord(params) ? params.name : undefined
  const args = isRecord(params) && isRecord(params.arguments) ? params.arguments : {}
  switch (name) {
    case "greet":
      if (typeof args.name !== "string") return fail(ErrorCode.InvalidParams, "Missing required argument: name")
      return ok({ description: "Greets someone", messages: [{ role: "user", content: { type: "text", text: `Hello, ${args.name}` } }] })
    case "plain":
      return ok({ messages: [{ role: "user", content: { type: "text", text: "A plain prompt" } }] })
    default:
      return fail(ErrorCode.InvalidParams, `Unknown prompt: ${String(name)}`)
  }
}

/**
 * Runs a feature method of the era; undefined for any other method.
 * @param {string} method @param {unknown} params @param {boolean} stateless
 */
const handleFeature = (method, params, stateless) => {
  switch (method) {
    case "resources/list":
      return listPage("resources", RESOURCES, params)
    case "resources/read":
      return readResource(params, stateless)
    case "resources/templates/list":
      return listPage("resourceTemplates", RESOURCE_TEMPLATES, params)
    case "prompts/list":
      return listPage("prompts", PROMPTS, params)
    case "prompts/get":
      return getPrompt(params)
    case "logging/setLevel": {
      if (stateless) return undefined // gone in 2026-07-28: the level travels in each request's _meta
      const level = isRecord(params) ? params.level : undefined
      if (!isLogLevel(level)) return fail(ErrorCode.InvalidParams, `Invalid log level: ${String(level)}`)
      logLevel = /** @type {string} */ (level)
      return ok({})
    }
    default:
      return undefined
  }
}

/** subscriptions/listen: the agreed filter (tool list changes only), or -32602 without a filter. @param {Record<string, any>} params */
const listen = (params) => {
  if (!isRecord(params.notifications)) return fail(ErrorCode.InvalidParams, "subscriptions/listen needs a notifications filter")
  return { listen: params.notifications.toolsListChanged === true ? { toolsListChanged: true } : {} }
}

/** A stateless request's _meta log level, if present, must be a level. @param {unknown} params */
const checkLogLevel = (params) => {
  const meta = metaOf(params)
  if (meta === undefined || !(META_LOG_LEVEL in meta) || isLogLevel(meta[META_LOG_LEVEL])) return undefined
  return fail(ErrorCode.InvalidParams, `Invalid params: "${META_LOG_LEVEL}" is not a log level`)
}

// ---------------------------------------------------------------------------------------------
// Serving

/**
 * Runs one request in the configured era.
 * @param {string} method @param {unknown} params
 * @returns {{ outcome: Outcome, modern: boolean }}
 * @typedef {{ result?: unknown, error?: unknown, unknownMethod?: boolean, timeline?: Timeline, listen?: Record<string, unknown> }} Outcome
 */
const serve = (method, params) => {
  if (config.era === "stateless" && method === "initialize") {
    // A modern-only server names its versions to a legacy client, which cannot fall forward.
    return { outcome: unsupportedVersion(requestedVersion(params)), modern: true }
  }
  return isModernRequest(method, params)
    ? { outcome: handleModern(method, params), modern: true }
    : { outcome: handle(method, params), modern: false }
}

// ---------------------------------------------------------------------------------------------
// Output: every stdout write goes through one queue, so chunked and never-ending lines are
// never interleaved with other lines. A write resolves on its callback (the data was handed to
// the pipe), which is also how backpressure is respected.

let stdoutBroken = false
/** Set when the process is about to exit: long writers stop at their next chunk. */
let stopping = false
/** @type {Promise<unknown>} */
let queue = Promise.resolve()

process.stdout.on("error", (error) => {
  stdoutBroken = true
  log(`stdout failed (${/** @type {any} */ (error).code ?? error.message}); no more output`)
})

/** @param {() => Promise<unknown> | unknown} job */
const enqueue = (job) => {
  queue = queue.then(job).catch((error) => log(`output job failed: ${error instanceof Error ? error.message : String(error)}`))
  return queue
}

/** @param {Uint8Array | string} data @returns {Promise<boolean>} */
const write = (data) =>
  new Promise((resolve) => {
    if (stdoutBroken) return resolve(false)
    try {
      process.stdout.write(data, (error) => resolve(error == null))
    } catch {
      stdoutBroken = true
      resolve(false)
    }
  })

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))

const banner = globalFault("banner")
const bannerLine = banner === undefined ? undefined : `${typeof banner.text === "string" ? banner.text : DEFAULT_BANNER}\n`

/** Writes one whole line (a string or bytes ending in "\n"), after the banner if asked. @param {Uint8Array | string} line */
const writeLine = async (line) => {
  if (bannerLine !== undefined && banner?.bannerEachResponse === true) await write(bannerLine)
  await write(line)
}

/** @param {unknown} message */
const sendMessage = (message) => enqueue(() => writeLine(JSON.stringify(message) + "\n"))

/** @param {string | number | null} id @param {{ result?: unknown, error?: unknown }} outcome */
const toMessage = (id, outcome) =>
  "error" in outcome ? { jsonrpc: "2.0", id, error: outcome.error } : { jsonrpc: "2.0", id, result: outcome.result }

// ---------------------------------------------------------------------------------------------
// Playing out (--features): a request's notifications before its answer, list changes after it

/** A notification of the server's own, recorded in the events file as it is handed to stdout. @param {Notification} message */
const sendNotification = (message) =>
  enqueue(async () => {
    if (stdoutBroken) return
    event(`sent ${message.method}`)
    await writeLine(JSON.stringify(message) + "\n")
  })

/** Open subscriptions, by the id of their subscriptions/listen request. @type {Map<string | number, { toolsListChanged: boolean }>} */
const subscriptions = new Map()
/** Requests still playing out, by id: each entry stops one. @type {Map<string | number, () => boolean>} */
const inFlight = new Map()
/** Whether initialize was served: stdout is then a handshake-era listener of list changes. */
let initialized = false

/** A notification as a subscription delivers it: its subscriptionId in _meta. @param {Notification} message @param {string | number} id */
const onSubscription = (message, id) => {
  const params = message.params ?? {}
  return notification(message.method, { ...params, _meta: { ...(isRecord(params._meta) ? params._meta : {}), [META_SUBSCRIPTION_ID]: id } })
}

/** Sends each notification to every listener. @param {ReadonlyArray<Notification>} notifications */
const broadcast = (notifications) => {
  if (initialized && config.era !== "stateless") for (const message of notifications) sendNotification(message)
  for (const [id, subscription] of subscriptions) {
    if (subscription.toolsListChanged) for (const message of notifications) sendNotification(onSubscription(message, id))
  }
}

/** What a fault answers in place of a subscription: its graceful end. @param {string | number} id */
const listenClosed = (id) => ok({ resultType: "complete", _meta: { [META_SUBSCRIPTION_ID]: id } })

/**
 * Plays a timeline (as in ../timeline.ts): each notification once its offset has passed, then the
 * answer; what is due goes at once. Returns `stop` (true if it was still playing).
 * @param {Timeline} timeline @param {{ notify: (message: Notification) => void, answer: () => void }} sink
 */
const playTimeline = (timeline, sink) => {
  const start = Date.now()
  let index = 0
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  let finished = false
  const step = () => {
    timer = undefined
    for (;;) {
      const next = timeline.notifications[index]
      const wait = start + (next === undefined ? timeline.answerAtMs : next.atMs) - Date.now()
      if (wait > 0) {
        timer = setTimeout(step, wait)
        return
      }
      if (next === undefined) break
      index += 1
      sink.notify(next.notification)
    }
    finished = true
    sink.answer()
  }
  step()
  return () => {
    if (finished) return false
    finished = true
    if (timer !== undefined) clearTimeout(timer)
    return true
  }
}

/**
 * Answers a request and plays out what comes with it: a subscription's acknowledgement, or the
 * request's notifications, its answer, then its list changes.
 * @param {string | number} id @param {Outcome} outcome
 */
const respond = (id, outcome) => {
  if (outcome.listen !== undefined) {
    subscriptions.set(id, { toolsListChanged: outcome.listen.toolsListChanged === true })
    return sendNotification(onSubscription(notification("notifications/subscriptions/acknowledged", { notifications: outcome.listen }), id))
  }
  const timeline = outcome.timeline
  if (timeline === undefined) return sendMessage(toMessage(id, outcome))
  let answered = false
  const stop = playTimeline(timeline, {
    notify: sendNotification,
    answer: () => {
      answered = true
      inFlight.delete(id)
      sendMessage(toMessage(id, outcome))
      broadcast(timeline.broadcast)
    }
  })
  if (!answered) inFlight.set(id, stop)
}

/** notifications/cancelled: stops a request still playing out, or ends a subscription. @param {unknown} params */
const cancelPlaying = (params) => {
  const requestId = isRecord(params) ? params.requestId : undefined
  if (typeof requestId !== "string" && typeof requestId !== "number") return
  inFlight.get(requestId)?.()
  inFlight.delete(requestId)
  if (subscriptions.delete(requestId)) event(`subscription-closed ${JSON.stringify(requestId)}`)
}

/** @param {Buffer} line @param {number} chunkSize @param {number} delayMs */
const writeInChunks = async (line, chunkSize, delayMs) => {
  if (bannerLine !== undefined && banner?.bannerEachResponse === true) await write(bannerLine)
  for (let offset = 0; offset < line.length; offset += chunkSize) {
    if (stopping || stdoutBroken) return
    if (!(await write(line.subarray(offset, offset + chunkSize)))) return
    await pause(delayMs)
  }
}

/** A JSON line that is started and never finished, 64 KiB at a time. @param {string | number} id */
const writeForever = async (id) => {
  let next = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`)
  let total = 0
  while (!stopping && !stdoutBroken) {
    if (!(await write(next))) break
    total += next.length
    next = NEVER_ENDING_CHUNK
  }
  log(`never-ending line stopped after ${total} bytes`)
}

// ---------------------------------------------------------------------------------------------
// Faults

/**
 * Delayed answers to requests served statelessly, by request id: a notifications/cancelled for
 * one drops its answer (the stateless era forbids any further message for a cancelled request).
 * @type {Map<string | number, ReturnType<typeof setTimeout>>}
 */
const pendingAnswers = new Map()

/** @param {unknown} params */
const cancelPending = (params) => {
  const requestId = isRecord(params) ? params.requestId : undefined
  if (typeof requestId !== "string" && typeof requestId !== "number") return
  const timer = pendingAnswers.get(requestId)
  if (timer === undefined) return
  clearTimeout(timer)
  pendingAnswers.delete(requestId)
  log(`request ${JSON.stringify(requestId)} cancelled; its delayed answer is dropped`)
}

/**
 * Answers a request as the fault says.
 * @param {Record<string, any>} fault @param {string | number} id @param {string} method
 * @param {Outcome} served
 * @param {{ params?: unknown, modern?: boolean }} [request] the request's params; whether it was served statelessly
 */
const respondWithFault = (fault, id, method, served, request = {}) => {
  /** @type {Outcome} */
  const outcome = served.listen === undefined ? served : listenClosed(id)
  const normal = toMessage(id, outcome)
  switch (fault.kind) {
    case "exact-size": {
      const { minimum, line } = exactLine(id, method, "result" in outcome ? outcome.result : {}, fault.bytes)
      if (line === undefined) {
        log(`exact-size: ${fault.bytes} bytes is impossible for ${method}, the smallest line is ${minimum} bytes`)
        return sendMessage(toMessage(id, fail(ErrorCode.InternalError, `testkit: exact-size ${fault.bytes} is below ${minimum}`)))
      }
      return enqueue(() => writeInChunks(line, fault.chunkSize ?? DEFAULT_CHUNK_SIZE, fault.chunkDelayMs ?? 0))
    }
    case "never-ending-line":
      return enqueue(() => writeForever(id))
    case "exit":
      return exitAfterOutput(fault.code ?? DEFAULT_EXIT_CODE, `exit fault on ${method}`)
    case "never-answer":
      return
    case "exit-mid-answer":
      // Half of the response line (no "\n"), then the process exits.
      return enqueue(async () => {
        const line = Buffer.from(JSON.stringify(normal) + "\n")
        await write(line.subarray(0, Math.floor(line.length / 2)))
        log(`exiting with code ${fault.code ?? DEFAULT_EXIT_CODE} in the middle of an answer to ${method}`)
        process.exit(fault.code ?? DEFAULT_EXIT_CODE)
      })
    case "invalid-utf8":
      // 0xC3 opens a 2-byte sequence; 0x28 "(" is not a continuation byte.
      return enqueue(() =>
        writeLine(Buffer.concat([
          Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"bad `),
          Buffer.from([0xc3, 0x28]),
          Buffer.from(` byte"}]}}\n`)
        ]))
      )
    case "invalid-json":
      return enqueue(() => writeLine(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},\n`))
    case "not-jsonrpc":
      return enqueue(async () => {
        await writeLine(`{"hello":1}\n`)
        await writeLine(JSON.stringify(normal) + "\n")
      })
    case "wrong-id":
      return sendMessage({ ...normal, id: 999_999 })
    case "delay": {
      const timer = setTimeout(() => {
        pendingAnswers.delete(id)
        respond(id, served)
      }, fault.ms)
      if (request.modern === true) pendingAnswers.set(id, timer)
      return
    }
    case "jsonrpc-error": {
      const error = fault.data === undefined
        ? { code: fault.code, message: fault.message }
        : { code: fault.code, message: fault.message, data: fault.data }
      return sendMessage({ jsonrpc: "2.0", id, error })
    }
    case "unsupported-version":
      return sendMessage(toMessage(id, unsupportedVersion(requestedVersion(request.params), fault.supported ?? config.supportedVersions)))
    case "input-required":
      return sendMessage(toMessage(id, inputRequired(
        fault.inputRequests === null ? undefined : fault.inputRequests ?? ASK_NAME_INPUT_REQUESTS,
        fault.requestState === null ? undefined : fault.requestState ?? issueRequestState("ask_name")
      )))
    case "result-type": {
      if (!("result" in outcome && isRecord(outcome.result))) return sendMessage(normal) // an error answer as is
      const { resultType: _, ...rest } = outcome.result
      return sendMessage(toMessage(id, ok(fault.value === null ? rest : { resultType: fault.value ?? "bogus", ...rest })))
    }
  }
}

/** Exits once every earlier answer has been handed to stdout. @param {number} code @param {string} why */
const exitAfterOutput = (code, why) =>
  enqueue(() => {
    log(`exiting with code ${code}: ${why}`)
    process.exit(code)
  })

// ---------------------------------------------------------------------------------------------
// Input: bytes split on "\n", each line decoded strictly and parsed

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/** @param {Buffer} bytes */
const handleLine = (bytes) => {
  let textLine
  try {
    textLine = strictUtf8.decode(bytes)
  } catch {
    record("#invalid-utf8")
    return sendMessage(toMessage(null, fail(ErrorCode.ParseError, "Parse error: invalid UTF-8")))
  }
  if (textLine.trim() === "") return
  let value
  try {
    value = JSON.parse(textLine)
  } catch {
    record("#invalid-json")
    return sendMessage(toMessage(null, fail(ErrorCode.ParseError, "Parse error")))
  }
  if (Array.isArray(value)) {
    record("#batch")
    return sendMessage(toMessage(null, fail(ErrorCode.InvalidRequest, "Batches are not supported")))
  }
  if (!isRecord(value) || value.jsonrpc !== "2.0") {
    record("#not-jsonrpc")
    return sendMessage(toMessage(null, fail(ErrorCode.InvalidRequest, "Invalid Request")))
  }
  const { id, method } = value
  if (typeof method !== "string") {
    record("#response") // an answer to a server request; this server sends none
    return
  }
  record(method)
  if (id === undefined) {
    if (method === "notifications/cancelled") {
      cancelPending(value.params)
      cancelPlaying(value.params)
    }
    const fault = takeFault(method, true)
    if (fault !== undefined) respondWithFault(fault, 0, method, ok({}))
    return
  }
  if (typeof id !== "string" && typeof id !== "number") {
    return sendMessage(toMessage(null, fail(ErrorCode.InvalidRequest, "Invalid Request: bad id")))
  }
  // Run the request (side effects included) before any fault decides how it is answered.
  const { outcome, modern } = serve(method, value.params)
  if (method === "initialize" && !modern && "result" in outcome) initialized = true
  const fault = takeFault(method, false)
  if (fault === undefined) {
    if (outcome.unknownMethod === true && config.silentOnUnknown) {
      log(`${method}: unknown method, left unanswered (silent-on-unknown)`)
      return
    }
    return respond(id, outcome)
  }
  // The fault replaces the answer and what comes with it (delay only postpones them), not the change.
  if (outcome.timeline !== undefined && fault.kind !== "delay") broadcast(outcome.timeline.broadcast)
  return respondWithFault(fault, id, method, outcome, { params: value.params, modern })
}

const readStdin = () => {
  /** @type {Buffer[]} */
  let pending = []
  process.stdin.on("data", (chunk) => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk
    let newline = data.indexOf(0x0a)
    while (newline !== -1) {
      pending.push(data.subarray(0, newline))
      const line = Buffer.concat(pending)
      pending = []
      handleLine(line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, -1) : line)
      data = data.subarray(newline + 1)
      newline = data.indexOf(0x0a)
    }
    if (data.length > 0) pending.push(data)
  })
  process.stdin.on("error", (error) => log(`stdin failed: ${error.message}`))
  process.stdin.on("end", onStdinEnd)
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

const ignoreSigterm = globalFault("ignore-sigterm") !== undefined

const onStdinEnd = () => {
  if (ignoreSigterm) {
    log("stdin closed; staying alive (ignore-sigterm)")
    return
  }
  const linger = globalFault("linger-after-stdin-close")?.ms ?? 0
  log(linger > 0 ? `stdin closed; exiting in ${linger} ms` : "stdin closed; exiting")
  setTimeout(() => {
    stopping = true
    exitAfterOutput(0, "stdin closed")
    // A write the reader never takes must not keep us here.
    setTimeout(() => process.exit(0), 500).unref()
  }, linger)
}

/** Writes exactly `bytes` bytes of log lines to stderr and resolves once they were all taken. @param {number} bytes */
const floodStderr = async (bytes) => {
  const line = "[phasebound-testkit stdio] stderr flood: this log line only proves that the client drains stderr\n"
  const all = Buffer.from(line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes))
  if (all.length > 0) all[all.length - 1] = 0x0a
  const writes = []
  for (let offset = 0; offset < all.length; offset += 16 * 1024) {
    const piece = all.subarray(offset, offset + 16 * 1024)
    writes.push(new Promise((resolve) => process.stderr.write(piece, () => resolve(undefined))))
  }
  await Promise.all(writes)
}

/**
 * `pid start`: the start time (Linux, field 22 of /proc/self/stat) tells this process from a
 * later one given the same pid (src/processIdentity.ts reads it back); `pid` alone elsewhere.
 */
const ownIdentity = () => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8")
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
    return /^\d+$/.test(start ?? "") ? `${process.pid} ${start}` : String(process.pid)
  } catch {
    return String(process.pid)
  }
}

const main = async () => {
  const pidFault = config.faults.filter((fault) => fault.kind === "write-pid")
  for (const fault of pidFault) writeFileSync(String(fault.path), ownIdentity())
  writeCounter(0)
  if (ignoreSigterm) {
    process.on("SIGTERM", () => log("SIGTERM received and ignored"))
    setInterval(() => {}, 1 << 30) // stays alive after stdin closes: only SIGKILL ends it
  }
  if (bannerLine !== undefined) await enqueue(() => write(bannerLine))
  const flood = globalFault("stderr-flood")
  if (flood !== undefined) {
    // Nothing is read (so nothing is answered) until the client has taken the whole flood.
    await floodStderr(Number(flood.bytes))
    log(`stderr flood of ${flood.bytes} bytes taken`)
  }
  readStdin()
}

main().catch((error) => {
  log(`startup failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(70)
})
