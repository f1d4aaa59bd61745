/**
 * The hostile-server harness (docs/DESIGN.md, "The hostile-server harness"): FastCheck generates what a
 * hostile MCP server answers (listings, call results, JSON-RPC frames and errors, headers, SSE
 * and line framing), real loopback servers of the testkit serve it (HostileServer over
 * Streamable HTTP, JSON and SSE answers; the scripted stdio child), and the real client meets
 * it, in both eras (2026-07-28 stateless, 2025-11-25 handshake). Every generated case must keep
 * every property; a case reports all it breaks.
 *
 * - P1 deadline. Hostile party: the MCP server, whose data (deep or huge JSON, catastrophic
 *   output schemas, endless cursors, frames that never end) could make the client work or wait
 *   past its budget. The operation (connect + discovery, or one call) ends, in success or
 *   failure, by its deadline plus a bounded slack, measured with the real clock from outside.
 * - P2 typed. Same party: nothing it sends turns into a defect, an interruption or an
 *   InternalError; every failure is a typed `McpConnectionError`.
 * - P3 no secret. Same party, echoing what it was sent: a canary header, a URL query token, URL
 *   userinfo, a stdio child's environment value, raw, percent-encoded, base64 or split by
 *   control and invisible characters, in error messages, `data` and headers; none of them
 *   appears in `JSON.stringify(error)`, `String(error)`, `error.message` or any public field.
 * - P4 sent once. Same party, answering so as to provoke a retry (5xx, resets, wrong ids,
 *   broken frames): the server counts each `tools/call` by JSON-RPC id and by the call's nonce
 *   (its effect identity); each call arrives at most once.
 * - Also: a server's `__proto__` keys never reach the process's prototypes.
 *
 * P5 (heap under the maximal listing and answer) is heap.test.ts; the authorization metadata of
 * a hostile server (where it may steer the client, and the credentials it may obtain) is
 * authorization.test.ts. A failing case's text says which properties it broke; with
 * PHASEBOUND_HOSTILE_LOG=file each one is also appended there, PHASEBOUND_HOSTILE_RUNS=n runs
 * each property n times, and PHASEBOUND_HOSTILE_EXPLORE=1 (with the log) goes on past failures:
 * a longer local exploration than the suite's, never a way to pass it.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type HostileServer,
  hostileStdioCase,
  type HostileStdioAnswers,
  type HostileStdioCase,
  ID_PLACEHOLDER,
  messageAnswer,
  startHostileServer
} from "@phasebound/testkit"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import type { HttpClient } from "@effect/platform/HttpClient"
import { Effect, FastCheck as fc, type Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { McpClient, type McpConnectionError, type PhasePolicy } from "../../src/index.js"
import { answerMessage, callResult, costlyCallResult, type Framing, framing, honestFraming, hostileJson, listing, secretForm } from "./arbitraries.js"
import {
  checkArrived,
  checkDeadline,
  checkNoPollution,
  checkNoSecret,
  checkSentOnce,
  checkTyped,
  describeText,
  type Echo,
  fastCheck,
  HTTP_SECRETS,
  httpAnswer,
  platform,
  type Row,
  outcomeOf,
  rowName,
  rows,
  SECRETS,
  type SecretName,
  secretUrl,
  stdioAnswer,
  verdict
} from "./support.js"

/** Short deadlines: a hostile case that stalls costs the suite this much. */
const DEADLINE_MS = 1_000
/** Discovery before a call case: generous, so that only the call's own deadline is in play there. */
const CALL_CASE_DISCOVERY_MS = 10_000
const RELEASE_MS = 500

const echoOf = (row: Row): fc.Arbitrary<Echo> =>
  fc.record({
    secret: row.transport === "stdio" ? fc.constant<SecretName>("env") : fc.constantFrom(...HTTP_SECRETS),
    form: secretForm
  })

const secretsOf = (row: Row): ReadonlyArray<SecretName> => (row.transport === "stdio" ? ["env"] : HTTP_SECRETS)

/** What the first discovery request (server/discover, or initialize) answers instead of the truth. */
const probeResult = (era: Row["era"], capabilities: string, shape: number): string =>
  era === "stateless"
    ? [
      `{"supportedVersions":["2026-07-28"],"capabilities":${capabilities},"resultType":"complete"}`,
      `{"supportedVersions":${capabilities},"capabilities":{}}`,
      `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":${capabilities}}}`
    ][shape % 3]!
    : [
      `{"protocolVersion":"2025-11-25","capabilities":${capabilities},"serverInfo":{"name":"h","version":"1"}}`,
      `{"protocolVersion":${capabilities},"capabilities":{},"serverInfo":{"name":"h","version":"1"}}`,
      `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":${capabilities},"instructions":${capabilities}}`
    ][shape % 3]!

const discoveryCase = fc.record({
  target: fc.constantFrom("list" as const, "list" as const, "list" as const, "probe" as const),
  pages: listing.chain((pages) =>
    fc.tuple(...pages.map((page) =>
      fc.oneof(
        { arbitrary: fc.constant(`{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":${page}}`), weight: 4 },
        { arbitrary: answerMessage(fc.constant(page)), weight: 1 }
      )
    ))
  ),
  probe: fc.record({ capabilities: hostileJson, shape: fc.nat(), wrap: fc.boolean() }),
  framing
})

const callCase = fc.oneof(
  fc.record({
    answer: callResult.chain((result) => answerMessage(fc.constant(result.text)).map((message) => ({ outputSchema: result.outputSchema, message }))),
    framing
  }),
  // Half the cases: an answer that is valid but for what checking it costs, honestly framed.
  fc.record({
    answer: costlyCallResult.map((result) => ({
      outputSchema: result.outputSchema,
      message: `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":${result.text}}`
    })),
    framing: honestFraming
  })
)

const framingSummary = (f: Framing): string =>
  `status ${f.status}, content-type ${f.contentType}, headers [${f.extraHeaders.map(([n, v]) => `${n}: ${describeText(v)}`).join("; ")}], ` +
  `sse ${JSON.stringify(f.sse)}, stdio ${JSON.stringify(f.stdio)}, chunkSize ${f.chunkSize}, then ${f.then}`

/**
 * After the connection's scope closed (nothing more can be sent): waits, bounded, until the
 * server has recorded every request whose headers it received, so that the count is final.
 */
const quiet = (server: HostileServer | undefined) =>
  Effect.promise(async () => {
    const until = Date.now() + 3_000
    await new Promise((resolve) => setImmediate(resolve))
    while (server !== undefined && server.inFlight() > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5))
  })

let nonces = 0

for (const row of rows) {
  describe(rowName(row), () => {
    let server: HostileServer | undefined
    beforeAll(async () => {
      if (row.transport !== "stdio") server = await startHostileServer({ era: row.era, mode: row.transport })
    })
    afterAll(async () => {
      await server?.close()
    })
    const mode = row.transport === "stdio" ? "json" : row.transport

    /** The scripted stdio child of a case (its files are removed when the case is done), on the stdio row. */
    const stdioChild = (answers: HostileStdioAnswers): HostileStdioCase | undefined =>
      row.transport === "stdio" ? hostileStdioCase({ era: row.era, answers, env: { CANARY_TOKEN: SECRETS.env } }) : undefined

    /** Connects to this row's server: HTTP with every secret configured, or the stdio child with one in its env. */
    const connect = (
      policy: PhasePolicy.Options,
      child: HostileStdioCase | undefined
    ): Effect.Effect<McpClient.Connection, McpConnectionError.McpConnectionError, Scope.Scope | HttpClient | CommandExecutor> =>
      child !== undefined
        ? McpClient.connectStdio({ command: child.command, args: child.args, env: child.env, revisions: [row.revision], policy })
        : McpClient.connect({
          url: secretUrl(server!),
          headers: { "x-canary": SECRETS.header },
          revisions: [row.revision],
          transport: "streamable-http",
          policy
        })

    it.live(
      "baseline: an honest answer, framed oddly but validly (comments, huge retry, mixed line ends, split data, byte-sized writes), succeeds once",
      () =>
        Effect.gen(function*() {
          server?.reset()
          const odd: Framing = {
            status: 200,
            contentType: "default",
            extraHeaders: [],
            sse: { comments: true, retry: "99999999999999999999999", eventId: true, lineEnd: "mixed", splitData: true, finalBlankLine: true },
            stdio: { banner: true, lineEnd: "\n" },
            chunkSize: 1,
            then: "end"
          }
          const echo: Echo = { secret: row.transport === "stdio" ? "env" : "header", form: "raw" }
          const message = `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":{"content":[{"type":"text","text":"fine"}]${
            row.era === "stateless" ? `,"resultType":"complete"` : ""
          }}}`
          server?.setScript((request) => (request.method === "tools/call" ? httpAnswer(message, mode, odd, echo) : "normal"))
          const child = stdioChild({ "tools/call": [stdioAnswer(message, odd, echo)] })
          const nonce = `baseline-${process.pid}-${nonces++}`
          const result = yield* Effect.scoped(Effect.gen(function*() {
            const connection = yield* connect({ timeout: 10_000, releaseTimeout: RELEASE_MS }, child)
            return yield* connection.callTool("echo", { nonce }, { effectIdentity: nonce })
          }))
          yield* quiet(server)
          const arrivals = child?.toolCallArrivals() ?? server?.toolCallArrivals() ?? []
          child?.cleanup()
          expect(result.content).toEqual([{ type: "text", text: "fine" }])
          expect(arrivals.filter((arrival) => arrival.nonce === nonce)).toHaveLength(1)
        }).pipe(Effect.provide(platform)),
      30_000
    )

    if (row.era === "stateless") {
      // docs/SECURITY.md, "1. The MCP server": where the protocol allows a wider value (2026-07-28's
      // structuredContent may be any JSON value), it is accepted, not refused as hostile.
      it.live.prop(
        "structuredContent of any JSON type, without an outputSchema, is the call's result as sent",
        [fc.jsonValue({ maxDepth: 6 })],
        ([value]) =>
          Effect.gen(function*() {
            server?.reset()
            const text = JSON.stringify(value) ?? "null"
            const message = `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":{"content":[],"structuredContent":${text},"resultType":"complete"}}`
            server?.setScript((request) => (request.method === "tools/call" ? messageAnswer(message, mode) : "normal"))
            const child = stdioChild({ "tools/call": [{ text: message + "\n" }] })
            const started = performance.now()
            const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
              const connection = yield* connect({ timeout: 10_000, releaseTimeout: RELEASE_MS }, child)
              return yield* connection.callTool("echo", {})
            })))
            const elapsed = performance.now() - started
            child?.cleanup()
            verdict(rowName(row), `structuredContent ${describeText(text)}`, [
              ...checkTyped("the call", exit),
              ...(exit._tag === "Success"
                ? JSON.stringify(exit.value.structuredContent) === JSON.stringify(JSON.parse(text)) ? [] : ["wider value: structuredContent changed on the way"]
                : [`wider value: refused, ${outcomeOf(exit, elapsed)}`])
            ], outcomeOf(exit, elapsed))
          }).pipe(Effect.provide(platform)),
        { timeout: 60_000, fastCheck: fastCheck(10) }
      )
    }

    it.live.prop(
      "connect + discovery: ends by its deadline (P1), fails only typed (P2), leaks no secret (P3)",
      [discoveryCase, echoOf(row)],
      ([c, echo]) =>
        Effect.gen(function*() {
          server?.reset()
          const probeMethod = row.era === "stateless" ? "server/discover" : "initialize"
          const probeText = `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":${probeResult(row.era, c.probe.capabilities, c.probe.shape)}}`
          let listed = 0
          const page = () => c.pages[Math.min(listed++, c.pages.length - 1)]!
          server?.setScript((request) => {
            if (c.target === "list" && request.method === "tools/list") return httpAnswer(page(), mode, c.framing, echo)
            if (c.target === "probe" && request.method === probeMethod) {
              return c.probe.wrap
                ? httpAnswer(probeText, mode, c.framing, echo)
                : messageAnswer(probeText, mode, probeMethod === "initialize" ? [["mcp-session-id", "s"]] : [])
            }
            return "normal"
          })
          const answers: HostileStdioAnswers = c.target === "list"
            ? { "tools/list": c.pages.map((text) => stdioAnswer(text, c.framing, echo)) }
            : { [probeMethod]: [c.probe.wrap ? stdioAnswer(probeText, c.framing, echo) : { text: probeText + "\n" }] }
          const policy: PhasePolicy.Options = { discovery: { timeout: DEADLINE_MS }, releaseTimeout: RELEASE_MS }
          const child = stdioChild(answers)
          const started = performance.now()
          const exit = yield* Effect.exit(Effect.scoped(Effect.asVoid(connect(policy, child))))
          const elapsed = performance.now() - started
          child?.cleanup()
          const summary =
            `${c.target === "list" ? `tools/list pages [${c.pages.map(describeText).join(", ")}]` : `${probeMethod} answered ${describeText(probeText)}`}; ` +
            `${framingSummary(c.framing)}; echo ${echo.secret} as ${echo.form}`
          verdict(rowName(row), summary, [
            ...checkDeadline("connect", elapsed, DEADLINE_MS),
            ...checkTyped("connect", exit),
            ...checkNoSecret("connect", exit, secretsOf(row)),
            ...checkNoPollution()
          ], outcomeOf(exit, elapsed))
        }).pipe(Effect.provide(platform)),
      { timeout: 180_000, fastCheck: fastCheck(15) }
    )

    it.live.prop(
      "a call: ends by its deadline (P1), fails only typed (P2), leaks no secret (P3), arrives at most once (P4)",
      [callCase, echoOf(row)],
      ([c, echo]) =>
        Effect.gen(function*() {
          server?.reset()
          const nonce = `nonce-${process.pid}-${nonces++}`
          const complete = row.era === "stateless" ? `,"resultType":"complete"` : ""
          const tool = `{"name":"t","inputSchema":{"type":"object"}${c.answer.outputSchema === undefined ? "" : `,"outputSchema":${c.answer.outputSchema}`}}`
          const listText = `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":{"tools":[${tool}]${complete}}}`
          server?.setScript((request) => {
            if (request.method === "tools/list") return messageAnswer(listText, mode)
            if (request.method === "tools/call") return httpAnswer(c.answer.message, mode, c.framing, echo)
            return "normal"
          })
          const answers: HostileStdioAnswers = { "tools/list": [{ text: listText + "\n" }], "tools/call": [stdioAnswer(c.answer.message, c.framing, echo)] }
          const policy: PhasePolicy.Options = {
            discovery: { timeout: CALL_CASE_DISCOVERY_MS },
            call: { timeout: DEADLINE_MS },
            releaseTimeout: RELEASE_MS
          }
          const child = stdioChild(answers)
          const timings = { discovery: 0, call: 0 }
          const outcome = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
            const started = performance.now()
            const connection = yield* connect(policy, child).pipe(Effect.ensuring(Effect.sync(() => {
              timings.discovery = performance.now() - started
            })))
            const calling = performance.now()
            const exit = yield* Effect.exit(connection.callTool("t", { nonce }, { effectIdentity: nonce }))
            timings.call = performance.now() - calling
            return exit
          })))
          // The scope is closed: nothing more can be sent. The stdio child is gone; the HTTP server may still be reading a body.
          yield* quiet(server)
          const arrivals = child?.toolCallArrivals() ?? server?.toolCallArrivals() ?? []
          child?.cleanup()
          const summary = `outputSchema ${describeText(c.answer.outputSchema ?? "(none)")}; tools/call answered ${describeText(c.answer.message)}; ` +
            `${framingSummary(c.framing)}; echo ${echo.secret} as ${echo.form}`
          const callExit = outcome._tag === "Success" ? outcome.value : undefined
          verdict(rowName(row), summary, [
            ...checkDeadline("discovery", timings.discovery, CALL_CASE_DISCOVERY_MS),
            ...checkTyped("discovery", outcome),
            ...(callExit === undefined ? [] : [
              ...checkDeadline("the call", timings.call, DEADLINE_MS),
              ...checkTyped("the call", callExit),
              ...checkNoSecret("the call", callExit, secretsOf(row))
            ]),
            ...checkSentOnce(arrivals, nonce),
            ...checkArrived(arrivals, nonce, callExit),
            ...checkNoPollution()
          ], `discovery ${outcomeOf(outcome, timings.discovery)}; call ${callExit === undefined ? "not made" : outcomeOf(callExit, timings.call)}`)
        }).pipe(Effect.provide(platform)),
      { timeout: 180_000, fastCheck: fastCheck(15) }
    )
  })
}
