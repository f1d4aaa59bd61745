/**
 * What the test and a runner process say to each other, one JSON value per line: commands on the
 * runner's stdin, events on its stdout.
 */
import { Schema } from "effect"
import { type KillPointAt, Step } from "./toolChain.js"

export const Command = Schema.Union(
  /** Builds the cluster layer and joins the cluster (a runner waits for it once loaded). */
  Schema.Struct({ cmd: Schema.Literal("join") }),
  /** Submits the workflow (and returns at once): the cluster runs it on the runner owning its shard. */
  Schema.Struct({ cmd: Schema.Literal("start"), key: Schema.String, steps: Schema.Array(Step) }),
  /**
   * Executes the workflow and waits for its exit (for an execution already complete, the engine
   * answers with the stored exit), then reports it.
   */
  Schema.Struct({ cmd: Schema.Literal("run"), key: Schema.String, steps: Schema.Array(Step) }),
  /** Polls the store until the execution is complete, then reports its exit. */
  Schema.Struct({ cmd: Schema.Literal("await"), key: Schema.String, executionId: Schema.String })
)
export type Command = typeof Command.Type

/** How a workflow ended, as the runner encodes it. */
export type EncodedExit =
  | { readonly _tag: "Success"; readonly value: ReadonlyArray<unknown> }
  | { readonly _tag: "Failure"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly cause: string }

export type RunnerEvent =
  | { readonly event: "loaded"; readonly name: string; readonly pid: number }
  | { readonly event: "ready"; readonly name: string; readonly pid: number }
  | { readonly event: "shards"; readonly name: string; readonly owned: number; readonly total: number }
  | { readonly event: "started"; readonly name: string; readonly key: string; readonly executionId: string }
  | { readonly event: "step"; readonly name: string; readonly key: string; readonly activity: string; readonly tool: string }
  /** The call reached its step's kill point in this runner, and stays there until the SIGKILL. */
  | { readonly event: "halted"; readonly name: string; readonly key: string; readonly activity: string; readonly at: KillPointAt }
  | { readonly event: "result"; readonly name: string; readonly key: string; readonly executionId: string; readonly exit: EncodedExit }
