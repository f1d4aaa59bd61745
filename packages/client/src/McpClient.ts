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
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Subscribable from "effect/Subscribable"
import * as Authorization from "./Authorization.js"
import type * as ClientHandlers from "./ClientHandlers.js"
import * as Discovery from "./internal/connection/discovery.js"
import * as Failures from "./internal/failures.js"
import { makeResponder } from "./internal/inbound.js"
import * as Negotiation from "./internal/negotiation.js"
import { type ConnectionAuthorization, makeAuthorizer } from "./internal/oauth/authorizer.js"
import { makeMemory, TokenStore } from "./internal/oauth/tokenStore.js"
import { isStringRecord } from "./internal/records.js"
import { effectIdentityMetaKey as EffectIdentityKey, isValidEffectIdentity } from "./internal/requestMeta.js"
import { secretsOf, secretValues } from "./internal/secrets.js"
import * as LegacySse from "./LegacySse.js"
import type { InvalidOption, McpConnectionError, Stage } from "./McpConnectionError.js"
import * as McpSchema from "./McpSchema.js"
import * as PhasePolicy from "./PhasePolicy.js"
import type { EraName } from "./ProtocolEra.js"
import * as Stdio from "./Stdio.js"
import * as StreamableHttp from "./StreamableHttp.js"
import type { Diagnostics, TransportKind } from "./Transport.js"

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
   * OAuth 2.1, when the server asks for it (a 401): see `Authorization`. The interactive step
   * and the token store are the `Authorization.InteractiveAuthorization` and
   * `Authorization.TokenStore` services, when provided. Not with an `authorization` header or
   * URL userinfo.
   */
  readonly auth?: Authorization.Options | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type TransportChoice = "auto" | "streamable-http" | "sse"

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
  /** Per-stage timings and bytes of the discovery. */
  readonly discovery: ReadonlyArray<Observation>
  /**
   * Calls a tool once, under the call budget (or the validated overrides). A result with
   * `isError: true` is returned, not raised. Never retried.
   */
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: CallOptions
  ) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
  /**
   * `callTool` as a stream: the call's progress as the server reports it, then its result, then
   * the end. Progress is kept in a small sliding buffer: a slow reader sees the latest.
   */
  readonly callToolStream: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: Omit<CallOptions, "onProgress">
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
  /** Lists the tools again, every page under one discovery-budget deadline; they become `tools`. */
  readonly listTools: Effect.Effect<ReadonlyArray<McpSchema.Tool>, McpConnectionError>
  /** Every page of `resources/list`, under one deadline of the call budget (or the overrides). */
  readonly listResources: (options?: PhasePolicy.BudgetOptions) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, McpConnectionError>
  /** Every page of `resources/templates/list`, under one deadline of the call budget. */
  readonly listResourceTemplates: (
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, McpConnectionError>
  /**
   * `resources/read` of one URI (a listed resource, a template filled in, or the `uri` of a
   * tool result's `resource_link`), under the call budget. Sent once, never retried.
   */
  readonly readResource: (
    uri: string,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<McpSchema.ReadResourceResult, McpConnectionError>
  /** Every page of `prompts/list`, under one deadline of the call budget. */
  readonly listPrompts: (options?: PhasePolicy.BudgetOptions) => Effect.Effect<ReadonlyArray<McpSchema.Prompt>, McpConnectionError>
  /** `prompts/get` with the prompt's arguments (strings), under the call budget. */
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: PhasePolicy.BudgetOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, McpConnectionError>
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
export const defaultClientInfo: McpSchema.Implementation = { name: "phasebound", version: "0.1.0" }

const configError = Failures.invalidConfig

// RFC 7230 token for names; values without CR, LF or NUL (header injection).
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const headerValue = /^[^\r\n\0]*$/

interface Target {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly secrets: ReadonlyArray<string>
}

/** Validates the target before any I/O; moves URL userinfo into an Authorization header. */
const validateTarget = (options: ConnectOptions): Effect.Effect<Target, InvalidOption> =>
  Effect.gen(function*() {
    let url: URL
    try {
      url = new URL(options.url)
    } catch {
      return yield* Effect.fail(configError("url", "invalid-url"))
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return yield* Effect.fail(configError("url", "invalid-url"))
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (!headerName.test(name)) return yield* Effect.fail(configError("headers", "invalid-value"))
      if (typeof value !== "string" || !headerValue.test(value)) {
        return yield* Effect.fail(configError("headers", "invalid-value"))
      }
      headers[name.toLowerCase()] = value
    }
    // Taken before userinfo moves into a header: it covers the Basic token built from it.
    const secrets = secretsOf(url, headers)
    if (url.username !== "" || url.password !== "") {
      if (headers["authorization"] === undefined) {
        const user = decodeURIComponent(url.username)
        const password = decodeURIComponent(url.password)
        headers["authorization"] = `Basic ${btoa(unescape(encodeURIComponent(`${user}:${password}`)))}`
      }
      url.username = ""
      url.password = ""
    }
    return { url, headers, secrets }
  })

const validateClientInfo = (info: McpSchema.Implementation | undefined) =>
  Schema.decodeUnknown(McpSchema.Implementation)(info ?? defaultClientInfo).pipe(
    Effect.mapError(() => configError("clientInfo", "invalid-value"))
  )

/**
 * The connection's authorization: the options validated (before any I/O), the services the
 * caller provided (the interactive step, the token store; else tokens in memory).
 */
const authorizationOf = (
  options: Authorization.Options,
  target: Target,
  policy: PhasePolicy.PhasePolicy,
  secrets: Array<string>
): Effect.Effect<ConnectionAuthorization, InvalidOption, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // A credential of the caller's and one of the authority's cannot both be sent.
    if (target.headers["authorization"] !== undefined) {
      return yield* Effect.fail(configError("auth", "invalid-value", "authorization"))
    }
    const validated = yield* Authorization.validate(options)
    // Over plain http off loopback, the bearer token (and the flow's secrets) would travel in clear.
    yield* Authorization.validateServerUrl(target.url)
    for (const secret of [validated.clientSecret, validated.privateKey]) {
      if (!Redacted.isRedacted(secret)) continue
      for (const value of secretValues([Redacted.value(secret as Redacted.Redacted<string>)])) secrets.push(value)
    }
    const interactive = yield* Effect.serviceOption(Authorization.InteractiveAuthorization)
    // An interactive step without a place to come back to could never be used.
    if (Option.isSome(interactive) && validated.grant === "authorization_code" && validated.redirectUri === undefined) {
      return yield* Effect.fail(configError("auth.redirectUri", "invalid-value", "authorization"))
    }
    const provided = yield* Effect.serviceOption(TokenStore)
    const store = Option.isSome(provided) ? provided.value : yield* makeMemory
    return yield* makeAuthorizer({
      serverUrl: target.url,
      options: validated,
      budget: policy.authorization,
      interactive: Option.getOrUndefined(interactive),
      store,
      secrets
    })
  })

/**
 * Connects to an MCP server: validates every option, then runs the discovery under ONE
 * deadline: the negotiation (`server/discover` for 2026-07-28; else `initialize` and
 * `notifications/initialized` over Streamable HTTP; else legacy HTTP+SSE, as `transport` and
 * `revisions` allow), then every `tools/list` page. The connection lives in the current scope;
 * closing it releases the session. When discovery fails, everything it opened is released
 * before the failure is returned.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = (
  options: ConnectOptions
): Effect.Effect<Connection, McpConnectionError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const policy = yield* PhasePolicy.make(options.policy)
    const target = yield* validateTarget(options)
    const clientInfo = yield* validateClientInfo(options.clientInfo)
    const choice = options.transport ?? "auto"
    if (choice !== "auto" && choice !== "streamable-http" && choice !== "sse") {
      return yield* Effect.fail(configError("transport", "invalid-value"))
    }
    const revisions = yield* validateRevisions(options.revisions)
    const responder = yield* validateHandlers(options.handlers, policy)
    // Tokens join the secrets as the connection obtains them (the transports read this array).
    const secrets = [...target.secrets]
    const auth = options.auth === undefined ? undefined : yield* authorizationOf(options.auth, target, policy, secrets)
    const transportOptions = {
      url: target.url,
      headers: target.headers,
      credential: auth?.credential,
      secrets,
      releaseTimeoutMs: policy.releaseTimeoutMs,
      unsolicitedMaxBytes: policy.unsolicitedMaxBytes
    }
    return yield* Discovery.connect({
      policy,
      clientInfo,
      revisions,
      responder,
      auth,
      candidates: ({ exchange, inbound }) =>
        Negotiation.httpCandidates(choice, revisions, {
          streamable: { kind: "streamable-http", open: (session) => StreamableHttp.make({ ...transportOptions, inbound, session }) },
          // Waiting for the endpoint is the readiness step of discovery.
          legacy: { kind: "sse", readiness: "endpoint", open: () => LegacySse.make({ ...transportOptions, inbound }, exchange("endpoint")) }
        })
    })
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioConnectOptions extends Stdio.ServerCommand {
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
   * kept as `logTail`); see `Stdio.StderrHandling`.
   */
  readonly stderr?: Stdio.StderrHandling | undefined
}

const stderrModes: ReadonlySet<unknown> = new Set(["tail", "inherit", "drop"])

const isStderrHandling = (u: unknown): u is Stdio.StderrHandling =>
  typeof u === "object" && u !== null && stderrModes.has((u as Stdio.StderrHandling).mode) &&
  ((u as Stdio.StderrHandling).onSpawn === undefined || typeof (u as Stdio.StderrHandling).onSpawn === "function")

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
    const policy = yield* PhasePolicy.make(options.policy)
    const clientInfo = yield* validateClientInfo(options.clientInfo)
    if (typeof options.command !== "string" || options.command.length === 0 || options.command.includes("\0")) {
      return yield* Effect.fail(configError("command", "invalid-value"))
    }
    if (options.args !== undefined && !(Array.isArray(options.args) && options.args.every((a) => typeof a === "string"))) {
      return yield* Effect.fail(configError("args", "invalid-value"))
    }
    if (options.env !== undefined && !isStringRecord(options.env)) return yield* Effect.fail(configError("env", "invalid-value"))
    if (options.cwd !== undefined && typeof options.cwd !== "string") return yield* Effect.fail(configError("cwd", "invalid-value"))
    if (options.stderr !== undefined && !isStderrHandling(options.stderr)) return yield* Effect.fail(configError("stderr", "invalid-value"))
    const revisions = yield* validateRevisions(options.revisions)
    const responder = yield* validateHandlers(options.handlers, policy)
    const command = {
      command: options.command,
      args: options.args,
      env: options.env,
      cwd: options.cwd,
      // Values given for the child's environment are secrets as far as error texts go.
      secrets: secretValues(Object.values(options.env ?? {})),
      releaseTimeoutMs: policy.releaseTimeoutMs,
      unsolicitedMaxBytes: policy.unsolicitedMaxBytes,
      stderr: options.stderr
    }
    return yield* Discovery.connect({
      policy,
      clientInfo,
      revisions,
      responder,
      auth: undefined,
      candidates: ({ exchange, inbound }) =>
        // The spawn is the first step of discovery.
        Negotiation.stdioCandidates(revisions, { kind: "stdio", open: () => Stdio.make({ ...command, inbound }, exchange("connect")) })
    })
  })

/**
 * Validates the `handlers` option (each one a function, when given) into the responder that
 * answers the server with them; an answer to a server request on a stream is bounded by the
 * call timeout.
 */
const validateHandlers = (handlers: ClientHandlers.Handlers | undefined, policy: PhasePolicy.PhasePolicy) => {
  if (handlers !== undefined) {
    const given = typeof handlers === "object" && handlers !== null && !Array.isArray(handlers)
      ? Object.entries(handlers)
      : undefined
    const known = new Set(["elicitation", "sampling", "roots"])
    if (given === undefined || given.some(([name, handler]) => !known.has(name) || (handler !== undefined && typeof handler !== "function"))) {
      return Effect.fail(configError("handlers", "invalid-value"))
    }
  }
  return Effect.succeed(makeResponder(handlers, policy.call.timeoutMs))
}

/** Validates the `revisions` option into supported revisions, newest first. */
const validateRevisions = (input: ReadonlyArray<string> | undefined) => {
  if (input === undefined) return Effect.succeed(McpSchema.supportedRevisions)
  if (!Array.isArray(input) || input.length === 0 || !input.every(McpSchema.isSupportedRevision)) {
    return Effect.fail(configError("revisions", "invalid-value"))
  }
  return Effect.succeed(McpSchema.supportedRevisions.filter((revision) => input.includes(revision)))
}
