/**
 * The phasebound qualification program: ONE plain ESM file, run as is by `node qualify.mjs` and
 * `bun qualify.mjs` inside a fresh project where the packed packages were installed. It imports
 * public entry points only: @phasebound/client, @phasebound/client/promise, @phasebound/testkit,
 * effect, @effect/platform and @effect/platform-node.
 *
 * The scenarios run against servers of the handshake era (2024-11-05 through 2025-11-25) and,
 * in the rows named "2026", of the stateless era (2026-07-28) and the negotiation between them.
 *
 * Each scenario records pass/fail with a short detail. At the end the program prints a table and
 * one machine-readable line `QUALIFY-SUMMARY {json}` for the orchestrator. It never calls
 * process.exit: that it exits by itself (no handle left open) is checked from outside. It sets
 * process.exitCode on failure.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import { connect } from "@phasebound/client/promise"
import * as Testkit from "@phasebound/testkit"
import { Cause, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { createServer } from "node:http"

const runtime = typeof globalThis.Bun === "undefined" ? "node" : "bun"

/** The tolerance for "a server that never answers fails at its deadline". */
const DEADLINE_MS = 500
const DEADLINE_MIN_MS = 450
const DEADLINE_MAX_MS = 1_500
/** "Promptly": a missing response must fail well before its (30 s) deadline. */
const PROMPT_MS = 2_000
/** The byte ceiling of the boundary scenarios; chunks of 7 bytes split the multi-byte padding. */
const CEILING = 4_000
const CHUNK = 7

// --- harness -----------------------------------------------------------------------------------

const results = []
const childPids = new Set()

class CheckFailed extends Error {}
const fail = (message) => {
  throw new CheckFailed(message)
}
const check = (condition, message) => {
  if (!condition) fail(message)
}

/** A one-line, secret-free description of anything thrown (public fields only for our errors). */
const describe = (error) => {
  if (error instanceof CheckFailed) return error.message
  if (error !== null && typeof error === "object" && typeof error._tag === "string") return summarize(error)
  const message = error instanceof Error ? error.message : String(error)
  return `unexpected: ${message.split("\n")[0].slice(0, 300)}`
}

const summarize = (e) =>
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

const scenario = async (name, body, timeoutMs = 20_000) => {
  const started = Date.now()
  let timer
  try {
    const detail = await Promise.race([
      Promise.resolve().then(body),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`scenario did not finish within ${timeoutMs} ms`)), timeoutMs)
      })
    ])
    results.push({ name, ok: true, detail: typeof detail === "string" ? detail : "", ms: Date.now() - started })
  } catch (error) {
    results.push({ name, ok: false, detail: describe(error), ms: Date.now() - started })
  } finally {
    clearTimeout(timer)
  }
}

/** A subset match: every field of `expected` (deeply) equals the one in `actual`. */
const mismatch = (actual, expected, path = "") => {
  for (const [key, value] of Object.entries(expected)) {
    const here = actual?.[key]
    if (value !== null && typeof value === "object") {
      const inner = mismatch(here, value, `${path}${key}.`)
      if (inner !== undefined) return inner
    } else if (here !== value) {
      return `${path}${key}=${JSON.stringify(here)} (expected ${JSON.stringify(value)})`
    }
  }
  return undefined
}
const expectError = (error, expected) => {
  const wrong = mismatch(error, expected)
  if (wrong !== undefined) fail(`${summarize(error)}: ${wrong}`)
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
/** Polls until `predicate` holds; fails with `what` after `timeoutMs`. */
const until = async (predicate, what, timeoutMs = 5_000) => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) fail(`not within ${timeoutMs} ms: ${what}`)
    await sleep(5)
  }
}
const untilE = (predicate, what, timeoutMs) => Effect.promise(() => until(predicate, what, timeoutMs))
const checkE = (condition, message) => Effect.sync(() => check(condition, message))

/** Runs an effect that must fail with a typed error; returns it with the time it took. */
const failureOf = (effect) =>
  Effect.gen(function*() {
    const started = Date.now()
    const exit = yield* Effect.exit(effect)
    const ms = Date.now() - started
    if (Exit.isSuccess(exit)) return fail("succeeded where a failure was expected")
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "None") {
      return fail(Cause.isInterruptedOnly(exit.cause) ? "interrupted, expected a typed failure" : "a defect, expected a typed failure")
    }
    return { error: failure.value, ms }
  })

/** The connection holds nothing after a failure: no pending request, no background fiber. */
const released = (connection) =>
  Effect.promise(async () => {
    let last
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
const withServer = async (start, body) => {
  const srv = await start()
  try {
    return await body(srv)
  } finally {
    await srv.close()
  }
}
/** Awaits a promise that must reject; returns the rejection with the time it took. */
const rejection = async (promise) => {
  const started = Date.now()
  try {
    await promise
  } catch (error) {
    return { error, ms: Date.now() - started }
  }
  return fail("resolved where a rejection was expected")
}

const inRange = (ms, min, max, what) => check(ms >= min && ms <= max, `${what} after ${ms} ms, outside [${min}, ${max}] ms`)

// --- platforms ---------------------------------------------------------------------------------

const httpLayers = runtime === "node"
  ? [["fetch", FetchHttpClient.layer], ["undici", NodeHttpClient.layerUndici]]
  : [["fetch", FetchHttpClient.layer]]
const stdioPlatform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

/** Runs an Effect scenario in its own scope; a failed check (a defect) is reported as itself. */
const effectScenario = (name, layer, body, timeoutMs) =>
  scenario(name, async () => {
    const exit = await Effect.runPromiseExit(Effect.scoped(body()).pipe(Effect.provide(layer)))
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.isInterruptedOnly(exit.cause) ? new CheckFailed("interrupted") : Cause.squash(exit.cause)
  }, timeoutMs)

/** A stdio fixture whose child is checked dead when the scenario's connection is gone, then cleaned. */
const stdioFixture = (options) =>
  Effect.acquireRelease(
    Effect.sync(() => Testkit.makeStdioFixture(options)),
    (f) =>
      Effect.sync(() => {
        const pid = f.pid()
        if (pid !== undefined) childPids.add(pid)
        f.cleanup()
      })
  )
const connectStdio = (f, policy) => McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, policy })
/** Closes `scope` (the connection) and checks that the child is gone right after. */
const closeAndCheckChild = (scope, f) =>
  Effect.gen(function*() {
    const pid = f.pid()
    if (pid !== undefined) childPids.add(pid)
    yield* Scope.close(scope, Exit.void)
    yield* untilE(() => !f.isAlive(), "the stdio child is gone once its connection closed", 250)
  })

const textOf = (result) => result.content.map((c) => c.text ?? "").join("")
const MULTIBYTE = "é€😀a"

// --- scenarios: Streamable HTTP and legacy SSE, through each HTTP client layer ------------------

const httpScenarios = async (label, layer) => {
  const E = (name, body, timeoutMs) => effectScenario(`Effect[${label}] ${name}`, layer, body, timeoutMs)

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

  // Opposite phase overrides.
  await E("overrides: short discovery (300 ms) + long call: a slow tools/list fails discovery at 300 ms", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      srv.script({ on: "tools/list", kind: "delay", ms: 2_000 })
      const { error, ms } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "list-tools", phase: "discovery", limits: { timeoutMs: 300 } })
      inRange(ms, 250, 1_300, "discovery deadline")
      yield* untilE(() => srv.deletes() === 1, "the session is released (DELETE)")
      return `${ms} ms`
    }))
  await E("overrides: short discovery (300 ms) + long call (5 s): a 700 ms call succeeds", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } })
      srv.script({ on: "tools/call", kind: "delay", ms: 700 })
      const started = Date.now()
      check(textOf(yield* c.callTool("increment")) === "1", "increment")
      return `${Date.now() - started} ms`
    }))
  await E("overrides: long discovery (5 s) + short call (300 ms): slow discovery passes, the call fails at 300 ms", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      srv.script({ on: "initialize", kind: "delay", ms: 700 })
      const c = yield* McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 5_000 }, call: { timeout: 300 } } })
      srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: 300 }, outcome: "unknown", retryable: false })
      inRange(ms, 250, 1_300, "call deadline")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      yield* released(c)
      return `${ms} ms`
    }))
  await E("overrides: a per-call override (timeout 300 ms, maxBytes 500) bounds that call only", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 5_000 } } })
      srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
      const slow = yield* failureOf(c.callTool("echo", { text: "x" }, { timeout: 300 }))
      expectError(slow.error, { _tag: "DeadlineExceeded", limits: { timeoutMs: 300 } })
      srv.script({ on: "tools/call", kind: "exact-size", bytes: 501 })
      const big = yield* failureOf(c.callTool("echo", { text: "x" }, { maxBytes: 500 }))
      expectError(big.error, { _tag: "ByteCeilingExceeded", limits: { maxBytes: 500 }, observedBytes: 501 })
      srv.script({ on: "tools/call", kind: "exact-size", bytes: 501 })
      yield* c.callTool("echo", { text: "x" })
    }))
  await E("overrides: legacy, short discovery (300 ms): the GET stream outlives it, a 700 ms call succeeds later", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      const c = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } })
      yield* Effect.sleep("400 millis")
      srv.script({ on: "tools/call", kind: "delay", ms: 700 })
      check(textOf(yield* c.callTool("increment")) === "1", "increment")
      check(srv.openStreams() === 1, "one GET stream")
    }))
  await E("overrides: legacy, short discovery (300 ms) + long call: a slow tools/list fails at 300 ms", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      srv.script({ on: "tools/list", kind: "delay", ms: 2_000 })
      const { error, ms } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "list-tools", phase: "discovery", limits: { timeoutMs: 300 } })
      inRange(ms, 250, 1_300, "discovery deadline")
      yield* untilE(() => srv.closedStreams() === 1, "the GET stream is closed by the client")
      return `${ms} ms (auto fallback included)`
    }))

  // Exact byte boundaries, both phases, JSON / Streamable SSE / legacy SSE.
  const boundaryTransports = [
    ["Streamable JSON", "json"],
    ["Streamable SSE", "sse"],
    ["legacy SSE", "legacy"]
  ]
  for (const [transportName, kind] of boundaryTransports) {
    const server = () => (kind === "legacy" ? Testkit.scopedLegacy() : Testkit.scoped({ mode: kind }))
    const options = (srv, policy) => (kind === "legacy" ? { url: srv.url, transport: "sse", policy } : { url: srv.url, policy })
    const sized = (on, bytes, chunkSize) =>
      kind === "legacy" ? { on, kind: "exact-size", bytes, chunkSize } : { on, kind: "exact-size", bytes, chunkSize, as: kind }
    for (const bytes of [CEILING - 1, CEILING, CEILING + 1]) {
      const verdict = bytes <= CEILING ? "accepted" : "refused"
      await E(`bytes: ${transportName} call answer of ${bytes} B, call ceiling ${CEILING}: ${verdict}`, () =>
        Effect.gen(function*() {
          const srv = yield* server()
          // The discovery ceiling is lower than the call's: only the call ceiling may apply here.
          const c = yield* McpClient.connect(options(srv, { discovery: { maxBytes: 2_000 }, call: { maxBytes: CEILING } }))
          srv.script(sized("tools/call", bytes, CHUNK))
          const exit = yield* Effect.exit(c.callTool("increment"))
          if (bytes <= CEILING) {
            check(Exit.isSuccess(exit), `refused: ${Exit.isFailure(exit) ? describe(Cause.squash(exit.cause)) : ""}`)
            check(textOf(exit.value).includes(MULTIBYTE), "the multi-byte padding decoded intact")
          } else {
            check(Exit.isFailure(exit), "accepted")
            expectError(Cause.squash(exit.cause), {
              _tag: "ByteCeilingExceeded",
              stage: "call",
              phase: "call",
              limits: { maxBytes: CEILING },
              observedBytes: CEILING + 1,
              outcome: "applied",
              retryable: false
            })
          }
          check(srv.counter() === 1, `counter ${srv.counter()}`)
          yield* released(c)
          if (kind === "legacy") check(textOf(yield* c.callTool("echo", { text: "on" })) === "on", "the stream goes on")
          return Exit.isFailure(exit) ? summarize(Cause.squash(exit.cause)) : ""
        }))
      await E(`bytes: ${transportName} tools/list of ${bytes} B, discovery ceiling ${CEILING}: ${verdict}`, () =>
        Effect.gen(function*() {
          const srv = yield* server()
          srv.script(sized("tools/list", bytes, 5))
          // The call ceiling is far lower: only the discovery ceiling may apply here.
          const exit = yield* Effect.exit(McpClient.connect(options(srv, {
            discovery: { maxBytes: CEILING },
            call: { maxBytes: 10 },
            unsolicited: { maxBytes: 100 }
          })))
          if (bytes <= CEILING) {
            check(Exit.isSuccess(exit), `refused: ${Exit.isFailure(exit) ? describe(Cause.squash(exit.cause)) : ""}`)
            check((exit.value.tools[0].description ?? "").includes(MULTIBYTE), "the multi-byte padding decoded intact")
          } else {
            check(Exit.isFailure(exit), "accepted")
            expectError(Cause.squash(exit.cause), {
              _tag: "ByteCeilingExceeded",
              stage: "list-tools",
              phase: "discovery",
              limits: { maxBytes: CEILING },
              observedBytes: CEILING + 1
            })
            if (kind === "legacy") yield* untilE(() => srv.closedStreams() === 1, "the GET stream is closed by the client")
            else yield* untilE(() => srv.deletes() === 1, "the refused session is released (DELETE)")
          }
          return Exit.isFailure(exit) ? summarize(Cause.squash(exit.cause)) : ""
        }))
    }
  }
  for (const mode of ["json", "sse"]) {
    await E(`bytes: Streamable ${mode} never-ending body is refused while reading; the server sees it closed`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped({ mode })
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { maxBytes: 256 * 1024 } } })
        srv.script({ on: "tools/call", kind: "never-ending-body", as: mode })
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: "ByteCeilingExceeded", stage: "call" })
        // Past the ceiling by at most the chunk that crossed it; the platform sizes chunks (fetch
        // has been seen handing over 256 KiB at once when the socket had buffered that much).
        check(error.observedBytes > 256 * 1024 && error.observedBytes <= 256 * 1024 + 512 * 1024, `observed ${error.observedBytes}`)
        yield* untilE(() => srv.abortedResponses() === 1, "the server sees the response abandoned")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        yield* released(c)
        return `observed ${error.observedBytes}`
      }))
  }
  await E("bytes: legacy never-ending frame aborts the GET stream; the server sees it closed", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      const c = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { call: { maxBytes: 64 * 1024 }, unsolicited: { maxBytes: 1024 } } })
      srv.script({ on: "tools/call", kind: "never-ending-frame" })
      const { error } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "ByteCeilingExceeded", limits: { maxBytes: 64 * 1024 } })
      yield* untilE(() => srv.closedStreams() === 1, "the server sees the GET stream closed")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      yield* released(c)
      return `observed ${error.observedBytes}`
    }))

  // Caller interruption against deadline.
  await E("abort: Effect interruption of a call is an interruption (not a deadline); the server sees it closed", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 10_000 } } })
      srv.script({ on: "tools/call", kind: "headers-never-sent" })
      const fiber = yield* Effect.fork(c.callTool("increment"))
      yield* untilE(() => srv.rpcCalls("tools/call") === 1, "the call arrived")
      const started = Date.now()
      const exit = yield* Fiber.interrupt(fiber)
      const ms = Date.now() - started
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      check(ms < 1_000, `interruption took ${ms} ms`)
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      yield* untilE(() => srv.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      yield* released(c)
      return `${ms} ms`
    }))
  await E("abort: Effect interruption during discovery releases the session (DELETE, request closed)", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      srv.script({ on: "tools/list", kind: "headers-never-sent" })
      const fiber = yield* Effect.fork(Effect.scoped(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 10_000 } } })))
      yield* untilE(() => srv.rpcCalls("tools/list") === 1, "tools/list arrived")
      const exit = yield* Fiber.interrupt(fiber)
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      yield* untilE(() => srv.deletes() === 1, "the session is released (DELETE)")
    }))
  await E("abort: legacy interruption sends notifications/cancelled; the stream goes on", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      const c = yield* McpClient.connect({ url: srv.url, transport: "sse" })
      srv.script({ on: "tools/call", kind: "no-response" })
      const fiber = yield* Effect.fork(c.callTool("increment"))
      yield* untilE(() => srv.rpcCalls("tools/call") === 1, "the call arrived")
      const exit = yield* Fiber.interrupt(fiber)
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      yield* untilE(() => srv.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      check(textOf(yield* c.callTool("increment")) === "2", "the next call works")
      yield* released(c)
    }))

  // Credential fences.
  for (const [name, fault, tag] of credentialFaults) {
    await E(`credentials: no canary in a ${name} failure (${tag})`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped()
        const c = yield* McpClient.connect({
          url: withCanaries(srv.url),
          headers: { Authorization: `Bearer ${canaries.header}`, "X-Api-Key": canaries.header },
          policy: { call: { timeout: DEADLINE_MS, maxBytes: 1_000 } }
        })
        srv.script(fault)
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        expectClean(error)
        const call = srv.requests.find((r) => r.rpcMethod === "tools/call")
        check(call.headers["authorization"] === `Bearer ${canaries.header}`, "the header reached the configured origin")
        check(call.url.includes(`token=${canaries.query}`), "the query reached the configured origin")
        return summarize(error)
      }))
  }
  await E("credentials: URL userinfo becomes Basic authorization, never sent in the URL", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      yield* McpClient.connect({ url: withCanaries(srv.url) })
      const first = srv.requests[0]
      const expected = `Basic ${btoa(`${canaries.user}:${canaries.password}`)}`
      check(first.headers["authorization"] === expected, "Basic header")
      check(!srv.requests.some((r) => r.url.includes(canaries.password) || r.url.includes(canaries.user)), "userinfo in a URL")
    }))
  await E("credentials: a discovery refusal echoing the secrets is redacted", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      srv.script({ on: "initialize", kind: "jsonrpc-error", code: -32600, message: `token ${canaries.query} and ${canaries.header} rejected` })
      const { error } = yield* failureOf(McpClient.connect({ url: withCanaries(srv.url), headers: { authorization: canaries.header } }))
      expectError(error, { _tag: "RemoteRefusal", stage: "initialize" })
      expectClean(error)
      check(error.remoteMessage.includes("[redacted]"), "redacted marker")
      return error.remoteMessage
    }))
  await E("credentials: an invalid option (header injection) names the option, never its value", () =>
    Effect.gen(function*() {
      const { error } = yield* failureOf(Effect.scoped(McpClient.connect({
        url: withCanaries("http://127.0.0.1:9/mcp"),
        headers: { authorization: `${canaries.header}\r\nInjected: yes` }
      })))
      expectError(error, { _tag: "InvalidOption", option: "headers", stage: "config", outcome: "not-sent" })
      expectClean(error)
    }))
  for (const transport of ["sse", "auto"]) {
    await E(`credentials: a foreign legacy endpoint (${transport}) fails; nothing reaches the foreign origin`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scopedLegacy()
        const foreign = yield* Testkit.scoped()
        srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
        const { error } = yield* failureOf(McpClient.connect({
          url: withCanaries(srv.url),
          transport,
          headers: { authorization: `Bearer ${canaries.header}` }
        }))
        expectError(error, { _tag: "ProtocolViolation", stage: "endpoint", reason: "foreign-endpoint", outcome: "not-sent" })
        expectClean(error)
        yield* Effect.sleep("150 millis")
        check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the foreign origin`)
        yield* untilE(() => srv.closedStreams() === 1, "the GET stream is closed by the client")
      }))
  }

  // Missing responses fail promptly; a server that never answers fails at its deadline.
  const prompt = [
    ["Streamable JSON without the id", { mode: "json" }, { kind: "wrong-id" }, { _tag: "ProtocolViolation", reason: "missing-response" }],
    ["Streamable SSE ending without the response", { mode: "sse" }, { kind: "close-before-response" }, { _tag: "ProtocolViolation", reason: "missing-response" }],
    ["Streamable SSE frame never terminated", { mode: "sse" }, { kind: "unterminated-frame" }, { _tag: "ProtocolViolation", reason: "missing-response" }]
  ]
  for (const [name, serverOptions, fault, expected] of prompt) {
    await E(`missing: ${name} fails promptly (< ${PROMPT_MS} ms of a 30 s deadline)`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped(serverOptions)
        const c = yield* McpClient.connect({ url: srv.url, policy: { timeout: 30_000 } })
        srv.script({ on: "tools/call", ...fault })
        const { error, ms } = yield* failureOf(c.callTool("increment"))
        expectError(error, { ...expected, stage: "call" })
        check(ms < PROMPT_MS, `${ms} ms`)
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        yield* released(c)
        return `${ms} ms`
      }))
  }
  await E(`missing: a legacy GET stream closing mid-call fails promptly (< ${PROMPT_MS} ms)`, () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      const c = yield* McpClient.connect({ url: srv.url, transport: "sse", policy: { timeout: 30_000 } })
      srv.script({ on: "tools/call", kind: "close-stream" })
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "TransportFailure", reason: "stream-ended", stage: "call", outcome: "unknown", retryable: false })
      check(ms < PROMPT_MS, `${ms} ms`)
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      yield* released(c)
      return `${ms} ms`
    }))
  const silent = [
    ["Streamable JSON, headers never sent", () => Testkit.scoped(), { on: "tools/call", kind: "headers-never-sent" }, "http"],
    ["Streamable JSON, body never sent", () => Testkit.scoped(), { on: "tools/call", kind: "response-never-sent", as: "json" }, "http"],
    ["Streamable SSE, response event never sent", () => Testkit.scoped({ mode: "sse" }), { on: "tools/call", kind: "response-never-sent", as: "sse" }, "http"],
    ["legacy SSE, response never sent", () => Testkit.scopedLegacy(), { on: "tools/call", kind: "no-response" }, "legacy"]
  ]
  for (const [name, server, fault, kind] of silent) {
    await E(`missing: ${name}: fails at its ${DEADLINE_MS} ms deadline (${DEADLINE_MIN_MS}-${DEADLINE_MAX_MS} ms)`, () =>
      Effect.gen(function*() {
        const srv = yield* server()
        const c = yield* McpClient.connect({ url: srv.url, ...(kind === "legacy" ? { transport: "sse" } : {}), policy: { call: { timeout: DEADLINE_MS } } })
        srv.script(fault)
        const { error, ms } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: DEADLINE_MS }, outcome: "unknown", retryable: false })
        inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
        if (kind === "http") yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
        yield* untilE(() => srv.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        yield* released(c)
        return `${ms} ms`
      }))
  }
  await E(`missing: initialize never answered: discovery fails at its ${DEADLINE_MS} ms deadline, never cancelled`, () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      srv.script({ on: "initialize", kind: "headers-never-sent" })
      const { error, ms } = yield* failureOf(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: DEADLINE_MS } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "initialize", phase: "discovery", limits: { timeoutMs: DEADLINE_MS } })
      inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      yield* Effect.sleep("150 millis")
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

  // Forbidden replay: after every kind of failure the call arrived once and ran once.
  const streamableReplay = [
    ["a deadline", { kind: "delay", ms: 1_500 }, "DeadlineExceeded"],
    ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
    ["a 500", { kind: "status", status: 500 }, "UpstreamFailure"],
    ["a 502", { kind: "status", status: 502 }, "UpstreamFailure"],
    ["a 503", { kind: "status", status: 503 }, "UpstreamFailure"],
    ["a 401", { kind: "status", status: 401 }, "Unauthorized"],
    ["a 403", { kind: "status", status: 403 }, "Forbidden"],
    ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, "RemoteRefusal"],
    ["a stream closed early", { kind: "close-before-response" }, "ProtocolViolation"],
    ["invalid JSON", { kind: "invalid-json" }, "ProtocolViolation"],
    ["invalid UTF-8", { kind: "invalid-utf8" }, "ProtocolViolation"],
    ["a wrong content type", { kind: "wrong-content-type" }, "ProtocolViolation"]
  ]
  for (const [name, fault, tag] of streamableReplay) {
    await E(`replay: Streamable HTTP after ${name} (${tag}): counter exactly 1`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped()
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300, maxBytes: 1_000 } } })
        srv.script({ on: "tools/call", ...fault })
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        check(error.retryable === false, "retryable")
        yield* Effect.sleep("300 millis")
        check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
        yield* released(c)
      }))
  }
  await E("replay: Streamable HTTP after session expiry (SessionExpired): tools/call arrived once, no new session", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url })
      srv.expireSession()
      const { error } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "SessionExpired" })
      yield* Effect.sleep("300 millis")
      check(srv.rpcCalls("tools/call") === 1 && srv.rpcCalls("initialize") === 1, `tools/call ${srv.rpcCalls("tools/call")}, initialize ${srv.rpcCalls("initialize")}`)
      check(srv.counter() === 0, "the expired session ran the tool")
    }))
  const legacyReplay = [
    ["a deadline", { kind: "no-response" }, "DeadlineExceeded"],
    ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
    ["a 500 on the POST", { kind: "post-status", status: 500 }, "UpstreamFailure"],
    ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, "RemoteRefusal"],
    ["a closed stream", { kind: "close-stream" }, "TransportFailure"]
  ]
  for (const [name, fault, tag] of legacyReplay) {
    await E(`replay: legacy (auto fallback) after ${name} (${tag}): counter exactly 1, never re-sent over Streamable HTTP`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scopedLegacy()
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300, maxBytes: 1_000 } } })
        check(c.transport === "sse", `transport ${c.transport}`)
        srv.script({ on: "tools/call", ...fault })
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        yield* Effect.sleep("300 millis")
        check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
        // The only POSTs to the SSE URL are the negotiation's two probes (stateless, handshake).
        const probes = srv.requests.filter((r) => r.method === "POST" && r.url === "/sse").map((r) => r.rpcMethod)
        check(probes.join(",") === "server/discover,initialize", `re-sent over Streamable HTTP: ${probes.join(",")}`)
      }))
  }

  // Release.
  await E("release: closing the connection DELETEs the session exactly once", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const scope = yield* childScope
      const c = yield* McpClient.connect({ url: srv.url }).pipe(Scope.extend(scope))
      yield* c.callTool("increment")
      yield* Scope.close(scope, Exit.void)
      yield* untilE(() => srv.deletes() === 1, "DELETE")
      const after = yield* failureOf(c.callTool("increment"))
      expectError(after.error, { _tag: "TransportFailure", outcome: "not-sent" })
      check(srv.counter() === 1, `counter ${srv.counter()}`)
    }))
  await E("release: closing a legacy connection closes its GET stream", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scopedLegacy()
      const scope = yield* childScope
      yield* McpClient.connect({ url: srv.url, transport: "sse" }).pipe(Scope.extend(scope))
      check(srv.openStreams() === 1, "one stream")
      yield* Scope.close(scope, Exit.void)
      yield* untilE(() => srv.closedStreams() === 1 && srv.openStreams() === 0, "the server sees the GET stream closed")
    }))
}

// --- scenarios: the stateless era (2026-07-28) over Streamable HTTP, through each HTTP client layer --

const STATELESS = Testkit.MODERN_PROTOCOL_VERSION
/** What a handshake-era testkit server answers initialize with, for a client that asks the latest. */
const HANDSHAKE_LATEST = "2025-11-25"
/** A server of the stateless era only: no initialize, no session, no GET stream, no DELETE. */
const statelessServer = (options = {}) => Testkit.scoped({ era: "stateless", ...options })

/** A request of the stateless era as it must arrive: `_meta` with the revision, the metadata headers, no session. */
const expectStatelessWire = (request) => {
  const method = request.rpcMethod
  const meta = request.meta ?? {}
  check(meta[Testkit.META_PROTOCOL_VERSION] === STATELESS, `${method}: _meta revision ${JSON.stringify(meta[Testkit.META_PROTOCOL_VERSION])}`)
  check(typeof meta[Testkit.META_CLIENT_CAPABILITIES] === "object", `${method}: no _meta clientCapabilities`)
  check(request.headers["mcp-protocol-version"] === STATELESS, `${method}: MCP-Protocol-Version ${request.headers["mcp-protocol-version"]}`)
  check(request.headers["mcp-method"] === method, `${method}: Mcp-Method ${request.headers["mcp-method"]}`)
  check(request.headers["mcp-session-id"] === undefined, `${method}: a session id was sent`)
}
/** Over HTTP the stateless era cancels by closing the answer stream: no notice may follow it. */
const noCancelNotice = (srv) =>
  Effect.gen(function*() {
    yield* Effect.sleep("150 millis")
    check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP in the stateless era")
  })
/** The discovery's stages as `stage:era:outcome`. */
const stagesOf = (connection) => connection.discovery.map((s) => `${s.stage}:${s.attempt?.era ?? "-"}:${s.outcome}`).join(",")
/** No canary in what the stateless era adds to a request (`_meta`, `Mcp-*` headers): they mirror the method and arguments only. */
const expectCleanMetadata = (srv) => {
  for (const r of srv.requests) {
    const added = JSON.stringify([r.meta ?? {}, Object.entries(r.headers).filter(([name]) => name.startsWith("mcp-"))])
    check(!CANARY_IN.test(added), `${r.rpcMethod}: a canary in _meta or an Mcp-* header`)
  }
}
const CANARY_IN = /CANARY|canaryuser/

/** A loopback origin that answers every request with a 307 to `location`, counting what reaches it. */
const redirectingServer = (location) =>
  Effect.acquireRelease(
    Effect.async((resume) => {
      let hits = 0
      const server = createServer((req, res) => {
        hits += 1
        req.resume()
        res.writeHead(307, { location, "content-type": "text/plain" })
        res.end("moved")
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${server.address().port}/mcp`, hits: () => hits })))
    }),
    ({ server }) =>
      Effect.async((resume) => {
        server.closeAllConnections?.()
        server.close(() => resume(Effect.void))
      })
  )

const statelessHttpScenarios = async (label, layer) => {
  const E = (name, body, timeoutMs) => effectScenario(`Effect[${label}] 2026 ${name}`, layer, body, timeoutMs)

  await E("smoke: server/discover then tools/list, no initialize, no session, no GET, no DELETE; _meta and Mcp-* headers on every request", () =>
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
      check(srv.requests.every((r) => r.method === "POST"), `non-POST requests: ${srv.requests.filter((r) => r.method !== "POST").map((r) => r.method).join()}`)
      for (const r of srv.requests) expectStatelessWire(r)
      const region = srv.requests.find((r) => r.json?.params?.name === "region_query")
      check(region.headers["mcp-name"] === "region_query", `Mcp-Name ${region.headers["mcp-name"]}`)
      check(region.headers["mcp-param-region"] === "eu-west", `Mcp-Param-Region ${region.headers["mcp-param-region"]}`)
      return `${srv.requests.length} POSTs`
    }))

  // Negotiation under the one discovery deadline.
  await E("negotiation: default revisions against a handshake-era server: server/discover refused, then initialize: 2025-11-25", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped()
      const c = yield* McpClient.connect({ url: srv.url })
      check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
      check(srv.rpcCalls("server/discover") === 1 && srv.rpcCalls("initialize") === 1, `discover ${srv.rpcCalls("server/discover")}, initialize ${srv.rpcCalls("initialize")}`)
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
      check(srv.rpcCalls("server/discover") === 1 && srv.rpcCalls("initialize") === 1, `discover ${srv.rpcCalls("server/discover")}, initialize ${srv.rpcCalls("initialize")}`)
    }))

  // Opposite phase overrides.
  await E("overrides: short discovery (300 ms) + long call (5 s): a stalled server/discover fails discovery at 300 ms, no fallback", () =>
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
  await E("overrides: short discovery (300 ms) + long call (5 s): a 500 ms tools/call succeeds", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      const c = yield* McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } })
      srv.script({ on: "tools/call", kind: "delay", ms: 500 })
      const started = Date.now()
      check(textOf(yield* c.callTool("increment")) === "1", "increment")
      return `${Date.now() - started} ms`
    }))
  await E("overrides: long discovery (5 s) + short call (300 ms): a 500 ms server/discover passes, a stalled tools/call fails at 300 ms, the stream closed, no notice", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      srv.script({ on: "server/discover", kind: "delay", ms: 500 })
      const c = yield* McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 5_000 }, call: { timeout: 300 } } })
      check(c.protocolVersion === STATELESS, `protocolVersion ${c.protocolVersion}`)
      srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: 300 }, outcome: "unknown", retryable: false })
      inRange(ms, 250, 1_300, "call deadline")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees tools/call closed")
      yield* noCancelNotice(srv)
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      yield* released(c)
      return `${ms} ms`
    }))

  // Exact byte boundaries, both phases, JSON and SSE answers.
  for (const mode of ["json", "sse"]) {
    for (const bytes of [CEILING - 1, CEILING, CEILING + 1]) {
      const verdict = bytes <= CEILING ? "accepted" : "refused"
      await E(`bytes: Streamable ${mode.toUpperCase()} call answer of ${bytes} B, call ceiling ${CEILING}: ${verdict}`, () =>
        Effect.gen(function*() {
          const srv = yield* statelessServer({ mode })
          // The discovery ceiling is lower than the call's: only the call ceiling may apply here.
          const c = yield* McpClient.connect({ url: srv.url, policy: { discovery: { maxBytes: 2_000 }, call: { maxBytes: CEILING } } })
          srv.script({ on: "tools/call", kind: "exact-size", bytes, chunkSize: CHUNK, as: mode })
          const exit = yield* Effect.exit(c.callTool("increment"))
          if (bytes <= CEILING) {
            check(Exit.isSuccess(exit), `refused: ${Exit.isFailure(exit) ? describe(Cause.squash(exit.cause)) : ""}`)
            check(textOf(exit.value).includes(MULTIBYTE), "the multi-byte padding decoded intact")
          } else {
            check(Exit.isFailure(exit), "accepted")
            expectError(Cause.squash(exit.cause), {
              _tag: "ByteCeilingExceeded",
              stage: "call",
              phase: "call",
              limits: { maxBytes: CEILING },
              observedBytes: CEILING + 1,
              outcome: "applied",
              retryable: false
            })
          }
          check(srv.counter() === 1, `counter ${srv.counter()}`)
          yield* released(c)
          check(textOf(yield* c.callTool("echo", { text: "on" })) === "on", "the next call works")
          return Exit.isFailure(exit) ? summarize(Cause.squash(exit.cause)) : ""
        }))
      await E(`bytes: Streamable ${mode.toUpperCase()} tools/list of ${bytes} B, discovery ceiling ${CEILING}: ${verdict}`, () =>
        Effect.gen(function*() {
          const srv = yield* statelessServer({ mode })
          srv.script({ on: "tools/list", kind: "exact-size", bytes, chunkSize: 5, as: mode })
          // The call ceiling is far lower: only the discovery ceiling may apply here.
          const exit = yield* Effect.exit(McpClient.connect({
            url: srv.url,
            policy: { discovery: { maxBytes: CEILING }, call: { maxBytes: 10 }, unsolicited: { maxBytes: 100 } }
          }))
          if (bytes <= CEILING) {
            check(Exit.isSuccess(exit), `refused: ${Exit.isFailure(exit) ? describe(Cause.squash(exit.cause)) : ""}`)
            check(exit.value.protocolVersion === STATELESS, `protocolVersion ${exit.value.protocolVersion}`)
            check((exit.value.tools[0].description ?? "").includes(MULTIBYTE), "the multi-byte padding decoded intact")
          } else {
            check(Exit.isFailure(exit), "accepted")
            expectError(Cause.squash(exit.cause), {
              _tag: "ByteCeilingExceeded",
              stage: "list-tools",
              phase: "discovery",
              limits: { maxBytes: CEILING },
              observedBytes: CEILING + 1
            })
            // A refused answer never falls back to another era, and there is no session to end.
            check(srv.rpcCalls("initialize") === 0 && srv.deletes() === 0, `initialize ${srv.rpcCalls("initialize")}, DELETEs ${srv.deletes()}`)
          }
          return Exit.isFailure(exit) ? summarize(Cause.squash(exit.cause)) : ""
        }))
    }
  }

  // Caller interruption against deadline: over HTTP the signal is the closed stream, never a notice.
  await E("abort: Effect interruption of a call is an interruption (not a deadline); the server sees it closed; no notifications/cancelled", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 10_000 } } })
      srv.script({ on: "tools/call", kind: "headers-never-sent" })
      const fiber = yield* Effect.fork(c.callTool("increment"))
      yield* untilE(() => srv.rpcCalls("tools/call") === 1, "the call arrived")
      const started = Date.now()
      const exit = yield* Fiber.interrupt(fiber)
      const ms = Date.now() - started
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      check(ms < 1_000, `interruption took ${ms} ms`)
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      yield* noCancelNotice(srv)
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      yield* released(c)
      check(textOf(yield* c.callTool("increment")) === "2", "the next call works")
      return `${ms} ms`
    }))
  await E("abort: Effect interruption during server/discover is an interruption; the request is closed, nothing else sent", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      srv.script({ on: "server/discover", kind: "headers-never-sent" })
      const fiber = yield* Effect.fork(Effect.scoped(McpClient.connect({ url: srv.url, policy: { discovery: { timeout: 10_000 } } })))
      yield* untilE(() => srv.rpcCalls("server/discover") === 1, "server/discover arrived")
      const exit = yield* Fiber.interrupt(fiber)
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
      yield* noCancelNotice(srv)
      check(srv.requests.length === 1, `${srv.requests.length} requests`)
    }))

  // Credential fences.
  for (const [name, fault, tag] of credentialFaults.filter(([name]) => name !== "deadline")) {
    await E(`credentials: no canary in a ${name} failure (${tag}); none in _meta or the Mcp-* headers`, () =>
      Effect.gen(function*() {
        const srv = yield* statelessServer()
        const c = yield* McpClient.connect({
          url: withCanaries(srv.url),
          headers: { Authorization: `Bearer ${canaries.header}`, "X-Api-Key": canaries.header },
          policy: { call: { timeout: DEADLINE_MS, maxBytes: 1_000 } }
        })
        check(c.protocolVersion === STATELESS, `protocolVersion ${c.protocolVersion}`)
        srv.script(fault)
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        expectClean(error)
        const call = srv.requests.find((r) => r.rpcMethod === "tools/call")
        check(call.headers["authorization"] === `Bearer ${canaries.header}`, "the header reached the configured origin")
        check(call.url.includes(`token=${canaries.query}`), "the query reached the configured origin")
        expectCleanMetadata(srv)
        return summarize(error)
      }))
  }
  await E("credentials: URL userinfo becomes Basic authorization on every request, never sent in the URL", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      const c = yield* McpClient.connect({ url: withCanaries(srv.url) })
      yield* c.callTool("increment")
      const expected = `Basic ${btoa(`${canaries.user}:${canaries.password}`)}`
      check(srv.requests.every((r) => r.headers["authorization"] === expected), "Basic header on every request")
      check(!srv.requests.some((r) => r.url.includes(canaries.password) || r.url.includes(canaries.user)), "userinfo in a URL")
      expectCleanMetadata(srv)
    }))
  await E("credentials: a server/discover refusal echoing the secrets (revisions [2026-07-28]) is redacted", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      srv.script({ on: "server/discover", kind: "jsonrpc-error", code: -32600, message: `token ${canaries.query} and ${canaries.header} rejected` })
      const { error } = yield* failureOf(McpClient.connect({ url: withCanaries(srv.url), headers: { authorization: canaries.header }, revisions: [STATELESS] }))
      expectError(error, { _tag: "RemoteRefusal", stage: "discover" })
      expectClean(error)
      check(error.remoteMessage.includes("[redacted]"), "redacted marker")
      return error.remoteMessage
    }))
  await E("credentials: a 307 to another origin is not followed; nothing reaches it", () =>
    Effect.gen(function*() {
      const foreign = yield* statelessServer()
      const origin = yield* redirectingServer(foreign.url)
      const { error } = yield* failureOf(McpClient.connect({ url: withCanaries(origin.url), headers: { authorization: `Bearer ${canaries.header}` } }))
      expectError(error, { _tag: "UpstreamFailure", stage: "discover", status: 307 })
      expectClean(error)
      yield* Effect.sleep("150 millis")
      check(origin.hits() === 1, `${origin.hits()} requests to the configured origin`)
      check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the other origin`)
      return summarize(error)
    }))

  // Missing responses fail promptly; a server that never answers fails at its deadline.
  const prompt = [
    ["Streamable JSON without the id", { mode: "json" }, { kind: "wrong-id" }],
    ["Streamable SSE ending without the response", { mode: "sse" }, { kind: "close-before-response" }],
    ["Streamable SSE frame never terminated", { mode: "sse" }, { kind: "unterminated-frame" }]
  ]
  for (const [name, serverOptions, fault] of prompt) {
    await E(`missing: ${name} fails promptly (< ${PROMPT_MS} ms of a 30 s deadline)`, () =>
      Effect.gen(function*() {
        const srv = yield* statelessServer(serverOptions)
        const c = yield* McpClient.connect({ url: srv.url, policy: { timeout: 30_000 } })
        srv.script({ on: "tools/call", ...fault })
        const { error, ms } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: "ProtocolViolation", reason: "missing-response", stage: "call" })
        check(ms < PROMPT_MS, `${ms} ms`)
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        yield* released(c)
        return `${ms} ms`
      }))
  }
  // (A JSON answer that never comes: the call-deadline override above.)
  const silent = [["Streamable SSE, response event never sent", { mode: "sse" }, { kind: "response-never-sent", as: "sse" }]]
  for (const [name, serverOptions, fault] of silent) {
    await E(`missing: ${name}: fails at its ${DEADLINE_MS} ms deadline (${DEADLINE_MIN_MS}-${DEADLINE_MAX_MS} ms), the stream closed, no notice`, () =>
      Effect.gen(function*() {
        const srv = yield* statelessServer(serverOptions)
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: DEADLINE_MS } } })
        srv.script({ on: "tools/call", ...fault })
        const { error, ms } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: DEADLINE_MS }, outcome: "unknown", retryable: false })
        inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
        yield* untilE(() => srv.abortedResponses() === 1, "the server sees the request closed")
        yield* noCancelNotice(srv)
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        yield* released(c)
        return `${ms} ms`
      }))
  }

  // Client capabilities: an input_required round answered by the caller's handler.
  await E("handlers: ask_name's input_required round is answered by the elicitation handler (a new request, requestState echoed)", () =>
    Effect.gen(function*() {
      const srv = yield* statelessServer()
      const asked = []
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
      const calls = srv.requests.filter((r) => r.rpcMethod === "tools/call")
      check(calls.length === 2 && srv.inputRounds() === 1 && asked.length === 1, `${calls.length} tools/call, ${srv.inputRounds()} rounds, ${asked.length} asked`)
      check(calls[0].rpcId !== calls[1].rpcId, "the second round reused the id")
      check(typeof calls[1].json.params.requestState === "string", "requestState not echoed")
      check(typeof calls[0].meta[Testkit.META_CLIENT_CAPABILITIES].elicitation === "object", "elicitation not declared in _meta")
    }))

  // Forbidden replay: the call arrived once and ran once, whatever the failure; a -32022 or an
  // input_required round is never an occasion to send the call again. (After a deadline, a byte
  // ceiling or an early end the scenarios above check the counter.) What the era does after a
  // failure does not depend on the HTTP client: the first layer only, to keep the run short.
  if (label !== httpLayers[0][0]) return
  const replay = [
    ["a 500", { kind: "status", status: 500 }, { _tag: "UpstreamFailure" }],
    ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, { _tag: "RemoteRefusal" }],
    ["a -32022 naming another revision", { kind: "unsupported-version", supported: [HANDSHAKE_LATEST] }, { _tag: "RemoteRefusal", code: -32022 }],
    ["an unknown resultType", { kind: "result-type", value: "bogus" }, { _tag: "ProtocolViolation", reason: "unknown-result-type" }],
    ["input_required without a handler", { kind: "input-required" }, { _tag: "ProtocolViolation", reason: "undeclared-capability" }]
  ]
  for (const [name, fault, expected] of replay) {
    await E(`replay: after ${name} (${expected._tag}): counter exactly 1, tools/call arrived once`, () =>
      Effect.gen(function*() {
        const srv = yield* statelessServer()
        const c = yield* McpClient.connect({ url: srv.url, policy: { call: { timeout: 300, maxBytes: 1_000 } } })
        srv.script({ on: "tools/call", ...fault })
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, expected)
        check(error.retryable === false, "retryable")
        yield* Effect.sleep("200 millis")
        check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
        check(srv.rpcCalls("initialize") === 0 && srv.rpcCalls("server/discover") === 1, "discovery was run again")
        yield* released(c)
        return summarize(error)
      }))
  }
}

// --- credential fixtures -----------------------------------------------------------------------

const canaries = {
  header: "CANARY-HEADER-7f3a9c",
  user: "canaryuser8b2d",
  password: "CANARY-PASS-41e6",
  query: "CANARY-QUERY-d09b",
  env: "CANARY-ENV-5c1e"
}
const withCanaries = (url) => {
  const u = new URL(url)
  u.username = canaries.user
  u.password = canaries.password
  u.searchParams.set("token", canaries.query)
  return u.href
}
const forbidden = [...Object.values(canaries), "127.0.0.1", "http://", "/mcp", "/sse", "authorization", "x-api-key", "Bearer"]
/** No secret, URL, header name or stack in any public view of an error. */
const expectClean = (error) => {
  const views = [
    String(error),
    JSON.stringify(error),
    error.message ?? "",
    JSON.stringify({ ...error }),
    Object.values(error).map((v) => JSON.stringify(v)).join(" "),
    (error.stack ?? "").split("\n")[0]
  ]
  for (const view of views) {
    for (const secret of forbidden) check(!view.includes(secret), `a public view contains ${secret.startsWith("CANARY") || secret.startsWith("canary") ? "a canary" : JSON.stringify(secret)}`)
  }
  check(!Object.keys(error).includes("cause") && !Object.keys(error).includes("stack"), "cause or stack is enumerable")
}
const credentialFaults = [
  ["401", { on: "tools/call", kind: "status", status: 401, body: `no ${canaries.header}` }, "Unauthorized"],
  ["403", { on: "tools/call", kind: "status", status: 403 }, "Forbidden"],
  ["500 echoing a secret", { on: "tools/call", kind: "status", status: 500, body: `stack at ${canaries.query}` }, "UpstreamFailure"],
  ["JSON-RPC error echoing the secrets", {
    on: "tools/call",
    kind: "jsonrpc-error",
    code: -32000,
    message: `denied for Bearer ${canaries.header} at http://${canaries.user}:${canaries.password}@127.0.0.1/mcp?token=${canaries.query}`
  }, "RemoteRefusal"],
  ["byte ceiling", { on: "tools/call", kind: "exact-size", bytes: 5_000 }, "ByteCeilingExceeded"],
  ["deadline", { on: "tools/call", kind: "headers-never-sent" }, "DeadlineExceeded"],
  ["invalid JSON", { on: "tools/call", kind: "invalid-json" }, "ProtocolViolation"],
  ["missing response", { on: "tools/call", kind: "wrong-id" }, "ProtocolViolation"]
]

// --- scenarios: stdio (the child runs under this same runtime) ---------------------------------

const stdioScenarios = async () => {
  const S = (name, body, timeoutMs) => effectScenario(`Effect stdio ${name}`, stdioPlatform, body, timeoutMs)

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
  // 1 s: the spawn, the stateless probe (refused), initialize and initialized come first.
  await S("overrides: short discovery (1 s) + long call: a slow tools/list fails at 1 s; the child is gone", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "tools/list", kind: "delay", ms: 4_000 }] })
      const { error, ms } = yield* failureOf(connectStdio(f, { discovery: { timeout: 1_000 }, call: { timeout: 5_000 } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "list-tools", phase: "discovery", limits: { timeoutMs: 1_000 } })
      inRange(ms, 950, 2_500, "discovery deadline")
      yield* untilE(() => !f.isAlive(), "the child is gone", 1_000)
      return `${ms} ms`
    }))
  await S("overrides: long discovery (5 s) + short call (300 ms): slow discovery passes, the call fails at 300 ms", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "initialize", kind: "delay", ms: 700 }, { on: "tools/call", kind: "delay", ms: 2_000 }] })
      const scope = yield* childScope
      const c = yield* connectStdio(f, { discovery: { timeout: 5_000 }, call: { timeout: 300 } }).pipe(Scope.extend(scope))
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: 300 } })
      inRange(ms, 250, 1_300, "call deadline")
      yield* released(c)
      yield* closeAndCheckChild(scope, f)
      check(f.counter() === 1, `counter ${f.counter()}`)
      return `${ms} ms`
    }))
  for (const bytes of [CEILING - 1, CEILING, CEILING + 1]) {
    const verdict = bytes <= CEILING ? "accepted" : "refused"
    await S(`bytes: call answer line of ${bytes} B (newline included), call ceiling ${CEILING}: ${verdict}`, () =>
      Effect.gen(function*() {
        const f = yield* stdioFixture({ faults: [{ on: "tools/call", kind: "exact-size", bytes, chunkSize: CHUNK }] })
        const scope = yield* childScope
        const c = yield* connectStdio(f, { discovery: { maxBytes: 2_000 }, call: { maxBytes: CEILING } }).pipe(Scope.extend(scope))
        const exit = yield* Effect.exit(c.callTool("increment"))
        if (bytes <= CEILING) {
          check(Exit.isSuccess(exit), `refused: ${Exit.isFailure(exit) ? describe(Cause.squash(exit.cause)) : ""}`)
          check(textOf(exit.value).includes(MULTIBYTE), "the multi-byte padding decoded intact")
        } else {
          check(Exit.isFailure(exit), "accepted")
          expectError(Cause.squash(exit.cause), {
            _tag: "ByteCeilingExceeded",
            stage: "call",
            limits: { maxBytes: CEILING },
            observedBytes: CEILING + 1,
            outcome: "applied"
          })
        }
        check(f.counter() === 1, `counter ${f.counter()}`)
        check(textOf(yield* c.callTool("echo", { text: "on" })) === "on", "the stream goes on")
        yield* closeAndCheckChild(scope, f)
        return Exit.isFailure(exit) ? summarize(Cause.squash(exit.cause)) : ""
      }))
    await S(`bytes: tools/list line of ${bytes} B, discovery ceiling ${CEILING}: ${verdict}`, () =>
      Effect.gen(function*() {
        const f = yield* stdioFixture({ faults: [{ on: "tools/list", kind: "exact-size", bytes, chunkSize: 5 }] })
        const scope = yield* childScope
        const exit = yield* Effect.exit(
          connectStdio(f, { discovery: { maxBytes: CEILING }, call: { maxBytes: 10 }, unsolicited: { maxBytes: 100 } }).pipe(Scope.extend(scope))
        )
        if (bytes <= CEILING) {
          check(Exit.isSuccess(exit), `refused: ${Exit.isFailure(exit) ? describe(Cause.squash(exit.cause)) : ""}`)
          check((exit.value.tools[0].description ?? "").includes(MULTIBYTE), "the multi-byte padding decoded intact")
          yield* closeAndCheckChild(scope, f)
        } else {
          check(Exit.isFailure(exit), "accepted")
          expectError(Cause.squash(exit.cause), {
            _tag: "ByteCeilingExceeded",
            stage: "list-tools",
            phase: "discovery",
            limits: { maxBytes: CEILING },
            observedBytes: CEILING + 1
          })
          yield* untilE(() => !f.isAlive(), "the child is gone after a failed discovery", 1_000)
        }
        return Exit.isFailure(exit) ? summarize(Cause.squash(exit.cause)) : ""
      }))
  }
  await S("bytes: a never-ending line is refused while reading; the child is released", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "tools/call", kind: "never-ending-line" }] })
      const c = yield* connectStdio(f, { call: { maxBytes: 256 * 1024 }, unsolicited: { maxBytes: 1024 } })
      const { error } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "ByteCeilingExceeded", stage: "call", limits: { maxBytes: 256 * 1024 } })
      check(error.observedBytes > 256 * 1024, `observed ${error.observedBytes}`)
      yield* untilE(() => !f.isAlive(), "the child is gone", 2_000)
      check(f.counter() === 1, `counter ${f.counter()}`)
      yield* released(c)
      return `observed ${error.observedBytes}`
    }))
  await S("abort: an interrupted call is an interruption; notifications/cancelled reaches the child", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "tools/call", kind: "never-answer" }] })
      const scope = yield* childScope
      const c = yield* connectStdio(f, { call: { timeout: 10_000 } }).pipe(Scope.extend(scope))
      const fiber = yield* Effect.fork(c.callTool("increment"))
      yield* untilE(() => f.rpcCalls("tools/call") === 1, "the call arrived")
      const exit = yield* Fiber.interrupt(fiber)
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      yield* untilE(() => f.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      check(f.counter() === 1, `counter ${f.counter()}`)
      yield* released(c)
      yield* closeAndCheckChild(scope, f)
    }))
  await S(`missing: a child that exits mid-call fails the call promptly (< ${PROMPT_MS} ms)`, () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "tools/call", kind: "exit", code: 7 }] })
      const c = yield* connectStdio(f, { timeout: 30_000 })
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "TransportFailure", reason: "process-exited", exitCode: 7, stage: "call", outcome: "unknown" })
      check(ms < PROMPT_MS, `${ms} ms`)
      check(f.counter() === 1, `counter ${f.counter()}`)
      yield* released(c)
      return `${ms} ms`
    }))
  await S(`missing: a child that never answers a call fails at its ${DEADLINE_MS} ms deadline (${DEADLINE_MIN_MS}-${DEADLINE_MAX_MS} ms)`, () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "tools/call", kind: "never-answer" }] })
      const scope = yield* childScope
      const c = yield* connectStdio(f, { call: { timeout: DEADLINE_MS } }).pipe(Scope.extend(scope))
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "DeadlineExceeded", stage: "call", limits: { timeoutMs: DEADLINE_MS } })
      inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
      yield* untilE(() => f.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      yield* closeAndCheckChild(scope, f)
      check(f.counter() === 1, `counter ${f.counter()}`)
      return `${ms} ms`
    }))
  await S(`missing: initialize never answered: discovery fails at its ${DEADLINE_MS} ms deadline; the child is gone`, () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "initialize", kind: "never-answer" }] })
      const { error, ms } = yield* failureOf(connectStdio(f, { discovery: { timeout: DEADLINE_MS } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "initialize" })
      inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
      yield* untilE(() => !f.isAlive(), "the child is gone", 1_000)
      check(f.rpcCalls("notifications/cancelled") === 0, "initialize was cancelled")
      return `${ms} ms`
    }))
  const stdioReplay = [
    ["a deadline", { kind: "never-answer" }, "DeadlineExceeded"],
    ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, "ByteCeilingExceeded"],
    ["an exit", { kind: "exit", code: 3 }, "TransportFailure"],
    ["JSON that is not JSON-RPC", { kind: "not-jsonrpc" }, "ProtocolViolation"],
    ["invalid UTF-8", { kind: "invalid-utf8" }, "ProtocolViolation"],
    ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, "RemoteRefusal"],
    // A line that starts like a JSON message but does not parse is a protocol violation (a banner,
    // a line that is not JSON at all, is dropped instead: README, stdio framing).
    ["a truncated JSON line", { kind: "invalid-json" }, "ProtocolViolation"]
  ]
  for (const [name, fault, tag] of stdioReplay) {
    await S(`replay: after ${name} (${tag}): counter exactly 1`, () =>
      Effect.gen(function*() {
        const f = yield* stdioFixture({ faults: [{ on: "tools/call", ...fault }] })
        const scope = yield* childScope
        const c = yield* connectStdio(f, { call: { timeout: 300, maxBytes: 1_000 } }).pipe(Scope.extend(scope))
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        yield* Effect.sleep("300 millis")
        check(f.counter() === 1 && f.rpcCalls("tools/call") === 1, `counter ${f.counter()}, tools/call ${f.rpcCalls("tools/call")}`)
        yield* closeAndCheckChild(scope, f)
      }))
  }
  await S("credentials: a spawn failure names neither the path nor the arguments", () =>
    Effect.gen(function*() {
      const { error } = yield* failureOf(McpClient.connectStdio({ command: `/nonexistent/${canaries.user}/mcp-server`, args: [`--token=${canaries.query}`] }))
      expectError(error, { _tag: "TransportFailure", stage: "connect", reason: "spawn-failed", outcome: "not-sent" })
      expectClean(error)
      check(!JSON.stringify(error).includes("nonexistent"), "the path")
    }))
  await S("credentials: a refusal echoing an env secret is redacted", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: `bad key ${canaries.env}` }] })
      const scope = yield* childScope
      const c = yield* McpClient.connectStdio({ command: f.command, args: f.args, env: { ...f.env, API_KEY: canaries.env } }).pipe(Scope.extend(scope))
      const { error } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "RemoteRefusal" })
      expectClean(error)
      yield* closeAndCheckChild(scope, f)
      return error.remoteMessage
    }))
  const streamFailures = [
    ["invalid UTF-8 on stdout", { on: "tools/call", kind: "invalid-utf8" }, {}, "ProtocolViolation"],
    ["a line past the shared-stream bound", { on: "tools/call", kind: "never-ending-line" }, { call: { maxBytes: 64 * 1024 }, unsolicited: { maxBytes: 1024 } }, "ByteCeilingExceeded"]
  ]
  for (const [name, fault, policy, tag] of streamFailures) {
    await S(`release: after ${name} (${tag}), closing at once leaves no child, even one that ignores SIGTERM (gone within 3 x releaseTimeout 300 ms + 500 ms)`, () =>
      Effect.gen(function*() {
        const f = yield* stdioFixture({ faults: [{ kind: "ignore-sigterm" }, fault] })
        const scope = yield* childScope
        const c = yield* connectStdio(f, { ...policy, releaseTimeout: 300 }).pipe(Scope.extend(scope))
        const { error } = yield* failureOf(c.callTool("increment"))
        expectError(error, { _tag: tag })
        const pid = f.pid()
        if (pid !== undefined) childPids.add(pid)
        const started = Date.now()
        yield* Scope.close(scope, Exit.void)
        const closedMs = Date.now() - started
        yield* untilE(() => !f.isAlive(), `the child is gone (the connection closed in ${closedMs} ms)`, 1_400)
        return `closed in ${closedMs} ms, child gone ${Date.now() - started} ms after close`
      }))
  }
  await S("release: a child that ignores SIGTERM is killed within 3 x releaseTimeout (300 ms): 550-1400 ms", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ faults: [{ kind: "ignore-sigterm" }] })
      const scope = yield* childScope
      yield* connectStdio(f, { releaseTimeout: 300 }).pipe(Scope.extend(scope))
      const started = Date.now()
      yield* closeAndCheckChild(scope, f)
      const ms = Date.now() - started
      inRange(ms, 550, 1_400, "the release")
      return `${ms} ms`
    }))
}

// --- scenarios: the Promise API ----------------------------------------------------------------

const promiseScenarios = async () => {
  const P = (name, body, timeoutMs) => scenario(`Promise ${name}`, body, timeoutMs)
  await P("smoke: connects, calls and closes (one DELETE, even when closed twice)", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      check(textOf(await c.callTool("add", { a: 1, b: 2 })) === "3", "add")
      await Promise.all([c.close(), c.close()])
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
    }))
  await P("overrides: short discovery (300 ms) + long call: slow tools/list rejects DeadlineExceeded at 300 ms", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      srv.script({ on: "tools/list", kind: "delay", ms: 2_000 })
      const { error, ms } = await rejection(connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "list-tools", limits: { timeoutMs: 300 } })
      inRange(ms, 250, 1_300, "discovery deadline")
      return `${ms} ms`
    }))
  await P("overrides: long discovery (5 s) + short call (300 ms): slow discovery passes, the call rejects at 300 ms", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      srv.script({ on: "initialize", kind: "delay", ms: 700 })
      const c = await connect({ url: srv.url, policy: { discovery: { timeout: 5_000 }, call: { timeout: 300 } } })
      try {
        srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
        const { error, ms } = await rejection(c.callTool("increment"))
        expectError(error, { _tag: "DeadlineExceeded", stage: "call", limits: { timeoutMs: 300 } })
        inRange(ms, 250, 1_300, "call deadline")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${ms} ms`
      } finally {
        await c.close()
      }
    }))
  await P("abort: an aborted AbortSignal rejects with its own reason (not a deadline); the server sees it closed", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url, policy: { call: { timeout: 10_000 } } })
      try {
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const controller = new AbortController()
        const reason = new Error("the user went away")
        const pending = c.callTool("increment", {}, { signal: controller.signal })
        await until(() => srv.rpcCalls("tools/call") === 1, "the call arrived")
        controller.abort(reason)
        const { error, ms } = await rejection(pending)
        check(error === reason, `rejected with ${describe(error)}`)
        check(ms < 1_000, `${ms} ms`)
        await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
        await until(() => srv.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${ms} ms`
      } finally {
        await c.close()
      }
    }))
  await P(`abort: with a signal that never aborts, a silent server rejects DeadlineExceeded at ${DEADLINE_MS} ms`, () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      try {
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const controller = new AbortController()
        const { error, ms } = await rejection(c.callTool("increment", {}, { signal: controller.signal, timeout: DEADLINE_MS }))
        expectError(error, { _tag: "DeadlineExceeded", stage: "call", limits: { timeoutMs: DEADLINE_MS } })
        inRange(ms, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the deadline")
        await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${ms} ms`
      } finally {
        await c.close()
      }
    }))
  await P("abort: an already-aborted signal rejects with its reason and sends nothing", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      try {
        const before = srv.requests.length
        const { error } = await rejection(c.callTool("increment", {}, { signal: AbortSignal.abort("stop") }))
        check(error === "stop", `rejected with ${describe(error)}`)
        check(srv.requests.length === before, "a request was sent")
      } finally {
        await c.close()
      }
    }))
  await P("abort: an abort during discovery rejects with the reason and releases the session (DELETE)", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      srv.script({ on: "tools/list", kind: "headers-never-sent" })
      const controller = new AbortController()
      const reason = new DOMException("aborted by the qualification", "AbortError")
      const pending = connect({ url: srv.url, signal: controller.signal })
      await until(() => srv.rpcCalls("tools/list") === 1, "tools/list arrived")
      controller.abort(reason)
      const { error } = await rejection(pending)
      check(error === reason, `rejected with ${describe(error)}`)
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      await until(() => srv.deletes() === 1, "DELETE")
    }))
  await P("abort: legacy, an aborted call rejects with the reason; notifications/cancelled reaches the endpoint", () =>
    withServer(() => Testkit.startLegacyServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      try {
        check(c.transport === "sse", `transport ${c.transport}`)
        srv.script({ on: "tools/call", kind: "no-response" })
        const controller = new AbortController()
        const reason = new Error("stop")
        const pending = c.callTool("increment", {}, { signal: controller.signal })
        await until(() => srv.rpcCalls("tools/call") === 1, "the call arrived")
        controller.abort(reason)
        const { error } = await rejection(pending)
        check(error === reason, `rejected with ${describe(error)}`)
        await until(() => srv.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
      } finally {
        await c.close()
      }
      await until(() => srv.closedStreams() === 1, "the GET stream is closed on close()")
    }))
  await P("abort: stdio, an abort during discovery rejects with the reason; the child is gone", async () => {
    const f = Testkit.makeStdioFixture({ faults: [{ on: "tools/list", kind: "never-answer" }] })
    try {
      const controller = new AbortController()
      const reason = new Error("stop")
      const pending = connect({ stdio: { command: f.command, args: f.args }, signal: controller.signal })
      await until(() => f.rpcCalls("tools/list") === 1, "tools/list arrived")
      if (f.pid() !== undefined) childPids.add(f.pid())
      controller.abort(reason)
      const { error } = await rejection(pending)
      check(error === reason, `rejected with ${describe(error)}`)
      await until(() => !f.isAlive(), "the child is gone", 1_000)
    } finally {
      f.cleanup()
    }
  })
  await P("credentials: URL userinfo and query canaries appear in no rejection", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: withCanaries(srv.url), headers: { "X-Api-Key": canaries.header } })
      try {
        srv.script({ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: `key ${canaries.header} pass ${canaries.password} q ${canaries.query}` })
        const { error } = await rejection(c.callTool("increment"))
        expectError(error, { _tag: "RemoteRefusal" })
        expectClean(error)
        return error.remoteMessage
      } finally {
        await c.close()
      }
    }))
  await P("credentials: a foreign legacy endpoint rejects; nothing reaches the foreign origin", async () => {
    const srv = await Testkit.startLegacyServer()
    const foreign = await Testkit.startServer()
    try {
      srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
      const { error } = await rejection(connect({ url: withCanaries(srv.url), headers: { authorization: `Bearer ${canaries.header}` } }))
      expectError(error, { _tag: "ProtocolViolation", reason: "foreign-endpoint" })
      expectClean(error)
      await sleep(150)
      check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the foreign origin`)
    } finally {
      await Promise.all([srv.close(), foreign.close()])
    }
  })
  await P("release: stdio close() ends the child", async () => {
    const f = Testkit.makeStdioFixture()
    try {
      const c = await connect({ stdio: { command: f.command, args: f.args } })
      check(c.transport === "stdio", `transport ${c.transport}`)
      check(textOf(await c.callTool("increment")) === "1", "increment")
      if (f.pid() !== undefined) childPids.add(f.pid())
      await c.close()
      await until(() => !f.isAlive(), "the child is gone", 250)
    } finally {
      f.cleanup()
    }
  })
}

// --- scenarios: the stateless era over stdio (the child runs under this same runtime) ------------

const statelessStdioScenarios = async () => {
  const S = (name, body, timeoutMs) => effectScenario(`Effect stdio 2026 ${name}`, stdioPlatform, body, timeoutMs)
  const connectWith = (f, options = {}) => McpClient.connectStdio({ command: f.command, args: f.args, env: f.env, ...options })

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
  await S("negotiation: a handshake-era child silent on server/discover: the probe waits half the 1.5 s discovery, then initialize on the same child", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ silentOnUnknown: true })
      const scope = yield* childScope
      const started = Date.now()
      const fiber = yield* Effect.fork(connectWith(f, { policy: { discovery: { timeout: 1_500 } } }).pipe(Scope.extend(scope)))
      yield* untilE(() => f.rpcCalls("server/discover") === 1, "the probe arrived")
      const probed = f.pid()
      const c = yield* Fiber.join(fiber)
      const ms = Date.now() - started
      check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
      check(f.pid() === probed && f.rpcCalls("initialize") === 1, `pid ${probed} then ${f.pid()}, initialize ${f.rpcCalls("initialize")}`)
      inRange(ms, 700, 1_500, "connected")
      yield* closeAndCheckChild(scope, f)
      return `${ms} ms`
    }))
  await S("negotiation: revisions [2026-07-28] against a handshake-era child fail at stage discover; initialize never sent; the child is gone", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture()
      const { error } = yield* failureOf(connectWith(f, { revisions: [STATELESS] }))
      expectError(error, { _tag: "RemoteRefusal", stage: "discover", phase: "discovery" })
      if (f.pid() !== undefined) childPids.add(f.pid())
      yield* untilE(() => !f.isAlive(), "the child is gone", 1_000)
      check(f.rpcCalls("initialize") === 0, "initialize was sent")
      return summarize(error)
    }))
  await S("overrides: long discovery (5 s) + short call (300 ms): a 500 ms server/discover passes; a stalled call fails at 300 ms; notifications/cancelled reaches the child", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ era: "stateless", faults: [{ on: "server/discover", kind: "delay", ms: 500 }, { on: "tools/call", kind: "delay", ms: 2_000 }] })
      const scope = yield* childScope
      const c = yield* connectWith(f, { policy: { discovery: { timeout: 5_000 }, call: { timeout: 300 } } }).pipe(Scope.extend(scope))
      check(c.protocolVersion === STATELESS, `protocolVersion ${c.protocolVersion}`)
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "DeadlineExceeded", stage: "call", phase: "call", limits: { timeoutMs: 300 }, outcome: "unknown" })
      inRange(ms, 250, 1_300, "call deadline")
      yield* untilE(() => f.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      yield* released(c)
      check(textOf(yield* c.callTool("echo", { text: "on" })) === "on", "the stream goes on")
      yield* closeAndCheckChild(scope, f)
      check(f.counter() === 1, `counter ${f.counter()}`)
      return `${ms} ms`
    }))
  await S("abort: an interrupted call is an interruption; notifications/cancelled reaches the child", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ era: "stateless", faults: [{ on: "tools/call", kind: "never-answer" }] })
      const scope = yield* childScope
      const c = yield* connectWith(f, { policy: { call: { timeout: 10_000 } } }).pipe(Scope.extend(scope))
      const fiber = yield* Effect.fork(c.callTool("increment"))
      yield* untilE(() => f.rpcCalls("tools/call") === 1, "the call arrived")
      const exit = yield* Fiber.interrupt(fiber)
      check(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause), "not an interruption only")
      yield* untilE(() => f.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      check(f.counter() === 1, `counter ${f.counter()}`)
      yield* released(c)
      yield* closeAndCheckChild(scope, f)
    }))
  await S(`missing: a stateless child that exits mid-call fails the call promptly (< ${PROMPT_MS} ms)`, () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ era: "stateless", faults: [{ on: "tools/call", kind: "exit", code: 7 }] })
      const c = yield* connectWith(f, { policy: { timeout: 30_000 } })
      const { error, ms } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "TransportFailure", reason: "process-exited", exitCode: 7, stage: "call", outcome: "unknown" })
      check(ms < PROMPT_MS, `${ms} ms`)
      check(f.counter() === 1 && f.rpcCalls("tools/call") === 1, `counter ${f.counter()}, tools/call ${f.rpcCalls("tools/call")}`)
      yield* released(c)
      return `${ms} ms`
    }))
  await S("credentials: a refusal echoing an env secret is redacted", () =>
    Effect.gen(function*() {
      const f = yield* stdioFixture({ era: "stateless", faults: [{ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: `bad key ${canaries.env}` }] })
      const scope = yield* childScope
      const c = yield* connectWith(f, { env: { ...f.env, API_KEY: canaries.env } }).pipe(Scope.extend(scope))
      const { error } = yield* failureOf(c.callTool("increment"))
      expectError(error, { _tag: "RemoteRefusal" })
      expectClean(error)
      yield* closeAndCheckChild(scope, f)
      return error.remoteMessage
    }))
}

// --- scenarios: the Promise API in the stateless era ----------------------------------------------

const statelessPromiseScenarios = async () => {
  const P = (name, body, timeoutMs) => scenario(`Promise 2026 ${name}`, body, timeoutMs)
  const startStateless = () => Testkit.startServer({ era: "stateless" })

  await P("smoke: connects at 2026-07-28 (server/discover, no initialize), calls, closes without DELETE", () =>
    withServer(startStateless, async (srv) => {
      const c = await connect({ url: srv.url })
      check(c.protocolVersion === STATELESS, `protocolVersion ${c.protocolVersion}`)
      check(textOf(await c.callTool("add", { a: 1, b: 2 })) === "3", "add")
      await Promise.all([c.close(), c.close()])
      check(srv.rpcCalls("initialize") === 0 && srv.deletes() === 0, `initialize ${srv.rpcCalls("initialize")}, DELETEs ${srv.deletes()}`)
    }))
  await P("negotiation: default revisions against a handshake-era server connect at 2025-11-25 (initialize after the refused probe)", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const c = await connect({ url: srv.url })
      try {
        check(c.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${c.protocolVersion}`)
        check(srv.rpcCalls("server/discover") === 1 && srv.rpcCalls("initialize") === 1, `discover ${srv.rpcCalls("server/discover")}, initialize ${srv.rpcCalls("initialize")}`)
      } finally {
        await c.close()
      }
    }))
  await P("negotiation: revisions [2026-07-28] against a handshake-era server reject at stage discover; initialize never sent", () =>
    withServer(() => Testkit.startServer(), async (srv) => {
      const { error } = await rejection(connect({ url: srv.url, revisions: [STATELESS] }))
      expectError(error, { _tag: "RemoteRefusal", stage: "discover" })
      check(srv.rpcCalls("initialize") === 0, "initialize was sent")
      return summarize(error)
    }))
  await P("negotiation: revisions naming no revision the client speaks reject InvalidOption before any I/O", () =>
    withServer(startStateless, async (srv) => {
      const { error } = await rejection(connect({ url: srv.url, revisions: ["1999-01-01"] }))
      expectError(error, { _tag: "InvalidOption", option: "revisions", outcome: "not-sent" })
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
    }))
  await P("overrides: short discovery (300 ms) + long call: a stalled server/discover rejects DeadlineExceeded at 300 ms", () =>
    withServer(startStateless, async (srv) => {
      srv.script({ on: "server/discover", kind: "delay", ms: 2_000 })
      const { error, ms } = await rejection(connect({ url: srv.url, policy: { discovery: { timeout: 300 }, call: { timeout: 5_000 } } }))
      expectError(error, { _tag: "DeadlineExceeded", stage: "discover", limits: { timeoutMs: 300 } })
      inRange(ms, 250, 1_300, "discovery deadline")
      return `${ms} ms`
    }))
  await P("overrides: long discovery (5 s) + short call (300 ms): a 500 ms server/discover passes, a stalled call rejects at 300 ms", () =>
    withServer(startStateless, async (srv) => {
      srv.script({ on: "server/discover", kind: "delay", ms: 500 })
      const c = await connect({ url: srv.url, policy: { discovery: { timeout: 5_000 }, call: { timeout: 300 } } })
      try {
        srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
        const { error, ms } = await rejection(c.callTool("increment"))
        expectError(error, { _tag: "DeadlineExceeded", stage: "call", limits: { timeoutMs: 300 } })
        inRange(ms, 250, 1_300, "call deadline")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${ms} ms`
      } finally {
        await c.close()
      }
    }))
  await P("abort: an aborted AbortSignal rejects with its own reason; the server sees it closed; no notifications/cancelled", () =>
    withServer(startStateless, async (srv) => {
      const c = await connect({ url: srv.url, policy: { call: { timeout: 10_000 } } })
      try {
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const controller = new AbortController()
        const reason = new Error("the user went away")
        const pending = c.callTool("increment", {}, { signal: controller.signal })
        await until(() => srv.rpcCalls("tools/call") === 1, "the call arrived")
        controller.abort(reason)
        const { error, ms } = await rejection(pending)
        check(error === reason, `rejected with ${describe(error)}`)
        check(ms < 1_000, `${ms} ms`)
        await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
        await sleep(150)
        check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${ms} ms`
      } finally {
        await c.close()
      }
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
  await P("credentials: URL userinfo and query canaries appear in no rejection", () =>
    withServer(startStateless, async (srv) => {
      const c = await connect({ url: withCanaries(srv.url), headers: { "X-Api-Key": canaries.header } })
      try {
        srv.script({ on: "tools/call", kind: "jsonrpc-error", code: -32000, message: `key ${canaries.header} pass ${canaries.password} q ${canaries.query}` })
        const { error } = await rejection(c.callTool("increment"))
        expectError(error, { _tag: "RemoteRefusal" })
        expectClean(error)
        return error.remoteMessage
      } finally {
        await c.close()
      }
    }))
  await P("abort: stdio, an aborted call rejects with its reason; notifications/cancelled reaches the child; close() ends it", async () => {
    const f = Testkit.makeStdioFixture({ era: "stateless", faults: [{ on: "tools/call", kind: "never-answer" }] })
    try {
      const c = await connect({ stdio: { command: f.command, args: f.args } })
      check(c.protocolVersion === STATELESS && c.transport === "stdio", `${c.protocolVersion} over ${c.transport}`)
      if (f.pid() !== undefined) childPids.add(f.pid())
      const controller = new AbortController()
      const reason = new Error("stop")
      const pending = c.callTool("increment", {}, { signal: controller.signal })
      await until(() => f.rpcCalls("tools/call") === 1, "the call arrived")
      controller.abort(reason)
      const { error } = await rejection(pending)
      check(error === reason, `rejected with ${describe(error)}`)
      await until(() => f.rpcCalls("notifications/cancelled") === 1, "notifications/cancelled arrives")
      await c.close()
      await until(() => !f.isAlive(), "the child is gone", 250)
      check(f.counter() === 1, `counter ${f.counter()}`)
    } finally {
      f.cleanup()
    }
  })
}

// --- main ----------------------------------------------------------------------------------------

const started = Date.now()
for (const [label, layer] of httpLayers) {
  await httpScenarios(label, layer)
  await statelessHttpScenarios(label, layer)
}
await stdioScenarios()
await statelessStdioScenarios()
await promiseScenarios()
await statelessPromiseScenarios()

const failed = results.filter((r) => !r.ok)
const width = Math.max(...results.map((r) => r.name.length))
console.log(`phasebound qualification under ${runtime} ${runtime === "bun" ? globalThis.Bun.version : process.version}`)
for (const r of results) console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(width)}  ${String(r.ms).padStart(5)} ms  ${r.detail}`)
console.log(`${results.length - failed.length} passed, ${failed.length} failed (${Date.now() - started} ms)`)
const summary = {
  runtime,
  results: results.map((r) => ({ name: r.name, ok: r.ok, detail: r.detail })),
  childPids: [...childPids],
  activeResources: typeof process.getActiveResourcesInfo === "function" ? process.getActiveResourcesInfo() : []
}
console.log(`QUALIFY-SUMMARY ${JSON.stringify(summary)}`)
if (failed.length > 0) process.exitCode = 1
