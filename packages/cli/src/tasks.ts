/**
 * Tasks from the command line (docs/DESIGN.md, "Tasks"): `call --task` sends the call as a task
 * where the server allows it and prints the task (its id) without waiting; `task <target> <id>`
 * prints a task's state, `--wait` waits for its end and prints its result as `call` does (exit 1
 * for a tool error), `--cancel` asks the server to cancel it; `tasks <target>` lists them
 * (2025-11-25). A wait is under the task budget (`--task-timeout`).
 */
import type { McpClient, McpTask } from "@phasebound/client"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import type { Use } from "./command.js"
import { closing, enter } from "./connection.js"
import { flag, type Flags } from "./flags.js"
import { json, oneLine, renderCall, table } from "./output.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"

/** What `task` does with the task: show it, wait for its result, or cancel it. */
export type TaskAction = "status" | "wait" | "cancel"

/** `task`'s own flags: `--wait` and `--cancel` exclude each other. */
export const parseTask = (flags: Flags): Effect.Effect<TaskAction, McpConnectionError> =>
  flags.wait && flags.cancel
    ? Effect.fail(invalidOption(flag("cancel"), "invalid-value"))
    : Effect.succeed(flags.wait ? "wait" : flags.cancel ? "cancel" : "status")

/** One task: JSON as the client gives it; on a terminal its id, status and message. */
export const renderTask = (task: McpTask.Task, machine: boolean): string =>
  machine
    ? json({ task })
    : `${oneLine(task.taskId)}  ${task.status}${task.statusMessage === undefined ? "" : `  ${oneLine(task.statusMessage)}`}\n`

export const renderTasks = (tasks: ReadonlyArray<McpTask.Task>, machine: boolean): string =>
  machine
    ? json({ tasks })
    : tasks.length === 0
    ? "no tasks\n"
    : table(["TASK", "STATUS", "MESSAGE"], tasks.map((task) => [task.taskId, task.status, task.statusMessage ?? ""]))

/** `tasks`: every page of `tasks/list`, under the call budget. */
export const listTasks = (ctx: RunContext) => (connection: McpClient.Connection, { machine }: Use<void>) =>
  Effect.gen(function*() {
    enter(ctx, "list-tasks", connection.policy.call)
    const tasks = yield* connection.listTasks()
    closing(ctx)
    return renderTasks(tasks, machine)
  })

/** `task <target> <id>`: its state, its result (`--wait`), or its cancellation (`--cancel`). */
export const useTask = (ctx: RunContext) => (connection: McpClient.Connection, { input, machine, rest }: Use<TaskAction>) =>
  Effect.gen(function*() {
    const taskId = rest[0]!
    if (input === "wait") {
      enter(ctx, "get-task", connection.policy.task)
      const result = yield* connection.taskResult(taskId)
      closing(ctx)
      ctx.state.exitCode = result.isError === true ? 1 : 0
      return renderCall(result, machine)
    }
    if (input === "cancel") {
      enter(ctx, "cancel-task", connection.policy.call)
      yield* connection.cancelTask(taskId)
      closing(ctx)
      return machine ? json({ cancelled: taskId }) : `cancellation asked for ${oneLine(taskId)}\n`
    }
    enter(ctx, "get-task", connection.policy.call)
    const task = yield* connection.getTask(taskId)
    closing(ctx)
    return renderTask(task, machine)
  })

/** `call --task`: the task the server created (not waited for), or the result it gave at once. */
export const callAsTask = (
  connection: McpClient.Connection,
  tool: string,
  args: Record<string, unknown>,
  effectIdentity: string | undefined,
  machine: boolean
): Effect.Effect<{ readonly text: string; readonly isError: boolean }, McpConnectionError> =>
  Effect.map(
    connection.callToolTask(tool, args, effectIdentity === undefined ? undefined : { effectIdentity }),
    (call) =>
      call._tag === "Result"
        ? { text: renderCall(call.result, machine), isError: call.result.isError === true }
        : { text: renderTask(call.handle.created, machine), isError: false }
  )
