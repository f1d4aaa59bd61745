/**
 * The sent marker on `ClusterWorkflowEngine` (in process: `TestRunner`, in-memory message
 * storage), against a real loopback server: the marker is confirmed while the workflow runs, an
 * execution of the activity after it finds it, and why it lives on a companion execution
 * (docs/DURABILITY.md, "How it works"). Several processes and SQL storage: test/cluster/.
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as TestRunner from "@effect/cluster/TestRunner"
import { Activity, DurableDeferred, Workflow, WorkflowEngine } from "@effect/workflow"
import { describe, expect, it } from "@effect/vitest"
import { McpSchema } from "@phasebound/client"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { SentMarker, ToolCall, ToolCallError } from "../src/index.js"
import { connectTo, effectServer, textOf } from "./support/harness.js"

const clusterEngine = ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(TestRunner.layer))

const onClusterEngine = <A, E, R>(
  registrations: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>,
  body: Effect.Effect<A, E, R>
) => Effect.provide(body, Layer.provideMerge(registrations, clusterEngine))

describe("the sent marker on ClusterWorkflowEngine", () => {
  it.scopedLive("is confirmed while the workflow runs; a later execution of the attempt finds it and does not send", () =>
    Effect.gen(function*() {
      const server = yield* effectServer()
      const connection = yield* connectTo(server)
      const Ledger = Workflow.make({
        name: "cluster-ledger",
        payload: { run: Schema.String },
        idempotencyKey: (payload) => payload.run,
        success: McpSchema.CallToolResult,
        error: ToolCallError.ToolCallError
      })
      const options = { name: "append", connection: Effect.succeed(connection), tool: "append", arguments: { entry: "x" } }
      const layer = Ledger.toLayer(() => ToolCall.call(options))
      yield* onClusterEngine(
        layer,
        Effect.gen(function*() {
          const result = yield* Ledger.execute({ run: "r1" })
          expect(textOf(result)).toBe("1")
          const executionId = yield* Ledger.executionId({ run: "r1" })
          const instance = WorkflowEngine.WorkflowInstance.initial(Ledger, executionId)
          const marker = yield* Effect.provideService(
            SentMarker.find(SentMarker.make("append", 1)),
            WorkflowEngine.WorkflowInstance,
            instance
          )
          expect(marker).toEqual(Option.some({ effectIdentity: server.effectIdentities("append")[0], idempotent: false }))

          // What the engine runs when it executes the attempt again (its result not persisted).
          const again = yield* ToolCall.call(options).execute.pipe(
            Effect.provideService(WorkflowEngine.WorkflowInstance, instance),
            Effect.scoped,
            Effect.flip
          )
          expect(again).toMatchObject({ _tag: "ToolCallOutcomeUnknown", source: "resumed" })
          expect(server.toolCalls("append")).toBe(1)
        })
      )
    }))

  it.scopedLive("a deferred on the workflow's own execution is not readable while the workflow runs (why the companion)", () =>
    Effect.gen(function*() {
      const Flow = Workflow.make({
        name: "cluster-own-execution",
        payload: { run: Schema.String },
        idempotencyKey: (payload) => payload.run,
        success: Schema.Boolean
      })
      const Own = DurableDeferred.make("own")
      const probe = Activity.make({
        name: "probe",
        success: Schema.Boolean,
        execute: Effect.gen(function*() {
          const engine = yield* WorkflowEngine.WorkflowEngine
          const instance = yield* WorkflowEngine.WorkflowInstance
          yield* engine.deferredDone(Own, {
            workflowName: instance.workflow.name,
            executionId: instance.executionId,
            deferredName: Own.name,
            exit: Exit.void
          })
          const seen = engine.deferredResult(Own).pipe(
            Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (exit) => exit !== undefined }),
            Effect.timeout("1 second"),
            Effect.option
          )
          return Option.isSome(yield* seen)
        })
      })
      const layer = Flow.toLayer(() => probe)
      // Handled one at a time, the deferred waits behind the workflow's own run, which waits for the probe.
      const readable = yield* onClusterEngine(layer, Flow.execute({ run: "r1" }))
      expect(readable).toBe(false)
    }))
})
