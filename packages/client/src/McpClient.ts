/**
 * The MCP client: discovery under one deadline, then tool calls, each under its own.
 *
 * @example
 * ```ts
 * import { McpClient } from "@phasebound/client"
 * import { FetchHttpClient } from "@effect/platform"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const connection = yield* McpClient.connect({
 *     url: "http://127.0.0.1:3000/mcp",
 *     policy: { timeout: "30 seconds", discovery: { timeout: "5 seconds" } }
 *   })
 *   return yield* connection.callTool("add", { a: 1, b: 2 })
 * }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Subscribable from "effect/Subscribable"
import * as Authorization from "./Authorization.js"
import type * as ClientHandlers from "./ClientHandlers.js"
import * as McpCache from "./McpCache.js"
import * as CacheService from "./internal/cacheService.js"
import * as Discovery from "./internal/connection/discovery.js"
import type { EraName } from "./internal/era.js"
import * as Failures from "./internal/failures.js"
import { makeResponder } from "./internal/inbound.js"
import * as Negotiation from "./internal/negotiation.js"
import * as Options from "./internal/options.js"
import { type ConnectionAuthorization, makeAuthorizer } from "./internal/oauth/authorizer.js"
import { TokenStore } from "./internal/oauth/tokenStore.js"
import { GivenSecrets } from "./internal/givenSecrets.js"
import { Secrets as ProxySecrets } from "./internal/proxySecrets.js"
import { mergeSecrets } from "./internal/secrets.js"
import { effectIdentityMetaKey as EffectIdentityKey, isValidEffectIdentity } from "./internal/requestMeta.js"
import * as LegacySse from "./internal/transport/legacySse.js"
import * as Stdio from "./internal/transport/stdio.js"
import type { ServerCommand, StderrHandling, StderrMode } from "./internal/transport/stdio.js"
import * as StreamableHttp from "./internal/transport/streamableHttp.js"
import type { Diagnostics, TransportKind } from "./internal/transport/transport.js"
import type { InvalidOption, McpConnectionError, Stage } from "./McpConnectionError.js"
import * as McpSchema from "./McpSchema.js"
import type * as McpTask from "./McpTask.js"
import type * as McpSkills from "./McpSkills.js"
import * as PhasePolicy from "./PhasePolicy.js"

// The transports and eras are internal (docs/DESIGN.md, "Module map"); the types of theirs that
// a connection's options and records name are public here.
export type {
  /**
   * @since 0.1.0
   * @category models
   */
  Diagnostics,
  /**
   * @since 0.1.0
   * @category models
   */
  EraName,
  /**
   * @since 0.1.0
   * @category models
   */
  ServerCommand,
  /**
   * @since 0.1.0
   * @category models
   */
  StderrHandling,
  /**
   * @since 0.1.0
   * @category models
   */
  StderrMode,
  /**
   * @since 0.1.0
   * @category models
   */
  TransportKind
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ConnectOptions {
  /** The server's MCP endpoint (http or https). Userinfo becomes a Basic `Authorization` header. */
  readonly url: string | URL
  /** Sent with every request, to the configured origin only. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * `"auto"` (default): Streamable HTTP first, falling back to legacy HTTP+SSE only when the
   * first POST of the discovery is answered 400, 404 or 405 without a JSON-RPC error body.
   * `"streamable-http"` or `"sse"` (legacy HTTP+SSE) force one transport.
   */
  readonly transport?: TransportChoice | undefined
  /**
   * The revisions the client may speak (default: all it supports). Over HTTP the stateless
   * revision (2026-07-28) is tried first with `server/discover`, then the handshake revisions
   * with `initialize`, then legacy HTTP+SSE, all under the one discovery deadline.
   */
  readonly revisions?: ReadonlyArray<string> | undefined
  readonly policy?: PhasePolicy.Options | undefined
  readonly clientInfo?: McpSchema.Implementation | undefined
  /** Answers to what the server may ask (elicitation, sampling, roots); each declares its capability. */
  readonly handlers?: ClientHandlers.Handlers | undefined
  /**
   * OAuth 2.1, when the server asks for it (a 401): see `Authorization`. The token store and the
   * interactive step are the `Authorization.TokenStore` and `Authorization.InteractiveAuthorization`
   * services, which `connect` then requires (`Authorization.layerDefaults`: tokens in memory, no
   * interactive step). Not with an `authorization` header or URL userinfo.
   */
  readonly auth?: Authorization.Options | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type TransportChoice = typeof TransportChoice.Type

/**
 * The transport choices, as a Schema (`Schema.is(McpClient.TransportChoice)` checks a text).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransportChoice: Schema.Literal<["auto", "streamable-http", "sse"]> = Options.TransportChoices

/**
 * What one operation cost: wall time and raw bytes read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Observation {
  /**
   * `authorization`: the connection obtained a new credential after a 401 or 403.
   * `new-session`: the discovery of a new session after the server forgot the last one.
   */
  readonly operation:
    | "discovery"
    | "tools/call"
    | "tools/list"
    | "ping"
    | "authorization"
    | "new-session"
    | "resources/list"
    | "resources/templates/list"
    | "resources/read"
    | "prompts/list"
    | "prompts/get"
    | "logging/setLevel"
    | "completion/complete"
    | "resources/subscribe"
    | "resources/unsubscribe"
    | "tasks/get"
    | "tasks/result"
    | "tasks/update"
    | "tasks/cancel"
    | "tasks/list"
    | "skills/list"
    | "skills/get"
  readonly stage: Stage
  readonly durationMs: number
  readonly bytes: number
  readonly outcome: "ok" | McpConnectionError["_tag"]
  /** Discovery: the era and transport of the negotiation attempt this stage belongs to. */
  readonly attempt?: { readonly era: EraName; readonly transport: TransportKind } | undefined
  /** Listings: the tools left out because the session cannot use them (invalid header declarations). */
  readonly excludedTools?: number | undefined
  /**
   * `true` on the second sending of a request that a 401 or 403 refused before it was processed,
   * after a new credential: the only request phasebound ever sends twice.
   */
  readonly resent?: true | undefined
  /** `tools/call`: the effect identity the call carried (`CallOptions.effectIdentity`). */
  readonly effectIdentity?: string | undefined
  /** A listing or read answered by the response cache, without a request (docs/DESIGN.md, "Response cache"). */
  readonly cached?: true | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly transport: TransportKind
  readonly protocolVersion: McpSchema.Revision
  /** Who the server says it is (a stateless server may not say). */
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly capabilities: Readonly<Record<string, unknown>>
  readonly instructions: string | undefined
  /** The tools of the current session, as last listed (docs/DESIGN.md, "Live tool lists"). */
  readonly tools: ReadonlyArray<McpSchema.Tool>
  /**
   * The current tools and their changes: `get` is `tools`; `changes` gives the current list,
   * then each new one, when the server said its tools changed (and the connection listed them
   * again), after `listTools`, or on a new session, whenever the list differs.
   */
  readonly toolList: Subscribable.Subscribable<ReadonlyArray<McpSchema.Tool>>
  /** The caching hint of the listing (2026-07-28 servers give one), `undefined` otherwise. */
  readonly toolsCacheHint: McpSchema.CacheHint | undefined
  readonly policy: PhasePolicy.PhasePolicy
  /**
   * A text with the connection's configured secrets (header values, URL userinfo and query
   * values, long path segments, a child's environment values, and the tokens it obtained)
   * replaced by `[redacted]`, in every form `remoteMessage` is redacted from (percent-encoded,
   * JSON-escaped, base64, split by invisible characters): for a server's answer that is handed
   * on to a third party, such as a language model (docs/DESIGN.md, "AI toolkits").
   */
  readonly redact: (text: string) => string
  /** Per-stage timings and bytes of the discovery. */
  readonly discovery: ReadonlyArray<Observation>
  /**
   * Calls a tool once, under the call budget (or the validated overrides). A result with
   * `isError: true` is returned, not raised. Never retried. With `redact: true`, the result
   * with the connection's secrets replaced (`CallToolOptions.redact`).
   */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: CallToolOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
  /**
   * `callTool` as a stream: the call's progress as the server reports it, then its result, then
   * the end. Progress is kept in a small sliding buffer: a slow reader sees the latest.
   */
  readonly callToolStream: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: Omit<CallToolOptions, "onProgress">
  ) => Stream.Stream<CallEvent, McpConnectionError>
  /**
   * `callTool`, its `structuredContent` decoded with `output` (after the check against the
   * tool's own `outputSchema`). A result that does not decode is a `ProtocolViolation`
   * (`structured-content-mismatch`, outcome `applied`); a tool error (`isError: true`) is
   * returned as such, with nothing to decode.
   */
  readonly callToolDecoded: <A, I>(
    output: Schema.Schema<A, I>,
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: CallOptions
  ) => Effect.Effect<DecodedResult<A>, McpConnectionError>
  /**
   * Lists the tools again, every page under one discovery-budget deadline; they become `tools`.
   * The answer is kept in the response cache (mode `refresh`: docs/DESIGN.md, "Response cache").
   */
  readonly listTools: Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpConnectionError>
  /**
   * `listTools` with a per-call cache mode, default `use`: a listing the server marked fresh
   * (this connection's, or a public one of another connection sharing the cache) is the answer,
   * without a request.
   */
  readonly listToolsWith: (options?: McpCache.CacheOptions) => Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpConnectionError>
  /**
   * Every page of `resources/list`, under one deadline of the call budget (or the overrides),
   * through the response cache (`cache`, default `use`).
   */
  readonly listResources: (
    options?: PhasePolicy.BudgetOptions & McpCache.CacheOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpConnectionError>
  /** Every page of `resources/templates/list`, under one deadline of the call budget. */
  readonly listResourceTemplates: (
    options?: PhasePolicy.BudgetOptions & McpCache.CacheOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, McpConnectionError>
  /**
   * `resources/read` of one URI (a listed resource, a template filled in, or the `uri` of a
   * tool result's `resource_link`), under the call budget. Sent once, never retried; served from
   * the response cache while the server's hint says the answer is fresh (`cache`, default `use`).
   */
  readonly readResource: (
    uri: string,
    options?: PhasePolicy.BudgetOptions & McpCache.CacheOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpConnectionError>
  /** Every page of `prompts/list`, under one deadline of the call budget. */
  readonly listPrompts: (options?: PhasePolicy.BudgetOptions & McpCache.CacheOptions) => Effect.Effect<ReadonlyArray<McpSchema.Prompt>, McpConnectionError>
  /** `prompts/get` with the prompt's arguments (strings), under the call budget. */
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpConnectionError>
  /**
   * `completion/complete` (docs/DESIGN.md, "Completion"): suggestions for one argument of a
   * prompt (`{ type: "ref/prompt", name }`) or of a resource template (`{ type: "ref/resource",
   * uri }`), given what has been typed (`argument.value`) and the values already chosen for the
   * other arguments (`context.arguments`). Under the call budget (or the overrides), sent once.
   * A server that did not declare `completions` is not asked (`InvalidOption` `completions`,
   * `undeclared-capability`, `not-sent`); a result of more than 100 values is a
   * `ProtocolViolation`.
   */
  readonly complete: (
    request: McpSchema.CompleteRequest,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<McpSchema.CompleteResult, McpConnectionError>
  /**
   * Asks the server for its log messages at `level` and above (docs/DESIGN.md, "Server log
   * messages"): `logging/setLevel` in the 2025 revisions; in 2026-07-28, where the level travels
   * in each request's `_meta`, every later request of the connection carries it.
   */
  readonly setLogLevel: (level: McpSchema.LogLevel) => Effect.Effect<void, McpConnectionError>
  /**
   * The server's log messages that arrive while the stream is read, through a sliding buffer of
   * `logBuffer` messages. The library never prints them.
   */
  readonly logMessages: Stream.Stream<McpSchema.LogMessage>
  /**
   * Asks the server whether it is there, under the ping budget (phase `call`, stage `ping`;
   * default 5 s, 64 KiB): `ping`, or `server/discover` in the 2026-07-28 revision (which removed
   * `ping`). Succeeds with the round trip in milliseconds.
   */
  readonly ping: Effect.Effect<number, McpConnectionError>
  /**
   * The server's change events as they arrive (docs/DESIGN.md, "Subscriptions"): list changes
   * (tools, prompts, resources) and updates of the resources subscribed with
   * `subscribeResource`; `gap: true` when a stream that carries them was lost and restored (or
   * a new session started): re-read what matters. A sliding buffer of 256 events: a reader
   * that falls behind loses the oldest.
   */
  readonly changes: Stream.Stream<ChangeEvent>
  /**
   * Subscribes to one resource's updates until the scope closes (docs/DESIGN.md,
   * "Subscriptions"): `resources/subscribe` in the 2025 revisions, the resource added to the
   * `subscriptions/listen` filter in 2026-07-28, under the call budget (or the overrides). A
   * server that does not declare `resources.subscribe` is refused before any I/O
   * (`InvalidOption`, reason `undeclared-capability`). The stream gives each update (a flood
   * of them is coalesced: a slow reader sees one); closing the scope unsubscribes (bounded by
   * the release timeout). Subscriptions are made again after a stream drops or on a new
   * session, with an update `gap: true`.
   */
  readonly subscribeResource: (
    uri: string,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<Stream.Stream<ResourceUpdate>, McpConnectionError, Scope.Scope>
  /** `subscribeResource` as a stream: subscribed when it starts, unsubscribed when it ends. */
  readonly resourceUpdates: (uri: string, options?: PhasePolicy.BudgetOptions) => Stream.Stream<ResourceUpdate, McpConnectionError>
  /**
   * The server's prompts, kept live (docs/DESIGN.md, "Subscriptions"): listed on the first `get`
   * or `changes`, then again (debounced like tools) each time the server says they changed.
   */
  readonly promptList: LiveList<McpSchema.Prompt>
  /** The server's resources, kept live like `promptList`. */
  readonly resourceList: LiveList<McpSchema.Resource>
  /**
   * The server's skills (the skills extension, docs/DESIGN.md "Skills"): every page of
   * `skills/list` under one deadline of the call budget, no file read. An empty listing, with
   * nothing sent, when the server does not declare the extension.
   */
  readonly listSkills: (options?: PhasePolicy.BudgetOptions) => Effect.Effect<McpSkills.SkillListing, McpConnectionError>
  /** `skills/get`: one skill's entry by the URI of its `SKILL.md`, listed or not, under the call budget. */
  readonly getSkill: (uri: string, options?: PhasePolicy.BudgetOptions) => Effect.Effect<McpSkills.Skill, McpConnectionError>
  /**
   * Reads one file of a skill (its `SKILL.md` by default; `ref` is a path under the skill's root
   * or an absolute URI) with `resources/read`, under the call budget and a ceiling of bytes
   * derived from the file's listed size, and returns it only once verified against the entry:
   * its size (`skill-size-mismatch`), its SHA-256 (`skill-digest-mismatch`) and, for the
   * `SKILL.md`, its frontmatter (`skill-frontmatter-mismatch`, `-invalid`, `-too-large`). A file
   * the entry does not list is refused before any I/O (`InvalidOption`, option `ref`).
   */
  readonly readSkillFile: (
    skill: McpSkills.Skill,
    ref?: string,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<McpSkills.SkillFile, McpConnectionError>
  /** The last 100 operations after discovery. */
  readonly observations: Effect.Effect<ReadonlyArray<Observation>>
  /**
   * How many sessions the connection has had: 1 after its discovery, one more each time it
   * started a new one after the server forgot the last (docs/DESIGN.md, "Sessions that heal").
   */
  readonly sessions: Effect.Effect<number>
  /** What the connection still holds (pending requests, background fibers). */
  readonly diagnostics: Effect.Effect<Diagnostics>
  /**
   * The last 64 KiB of the server's own log (a stdio server's stderr), for diagnostics in
   * process. Never part of an error. Empty for HTTP transports.
   */
  readonly logTail: Effect.Effect<string>
  /**
   * The URL elicitations the server said are complete (`notifications/elicitation/complete`,
   * 2025-11-25), by `elicitationId`: only those of this connection that phasebound saw (asked of
   * the `elicitationUrl` handler, named by a `UrlElicitationRequired`, or awaited), each once;
   * a notification naming any other id is ignored. A subscriber that falls behind keeps the
   * latest 64. The stream ends when the connection closes.
   */
  readonly elicitationCompletions: Stream.Stream<string>
  /**
   * Waits until the server says the URL elicitation `elicitationId` is complete (at once when it
   * already did), under the call timeout or `options.timeout` (phase `call`, stage
   * `elicitation`): `DeadlineExceeded` when it does not, `TransportFailure` (`session-closed`)
   * when the connection closes first; nothing is sent, so both are `not-sent`. The server may
   * never say (the notification is optional): give the user a way to go on without it.
   */
  readonly awaitElicitation: (
    elicitationId: string,
    options?: { readonly timeout?: PhasePolicy.BudgetOptions["timeout"] }
  ) => Effect.Effect<void, McpConnectionError>
  /**
   * Calls a tool as a task (docs/DESIGN.md, "Tasks"), under the call budget: sent once, as a task
   * where the server allows it (2025-11-25: the server declares task-augmented `tools/call` and
   * the tool's `execution.taskSupport` is `optional` or `required`; 2026-07-28: the server
   * decides). Gives the task's handle, or the result when the server answered at once.
   */
  readonly callToolTask: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: McpTask.TaskCallOptions
  ) => Effect.Effect<McpTask.TaskCall, McpConnectionError>
  /** A task's state now (`tasks/get`), under the call budget (or the overrides). */
  readonly getTask: (taskId: string, options?: PhasePolicy.BudgetOptions) => Effect.Effect<McpTask.Task, McpConnectionError>
  /**
   * Waits for a task's end and gives its result, under the task budget (`TaskHandle.result` for a
   * task id kept from elsewhere: another process, before a restart). Never sends `tools/call`.
   */
  readonly taskResult: (taskId: string, options?: McpTask.WaitOptions) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
  /** Asks the server to cancel a task (`tasks/cancel`), under the call budget. */
  readonly cancelTask: (taskId: string, options?: PhasePolicy.BudgetOptions) => Effect.Effect<void, McpConnectionError>
  /**
   * Every page of `tasks/list` (2025-11-25), under one deadline of the call budget. The 2026-07-28
   * extension has no listing: refused before any I/O (`InvalidOption`, `undeclared-capability`).
   */
  readonly listTasks: (options?: PhasePolicy.BudgetOptions) => Effect.Effect<ReadonlyArray<McpTask.Task>, McpConnectionError>
}

/**
 * A change the server announced, or that may have happened unseen (docs/DESIGN.md,
 * "Subscriptions"). `gap: true`: a stream that carries changes was lost and restored, or a new
 * session started; what was announced meanwhile is lost, so this may have changed.
 *
 * @since 0.1.0
 * @category models
 */
export type ChangeEvent =
  | { readonly _tag: "ToolsListChanged"; readonly gap: boolean }
  | { readonly _tag: "PromptsListChanged"; readonly gap: boolean }
  | { readonly _tag: "ResourcesListChanged"; readonly gap: boolean }
  | ResourceUpdate

/**
 * An update of a subscribed resource: read it again (`readResource`) to see what changed.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceUpdate {
  readonly _tag: "ResourceUpdated"
  readonly uri: string
  readonly gap: boolean
}

/**
 * A list the connection keeps live (prompts, resources): `get` is the current list (listed
 * the first time, under the call budget); `changes` gives it, then each new one that differs.
 * A listing that fails later leaves the list as it was.
 *
 * @since 0.1.0
 * @category models
 */
export interface LiveList<A> {
  readonly get: Effect.Effect<ReadonlyArray<A>, McpConnectionError>
  readonly changes: Stream.Stream<ReadonlyArray<A>, McpConnectionError>
}

/**
 * One call's options: overrides of the call budget, validated like the policy, and `_meta` for
 * the server.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions extends PhasePolicy.CallBudgetOptions {
  /**
   * Asks the server for progress (`_meta.progressToken`) and receives each report that grows.
   * Runs on the reader of the stream that brought it: keep it short; what it throws is ignored.
   */
  readonly onProgress?: ((progress: McpSchema.Progress) => void) | undefined
  /**
   * The request's `_meta` (MCP "General fields"): keys as the spec writes them, none of the
   * reserved ones (`io.modelcontextprotocol/...`, `progressToken`), at most 64 KiB as JSON.
   * With a tracer installed, the current span's `traceparent` is added (yours wins). Never put
   * in a span.
   */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /**
   * The call's effect identity (docs/DESIGN.md, "Effect identity"): a key the caller chooses for
   * the effect this call asks for, and gives again when it retries the same effect, so a server
   * that honours it can tell a retry from a second effect. Sent as
   * `_meta["io.phasebound/effect-identity"]` (`effectIdentityMetaKey`), recorded in the call's
   * observation and span. At most 512 characters, no control characters. It never makes
   * phasebound send a call twice.
   */
  readonly effectIdentity?: string | undefined
}

/**
 * The options of `callTool` and `callToolStream`: those of any call, and `redact`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolOptions extends CallOptions {
  /**
   * Returns the result with every secret `redact` replaces (the connection's configured
   * secrets and the tokens it obtained; a catalog's: those of every server it connected) replaced
   * by `[redacted]` in every string and key, for a result handed on to a third party, such as a
   * language model (docs/DESIGN.md, "AI toolkits"). Part of the call: within its deadline
   * (past it, `DeadlineExceeded` reason `redaction`, outcome `applied`), interruptible, and never
   * holding the process's other fibers for long. A result with no secret in it is returned
   * itself. Default `false`.
   */
  readonly redact?: boolean | undefined
}

/**
 * The `_meta` key that carries a call's effect identity (`CallOptions.effectIdentity`).
 *
 * @since 0.1.0
 * @category constants
 */
export const effectIdentityMetaKey: "io.phasebound/effect-identity" = EffectIdentityKey

/**
 * Whether a value may be a call's effect identity: a non-empty string of at most 512
 * characters, none of them a control character. Anything else is refused before any I/O.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEffectIdentity: (identity: unknown) => identity is string = isValidEffectIdentity

/**
 * What `callToolStream` emits: progress reports, then the result.
 *
 * @since 0.1.0
 * @category models
 */
export type CallEvent =
  | { readonly _tag: "Progress"; readonly progress: McpSchema.Progress }
  | { readonly _tag: "Result"; readonly result: McpSchema.CallToolResult }

/**
 * What `callToolDecoded` returns: the decoded `structuredContent`, or a tool error.
 *
 * @since 0.1.0
 * @category models
 */
export type DecodedResult<A> =
  | { readonly isError: false; readonly value: A; readonly result: McpSchema.CallToolResult }
  | { readonly isError: true; readonly result: McpSchema.CallToolResult }

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaultClientInfo: McpSchema.Implementation = Options.defaultClientInfo

/** The secrets given beside a server's options (`McpConnection.ServerOptions.secrets`), if any. */
const givenSecrets = Effect.map(Effect.serviceOption(GivenSecrets), Option.getOrElse((): ReadonlyArray<string> => []))

/**
 * The connection's authorization: the validated options and the services (the token store; the
 * interactive step for the authorization code grant, none when it is `noInteraction`).
 */
const authorizationOf = (
  settings: Options.HttpSettings & { readonly auth: Authorization.Validated },
  secrets: Array<string>
): Effect.Effect<ConnectionAuthorization, InvalidOption, HttpClient.HttpClient | Authorization.Services> =>
  Effect.gen(function*() {
    const provided = settings.auth.grant === "client_credentials" ? undefined : yield* Authorization.InteractiveAuthorization
    const interactive = provided === Authorization.noInteraction ? undefined : provided
    // An interactive step without a place to come back to could never be used.
    if (interactive !== undefined && settings.auth.redirectUri === undefined) {
      return yield* Effect.fail(Failures.invalidConfig("auth.redirectUri", "invalid-value", "authorization"))
    }
    return yield* makeAuthorizer({
      serverUrl: settings.url,
      options: settings.auth,
      budget: settings.policy.authorization,
      interactive,
      store: yield* TokenStore,
      secrets
    })
  })

/**
 * The cache a connection uses (docs/DESIGN.md, "Response cache"): the `McpCache` service where
 * one is provided, else one of its own (which its new sessions share).
 */
const connectionCache = (originMaterial: string, context: string, credential?: () => string) =>
  Effect.flatMap(Effect.serviceOption(McpCache.McpCache), (shared) => {
    const internals = shared._tag === "Some" ? CacheService.internalsOf(shared.value) : undefined
    return CacheService.forConnection(
      internals ?? CacheService.makeInternals({ ...McpCache.defaults }),
      originMaterial,
      context,
      credential
    )
  })

/**
 * Whether the era a connection negotiates may be remembered for its server (docs/DESIGN.md,
 * "The era per origin"): when it could have chosen the stateless era, so that a handshake it
 * settles on says the server refused that era. (Nor under a forced legacy transport: a server
 * may offer it beside Streamable HTTP.)
 */
const rememberable = (revisions: ReadonlyArray<McpSchema.Revision>) => McpSchema.statelessRevisions.every((revision) => revisions.includes(revision))

/** What the discovery of either kind of connection takes from its options. */
const discoveryOptions = (settings: Options.HttpSettings | Options.StdioSettings) => ({
  policy: settings.policy,
  clientInfo: settings.clientInfo,
  revisions: settings.revisions,
  // An answer to a server request on a stream is bounded by the call timeout.
  responder: makeResponder(settings.handlers, settings.policy.call.timeoutMs)
})

/**
 * Connects to an MCP server: validates every option, then runs the discovery under ONE
 * deadline: the negotiation (`server/discover` for 2026-07-28; else `initialize` and
 * `notifications/initialized` over Streamable HTTP; else legacy HTTP+SSE, as `transport` and
 * `revisions` allow), then every `tools/list` page. The connection lives in the current scope;
 * closing it releases the session. When discovery fails, everything it opened is released
 * before the failure is returned.
 *
 * With `auth` it requires the authorization services (`Authorization.Services`; the token store
 * alone for `client_credentials`): `Authorization.layerDefaults` gives tokens in memory and no
 * interactive step.
 *
 * @since 0.1.0
 * @category constructors
 */
export function connect(
  options: ConnectOptions & { readonly auth?: undefined }
): Effect.Effect<Connection, McpConnectionError, HttpClient.HttpClient | Scope.Scope>
export function connect(
  options: ConnectOptions & { readonly auth: Authorization.Options & { readonly grant: "client_credentials" } }
): Effect.Effect<Connection, McpConnectionError, HttpClient.HttpClient | Scope.Scope | Authorization.TokenStore>
export function connect(
  options: ConnectOptions
): Effect.Effect<Connection, McpConnectionError, HttpClient.HttpClient | Scope.Scope | Authorization.Services>
export function connect(
  options: ConnectOptions
): Effect.Effect<Connection, McpConnectionError, HttpClient.HttpClient | Scope.Scope | Authorization.Services> {
  return Effect.gen(function*() {
    const settings = yield* Options.decodeHttp(options)
    // The credentials of the client's proxy, when it has one (HttpProxy.Secrets): a proxy answers
    // for the server in absolute form, and what it says is redacted as the server's would be.
    // So is what was given beside the options (McpConnection.ServerOptions.secrets). Tokens join
    // the secrets as the connection obtains them (the transports read this array).
    const proxySecrets = Option.getOrElse(yield* Effect.serviceOption(ProxySecrets), () => [])
    const secrets = mergeSecrets(settings.secrets, [...proxySecrets, ...(yield* givenSecrets)])
    const auth = settings.auth === undefined ? undefined : yield* authorizationOf({ ...settings, auth: settings.auth }, secrets)
    const transportOptions = {
      url: settings.url,
      headers: settings.headers,
      credential: auth?.credential,
      secrets,
      releaseTimeoutMs: settings.policy.releaseTimeoutMs,
      unsolicitedMaxBytes: settings.policy.unsolicitedMaxBytes
    }
    // The server is its URL without userinfo or fragment; the authorization context its headers
    // (written once) and the credential of the moment (fingerprints of them: internal/cacheService.ts).
    const url = settings.url
    const headers = Object.entries(settings.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const cache = yield* connectionCache(
      `http\u0000${url.protocol}//${url.host}${url.pathname}${url.search}`,
      JSON.stringify(headers),
      () => auth?.credential.current ?? ""
    )
    return yield* Discovery.connect({
      ...discoveryOptions(settings),
      secrets,
      auth,
      cache,
      remembersEra: settings.transport !== "sse" && rememberable(settings.revisions),
      candidates: ({ exchange, inbound }) =>
        Negotiation.httpCandidates(settings.transport, settings.revisions, {
          streamable: { kind: "streamable-http", open: (session) => StreamableHttp.make({ ...transportOptions, inbound, session }) },
          // Waiting for the endpoint is the readiness step of discovery.
          legacy: { kind: "sse", readiness: "endpoint", open: () => LegacySse.make({ ...transportOptions, inbound }, exchange("endpoint")) }
        })
    })
  })
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioConnectOptions extends ServerCommand {
  /**
   * The revisions the client may speak (default: all it supports). The stateless revision is
   * probed first with `server/discover` (a bounded wait), then the handshake with `initialize`,
   * on the same child process.
   */
  readonly revisions?: ReadonlyArray<string> | undefined
  readonly policy?: PhasePolicy.Options | undefined
  readonly clientInfo?: McpSchema.Implementation | undefined
  /** Answers to what the server may ask (elicitation, sampling, roots); each declares its capability. */
  readonly handlers?: ClientHandlers.Handlers | undefined
  /**
   * What becomes of the child's stderr (default `{ mode: "tail" }`: drained, its last 64 KiB
   * kept as `logTail`); see `StderrHandling`.
   */
  readonly stderr?: StderrHandling | undefined
}

/**
 * Connects to an MCP server run as a child process over stdio, with the platform's
 * `CommandExecutor` (Node or Bun). The discovery deadline covers the spawn, the negotiation on
 * that child (the `server/discover` probe, with a bounded wait; else `initialize` and
 * `notifications/initialized`) and every `tools/list` page. The child belongs to the current
 * scope: closing it
 * closes stdin, waits, sends SIGTERM, waits, sends SIGKILL, each step bounded by
 * `releaseTimeout`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectStdio = (
  options: StdioConnectOptions
): Effect.Effect<Connection, McpConnectionError, CommandExecutor.CommandExecutor | Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* Options.decodeStdio(options)
    // The environment's values, and what was given beside the options (McpConnection.ServerOptions.secrets).
    const secrets = mergeSecrets(settings.secrets, yield* givenSecrets)
    const command = {
      command: settings.command,
      args: settings.args,
      env: settings.env,
      cwd: settings.cwd,
      secrets,
      releaseTimeoutMs: settings.policy.releaseTimeoutMs,
      unsolicitedMaxBytes: settings.policy.unsolicitedMaxBytes,
      stderr: settings.stderr
    }
    // The server is its command line, directory and environment (fingerprinted, with the
    // environment's values: internal/cacheService.ts); the environment is its credential too.
    const env = Object.entries(settings.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const cache = yield* connectionCache(JSON.stringify(["stdio", settings.command, settings.args ?? [], settings.cwd ?? "", env]), "")
    return yield* Discovery.connect({
      ...discoveryOptions(settings),
      secrets,
      auth: undefined,
      cache,
      remembersEra: rememberable(settings.revisions),
      candidates: ({ exchange, inbound }) =>
        // The spawn is the first step of discovery.
        Negotiation.stdioCandidates(settings.revisions, { kind: "stdio", open: () => Stdio.make({ ...command, inbound }, exchange("connect")) })
    })
  })
