/**
 * The workflow the cluster tests run: the tool calls its payload lists, in order, each one a
 * `ToolCall.call` activity named after its position and tool, with the step's timeout if it has
 * one. A test chooses the calls; the runner only executes them.
 *
 * A step may name a kill point: where, in the call, the runner it names stops (and says so) for
 * the test to kill it there. The points sit in the connection the activity is given, because
 * `ToolCall.call` reaches it at fixed places (docs/DURABILITY.md, "How it works"): it
 * evaluates the `connection` effect after reading the sent marker and before recording one
 * ("before-marker"), and calls its `callTool` once the marker is recorded and confirmed
 * ("before-send"). Any other runner, a resuming one included, goes through.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { Connection } from "@phasebound/client/McpClient"
import { EffectIdentity, ToolCall, ToolCallError } from "@phasebound/workflow"
import { Context, Duration, Effect, Schema } from "effect"

export const Step = Schema.Struct({
  tool: Schema.String,
  args: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The call's timeout (`callOptions.timeout`), when not the client's default: the only budget. */
  timeoutMs: Schema.optional(Schema.Number),
  /** Made as a task (`ToolCall.call`'s `task`): the task's handle is stored before the wait. */
  task: Schema.optional(Schema.Boolean),
  /** Where the runner named `runner` stops in this call, for the test to kill it there. */
  killPoint: Schema.optional(Schema.Struct({ runner: Schema.String, at: Schema.Literal("before-marker", "before-send") }))
})
export type Step = typeof Step.Type

export type KillPointAt = NonNullable<Step["killPoint"]>["at"]

export const StepResult = Schema.Struct({
  activity: Schema.String,
  tool: Schema.String,
  identity: Schema.String,
  text: Schema.String
})
export type StepResult = typeof StepResult.Type

export const ToolChain = Workflow.make({
  name: "ToolChain",
  payload: { key: Schema.String, steps: Schema.Array(Step) },
  success: Schema.Array(StepResult),
  error: ToolCallError.ToolCallError,
  idempotencyKey: ({ key }) => key
})

/** The MCP connection of this process, shared by every activity it runs. */
export class Mcp extends Context.Tag("phasebound/test/cluster/Mcp")<Mcp, Connection>() {}

/** Told where the workflow is (this process runs it, perhaps replaying it); the runner prints it. */
export class StepObserver extends Context.Tag("phasebound/test/cluster/StepObserver")<
  StepObserver,
  (event: { readonly key: string; readonly activity: string; readonly tool: string }) => void
>() {}

/**
 * This process's side of the kill points: its runner name, and `halt`, which reports that the
 * workflow reached a point and never returns (the test kills the process there).
 */
export class KillPoints extends Context.Tag("phasebound/test/cluster/KillPoints")<KillPoints, {
  readonly runner: string
  readonly halt: (event: { readonly key: string; readonly activity: string; readonly at: KillPointAt }) => Effect.Effect<never>
}>() {}

/** The step's connection: this process's, with the step's kill point if it names this runner. */
const connectionFor = (key: string, activity: string, step: Step) =>
  Effect.gen(function*() {
    const mcp = yield* Mcp
    const killPoints = yield* KillPoints
    const at = step.killPoint?.runner === killPoints.runner ? step.killPoint.at : undefined
    if (at === "before-marker") return yield* killPoints.halt({ key, activity, at })
    if (at === "before-send") {
      const callTool: Connection["callTool"] = (...args) => Effect.zipRight(killPoints.halt({ key, activity, at }), mcp.callTool(...args))
      const callToolTask: Connection["callToolTask"] = (...args) => Effect.zipRight(killPoints.halt({ key, activity, at }), mcp.callToolTask(...args))
      return { ...mcp, callTool, callToolTask }
    }
    return mcp
  })

const textOf = (content: ReadonlyArray<unknown>): string =>
  content.map((part) => typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? part.text : "").join("")

export const ToolChainLive = ToolChain.toLayer(Effect.fn(function*({ key, steps }) {
  const observe = yield* StepObserver
  const results: Array<StepResult> = []
  for (const [index, step] of steps.entries()) {
    const activity = `${index}:${step.tool}`
    observe({ key, activity, tool: step.tool })
    const result = yield* ToolCall.call({
      name: activity,
      connection: connectionFor(key, activity, step),
      tool: step.tool,
      arguments: step.args,
      ...(step.timeoutMs === undefined ? {} : { callOptions: { timeout: Duration.millis(step.timeoutMs) } }),
      ...(step.task === true ? { task: {} } : {})
    })
    const identity = yield* EffectIdentity.derive(activity)
    results.push({ activity, tool: step.tool, identity, text: textOf(result.content) })
  }
  return results
}))
