/**
 * The types of @phasebound/promise, written out as plain TypeScript: no import of `effect`,
 * `@effect/*` or @phasebound/client, so that a project with another Effect at its root (or none)
 * type-checks against them. They describe `@phasebound/client/promise` as a user outside Effect
 * sees it; what needs Effect (an `httpClient` Layer, the `effect` connection underneath, a
 * `Duration` or `Redacted` value) stays with that module. packages/promise/test/declarations.ts
 * checks them against the client's own types on every typecheck, so they cannot drift.
 *
 * @since 0.1.0
 */

/**
 * A time: a number is milliseconds, a bigint nanoseconds, a `[seconds, nanos]` pair, or a text
 * such as `"5 seconds"`.
 *
 * @since 0.1.0
 * @category models
 */
export type DurationInput =
  | number
  | bigint
  | readonly [seconds: number, nanos: number]
  | `${number} ${DurationUnit}`

/**
 * @since 0.1.0
 * @category models
 */
export type DurationUnit =
  | "nano"
  | "nanos"
  | "micro"
  | "micros"
  | "milli"
  | "millis"
  | "second"
  | "seconds"
  | "minute"
  | "minutes"
  | "hour"
  | "hours"
  | "day"
  | "days"
  | "week"
  | "weeks"

// --- MCP values, as the server sends them (validated) ------------------------------------------

/** @since 0.1.0 @category mcp */
export type Revision = "2026-07-28" | "2025-11-25" | "2025-06-18" | "2025-03-26" | "2024-11-05"

/** @since 0.1.0 @category mcp */
export type TransportKind = "streamable-http" | "sse" | "stdio"

/** @since 0.1.0 @category mcp */
export interface Implementation {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
}

/**
 * A tool as listed by the server. `inputSchema` is a JSON Schema object of type `object`.
 *
 * @since 0.1.0
 * @category mcp
 */
export interface Tool {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly inputSchema: { readonly type: "object" }
  readonly outputSchema?: { readonly [key: string]: unknown } | undefined
  readonly annotations?: { readonly [key: string]: unknown } | undefined
}

/** @since 0.1.0 @category mcp */
export interface ContentBlock {
  readonly type: string
}

/**
 * The result of `tools/call`. `isError: true` is a tool-level failure returned as a result.
 *
 * @since 0.1.0
 * @category mcp
 */
export interface CallToolResult {
  readonly content: ReadonlyArray<ContentBlock>
  readonly structuredContent?: unknown | undefined
  readonly isError?: boolean | undefined
}

/** @since 0.1.0 @category mcp */
export interface Progress {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

/** @since 0.1.0 @category mcp */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency"

/** One log message of the server's. Its `data` is the server's, as it sent it: show it with care. @since 0.1.0 @category mcp */
export interface LogMessage {
  readonly level: LogLevel
  readonly logger?: string | undefined
  readonly data: unknown
}

/** @since 0.1.0 @category mcp */
export interface Resource {
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly size?: number | undefined
}

/** @since 0.1.0 @category mcp */
export interface ResourceTemplate {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
}

/** One resource's text, or its bytes in base64 (`blob`). @since 0.1.0 @category mcp */
export type ResourceContents =
  | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
  | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string }

/** @since 0.1.0 @category mcp */
export interface ReadResourceResult {
  readonly contents: ReadonlyArray<ResourceContents>
}

/** @since 0.1.0 @category mcp */
export interface Prompt {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly arguments?:
    | ReadonlyArray<{
      readonly name: string
      readonly description?: string | undefined
      readonly required?: boolean | undefined
    }>
    | undefined
}

/** @since 0.1.0 @category mcp */
export interface GetPromptResult {
  readonly description?: string | undefined
  readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: ContentBlock }>
}

/** What `complete` completes an argument of: a prompt by name, or a resource template by URI (template). @since 0.1.0 @category mcp */
export type CompletionReference =
  | { readonly type: "ref/prompt"; readonly name: string; readonly title?: string | undefined }
  | { readonly type: "ref/resource"; readonly uri: string }

/** A `completion/complete` request: the argument being filled in, and the values already chosen for the others. @since 0.1.0 @category mcp */
export interface CompleteRequest {
  readonly ref: CompletionReference
  readonly argument: { readonly name: string; readonly value: string }
  readonly context?: { readonly arguments?: Readonly<Record<string, string>> | undefined } | undefined
}

/** At most 100 suggestions, the matches the server knows of, and whether there are more. @since 0.1.0 @category mcp */
export interface CompleteResult {
  readonly completion: {
    readonly values: ReadonlyArray<string>
    readonly total?: number | undefined
    readonly hasMore?: boolean | undefined
  }
}

/** A skill's frontmatter as its entry carries it (the skills extension). @since 0.1.0 @category mcp */
export interface SkillFrontmatter {
  readonly name: string
  readonly description: string
  readonly [key: string]: unknown
}

/** One file of a skill: its URI, size in bytes and `sha256:` digest. @since 0.1.0 @category mcp */
export interface SkillResourceEntry {
  readonly uri: string
  readonly digest: string
  readonly size: number
}

/** A skill as `skills/list` and `skills/get` give it. @since 0.1.0 @category mcp */
export interface Skill {
  readonly uri: string
  readonly frontmatter: SkillFrontmatter
  readonly resources: ReadonlyArray<SkillResourceEntry> | "dynamic"
  readonly _meta?: { readonly [x: string]: unknown } | undefined
}

/** Every skill of every page, and the listing's caching hint. @since 0.1.0 @category mcp */
export interface SkillListing {
  readonly skills: ReadonlyArray<Skill>
  readonly cacheHint: { readonly ttlMs: number; readonly cacheScope: "public" | "private" } | undefined
}

/** A skill file, read and verified against its entry. @since 0.1.0 @category mcp */
export interface SkillFile {
  readonly uri: string
  readonly mimeType: string | undefined
  readonly bytes: Uint8Array
  readonly text: string | undefined
  readonly verified: boolean
  readonly frontmatter: Readonly<Record<string, unknown>> | undefined
  readonly body: string | undefined
}

// --- Options --------------------------------------------------------------------------------

/** @since 0.1.0 @category options */
export interface BudgetOptions {
  /** A finite duration > 0: a number is milliseconds. */
  readonly timeout?: DurationInput | undefined
  /** A safe integer >= 1. */
  readonly maxBytes?: number | undefined
}

/**
 * The phase policy (docs/REFERENCE.md, "Policy"): a baseline budget, the budgets of each phase,
 * and the structure bounds.
 *
 * @since 0.1.0
 * @category options
 */
export interface PolicyOptions extends BudgetOptions {
  readonly discovery?: BudgetOptions | undefined
  readonly call?: BudgetOptions | undefined
  readonly authorization?: BudgetOptions | undefined
  readonly ping?: BudgetOptions | undefined
  readonly unsolicited?: { readonly maxBytes?: number | undefined } | undefined
  readonly maxTools?: number | undefined
  readonly maxPages?: number | undefined
  readonly maxSchemaBytes?: number | undefined
  readonly maxListingBytes?: number | undefined
  readonly maxDepth?: number | undefined
  readonly maxNodes?: number | undefined
  readonly maxInputRounds?: number | undefined
  readonly maxSessionRenewals?: number | undefined
  readonly releaseTimeout?: DurationInput | undefined
  readonly relistDelay?: DurationInput | undefined
  readonly logBuffer?: number | undefined
  /** The task budget: a wait's `timeout` and `maxBytes`, and the poll interval's bounds. */
  readonly task?: TaskBudgetOptions | undefined
}

/** @since 0.1.0 @category options */
export interface TaskBudgetOptions extends BudgetOptions {
  readonly minPollInterval?: DurationInput | undefined
  readonly maxPollInterval?: DurationInput | undefined
}

/** What a server asks and a handler answers: plain JSON fields. @since 0.1.0 @category options */
export type Fields = Readonly<Record<string, unknown>>

/**
 * A handler of what a server asks: the request's params in, the result (or a Promise of it)
 * out; `signal` aborts when the answer is no longer wanted.
 *
 * @since 0.1.0
 * @category options
 */
export type Handler = (params: Fields, options: { readonly signal: AbortSignal }) => Fields | Promise<Fields>

/** Answers to what a server may ask; each one given declares its client capability. @since 0.1.0 @category options */
export interface Handlers {
  readonly elicitation?: Handler | undefined
  readonly sampling?: Handler | undefined
  readonly roots?: Handler | undefined
  /** URL-mode elicitations: declares the `url` mode of the `elicitation` capability. */
  readonly elicitationUrl?: UrlHandler | undefined
}

/**
 * A URL-mode elicitation, checked before it is handed on (https, or http to loopback; no
 * userinfo, no invisible characters; at most 8,192 characters; normalized). Show `url` whole
 * and `host` prominently, warn when `punycode`, and ask the user before opening it.
 *
 * @since 0.1.0
 * @category options
 */
export interface UrlElicitation {
  readonly mode: "url"
  readonly message: string
  readonly url: string
  readonly host: string
  readonly punycode: boolean
  /** The server's id (2025-11-25); `undefined` in 2026-07-28. */
  readonly elicitationId: string | undefined
}

/** The user's answer to a URL elicitation. @since 0.1.0 @category options */
export interface UrlElicitationResult {
  readonly action: "accept" | "decline" | "cancel"
}

/** The handler of URL-mode elicitations. @since 0.1.0 @category options */
export type UrlHandler = (
  request: UrlElicitation,
  options: { readonly signal: AbortSignal }
) => UrlElicitationResult | Promise<UrlElicitationResult>

/** OAuth 2.1 for a server that asks for it (docs/AUTHORIZATION.md, "The library"). @since 0.1.0 @category options */
export interface AuthOptions {
  readonly grant?: "authorization_code" | "client_credentials" | undefined
  readonly redirectUri?: string | undefined
  readonly clientId?: string | undefined
  readonly issuer?: string | undefined
  readonly clientSecret?: string | undefined
  readonly clientMetadataUrl?: string | undefined
  readonly privateKey?: string | CryptoKey | undefined
  readonly privateKeyAlgorithm?: "RS256" | "ES256" | undefined
  readonly keyId?: string | undefined
  readonly scope?: string | ReadonlyArray<string> | undefined
  readonly clientName?: string | undefined
  readonly maxStepUps?: number | undefined
  readonly allowScopeStepUp?: boolean | undefined
  readonly allowPrivateAuthority?: boolean | undefined
  /**
   * The interactive step of the authorization code grant: show `authorizationUrl` to the user,
   * and resolve with the URL the authorization server redirected to (it carries the code).
   */
  readonly authorize?:
    | ((authorizationUrl: URL, options: { readonly signal: AbortSignal }) => string | URL | Promise<string | URL>)
    | undefined
  /** Bound of the interactive step (default 5 minutes). */
  readonly interactiveTimeout?: DurationInput | undefined
}

/** How a listing or a read uses the response cache (docs/DESIGN.md, "Response cache"). @since 0.1.0 @category options */
export type CacheMode = "use" | "refresh" | "bypass"

/** What `Cache.evict` removes: every entry of a kind, or the reads of one URI. @since 0.1.0 @category options */
export type CacheTarget = "tools" | "prompts" | "resources" | "templates" | "read" | { readonly uri: string }

/** What a cache holds, and how often it answered. @since 0.1.0 @category models */
export interface CacheStats {
  readonly entries: number
  readonly bytes: number
  readonly hits: number
  readonly misses: number
  readonly origins: number
}

/** A cache that connections share (`createCache`). @since 0.1.0 @category models */
export interface Cache {
  readonly evict: (target: CacheTarget) => void
  readonly clear: () => void
  readonly stats: () => CacheStats
}

/** The bounds of a cache (`createCache`). @since 0.1.0 @category options */
export interface CacheOptions {
  /** Most responses kept (default 512). */
  readonly maxEntries?: number | undefined
  /** Most bytes kept, as read from the wire (default 2 MiB). */
  readonly maxBytes?: number | undefined
  /** The longest a response is kept, whatever the server's `ttlMs` (default 1 hour). */
  readonly maxTtl?: DurationInput | undefined
  /** Most servers whose era is remembered (default 256). */
  readonly maxOrigins?: number | undefined
  /** How long a server's era is remembered (default 1 hour). */
  readonly maxEraAge?: DurationInput | undefined
}

interface CommonConnectOptions {
  /** The revisions the client may speak, e.g. `["2026-07-28"]` (default: all it supports). */
  readonly revisions?: ReadonlyArray<string> | undefined
  readonly policy?: PolicyOptions | undefined
  readonly clientInfo?: Implementation | undefined
  readonly handlers?: Handlers | undefined
  readonly signal?: AbortSignal | undefined
  /** Called with each new tool list; what it throws is ignored. */
  readonly onToolsChanged?: ((tools: ReadonlyArray<Tool>) => void) | undefined
  /** Called with each log message of the server's (see `setLogLevel`); what it throws is ignored. */
  readonly onLogMessage?: ((message: LogMessage) => void) | undefined
  /** Called with the id of each URL elicitation the server says is complete; what it throws is ignored. */
  readonly onElicitationComplete?: ((elicitationId: string) => void) | undefined
  /** A cache shared with other connections (`createCache`); else the connection has its own. */
  readonly cache?: Cache | undefined
  /** Called with each change event (list changes, subscribed resources' updates); what it throws is ignored. */
  readonly onChange?: ((event: ChangeEvent) => void) | undefined
  /** Called with the server's prompts, then each new list when they change (listed once connected). */
  readonly onPromptsChanged?: ((prompts: ReadonlyArray<Prompt>) => void) | undefined
  /** Called with the server's resources, then each new list when they change (listed once connected). */
  readonly onResourcesChanged?: ((resources: ReadonlyArray<Resource>) => void) | undefined
}

/**
 * A server over HTTP. The HTTP client is undici under Node and `fetch` under Bun, one per
 * process (another HTTP client is an Effect Layer: `@phasebound/client/promise` takes one).
 *
 * @since 0.1.0
 * @category options
 */
export interface HttpConnectOptions extends CommonConnectOptions {
  readonly url: string | URL
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly transport?: "auto" | "streamable-http" | "sse" | undefined
  readonly auth?: AuthOptions | undefined
}

/** A server run as a child process (no shell). @since 0.1.0 @category options */
export interface StdioConnectOptions extends CommonConnectOptions {
  readonly stdio: {
    readonly command: string
    readonly args?: ReadonlyArray<string> | undefined
    readonly env?: Readonly<Record<string, string>> | undefined
    readonly cwd?: string | undefined
  }
}

/** @since 0.1.0 @category options */
export type ConnectOptions = HttpConnectOptions | StdioConnectOptions

/** @since 0.1.0 @category options */
export interface RequestOptions {
  readonly signal?: AbortSignal | undefined
  /** Overrides the call timeout for this request. */
  readonly timeout?: DurationInput | undefined
  /** Overrides the call byte ceiling for this request. */
  readonly maxBytes?: number | undefined
  /** How a listing or a read uses the response cache (default `use`). */
  readonly cache?: CacheMode | undefined
}

/** @since 0.1.0 @category options */
export interface CallOptions extends RequestOptions {
  /** The request's `_meta`. */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /** Asks for progress; called with each report that grows. */
  readonly onProgress?: ((progress: Progress) => void) | undefined
  /** How long the call may go without progress; the call timeout stays the hard cap. */
  readonly idleTimeout?: DurationInput | undefined
  /** The call's effect identity: give it again when you retry the same effect. */
  readonly effectIdentity?: string | undefined
}

/**
 * An update of a subscribed resource: read it again to see what changed. `gap: true`: a stream
 * that carries updates was lost and restored (or a new session started); it may have changed.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceUpdate {
  readonly _tag: "ResourceUpdated"
  readonly uri: string
  readonly gap: boolean
}

/** A change the server announced, or that may have happened unseen (`gap: true`). @since 0.1.0 @category models */
export type ChangeEvent =
  | { readonly _tag: "ToolsListChanged"; readonly gap: boolean }
  | { readonly _tag: "PromptsListChanged"; readonly gap: boolean }
  | { readonly _tag: "ResourcesListChanged"; readonly gap: boolean }
  | ResourceUpdate

// --- The connection ---------------------------------------------------------------------------

/**
 * A connection to one MCP server. Rejections are the errors of README's "Errors" (each with its
 * `_tag`); an aborted `signal` rejects with the signal's own `reason`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly transport: TransportKind
  readonly protocolVersion: Revision
  /** Who the server says it is (a stateless server may not say). */
  readonly serverInfo: Implementation | undefined
  /** The current tools: those of the last listing (see `onToolsChanged`). */
  readonly tools: ReadonlyArray<Tool>
  readonly callTool: (name: string, args?: Readonly<Record<string, unknown>>, options?: CallOptions) => Promise<CallToolResult>
  readonly listTools: (
    options?: { readonly signal?: AbortSignal | undefined; readonly cache?: CacheMode | undefined }
  ) => Promise<ReadonlyArray<Tool>>
  /** `ping` under the ping budget; resolves with the round trip in milliseconds. */
  readonly ping: (options?: { readonly signal?: AbortSignal | undefined }) => Promise<number>
  readonly listResources: (options?: RequestOptions) => Promise<ReadonlyArray<Resource>>
  readonly listResourceTemplates: (options?: RequestOptions) => Promise<ReadonlyArray<ResourceTemplate>>
  readonly readResource: (uri: string, options?: RequestOptions) => Promise<ReadResourceResult>
  /** The server's skills, no file read; empty when the server does not declare the skills extension. */
  readonly listSkills: (options?: RequestOptions) => Promise<SkillListing>
  /** One skill's entry by the URI of its `SKILL.md`. */
  readonly getSkill: (uri: string, options?: RequestOptions) => Promise<Skill>
  /** Reads one file of a skill (its `SKILL.md` by default), verified against the entry: size, digest, frontmatter. */
  readonly readSkillFile: (skill: Skill, ref?: string, options?: RequestOptions) => Promise<SkillFile>
  readonly listPrompts: (options?: RequestOptions) => Promise<ReadonlyArray<Prompt>>
  readonly getPrompt: (name: string, args?: Readonly<Record<string, string>>, options?: RequestOptions) => Promise<GetPromptResult>
  /** Suggestions for one argument of a prompt or a resource template (`completion/complete`), under the call budget. */
  readonly complete: (request: CompleteRequest, options?: RequestOptions) => Promise<CompleteResult>
  /** Asks for the server's log messages at `level` and above (they reach `onLogMessage`). */
  readonly setLogLevel: (level: LogLevel, options?: { readonly signal?: AbortSignal | undefined }) => Promise<void>
  /** Resolves when the server says the URL elicitation `elicitationId` is complete (within the call timeout or `timeout`). */
  readonly awaitElicitation: (
    elicitationId: string,
    options?: { readonly timeout?: DurationInput | undefined; readonly signal?: AbortSignal | undefined }
  ) => Promise<void>
  /**
   * Subscribes to one resource's updates; resolves, once the server has the subscription, with
   * the function that ends it. Refused (`InvalidOption`, `undeclared-capability`) before any I/O
   * when the server does not declare `resources.subscribe`.
   */
  readonly subscribeResource: (
    uri: string,
    onUpdate: (update: ResourceUpdate) => void,
    options?: RequestOptions
  ) => Promise<() => Promise<void>>
  /** Releases the session (bounded). Safe to call more than once. */
  readonly close: () => Promise<void>
  /** Calls a tool as a task where the server allows it: the task's handle, or the result at once. */
  readonly callToolTask: (name: string, args?: Readonly<Record<string, unknown>>, options?: TaskCallOptions) => Promise<TaskCall>
  /** A task's state now (`tasks/get`). */
  readonly getTask: (taskId: string, options?: RequestOptions) => Promise<Task>
  /** Waits for a task's end and resolves with its result; never calls the tool again. */
  readonly taskResult: (taskId: string, options?: WaitOptions) => Promise<CallToolResult>
  /** Asks the server to cancel a task. */
  readonly cancelTask: (taskId: string, options?: RequestOptions) => Promise<void>
  /** Every page of `tasks/list` (2025-11-25 only). */
  readonly listTasks: (options?: RequestOptions) => Promise<ReadonlyArray<Task>>
}

// --- Tasks ------------------------------------------------------------------------------------

/** @since 0.1.0 @category mcp */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled"

/** A task's state, whichever revision brought it. @since 0.1.0 @category mcp */
export interface Task {
  readonly taskId: string
  readonly status: TaskStatus
  readonly statusMessage?: string | undefined
  readonly createdAt?: string | undefined
  readonly lastUpdatedAt?: string | undefined
  readonly ttlMs: number | null
  readonly pollIntervalMs?: number | undefined
}

/** @since 0.1.0 @category options */
export interface TaskCallOptions extends RequestOptions {
  /** The lifetime asked of the task (2025-11-25; the server may choose another). */
  readonly ttl?: DurationInput | undefined
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  readonly effectIdentity?: string | undefined
}

/** @since 0.1.0 @category options */
export interface WaitOptions extends RequestOptions {
  /** Called with each new state seen (a poll, a status notification). */
  readonly onStatus?: ((task: Task) => void) | undefined
  /** The tool the task's call called: its result is checked against that tool's outputSchema. */
  readonly tool?: string | undefined
}

/** A task the server created; keep `taskId` to come back to it. @since 0.1.0 @category models */
export interface TaskHandle {
  readonly taskId: string
  readonly created: Task
  readonly status: (options?: RequestOptions) => Promise<Task>
  readonly result: (options?: WaitOptions) => Promise<CallToolResult>
  readonly cancel: (options?: RequestOptions) => Promise<void>
}

/** @since 0.1.0 @category models */
export type TaskCall =
  | { readonly _tag: "Task"; readonly handle: TaskHandle }
  | { readonly _tag: "Result"; readonly result: CallToolResult }
