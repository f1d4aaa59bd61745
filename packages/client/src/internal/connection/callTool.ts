/**
 * `tools/call` (docs/DESIGN.md, "No replay, outcomes"): sent once under the call budget (or its validated
 * overrides), sent a second time only after a 401 or 403 refused it unprocessed; the result
 * decoded and checked against the tool's `outputSchema` within the call's deadline ("Typed
 * results"); progress and the idle timeout when asked for ("Progress"). Also its forms as a
 * stream of events and with a decoded `structuredContent`. A call the server turns into a task
 * (docs/DESIGN.md, "Tasks") is followed to its result within the call's deadline; `callToolTask`
 * gives the task's handle instead, and the task operations come from `tasks.ts`.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import { DeadlineExceeded, type McpConnectionError } from "../../McpConnectionError.js"
import * as McpSchema from "../../McpSchema.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import type { Exchange, Response } from "../transport/transport.js"
import * as Failures from "../failures.js"
import { withIdleTimeout } from "../idle.js"
import { invalidResult, type Listing } from "../listing.js"
import { redactValue } from "../redactValue.js"
import * as Secrets from "../secrets.js"
import type { Discovered } from "../liveSession.js"
import { effectIdentityMetaKey, isValidCallerMeta, isValidEffectIdentity, traceContext } from "../requestMeta.js"
import * as McpTask from "../../McpTask.js"
import * as TaskWire from "../taskWire.js"
import { authorized } from "./authorized.js"
import { type Core, refusedOption, resultViolation } from "./core.js"
import * as Tasks from "./tasks.js"

/** How many progress reports `callToolStream` keeps for a reader that falls behind. */
const progressBuffer = 16

const decodeCallResult = Schema.decodeUnknownEither(McpSchema.CallToolResult)

/**
 * What a call's result becomes once decoded and checked against the tool's `outputSchema`: the
 * result itself, or the caller's decoding of its `structuredContent`. A failure here is the
 * call's, with its exchange and bytes. `pastDeadline` says whether the call's deadline has passed.
 */
type Finish<A> = (
  result: McpSchema.CallToolResult,
  exchange: Exchange,
  bytes: number,
  pastDeadline: () => boolean
) => Either.Either<A, McpConnectionError>

/** The check of a result (the `outputSchema`'s, or the caller's decoding) ended past the call's deadline: it ran, it is not sent again. */
const checkPastDeadline = (exchange: Exchange, bytes: number) =>
  new DeadlineExceeded({ ...Failures.fields(exchange), observedBytes: bytes, reason: "output-check", outcome: "applied", retryable: false })

/** The redaction of a result (`redact: true`) ended past the call's deadline: the call ran, it is not sent again. */
const redactionPastDeadline = (exchange: Exchange, bytes: number) =>
  new DeadlineExceeded({ ...Failures.fields(exchange), observedBytes: bytes, reason: "redaction", outcome: "applied", retryable: false })

const asIs: Finish<McpSchema.CallToolResult> = (result) => Either.right(result)

export interface CallTool {
  readonly callTool: McpClient.Connection["callTool"]
  readonly callToolStream: McpClient.Connection["callToolStream"]
  readonly callToolDecoded: McpClient.Connection["callToolDecoded"]
  readonly callToolTask: McpClient.Connection["callToolTask"]
  readonly getTask: McpClient.Connection["getTask"]
  readonly taskResult: McpClient.Connection["taskResult"]
  readonly cancelTask: McpClient.Connection["cancelTask"]
  readonly listTasks: McpClient.Connection["listTasks"]
}

/** A call's answer, with the response's bytes, the call's exchange and its deadline (for what follows it). */
interface Answered<A> {
  readonly value: A
  readonly bytes: number
  readonly exchange: Exchange
  readonly deadlineAt: number
}

/** What a `tools/call` gave: the call's answer, or a task the server created for it. */
type Sent<A> =
  | { readonly _tag: "Done" } & Answered<A>
  | {
    readonly _tag: "Created"
    readonly exchange: Exchange
    readonly task: McpTask.Task
    /**
     * Ends the call's progress tracking: its token stays valid for the task's lifetime (MCP
     * 2025-11-25, "Task Progress Notifications"), so whoever waits for the task releases it.
     */
    readonly release: () => void
    /** The call's deadline, which a wait that follows it stays within. */
    readonly deadlineAt: number
  }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Whether a call on this session is sent as a task (2025-11-25, docs/DESIGN.md, "Tasks"): only
 * when the server declares task-augmented `tools/call` and the tool allows it (`task`: asked for,
 * so `optional` or `required`; a plain call, only `required`). The 2026-07-28 extension needs no
 * asking: the server decides, and the era declares the extension with every request.
 */
const augments = (on: Discovered<Listing>, tool: McpSchema.Tool | undefined, asked: boolean): boolean => {
  if (on.session.era !== "handshake" || tool === undefined) return false
  const tasks = on.session.capabilities["tasks"]
  const requests = isRecord(tasks) ? tasks["requests"] : undefined
  const tools = isRecord(requests) ? requests["tools"] : undefined
  if (!isRecord(tools) || !isRecord(tools["call"])) return false
  const execution = (tool as Record<string, unknown>)["execution"]
  const support = isRecord(execution) ? execution["taskSupport"] : undefined
  return support === "required" || (asked && support === "optional")
}

export const make = (core: Core): CallTool => {
  const { auth, notifications, observe, observed, policy } = core

  // Combinators rather than a generator: this is the hot path of a tool call. The tools by name
  // are those of the listing a call runs on.
  let toolsByName = new Map(core.live.current().listing.tools.map((tool) => [tool.name, tool]))
  let toolsOf = core.live.current().listing
  const toolNamed = (on: Discovered<Listing>, name: string) => {
    if (toolsOf !== on.listing) {
      toolsOf = on.listing
      toolsByName = new Map(on.listing.tools.map((tool) => [tool.name, tool]))
    }
    return toolsByName.get(name)
  }

  const checkedResult = <A>(
    on: Discovered<Listing>,
    name: string,
    exchange: Exchange,
    response: Response,
    finish: Finish<A>,
    clock: Clock.Clock,
    deadlineAt: number
  ) => {
    const decoded = decodeCallResult(response.result)
    if (Either.isLeft(decoded)) return Effect.fail(invalidResult(exchange, response.bytes)(decoded.left))
    const result = decoded.right
    const check = on.listing.outputChecks.get(name)
    // A tool error need not carry what the schema describes.
    if (check !== undefined && result.isError !== true) {
      if (result.structuredContent === undefined) {
        return Effect.fail(resultViolation(exchange, "missing-structured-content", response.bytes))
      }
      // Bounded (docs/DESIGN.md, "Typed results"): stopped at the call's deadline, or past its
      // ceiling of steps; either way the server ran the tool: `applied`, never sent again.
      const outcome = check(result.structuredContent, {
        deadlineAt,
        now: () => clock.unsafeCurrentTimeMillis(),
        resultBytes: response.bytes
      })
      if (outcome === "deadline") return Effect.fail(checkPastDeadline(exchange, response.bytes))
      if (outcome === "too-costly") {
        return Effect.fail(resultViolation(exchange, "output-check-too-costly", response.bytes))
      }
      if (outcome === "invalid") {
        return Effect.fail(resultViolation(exchange, "structured-content-mismatch", response.bytes))
      }
    }
    const finished = finish(result, exchange, response.bytes, () => clock.unsafeCurrentTimeMillis() > deadlineAt)
    return Either.isRight(finished) ? Effect.succeed({ value: finished.right, bytes: response.bytes }) : Effect.fail(finished.left)
  }

  const callToolWith = <A>(
    name: string,
    args: Readonly<Record<string, unknown>> | undefined,
    options: McpClient.CallOptions | undefined,
    finish: Finish<A>,
    task?: { readonly ttlMs: number | undefined }
  ): Effect.Effect<Sent<A>, McpConnectionError> =>
    Effect.flatMap(PhasePolicy.callBudget(policy, options), (budget) => {
      const exchange: Exchange = { stage: "call", phase: "call", budget }
      const meta = options?.meta
      if (meta !== undefined && !isValidCallerMeta(meta)) return refusedOption(exchange, "meta")
      const effectIdentity = options?.effectIdentity
      if (effectIdentity !== undefined && !isValidEffectIdentity(effectIdentity)) {
        return refusedOption(exchange, "effectIdentity")
      }
      const identity = effectIdentity === undefined ? undefined : { [effectIdentityMetaKey]: effectIdentity }
      const onProgress = options?.onProgress
      if (onProgress !== undefined && typeof onProgress !== "function") return refusedOption(exchange, "onProgress")
      const idleMs = budget.idleTimeoutMs
      const send = (on: Discovered<Listing>) => {
        // A tool left out of the listing (invalid header declarations, an output schema that
        // cannot be compiled) cannot be called correctly: refused before sending.
        if (on.listing.excluded.has(name)) return refusedOption(exchange, "name")
        // The trace context of the call's own span (inside it, see `observed`).
        return Effect.flatMap(traceContext, (trace) => {
          const listed = toolNamed(on, name)
          const augmented = augments(on, listed, task !== undefined)
          const request = (progressToken?: string, release: () => void = () => {}) => {
            const plain = trace === undefined && meta === undefined && identity === undefined && progressToken === undefined
              ? { name, arguments: args ?? {} }
              : {
                name,
                arguments: args ?? {},
                _meta: { ...trace, ...meta, ...identity, ...(progressToken === undefined ? {} : { progressToken }) }
              }
            // A task asked for (2025-11-25), with the lifetime the caller asked for, if any.
            const params = !augmented ? plain : { ...plain, task: task?.ttlMs === undefined ? {} : { ttl: task.ttlMs } }
            // The call's deadline, for the check of its result: it started with this effect.
            return Effect.clockWith((clock) => {
              const deadlineAt = clock.unsafeCurrentTimeMillis() + budget.timeoutMs
              return Effect.flatMap(
                on.session.request("tools/call", params, exchange, listed),
                (response): Effect.Effect<{ readonly value: Sent<A>; readonly bytes: number }, McpConnectionError> => {
                  if (!TaskWire.isCreatedTask(response.result)) {
                    return Effect.map(
                      checkedResult(on, name, exchange, response, finish, clock, deadlineAt),
                      (checked) => ({ value: { _tag: "Done", ...checked, exchange, deadlineAt }, bytes: checked.bytes })
                    )
                  }
                  const created = TaskWire.createdTaskOf(response.result)
                  // The server accepted the call: whatever follows, it is not sent again.
                  if (created === undefined) return Effect.fail(resultViolation(exchange, "invalid-result", response.bytes))
                  return Effect.succeed({ value: { _tag: "Created", exchange, task: created, release, deadlineAt }, bytes: response.bytes })
                }
              )
            })
          }
          if (onProgress === undefined && idleMs === undefined) return request()
          // Progress asked for (docs/DESIGN.md, "Progress"): each report resets the idle timeout.
          let touch = () => {}
          const tracking = notifications.trackProgress((progress) => {
            touch()
            try {
              onProgress?.(progress)
            } catch {
              // The caller's callback is not the call: what it throws changes nothing here.
            }
          })
          const sent = idleMs === undefined
            ? request(tracking.token, tracking.release)
            : withIdleTimeout(idleMs, () => Failures.idle(exchange), (reset) => {
              touch = reset
              return request(tracking.token, tracking.release)
            })
          // A created task keeps the token for its wait (`Created.release`); anything else ends it.
          return Effect.onExit(sent, (exit) => Exit.isSuccess(exit) && exit.value.value._tag === "Created" ? Effect.void : Effect.sync(tracking.release))
        })
      }
      // Sent once; sent a second time only after a 401 or 403 refused it unprocessed and a new
      // credential is in place (`authorized`).
      return Effect.map(
        authorized(auth, "call", 1, (resent) => observed("tools/call", exchange, send, resent, effectIdentity), observe),
        (finished) => finished.value
      )
    })

  /**
   * Decoded, and checked against the tool's `outputSchema` when the tool is known, within what
   * is left of the wait's deadline.
   */
  const finishTask: Tasks.Finish = (tool, response, exchange, deadlineAt) =>
    Effect.clockWith((clock) =>
      Effect.map(
        checkedResult(core.live.current(), tool ?? "", exchange, response, asIs, clock, deadlineAt),
        (checked) => checked.value
      )
    )
  const tasks = Tasks.make(core, finishTask)

  /**
   * A call, followed to its result when the server made it a task: the wait takes what is left
   * of the call's deadline, each answer under the call's byte ceiling (docs/DESIGN.md, "Tasks").
   */
  const followed = <A>(
    name: string,
    args: Readonly<Record<string, unknown>> | undefined,
    options: McpClient.CallOptions | undefined,
    finish: Finish<A>
  ): Effect.Effect<Answered<A>, McpConnectionError> =>
    Effect.flatMap(callToolWith(name, args, options, finish), (sent) => {
      if (sent._tag === "Done") return Effect.succeed(sent)
      return Effect.flatMap(
        Effect.zip(PhasePolicy.callBudget(policy, options), Effect.clock),
        ([budget, clock]) => {
          const left = Math.max(1, sent.deadlineAt - clock.unsafeCurrentTimeMillis())
          const waitBudget = { ...policy.task, timeoutMs: left, maxBytes: budget.maxBytes }
          // The call's progress goes on reaching `onProgress` while the task runs.
          return Effect.flatMap(tasks.wait(sent.task.taskId, waitBudget, undefined), ({ exchange, response }) =>
            Effect.map(
              checkedResult(core.live.current(), name, exchange, response, finish, clock, sent.deadlineAt),
              (checked): Answered<A> => ({ ...checked, exchange: sent.exchange, deadlineAt: sent.deadlineAt })
            )).pipe(Effect.ensuring(Effect.sync(sent.release)))
        }
      )
    })

  /**
   * With `redact: true`, the result cleared of the connection's secrets (a catalog's call: of
   * those it gives), read now that the result is in (tokens join them as they are obtained).
   * The redaction yields between steps, so the deadline is the call's, checked at each step: the
   * call's own timer ended with its response (`observed`), and a deadline it fired would say
   * `unknown` of a call the server answered (docs/DESIGN.md, "AI toolkits").
   */
  const callTool: CallTool["callTool"] = (name, args, options) => {
    const redact = options?.redact
    if (redact === undefined || redact === false) return Effect.map(followed(name, args, options, asIs), (answered) => answered.value)
    if (redact !== true) {
      return Effect.flatMap(PhasePolicy.callBudget(policy, options), (budget) => refusedOption({ stage: "call", phase: "call", budget }, "redact"))
    }
    const given = (options as { readonly [Secrets.redactWith]?: () => ReadonlyArray<string> })[Secrets.redactWith]
    return Effect.flatMap(followed(name, args, options, asIs), ({ bytes, deadlineAt, exchange, value }) =>
      Effect.clockWith((clock) =>
        redactValue(
          value,
          given === undefined ? core.secrets ?? [] : given(),
          () => clock.unsafeCurrentTimeMillis() > deadlineAt ? redactionPastDeadline(exchange, bytes) : undefined
        ) as Effect.Effect<McpSchema.CallToolResult, McpConnectionError>
      ))
  }

  const callToolTask: CallTool["callToolTask"] = (name, args, options) =>
    Effect.flatMap(
      options?.ttl === undefined ? Effect.succeed(undefined) : PhasePolicy.validateTimeout("ttl", options.ttl, "call"),
      (ttl) => {
        const { ttl: _, ...callOptions } = options ?? {}
        return Effect.map(
          callToolWith(name, args, callOptions, asIs, { ttlMs: ttl === undefined ? undefined : Math.ceil(ttl) }),
          (sent): McpTask.TaskCall => {
            if (sent._tag === "Done") return { _tag: "Result", result: sent.value }
            sent.release()
            return { _tag: "Task", handle: tasks.handle(sent.task, name) }
          }
        )
      }
    )

  const callToolStream: CallTool["callToolStream"] = (name, args, options) =>
    Stream.asyncScoped<McpClient.CallEvent, McpConnectionError>(
      (emit) =>
        callTool(name, args, { ...options, onProgress: (progress) => void emit.single({ _tag: "Progress", progress }) }).pipe(
          Effect.matchEffect({
            onFailure: (error) => Effect.promise(() => emit.fail(error)),
            onSuccess: (result) =>
              Effect.promise(async () => {
                await emit.single({ _tag: "Result", result })
                await emit.end()
              })
          }),
          Effect.interruptible,
          Effect.forkScoped
        ),
      { bufferSize: progressBuffer, strategy: "sliding" }
    )

  const callToolDecoded: CallTool["callToolDecoded"] = (output, name, args, options) => {
    const decode = Schema.decodeUnknownEither(output)
    const answered = followed(
      name,
      args,
      options,
      (result, exchange, bytes, pastDeadline): Either.Either<McpClient.DecodedResult<typeof output.Type>, McpConnectionError> => {
        if (result.isError === true) return Either.right({ isError: true, result })
        if (result.structuredContent === undefined) return Either.left(resultViolation(exchange, "missing-structured-content", bytes))
        const decoded = decode(result.structuredContent)
        // The caller's decoding is synchronous, nothing can interrupt it: a decoding that ended
        // past the deadline does not make a late answer a success (docs/DESIGN.md, "Typed results").
        if (pastDeadline()) return Either.left(checkPastDeadline(exchange, bytes))
        return Either.match(decoded, {
          onLeft: (error) => Either.left(resultViolation(exchange, "structured-content-mismatch", bytes, error)),
          onRight: (value) => Either.right({ isError: false, value, result })
        })
      }
    )
    return Effect.map(answered, ({ value }) => value)
  }

  return {
    callTool,
    callToolStream,
    callToolDecoded,
    callToolTask,
    getTask: tasks.getTask,
    taskResult: tasks.taskResult,
    cancelTask: tasks.cancelTask,
    listTasks: tasks.listTasks
  }
}
