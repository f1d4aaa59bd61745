/**
 * Tasks (docs/DESIGN.md, "Tasks"): the operations on a task the server created, in both
 * revisions that carry them, each on the one primitive of `core.ts` (`observed`):
 *
 * - `getTask`, `cancelTask`, `listTasks`: one request each (`listTasks` every page), under the
 *   call budget or its overrides;
 * - `wait`: the wait for a task's end under ONE deadline of the task budget (or, for a call the
 *   server turned into a task, what is left of the call's): `tasks/get` at the server's poll
 *   interval clamped into the policy's bounds, woken early by a status notification; then the
 *   result (`tasks/result` in 2025-11-25, which also carries a task's input requests on its
 *   stream; the ended task's own `result` or `error` in 2026-07-28, whose `inputRequests` are
 *   answered with the caller's handlers and `tasks/update`). Nothing here sends `tools/call`.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import type * as McpClient from "../../McpClient.js"
import { InvalidOption, LimitExceeded, type McpConnectionError, RemoteRefusal, type Stage } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as McpTask from "../../McpTask.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import type { Exchange, Response } from "../transport/transport.js"
import { withDeadline } from "../deadline.js"
import * as Failures from "../failures.js"
import { invalidResult, listAll } from "../listing.js"
import { refusal } from "../messages.js"
import { defaults } from "../policyDefaults.js"
import * as TaskWire from "../taskWire.js"
import { authorized } from "./authorized.js"
import { type Core, decodedAs, type Operation, refusedOption } from "./core.js"

/** The most input requests of one task answered over its wait (their keys are remembered). */
export const maxAnsweredInputs = 256

/** What a wait is bounded by: its deadline, each answer's bytes, the poll interval's bounds. */
export interface WaitBudget {
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxDepth?: number | undefined
  readonly maxNodes?: number | undefined
  readonly minPollIntervalMs: number
  readonly maxPollIntervalMs: number
}

/**
 * What becomes of the final result of a task's call: decoded (and checked against the tool's
 * `outputSchema` when the tool is known) by the module of the call.
 */
export type Finish = (
  tool: string | undefined,
  response: Response,
  exchange: Exchange,
  deadlineAt: number
) => Effect.Effect<McpSchema.CallToolResult, McpConnectionError>

export interface Tasks {
  readonly getTask: McpClient.Connection["getTask"]
  readonly taskResult: McpClient.Connection["taskResult"]
  readonly cancelTask: McpClient.Connection["cancelTask"]
  readonly listTasks: McpClient.Connection["listTasks"]
  /**
   * The wait for a task's final answer (the raw response of its result), under `budget`; with
   * the wait's deadline, which the check of that answer stays within.
   */
  readonly wait: (
    taskId: string,
    budget: WaitBudget,
    onStatus: ((task: McpTask.Task) => void) | undefined
  ) => Effect.Effect<Waited, McpConnectionError>
  /** The handle of a created task (`tool`: the tool called, when known). */
  readonly handle: (created: McpTask.Task, tool: string | undefined) => McpTask.TaskHandle
}

/** A wait's end: the final answer, its exchange, and the wait's deadline (epoch ms of its clock). */
export interface Waited {
  readonly response: Response
  readonly exchange: Exchange
  readonly deadlineAt: number
}

/** The poll interval the server suggests, clamped into the policy's bounds. */
export const pollIntervalOf = (task: McpTask.Task, budget: Pick<WaitBudget, "minPollIntervalMs" | "maxPollIntervalMs">): number => {
  const suggested = task.pollIntervalMs ?? defaults.taskPollIntervalMs
  return Math.min(budget.maxPollIntervalMs, Math.max(budget.minPollIntervalMs, suggested))
}

export const make = (core: Core, finish: Finish): Tasks => {
  const { notifications, policy } = core

  /** One request of the task protocol on the current session, observed, re-sent only after a 401. */
  const request = (operation: Operation, exchange: Exchange, params: Record<string, unknown>) =>
    authorized(
      core.auth,
      exchange.stage,
      1,
      (resent) => core.observed(operation, exchange, (on) => on.session.request(operation, params, exchange), resent),
      core.observe
    )

  const era = () => core.live.current().session.era

  const taskOfResponse = (exchange: Exchange, response: Response) => {
    const decoded = TaskWire.decodeTask(response.result)
    return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(invalidResult(exchange, response.bytes)(decoded.left))
  }

  const getTask: Tasks["getTask"] = (taskId, options) =>
    core.callPhase(
      "tasks/get",
      "get-task",
      options,
      TaskWire.isTaskId(taskId) ? undefined : "taskId",
      (on, exchange) => Effect.flatMap(on.session.request("tasks/get", { taskId }, exchange), decodedAs(TaskWire.decodeTask, exchange))
    )

  const cancelTask: Tasks["cancelTask"] = (taskId, options) =>
    core.callPhase(
      "tasks/cancel",
      "cancel-task",
      options,
      TaskWire.isTaskId(taskId) ? undefined : "taskId",
      (on, exchange) => Effect.map(on.session.request("tasks/cancel", { taskId }, exchange), ({ bytes }) => ({ value: undefined, bytes }))
    )

  const listTasks: Tasks["listTasks"] = (options) =>
    Effect.suspend(() =>
      // The tasks extension of 2026-07-28 has no listing: refused before any I/O.
      era() === "stateless"
        ? Effect.flatMap(PhasePolicy.callBudget(policy, options), (budget) =>
          Effect.fail(
            new InvalidOption({
              ...Failures.fields({ stage: "list-tasks", phase: "call", budget }),
              option: "tasks/list",
              reason: "undeclared-capability",
              outcome: "not-sent",
              retryable: false
            })
          ))
        : core.callPhase(
          "tasks/list",
          "list-tasks",
          options,
          undefined,
          (on, exchange) =>
            Effect.map(listAll(on.session, "tasks/list", "tasks", TaskWire.WireTask, exchange, policy), ({ bytes, items }) => ({ value: items, bytes }))
        )
    )

  const wait: Tasks["wait"] = (taskId, budget, onStatus) =>
    Effect.flatMap(Queue.sliding<void>(1), (wake) => {
      const exchangeOf = (stage: Stage): Exchange => ({
        stage,
        phase: "call",
        budget: { timeoutMs: budget.timeoutMs, maxBytes: budget.maxBytes, maxDepth: budget.maxDepth, maxNodes: budget.maxNodes }
      })
      let stage: Stage = "get-task"
      let last: McpTask.Task | undefined
      const seen = (task: McpTask.Task) => {
        const changed = last === undefined || last.status !== task.status || last.statusMessage !== task.statusMessage
        last = task
        if (!changed || onStatus === undefined) return
        try {
          onStatus(task)
        } catch {
          // The caller's callback is not the wait: what it throws changes nothing here.
        }
      }
      const answered = new Set<string>()
      let rounds = 0

      const step = (exchange: Exchange, method: Operation, params: Record<string, unknown>) => {
        stage = exchange.stage
        return request(method, exchange, params)
      }

      /** 2026-07-28: the input requests not answered yet, answered, then sent with `tasks/update`. */
      const answerInputs = (requests: TaskWire.Detail["inputRequests"], bytes: number) =>
        Effect.suspend(() => {
          const exchange = exchangeOf("update-task")
          const fresh = (requests ?? []).filter(([key]) => !answered.has(key))
          if (fresh.length === 0) return Effect.void
          if (rounds >= policy.maxInputRounds || answered.size + fresh.length > maxAnsweredInputs) {
            return Effect.fail(
              new LimitExceeded({ ...Failures.fields(exchange), limit: "maxInputRounds", observedBytes: bytes, outcome: "not-applied", retryable: false })
            )
          }
          rounds++
          const fulfil = core.fulfil
          if (fulfil === undefined) return Effect.fail(Failures.protocol(exchange, "undeclared-capability"))
          stage = "update-task"
          return Effect.flatMap(
            Effect.forEach(fresh, ([key, input]) => Effect.map(fulfil(input.method, input.params, exchange), (answer) => [key, answer] as const)),
            (entries) => {
              for (const [key] of entries) answered.add(key)
              return Effect.asVoid(step(exchange, "tasks/update", { taskId, inputResponses: Object.fromEntries(entries) }))
            }
          )
        })

      // The notification reader only hands the latest status over and wakes the wait:
      // `onStatus` runs on the waiting fiber, so a slow callback never holds up the
      // connection's other answers. (`unsafeOffer` keeps the first of a full queue, so the
      // status itself is kept here, the latest one.)
      let said: McpTask.Task | undefined
      const sawSaid = () => {
        const task = said
        said = undefined
        if (task !== undefined) seen(task)
      }
      const release = notifications.trackTask(taskId, (params) => {
        const task = TaskWire.taskOf(params)
        if (task === undefined || task.taskId !== taskId) return
        said = task
        wake.unsafeOffer(undefined)
      })

      // The policy's smallest interval first, whatever wakes the wait: a server that floods
      // status notifications cannot make the client poll faster than that.
      const pause = (task: McpTask.Task) =>
        Effect.zipRight(
          Effect.sleep(budget.minPollIntervalMs),
          Effect.race(
            Effect.sleep(pollIntervalOf(task, budget) - budget.minPollIntervalMs),
            Effect.flatMap(Queue.take(wake), () => Effect.sync(sawSaid))
          )
        )

      const loop: Effect.Effect<{ readonly response: Response; readonly exchange: Exchange }, McpConnectionError> = Effect.gen(
        function*() {
          for (;;) {
            const polled = exchangeOf("get-task")
            const response = yield* step(polled, "tasks/get", { taskId })
            const task = yield* taskOfResponse(polled, response)
            if (task.taskId !== taskId) return yield* Effect.fail(Failures.protocol(polled, "invalid-result", { observedBytes: response.bytes }))
            // A status said while the poll was out came before its answer.
            sawSaid()
            seen(task)
            if (era() === "handshake") {
              // 2025-11-25: `tasks/result` blocks until the task ends, and its stream carries the
              // requests the task needs answered (input_required).
              if (McpTask.isTerminal(task.status) || task.status === "input_required") {
                const exchange = exchangeOf("task-result")
                // The refusal of an ended task's result is the call's own error: it ran.
                const response = yield* Effect.mapError(
                  step(exchange, "tasks/result", { taskId }),
                  (error) => error._tag === "RemoteRefusal" ? Failures.withOutcome(error, "applied") : error
                )
                return { response, exchange }
              }
            } else {
              const detail = TaskWire.detailOf(response.result)
              if (detail === undefined) return yield* Effect.fail(Failures.protocol(polled, "invalid-result", { observedBytes: response.bytes }))
              if (task.status === "completed") {
                if (detail.result === undefined) {
                  return yield* Effect.fail(Failures.protocol(polled, "invalid-result", { observedBytes: response.bytes }))
                }
                return { response: { ...response, result: detail.result }, exchange: polled }
              }
              if (task.status === "failed") {
                return yield* Effect.fail(
                  detail.error === undefined
                    ? Failures.protocol(polled, "invalid-result", { observedBytes: response.bytes })
                    : Failures.withOutcome(refusal(polled, detail.error, core.secrets ?? [], { observedBytes: response.bytes }), "applied")
                )
              }
              if (task.status === "cancelled") {
                return yield* Effect.fail(
                  new RemoteRefusal({
                    ...Failures.fields(polled),
                    reason: "task-cancelled",
                    observedBytes: response.bytes,
                    outcome: "unknown",
                    retryable: false
                  })
                )
              }
              if (task.status === "input_required") yield* answerInputs(detail.inputRequests, response.bytes)
            }
            yield* pause(task)
          }
        }
      )

      // The connection's close ends the wait at once, whatever it is waiting on (a poll, the pause).
      const abandon = {
        ...core.abandonOnClose(exchangeOf("get-task")),
        failure: () => Failures.transport(exchangeOf(stage), "session-closed", "unknown")
      }
      return Effect.clockWith((clock) => {
        const deadlineAt = clock.unsafeCurrentTimeMillis() + budget.timeoutMs
        return Effect.map(
          withDeadline(loop, budget.timeoutMs, () => Failures.deadline(exchangeOf(stage), "unknown"), abandon),
          (waited): Waited => ({ ...waited, deadlineAt })
        )
      }).pipe(Effect.ensuring(Effect.sync(release)))
    })

  const waitBudget = (options: McpTask.WaitOptions | undefined) =>
    Effect.gen(function*() {
      const base = policy.task
      const timeoutMs = options?.timeout === undefined ? base.timeoutMs : yield* PhasePolicy.validateTimeout("task.timeout", options.timeout, "get-task")
      const maxBytes = options?.maxBytes === undefined ? base.maxBytes : yield* PhasePolicy.validateCount("task.maxBytes", options.maxBytes, "get-task")
      return { ...base, timeoutMs, maxBytes } satisfies WaitBudget
    })

  const resultOf = (taskId: string, tool: string | undefined, options: McpTask.WaitOptions | undefined) =>
    Effect.flatMap(waitBudget(options), (budget) => {
      const onStatus = options?.onStatus
      if (!TaskWire.isTaskId(taskId)) return refusedOption({ stage: "get-task", phase: "call", budget }, "taskId")
      if (onStatus !== undefined && typeof onStatus !== "function") return refusedOption({ stage: "get-task", phase: "call", budget }, "onStatus")
      if (tool !== undefined && (typeof tool !== "string" || tool.length === 0)) return refusedOption({ stage: "get-task", phase: "call", budget }, "tool")
      return Effect.flatMap(wait(taskId, budget, onStatus), ({ deadlineAt, exchange, response }) => finish(tool, response, exchange, deadlineAt))
    })

  const taskResult: Tasks["taskResult"] = (taskId, options) => resultOf(taskId, options?.tool, options)

  const handle: Tasks["handle"] = (created, tool) => ({
    taskId: created.taskId,
    created,
    status: getTask(created.taskId),
    result: (options) => resultOf(created.taskId, tool, options),
    cancel: cancelTask(created.taskId)
  })

  return { getTask, taskResult, cancelTask, listTasks, wait, handle }
}
