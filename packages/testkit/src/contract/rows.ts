/**
 * The rows of the contract table: one per (protocol era, transport, answer form, HTTP client).
 * A row starts its own loopback server with the faults a case scripts, connects the client
 * under test to it (Effect or Promise API), and says how its server observes release.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Layer, type Scope } from "effect"
import { startLegacyServer } from "../LegacySseServer.js"
import { makeStdioFixture, readEnvReport, type StdioFault } from "../StdioServer.js"
import { startServer } from "../StreamableHttpServer.js"
import { CANARY_ENV, CANARY_HEADERS, withCanaries } from "./canaries.js"
import type { ClientUnderTest, Connection, Policy, PromiseConnection } from "./client.js"
import { type ContractFaultKind, legacyFault, type SitedFault, stdioFault, streamableFault } from "./faults.js"

export type Transport = "streamable-http" | "legacy-sse" | "stdio"
export type EraName = "handshake" | "stateless"

export interface PeerSetup {
  readonly faults?: ReadonlyArray<SitedFault>
  /** Connect with the canary secrets (headers, URL userinfo and query; a stdio env). */
  readonly canaries?: boolean
  /**
   * A server that never completes what the client releases, so that only the client's
   * `releaseTimeout` bounds each release step (docs/DESIGN.md, "Release"):
   * - Streamable HTTP 2025: every DELETE and every `notifications/cancelled` POST is received
   *   and never answered;
   * - Streamable HTTP 2026: nothing changes. The stateless era cancels by closing the answer
   *   stream (no notice) and holds no session (no DELETE): there is no step to stall;
   * - legacy HTTP+SSE: every `notifications/cancelled` POST is received and never answered
   *   (closing the GET stream is the client's own act);
   * - stdio: the child ignores SIGTERM and stays alive after stdin closes: only SIGKILL ends it.
   */
  readonly stubbornRelease?: boolean
}

export type Endpoint =
  | {
    readonly kind: "http"
    readonly url: string
    readonly headers: Readonly<Record<string, string>> | undefined
    readonly transport: "streamable-http" | "sse"
  }
  | {
    readonly kind: "stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>>
  }

/** One server of a row, for one case, with the client's ways of connecting to it. */
export interface Peer<R> {
  readonly row: Row<R>
  /** The URL the client is given (with the canaries when asked); the stdio command line otherwise. */
  readonly target: string
  /** How to reach the server from any client (a CLI, another library): its URL or its command. */
  readonly endpoint: Endpoint
  readonly connect: (policy?: Policy) => Effect.Effect<Connection, unknown, R | Scope.Scope>
  readonly connectPromise: (options?: { readonly policy?: Policy; readonly signal?: AbortSignal }) => Promise<PromiseConnection>
  /** Executions of the side-effecting `increment` tool. */
  readonly counter: () => number
  /** Requests (or notifications) of that method that arrived. */
  readonly calls: (method: string) => number
  /**
   * Abandoned requests the server has seen released: over Streamable HTTP the request's response
   * closed by the client; on a shared stream (legacy SSE, stdio) a cancellation notice.
   */
  readonly abandoned: () => number
  /**
   * Requests the server never answered whose connection the client closed (stalled answers,
   * DELETEs, notices): Streamable HTTP counts every such response, legacy the POSTs left
   * unanswered by `stubbornRelease`; stdio has none (0).
   */
  readonly unansweredClosed: () => number
  /** What `released()` waits for, in words. */
  readonly releaseSign: string
  /**
   * Resolves once the server has seen the connection's session released (after its scope
   * closed): the DELETE of a 2025 session, the legacy GET stream closed, the child gone. A
   * stateless HTTP connection holds nothing between requests: resolves at once.
   */
  readonly released: (timeoutMs?: number) => Promise<void>
  /**
   * The secrets the server received, in the places they were sent (empty without canaries): over
   * HTTP the credential headers and request URLs; a stdio child's environment entries named in
   * `CANARY_ENV` (`NAME=value`), as the child reported them at its start.
   */
  readonly receivedSecrets: () => ReadonlyArray<string>
  readonly waitFor: (predicate: () => boolean, what: string, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

export interface Row<R> {
  /** e.g. "streamable-sse/2026 · undici" */
  readonly name: string
  /** The row without its HTTP client, e.g. "streamable-sse/2026". */
  readonly server: string
  readonly transport: Transport
  readonly era: EraName
  /** The HTTP client layer's name; undefined for stdio. */
  readonly http: string | undefined
  /** Answers share one stream (legacy GET stream, stdout): a stray answer is dropped and counted there. */
  readonly sharedStream: boolean
  /**
   * A session whose shared stream was given up is replaced by a new one before the next call
   * (legacy HTTP+SSE; docs/DESIGN.md, "Sessions that heal"). Without it (stdio), the next call is
   * refused before it is sent.
   */
  readonly heals: boolean
  readonly supports: (fault: ContractFaultKind) => boolean
  readonly start: (setup?: PeerSetup) => Promise<Peer<R>>
  /** Runs a case's program in a scope, with the row's platform layers. */
  readonly run: <A>(program: Effect.Effect<A, unknown, R | Scope.Scope>) => Promise<A>
}

/** Polls `predicate` every 5 ms; rejects with `what` after `timeoutMs` (generous: a sync point, not a timing claim). */
export const waitUntil = async (predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Where a request carried the canaries: its credential headers and its URL. */
const sentSecrets = (request: { readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>; readonly url: string }) =>
  [request.headers["authorization"], request.headers["x-api-key"], request.url].flatMap((value) =>
    value === undefined ? [] : typeof value === "string" ? [value] : [...value]
  )

const runner = <R>(layer: Layer.Layer<R>) => <A>(program: Effect.Effect<A, unknown, R | Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(layer)) as Effect.Effect<A, unknown, never>)

const refuse = (what: string): never => {
  throw new Error(`this row has no ${what} fault`)
}

/** What every HTTP peer shares: the URL and headers it is given (with the canaries when asked) and how it connects. */
const httpAccess = <R>(
  client: ClientUnderTest<R>,
  http: string,
  serverUrl: string,
  transport: "streamable-http" | "sse",
  setup: PeerSetup
) => {
  const url = setup.canaries === true ? withCanaries(serverUrl) : serverUrl
  const headers = setup.canaries === true ? CANARY_HEADERS : undefined
  return {
    target: url,
    endpoint: { kind: "http", url, headers, transport } as const,
    connect: (policy?: Policy) => client.connectHttp({ url, headers, transport, policy }),
    connectPromise: (options: { readonly policy?: Policy; readonly signal?: AbortSignal } = {}) =>
      client.connectPromise({ url, headers, transport, httpClient: http, ...options })
  }
}

const streamableRow = <R>(
  client: ClientUnderTest<R>,
  answers: "json" | "sse",
  era: EraName,
  http: string
): Row<R> => {
  const server = `streamable-${answers}/${era === "handshake" ? "2025" : "2026"}`
  const row: Row<R> = {
    name: `${server} · ${http}`,
    server,
    transport: "streamable-http",
    era,
    http,
    sharedStream: false,
    heals: false,
    supports: (kind) => kind !== "lying-content-length" || answers === "json",
    run: runner(client.layer(http)),
    start: async (setup = {}) => {
      const stubborn = setup.stubbornRelease === true && era === "handshake"
      const srv = await startServer({ mode: answers, era, stallDeletes: stubborn })
      for (const sited of setup.faults ?? []) srv.script(streamableFault(sited) ?? refuse(sited.fault.kind))
      if (stubborn) srv.script({ on: "notifications/cancelled", kind: "headers-never-sent", times: Infinity })
      const waitFor = waitUntil
      return {
        row,
        ...httpAccess(client, http, srv.url, "streamable-http", setup),
        counter: srv.counter,
        calls: srv.rpcCalls,
        abandoned: srv.abortedResponses,
        unansweredClosed: srv.abortedResponses,
        releaseSign: era === "handshake" ? "the session DELETEd" : "nothing held between requests",
        released: (timeoutMs) => era === "handshake" ? waitFor(() => srv.deletes() >= 1, "the session DELETEd", timeoutMs) : Promise.resolve(),
        receivedSecrets: () => srv.requests.flatMap(sentSecrets),
        waitFor,
        close: srv.close
      }
    }
  }
  return row
}

const legacyRow = <R>(client: ClientUnderTest<R>, http: string): Row<R> => {
  const server = "legacy-sse/2024"
  const row: Row<R> = {
    name: `${server} · ${http}`,
    server,
    transport: "legacy-sse",
    era: "handshake",
    http,
    sharedStream: true,
    heals: true,
    supports: (kind) => kind !== "lying-content-length",
    run: runner(client.layer(http)),
    start: async (setup = {}) => {
      const srv = await startLegacyServer()
      for (const sited of setup.faults ?? []) srv.script(legacyFault(sited) ?? refuse(sited.fault.kind))
      if (setup.stubbornRelease === true) srv.script({ on: "notifications/cancelled", kind: "post-never-answered", times: Infinity })
      const waitFor = waitUntil
      return {
        row,
        ...httpAccess(client, http, srv.url, "sse", setup),
        counter: srv.counter,
        calls: srv.rpcCalls,
        abandoned: () => srv.rpcCalls("notifications/cancelled"),
        unansweredClosed: srv.unansweredPostsClosed,
        releaseSign: "the GET stream closed by the client",
        released: (timeoutMs) => waitFor(() => srv.closedStreams() >= 1, "the GET stream closed by the client", timeoutMs),
        receivedSecrets: () => srv.requests.flatMap(sentSecrets),
        waitFor,
        close: srv.close
      }
    }
  }
  return row
}

/**
 * The canary environment entries a child reported it was given (`envReport`, written before it
 * reads stdin), as `NAME=value`: empty until it has written the report.
 */
const reportedCanaries = (file: string): ReadonlyArray<string> =>
  Object.entries(readEnvReport(file) ?? {}).flatMap(([name, value]) => value === null ? [] : [`${name}=${value}`])

const stdioRow = <R>(client: ClientUnderTest<R>, era: EraName, http: string): Row<R> => {
  const server = `stdio/${era === "handshake" ? "2025" : "2026"}`
  const row: Row<R> = {
    name: server,
    server,
    transport: "stdio",
    era,
    http: undefined,
    sharedStream: true,
    heals: false,
    supports: (kind) => kind !== "reset-mid-answer" && kind !== "lying-content-length",
    run: runner(client.layer(http)),
    start: async (setup = {}) => {
      const faults: Array<StdioFault> = (setup.faults ?? []).map((sited) => stdioFault(sited) ?? refuse(sited.fault.kind))
      if (setup.stubbornRelease === true) faults.push({ kind: "ignore-sigterm" })
      const envDir = setup.canaries === true ? mkdtempSync(join(tmpdir(), "phasebound-contract-env-")) : undefined
      const envFile = envDir === undefined ? undefined : join(envDir, "env.json")
      const fixture = makeStdioFixture({
        era,
        faults,
        ...(envFile === undefined ? {} : { envReport: { file: envFile, names: Object.keys(CANARY_ENV) } })
      })
      const env = setup.canaries === true ? { ...fixture.env, ...CANARY_ENV } : fixture.env
      const waitFor = waitUntil
      const command = { command: fixture.command, args: fixture.args, env }
      return {
        row,
        target: [fixture.command, ...fixture.args].join(" "),
        endpoint: { kind: "stdio", ...command },
        connect: (policy) => client.connectStdio({ ...command, policy }),
        connectPromise: (options = {}) => client.connectPromise({ stdio: command, ...options }),
        counter: fixture.counter,
        calls: fixture.rpcCalls,
        abandoned: () => fixture.rpcCalls("notifications/cancelled"),
        unansweredClosed: () => 0,
        releaseSign: "the child gone",
        released: (timeoutMs) => waitFor(() => fixture.pid() !== undefined && !fixture.isAlive(), "the child gone", timeoutMs),
        receivedSecrets: () => envFile === undefined ? [] : reportedCanaries(envFile),
        waitFor,
        close: async () => {
          fixture.cleanup()
          if (envDir !== undefined) rmSync(envDir, { recursive: true, force: true })
        }
      }
    }
  }
  return row
}

/** Every row of the table, over every HTTP client the runner offers. */
export const rows = <R>(client: ClientUnderTest<R>): ReadonlyArray<Row<R>> => {
  const [firstHttp] = client.httpClients
  if (firstHttp === undefined) throw new Error("the client under test offers no HTTP client")
  return [
    ...client.httpClients.flatMap((http) => [
      streamableRow(client, "json", "handshake", http),
      streamableRow(client, "sse", "handshake", http),
      streamableRow(client, "json", "stateless", http),
      streamableRow(client, "sse", "stateless", http),
      legacyRow(client, http)
    ]),
    stdioRow(client, "handshake", firstHttp),
    stdioRow(client, "stateless", firstHttp)
  ]
}

/** Starts a peer for the length of a program; the server is closed with the program's scope. */
export const peer = <R>(row: Row<R>, setup?: PeerSetup): Effect.Effect<Peer<R>, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => row.start(setup)), (p) => Effect.promise(() => p.close()))
