/**
 * The rows of the end-to-end tests against the testkit servers with `features` (live tool lists,
 * resources and prompts, server log messages): one per transport × era × HTTP client, each
 * starting its own server and connecting to it. One builder, so that every file runs the same
 * servers the same way; what only one file reads is an optional field or an option.
 */
import type { HttpClient } from "@effect/platform/HttpClient"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Testkit from "@phasebound/testkit"
import { Effect, Layer, type Scope } from "effect"
import type { McpConnectionError, McpSchema, PhasePolicy } from "../../src/index.js"
import { McpClient } from "../../src/index.js"
import { connect, type Connection as PromiseConnection } from "../../src/promise.js"
import { eventually, httpClients } from "./harness.js"

export type Era = "handshake" | "stateless"

/** Faults both HTTP servers and the stdio server know in this shape. */
export type CommonFault =
  | { readonly on: string; readonly kind: "delay"; readonly ms: number }
  | { readonly on: string; readonly kind: "jsonrpc-error"; readonly code: number; readonly message: string }

export interface StartOptions {
  readonly pageSize?: number
  readonly resources?: number
  /** Scripted at once over HTTP, given at spawn over stdio (none may apply to discovery). */
  readonly faults?: ReadonlyArray<CommonFault>
}

export interface PromiseOptions {
  readonly policy?: PhasePolicy.Options
  readonly onToolsChanged?: (tools: ReadonlyArray<McpSchema.Tool>) => void
  readonly onLogMessage?: (message: McpSchema.LogMessage) => void
}

/** What only an HTTP test server can do: act on its own, and be scripted after it started. */
export interface ServerSide {
  readonly changeTools: (count?: number) => number
  readonly floodNotifications: (count: number, bytes?: number) => number
  /** GET streams (2025, legacy) and subscriptions (2026) a list change reaches now. */
  readonly listChangedListeners: () => number
  readonly script: (fault: CommonFault) => void
  /** 2026-07-28 only. */
  readonly endSubscriptions?: () => number
  /** Legacy only: GET streams the client closed. */
  readonly closedStreams?: () => number
}

export interface Live {
  readonly connect: (
    policy?: PhasePolicy.Options
  ) => Effect.Effect<McpClient.Connection, McpConnectionError.McpConnectionError, Scope.Scope | HttpClient | CommandExecutor>
  readonly promise: (options?: PromiseOptions) => Promise<PromiseConnection>
  /** Waits until a list change of the server's can reach the client (its stream or subscription is open). */
  readonly listening: Effect.Effect<void>
  readonly rpcCalls: (method: string) => number
  readonly toolCalls: (name: string) => number
  /** Everything the server received so far (HTTP requests, or stdio arrivals). */
  readonly received: () => number
  readonly logMessagesSent: () => number
  readonly listChangedSent: () => number
  readonly subscriptionsClosed: () => number
  readonly server: ServerSide | undefined
  /** Streamable HTTP only: the `_meta` of each request of that method, in order. */
  readonly metasOf?: (method: string) => ReadonlyArray<Readonly<Record<string, unknown>>>
  /** Streamable HTTP 2025 only: forgets the sessions. */
  readonly expireSession?: () => void
  /** stdio only: whether the child is still alive. */
  readonly alive?: () => boolean
}

export interface Row {
  readonly name: string
  readonly era: Era
  readonly transport: "streamable-http" | "sse" | "stdio"
  /** Whether a request's log messages come before its answer, on the same stream. */
  readonly inOrder: boolean
  readonly layer: Layer.Layer<HttpClient | CommandExecutor>
  readonly start: (options?: StartOptions) => Effect.Effect<Live, never, Scope.Scope>
}

export interface RowOptions {
  /**
   * Whether `connect` returns only once the server received the subscription a 2026-07-28
   * connection opens in the background, so that counts of what the server received are stable.
   * Off where the tests wait for it themselves (`listening`).
   */
  readonly connectWaitsForSubscription: boolean
}

const platform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

/** Generous: bounds that prove something happened, not how fast. */
const until = (predicate: () => boolean) => eventually(predicate, 10_000)

/**
 * After a 2026-07-28 connect: waits until the server received the subscription the connection
 * opens in the background, so that counts of what the server received are stable.
 */
export const subscribed = (era: Era, rpcCalls: (method: string) => number) => () =>
  era === "stateless" ? until(() => rpcCalls("subscriptions/listen") === 1) : Effect.void

/** `connect` as the row options ask: with or without the wait for a 2026-07-28 subscription. */
const settle = (options: RowOptions, era: Era, rpcCalls: (method: string) => number) => <A, E, R>(connecting: Effect.Effect<A, E, R>) =>
  options.connectWaitsForSubscription ? Effect.tap(connecting, subscribed(era, rpcCalls)) : connecting

/** What both HTTP test servers (Streamable HTTP and legacy HTTP+SSE) have alike. */
interface HttpFeatureServer extends Omit<ServerSide, "endSubscriptions" | "closedStreams"> {
  readonly requests: ReadonlyArray<unknown>
  readonly rpcCalls: (method: string) => number
  readonly toolCalls: (name: string) => number
  readonly logMessagesSent: () => number
  readonly listChangedSent: () => number
  readonly subscriptionsClosed: () => number
}

/** The part of `Live` both HTTP servers give alike; scripts the start's faults at once. */
const httpServerLive = (srv: HttpFeatureServer, faults: ReadonlyArray<CommonFault>) => {
  for (const fault of faults) srv.script(fault)
  return {
    listening: until(() => srv.listChangedListeners() === 1),
    rpcCalls: srv.rpcCalls,
    toolCalls: srv.toolCalls,
    received: () => srv.requests.length,
    logMessagesSent: srv.logMessagesSent,
    listChangedSent: srv.listChangedSent,
    subscriptionsClosed: srv.subscriptionsClosed,
    server: {
      changeTools: srv.changeTools,
      floodNotifications: srv.floodNotifications,
      listChangedListeners: srv.listChangedListeners,
      script: (fault: CommonFault) => srv.script(fault)
    }
  }
}

const streamableRow = (
  era: Era,
  mode: Testkit.ResponseMode,
  [client, httpLayer]: readonly [string, Layer.Layer<HttpClient>],
  rowOptions: RowOptions
): Row => ({
  name: `Streamable HTTP ${era === "handshake" ? "2025" : "2026-07-28"} ${mode}, ${client}`,
  era,
  transport: "streamable-http",
  // JSON answers (2025): a request's messages go on the session's GET stream, the answer on the POST.
  inOrder: mode === "sse",
  layer: Layer.merge(httpLayer, platform),
  start: ({ faults = [], ...options } = {}) =>
    Effect.map(Testkit.scoped({ features: true, mode, era, ...options }), (srv): Live => {
      const shared = httpServerLive(srv, faults)
      return {
        ...shared,
        connect: (policy) => settle(rowOptions, era, srv.rpcCalls)(McpClient.connect({ url: srv.url, policy })),
        promise: (options = {}) => connect({ url: srv.url, httpClient: Layer.orDie(httpLayer), ...options }),
        server: { ...shared.server, ...(era === "stateless" ? { endSubscriptions: srv.endSubscriptions } : {}) },
        metasOf: (method) => srv.requests.filter((r) => r.rpcMethod === method).map((r) => (r as Testkit.RecordedHttpRequest).meta ?? {}),
        ...(era === "handshake" ? { expireSession: srv.expireSession } : {})
      }
    })
})

const legacyRow = ([client, httpLayer]: readonly [string, Layer.Layer<HttpClient>]): Row => ({
  name: `legacy HTTP+SSE, ${client}`,
  era: "handshake",
  transport: "sse",
  inOrder: true,
  layer: Layer.merge(httpLayer, platform),
  start: ({ faults = [], ...options } = {}) =>
    Effect.map(Testkit.scopedLegacy({ features: true, ...options }), (srv): Live => {
      const shared = httpServerLive(srv, faults)
      return {
        ...shared,
        connect: (policy) => McpClient.connect({ url: srv.url, transport: "sse", policy }),
        promise: (options = {}) => connect({ url: srv.url, transport: "sse", httpClient: Layer.orDie(httpLayer), ...options }),
        server: { ...shared.server, closedStreams: srv.closedStreams }
      }
    })
})

const stdioRow = (era: Era, rowOptions: RowOptions): Row => ({
  name: `stdio ${era === "handshake" ? "handshake (2025)" : "stateless (2026-07-28)"}`,
  era,
  transport: "stdio",
  inOrder: true,
  layer: Layer.merge(httpClients[0]![1], platform),
  start: (options = {}) =>
    Effect.map(
      Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture({ features: true, era, ...options })), (f) => Effect.sync(() => f.cleanup())),
      (f): Live => ({
        connect: (policy) => settle(rowOptions, era, f.rpcCalls)(McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, policy })),
        promise: (options = {}) => connect({ stdio: { command: f.command, args: [...f.args], env: f.env }, ...options }),
        // Handshake: stdout listens once initialize was served. Stateless: the subscription is
        // the child's as soon as it logged its arrival (it handles one line at a time).
        listening: subscribed(era, f.rpcCalls)(),
        rpcCalls: f.rpcCalls,
        toolCalls: f.toolCalls,
        received: () => f.arrivals().length,
        logMessagesSent: f.logMessagesSent,
        listChangedSent: f.listChangedSent,
        subscriptionsClosed: f.subscriptionsClosed,
        server: undefined,
        alive: f.isAlive
      })
    )
})

/**
 * The rows: for each HTTP client, the Streamable HTTP `streamable` (era, answer mode) pairs in the
 * order given, then legacy HTTP+SSE; then stdio in both eras. Each file picks the Streamable rows
 * its feature has (and their order, which is the order its tests run in).
 */
export const featureRows = (
  streamable: ReadonlyArray<readonly [Era, Testkit.ResponseMode]>,
  options: RowOptions
): { readonly httpRows: ReadonlyArray<Row>; readonly stdioRows: ReadonlyArray<Row>; readonly rows: ReadonlyArray<Row> } => {
  const httpRows = httpClients.flatMap((client) => [
    ...streamable.map(([era, mode]) => streamableRow(era, mode, client, options)),
    legacyRow(client)
  ])
  const stdioRows = [stdioRow("handshake", options), stdioRow("stateless", options)]
  return { httpRows, stdioRows, rows: [...httpRows, ...stdioRows] }
}
