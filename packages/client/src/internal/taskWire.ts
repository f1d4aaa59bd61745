/**
 * Tasks on the wire, in both revisions that carry them (docs/DESIGN.md, "Tasks"): the task
 * object of 2025-11-25 (`ttl`, `pollInterval`; created as `{ task }`) and of the 2026-07-28
 * extension (`ttlMs`, `pollIntervalMs`; created as the result itself with `resultType: "task"`,
 * an ended task carrying its `result` or `error`, a task waiting for input its `inputRequests`),
 * read into the one `McpTask.Task`. Strict: a task without a string id or a known status, or
 * with a field of the wrong type, is no task.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as McpTask from "../McpTask.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The longest task id accepted: an id is a key the client keeps and sends back. */
export const maxTaskIdLength = 1024

const TaskId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(maxTaskIdLength))
const Millis = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

/** A task as either revision writes it. */
const WireFields = Schema.Struct({
  taskId: TaskId,
  status: McpTask.TaskStatus,
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.optional(Schema.String),
  lastUpdatedAt: Schema.optional(Schema.String),
  ttl: Schema.optional(Schema.NullOr(Millis)),
  ttlMs: Schema.optional(Schema.NullOr(Millis)),
  pollInterval: Schema.optional(Millis),
  pollIntervalMs: Schema.optional(Millis)
})

/** A task of either revision, decoded into `McpTask.Task` (extra fields ignored). */
export const WireTask: Schema.Schema<McpTask.Task, typeof WireFields.Encoded> = Schema.transformOrFail(
  WireFields,
  Schema.typeSchema(McpTask.Task),
  {
    strict: true,
    decode: (wire) => {
      const pollIntervalMs = wire.pollIntervalMs ?? wire.pollInterval
      return ParseResult.succeed({
        taskId: wire.taskId,
        status: wire.status,
        ...(wire.statusMessage === undefined ? {} : { statusMessage: wire.statusMessage }),
        ...(wire.createdAt === undefined ? {} : { createdAt: wire.createdAt }),
        ...(wire.lastUpdatedAt === undefined ? {} : { lastUpdatedAt: wire.lastUpdatedAt }),
        ttlMs: wire.ttlMs ?? wire.ttl ?? null,
        ...(pollIntervalMs === undefined ? {} : { pollIntervalMs })
      })
    },
    encode: (task, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, task, "decoding only"))
  }
)

/** A task of either revision decoded strictly: the task, or why it is none. */
export const decodeTask = Schema.decodeUnknownEither(WireTask)

/** Whether `u` can be a task's id: a string of 1 to 1,024 characters. */
export const isTaskId = (u: unknown): u is string => typeof u === "string" && u.length > 0 && u.length <= maxTaskIdLength

/** The task in `u`, or `undefined`. */
export const taskOf = (u: unknown): McpTask.Task | undefined => Either.getOrUndefined(decodeTask(u))

/**
 * Whether a `tools/call` result is a created task rather than the call's result: 2026-07-28
 * says so with `resultType: "task"`; 2025-11-25 answers a task-augmented call with `{ task }`.
 */
export const isCreatedTask = (result: Readonly<Record<string, unknown>>): boolean =>
  result["resultType"] === "task" || (isRecord(result["task"]) && !("content" in result))

/** The task a created-task result carries (either revision), or `undefined` when it is malformed. */
export const createdTaskOf = (result: Readonly<Record<string, unknown>>): McpTask.Task | undefined =>
  result["resultType"] === "task" ? taskOf(result) : taskOf(result["task"])

/** What a 2026-07-28 `tasks/get` (or status notification) carries beyond the task itself. */
export interface Detail {
  /** `completed`: the call's result. */
  readonly result?: Readonly<Record<string, unknown>> | undefined
  /** `failed`: the JSON-RPC error the call ended with. */
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown } | undefined
  /** `input_required`: the server's requests, by key. */
  readonly inputRequests?: ReadonlyArray<readonly [string, { readonly method: string; readonly params?: Record<string, unknown> }]> | undefined
}

/** The detail of a 2026-07-28 task result; `undefined` when a field is present but malformed. */
export const detailOf = (result: Readonly<Record<string, unknown>>): Detail | undefined => {
  const { error, inputRequests, result: inner } = result
  if (inner !== undefined && !isRecord(inner)) return undefined
  let failure: Detail["error"]
  if (error !== undefined) {
    if (!isRecord(error) || typeof error["code"] !== "number" || !Number.isInteger(error["code"])) return undefined
    failure = { code: error["code"], message: typeof error["message"] === "string" ? error["message"] : "", data: error["data"] }
  }
  let requests: Array<readonly [string, { readonly method: string; readonly params?: Record<string, unknown> }]> | undefined
  if (inputRequests !== undefined) {
    if (!isRecord(inputRequests)) return undefined
    requests = []
    for (const [key, request] of Object.entries(inputRequests)) {
      if (!isRecord(request) || typeof request["method"] !== "string") return undefined
      const params = request["params"]
      if (params !== undefined && !isRecord(params)) return undefined
      requests.push([key, params === undefined ? { method: request["method"] } : { method: request["method"], params }])
    }
  }
  return { result: inner, error: failure, inputRequests: requests }
}

/** The task id of a status notification's params (either revision), or `undefined`. */
export const notifiedTaskId = (params: unknown): string | undefined => isRecord(params) && typeof params["taskId"] === "string" ? params["taskId"] : undefined

/**
 * The client capabilities of a 2026-07-28 request with the tasks extension declared (beside any
 * other extension already there): a server returns a task only to a request that declares it.
 */
export const withTasksExtension = (capabilities: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> => {
  const extensions = isRecord(capabilities["extensions"]) ? capabilities["extensions"] : {}
  return { ...capabilities, extensions: { ...extensions, [McpTask.extensionId]: {} } }
}
