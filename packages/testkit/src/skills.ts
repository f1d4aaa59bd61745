/**
 * A loopback MCP server offering skills (the skills extension, `io.modelcontextprotocol/skills`):
 * `skills/list` (paginated), `skills/get`, and each skill file through `resources/read`, in the
 * stateless era (2026-07-28, `server/discover`) or the handshake era (`initialize`), answering
 * in JSON or in one SSE event. Each file can be served honestly or as a hostile server would:
 * other bytes than the entry's digest covers, a size the entry lies about, padding that makes a
 * read's result far larger than its file. It records every method asked, every file read and
 * the client capabilities each request declared, so tests can prove what was (not) fetched.
 */
import { createHash } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, type Scope } from "effect"
import { listenLoopback, parseJson, readBody } from "./loopback.js"

/** The extension's identifier. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills"

/** One file of a skill. */
export interface SkillFileDefinition {
  /** Its path under the skill's root (`SKILL.md`, `references/FORMS.md`). */
  readonly path: string
  /** The bytes the entry describes (its size and digest are computed from them). */
  readonly content: string | Uint8Array
  /** What `resources/read` sends instead (a tampered file); default `content`. */
  readonly served?: string | Uint8Array | undefined
  /** The size the entry lists instead of the true one. */
  readonly listedSize?: number | undefined
  /** Sent as a base64 `blob` instead of `text`. */
  readonly blob?: boolean | undefined
  /** Characters of padding in the read result's `_meta` (a result far larger than its file). */
  readonly padding?: number | undefined
}

/** One skill: served as `skill://<name>/...`. */
export interface SkillDefinition {
  readonly name: string
  /** The frontmatter the entry carries (default: the one the SKILL.md's own YAML is meant to hold). */
  readonly frontmatter: Readonly<Record<string, unknown>>
  /** Its files; the one at `SKILL.md` is the skill's manifest. */
  readonly files: ReadonlyArray<SkillFileDefinition>
  /** List `resources: "dynamic"` instead of the files. */
  readonly dynamic?: boolean | undefined
}

export interface SkillsServerOptions {
  /** `stateless` (default): 2026-07-28 with `server/discover`; `handshake`: 2025-11-25 with `initialize`. */
  readonly era?: "stateless" | "handshake" | undefined
  readonly skills: ReadonlyArray<SkillDefinition>
  /** Skills per `skills/list` page (default: all on one page). */
  readonly pageSize?: number | undefined
  /** Declare the extension in the server's capabilities (default true). */
  readonly declare?: boolean | undefined
  /** Answer in one SSE event instead of a JSON body. */
  readonly sse?: boolean | undefined
  /** Methods left unanswered: the request is read, recorded, and its response never comes (until close). */
  readonly stall?: ReadonlyArray<string> | undefined
}

export interface SkillsServer {
  readonly url: string
  /** Every JSON-RPC method received, in order (notifications included). */
  readonly methods: () => ReadonlyArray<string>
  /** The URIs of every `resources/read`, in order. */
  readonly reads: () => ReadonlyArray<string>
  /** The client capabilities each request declared (`initialize`, or each 2026 request's `_meta`). */
  readonly clientCapabilities: () => ReadonlyArray<unknown>
  readonly close: () => Promise<void>
}

const bytesOf = (content: string | Uint8Array): Uint8Array => typeof content === "string" ? new TextEncoder().encode(content) : content

/** `sha256:` and the hexadecimal SHA-256 of `content`. */
export const skillDigest = (content: string | Uint8Array): string => `sha256:${createHash("sha256").update(bytesOf(content)).digest("hex")}`

/** A `SKILL.md`: `---`, the YAML, `---`, the body. */
export const skillMarkdown = (yaml: string, body = "Use this skill well.\n"): string => `---\n${yaml}\n---\n\n${body}`

/** The URI of a skill file. */
export const skillUri = (skill: string, path = "SKILL.md"): string => `skill://${skill}/${path}`

/** The entry `skills/list` gives for a skill. */
export const skillEntry = (skill: SkillDefinition): Record<string, unknown> => ({
  uri: skillUri(skill.name),
  frontmatter: skill.frontmatter,
  resources: skill.dynamic === true ? "dynamic" : skill.files.map((file) => ({
    uri: skillUri(skill.name, file.path),
    digest: skillDigest(file.content),
    size: file.listedSize ?? bytesOf(file.content).length
  }))
})

const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

export const startSkillsServer = async (options: SkillsServerOptions): Promise<SkillsServer> => {
  const era = options.era ?? "stateless"
  const methods: Array<string> = []
  const reads: Array<string> = []
  const declared: Array<unknown> = []
  const capabilities = {
    tools: {},
    resources: {},
    ...(options.declare === false ? {} : { extensions: { [SKILLS_EXTENSION]: {} } })
  }
  const files = new Map<string, SkillFileDefinition>()
  for (const skill of options.skills) for (const file of skill.files) files.set(skillUri(skill.name, file.path), file)
  const pageSize = options.pageSize ?? Math.max(1, options.skills.length)

  const answer = (res: ServerResponse, message: unknown) => {
    const text = JSON.stringify(message)
    if (options.sse === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.end(`event: message\ndata: ${text}\n\n`)
    } else {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(text)
    }
  }
  const cacheable = era === "stateless" ? { resultType: "complete", ttlMs: 0, cacheScope: "private" } : {}

  const result = (method: string, params: Record<string, unknown>): { result: unknown } | { error: unknown } => {
    switch (method) {
      case "server/discover":
        return {
          result: { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities, serverInfo: { name: "skills", version: "1.0.0" } }
        }
      case "initialize": {
        const asked = params["protocolVersion"]
        return {
          result: {
            protocolVersion: typeof asked === "string" && asked.startsWith("2025-") ? asked : "2025-11-25",
            capabilities,
            serverInfo: { name: "skills", version: "1.0.0" }
          }
        }
      }
      case "tools/list":
        return { result: { ...cacheable, tools: [] } }
      case "skills/list": {
        const cursor = typeof params["cursor"] === "string" ? Number(params["cursor"]) : 0
        const page = options.skills.slice(cursor, cursor + pageSize)
        const next = cursor + pageSize < options.skills.length ? { nextCursor: String(cursor + pageSize) } : {}
        return { result: { ...cacheable, skills: page.map(skillEntry), ...next } }
      }
      case "skills/get": {
        const skill = options.skills.find((s) => skillUri(s.name) === params["uri"])
        return skill === undefined
          ? { error: { code: -32602, message: "Invalid params: no such skill" } }
          : { result: { ...cacheable, skill: skillEntry(skill) } }
      }
      case "resources/read": {
        const uri = String(params["uri"])
        reads.push(uri)
        const file = files.get(uri)
        if (file === undefined) return { error: { code: -32602, message: "Invalid params: no such resource" } }
        const served = file.served ?? file.content
        const content = file.blob === true
          ? { uri, mimeType: "application/octet-stream", blob: Buffer.from(bytesOf(served)).toString("base64") }
          : { uri, mimeType: "text/markdown", text: typeof served === "string" ? served : new TextDecoder().decode(served) }
        const padding = file.padding === undefined ? {} : { _meta: { "com.example/padding": "x".repeat(file.padding) } }
        return { result: { ...cacheable, contents: [content], ...padding } }
      }
      default:
        return { error: { code: -32601, message: "Method not found" } }
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405).end()
      return
    }
    const parsed = parseJson(await readBody(req))
    const message = parsed.ok ? (parsed.value as Record<string, unknown>) : undefined
    if (message === undefined || typeof message["method"] !== "string") {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }))
      return
    }
    const method = message["method"]
    const params = (message["params"] ?? {}) as Record<string, unknown>
    methods.push(method)
    const meta = params["_meta"] as Record<string, unknown> | undefined
    if (method === "initialize") declared.push(params["capabilities"])
    else if (meta?.[META_CAPABILITIES] !== undefined) declared.push(meta[META_CAPABILITIES])
    if (message["id"] === undefined) {
      res.writeHead(202).end()
      return
    }
    // Each era answers only its own opening: a 2025 server refuses server/discover, a 2026 one initialize.
    if ((era === "handshake" && method === "server/discover") || (era === "stateless" && method === "initialize")) {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request" } }))
      return
    }
    const answered = result(method, params)
    if (options.stall?.includes(method) === true) {
      // Headers out, no body: the client waits for an answer that never comes.
      res.writeHead(200, { "content-type": options.sse === true ? "text/event-stream" : "application/json" })
      res.flushHeaders()
      return
    }
    answer(res, { jsonrpc: "2.0", id: message["id"], ...answered })
  }

  const listener = await listenLoopback(handle)
  return {
    url: `http://127.0.0.1:${listener.port}/mcp`,
    methods: () => [...methods],
    reads: () => [...reads],
    clientCapabilities: () => [...declared],
    close: listener.close
  }
}

/** The skills server as an Effect resource: started on acquire, closed on release. */
export const skillsServer = (options: SkillsServerOptions): Effect.Effect<SkillsServer, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startSkillsServer(options)), (server) => Effect.promise(() => server.close()))
