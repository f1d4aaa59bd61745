/**
 * The OAuth-protected resource side of the Streamable HTTP test server: `startServer({ auth })`
 * makes the MCP endpoint an OAuth 2.1 resource server (MCP authorization 2025-11-25 /
 * 2026-07-28, RFC 6750 Bearer, RFC 9728 Protected Resource Metadata) whose tokens come from a
 * loopback `startOAuthServer`.
 *
 * Every request to the MCP path (any method) needs `Authorization: Bearer <token>`, a token the
 * authorization server issued, not revoked, expired or rejected, and issued for this server's
 * `resource` (RFC 8707: the `resource` of its grant equals it exactly). Otherwise:
 * - no Bearer credentials (no header, another scheme): 401
 *   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`;
 * - a bad token: 401 `Bearer error="invalid_token", error_description="…", resource_metadata="…", scope="…"`;
 * - a token without every scope the request needs (`requiredScopes`, plus `toolScopes[name]` for
 *   tools/call): 403 `Bearer error="insufficient_scope", scope="…", resource_metadata="…",
 *   error_description="…"`, whose `scope` is the token's scopes plus the missing ones (the
 *   spec's recommended step-up answer).
 * `resource_metadata` is there only in the "header" mode (or `announcedMetadataUrl`, in every
 * mode); `scope` (401 only) is `challengeScope`.
 * A refused request is answered at once (text/plain body) and not processed: no JSON-RPC
 * handling, no side effect, no fault, not counted by `rpcCalls`; it is recorded with `refused`.
 *
 * The Protected Resource Metadata (GET, `application/json`, no token needed):
 * `{ resource, authorization_servers: [issuer], scopes_supported?, bearer_methods_supported: ["header"] }`
 * is served at one URL, by `metadata`:
 * - "header" (default): at `/auth/protected-resource-metadata`, a path no well-known probing
 *   finds, announced by `resource_metadata` in every challenge;
 * - "path-aware": at `/.well-known/oauth-protected-resource/mcp` (the MCP path appended), not announced;
 * - "root": at `/.well-known/oauth-protected-resource`, not announced;
 * - "none": nowhere (the 2025-03-26 situation; this origin serves no authorization server
 *   metadata either, so a client falling back to it finds 404s).
 * Every other PRM path is 404.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { isRecord } from "./jsonrpc.js"
import { headerValue } from "./loopback.js"
import type { OAuthTestServer } from "./OAuthServer.js"
import { jsonHeaders, sendJsonBody, sendText, writeForever } from "./wire.js"

export type ResourceMetadataMode = "header" | "path-aware" | "root" | "none"

interface FaultBase {
  /** How many PRM requests it applies to before it is consumed (default 1; Infinity = always). */
  readonly times?: number
}

/** What a hostile resource server answers to a Protected Resource Metadata request instead of the document. */
export type ResourceMetadataFault =
  /** The normal document padded (an `x_padding` member) to exactly `bytes` bytes (at least the normal size). */
  | (FaultBase & { readonly kind: "oversized-metadata"; readonly bytes: number })
  /** A 200 document that never ends (`{"resource":…,"x_padding":"` and padding forever), until the client leaves. */
  | (FaultBase & { readonly kind: "never-ending-metadata" })
  /**
   * 302 to `location` (default: the same path at http://localhost:PORT, another origin that
   * serves the same document, so following it visibly "works").
   */
  | (FaultBase & { readonly kind: "redirect-metadata"; readonly location?: string })
  /** The request is received (recorded, counted) and never answered. */
  | (FaultBase & { readonly kind: "stall-metadata" })
  /** The document names another `resource` (default "https://attacker.example/mcp"). */
  | (FaultBase & { readonly kind: "wrong-resource"; readonly resource?: string })
  /** The document names these `authorization_servers` (issuers) instead of the server's own. */
  | (FaultBase & { readonly kind: "other-authorization-servers"; readonly servers: ReadonlyArray<string> })

export type ResourceMetadataFaultKind = ResourceMetadataFault["kind"]

/** `startServer`'s `auth` option. */
export interface ProtectedResourceOptions {
  /** The authorization server whose tokens are accepted (its `issuer` is the PRM's `authorization_servers`). */
  readonly oauth: OAuthTestServer
  /** Scopes every request to the MCP path needs (default none). */
  readonly requiredScopes?: ReadonlyArray<string>
  /** More scopes a tools/call of that tool name needs (403 insufficient_scope when missing): for step-up tests. */
  readonly toolScopes?: Readonly<Record<string, ReadonlyArray<string>>>
  /** Where the PRM is served and whether challenges announce it (default "header"; see the module comment). */
  readonly metadata?: ResourceMetadataMode
  /**
   * The PRM's `resource`, and the resource tokens must have been issued for (default: the MCP
   * URL exactly, http://127.0.0.1:PORT/mcp). A function gets that URL, e.g.
   * `(url) => new URL(url).origin`. Another server's URL makes the PRM name another resource.
   */
  readonly resource?: string | ((mcpUrl: string) => string)
  /** The PRM's `scopes_supported` (absent by default). */
  readonly scopesSupported?: ReadonlyArray<string>
  /** The 401 challenge's `scope` parameter (default `requiredScopes` when non-empty; false: never). */
  readonly challengeScope?: ReadonlyArray<string> | false
  /** Members added to (or replacing) the PRM document, e.g. another `authorization_servers`. */
  readonly metadataExtra?: Readonly<Record<string, unknown>>
  /**
   * The `resource_metadata` every challenge announces instead of the server's own PRM URL (in
   * every mode): a hostile server pointing the client at another URL of its choosing.
   */
  readonly announcedMetadataUrl?: string
  /** PRM faults in effect from the start (as `scriptAuth` would add them). */
  readonly faults?: ReadonlyArray<ResourceMetadataFault>
}

export const RESOURCE_METADATA_WELL_KNOWN = "/.well-known/oauth-protected-resource"
/** The PRM path of the "header" mode. */
export const RESOURCE_METADATA_CUSTOM_PATH = "/auth/protected-resource-metadata"
const ATTACKER_RESOURCE = "https://attacker.example/mcp"

/** The PRM path of a server whose MCP endpoint is `mcpPath` (undefined: "none"). */
export const resourceMetadataPath = (mode: ResourceMetadataMode, mcpPath: string): string | undefined => {
  switch (mode) {
    case "header":
      return RESOURCE_METADATA_CUSTOM_PATH
    case "path-aware":
      return RESOURCE_METADATA_WELL_KNOWN + mcpPath
    case "root":
      return RESOURCE_METADATA_WELL_KNOWN
    case "none":
      return undefined
  }
}

/** The token of an `Authorization: Bearer <token>` value (scheme case-insensitive), else undefined. */
export const bearerTokenOf = (authorization: string | ReadonlyArray<string> | undefined): string | undefined => {
  const value = Array.isArray(authorization) ? authorization[0] : authorization
  if (typeof value !== "string") return undefined
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(value)
  return match?.[1]
}

const validateFault = (fault: ResourceMetadataFault): void => {
  const times = fault.times ?? 1
  if (!(times === Infinity || (Number.isSafeInteger(times) && times >= 1))) {
    throw new TypeError("ResourceMetadataFault.times must be a positive integer or Infinity")
  }
  const kinds: ReadonlyArray<string> = [
    "oversized-metadata",
    "never-ending-metadata",
    "redirect-metadata",
    "stall-metadata",
    "wrong-resource",
    "other-authorization-servers"
  ]
  if (!kinds.includes(fault.kind)) throw new TypeError(`unknown ResourceMetadataFault kind ${String(fault.kind)}`)
  if (fault.kind === "oversized-metadata" && !(Number.isSafeInteger(fault.bytes) && fault.bytes > 0)) {
    throw new TypeError("oversized-metadata needs a positive integer `bytes`")
  }
  if (fault.kind === "other-authorization-servers" && !(Array.isArray(fault.servers) && fault.servers.every((s) => typeof s === "string"))) {
    throw new TypeError("other-authorization-servers needs `servers`, an array of issuers")
  }
}

const validateScopes = (name: string, scopes: unknown): void => {
  if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== "string" || !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s))) {
    throw new TypeError(`auth.${name} must be an array of scope tokens`)
  }
}

/** The quoted-string of an auth-param value (RFC 9110 §5.6.4). */
const quote = (value: string): string => `"${value.replace(/["\\]/g, "\\$&")}"`

const challenge = (params: ReadonlyArray<readonly [string, string | undefined]>): string => {
  const present = params.filter((entry): entry is readonly [string, string] => entry[1] !== undefined)
  return present.length === 0 ? "Bearer" : `Bearer ${present.map(([key, value]) => `${key}=${quote(value)}`).join(", ")}`
}

/** The tool name of a parsed tools/call request, else undefined. */
const toolNameOf = (body: unknown): string | undefined => {
  if (!isRecord(body) || body["method"] !== "tools/call") return undefined
  const params = body["params"]
  const name = isRecord(params) ? params["name"] : undefined
  return typeof name === "string" ? name : undefined
}

export interface ProtectedResource {
  /** The PRM path (undefined: "none"). */
  readonly metadataPath: string | undefined
  /** The PRM URL once listening (undefined: "none"). */
  metadataUrl(): string | undefined
  /** The resource tokens must be issued for (the PRM's `resource`). */
  resource(): string
  /** Answers a request to `metadataPath`. */
  serveMetadata(req: IncomingMessage, res: ServerResponse): Promise<void>
  /**
   * Checks a request to the MCP path: undefined when it may proceed; else it has been answered
   * (401 or 403) and that status is returned.
   */
  guard(req: IncomingMessage, res: ServerResponse, body: unknown): 401 | 403 | undefined
  unauthorizedCount(): number
  forbiddenCount(): number
  metadataRequests(): number
  script(fault: ResourceMetadataFault): void
  clearFaults(): void
}

export interface ProtectedResourceHooks {
  /** The MCP URL (known once listening). */
  readonly mcpUrl: () => string
  readonly onNeverEndingBytes: (bytes: number) => void
  readonly onNeverEndingStopped: () => void
}

/** Validates `auth` and builds the resource server; throws TypeError on a bad option. */
export const makeProtectedResource = (
  options: ProtectedResourceOptions,
  mcpPath: string,
  hooks: ProtectedResourceHooks
): ProtectedResource => {
  if (!isRecord(options) || !isRecord(options.oauth) || typeof options.oauth.checkToken !== "function") {
    throw new TypeError("auth.oauth must be an OAuthTestServer (startOAuthServer)")
  }
  const mode = options.metadata ?? "header"
  if (!["header", "path-aware", "root", "none"].includes(mode)) throw new TypeError(`auth.metadata: unknown mode ${String(mode)}`)
  const required = [...(options.requiredScopes ?? [])]
  validateScopes("requiredScopes", required)
  for (const [tool, scopes] of Object.entries(options.toolScopes ?? {})) validateScopes(`toolScopes.${tool}`, scopes)
  if (options.scopesSupported !== undefined) validateScopes("scopesSupported", options.scopesSupported)
  const challengeScope = options.challengeScope === undefined ?
    (required.length > 0 ? required : undefined)
    : options.challengeScope === false
    ? undefined
    : [...options.challengeScope]
  if (challengeScope !== undefined) validateScopes("challengeScope", challengeScope)
  const oauth = options.oauth
  const metadataPath = resourceMetadataPath(mode, mcpPath)

  const queue: Array<{ readonly fault: ResourceMetadataFault; remaining: number }> = []
  const script = (fault: ResourceMetadataFault): void => {
    validateFault(fault)
    queue.push({ fault, remaining: fault.times ?? 1 })
  }
  const takeFault = (): ResourceMetadataFault | undefined => {
    const entry = queue[0]
    if (entry === undefined) return undefined
    entry.remaining -= 1
    if (entry.remaining <= 0) queue.shift()
    return entry.fault
  }
  for (const fault of options.faults ?? []) script(fault)

  let unauthorized = 0
  let forbidden = 0
  let metadataCount = 0

  const origin = (): string => new URL(hooks.mcpUrl()).origin
  const metadataUrl = (): string | undefined => (metadataPath === undefined ? undefined : origin() + metadataPath)
  const resource = (): string => {
    const configured = options.resource
    return configured === undefined ? hooks.mcpUrl() : typeof configured === "string" ? configured : configured(hooks.mcpUrl())
  }
  const announced = (): string | undefined => options.announcedMetadataUrl ?? (mode === "header" ? metadataUrl() : undefined)

  const documentOf = (resourceValue: string, servers: ReadonlyArray<string> = [oauth.issuer]): Record<string, unknown> => ({
    resource: resourceValue,
    authorization_servers: [...servers],
    ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
    bearer_methods_supported: ["header"],
    ...options.metadataExtra
  })

  const serveMetadata = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    metadataCount += 1
    if (req.method !== "GET") return sendText(res, 405, "testkit: method not allowed", { allow: "GET" })
    const fault = takeFault()
    if (fault === undefined) return sendJsonBody(res, 200, documentOf(resource()))
    switch (fault.kind) {
      case "stall-metadata":
        return // the socket stays open until the client (or close) ends it
      case "wrong-resource":
        return sendJsonBody(res, 200, documentOf(fault.resource ?? ATTACKER_RESOURCE))
      case "other-authorization-servers":
        return sendJsonBody(res, 200, documentOf(resource(), fault.servers))
      case "redirect-metadata": {
        const location = fault.location ?? `http://localhost:${new URL(origin()).port}${metadataPath ?? ""}`
        res.writeHead(302, { location })
        res.end()
        return
      }
      case "oversized-metadata": {
        const base = documentOf(resource())
        const empty = Buffer.byteLength(JSON.stringify({ ...base, x_padding: "" }))
        return sendJsonBody(res, 200, { ...base, x_padding: "x".repeat(Math.max(0, fault.bytes - empty)) })
      }
      case "never-ending-metadata": {
        res.writeHead(200, jsonHeaders())
        const prefix = Buffer.from(`{"resource":${JSON.stringify(resource())},"x_padding":"`)
        await writeForever(res, prefix, Buffer.alloc(16 * 1024, "x"), hooks.onNeverEndingBytes)
        return hooks.onNeverEndingStopped()
      }
    }
  }

  const guard = (req: IncomingMessage, res: ServerResponse, body: unknown): 401 | 403 | undefined => {
    const scopeParam = challengeScope?.join(" ")
    const token = bearerTokenOf(headerValue(req, "authorization"))
    if (token === undefined) {
      unauthorized += 1
      sendText(res, 401, "testkit: bearer token required", {
        "www-authenticate": challenge([["resource_metadata", announced()], ["scope", scopeParam]])
      })
      return 401
    }
    const check = oauth.checkToken(token, { resource: resource() })
    if (!check.ok) {
      unauthorized += 1
      sendText(res, 401, `testkit: invalid token (${check.description})`, {
        "www-authenticate": challenge([
          ["error", "invalid_token"],
          ["error_description", check.description],
          ["resource_metadata", announced()],
          ["scope", scopeParam]
        ])
      })
      return 401
    }
    const tool = toolNameOf(body)
    const need = [...new Set([...required, ...(tool === undefined ? [] : options.toolScopes?.[tool] ?? [])])]
    const have = check.token.scope.split(" ").filter((s) => s.length > 0)
    const missing = need.filter((s) => !have.includes(s))
    if (missing.length > 0) {
      forbidden += 1
      sendText(res, 403, "testkit: insufficient scope", {
        "www-authenticate": challenge([
          ["error", "insufficient_scope"],
          ["scope", [...new Set([...have, ...need])].join(" ")],
          ["resource_metadata", announced()],
          ["error_description", `requires ${missing.join(" ")}`]
        ])
      })
      return 403
    }
    return undefined
  }

  return {
    metadataPath,
    metadataUrl,
    resource,
    serveMetadata,
    guard,
    unauthorizedCount: () => unauthorized,
    forbiddenCount: () => forbidden,
    metadataRequests: () => metadataCount,
    script,
    clearFaults: () => {
      queue.length = 0
    }
  }
}
