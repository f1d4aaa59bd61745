/**
 * Durable tool calls (docs/DURABILITY.md, "How it works") on the in-memory workflow engine,
 * against a real loopback MCP server (the testkit's effect tools) through a real connection:
 * the identity, persistence across a replay, the retry rules, explicit retries, and the
 * re-execution of an activity whose worker died mid-call (the sent marker).
 */
import { DurableDeferred, Workflow, WorkflowEngine } from "@effect/workflow"
import { describe, expect, it } from "@effect/vitest"
import { McpClient, McpConnectionError, McpSchema } from "@phasebound/client"
import type * as Testkit from "@phasebound/testkit"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { EffectIdentity, SentMarker, ToolCall, ToolCallError } from "../src/index.js"
import { connectTo, effectServer, eventually, onMemoryEngine, serversLayer, textOf } from "./support/harness.js"

const quickRetry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(3)))

/** A workflow of one payload field, `run`, whose result is a tool result. */
const toolWorkflow = (name: string) =>
  Workflow.make({
    name,
    payload: { run: Schema.String },
    idempotencyKey: (payload) => payload.run,
    success: McpSchema.CallToolResult,
    error: ToolCallError.ToolCallError
  })

/** The `tools/call` requests the server received for `tool`, with the effect identity each carried. */
const callsReceived = (server: Testkit.TestServer, tool: string) =>
  server.requests.filter((request) => {
    const json = request.json
    return typeof json === "object" && json !== null && "method" in json && json.method === "tools/call" &&
      "params" in json && typeof json.params === "object" && json.params !== null && "name" in json.params &&
      json.params.name === tool
  }).map((request) => request.meta?.[McpClient.effectIdentityMetaKey])

/** Polls the workflow until it completes. */
const completion = (workflow: ReturnType<typeof toolWorkflow>, executionId: string) =>
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    for (;;) {
      const result = yield* engine.poll(workflow, executionId)
      if (result !== undefined && result._tag === "Complete") return result.exit
      yield* Effect.sleep("10 millis")
    }
  })

/** Runs `effect` as the workflow execution `executionId` would: what an engine does when it re-executes an activity. */
const asExecution = <A, E, R>(workflow: Workflow.Any, executionId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, WorkflowEngine.WorkflowInstance, WorkflowEngine.WorkflowInstance.initial(workflow, executionId))

describe("durable tool calls on WorkflowEngine.layerMemory", () => {
  it.scopedLive("the identity is sent with the call and the same on a replay, which does not call again", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Approval = DurableDeferred.make("approval")
      const Ledger = toolWorkflow("ledger-replay")
      const derived: Array<string> = []
      const options = { name: "append-entry", connection: Effect.succeed(connection), tool: "append", arguments: { entry: "a" } }
      const layer = Ledger.toLayer(() =>
        Effect.gen(function*() {
          const result = yield* ToolCall.call(options)
          derived.push(yield* EffectIdentity.derive("append-entry"))
          yield* DurableDeferred.await(Approval) // the first run suspends here; the second replays
          return result
        })
      )
      yield* onMemoryEngine(
        layer,
        Effect.gen(function*() {
          const executionId = yield* Ledger.execute({ run: "r1" }, { discard: true })
          yield* eventually(() => derived.length === 1)
          yield* DurableDeferred.done(Approval, {
            token: DurableDeferred.tokenFromExecutionId(Approval, { workflow: Ledger, executionId }),
            exit: Exit.void
          })
          const exit = yield* completion(Ledger, executionId)
          expect(Exit.isSuccess(exit) && textOf(exit.value)).toBe("1")

          // Two runs of the workflow, one call: the replay got the persisted result.
          expect(derived).toHaveLength(2)
          expect(derived[0]).toBe(derived[1])
          expect(server.toolCalls("append")).toBe(1)
          expect(server.effectIdentities("append")).toEqual([derived[0]])
          const observed = (yield* connection.observations).filter((o) => o.operation === "tools/call")
          expect(observed.map((o) => [o.outcome, o.effectIdentity])).toEqual([["ok", derived[0]]])

          // The sent marker is in the engine, with what was known when the call left.
          const marker = yield* asExecution(Ledger, executionId, SentMarker.find(SentMarker.make("append-entry", 1)))
          expect(marker).toEqual(Option.some({ effectIdentity: derived[0], idempotent: false }))

          // Another execution (another payload) has another identity.
          const other = yield* asExecution(Ledger, "another-execution", EffectIdentity.derive("append-entry"))
          expect(other).not.toBe(derived[0])
        })
      )
    }))

  it.scopedLive("a retryable failure (an expired session, not processed) is sent again with the same identity", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Ledger = toolWorkflow("ledger-retryable")
      const layer = Ledger.toLayer(() =>
        ToolCall.call({ name: "append", connection: Effect.succeed(connection), tool: "append", arguments: { entry: "x" }, retry: quickRetry })
      )
      yield* onMemoryEngine(
        layer,
        Effect.gen(function*() {
          server.expireSession()
          const result = yield* Ledger.execute({ run: "r1" })
          expect(textOf(result)).toBe("1")
          // Two sendings, one processed (the expired session's 404 was not), one identity.
          const identities = callsReceived(server, "append")
          expect(identities).toHaveLength(2)
          expect(identities[0]).toEqual(expect.any(String))
          expect(identities[1]).toBe(identities[0])
          expect(server.toolCalls("append")).toBe(1)
          const observed = (yield* connection.observations).filter((o) => o.operation === "tools/call")
          expect(observed.map((o) => [o.outcome, o.effectIdentity])).toEqual([
            ["SessionExpired", identities[0]],
            ["ok", identities[0]]
          ])
        })
      )
    }))

  it.scopedLive("a refusal until the user completes a URL elicitation is not sent again by itself: the workflow fails with it", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Flow = toolWorkflow("url-elicitation-required")
      const layer = Flow.toLayer(() =>
        ToolCall.call({ name: "append", connection: Effect.succeed(connection), tool: "append", arguments: { entry: "x" }, retry: quickRetry })
      )
      server.script({
        kind: "jsonrpc-error",
        on: "tools/call",
        code: -32042,
        message: "Connect your account first",
        data: { elicitations: [{ mode: "url", elicitationId: "e-1", url: "https://accounts.example.com/connect", message: "Connect" }] },
        times: Infinity
      })
      const exit = yield* onMemoryEngine(layer, Effect.exit(Flow.execute({ run: "r1" })))
      expect(Exit.isFailure(exit)).toBe(true)
      const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(failure).toMatchObject({ _tag: "ToolCallFailed", tag: "UrlElicitationRequired", outcome: "not-applied", retryable: true })
      // Safe to send again, yet sent once: a second sending before the user acts is refused alike.
      expect(callsReceived(server, "append")).toHaveLength(1)
      // The stored failure keeps public fields only: no URL.
      expect(JSON.stringify(failure)).not.toContain("accounts.example.com")
    }))

  describe.each([["lookup", { key: "k" }], ["upsert", { key: "k", value: "v" }]] as const)(
    "a %s call (read-only or idempotent) whose outcome is unknown",
    (tool, args) => {
      it.scopedLive("is sent again with the same identity", () =>
        Effect.gen(function*() {
          const server = yield* effectServer()
          const connection = yield* connectTo(server)
          const Flow = toolWorkflow(`idempotent-${tool}`)
          const layer = Flow.toLayer(() =>
            ToolCall.call({
              name: tool,
              connection: Effect.succeed(connection),
              tool,
              arguments: args,
              callOptions: { timeout: "300 millis" },
              retry: quickRetry
            })
          )
          server.script({ kind: "delay", on: "tools/call", ms: 1_500 }) // the first answer comes too late
          yield* onMemoryEngine(layer, Flow.execute({ run: "r1" }))
          expect(server.toolCalls(tool)).toBe(2)
          const identities = server.effectIdentities(tool)
          expect(identities).toHaveLength(2)
          expect(identities[1]).toBe(identities[0])
          const observed = (yield* connection.observations).filter((o) => o.operation === "tools/call")
          expect(observed.map((o) => o.outcome)).toEqual(["DeadlineExceeded", "ok"])
        }))
    }
  )

  it.scopedLive("an unknown outcome on a non-idempotent tool is ToolCallOutcomeUnknown, and the tool ran once", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Ledger = toolWorkflow("ledger-unknown")
      const layer = Ledger.toLayer(() =>
        ToolCall.call({
          name: "append",
          connection: Effect.succeed(connection),
          tool: "append",
          arguments: { entry: "x", delayMs: 1_500 },
          callOptions: { timeout: "300 millis" },
          retry: quickRetry
        })
      )
      const failure = yield* onMemoryEngine(layer, Effect.flip(Ledger.execute({ run: "r1" })))
      expect(failure).toBeInstanceOf(ToolCallError.ToolCallOutcomeUnknown)
      expect(failure).toMatchObject({
        _tag: "ToolCallOutcomeUnknown",
        source: "call",
        retry: 0,
        tool: "append",
        activity: "append",
        tag: "DeadlineExceeded",
        stage: "call",
        effectIdentity: server.effectIdentities("append")[0]
      })
      // A retry would run inside the activity, so before its failure, and the connection observes
      // every sending when it ends: one observation is one sending (and the server counted one).
      const observed = (yield* connection.observations).filter((o) => o.operation === "tools/call")
      expect(observed.map((o) => [o.outcome, o.effectIdentity])).toEqual([["DeadlineExceeded", failure.effectIdentity]])
      expect(server.toolCalls("append")).toBe(1)
      // Public fields only, in the failure and in what the engine persists: these and nothing else
      // (no URL, no header, no body).
      const publicFields = {
        _tag: "ToolCallOutcomeUnknown",
        tool: "append",
        activity: "append",
        effectIdentity: failure.effectIdentity,
        source: "call",
        retry: 0,
        tag: "DeadlineExceeded",
        stage: "call"
      }
      expect({ ...failure }).toEqual(publicFields)
      expect(Schema.encodeSync(ToolCallError.ToolCallError)(failure)).toEqual(publicFields)
    }))

  it.scopedLive("an applied failure is never retried, even on an idempotent tool", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Flow = toolWorkflow("applied")
      const layer = Flow.toLayer(() =>
        ToolCall.call({
          name: "upsert",
          connection: Effect.succeed(connection),
          tool: "upsert",
          arguments: { key: "k", value: "a value longer than the ceiling" },
          callOptions: { maxBytes: 32 },
          retry: quickRetry
        })
      )
      const failure = yield* onMemoryEngine(layer, Effect.flip(Flow.execute({ run: "r1" })))
      expect(failure).toMatchObject({
        _tag: "ToolCallFailed",
        tag: "ByteCeilingExceeded",
        outcome: "applied",
        retryable: false,
        idempotent: true,
        tool: "upsert"
      })
      // A retry would be a second sending, observed before the activity's failure (see above).
      const observed = (yield* connection.observations).filter((o) => o.operation === "tools/call")
      expect(observed.map((o) => [o.outcome, o.effectIdentity])).toEqual([["ByteCeilingExceeded", failure.effectIdentity]])
      expect(server.toolCalls("upsert")).toBe(1)
    }))

  it.scopedLive("retryUnknown sends the call again, explicitly, with the same identity", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Ledger = toolWorkflow("ledger-explicit")
      const options: ToolCall.Options<never> = {
        name: "append",
        connection: Effect.succeed(connection),
        tool: "append",
        arguments: { entry: "x" },
        callOptions: { timeout: "300 millis" }
      }
      const unknowns: Array<ToolCallError.ToolCallOutcomeUnknown> = []
      const layer = Ledger.toLayer(() =>
        ToolCall.call(options).pipe(
          Effect.catchTag("ToolCallOutcomeUnknown", (unknown) => {
            unknowns.push(unknown)
            return ToolCall.retryUnknown(options, unknown) // say, the server honours identities
          })
        )
      )
      server.script({ kind: "delay", on: "tools/call", ms: 1_500 })
      const result = yield* onMemoryEngine(layer, Ledger.execute({ run: "r1" }))
      expect(textOf(result)).toBe("2") // applied twice: this server ignores identities
      expect(unknowns.map((u) => [u.activity, u.retry, u.source])).toEqual([["append", 0, "call"]])
      const identities = server.effectIdentities("append")
      expect(identities).toHaveLength(2)
      expect(identities[1]).toBe(identities[0])
      expect(identities[0]).toBe(unknowns[0]?.effectIdentity)
    }))

  it.scopedLive("the connection of a named server of McpServers, connected once and shared by the calls", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const Flow = toolWorkflow("named-server")
      const layer = Flow.toLayer(({ run }) =>
        Effect.gen(function*() {
          const connection = ToolCall.server("store")
          yield* ToolCall.call({ name: "write", connection, tool: "upsert", arguments: { key: run, value: "v1" } })
          return yield* ToolCall.call({ name: "read", connection, tool: "lookup", arguments: { key: run } })
        })
      )
      const result = yield* onMemoryEngine(layer, Flow.execute({ run: "k" })).pipe(
        Effect.provide(serversLayer({ store: { url: server.url } }))
      )
      expect(textOf(result)).toBe("v1")
      expect([server.toolCalls("upsert"), server.toolCalls("lookup")]).toEqual([1, 1])
      const [write] = server.effectIdentities("upsert")
      const [read] = server.effectIdentities("lookup")
      expect(write).not.toBe(read) // one identity per activity
      expect(server.rpcCalls("initialize")).toBe(1)
    }))

  it.scopedLive("retryUnknown refuses a failure of another call (a defect)", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const stranger = new ToolCallError.ToolCallOutcomeUnknown({
        tool: "append",
        activity: "another-activity",
        effectIdentity: "x",
        source: "call",
        retry: 0
      })
      const exit = yield* Effect.exit(
        ToolCall.retryUnknown({ name: "append", connection: Effect.succeed(connection), tool: "append" }, stranger).pipe(
          Effect.provideService(WorkflowEngine.WorkflowInstance, WorkflowEngine.WorkflowInstance.initial(toolWorkflow("x"), "e")),
          Effect.provide(WorkflowEngine.layerMemory)
        )
      )
      expect(Exit.isFailure(exit) && exit.cause._tag).toBe("Die")
      expect(server.toolCalls("append")).toBe(0)
    }))
})

describe("re-execution of an activity whose worker died mid-call (the sent marker)", () => {
  /**
   * The first execution's call is held at the server (it arrived: the marker was recorded before
   * it left). The engine then executes the same activity attempt again, as it does on another
   * worker when the first died before its result was persisted: the re-execution cannot tell,
   * except by the marker.
   */
  const reexecute = (tool: "append" | "upsert", args: Readonly<Record<string, unknown>>) =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Flow = toolWorkflow(`died-${tool}`)
      const options = { name: tool, connection: Effect.succeed(connection), tool, arguments: args, retry: Schedule.stop }
      const layer = Flow.toLayer(() => ToolCall.call(options))
      server.script({ kind: "delay", on: "tools/call", ms: 1_000 })
      return yield* onMemoryEngine(
        layer,
        Effect.gen(function*() {
          const executionId = yield* Flow.execute({ run: "r1" }, { discard: true })
          yield* eventually(() => server.toolCalls(tool) === 1)
          const again = yield* Effect.exit(asExecution(Flow, executionId, ToolCall.call(options)))
          const first = yield* completion(Flow, executionId)
          return { server, again, first }
        })
      )
    })

  it.scopedLive("a non-idempotent tool is not sent again: ToolCallOutcomeUnknown (resumed)", () =>
    Effect.gen(function*() {
      const { again, first, server } = yield* reexecute("append", { entry: "x" })
      const identity = server.effectIdentities("append")[0]
      expect(again).toEqual(Exit.fail(
        new ToolCallError.ToolCallOutcomeUnknown({
          tool: "append",
          activity: "append",
          effectIdentity: identity ?? "",
          source: "resumed",
          retry: 0
        })
      ))
      expect(server.toolCalls("append")).toBe(1)
      expect(Exit.isSuccess(first) && textOf(first.value)).toBe("1") // the first execution's answer, late
    }))

  it.scopedLive("an idempotent tool is sent again with the same identity", () =>
    Effect.gen(function*() {
      const { again, first, server } = yield* reexecute("upsert", { key: "k", value: "v" })
      expect(Exit.isSuccess(again) && textOf(again.value)).toBe("v")
      expect(Exit.isSuccess(first)).toBe(true)
      expect(server.toolCalls("upsert")).toBe(2)
      const identities = server.effectIdentities("upsert")
      expect(identities).toHaveLength(2)
      expect(identities[1]).toBe(identities[0])
    }))
})

describe("what the engine persists", () => {
  it("results and failures survive an encode, JSON and decode round trip", () => {
    const result: McpSchema.CallToolResult = { content: [{ type: "text", text: "42" } as McpSchema.CallToolResult["content"][number]] }
    const encodedResult = JSON.parse(JSON.stringify(Schema.encodeSync(McpSchema.CallToolResult)(result)))
    expect(Schema.decodeUnknownSync(McpSchema.CallToolResult)(encodedResult)).toEqual(result)

    const failure = new ToolCallError.ToolCallFailed({
      tool: "append",
      activity: "append",
      effectIdentity: "id",
      tag: "UpstreamFailure",
      outcome: "unknown",
      retryable: false,
      stage: "call",
      phase: "call",
      status: 503,
      idempotent: false
    })
    const encoded = JSON.parse(JSON.stringify(Schema.encodeSync(ToolCallError.ToolCallError)(failure)))
    expect(Schema.decodeUnknownSync(ToolCallError.ToolCallError)(encoded)).toEqual(failure)
  })

  it("a client error is persisted as its tag and public fields, in the client's vocabularies only", () => {
    const error = new McpConnectionError.TransportFailure(
      { stage: "call", phase: "call", limits: { timeoutMs: 1000, maxBytes: 64 }, reason: "connection-closed", outcome: "unknown", retryable: false },
      new Error("reset by https://user:hunter2@example.test")
    )
    const failure = ToolCallError.fromConnectionError(error, { tool: "append", activity: "append", effectIdentity: "id", idempotent: false })
    // The persisted form, as plain JSON: the same keys and values as before the fields were the client's Schemas.
    const persisted = {
      _tag: "ToolCallFailed",
      tool: "append",
      activity: "append",
      effectIdentity: "id",
      tag: "TransportFailure",
      outcome: "unknown",
      retryable: false,
      stage: "call",
      phase: "call",
      reason: "connection-closed",
      idempotent: false
    }
    expect(JSON.parse(JSON.stringify(Schema.encodeSync(ToolCallError.ToolCallError)(failure)))).toEqual(persisted)
    expect(Schema.decodeUnknownSync(ToolCallError.ToolCallError)(persisted)).toBeInstanceOf(ToolCallError.ToolCallFailed)
    // A stage, reason or tag the client does not know is not a persisted client error.
    for (const wrong of [{ stage: "somewhere" }, { reason: "free text from a peer" }, { tag: "NotAnError" }, { phase: "later" }]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(ToolCallError.ToolCallError)({ ...persisted, ...wrong })), JSON.stringify(wrong)).toBe(true)
    }
    const unknown = {
      _tag: "ToolCallOutcomeUnknown",
      tool: "append",
      activity: "append",
      effectIdentity: "id",
      source: "call",
      retry: 0,
      tag: "TransportFailure",
      stage: "call",
      reason: "connection-closed"
    }
    expect(Schema.decodeUnknownSync(ToolCallError.ToolCallError)(unknown)).toBeInstanceOf(ToolCallError.ToolCallOutcomeUnknown)
    expect(Either.isLeft(Schema.decodeUnknownEither(ToolCallError.ToolCallError)({ ...unknown, stage: "somewhere" }))).toBe(true)
  })

  it("isRetrySafe: retryable failures, unknown outcomes of idempotent tools; never applied", () => {
    const failure = (fields: Pick<ToolCallError.ToolCallFailed, "outcome" | "retryable" | "idempotent">) =>
      new ToolCallError.ToolCallFailed({
        tool: "t",
        activity: "a",
        effectIdentity: "id",
        tag: "TransportFailure",
        stage: "call",
        phase: "call",
        ...fields
      })
    expect(ToolCallError.isRetrySafe(failure({ outcome: "not-sent", retryable: true, idempotent: false }))).toBe(true)
    expect(ToolCallError.isRetrySafe(failure({ outcome: "not-applied", retryable: false, idempotent: true }))).toBe(false)
    expect(ToolCallError.isRetrySafe(failure({ outcome: "unknown", retryable: false, idempotent: true }))).toBe(true)
    expect(ToolCallError.isRetrySafe(failure({ outcome: "unknown", retryable: false, idempotent: false }))).toBe(false)
    expect(ToolCallError.isRetrySafe(failure({ outcome: "applied", retryable: true, idempotent: true }))).toBe(false)
  })

  it("isRetriedByItself: what isRetrySafe allows, but not a refusal that waits on the user (a URL elicitation)", () => {
    const failure = (tag: ToolCallError.ToolCallFailed["tag"]) =>
      new ToolCallError.ToolCallFailed({
        tool: "t",
        activity: "a",
        effectIdentity: "id",
        tag,
        stage: "call",
        phase: "call",
        outcome: "not-applied",
        retryable: true,
        idempotent: false
      })
    expect(ToolCallError.isRetrySafe(failure("UrlElicitationRequired"))).toBe(true)
    expect(ToolCallError.isRetriedByItself(failure("UrlElicitationRequired"))).toBe(false)
    expect(ToolCallError.isRetriedByItself(failure("RemoteRefusal"))).toBe(true)
  })
})
