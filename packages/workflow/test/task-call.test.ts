/**
 * Durable tool calls made as tasks (docs/DURABILITY.md, "Tasks") on the in-memory workflow
 * engine, against the testkit's task server through a real connection: the task's handle is in
 * the engine's storage before the activity waits; an execution of the same activity that finds
 * it (a worker that died while the task ran) polls that task and never calls the tool again; a
 * handle stored for another server is not polled there; a server that answers at once gives its
 * result as a plain call.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Workflow, WorkflowEngine } from "@effect/workflow"
import { describe, expect, it } from "@effect/vitest"
import { McpClient, McpSchema } from "@phasebound/client"
import { startTaskServer, type TaskServerOptions } from "@phasebound/testkit"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { EffectIdentity, TaskMarker, ToolCall, ToolCallError } from "../src/index.js"
import { eventually, onMemoryEngine, textOf } from "./support/harness.js"

const taskServer = (options: TaskServerOptions) =>
  Effect.acquireRelease(Effect.promise(() => startTaskServer(options)), (server) => Effect.promise(() => server.close()))

const connectTo = (url: string, revisions: ReadonlyArray<string> = ["2025-11-25"]) =>
  McpClient.connect({ url, revisions, policy: { task: { timeout: 10_000, minPollInterval: 5, maxPollInterval: 50 } } })
    .pipe(Effect.provide(FetchHttpClient.layer))

const toolWorkflow = (name: string) =>
  Workflow.make({
    name,
    payload: { run: Schema.String },
    idempotencyKey: (payload) => payload.run,
    success: McpSchema.CallToolResult,
    error: ToolCallError.ToolCallError
  })

const completion = (workflow: ReturnType<typeof toolWorkflow>, executionId: string) =>
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    for (;;) {
      const result = yield* engine.poll(workflow, executionId)
      if (result !== undefined && result._tag === "Complete") return result.exit
      yield* Effect.sleep("10 millis")
    }
  })

const asExecution = <A, E, R>(workflow: Workflow.Any, executionId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, WorkflowEngine.WorkflowInstance, WorkflowEngine.WorkflowInstance.initial(workflow, executionId))

describe("durable tool calls as tasks on WorkflowEngine.layerMemory", () => {
  it.scopedLive("the handle is stored before the wait; a re-execution polls the same task, never calling the tool", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", statusNotifications: false })
      const connection = yield* connectTo(server.url)
      const Flow = toolWorkflow("task-job")
      const options = { name: "job", connection: Effect.succeed(connection), tool: "job", task: { ttl: "1 minute" as const }, retry: Schedule.stop }
      const layer = Flow.toLayer(() => ToolCall.call(options))
      return yield* onMemoryEngine(
        layer,
        Effect.gen(function*() {
          const executionId = yield* Flow.execute({ run: "r1" }, { discard: true })
          // The first poll comes after the handle is recorded and confirmed.
          yield* Effect.promise(() => server.waitFor("tasks/get", 1))
          const stored = yield* asExecution(Flow, executionId, TaskMarker.find(TaskMarker.make("job")))
          const identity = yield* asExecution(Flow, executionId, EffectIdentity.derive("job"))
          expect(Option.getOrUndefined(stored)).toEqual({ taskId: "task-1", server: "task-server", tool: "job", effectIdentity: identity })
          expect(server.callParams()[0]?.["task"]).toEqual({ ttl: 60_000 })
          // Another worker executes the same activity (the first is taken for dead): it polls.
          const polls = server.count("tasks/get")
          const again = yield* Effect.fork(asExecution(Flow, executionId, ToolCall.call(options)))
          yield* eventually(() => server.count("tasks/get") >= polls + 2)
          server.complete("task-1")
          const resumed = yield* Fiber.join(again)
          const first = yield* completion(Flow, executionId)
          expect(textOf(resumed)).toBe("done task-1")
          expect(Exit.isSuccess(first) && textOf(first.value)).toBe("done task-1")
          expect(server.toolCalls("job")).toBe(1)
        })
      )
    }), 30_000)

  it.scopedLive("a handle stored for another server is not polled there: ToolCallOutcomeUnknown, nothing sent", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", statusNotifications: false })
      const connection = yield* connectTo(server.url)
      const Flow = toolWorkflow("task-elsewhere")
      const options = { name: "job", connection: Effect.succeed(connection), tool: "job", task: {}, retry: Schedule.stop }
      return yield* onMemoryEngine(
        Flow.toLayer(() => ToolCall.call(options)),
        Effect.gen(function*() {
          const executionId = "elsewhere-1"
          const identity = yield* asExecution(Flow, executionId, EffectIdentity.derive("job"))
          yield* asExecution(
            Flow,
            executionId,
            TaskMarker.record(TaskMarker.make("job"), { taskId: "task-7", server: "another-server", tool: "job", effectIdentity: identity })
          )
          const failure = yield* Effect.flip(asExecution(Flow, executionId, ToolCall.call(options)))
          expect(failure).toMatchObject({ _tag: "ToolCallOutcomeUnknown", source: "resumed", activity: "job" })
          expect(server.toolCalls("job") + server.count("tasks/get")).toBe(0)
        })
      )
    }), 30_000)

  it.scopedLive("a server that answers at once: the result, no handle stored; a failed task is a final ToolCallFailed", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", statusNotifications: false })
      const connection = yield* connectTo(server.url)
      const Flow = toolWorkflow("task-quick")
      const quick = { name: "quick", connection: Effect.succeed(connection), tool: "quick", task: {}, retry: Schedule.stop }
      // A failed task is the server's answer: not polled again, whatever the retry schedule.
      const quickRetry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
      const failing = { name: "job", connection: Effect.succeed(connection), tool: "job", task: {}, retry: quickRetry }
      return yield* onMemoryEngine(
        Flow.toLayer(({ run }) => ToolCall.call(run === "quick" ? quick : failing)),
        Effect.gen(function*() {
          const result = yield* Flow.execute({ run: "quick" })
          expect(textOf(result)).toBe("quick")
          const quickId = yield* Flow.executionId({ run: "quick" })
          expect(Option.isNone(yield* asExecution(Flow, quickId, TaskMarker.find(TaskMarker.make("quick"))))).toBe(true)
          const executionId = yield* Flow.execute({ run: "fails" }, { discard: true })
          yield* Effect.promise(() => server.waitFor("tasks/get", 1))
          server.fail()
          const exit = yield* completion(Flow, executionId)
          expect(exit).toMatchObject({ _tag: "Failure" })
          const error = Exit.isFailure(exit) ? exit.cause : undefined
          expect(JSON.stringify(error)).toContain("RemoteRefusal")
          expect(JSON.stringify(error)).not.toContain("internal.example")
          expect(JSON.stringify(error)).toContain("applied")
          expect(server.toolCalls("job")).toBe(1)
          expect(server.count("tasks/result")).toBe(1)
        })
      )
    }), 30_000)

  it.scopedLive(
    "2026-07-28: a task cancelled on the server is the server's final answer: polled no more, whatever the retry schedule",
    () =>
      Effect.gen(function*() {
        const server = yield* taskServer({ era: "stateless", statusNotifications: false })
        const connection = yield* connectTo(server.url, ["2026-07-28"])
        const Flow = toolWorkflow("task-cancelled")
        const quickRetry = Schedule.spaced("10 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
        const options = { name: "job", connection: Effect.succeed(connection), tool: "job", task: {}, retry: quickRetry }
        return yield* onMemoryEngine(
          Flow.toLayer(() => ToolCall.call(options)),
          Effect.gen(function*() {
            const executionId = yield* Flow.execute({ run: "cancelled" }, { discard: true })
            yield* Effect.promise(() => server.waitFor("tasks/get", 1))
            yield* connection.cancelTask("task-1")
            // At most the poll in flight at the cancel, then the one that says cancelled.
            const polls = server.count("tasks/get")
            const exit = yield* completion(Flow, executionId)
            expect(exit).toMatchObject({ _tag: "Failure" })
            const error = JSON.stringify(Exit.isFailure(exit) ? exit.cause : undefined)
            expect(error).toContain("RemoteRefusal")
            expect(error).toContain("task-cancelled")
            // Retried, it would be polled three more times (Schedule.recurs(3)).
            expect(server.count("tasks/get") - polls).toBeLessThanOrEqual(1)
            expect(server.toolCalls("job")).toBe(1)
          })
        )
      }),
    30_000
  )
})
