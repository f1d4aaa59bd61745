/**
 * The stateless era (2026-07-28) of MCP, as pure logic with no HTTP in it: the per-request
 * `_meta`, the request metadata headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
 * `Mcp-Param-*` from `x-mcp-header`) and their Base64 sentinel encoding, the errors of the era,
 * and the multi round-trip (MRTR) pieces: input requests and request states.
 */
import { createHmac, randomUUID } from "node:crypto"
import { ErrorCode, isRecord, type JsonRpcErrorObject } from "./jsonrpc.js"

/** Which protocol eras a server speaks: 2025 `initialize` + sessions, 2026 per-request `_meta`, or both. */
export type Era = "handshake" | "stateless" | "dual"

export const MODERN_PROTOCOL_VERSION = "2026-07-28"
export const DEFAULT_MODERN_VERSIONS: ReadonlyArray<string> = [MODERN_PROTOCOL_VERSION]
/** ttlMs of server/discover and tools/list results unless configured. */
export const DEFAULT_TTL_MS = 60_000

export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
/** The per-request log level (logging's only switch in this era, see features.ts). */
export const META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
/** On every message of a `subscriptions/listen` stream: the JSON-RPC id of the request that opened it. */
export const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

/** Request header names, lower case as Node's `req.headers` keeps them. */
export const HEADER_PROTOCOL_VERSION = "mcp-protocol-version"
export const HEADER_METHOD = "mcp-method"
export const HEADER_NAME = "mcp-name"
export const HEADER_PARAM_PREFIX = "mcp-param-"

/** Methods of the stateless era this server implements (anything else is 404 + -32601). */
export const MODERN_METHODS: ReadonlySet<string> = new Set(["server/discover", "tools/list", "tools/call"])

/** Methods whose `Mcp-Name` header mirrors a body field, and which field. */
const NAME_SOURCE: Readonly<Record<string, "name" | "uri">> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri"
}

export type HeaderLookup = (lowerCaseName: string) => string | undefined

/** A refusal of the stateless era: the HTTP status and the JSON-RPC error that goes with it. */
export interface Refusal {
  readonly status: number
  readonly error: JsonRpcErrorObject
}

export const metaOf = (params: unknown): Readonly<Record<string, unknown>> | undefined =>
  isRecord(params) && isRecord(params["_meta"]) ? params["_meta"] : undefined

/** Whether a request carries the stateless era's per-request metadata (even malformed). */
export const hasModernMeta = (params: unknown): boolean => {
  const meta = metaOf(params)
  return meta !== undefined && (META_PROTOCOL_VERSION in meta || META_CLIENT_CAPABILITIES in meta)
}

export const unsupportedVersionError = (
  supported: ReadonlyArray<string>,
  requested: string
): JsonRpcErrorObject => ({
  code: ErrorCode.UnsupportedProtocolVersion,
  message: "Unsupported protocol version",
  data: { supported: [...supported], requested }
})

const invalidParams = (message: string): Refusal => ({
  status: 400,
  error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${message}` }
})

const headerMismatch = (message: string): Refusal => ({
  status: 400,
  error: { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` }
})

const SENTINEL = /^=\?base64\?(.*)\?=$/s
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A header value as the body value it mirrors: `=?base64?…?=` decoded (standard Base64 of UTF-8),
 * anything else as is. `undefined` when the sentinel form does not hold valid Base64 of UTF-8.
 */
export const decodeHeaderValue = (raw: string): string | undefined => {
  const match = SENTINEL.exec(raw)
  if (match === null) return raw
  const encoded = match[1] ?? ""
  if (!BASE64.test(encoded)) return undefined
  try {
    return strictUtf8.decode(Buffer.from(encoded, "base64"))
  } catch {
    return undefined
  }
}

/** The Base64 sentinel form of a value, as a client sends a value that is not plain header-safe ASCII. */
export const encodeHeaderValue = (value: string): string => `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`

/** RFC 9110 `tchar`: what an `x-mcp-header` name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** One `x-mcp-header` annotation: the header name part and the chain of `properties` keys to it. */
export interface HeaderAnnotation {
  readonly header: string
  readonly path: ReadonlyArray<string>
}

/**
 * The `x-mcp-header` annotations of an input schema. `valid` is false when any annotation breaks
 * the rules (empty or not a token, duplicate ignoring case, not on an integer/string/boolean
 * parameter, or not reachable through `properties` alone), which makes the whole tool invalid.
 */
export const headerAnnotations = (
  inputSchema: unknown
): { readonly valid: boolean; readonly annotations: ReadonlyArray<HeaderAnnotation> } => {
  const annotations: Array<HeaderAnnotation> = []
  let valid = true
  const walk = (schema: unknown, path: ReadonlyArray<string> | undefined): void => {
    if (Array.isArray(schema)) {
      for (const item of schema) walk(item, undefined)
      return
    }
    if (!isRecord(schema)) return
    if ("x-mcp-header" in schema) {
      const header = schema["x-mcp-header"]
      const type = schema["type"]
      if (
        path === undefined || path.length === 0 || typeof header !== "string" || !TOKEN.test(header) ||
        !(type === "string" || type === "integer" || type === "boolean")
      ) {
        valid = false
      } else {
        annotations.push({ header, path })
      }
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key === "properties" && isRecord(value) && path !== undefined) {
        for (const [name, child] of Object.entries(value)) walk(child, [...path, name])
      } else if (typeof value === "object" && value !== null) {
        walk(value, undefined) // items, oneOf, $defs, …: nothing below is statically reachable
      }
    }
  }
  walk(inputSchema, [])
  const names = annotations.map((annotation) => annotation.header.toLowerCase())
  if (new Set(names).size !== names.length) valid = false
  return { valid, annotations }
}

const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let value: unknown = args
  for (const key of path) {
    if (!isRecord(value)) return undefined
    value = value[key]
  }
  return value
}

/** Whether a (decoded) header value mirrors a body value: strings as is, booleans lower case, numbers numerically. */
const mirrors = (header: string, value: unknown): boolean => {
  switch (typeof value) {
    case "string":
      return header === value
    case "boolean":
      return header === String(value)
    case "number":
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(header) && Number(header) === value
    default:
      return false
  }
}

/**
 * The `Mcp-Param-{Name}` check of one tools/call: a value present in the arguments needs its
 * header, mirrored; an absent (or null) value needs no header. Unchecked for an invalid tool.
 */
export const checkParamHeaders = (
  inputSchema: unknown,
  args: unknown,
  header: HeaderLookup
): Refusal | undefined => {
  const { valid, annotations } = headerAnnotations(inputSchema)
  if (!valid) return undefined
  for (const annotation of annotations) {
    const value = valueAt(args, annotation.path)
    const name = `Mcp-Param-${annotation.header}`
    const raw = header((HEADER_PARAM_PREFIX + annotation.header).toLowerCase())
    if (value === undefined || value === null) {
      if (raw !== undefined) return headerMismatch(`${name} is sent but the argument has no value`)
      continue
    }
    if (raw === undefined) return headerMismatch(`missing ${name} header`)
    const decoded = decodeHeaderValue(raw)
    if (decoded === undefined) return headerMismatch(`${name} header value is malformed`)
    if (!mirrors(decoded, value)) {
      return headerMismatch(`${name} header value '${decoded}' does not match body value '${String(value)}'`)
    }
  }
  return undefined
}

/** The validated `_meta` of a stateless request. */
export interface RequestMeta {
  readonly protocolVersion: string
  readonly clientCapabilities: Readonly<Record<string, unknown>>
  readonly clientInfo: { readonly name: string; readonly version: string } | undefined
}

/**
 * Everything a stateless request must satisfy before its method runs, in this order: a string
 * protocol version in `_meta` (-32602), the `MCP-Protocol-Version` header equal to it (-32020),
 * a supported version (-32022), `clientCapabilities` an object and `clientInfo` (optional)
 * `{name, version}` (-32602), `Mcp-Method` equal to the method (-32020), `Mcp-Name` equal to
 * `params.name` / `params.uri` where the method has one (-32020). All refusals are HTTP 400.
 */
export const validateStatelessRequest = (input: {
  readonly method: string
  readonly params: unknown
  /** The request's headers; undefined on a framing that has none (stdio): their checks are skipped. */
  readonly header: HeaderLookup | undefined
  /** Versions served statelessly. */
  readonly accepted: ReadonlyArray<string>
  /** Versions named in a -32022 (the accepted ones and any others the server speaks). */
  readonly supported: ReadonlyArray<string>
}): { readonly ok: true; readonly meta: RequestMeta } | { readonly ok: false; readonly refusal: Refusal } => {
  const refuse = (refusal: Refusal) => ({ ok: false as const, refusal })
  const { method, params, header } = input
  if (params !== undefined && !isRecord(params)) return refuse(invalidParams("params must be an object"))
  const meta = metaOf(params)
  if (meta === undefined) return refuse(invalidParams("missing _meta"))
  const protocolVersion = meta[META_PROTOCOL_VERSION]
  if (typeof protocolVersion !== "string") return refuse(invalidParams(`_meta needs a string "${META_PROTOCOL_VERSION}"`))

  if (header !== undefined) {
    const versionHeader = header(HEADER_PROTOCOL_VERSION)
    if (versionHeader === undefined) return refuse(headerMismatch("missing MCP-Protocol-Version header"))
    if (versionHeader !== protocolVersion) {
      return refuse(headerMismatch(`MCP-Protocol-Version header value '${versionHeader}' does not match body value '${protocolVersion}'`))
    }
  }
  if (!input.accepted.includes(protocolVersion)) {
    return refuse({ status: 400, error: unsupportedVersionError(input.supported, protocolVersion) })
  }

  const clientCapabilities = meta[META_CLIENT_CAPABILITIES]
  if (!isRecord(clientCapabilities)) return refuse(invalidParams(`_meta needs an object "${META_CLIENT_CAPABILITIES}"`))
  const info = meta[META_CLIENT_INFO]
  if (info !== undefined && !(isRecord(info) && typeof info["name"] === "string" && typeof info["version"] === "string")) {
    return refuse(invalidParams(`"${META_CLIENT_INFO}" needs a string name and version`))
  }

  const refusal = header === undefined ? undefined : checkMethodHeaders(method, params, header)
  if (refusal !== undefined) return refuse(refusal)
  return {
    ok: true,
    meta: {
      protocolVersion,
      clientCapabilities,
      clientInfo: isRecord(info) ? { name: String(info["name"]), version: String(info["version"]) } : undefined
    }
  }
}

/** `Mcp-Method` equal to the method, `Mcp-Name` to `params.name` / `params.uri` where the method has one (-32020). */
const checkMethodHeaders = (method: string, params: unknown, header: HeaderLookup): Refusal | undefined => {
  const methodHeader = header(HEADER_METHOD)
  if (methodHeader === undefined) return headerMismatch("missing Mcp-Method header")
  if (methodHeader !== method) {
    return headerMismatch(`Mcp-Method header value '${methodHeader}' does not match body value '${method}'`)
  }
  const source = NAME_SOURCE[method]
  if (source === undefined) return undefined
  const raw = header(HEADER_NAME)
  if (raw === undefined) return headerMismatch("missing Mcp-Name header")
  const decoded = decodeHeaderValue(raw)
  if (decoded === undefined) return headerMismatch("Mcp-Name header value is malformed")
  const body = isRecord(params) ? params[source] : undefined
  if (decoded !== body) return headerMismatch(`Mcp-Name header value '${decoded}' does not match body value '${String(body)}'`)
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Multi round-trip requests (MRTR)

/** The one input request of `ask_name` (and of the `input-required` fault): a form elicitation. */
export const ASK_NAME_INPUT_KEY = "name"
export const ASK_NAME_INPUT_REQUESTS: Readonly<Record<string, unknown>> = {
  [ASK_NAME_INPUT_KEY]: {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: "Your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string", default: "anon" } } }
    }
  }
}

export const inputRequiredResult = (
  inputRequests: Readonly<Record<string, unknown>> | undefined,
  requestState: string | undefined
): Record<string, unknown> => ({
  resultType: "input_required",
  ...(inputRequests === undefined ? {} : { inputRequests }),
  ...(requestState === undefined ? {} : { requestState })
})

/** An opaque request state: base64url JSON of the tool it belongs to and a nonce. */
export const newRequestState = (tool: string): string => Buffer.from(JSON.stringify({ tool, nonce: randomUUID() })).toString("base64url")

/** Issues request states and verifies those it is given back (for the tool they were issued for). */
export interface RequestStateIssuer {
  issue(tool: string): string
  verify(state: unknown, tool: string): boolean
}

/** The request states a server issued; only those verify (for the tool they were issued for). */
export class RequestStates implements RequestStateIssuer {
  private readonly issued = new Map<string, string>()

  issue(tool: string): string {
    const state = newRequestState(tool)
    this.issued.set(state, tool)
    return state
  }

  verify(state: unknown, tool: string): boolean {
    return typeof state === "string" && this.issued.get(state) === tool
  }

  get size(): number {
    return this.issued.size
  }
}

/**
 * Request states that keep no state: `<payload>.<mac>`, the payload base64url JSON of the tool
 * (and a serial number and the pid, to make each unique), the mac an HMAC-SHA256 under a fixed
 * key. Any state a server of this kind issued verifies in any process; anything else, an edited
 * state included, does not. The stdio server's, whose client may restart it between rounds.
 */
export class SignedRequestStates implements RequestStateIssuer {
  private static readonly KEY = "phasebound-testkit stdio requestState"
  private issued = 0

  private static mac(payload: string): string {
    return createHmac("sha256", SignedRequestStates.KEY).update(payload).digest("base64url")
  }

  issue(tool: string): string {
    this.issued += 1
    const payload = Buffer.from(JSON.stringify({ tool, n: this.issued, pid: process.pid })).toString("base64url")
    return `${payload}.${SignedRequestStates.mac(payload)}`
  }

  verify(state: unknown, tool: string): boolean {
    if (typeof state !== "string") return false
    const [payload, tag, ...rest] = state.split(".")
    if (payload === undefined || tag === undefined || rest.length > 0 || SignedRequestStates.mac(payload) !== tag) return false
    try {
      const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
      return isRecord(decoded) && decoded["tool"] === tool
    } catch {
      return false
    }
  }
}
