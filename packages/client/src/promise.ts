/**
 * The Promise API, for users outside Effect.
 *
 * Numeric times are milliseconds. Rejections are the errors of `McpConnectionError`; an
 * aborted `AbortSignal` rejects with the signal's own `reason`, unchanged (never a deadline).
 *
 * @example
 * ```ts
 * import { connect } from "@phasebound/client/promise"
 *
 * const add = async (a: number, b: number) => {
 *   const connection = await connect({ url: "http://127.0.0.1:3000/mcp", policy: { timeout: 30_000 } })
 *   try {
 *     return await connection.callTool("add", { a, b }, { timeout: 5_000 })
 *   } finally {
 *     await connection.close()
 *   }
 * }
 * ```
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Authorization from "./Authorization.js"
import * as HttpProxy from "./HttpProxy.js"
import * as CatalogInternal from "./internal/catalog/catalog.js"
import type * as ClientHandlers from "./ClientHandlers.js"
import * as McpCache from "./McpCache.js"
import * as McpCatalog from "./McpCatalog.js"
import * as McpClient from "./McpClient.js"
import type * as McpConnection from "./McpConnection.js"
import type { McpConnectionError } from "./McpConnectionError.js"
import type * as McpSchema from "./McpSchema.js"
import * as McpServers from "./McpServers.js"
import type * as McpTask from "./McpTask.js"
import type * as McpSkills from "./McpSkills.js"
import type * as PhasePolicy from "./PhasePolicy.js"
import type { TransportKind } from "./McpClient.js"

/**
 * @since 0.1.0
 * @category models
 */
export type ConnectOptions = HttpConnectOptions | StdioConnectOptions

/**
 * A handler of what a server asks: the request's params in, the result (or a Promise of it)
 * out. `signal` aborts when the answer is no longer wanted: for an `input_required` round
 * (2026-07-28) when the call ends (its deadline, the caller's abort); for a server request on a
 * stream (2025 revisions) when its answer time (the call timeout) runs out or the connection
 * closes. A throw or a rejection is reported as `HandlerFailed` (2026) or as a generic error reply
 * to the server (2025), its value kept in process.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (
  params: ClientHandlers.Fields,
  options: { readonly signal: AbortSignal }
) => ClientHandlers.Fields | Promise<ClientHandlers.Fields>

/**
 * Answers to what a server may ask; each one given declares its client capability.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handlers {
  readonly elicitation?: Handler | undefined
  readonly sampling?: Handler | undefined
  readonly roots?: Handler | undefined
  /**
   * URL-mode elicitations (see `ClientHandlers.Handlers.elicitationUrl`): the checked URL in,
   * the user's answer out; declares the `url` mode of the `elicitation` capability.
   */
  readonly elicitationUrl?: UrlHandler | undefined
}

/**
 * The handler of URL-mode elicitations: `request.url` passed phasebound's checks
 * (`ClientHandlers.UrlElicitation`); show it whole, with its `host`, and ask the user before
 * opening it. `signal` aborts as a `Handler`'s does.
 *
 * @since 0.1.0
 * @category models
 */
export type UrlHandler = (
  request: ClientHandlers.UrlElicitation,
  options: { readonly signal: AbortSignal }
) => ClientHandlers.UrlElicitationResult | Promise<ClientHandlers.UrlElicitationResult>

/**
 * What the Promise API adds to the options of either kind of connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseOptions {
  readonly handlers?: Handlers | undefined
  readonly signal?: AbortSignal | undefined
  /**
   * Called with each new tool list (docs/DESIGN.md, "Live tool lists"): after the server said its
   * tools changed and they were listed again, or on a new session, whenever the list differs.
   * What it throws is ignored.
   */
  readonly onToolsChanged?: ((tools: ReadonlyArray<McpSchema.Tool>) => void) | undefined
  /**
   * Called with each log message of the server's (see `setLogLevel`), through a sliding buffer
   * of `policy.logBuffer` messages. What it throws is ignored.
   */
  readonly onLogMessage?: ((message: McpSchema.LogMessage) => void) | undefined
  /**
   * Called with the `elicitationId` of each URL elicitation the server says is complete (see
   * `McpClient.Connection.elicitationCompletions`). What it throws is ignored.
   */
  readonly onElicitationComplete?: ((elicitationId: string) => void) | undefined
  /**
   * The cache to share with other connections (`createCache`): public responses and the era
   * per origin (docs/DESIGN.md, "Response cache", "The era per origin"). Without it the
   * connection has a cache of its own.
   */
  readonly cache?: Cache | undefined
  /**
   * Called with each change event of the server's (docs/DESIGN.md, "Subscriptions"): list
   * changes, updates of the resources subscribed with `subscribeResource`, and `gap: true` after
   * a stream that carries them was restored. Through a sliding buffer of 256 events. What it
   * throws is ignored.
   */
  readonly onChange?: ((event: McpClient.ChangeEvent) => void) | undefined
  /**
   * Called with the server's prompts, then each new list when they change (`Connection.promptList`):
   * giving it lists them once the connection is made. What it throws is ignored.
   */
  readonly onPromptsChanged?: ((prompts: ReadonlyArray<McpSchema.Prompt>) => void) | undefined
  /** Called with the server's resources, then each new list when they change (as `onPromptsChanged`). */
  readonly onResourcesChanged?: ((resources: ReadonlyArray<McpSchema.Resource>) => void) | undefined
}

/**
 * A cache that connections share (`createCache`; `McpCache` in the Effect API).
 *
 * @since 0.1.0
 * @category models
 */
export interface Cache {
  /** Evicts every entry of a kind, or the reads of one URI, for every server. */
  readonly evict: (target: McpCache.Target) => void
  /** Forgets every response and every era. */
  readonly clear: () => void
  readonly stats: () => McpCache.Stats
}

const effectCaches = new WeakMap<Cache, McpCache.Cache>()

/**
 * Makes a cache for connections to share (pass it as `cache` to each `connect`). Throws the
 * `InvalidOption` of a bound that is not valid (`cache.maxEntries`, ...).
 *
 * @since 0.1.0
 * @category constructors
 */
export const createCache = (options?: McpCache.Options): Cache => {
  const made = Effect.runSync(Effect.either(McpCache.make(options)))
  if (made._tag === "Left") throw made.left
  const cache = made.right
  const plain: Cache = {
    evict: (target) => Effect.runSync(cache.evict(target)),
    clear: () => Effect.runSync(cache.clear),
    stats: () => Effect.runSync(cache.stats)
  }
  effectCaches.set(plain, cache)
  return plain
}

/** The Effect cache of a Promise one, provided to the connection when one was given. */
const withCache = <A, E, R>(effect: Effect.Effect<A, E, R>, cache: Cache | undefined) => {
  const found = cache === undefined ? undefined : effectCaches.get(cache)
  return found === undefined ? effect : Effect.provideService(effect, McpCache.McpCache, found)
}

/**
 * The options of `McpClient.connectStdio`, the command under `stdio`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioConnectOptions extends Pick<McpClient.StdioConnectOptions, "revisions" | "policy" | "clientInfo">, PromiseOptions {
  /** The server to run as a child process (no shell). */
  readonly stdio: Pick<McpClient.StdioConnectOptions, "command" | "args" | "env" | "cwd">
}

/**
 * The options of `McpClient.connect`, with the Promise API's handlers and `auth`.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpConnectOptions extends Omit<McpClient.ConnectOptions, "handlers" | "auth">, PromiseOptions {
  /** OAuth 2.1, when the server asks for it (see `AuthOptions`). */
  readonly auth?: AuthOptions | undefined
  /**
   * The HTTP client layer, built for this connection and released with it (default: one client
   * shared by the process, `NodeHttpClient.layerUndici` under Node, `FetchHttpClient.layer` under Bun;
   * `HttpProxy.layerEnv` on both when `HTTPS_PROXY`, `HTTP_PROXY` or their lower-case forms are set).
   */
  readonly httpClient?: Layer.Layer<HttpClient.HttpClient> | undefined
}

/**
 * OAuth 2.1 for a server that asks for it (docs/AUTHORIZATION.md). Tokens live in
 * memory, for the connection's life.
 *
 * @since 0.1.0
 * @category models
 */
export interface AuthOptions extends Omit<Authorization.Options, "interactiveTimeout"> {
  /**
   * The interactive step of the authorization code grant: show `authorizationUrl` to the user,
   * and resolve with the URL the authorization server redirected to (it carries the code).
   * `signal` aborts when the answer is no longer wanted (the interactive timeout, the caller's
   * abort). Not needed with `grant: "client_credentials"`.
   */
  readonly authorize?:
    | ((authorizationUrl: URL, options: { readonly signal: AbortSignal }) => string | URL | Promise<string | URL>)
    | undefined
  /** Bound of the interactive step, in milliseconds or any Duration input (default 5 minutes). */
  readonly interactiveTimeout?: Authorization.Options["interactiveTimeout"]
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  readonly signal?: AbortSignal | undefined
  /** Milliseconds (or any Duration input): overrides the call timeout for this request. */
  readonly timeout?: PhasePolicy.BudgetOptions["timeout"]
  /** Overrides the call byte ceiling for this request. */
  readonly maxBytes?: number | undefined
  /**
   * How a listing or a read uses the response cache (default `use`; `refresh`, `bypass`). Other
   * requests ignore it.
   */
  readonly cache?: McpCache.CacheMode | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions extends RequestOptions {
  /** The request's `_meta` (see `McpClient.CallOptions`). */
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  /** Asks for progress; called with each report that grows (see `McpClient.CallOptions`). */
  readonly onProgress?: ((progress: McpSchema.Progress) => void) | undefined
  /**
   * Milliseconds (or any Duration input) the call may go without progress; each report starts
   * the wait anew, and the call timeout stays the hard cap. Rejects with `DeadlineExceeded`,
   * `reason: "idle-timeout"`.
   */
  readonly idleTimeout?: PhasePolicy.CallBudgetOptions["idleTimeout"]
  /**
   * The call's effect identity: a key you give again when you retry the same effect, so a server
   * that honours it can tell a retry from a second effect (see `McpClient.CallOptions`).
   */
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
  /** The current tools: those of the last listing (see `onToolsChanged`). */
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: CallOptions
  ) => Promise<McpSchema.CallToolResult>
  /** Lists the tools again (`cache: "use"` serves a fresh listing of the response cache instead). */
  readonly listTools: (
    options?: { readonly signal?: AbortSignal | undefined; readonly cache?: McpCache.CacheMode | undefined }
  ) => Promise<ReadonlyArray<McpSchema.Tool>>
  /** `ping` under the ping budget; resolves with the round trip in milliseconds. */
  readonly ping: (options?: { readonly signal?: AbortSignal | undefined }) => Promise<number>
  readonly listResources: (options?: RequestOptions) => Promise<ReadonlyArray<McpSchema.Resource>>
  readonly listResourceTemplates: (options?: RequestOptions) => Promise<ReadonlyArray<McpSchema.ResourceTemplate>>
  /** Reads one resource, such as the `uri` of a tool result's `resource_link`. */
  readonly readResource: (uri: string, options?: RequestOptions) => Promise<McpSchema.ReadResourceResult>
  /** The server's skills, no file read (see `McpClient.Connection.listSkills`). */
  readonly listSkills: (options?: RequestOptions) => Promise<McpSkills.SkillListing>
  /** One skill's entry by the URI of its `SKILL.md` (`skills/get`). */
  readonly getSkill: (uri: string, options?: RequestOptions) => Promise<McpSkills.Skill>
  /**
   * Reads one file of a skill (its `SKILL.md` by default) and resolves only once it is verified
   * against the entry (see `McpClient.Connection.readSkillFile`).
   */
  readonly readSkillFile: (skill: McpSkills.Skill, ref?: string, options?: RequestOptions) => Promise<McpSkills.SkillFile>
  readonly listPrompts: (options?: RequestOptions) => Promise<ReadonlyArray<McpSchema.Prompt>>
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: RequestOptions
  ) => Promise<McpSchema.GetPromptResult>
  /**
   * Suggestions for one argument of a prompt or a resource template (`completion/complete`, see
   * `McpClient.Connection.complete`), under the call budget.
   */
  readonly complete: (request: McpSchema.CompleteRequest, options?: RequestOptions) => Promise<McpSchema.CompleteResult>
  /** Asks for the server's log messages at `level` and above (they reach `onLogMessage`). */
  readonly setLogLevel: (level: McpSchema.LogLevel, options?: { readonly signal?: AbortSignal | undefined }) => Promise<void>
  /**
   * Resolves when the server says the URL elicitation `elicitationId` is complete, within the
   * call timeout or `options.timeout`; rejects as `McpClient.Connection.awaitElicitation` fails.
   */
  readonly awaitElicitation: (
    elicitationId: string,
    options?: { readonly timeout?: PhasePolicy.BudgetOptions["timeout"]; readonly signal?: AbortSignal | undefined }
  ) => Promise<void>
  /**
   * Subscribes to one resource's updates (docs/DESIGN.md, "Subscriptions"): resolves once the
   * server has the subscription, with the function that ends it (safe to call more than once;
   * closing the connection ends it too). `onUpdate` is called with each update (a flood is
   * coalesced); re-read the resource then. What it throws is ignored.
   */
  readonly subscribeResource: (
    uri: string,
    onUpdate: (update: McpClient.ResourceUpdate) => void,
    options?: RequestOptions
  ) => Promise<() => Promise<void>>
  /** Releases the session (bounded). Safe to call more than once. */
  readonly close: () => Promise<void>
  /** The Effect connection underneath, for observation. */
  readonly effect: McpClient.Connection
  /**
   * Calls a tool as a task where the server allows it (see `McpClient.Connection.callToolTask`):
   * resolves with the task's handle, or with the result when the server answered at once.
   */
  readonly callToolTask: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    options?: TaskCallOptions
  ) => Promise<TaskCall>
  /** A task's state now (`tasks/get`), under the call budget. */
  readonly getTask: (taskId: string, options?: RequestOptions) => Promise<McpTask.Task>
  /** Waits for a task's end and resolves with its result, under the task budget; never calls the tool again. */
  readonly taskResult: (taskId: string, options?: WaitOptions) => Promise<McpSchema.CallToolResult>
  /** Asks the server to cancel a task (`tasks/cancel`). */
  readonly cancelTask: (taskId: string, options?: RequestOptions) => Promise<void>
  /** Every page of `tasks/list` (2025-11-25 only). */
  readonly listTasks: (options?: RequestOptions) => Promise<ReadonlyArray<McpTask.Task>>
}

/**
 * A task-augmented call's options (see `McpTask.TaskCallOptions`): the call's budget, `meta`,
 * `effectIdentity`, and `ttl`, the lifetime asked of the task (milliseconds or a Duration input).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskCallOptions extends RequestOptions {
  readonly ttl?: McpTask.TaskCallOptions["ttl"]
  readonly meta?: Readonly<Record<string, unknown>> | undefined
  readonly effectIdentity?: string | undefined
}

/**
 * A wait for a task's result: the task budget's overrides (`timeout` the whole wait, `maxBytes`
 * each answer), `onStatus` called with each new state seen, and `signal`.
 *
 * @since 0.1.0
 * @category models
 */
export interface WaitOptions extends RequestOptions {
  readonly onStatus?: ((task: McpTask.Task) => void) | undefined
  /** The tool the task's call called, for its `outputSchema` check (see `McpTask.WaitOptions`). */
  readonly tool?: string | undefined
}

/**
 * A task the server created (see `McpTask.TaskHandle`); keep `taskId` to come back to it with
 * `taskResult`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskHandle {
  readonly taskId: string
  readonly created: McpTask.Task
  readonly status: (options?: RequestOptions) => Promise<McpTask.Task>
  readonly result: (options?: WaitOptions) => Promise<McpSchema.CallToolResult>
  readonly cancel: (options?: RequestOptions) => Promise<void>
}

/**
 * What `callToolTask` resolves with: a task, or the result itself.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskCall =
  | { readonly _tag: "Task"; readonly handle: TaskHandle }
  | { readonly _tag: "Result"; readonly result: McpSchema.CallToolResult }

/** Runs an effect; rejects with the signal's reason when the signal aborted it. */
const run = <A>(
  effect: Effect.Effect<A, McpConnectionError>,
  signal: AbortSignal | undefined
): Promise<A> => {
  if (signal?.aborted) return Promise.reject(signal.reason)
  return Effect.runPromiseExit(effect, signal === undefined ? undefined : { signal }).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    if (signal?.aborted && Cause.isInterruptedOnly(exit.cause)) throw signal.reason
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some") throw failure.value
    // A defect or an interruption we did not ask for: a bug, kept whole in process.
    throw Cause.squash(exit.cause)
  })
}

/**
 * The default HTTP client, one per process and shared by every connection made without an
 * `httpClient`, so that connections reuse its keep-alive sockets as `fetch` users are used to
 * (a client per connection would open new sockets for every connect). Under Node, undici
 * directly (about half the CPU per request of Node's fetch, measured in docs/BENCHMARKS.md);
 * under Bun, fetch (Bun stubs undici). When the environment names a proxy (`HTTPS_PROXY`,
 * `HTTP_PROXY`, their lower-case forms), `HttpProxy.layerEnv` instead, on either runtime
 * (docs/DESIGN.md, "Proxies"): the environment is read once, at the first connect. It lives as
 * long as the process; its idle sockets do not keep the process alive.
 */
let defaultHttpClient: Promise<Exit.Exit<Context.Context<HttpClient.HttpClient>, McpConnectionError>> | undefined
const sharedDefaultHttpClient = Effect.suspend(() => {
  defaultHttpClient ??= Effect.runPromiseExit(
    Effect.gen(function*() {
      const layer = HttpProxy.isConfigured(typeof process === "undefined" ? {} : process.env)
        ? HttpProxy.layerEnv
        : "Bun" in globalThis
        ? FetchHttpClient.layer
        : (yield* Effect.promise(() => import("@effect/platform-node/NodeHttpClient"))).layerUndici
      return yield* Layer.buildWithScope(layer, yield* Scope.make())
    })
  ).then((exit) => {
    // A failure (a malformed proxy variable) is not kept: the next connect tries again.
    if (Exit.isFailure(exit)) defaultHttpClient = undefined
    return exit
  })
  return Effect.flatMap(Effect.promise(() => defaultHttpClient!), (exit) => exit)
})

const connectHttp = (options: HttpConnectOptions, scope: Scope.Scope) =>
  Effect.gen(function*() {
    // A given HTTP client lives as long as the connection, not just the discovery.
    const context = options.httpClient === undefined
      ? yield* sharedDefaultHttpClient
      : yield* Layer.buildWithScope(options.httpClient, scope)
    const connectOptions = {
      url: options.url,
      headers: options.headers,
      transport: options.transport,
      revisions: options.revisions,
      policy: options.policy,
      clientInfo: options.clientInfo,
      handlers: effectHandlers(options.handlers)
    }
    const auth = options.auth
    // Without `auth`, no authorization service is asked for: none is built.
    const connecting = auth === undefined ? McpClient.connect(connectOptions) : Effect.provide(
      McpClient.connect({ ...connectOptions, auth }),
      // Tokens in memory for this connection; the interactive step, when one is given.
      Layer.merge(
        Authorization.layerMemoryTokenStore,
        typeof auth.authorize === "function"
          ? Authorization.layerInteractive((url) => Effect.tryPromise({ try: async (signal) => auth.authorize!(url, { signal }), catch: (cause) => cause }))
          : Authorization.layerNoInteraction
      )
    )
    return yield* connecting.pipe((connecting) => withCache(connecting, options.cache), Scope.extend(scope), Effect.provide(context))
  })

/**
 * Promise handlers as Effect handlers: the fiber's interruption aborts the handler's signal.
 * Anything that is not a function is passed on as it is, unknown keys included, for the client's
 * validation to refuse.
 */
const effectHandlers = (handlers: Handlers | undefined): ClientHandlers.Handlers | undefined => {
  if (handlers === undefined || typeof handlers !== "object" || handlers === null || Array.isArray(handlers)) {
    return handlers as ClientHandlers.Handlers | undefined
  }
  const wrapped: Record<string, unknown> = {}
  for (const [name, handler] of Object.entries(handlers)) {
    wrapped[name] = typeof handler !== "function"
      ? handler
      : (params: ClientHandlers.Fields) => Effect.tryPromise({ try: async (signal) => (handler as Handler)(params, { signal }), catch: (cause) => cause })
  }
  return wrapped as ClientHandlers.Handlers
}

const connectStdio = (options: StdioConnectOptions, scope: Scope.Scope) =>
  Effect.gen(function*() {
    // Loaded only when stdio is used: HTTP users never load the process layers.
    const [{ layer: commandExecutor }, { layer: fileSystem }] = yield* Effect.promise(() =>
      Promise.all([import("@effect/platform-node/NodeCommandExecutor"), import("@effect/platform-node/NodeFileSystem")])
    )
    const context = yield* Layer.buildWithScope(Layer.provide(commandExecutor, fileSystem), scope)
    return yield* McpClient.connectStdio({
      ...options.stdio,
      revisions: options.revisions,
      policy: options.policy,
      clientInfo: options.clientInfo,
      handlers: effectHandlers(options.handlers)
    }).pipe((connecting) => withCache(connecting, options.cache), Scope.extend(scope), Effect.provide(context))
  })

/** A request's budget overrides, without its signal. */
const budgetOf = (options: RequestOptions | undefined): PhasePolicy.BudgetOptions | undefined =>
  options === undefined ? undefined : { timeout: options.timeout, maxBytes: options.maxBytes }

/** A listing's or a read's budget overrides and cache mode, without its signal. */
const cachedOf = (options: RequestOptions | undefined): (PhasePolicy.BudgetOptions & McpCache.CacheOptions) | undefined =>
  options === undefined ? undefined : { ...budgetOf(options), cache: options.cache }

/**
 * Calls `listener` with each item of `stream` until the connection closes; what it throws is
 * ignored (the caller's callback is not the connection).
 */
const forEachUntilClosed = <A>(stream: Stream.Stream<A>, listener: (a: A) => void, scope: Scope.Scope) =>
  Effect.runFork(Effect.forkIn(
    Stream.runForEach(stream, (a) =>
      Effect.sync(() => {
        try {
          listener(a)
        } catch {
          // Nothing to do: see above.
        }
      })),
    scope
  ))

/** Hands the connection's change events and live lists to the callbacks given for them. */
const followChanges = (connection: McpClient.Connection, options: ConnectOptions, scope: Scope.Scope) => {
  const { onChange, onPromptsChanged, onResourcesChanged } = options
  if (typeof onChange === "function") forEachUntilClosed(connection.changes, onChange, scope)
  // A listing that fails at first ends that callback's stream: there is nothing to call it with.
  if (typeof onPromptsChanged === "function") forEachUntilClosed(Stream.orElse(connection.promptList.changes, () => Stream.empty), onPromptsChanged, scope)
  if (typeof onResourcesChanged === "function") {
    forEachUntilClosed(Stream.orElse(connection.resourceList.changes, () => Stream.empty), onResourcesChanged, scope)
  }
}

/** One resource's subscription, ended by the function it resolves with (or the connection's close). */
const subscribeResource = (
  connection: McpClient.Connection,
  scope: Scope.Scope,
  uri: string,
  onUpdate: (update: McpClient.ResourceUpdate) => void,
  options: RequestOptions | undefined
): Promise<() => Promise<void>> =>
  run(
    Effect.gen(function*() {
      const own = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const updates = yield* Effect.onError(Scope.extend(connection.subscribeResource(uri, budgetOf(options)), own), (cause) =>
        Scope.close(own, Exit.failCause(cause)))
      forEachUntilClosed(updates, onUpdate, own)
      let ending: Promise<void> | undefined
      return () => (ending ??= Effect.runPromise(Scope.close(own, Exit.void)))
    }),
    options?.signal
  )

/** Hands the connection's tool lists and log messages to the callbacks given for them. */
const follow = (connection: McpClient.Connection, options: ConnectOptions, scope: Scope.Scope) => {
  followChanges(connection, options, scope)
  const { onElicitationComplete, onLogMessage, onToolsChanged } = options
  if (typeof onToolsChanged === "function") {
    // `changes` starts with the list of the moment: only a list other than the last seen is new.
    let last = connection.tools
    forEachUntilClosed(
      Stream.filter(connection.toolList.changes, (tools) => tools !== last),
      (tools) => {
        last = tools
        onToolsChanged(tools)
      },
      scope
    )
  }
  if (typeof onLogMessage === "function") forEachUntilClosed(connection.logMessages, onLogMessage, scope)
  if (typeof onElicitationComplete === "function") forEachUntilClosed(connection.elicitationCompletions, onElicitationComplete, scope)
}

/**
 * Connects and discovers. Resolves once the tools are listed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = async (options: ConnectOptions): Promise<Connection> => {
  const scope = Effect.runSync(Scope.make())
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  let connection: McpClient.Connection
  try {
    connection = await run(
      "stdio" in options ? connectStdio(options, scope) : connectHttp(options, scope),
      options.signal
    )
  } catch (error) {
    await close()
    throw error
  }
  follow(connection, options, scope)
  let closing: Promise<void> | undefined
  return {
    // Those of the current session (a connection whose server forgot its session starts a new one).
    get transport() {
      return connection.transport
    },
    get protocolVersion() {
      return connection.protocolVersion
    },
    get serverInfo() {
      return connection.serverInfo
    },
    get tools() {
      return connection.tools
    },
    effect: connection,
    callTool: (name, args, callOptions) => {
      if (callOptions === undefined) return run(connection.callTool(name, args), undefined)
      const { signal, ...rest } = callOptions
      return run(connection.callTool(name, args, rest), signal)
    },
    listTools: (listOptions) =>
      run(listOptions?.cache === undefined ? connection.listTools : connection.listToolsWith({ cache: listOptions.cache }), listOptions?.signal),
    ping: (pingOptions) => run(connection.ping, pingOptions?.signal),
    listResources: (requestOptions) => run(connection.listResources(cachedOf(requestOptions)), requestOptions?.signal),
    listResourceTemplates: (requestOptions) => run(connection.listResourceTemplates(cachedOf(requestOptions)), requestOptions?.signal),
    readResource: (uri, requestOptions) => run(connection.readResource(uri, cachedOf(requestOptions)), requestOptions?.signal),
    listSkills: (requestOptions) => run(connection.listSkills(budgetOf(requestOptions)), requestOptions?.signal),
    getSkill: (uri, requestOptions) => run(connection.getSkill(uri, budgetOf(requestOptions)), requestOptions?.signal),
    readSkillFile: (skill, ref, requestOptions) => run(connection.readSkillFile(skill, ref, budgetOf(requestOptions)), requestOptions?.signal),
    listPrompts: (requestOptions) => run(connection.listPrompts(cachedOf(requestOptions)), requestOptions?.signal),
    getPrompt: (name, args, requestOptions) => run(connection.getPrompt(name, args, budgetOf(requestOptions)), requestOptions?.signal),
    complete: (request, requestOptions) => run(connection.complete(request, budgetOf(requestOptions)), requestOptions?.signal),
    setLogLevel: (level, levelOptions) => run(connection.setLogLevel(level), levelOptions?.signal),
    awaitElicitation: (elicitationId, awaitOptions) =>
      run(
        connection.awaitElicitation(elicitationId, awaitOptions === undefined ? undefined : { timeout: awaitOptions.timeout }),
        awaitOptions?.signal
      ),
    subscribeResource: (uri, onUpdate, requestOptions) => subscribeResource(connection, scope, uri, onUpdate, requestOptions),
    close: () => (closing ??= close()),
    ...taskMembers(connection)
  }
}

/** The task operations of the Promise API (docs/DESIGN.md, "Tasks"). */
const taskMembers = (connection: McpClient.Connection) => {
  const waitOf = (options: WaitOptions | undefined): McpTask.WaitOptions | undefined =>
    options === undefined ? undefined : { ...budgetOf(options), onStatus: options.onStatus, tool: options.tool }
  const taskResult = (taskId: string, options?: WaitOptions) => run(connection.taskResult(taskId, waitOf(options)), options?.signal)
  const getTask = (taskId: string, options?: RequestOptions) => run(connection.getTask(taskId, budgetOf(options)), options?.signal)
  const cancelTask = (taskId: string, options?: RequestOptions) => run(connection.cancelTask(taskId, budgetOf(options)), options?.signal)
  const handleOf = (handle: McpTask.TaskHandle): TaskHandle => ({
    taskId: handle.taskId,
    created: handle.created,
    status: (options) => run(handle.status, options?.signal),
    result: (options) => run(handle.result(waitOf(options)), options?.signal),
    cancel: (options) => run(handle.cancel, options?.signal)
  })
  return {
    callToolTask: (name: string, args?: Readonly<Record<string, unknown>>, options?: TaskCallOptions): Promise<TaskCall> => {
      const { signal, ...rest } = options ?? {}
      return run(connection.callToolTask(name, args, rest), signal).then((call): TaskCall =>
        call._tag === "Result" ? call : { _tag: "Task", handle: handleOf(call.handle) }
      )
    },
    getTask,
    taskResult,
    cancelTask,
    listTasks: (options?: RequestOptions) => run(connection.listTasks(budgetOf(options)), options?.signal)
  }
}

// ---------------------------------------------------------------------------------------------
// A catalog over many servers (docs/DESIGN.md, "Catalog").

/**
 * The servers of a catalog and its rules: `servers` as `McpServers.Options` takes them (each
 * connected on first use, under its own policy and headers), the shared `policy`, `revisions`
 * and `clientInfo`, and the catalog's `prefix`, `separator` and per-server rules in `catalog`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CatalogOptions extends Omit<McpConnection.CommonOptions, "handlers"> {
  readonly servers: Readonly<Record<string, McpConnection.ServerOptions>>
  readonly catalog?: McpCatalog.Options | undefined
  /** The HTTP client's layer (default: the process's shared one, as `connect`'s). */
  readonly httpClient?: Layer.Layer<HttpClient.HttpClient> | undefined
  /**
   * Called with each new merged list once a server's tools changed, or a server failed or came
   * back, and the list differs (`McpCatalog.Catalog.toolList`): giving it connects every server.
   * A server that cannot be connected leaves the others' tools in the list and is tried again
   * after its backoff (see `onError`). What it throws is ignored.
   */
  readonly onToolsChanged?: ((tools: ReadonlyArray<McpCatalog.CatalogTool>) => void) | undefined
  /**
   * Called with the error of a server the live list could not connect (its `server` is the
   * configured name), each time one fails, or fails differently, after being listed or failing
   * otherwise; the server is tried again after 1, 2, 4 ... at most 30 seconds. Giving it
   * connects every server. What it throws is ignored.
   */
  readonly onError?: ((error: McpConnectionError) => void) | undefined
}

/**
 * A catalog in the Promise API: `McpCatalog.Catalog`'s operations, each rejecting with its
 * `McpConnectionError` (or an aborted signal's own reason).
 *
 * @since 0.1.0
 * @category models
 */
export interface Catalog {
  readonly servers: ReadonlyArray<string>
  readonly listTools: (options?: { readonly signal?: AbortSignal | undefined }) => Promise<ReadonlyArray<McpCatalog.CatalogTool>>
  readonly listing: (options?: { readonly signal?: AbortSignal | undefined }) => Promise<McpCatalog.Listing>
  readonly callTool: (name: string, args?: Readonly<Record<string, unknown>>, options?: CallOptions) => Promise<McpSchema.CallToolResult>
  /** The Effect catalog underneath. */
  readonly effect: McpCatalog.Catalog
  /** Releases every server's connection. */
  readonly close: () => Promise<void>
}

/** What a catalog's live listing hands to `onToolsChanged` and `onError`. */
type ListingEvent =
  | { readonly _tag: "Tools"; readonly tools: ReadonlyArray<McpCatalog.CatalogTool> }
  | { readonly _tag: "Failure"; readonly error: McpConnectionError }

/**
 * Of each listing: its tools when they differ from the last ones handed on (as `toolList`
 * does), and the failures the listing before did not have (a server that failed, or fails
 * differently). One stream for both callbacks: the live listing runs once.
 */
const listingEvents = (listings: Stream.Stream<McpCatalog.Listing>): Stream.Stream<ListingEvent> =>
  listings.pipe(
    Stream.mapAccum(
      { tools: undefined as ReadonlyArray<McpCatalog.CatalogTool> | undefined, failures: new Map<string, string>() },
      (before, listing) => {
        const failures = new Map(listing.failures.map((failure) => [failure.server, CatalogInternal.failureKey(failure.error)]))
        const events: Array<ListingEvent> = before.tools !== undefined && CatalogInternal.sameTools(before.tools, listing.tools)
          ? []
          : [{ _tag: "Tools", tools: listing.tools }]
        for (const failure of listing.failures) {
          if (before.failures.get(failure.server) !== failures.get(failure.server)) events.push({ _tag: "Failure", error: failure.error })
        }
        return [{ tools: listing.tools, failures }, events]
      }
    ),
    Stream.flattenIterables
  )

/**
 * Makes a catalog over named servers (`McpCatalog`): its options are checked at once
 * (`InvalidOption`, nothing connected); each server is connected on first use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createCatalog = async (options: CatalogOptions): Promise<Catalog> => {
  const scope = Effect.runSync(Scope.make())
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  let catalog: McpCatalog.Catalog
  try {
    catalog = await run(
      Effect.gen(function*() {
        const http = options.httpClient === undefined ? yield* sharedDefaultHttpClient : yield* Layer.buildWithScope(options.httpClient, scope)
        // Loaded here, as `connect` loads them for stdio: the servers may be of either kind.
        const [{ layer: commandExecutor }, { layer: fileSystem }] = yield* Effect.promise(() =>
          Promise.all([import("@effect/platform-node/NodeCommandExecutor"), import("@effect/platform-node/NodeFileSystem")])
        )
        const processes = yield* Layer.buildWithScope(Layer.provide(commandExecutor, fileSystem), scope)
        const authorization = yield* Layer.buildWithScope(Authorization.layerDefaults, scope)
        const { catalog: rules, httpClient: _, onError: ___, onToolsChanged: __, ...serversOptions } = options
        const servers = yield* McpServers.make(serversOptions).pipe(
          Scope.extend(scope),
          Effect.provide(http),
          Effect.provide(processes),
          Effect.provide(authorization)
        )
        return yield* McpCatalog.fromServers(servers, rules)
      }),
      undefined
    )
  } catch (error) {
    await close()
    throw error
  }
  const { onError, onToolsChanged } = options
  // The catalog's live listing never fails: a server that cannot be connected is reported and tried again.
  const toTools = typeof onToolsChanged === "function" ? onToolsChanged : undefined
  const toErrors = typeof onError === "function" ? onError : undefined
  if (toTools !== undefined || toErrors !== undefined) {
    forEachUntilClosed(
      listingEvents(catalog.listings),
      (event) => event._tag === "Tools" ? toTools?.(event.tools) : toErrors?.(event.error),
      scope
    )
  }
  let closing: Promise<void> | undefined
  return {
    servers: catalog.servers,
    listTools: (listOptions) => run(catalog.listTools, listOptions?.signal),
    listing: (listOptions) => run(catalog.listing, listOptions?.signal),
    callTool: (name, args, callOptions) => {
      if (callOptions === undefined) return run(catalog.callTool(name, args), undefined)
      const { signal, ...rest } = callOptions
      return run(catalog.callTool(name, args, rest), signal)
    },
    effect: catalog,
    close: () => (closing ??= close())
  }
}
