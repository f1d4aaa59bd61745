/**
 * The phasebound qualification program, run by `node qualify.mjs` and `bun qualify.mjs` inside a
 * fresh project where the packed packages were installed (src/run.ts bundles this file with
 * esbuild, every package import left external, so what runs is the installed tarballs). It
 * imports public entry points only: @phasebound/client, @phasebound/client/promise,
 * @phasebound/testkit, @phasebound/testkit/contract, effect, @effect/platform and
 * @effect/platform-node.
 *
 * It proves what only the packed build and the runtime can get wrong; the behaviour itself is the
 * Vitest suite's (docs/DESIGN.md, "The contract suite"). Two parts:
 *
 * - The contract suite (`contractScenarios`, last), at the coverage of the runtime: under Node
 *   "witness" (every family once on every server row, the HTTP clients rotating: the packed build
 *   runs every family and every transport; Vitest runs the whole matrix on the sources under
 *   Node), under Bun "runtime" (the families whose outcome depends on the runtime get their
 *   whole matrix over Bun's rows: Vitest never runs under Bun).
 * - The scenarios before it, which cover what no family does: a smoke run of each entry point
 *   (Effect over each HTTP layer and stdio, Promise API) in both eras; negotiation; handlers; the
 *   2026-07-28 wire; and the decisions with a peer of their own (URL userinfo, an invalid option,
 *   a foreign legacy endpoint, a 307 to another origin, a spawn failure, an initialize never
 *   answered, a legacy endpoint never sent, one DELETE when closed twice, an already-aborted
 *   signal). The scenarios the Vitest suite runs as they are, on the sources under Node through
 *   both of Node's HTTP clients, run here under Bun only (`bunOnly`).
 *
 * "Nothing happened" is never proved by sleeping: every HTTP scenario's client runs on a
 * recording HTTP client (`Wire`: each request the client executes, with its JSON-RPC method),
 * and absence is read at a point the client orders after the thing that must not happen: its
 * connect failed (its scope closed), or the connection holds no pending request and no fiber.
 * A stdio child is checked gone ONCE, right after its connection's scope closed (or its connect
 * failed): the client awaits the child's exit before returning.
 *
 * Each scenario records pass/fail with a short detail. At the end the program prints a table and
 * the testkit's report line (`formatReport`, decoded by src/run.ts with `readReport`). It never
 * calls process.exit: that it exits by itself (no handle left open) is checked from outside. It
 * sets process.exitCode on failure.
 */
import { FetchHttpClient, HttpClient } from "@effect/platform"
import type { CommandExecutor, HttpBody } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Authorization, McpClient } from "@phasebound/client"
import { connect } from "@phasebound/client/promise"
import * as Testkit from "@phasebound/testkit"
import * as Contract from "@phasebound/testkit/contract"
import { Cause, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { CheckFailed, check, fail, runScenario } from "./harness.js"

const bunVersion = (globalThis as { readonly Bun?: { readonly version: string } }).Bun?.version
const runtime: "node" | "bun" = bunVersion === undefined ? "node" : "bun"

/** The tolerance for "a discovery stage that never ends fails at its deadline". */
const DEADLINE_MS = 500
const DEADLINE_MIN_MS = 450
const DEADLINE_MAX_MS = 1_500
/** The same over stdio, where the measure includes the child's start-up and awaited exit. */
const STDIO_DEADLINE_MAX_MS = 5_000

const { CANARIES, FORBIDDEN, withCanaries, withoutPublicVocabulary } = Contract

// --- harness -----------------------------------------------------------------------------------

const results: Array<Testkit.CheckResult> = []
/**
 * The stdio children the scenarios spawned, by pid: each with its start time (Testkit's process
 * identity), so that the runner's check that none outlives the program, made minutes later,
 * never takes a process that was given the same pid since for one of them.
 */
const children = new Map<number, Testkit.ProcessIdentity>()
const noteChild = (f: Testkit.StdioFixture) => {
  const identity = f.identity()
  if (identity !== undefined) children.set(identity.pid, identity)
}

/** A typed error of the client, as its public fields are read here. */
type Failed = { readonly _tag: string; readonly [field: string]: any }

/** A one-line, secret-free description of anything thrown (public fields only for our errors). */
const describe = (error: unknown): string => {
  if (error instanceof CheckFailed) return error.message
  if (error !== null && typeof error === "object" && typeof (error as Failed)._tag === "string") return summarize(error as Failed)
  const message = error instanceof Error ? error.message : String(error)
  return `unexpected: ${(message.split("\n")[0] ?? "").slice(0, 300)}`
}

const summarize = (e: Failed): string =>
  [
    e._tag,
    e.stage && `stage=${e.stage}`,
    e.phase && `phase=${e.phase}`,
    e.reason && `reason=${e.reason}`,
    e.status !== undefined && `status=${e.status}`,
    e.observedBytes !== undefined && `observed=${e.observedBytes}`,
    e.limits && `limits=${e.limits.timeoutMs}ms/${e.limits.maxBytes}B`,
    e.outcome && `outcome=${e.outcome}`
  ].filter(Boolean).join(" ")

const scenario = async (name: string, body: () => unknown, timeoutMs = 20_000): Promise<void> => {
  results.push(await runScenario(name, body, timeoutMs, describe))
}

/** A subset match: every field of `expected` (deeply) equals the one in `actual`. */
const mismatch = (actual: unknown, expected: object, path = ""): string | undefined => {
  for (const [key, value] of Object.entries(expected)) {
    const here = (actual as Record<string, unknown> | undefined)?.[key]
    if (value !== null && typeof value === "object") {
      const inner = mismatch(here, value as object, `${path}${key}.`)
      if (inner !== undefined) return inner
    } else if (here !== value) {
      return `${path}${key}=${JSON.stringify(here)} (expected ${JSON.stringify(value)})`
    }
  }
  return undefined
}
const expectError = (error: Failed, expected: object): void => {
  const wrong = mismatch(error, expected)
  if (wrong !== undefined) fail(`${summarize(error)}: ${wrong}`)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
/** Polls until `predicate` holds (a sync point: an event that must come); fails with `what` after `timeoutMs`. */
const until = async (predicate: () => boolean, what: string, timeoutMs = 5_000): Promise<void> => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) fail(`not within ${timeoutMs} ms: ${what}`)
    await sleep(5)
  }
}
const untilE = (predicate: () => boolean, what: string, timeoutMs?: number) => Effect.promise(() => until(predicate, what, timeoutMs))

/** Runs an effect that must fail with a typed error; returns it with the time it took. */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<{ error: Failed; ms: number }, never, R> =>
  Effect.gen(function*() {
    const started = Date.now()
    const exit = yield* Effect.exit(effect)
    const ms = Date.now() - started
    if (Exit.isSuccess(exit)) return fail("succeeded where a failure was expected")
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "None") {
      return fail(Cause.isInterruptedOnly(exit.cause) ? "interrupted, expected a typed failure" : "a defect, expected a typed failure")
    }
    return { error: failure.value as Failed, ms }
  })

/** The connection holds nothing after a failure: no pending request, no background fiber. */
const released = (connection: { readonly diagnostics: Effect.Effect<{ readonly pending: number; readonly background: number }> }) =>
  Effect.promise(async () => {
    let last: { readonly pending: number; readonly background: number } | undefined
    await until(() => {
      last = Effect.runSync(connection.diagnostics)
      return last.pending === 0 && last.background === 0
    }, "the connection released its pending requests and fibers").catch(() => fail(`still holding ${JSON.stringify(last)}`))
  })

/** A scope that closes with the scenario at the latest, and may be closed earlier. */
const childScope = Effect.gen(function*() {
  const scope = yield* Scope.make()
  yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
  return scope
})

/** A Promise-API server for one scenario, closed after it. */
const withServer = async <S extends { close(): Promise<void> }, A>(start: () => Promise<S>, body: (srv: S) => Promise<A>): Promise<A> => {
  const srv = await start()
  try {
    return await body(srv)
  } finally {
    await srv.close()
  }
}
/** Awaits a promise that must reject; returns the rejection with the time it took. */
const rejection = async (promise: Promise<unknown>): Promise<{ error: Failed; ms: number }> => {
  const started = Date.now()
  try {
    await promise
  } catch (error) {
    return { error: error as Failed, ms: Date.now() - started }
  }
  return fail("resolved where a rejection was expected")
}

const inRange = (ms: number, min: number, max: number, what: string) => check(ms >= min && ms <= max, `${what} after ${ms} ms, outside [${min}, ${max}] ms`)

// --- the wire as the client sent it ------------------------------------------------------------

/** One request the client executed through its HTTP client: where, and its JSON-RPC method if any. */
interface SentRequest {
  readonly url: string
  readonly rpcMethod: string | undefined
}
/**
 * The requests a client executed, recorded by its HTTP client as each is executed (before any
 * byte is on the wire). Read once the client can send nothing more (its connect failed, or its
 * connection holds no pending request and no fiber), it is every request there will ever be:
 * what the server has not received by then is not on its way.
 */
interface Wire {
  readonly sent: ReadonlyArray<SentRequest>
  readonly layer: Layer.Layer<HttpClient.HttpClient>
  /** How many requests of `method` the client executed. */
  readonly count: (method: string) => number
  /** How many requests the client executed to `port` (127.0.0.1). */
  readonly toPort: (port: number) => number
}
const rpcMethodOf = (body: HttpBody.HttpBody): string | undefined => {
  if (body._tag !== "Uint8Array") return undefined
  try {
    const json: unknown = JSON.parse(new TextDecoder().decode(body.body))
    const method = (json as { method?: unknown } | null)?.method
    return typeof method === "string" ? method : undefined
  } catch {
    return undefined
  }
}
const recordingWire = (base: Layer.Layer<HttpClient.HttpClient>): Wire => {
  const sent: Array<SentRequest> = []
  const layer = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(
      HttpClient.HttpClient,
      (client) => HttpClient.tapRequest(client, (request) => Effect.sync(() => sent.push({ url: request.url, rpcMethod: rpcMethodOf(request.body) })))
    )
  ).pipe(Layer.provide(base))
  return {
    sent,
    layer,
    count: (method) => sent.filter((r) => r.rpcMethod === method).length,
    toPort: (port) => sent.filter((r) => new URL(r.url).port === String(port)).length
  }
}

// --- platforms ---------------------------------------------------------------------------------

// Under Bun, undici is a stub: its HTTP transports run through fetch and node:http instead.
const httpLayers: ReadonlyArray<readonly [string, Layer.Layer<HttpClient.HttpClient>]> = runtime === "node"
  ? [["fetch", FetchHttpClient.layer], ["undici", NodeHttpClient.layerUndici]]
  : [["fetch", FetchHttpClient.layer], ["node:http", NodeHttpClient.layer]]
const stdioPlatform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)
const httpLayerNamed = (name: string): Layer.Layer<HttpClient.HttpClient> => {
  const found = httpLayers.find(([label]) => label === name)
  if (found === undefined) throw new Error(`no HTTP client layer named ${name}`)
  return found[1]
}

/** The packed client as the contract suite's client under test (see @phasebound/testkit/contract). */
const clientUnderTest = {
  httpClients: httpLayers.map(([label]) => label),
  layer: (http: string) => Layer.merge(httpLayerNamed(http), stdioPlatform),
  connectHttp: (target: Contract.HttpTarget) => McpClient.connect(target),
  connectStdio: (target: Contract.StdioTarget) => McpClient.connectStdio(target),
  connectPromise: (target: Parameters<Contract.ClientUnderTest<never>["connectPromise"]>[0]) =>
    "stdio" in target
      ? connect({ stdio: target.stdio, policy: target.policy, signal: target.signal })
      : connect({ ...target, httpClient: httpLayerNamed(target.httpClient) })
} satisfies Contract.ClientUnderTest<HttpClient.HttpClient | CommandExecutor.CommandExecutor>

/**
 * The contract suite at this runtime's coverage: under Node a witness of every family on every
 * server row (the Vitest suite runs the whole matrix on the sources under Node), under Bun the
 * runtime-dependent families' whole matrix over Bun's rows (nothing else runs them under Bun).
 */
const CONTRACT_COVERAGE = runtime === "node" ? "witness" : "runtime"
/** Every selected contract case, `CONTRACT_CONCURRENCY` at a time (each case has its own server). */
const CONTRACT_CONCURRENCY = 6
const contractScenarios = async () => {
  const queue = [...Contract.contractSuite(clientUnderTest, { coverage: CONTRACT_COVERAGE })]
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const c = next
      await scenario(`contract[${c.family}] ${c.row}: ${c.name}`, () => c.run(), c.timeoutMs + 5_000)
    }
  }
  await Promise.all(Array.from({ length: CONTRACT_CONCURRENCY }, worker))
}

/** The scenario's platform: a recording HTTP client over `base` (see Wire), and stdio's. */
type Platform = HttpClient.HttpClient | Layer.Layer.Success<typeof stdioPlatform>

/** Runs an Effect scenario in its own scope on a recording HTTP client; a failed check (a defect) is reported as itself. */
const effectScenario = <A>(
  name: string,
  base: Layer.Layer<HttpClient.HttpClient>,
  body: (wire: Wire) => Effect.Effect<A, unknown, Platform | Scope.Scope>,
  timeoutMs?: number
) =>
  scenario(name, async () => {
    const wire = recordingWire(base)
    const exit = await Effect.runPromiseExit(Effect.scoped(body(wire)).pipe(Effect.provide(Layer.merge(wire.layer, stdioPlatform))))
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.isInterruptedOnly(exit.cause) ? new CheckFailed("interrupted") : Cause.squash(exit.cause)
  }, timeoutMs)

/**
 * The scenarios the Vitest suite runs as they are (same faults, same checks) on the sources under
 * Node through fetch and undici: here under Bun only, where nothing else runs them. The report
 * of the qualification lists each with the Vitest test that proves it under Node.
 */
const bunOnly = runtime === "bun"

/** A stdio fixture whose child is checked dead when the scenario's connection is gone, then cleaned. */
const stdioFixture = (options?: Testkit.StdioFixtureOptions) =>
  Effect.acquireRelease(
    Effect.sync(() => Testkit.makeStdioFixture(options)),
    (f) =>
      Effect.sync(() => {
        noteChild(f)
        f.cleanup()
      })
  )
const connectStdio = (f: Testkit.StdioFixture, policy?: McpClient.ConnectOptions["policy"]) =>
  McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, policy })
/**
 * Closes `scope` (the connection) and checks ONCE that the child is gone: the close returns only
 * after the client has awaited the child's exit (stdin closed, SIGTERM, SIGKILL, reaped), so a
 * build that returned earlier fails here, and no polling window is needed on a loaded machine.
 */
const closeAndCheckChild = (scope: Scope.CloseableScope, f: Testkit.StdioFixture) =>
  Effect.gen(function*() {
    noteChild(f)
    yield* Scope.close(scope, Exit.void)
    check(!f.isAlive(), "the stdio child is still alive after its connection's scope closed")
  })
/** After a failed connect: the client closed the connection's scope (the child awaited) before failing. */
const checkChildGoneAfterFailure = (f: Testkit.StdioFixture) =>
  Effect.sync(() => {
    noteChild(f)
    check(!f.isAlive(), "the stdio child is still alive after its connect failed")
  })

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => result.content.map((c) => (c as { text?: string }).text ?? "").join("")

// --- scenarios: Streamable HTTP and legacy SSE, through each HTTP client layer ------------------

type EffectBody<A> = (wire: Wire) => Effect.Effect<A, unknown, Platform | Scope.Scope>

const httpScenarios = async (label: string, layer: Layer.Layer<HttpClient.HttpClient>) => {
  const E = <A>(name: string, body: EffectBody<A>, timeoutMs?: number) => effectScenario(`Effect[${label}] ${name}`, layer, body, timeoutMs)

  await E("smoke: Streamable HTTP discovers and calls; isError is a result", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url })
      check(c.transport === "streamable-http", `transport ${c.transport}`)
      check(c.tools.map((t) => t.name).join() === "add,echo,increment", "tools")
      check(textOf(yield* c.callTool("add", { a: 20, b: 22 })) === "42", "add")
      check((yield* c.callTool("add", { a: "x", b: 1 })).isError === true, "isError result")
      return `${c.protocolVersion}`
    }))

  // Decisions with a peer of their own (docs/GUIDE.md "Decisions").
  await E("credentials: URL userinfo becomes Basic authorization, never sent in the URL", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      yield* McpClient.connect({ url: withCanaries(srv.url) })
      const first = srv.requests[0]
      if (first === undefined) return fail("no request arrived")
      const expected = `Basic ${btoa(`${CANARIES.user}:${CANARIES.password}`)}`
      check(first.headers["authorization"] === expected, "Basic header")
      check(!srv.requests.some((r) => r.url.includes(CANARIES.password) || r.url.includes(CANARIES.user)), "userinfo in a URL")
    }))
  await E("credentials: an invalid option (header injection) names the option, never its value", () =>
    Effect.gen(function*() {
      const { error } = yield* failureOf(Effect.scoped(McpClient.connect({
        url: withCanaries("http://127.0.0.1:9/mcp"),
        headers: { authorization: `${CANARIES.header}\r\nInjected: yes` }
      })))
      expectError(error, { _tag: "InvalidOption", option: "headers", stage: "config", outcome: "not-sent" })
      expectClean(error)
    }))
  for (const transport of ["sse", "auto"] as const) {
    await E(`credentials: a foreign legacy endpoint (${transport}) fails; nothing sent to the foreign origin`, (wire) =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scopedLegacy()
        const foreign = yield* Testkit.scoped()
        srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
        // The connect's own scope: closed when it fails, so the client can send nothing after.
        const { error } = yield* failureOf(Effect.scoped(McpClient.connect({
          url: withCanaries(srv.url),
          transport,
          headers: { authorization: `Bearer ${CANARIES.header}` }
        })))
        expectError(error, { _tag: "ProtocolViolation", stage: "endpoint", reason: "foreign-endpoint", outcome: "not-sent" })
        expectClean(error)
        check(
          wire.sent.length > 0 && wire.toPort(foreign.port) === 0,
          `${wire.toPort(foreign.port)} of ${wire.sent.length} requests went to the foreign origin`
        )
        check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the foreign origin`)
        yield* untilE(() => srv.closedStreams() === 1, "the GET stream is closed by the client")
      }))
  }
  // Discovery stages before tools/list (the contract's faults are at tools/list and tools/call).
  await E(`missing: initialize never answered: discovery fails at its ${DEADLINE_MS} ms deadline, never cancelled`, (wire) =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      srv.script({ on: "initialize", kind: "headers-never-sent" })
      // The connect's own scope: closed when it fails, so a notice could only have been sent before.
      const { error, ms } = yield* failureOf(Effect.scoped(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: DEADLINE_MS } } })))
      expectError(error, { _tag: "DeadlineExceeded", stage: "initialize", phase: "discovery", limits: { timeoutMs: DEADLINE_MS } })
      inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(wire.count("initialize") === 1 && wire.count("notifications/cancelled") === 0, `sent: ${wire.sent.map((r) => r.rpcMethod ?? "-").join()}`)
      check(srv.rpcCalls("notifications/cancelled") === 0, "initialize was cancelled")
      return `${ms} ms`
    }))
  await E(`missing: a legacy endpoint never sent: discovery fails at its ${DEADLINE_MS} ms deadline`, () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      srv.script({ kind: "endpoint-never-sent" })
      const { error, ms } = yield* failureOf(McpClient.connect({ url: srv.url, transport: "sse", policy: { discovery: { timeout: DEADLINE_MS } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "endpoint", outcome: "not-sent" })
      inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
      yield* untilE(() => srv.closedStreams() === 1, "the GET stream is closed by the client")
      return `${ms} ms`
    }))
  // A session that expired: the call is not re-sent; the next call runs on a new session. Under
  // Node: transport/sessions-heal.test.ts, through fetch and undici.
  if (bunOnly) {
    await E("session expiry: SessionExpired (retryable), the call not re-sent; the next call on a new session, once", (wire) =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped()
        const c = yield* McpClient.connect({ url: srv.url })
        srv.expireSession()
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: "SessionExpired", outcome: "not-applied", retryable: true })
        yield* released(c)
        check(wire.count("tools/call") === 1, `${wire.count("tools/call")} tools/call sent for one call`)
        check(srv.counter() === 0, "the expired session ran the tool")
        // The next call is sent after the first one's failure: once its answer is here, a re-send
        // of the first would have been counted (initialize, then this one call).
        check(textOf(yield* c.callTool("increment")) === "1", "the next call")
        check(srv.rpcCalls("tools/call") === 2 && srv.counter() === 1, `tools/call ${srv.rpcCalls("tools/call")}, counter ${srv.counter()}`)
        check(srv.rpcCalls("initialize") === 2 && (yield* c.sessions) === 2, `initialize ${srv.rpcCalls("initialize")}`)
      }))
  }
  // Negotiation: after a failure on the legacy fallback (auto), nothing is re-sent over Streamable HTTP.
  // Under Node: transport/legacy-sse.test.ts, "no replay on any transport", through fetch and undici.
  if (!bunOnly) return
  const legacyReplay = [
    ["a deadline", { kind: "no-response" }, "DeadlineExceeded"],
    ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
    ["a 500 on the POST", { kind: "post-status", status: 500 }, "UpstreamFailure"],
    ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, "RemoteRefusal"],
    ["a closed stream", { kind: "close-stream" }, "TransportFailure"]
  ] as const
  for (const [name, fault, tag] of legacyReplay) {
    await E(`negotiation: legacy (auto fallback) after ${name} (${tag}): called once, never re-sent over Streamable HTTP`, (wire) =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scopedLegacy()
        // A short deadline only where the deadline is the failure; elsewhere only the fault may end the call.
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: tag === "DeadlineExceeded" ? 300 : 20_000, maxBytes: 1_000 } } })
        check(c.transport === "sse", `transport ${c.transport}`)
        srv.script({ on: "tools/call", ...fault })
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        // Nothing pending, no fiber: the connection sends nothing more; the wire is complete.
        yield* released(c)
        check(wire.count("tools/call") === 1, `${wire.count("tools/call")} tools/call sent for one call`)
        check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
        // The only POSTs to the SSE URL are the negotiation's two probes (stateless, handshake).
        const probes = srv.requests.filter((r) => r.method === "POST" && r.url === "/sse").map((r) => r.rpcMethod)
        check(probes.join(",") === "server/discover,initialize", `re-sent over Streamable HTTP: ${probes.join(",")}`)
      }))
  }
}

// --- scenarios: the stateless era (2026-07-28) over Streamable HTTP, through each HTTP client layer --

const STATELESS = Testkit.MODERN_PROTOCOL_VERSION
/** What a handshake-era testkit server answers initialize with, for a client that asks the latest. */
const HANDSHAKE_LATEST = "2025-11-25"
/** A server of the stateless era only: no initialize, no session, no GET stream, no DELETE. */
const statelessServer = (options: Testkit.TestServerOptions = {}) => Testkit.scoped({ era: "stateless", ...options })

/** A request of the stateless era as it must arrive: `_meta` with the revision, the metadata headers, no session. */
const expectStatelessWire = (request: Testkit.RecordedHttpRequest) => {
  const method = request.rpcMethod
  const meta = request.meta ?? {}
  check(meta[Testkit.META_PROTOCOL_VERSION] === STATELESS, `${method}: _meta revision ${JSON.stringify(meta[Testkit.META_PROTOCOL_VERSION])}`)
  check(typeof meta[Testkit.META_CLIENT_CAPABILITIES] === "object", `${method}: no _meta clientCapabilities`)
  check(request.headers["mcp-protocol-version"] === STATELESS, `${method}: MCP-Protocol-Version ${request.headers["mcp-protocol-version"]}`)
  check(request.headers["mcp-method"] === method, `${method}: Mcp-Method ${request.headers["mcp-method"]}`)
  check(request.headers["mcp-session-id"] === undefined, `${method}: a session id was sent`)
}
/**
 * Over HTTP the stateless era cancels by closing the answer stream: no notice may follow it. Read
 * once the client can send nothing more (its caller made sure: released, or its connect's scope
 * closed), the wire holds every notice there will be.
 */
const noCancelNotice = (srv: Testkit.TestServer, wire: Wire) =>
  Effect.sync(() => {
    check(wire.count("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP in the stateless era")
    check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled reached the server over HTTP in the stateless era")
  })
/** The discovery's stages as `stage:era:outcome`. */
const stagesOf = (connection: McpClient.Connection) => connection.discovery.map((s) => `${s.stage}:${s.attempt?.era ?? "-"}:${s.outcome}`).join(",")
/** No canary in what the stateless era adds to a request (`_meta`, `Mcp-*` headers): they mirror the method and arguments only. */
const expectCleanMetadata = (srv: Testkit.TestServer) => {
  for (const r of srv.requests) {
    const added = JSON.stringify([r.meta ?? {}, Object.entries(r.headers).filter(([name]) => name.startsWith("mcp-"))])
    check(!Object.values(CANARIES).some((canary) => added.includes(canary)), `${r.rpcMethod}: a canary in _meta or an Mcp-* header`)
  }
}

/** A loopback origin that answers every request with a 307 to `location`, counting what reaches it. */
const redirectingServer = (location: string) =>
  Effect.acquireRelease(
    Effect.async<{ server: ReturnType<typeof createServer>; url: string; hits: () => number }>((resume) => {
      let hits = 0
      const server = createServer((req, res) => {
        hits += 1
        req.resume()
        res.writeHead(307, { location, "content-type": "text/plain" })
        res.end("moved")
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
          hits: () => hits
        })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections?.()
        server.close(() => resume(Effect.void))
      })
  )

const statelessHttpScenarios = async (label: string, layer: Layer.Layer<HttpClient.HttpClient>) => {
  const E = <A>(name: string, body: EffectBody<A>, timeoutMs?: number) => effectScenario(`Effect[${label}] 2026 ${name}`, layer, body, timeoutMs)

  await E(
    "smoke: server/discover then tools/list, no initialize, no session, no GET, no DELETE; _meta and Mcp-* headers on every request",
    () =>
      Effect.gen(function*() {
        const srv = yield* statelessServer()
        const scope = yield* childScope
        const c = yield* McpClient.connect({ url: srv.url }).pipe(Scope.extend(scope))
        check(c.protocolVersion === STATELESS && c.transport === "streamable-http", `${c.protocolVersion} over ${c.transport}`)
        check(stagesOf(c) === "discover:stateless:ok,list-tools:stateless:ok", `stages ${stagesOf(c)}`)
        check(c.tools.some((t) => t.name === "region_query"), "region_query listed")
        check(textOf(yield* c.callTool("region_query", { region: "eu-west", query: "q" })) === "eu-west:q", "region_query")
        check(textOf(yield* c.callTool("increment")) === "1", "increment")
        yield* Scope.close(scope, Exit.void)
        check(srv.rpcCalls("initialize") === 0, "initialize was sent")
        check(
          srv.requests.every((r) => r.method === "POST"),
          `non-POST requests: ${srv.requests.filter((r) => r.method !== "POST").map((r) => r.method).join()}`
        )
        for (const r of srv.requests) expectStatelessWire(r)
        const region = srv.requests.find((r) => (r.json as { params?: { name?: string } } | undefined)?.params?.name === "region_query")
        if (region === undefined) return fail("no region_query call")
        check(region.headers["mcp-name"] === "region_query", `Mcp-Name ${region.headers["mcp-name"]}`)
        check(region.headers["mcp-param-region"] === "eu-west", `Mcp-Param-Region ${region.headers["mcp-param-region"]}`)
        return `${srv.requests.length} POSTs`
      })
  )

  // Negotiation under the one discovery deadline.
  await E("negotiation: default revisions against a handshake-era server: server/discover refused, then initialize: 2025-11-25", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url })
      check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
      check(
        srv.rpcCalls("server/discover") === 1 && srv.rpcCalls("initialize") === 1,
        `discover ${srv.rpcCalls("server/discover")}, initialize ${srv.rpcCalls("initialize")}`
      )
      check(/^discover:stateless:RemoteRefusal,initialize:handshake:ok,/.test(stagesOf(c)), `stages ${stagesOf(c)}`)
      check(textOf(yield* c.callTool("increment")) === "1", "increment")
      return stagesOf(c)
    }))
  await E("negotiation: revisions [2026-07-28] against a handshake-era server fails at stage discover; initialize never sent", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, revisions: [STATELESS] }))
      expectError(error, { _tag: "RemoteRefusal", stage: "discover", phase: "discovery" })
      check(srv.rpcCalls("initialize") === 0 && srv.requests.length === 1, `${srv.requests.length} requests, initialize ${srv.rpcCalls("initialize")}`)
      return summarize(error)
    }))
  await E("negotiation: a dual server speaks 2026-07-28 by default; revisions [2025-11-25] use initialize without a probe", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ era: "dual" })
      const modern = yield* McpClient.connect({ url: srv.url })
      check(modern.protocolVersion === STATELESS, `default: ${modern.protocolVersion}`)
      check(srv.rpcCalls("initialize") === 0, "initialize sent by default")
      const old = yield* McpClient.connect({ url: srv.url, revisions: [HANDSHAKE_LATEST] })
      check(old.protocolVersion === HANDSHAKE_LATEST, `[2025-11-25]: ${old.protocolVersion}`)
      check(
        srv.rpcCalls("server/discover") === 1 && srv.rpcCalls("initialize") === 1,
        `discover ${srv.rpcCalls("server/discover")}, initialize ${srv.rpcCalls("initialize")}`
      )
    }))

  // A deadline during the probe ends the discovery: it never falls back to the handshake.
  await E("negotiation: a stalled server/discover fails discovery at its 300 ms deadline; no fallback", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      srv.script({ on: "server/discover", kind: "delay", ms: 2_000 })
      const { error, ms } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "discover", phase: "discovery", limits: { timeoutMs: 300 } })
      inRange(ms, 250, 1_300, "discovery deadline")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees server/discover closed")
      check(srv.requests.length === 1, `${srv.requests.length} requests (a deadline never falls back)`)
      return `${ms} ms`
    }))

  // The era's rule over HTTP: a request given up is cancelled by closing its answer stream, never
  // by a notice (the contract's families check that the stream is closed).
  await E(
    "cancellation: an interrupted call and a call past its deadline close their streams; no notifications/cancelled over HTTP",
    (wire) =>
      Effect.gen(function*() {
        const srv = yield* statelessServer()
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 10_000 } } })
        srv.script({ on: "tools/call", kind: "headers-never-sent", times: 2 })
        const fiber = yield* Effect.fork(c.callTool("increment"))
        yield* untilE(() => srv.rpcCalls("tools/call") === 1, "the first call arrived")
        const exit = yield* Fiber.interrupt(fiber)
        check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "the interrupted call: not an interruption only")
        yield* untilE(() => srv.abortedResponses() === 1, "the server sees the interrupted call closed")
        const { error } = yield* failureOf(c.callTool("increment", {}, { timeout: 300 }))
        expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", outcome: "unknown" })
        yield* untilE(() => srv.abortedResponses() === 2, "the server sees the call past its deadline closed")
        yield* released(c)
        yield* noCancelNotice(srv, wire)
        check(textOf(yield* c.callTool("increment")) === "3", "the next call works")
      })
  )
  await E("abort: Effect interruption during server/discover is an interruption; the request is closed, nothing else sent", (wire) =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      srv.script({ on: "server/discover", kind: "headers-never-sent" })
      const fiber = yield* Effect.fork(Effect.scoped(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 10_000 } } })))
      yield* untilE(() => srv.rpcCalls("server/discover") === 1, "server/discover arrived")
      const exit = yield* Fiber.interrupt(fiber)
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      // The interrupted connect's scope is closed: the wire is complete.
      yield* noCancelNotice(srv, wire)
      check(wire.sent.length === 1 && srv.requests.length === 1, `${wire.sent.length} requests sent, ${srv.requests.length} received`)
    }))

  // Credential fences.

  // Decisions with a peer of their own, and no secret in what the era adds to a request.
  await E("credentials: URL userinfo becomes Basic authorization on every request, never sent in the URL", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      const c = yield* McpClient.connect({ url: withCanaries(srv.url), headers: { "X-Api-Key": CANARIES.header } })
      yield* c.callTool("increment")
      const expected = `Basic ${btoa(`${CANARIES.user}:${CANARIES.password}`)}`
      check(srv.requests.every((r) => r.headers["authorization"] === expected), "Basic header on every request")
      check(!srv.requests.some((r) => r.url.includes(CANARIES.password) || r.url.includes(CANARIES.user)), "userinfo in a URL")
      expectCleanMetadata(srv)
    }))
  await E("credentials: a server/discover refusal echoing the secrets (revisions [2026-07-28]) is redacted", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      srv.script({ on: "server/discover", kind: "jsonrpc-error", code: -32600, message: `token ${CANARIES.query} and ${CANARIES.header} rejected` })
      const { error } = yield* failureOf(McpClient.connect({ url: withCanaries(srv.url), headers: { authorization: CANARIES.header }, revisions: [STATELESS] }))
      expectError(error, { _tag: "RemoteRefusal", stage: "discover" })
      expectClean(error)
      check(error.remoteMessage.includes("[redacted]"), "redacted marker")
      return error.remoteMessage
    }))
  await E("credentials: a 307 to another origin is not followed; nothing reaches it", (wire) =>
    Effect.gen(function*() {
      const foreign = yield* statelessServer()
      const origin = yield* redirectingServer(foreign.url)
      const { error } = yield* failureOf(
        Effect.scoped(McpClient.connect({ url: withCanaries(origin.url), headers: { authorization: `Bearer ${CANARIES.header}` } }))
      )
      // The client saw the 307 itself: an HTTP client that had followed it would have answered
      // with the other origin's response. And its connect's scope is closed: the wire is complete.
      expectError(error, { _tag: "UpstreamFailure", stage: "discover", status: 307 })
      expectClean(error)
      check(wire.sent.length === 1 && wire.toPort(foreign.port) === 0, `sent ${wire.sent.map((r) => r.url).join(", ")}`)
      check(origin.hits() === 1, `${origin.hits()} requests to the configured origin`)
      check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the other origin`)
      return summarize(error)
    }))

  // Client capabilities: an input_required round answered by the caller's handler.
  await E(
    "handlers: ask_name's input_required round is answered by the elicitation handler (a new request, requestState echoed)",
    () =>
      Effect.gen(function*() {
        const srv = yield* statelessServer()
        const asked: Array<unknown> = []
        const c = yield* McpClient.connect({
          url: srv.url,
          handlers: {
            elicitation: (params) =>
              Effect.sync(() => {
                asked.push(params)
                return { action: "accept", content: { name: "qualifier" } }
              })
          }
        })
        check(textOf(yield* c.callTool("ask_name")) === "hello qualifier", "the greeting")
        const calls = srv.requests.filter((r) => r.rpcMethod === "tools/call") as unknown as ReadonlyArray<Failed>
        const [firstRound, secondRound] = calls
        check(
          calls.length === 2 && srv.inputRounds() === 1 && asked.length === 1,
          `${calls.length} tools/call, ${srv.inputRounds()} rounds, ${asked.length} asked`
        )
        if (firstRound === undefined || secondRound === undefined) return fail("two rounds expected")
        check(firstRound.rpcId !== secondRound.rpcId, "the second round reused the id")
        check(typeof secondRound.json.params.requestState === "string", "requestState not echoed")
        check(typeof firstRound.meta[Testkit.META_CLIENT_CAPABILITIES].elicitation === "object", "elicitation not declared in _meta")
      })
  )

  // Failures of the era's own (the contract's no-replay family covers the shared faults): a
  // -32022, an unknown resultType or an input_required round without a handler is never an
  // occasion to send the call again or to negotiate anew. What the era does after a failure does
  // not depend on the HTTP client: the first layer only, to keep the run short. Under Node:
  // transport/stateless-http.test.ts ("no replay" for the -32022, "resultType", and "an input
  // request for an undeclared capability"), through fetch and undici.
  if (!bunOnly || label !== httpLayers[0]?.[0]) return
  const eraFailures = [
    ["negotiation", "a call refused with -32022 naming another revision", { kind: "unsupported-version", supported: [HANDSHAKE_LATEST] }, {
      _tag: "RemoteRefusal",
      code: -32022
    }],
    ["results", "a call answered with an unknown resultType", { kind: "result-type", value: "bogus" }, {
      _tag: "ProtocolViolation",
      reason: "unknown-result-type"
    }],
    ["handlers", "input_required without a handler", { kind: "input-required" }, { _tag: "ProtocolViolation", reason: "undeclared-capability" }]
  ] as const
  for (const [topic, name, fault, expected] of eraFailures) {
    await E(
      `${topic}: ${name} (${expected._tag}${"reason" in expected ? ` ${expected.reason}` : ""}): called once, not re-sent, no new discovery`,
      (wire) =>
        Effect.gen(function*() {
          const srv = yield* statelessServer()
          const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 20_000, maxBytes: 1_000 } } })
          srv.script({ on: "tools/call", ...fault })
          const { error } = yield* failureOf(c.callTool("increment"))
          expectError(error, expected)
          check(error.retryable === false, "retryable")
          // Nothing pending, no fiber: the connection sends nothing more; the wire is complete.
          yield* released(c)
          check(
            wire.count("tools/call") === 1 && wire.count("server/discover") === 1 && wire.count("initialize") === 0,
            `sent: ${wire.sent.map((r) => r.rpcMethod ?? "-").join()}`
          )
          check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
          check(srv.rpcCalls("initialize") === 0 && srv.rpcCalls("server/discover") === 1, "discovery was run again")
          return summarize(error)
        })
    )
  }
}

// --- public views of errors -------------------------------------------------------------------

/** No secret, URL, header name or stack in any public view of an error (the contract's FORBIDDEN). */
const expectClean = (error: Failed) => {
  const views = [
    String(error),
    JSON.stringify(error),
    error.message ?? "",
    JSON.stringify({ ...error }),
    Object.values(error).map((v) => JSON.stringify(v)).join(" "),
    (error.stack ?? "").split("\n")[0]
  ].map(withoutPublicVocabulary)
  for (const view of views) {
    for (const secret of FORBIDDEN) {
      check(
        !view.includes(secret),
        `a public view contains ${(Object.values(CANARIES) as ReadonlyArray<string>).includes(secret) ? "a canary" : JSON.stringify(secret)}`
      )
    }
  }
  check(!Object.keys(error).includes("cause") && !Object.keys(error).includes("stack"), "cause or stack is enumerable")
}

// --- scenarios: stdio (the child runs under this same runtime) ---------------------------------

const stdioScenarios = async () => {
  const S = <A>(name: string, body: EffectBody<A>, timeoutMs?: number) => effectScenario(`Effect stdio ${name}`, FetchHttpClient.layer, body, timeoutMs)

  await S("smoke: discovers and calls; closing the connection ends the child", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture()
      const scope = yield* childScope
      const c = yield* connectStdio(f).pipe(Scope.extend(scope))
      check(c.transport === "stdio", `transport ${c.transport}`)
      check(textOf(yield* c.callTool("add", { a: 2, b: 3 })) === "5", "add")
      check(f.isAlive(), "the child is alive while connected")
      yield* closeAndCheckChild(scope, f)
    }))
  await S(`missing: initialize never answered: discovery fails at its ${DEADLINE_MS} ms deadline; the child is gone`, () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "initialize", kind: "never-answer" }] })
      const { error, ms } = yield* failureOf(connectStdio(f, { discovery: { timeout: DEADLINE_MS } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "initialize" })
      // The failure comes after the child's exit was awaited (its start-up and shutdown are in
      // the measure): the lower bound shows the deadline ended the wait; the upper one is generous.
      inRange(ms, DEADLINE_MIN_MS, STDIO_DEADLINE_MAX_MS, "the deadline")
      yield* checkChildGoneAfterFailure(f)
      check(f.rpcCalls("notifications/cancelled") === 0, "initialize was cancelled")
      return `${ms} ms`
    }))
  await S("credentials: a spawn failure names neither the path nor the arguments", () =>
    Effect.gen(function*() {
      const { error } = yield* failureOf(McpClient.connectStdio({ command: `/nonexistent/${CANARIES.user}/mcp-server`, args: [`--token=${CANARIES.query}`] }))
      expectError(error, { _tag: "TransportFailure", stage: "connect", reason: "spawn-failed", outcome: "not-sent" })
      expectClean(error)
      check(!JSON.stringify(error).includes("nonexistent"), "the path")
    }))
}

// --- scenarios: the Promise API ----------------------------------------------------------------

const promiseScenarios = async () => {
  const P = (name: string, body: () => Promise<unknown>, timeoutMs?: number) => scenario(`Promise ${name}`, body, timeoutMs)
  await P("smoke: connects, calls and closes (one DELETE, even when closed twice)", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      check(textOf(await c.callTool("add", { a: 1, b: 2 })) === "3", "add")
      await Promise.all([c.close(), c.close()])
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
    }))
  await P("abort: an already-aborted signal rejects with its reason and sends nothing", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      try {
        const before = srv.requests.length
        const { error } = await rejection(c.callTool("increment", {}, { signal: AbortSignal.abort("stop") }))
        check((error as unknown) === "stop", `rejected with ${describe(error)}`)
        check(srv.requests.length === before, "a request was sent")
      } finally {
        await c.close()
      }
    }))
  await P("credentials: a foreign legacy endpoint rejects; nothing sent to the foreign origin", async () => {
    const srv = await Testkit.startLegacyServer()
    const foreign = await Testkit.startServer()
    try {
      srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
      const wire = recordingWire(FetchHttpClient.layer)
      // connect rejects once the connection it was making is released: the wire is complete.
      const { error } = await rejection(
        connect({ url: withCanaries(srv.url), headers: { authorization: `Bearer ${CANARIES.header}` }, httpClient: wire.layer })
      )
      expectError(error, { _tag: "ProtocolViolation", reason: "foreign-endpoint" })
      expectClean(error)
      check(wire.sent.length > 0 && wire.toPort(foreign.port) === 0, `${wire.toPort(foreign.port)} of ${wire.sent.length} requests went to the foreign origin`)
      check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the foreign origin`)
    } finally {
      await Promise.all([srv.close(), foreign.close()])
    }
  })
}

// --- scenarios: the stateless era over stdio (the child runs under this same runtime) ------------

const statelessStdioScenarios = async () => {
  const S = <A>(name: string, body: EffectBody<A>, timeoutMs?: number) => effectScenario(`Effect stdio 2026 ${name}`, FetchHttpClient.layer, body, timeoutMs)
  const connectWith = (f: Testkit.StdioFixture, options: Omit<McpClient.StdioConnectOptions, "command" | "args" | "env"> = {}) =>
    McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, ...options })

  for (const era of ["handshake", "stateless"] as const) {
    await S(
      `long-lived, ${era} child: progress, a changed tool list (a subscription in 2026), typed results; the child is gone at close`,
      () =>
        Effect.gen(function*() {
          const f = yield* stdioFixture({ era, features: true })
          const scope = yield* childScope
          const c = yield* connectWith(f, { policy: { relistDelay: 50 } }).pipe(Scope.extend(scope))
          const reports: Array<number> = []
          yield* c.callTool("slow_progress", { steps: 2, intervalMs: 20 }, { onProgress: (p) => reports.push(p.progress) })
          check(reports.join(",") === "1,2", `reports ${reports.join(",")}`)
          const changed = yield* Effect.fork(
            c.toolList.changes.pipe(Stream.filter((tools) => tools.some((t) => t.name === "added_1")), Stream.take(1), Stream.runDrain)
          )
          // In 2026 the change goes to the subscriptions the child has when the tool runs: the
          // client's must have arrived (a sync point); in 2025 stdout itself is the listener.
          if (era === "stateless") yield* Effect.promise(() => f.waitFor(() => f.rpcCalls("subscriptions/listen") >= 1, 10_000))
          yield* c.callTool("change_tools", {})
          yield* Fiber.join(changed).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new CheckFailed("no new tool list") }))
          const { error } = yield* failureOf(c.callTool("weather", { city: "x", mode: "missing" }))
          expectError(error, { _tag: "ProtocolViolation", reason: "missing-structured-content", outcome: "applied" })
          check(f.toolCalls("weather") === 1, `${f.toolCalls("weather")} runs`)
          yield* closeAndCheckChild(scope, f)
        })
    )
  }

  await S("smoke: a stateless child: server/discover, no initialize, 2026-07-28; closing the connection ends the child", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ era: "stateless" })
      const scope = yield* childScope
      const c = yield* connectWith(f).pipe(Scope.extend(scope))
      check(c.protocolVersion === STATELESS && c.transport === "stdio", `${c.protocolVersion} over ${c.transport}`)
      check(textOf(yield* c.callTool("increment")) === "1", "increment")
      check(f.rpcCalls("server/discover") === 1 && f.rpcCalls("initialize") === 0, `arrivals ${f.arrivals().join()}`)
      yield* closeAndCheckChild(scope, f)
    }))
  await S("negotiation: a handshake-era child refuses server/discover; initialize follows on the same child: 2025-11-25", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture()
      const scope = yield* childScope
      const fiber = yield* Effect.fork(connectWith(f).pipe(Scope.extend(scope)))
      yield* untilE(() => f.rpcCalls("server/discover") === 1, "the probe arrived")
      const probed = f.pid()
      const c = yield* Fiber.join(fiber)
      check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
      check(f.pid() === probed && f.rpcCalls("initialize") === 1, `pid ${probed} then ${f.pid()}, initialize ${f.rpcCalls("initialize")}`)
      check(textOf(yield* c.callTool("increment")) === "1", "increment")
      yield* closeAndCheckChild(scope, f)
      return stagesOf(c)
    }))
  await S(
    "negotiation: a handshake-era child silent on server/discover: the probe waits half the 1.5 s discovery, then initialize on the same child",
    () =>
      Effect.gen(function*() {
        const f = yield* stdioFixture({ silentOnUnknown: true })
        const scope = yield* childScope
        // The client's wait runs from the probe's sending, which comes after this and before the
        // child, still starting up, reads it: timed from here, the wait is a lower bound a loaded
        // machine cannot fail (from the probe's arrival, the child's start-up would be left out of
        // it). That the connect succeeded shows the discovery's 1.5 s deadline held.
        const started = Date.now()
        const fiber = yield* Effect.fork(connectWith(f, { policy: { discovery: { timeout: 1_500 } } }).pipe(Scope.extend(scope)))
        yield* untilE(() => f.rpcCalls("server/discover") === 1, "the probe arrived")
        const probeSeen = Date.now()
        const probed = f.pid()
        const c = yield* Fiber.join(fiber)
        const ms = Date.now() - started
        const sinceProbe = Date.now() - probeSeen
        check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
        check(f.pid() === probed && f.rpcCalls("initialize") === 1, `pid ${probed} then ${f.pid()}, initialize ${f.rpcCalls("initialize")}`)
        check(ms >= 750, `connected ${ms} ms after the connect began: the probe did not wait half the discovery (750 ms)`)
        yield* closeAndCheckChild(scope, f)
        return `${ms} ms, ${sinceProbe} ms after the probe was seen`
      })
  )
  await S(
    "negotiation: revisions [2026-07-28] against a handshake-era child fail at stage discover; initialize never sent; the child is gone",
    () =>
      Effect.gen(function*() {
        const f = yield* stdioFixture()
        const { error } = yield* failureOf(connectWith(f, { revisions: [STATELESS] }))
        expectError(error, { _tag: "RemoteRefusal", stage: "discover", phase: "discovery" })
        yield* checkChildGoneAfterFailure(f)
        check(f.rpcCalls("initialize") === 0, "initialize was sent")
        return summarize(error)
      })
  )
}

// --- scenarios: the Promise API in the stateless era ----------------------------------------------

const statelessPromiseScenarios = async () => {
  const P = (name: string, body: () => Promise<unknown>, timeoutMs?: number) => scenario(`Promise 2026 ${name}`, body, timeoutMs)
  const startStateless = () => Testkit.startServer({ era: "stateless" })

  await P("smoke: connects at 2026-07-28 (server/discover, no initialize), calls, closes without DELETE", () =>
    withServer(startStateless, async (srv) => {
      const c = await connect({ url: srv.url })
      check(c.protocolVersion === STATELESS, `protocolVersion ${c.protocolVersion}`)
      check(textOf(await c.callTool("add", { a: 1, b: 2 })) === "3", "add")
      await Promise.all([c.close(), c.close()])
      check(srv.rpcCalls("initialize") === 0 && srv.deletes() === 0, `initialize ${srv.rpcCalls("initialize")}, DELETEs ${srv.deletes()}`)
    }))
  await P(
    "negotiation: default revisions against a handshake-era server connect at 2025-11-25 (initialize after the refused probe)",
    () =>
      withServer(() => Testkit.startServer(), async (srv) => {
        const c = await connect({ url: srv.url })
        try {
          check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
          check(
            srv.rpcCalls("server/discover") === 1 && srv.rpcCalls("initialize") === 1,
            `discover ${srv.rpcCalls("server/discover")}, initialize ${srv.rpcCalls("initialize")}`
          )
        } finally {
          await c.close()
        }
      })
  )
  await P(
    "negotiation: revisions [2026-07-28] against a handshake-era server reject at stage discover; initialize never sent",
    () =>
      withServer(() => Testkit.startServer(), async (srv) => {
        const { error } = await rejection(connect({ url: srv.url, revisions: [STATELESS] }))
        expectError(error, { _tag: "RemoteRefusal", stage: "discover" })
        check(srv.rpcCalls("initialize") === 0, "initialize was sent")
        return summarize(error)
      })
  )
  await P("negotiation: revisions naming no revision the client speaks reject InvalidOption before any I/O", () =>
    withServer(startStateless, async (srv) => {
      const { error } = await rejection(connect({ url: srv.url, revisions: ["1999-01-01"] }))
      expectError(error, { _tag: "InvalidOption", option: "revisions", outcome: "not-sent" })
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
    }))
  await P("handlers: ask_name's input_required round is answered by a Promise elicitation handler", () =>
    withServer(startStateless, async (srv) => {
      const c = await connect({ url: srv.url, handlers: { elicitation: async () => ({ action: "accept", content: { name: "qualifier" } }) } })
      try {
        check(textOf(await c.callTool("ask_name")) === "hello qualifier", "the greeting")
        check(srv.inputRounds() === 1 && srv.rpcCalls("tools/call") === 2, `${srv.inputRounds()} rounds, ${srv.rpcCalls("tools/call")} tools/call`)
      } finally {
        await c.close()
      }
    }))
}

// --- scenarios: long-lived connections (sessions that heal, ping, _meta) -------------------------

const longLivedScenarios = async (label: string, layer: Layer.Layer<HttpClient.HttpClient>) => {
  const E = <A>(name: string, body: EffectBody<A>, timeoutMs?: number) => effectScenario(`Effect[${label}] long-lived ${name}`, layer, body, timeoutMs)
  await E("legacy HTTP+SSE: a GET stream that ended is replaced by a new session; the failed call is not re-sent", () =>
    Effect.gen(function*() {
      const srv = yield* Effect.acquireRelease(Effect.promise(() => Testkit.startLegacyServer()), (s) => Effect.promise(() => s.close()))
      const c = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      srv.script({ on: "tools/call", kind: "close-stream" })
      const { error } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "TransportFailure", reason: "stream-ended" })
      check(textOf(yield* c.callTool("echo", { text: "again" })) === "again", "the next call")
      check((yield* c.sessions) === 2 && srv.rpcCalls("tools/call") === 2, `${srv.rpcCalls("tools/call")} tools/call`)
    }))
  for (const era of ["handshake", "stateless"] as const) {
    await E(`${era}: ping under its own budget; a call's _meta reaches the server`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped(era === "stateless" ? { era: "stateless" } : {})
        const c = yield* McpClient.connect({ url: srv.url })
        const ms = yield* c.ping
        check(typeof ms === "number" && ms >= 0, `ping ${ms}`)
        check(srv.rpcCalls(era === "stateless" ? "server/discover" : "ping") === (era === "stateless" ? 2 : 1), "the ping on the wire")
        yield* c.callTool("echo", { text: "x" }, { meta: { "com.example/request": "q-1" } })
        const sent = srv.requests.filter((r) => r.rpcMethod === "tools/call").at(-1)
        check(sent?.meta?.["com.example/request"] === "q-1", "the caller's _meta")
      }))
    const features: Testkit.TestServerOptions = era === "stateless" ? { era: "stateless", features: true, mode: "sse" } : { features: true, mode: "sse" }
    await E(`${era}: progress reaches the caller; an idle timeout fires before the deadline; the tool ran once per call`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped(features)
        const c = yield* McpClient.connect({ url: srv.url })
        const reports: Array<number> = []
        yield* c.callTool("slow_progress", { steps: 3, intervalMs: 20 }, { onProgress: (p) => reports.push(p.progress) })
        check(reports.join(",") === "1,2,3", `reports ${reports.join(",")}`)
        const { error } = yield* failureOf(
          c.callTool("slow_progress", { steps: 6, intervalMs: 150, silentAfter: 1 }, { timeout: 20_000, idleTimeout: 300 })
        )
        expectError(error, { _tag: "DeadlineExceeded", reason: "idle-timeout", stage: "call", outcome: "unknown" })
        check(error.limits.idleTimeoutMs === 300, "idleTimeoutMs in the limits")
        check(srv.toolCalls("slow_progress") === 2, `${srv.toolCalls("slow_progress")} runs`)
      }))
    await E(`${era}: typed results: a mismatching structuredContent is ProtocolViolation, applied, sent once`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped(features)
        const c = yield* McpClient.connect({ url: srv.url })
        check(
          ((yield* c.callTool("weather", { city: "Lisbon" })).structuredContent as { conditions?: string } | undefined)?.conditions === "sunny",
          "a matching result"
        )
        const { error } = yield* failureOf(c.callTool("weather", { city: "Lisbon", mode: "mismatch" }))
        expectError(error, { _tag: "ProtocolViolation", reason: "structured-content-mismatch", outcome: "applied" })
        check(srv.toolCalls("weather") === 2, `${srv.toolCalls("weather")} runs`)
      }))
    await E(`${era}: a changed tool list reaches toolList; resources, prompts and the log level`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped(features)
        const c = yield* McpClient.connect({ url: srv.url, policy: { relistDelay: 50 } })
        const changed = yield* Effect.fork(
          c.toolList.changes.pipe(Stream.filter((tools) => tools.some((t) => t.name === "added_1")), Stream.take(1), Stream.runDrain)
        )
        // The change goes to the listeners the server has when the tool runs: the client's must be
        // in place (the 2026 subscription, the 2025 standalone GET stream), a sync point.
        yield* Effect.promise(() =>
          srv.waitFor(() => era === "stateless" ? srv.rpcCalls("subscriptions/listen") >= 1 : srv.requests.some((r) => r.method === "GET"), 10_000)
        )
        yield* c.callTool("change_tools", {})
        yield* Fiber.join(changed).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new CheckFailed("no new tool list") }))
        check(c.tools.some((t) => t.name === "added_1"), "connection.tools is the new list")
        check((yield* c.listResources()).length === 4, "four resources")
        const read = yield* c.readResource("test://docs/2")
        const first = read.contents[0]
        check(first !== undefined && "text" in first && first.text === "Document 2", "the resource's text")
        const prompt = yield* c.getPrompt("greet", { name: "Ada" })
        check((prompt.messages[0]?.content as { text?: string } | undefined)?.text === "Hello, Ada", "the prompt")
        const logs = yield* Effect.fork(c.logMessages.pipe(Stream.take(1), Stream.runCollect))
        yield* c.setLogLevel("warning")
        // No pause for the stream to subscribe: rounds of a quiet message then a loud one, until
        // the stream has its first message. A level filter that let "quiet" through would make it
        // the first one of the round after the subscription.
        for (let round = 0; round < 50 && Option.isNone(yield* Fiber.poll(logs)); round++) {
          yield* c.callTool("log", { level: "info", message: "quiet" })
          yield* c.callTool("log", { level: "error", message: "loud" })
        }
        const got = yield* Fiber.join(logs).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new CheckFailed("no log message") }))
        check([...got][0]?.data === "loud", "only the error-level message")
      }))
  }
}

// --- scenarios: authorization (OAuth 2.1), login-free and with the code grant ----------------------

/** A protected MCP server and its authorization server; the client is known to the latter. */
const withProtectedServer = async <A>(
  options: { readonly oauth?: Testkit.OAuthServerOptions; readonly server?: Testkit.TestServerOptions; readonly auth?: Record<string, unknown> },
  body: (srv: Testkit.TestServer, oauth: Testkit.OAuthTestServer) => Promise<A>
): Promise<A> => {
  const oauth = await Testkit.startOAuthServer(options.oauth ?? {})
  const srv = await Testkit.startServer({ ...(options.server ?? {}), auth: { oauth, ...(options.auth ?? {}) } })
  try {
    return await body(srv, oauth)
  } finally {
    await Promise.all([srv.close(), oauth.close()])
  }
}

const SERVICE = { clientId: "qualify-service", clientSecret: CANARIES.header, grantTypes: ["client_credentials"] } satisfies Testkit.OAuthClient
const serviceAuth = { grant: "client_credentials", clientId: SERVICE.clientId, clientSecret: SERVICE.clientSecret } as const

/** No string of FORBIDDEN, and neither the client secret nor any token issued, in an error's public views. */
const expectNoSecrets = (error: Failed, oauth: Testkit.OAuthTestServer) => {
  expectClean(error)
  const views = [JSON.stringify(error), String(error), error.message]
  const secrets = [SERVICE.clientSecret, ...oauth.issuedTokens().flatMap((t) => [t.accessToken, t.refreshToken].filter(Boolean))]
  for (const secret of secrets) check(!views.some((view) => view.includes(secret)), "a secret in the error")
}

const authorizationScenarios = async (label: string, layer: Layer.Layer<HttpClient.HttpClient>) => {
  const E = <A>(name: string, body: EffectBody<A>, timeoutMs?: number) => effectScenario(`Effect[${label}] auth ${name}`, layer, body, timeoutMs)
  for (const era of ["handshake", "stateless"] as const) {
    const server: Testkit.TestServerOptions = era === "stateless" ? { era: "stateless" } : {}
    await E(`${era}: client credentials, login-free: 401, token, the refused request sent once more`, () =>
      Effect.gen(function*() {
        const [srv, oauth] = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const oauth = await Testkit.startOAuthServer({ clients: [SERVICE] })
            return [await Testkit.startServer({ ...server, auth: { oauth } }), oauth] as const
          }),
          ([srv, oauth]) => Effect.promise(() => Promise.all([srv.close(), oauth.close()]))
        )
        const c = yield* McpClient.connect({ url: srv.url, auth: serviceAuth }).pipe(Effect.provide(Authorization.layerMemoryTokenStore))
        check(textOf(yield* c.callTool("add", { a: 2, b: 3 })) === "5", "add")
        check(srv.unauthorizedCount() === 1, `${srv.unauthorizedCount()} requests refused with 401`)
        check(oauth.calls("token") === 1, `${oauth.calls("token")} token requests`)
        check(c.discovery.some((o) => o.operation === "authorization" && o.outcome === "ok"), "no authorization observed")
        // The token went to the MCP server only.
        const issued = oauth.issuedTokens().map((t) => t.accessToken)
        check(srv.bearerTokens().length > 0 && srv.bearerTokens().every((t) => issued.includes(t)), "bearer tokens")
        // Expired: the call is refused once, a new token is obtained, the call is sent once more and runs once.
        oauth.expireAll()
        const before = srv.counter()
        yield* c.callTool("increment", {})
        check(srv.counter() === before + 1, `the tool ran ${srv.counter() - before} times`)
        const observed = yield* c.observations
        check(observed.filter((o) => o.resent === true).length === 1, "one re-sent call in the observations")
      }))
  }
  await E("client credentials refused: AuthorizationFailed, no secret in it, nothing re-sent", () =>
    Effect.gen(function*() {
      const [srv, oauth] = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const oauth = await Testkit.startOAuthServer({ clients: [SERVICE], faults: [{ kind: "echo-secrets-in-error", times: Infinity }] })
          return [await Testkit.startServer({ auth: { oauth } }), oauth] as const
        }),
        ([srv, oauth]) => Effect.promise(() => Promise.all([srv.close(), oauth.close()]))
      )
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: serviceAuth }).pipe(Effect.provide(Authorization.layerMemoryTokenStore)))
      expectError(error, { _tag: "AuthorizationFailed", phase: "authorization", authorizationStep: "token", outcome: "not-applied" })
      expectNoSecrets(error, oauth)
      check(srv.counter() === 0, "a tool ran")
    }))
  await E("a stalled token endpoint fails at the authorization deadline", () =>
    Effect.gen(function*() {
      const [srv] = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const oauth = await Testkit.startOAuthServer({ clients: [SERVICE], faults: [{ kind: "stall", endpoint: "token" }] })
          return [await Testkit.startServer({ auth: { oauth } }), oauth] as const
        }),
        ([srv, oauth]) => Effect.promise(() => Promise.all([srv.close(), oauth.close()]))
      )
      const { error, ms } = yield* failureOf(
        McpClient.connect({ url: srv.url, auth: serviceAuth, policy: { authorization: { timeout: DEADLINE_MS } } }).pipe(
          Effect.provide(Authorization.layerMemoryTokenStore)
        )
      )
      expectError(error, { _tag: "DeadlineExceeded", phase: "authorization", authorizationStep: "token", limits: { timeoutMs: DEADLINE_MS } })
      inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS + 1_000, "the stalled token endpoint")
    }))
}

const authorizationPromiseScenarios = async () => {
  const P = (name: string, body: () => Promise<unknown>, timeoutMs?: number) => scenario(`Promise auth ${name}`, body, timeoutMs)
  await P("code grant: dynamic registration, PKCE, the interactive step given as a function", () =>
    withProtectedServer({}, async (srv, oauth) => {
      let shown: URL | undefined
      const c = await connect({
        url: srv.url,
        auth: {
          redirectUri: "http://127.0.0.1:9/callback",
          authorize: (url: URL) => {
            shown = url
            return oauth.authorizeDirect(url)
          }
        }
      })
      try {
        check(shown instanceof URL && shown?.searchParams.get("code_challenge_method") === "S256", "PKCE S256 in the authorization URL")
        check(textOf(await c.callTool("add", { a: 1, b: 2 })) === "3", "add")
        check(oauth.calls("register") === 1 && oauth.calls("token") === 1, "one registration, one token request")
      } finally {
        await c.close()
      }
    }))
  await P(
    "code grant: a resource mismatch ends it before any authorization request",
    () =>
      withProtectedServer({ auth: { resource: "https://attacker.example/mcp" } }, async (srv, oauth) => {
        let asked = false
        const { error } = await rejection(connect({
          url: srv.url,
          auth: { redirectUri: "http://127.0.0.1:9/callback", authorize: () => (asked = true, "http://127.0.0.1:9/callback") }
        }))
        expectError(error, { _tag: "ProtocolViolation", reason: "resource-mismatch", phase: "authorization", authorizationStep: "metadata" })
        check(!asked && oauth.calls("authorize") === 0 && oauth.calls("token") === 0, "the authority was used")
      })
  )
}

// --- main ----------------------------------------------------------------------------------------

const started = Date.now()
for (const [label, layer] of httpLayers) {
  await httpScenarios(label, layer)
  await statelessHttpScenarios(label, layer)
  await authorizationScenarios(label, layer)
  await longLivedScenarios(label, layer)
}
await stdioScenarios()
await statelessStdioScenarios()
await promiseScenarios()
await statelessPromiseScenarios()
await authorizationPromiseScenarios()
await contractScenarios()

const failed = results.filter((r) => !r.ok)
const width = Math.max(...results.map((r) => r.name.length))
console.log(`phasebound qualification under ${runtime} ${bunVersion ?? process.version}`)
for (const r of results) console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(width)}  ${String(r.ms).padStart(5)} ms  ${r.detail}`)
console.log(`${results.length - failed.length} passed, ${failed.length} failed (${Date.now() - started} ms)`)
process.stdout.write(Testkit.formatReport({
  results: results.map(({ name, ok, detail }) => ({ name, ok, detail })),
  children: [...children.values()].map(({ pid, start }) => (start === undefined ? { pid } : { pid, start }))
}))
if (failed.length > 0) process.exitCode = 1
