/**
 * A loopback MCP server with tasks, in either revision that carries them: the experimental tasks
 * of 2025-11-25 (`initialize`, sessions, task-augmented `tools/call`, `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status` on the standalone
 * GET stream) or the tasks extension of 2026-07-28 (`server/discover`, `resultType: "task"`,
 * `tasks/get` carrying an ended task's `result` or `error` and a waiting task's `inputRequests`,
 * `tasks/update`, `tasks/cancel`). Streamable HTTP, JSON answers (`tasks/result` of a task still
 * running is held until it ends).
 *
 * Tasks end when the test says (`complete`, `fail`) or after `completeAfterPolls` polls; the
 * tools:
 *
 * - `job` (`execution.taskSupport: "required"`): a task; its result is `{ text: "done <n>" }`;
 * - `maybe_job` (`"optional"`): a task when asked for (2025) or always (2026);
 * - `quick` (no `execution`): answered at once;
 * - `ask_job` (`"required"`, 2026 only): waits for input (`inputRequests.q1`, an elicitation),
 *   then ends with the answer in its text;
 * - `typed_job` (`"required"`): declares an `outputSchema` its result does not keep.
 *
 * Everything is counted (`count(method)`, `toolCalls(name)`) and a test can wait for a count
 * (`waitFor`) instead of sleeping.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

export type TaskEra = "handshake" | "stateless"

export interface TaskServerOptions {
  readonly era: TaskEra
  /** The poll interval the server suggests (ms; default 20). Negative or absurd values are the test's to choose. */
  readonly pollIntervalMs?: number | undefined
  /** Ends each task after this many `tasks/get` of it (default: never by itself). */
  readonly completeAfterPolls?: number | undefined
  /** 2025: sends `notifications/tasks/status` on the standalone GET stream on each change (default true). */
  readonly statusNotifications?: boolean | undefined
  /** 2025: whether `initialize` declares task-augmented `tools/call` (default true). */
  readonly declareTasks?: boolean | undefined
  /** Replaces a `tasks/get` answer (a hostile server): the task object the server would send, in; what it sends, out. */
  readonly mangleTask?: ((task: Record<string, unknown>) => unknown) | undefined
  /** The `structuredContent` of every completed task's result (default: none). */
  readonly structuredContent?: unknown
}

type Status = "working" | "input_required" | "completed" | "failed" | "cancelled"

interface TaskState {
  readonly taskId: string
  status: Status
  statusMessage?: string
  readonly createdAt: string
  lastUpdatedAt: string
  readonly tool: string
  readonly progressToken: unknown
  polls: number
  result?: Record<string, unknown>
  error?: { readonly code: number; readonly message: string }
  answer?: string
  readonly ended: Array<() => void>
}

export interface TaskServer {
  readonly url: string
  /** Requests of that JSON-RPC method received. */
  readonly count: (method: string) => number
  /** `tools/call` requests of that tool received. */
  readonly toolCalls: (name: string) => number
  /** Resolves once `count(method)` reaches `n`. */
  readonly waitFor: (method: string, n: number) => Promise<void>
  /** The task ids created, in order. */
  readonly taskIds: () => ReadonlyArray<string>
  /** The `tools/call` params received, in order (a test checks the `task` field). */
  readonly callParams: () => ReadonlyArray<Record<string, unknown>>
  /** The `Mcp-Name` headers of the task requests (2026). */
  readonly taskNameHeaders: () => ReadonlyArray<string | undefined>
  /** The client capabilities the last 2026 request declared. */
  readonly lastClientCapabilities: () => unknown
  readonly complete: (taskId?: string) => void
  readonly fail: (taskId?: string, error?: { readonly code: number; readonly message: string }) => void
  readonly status: (taskId: string) => Status | undefined
  /** Sends `notifications/tasks/status` for the task now (2025, if a GET stream is open). */
  readonly notify: (taskId: string, params?: Record<string, unknown>) => void
  /** Sends `notifications/progress` with the token of the task's call (2025, on the GET stream). */
  readonly progress: (taskId: string, progress: number) => void
  /** Client sockets still open (0 once every client process is gone: the counts are final). */
  readonly openConnections: () => number
  readonly close: () => Promise<void>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const TOOLS = [
  { name: "job", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
  { name: "maybe_job", inputSchema: { type: "object" }, execution: { taskSupport: "optional" } },
  { name: "quick", inputSchema: { type: "object" } },
  { name: "ask_job", inputSchema: { type: "object" }, execution: { taskSupport: "required" } },
  // Its result never carries the structuredContent its outputSchema promises.
  {
    name: "typed_job",
    inputSchema: { type: "object" },
    outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execution: { taskSupport: "required" }
  }
]

export const startTaskServer = async (options: TaskServerOptions): Promise<TaskServer> => {
  const { era } = options
  const pollInterval = options.pollIntervalMs ?? 20
  const counts = new Map<string, number>()
  const calls = new Map<string, number>()
  const waiters: Array<{ method: string; n: number; resolve: () => void }> = []
  const tasks = new Map<string, TaskState>()
  const order: Array<string> = []
  const params: Array<Record<string, unknown>> = []
  const nameHeaders: Array<string | undefined> = []
  const streams = new Set<ServerResponse>()
  const sockets = new Set<Socket>()
  let clientCapabilities: unknown
  let next = 0

  const bump = (method: string) => {
    counts.set(method, (counts.get(method) ?? 0) + 1)
    for (const waiter of [...waiters]) {
      if ((counts.get(waiter.method) ?? 0) >= waiter.n) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  }

  const now = () => new Date().toISOString()

  const wire = (task: TaskState): Record<string, unknown> => {
    const base: Record<string, unknown> = {
      taskId: task.taskId,
      status: task.status,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage })
    }
    if (era === "handshake") return { ...base, ttl: 60_000, pollInterval }
    return {
      ...base,
      ttlMs: 60_000,
      pollIntervalMs: pollInterval,
      ...(task.status === "completed" ? { result: task.result } : {}),
      ...(task.status === "failed" ? { error: task.error } : {}),
      ...(task.status === "input_required"
        ? {
          inputRequests: {
            q1: {
              method: "elicitation/create",
              params: { message: "Which one?", requestedSchema: { type: "object", properties: { pick: { type: "string" } } } }
            }
          }
        }
        : {})
    }
  }

  const notifyStatus = (task: TaskState, override?: Record<string, unknown>) => {
    if (era !== "handshake" || options.statusNotifications === false) return
    const frame = `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/tasks/status", params: override ?? wire(task) })}\n\n`
    for (const stream of streams) stream.write(frame)
  }

  const end = (task: TaskState, status: Status) => {
    if (task.status === "completed" || task.status === "failed" || task.status === "cancelled") return
    task.status = status
    task.lastUpdatedAt = now()
    if (status === "completed") {
      task.result = {
        content: [{ type: "text", text: `done ${task.taskId}${task.answer === undefined ? "" : ` ${task.answer}`}` }],
        ...(options.structuredContent === undefined ? {} : { structuredContent: options.structuredContent })
      }
    }
    notifyStatus(task)
    for (const resolve of task.ended.splice(0)) resolve()
  }

  const latest = (taskId?: string) => tasks.get(taskId ?? order[order.length - 1] ?? "")

  const create = (tool: string, progressToken: unknown): TaskState => {
    const taskId = `task-${++next}`
    const stamp = now()
    const task: TaskState = {
      taskId,
      status: tool === "ask_job" ? "input_required" : "working",
      createdAt: stamp,
      lastUpdatedAt: stamp,
      tool,
      progressToken,
      polls: 0,
      ended: []
    }
    tasks.set(taskId, task)
    order.push(taskId)
    return task
  }

  const error = (code: number, message: string) => ({ error: { code, message } })

  /** The answer to one request: a result, an error, or a Promise of one (held `tasks/result`). */
  const answer = (method: string, p: Record<string, unknown>): unknown => {
    switch (method) {
      case "initialize":
        return {
          protocolVersion: "2025-11-25",
          serverInfo: { name: "task-server", version: "1.0.0" },
          capabilities: {
            tools: {},
            ...(options.declareTasks === false ? {} : { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } })
          }
        }
      case "server/discover":
        return era === "stateless"
          ? {
            supportedVersions: ["2026-07-28"],
            capabilities: { tools: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
            _meta: { "io.modelcontextprotocol/serverInfo": { name: "task-server", version: "1.0.0" } }
          }
          : undefined
      case "tools/list":
        return { tools: era === "stateless" ? TOOLS : TOOLS.filter((tool) => tool.name !== "ask_job") }
      case "tools/call": {
        params.push(p)
        const name = String(p["name"])
        calls.set(name, (calls.get(name) ?? 0) + 1)
        const tool = TOOLS.find((candidate) => candidate.name === name)
        if (tool === undefined) return error(-32602, "unknown tool")
        const support = tool.execution?.taskSupport
        if (era === "handshake") {
          const asked = isRecord(p["task"])
          if (support === "required" && !asked) return error(-32601, "task required")
          if (!asked || support === undefined) return { content: [{ type: "text", text: "quick" }] }
          return { task: wire(create(name, isRecord(p["_meta"]) ? p["_meta"]["progressToken"] : undefined)) }
        }
        if (support === undefined) return { content: [{ type: "text", text: "quick" }] }
        return { resultType: "task", ...wire(create(name, undefined)) }
      }
      case "tasks/get": {
        const task = tasks.get(String(p["taskId"]))
        if (task === undefined) return error(-32602, "unknown task")
        task.polls++
        if (options.completeAfterPolls !== undefined && task.polls >= options.completeAfterPolls && task.status === "working") {
          end(task, "completed")
        }
        const sent = wire(task)
        return options.mangleTask === undefined ? sent : options.mangleTask(sent)
      }
      case "tasks/result": {
        const task = tasks.get(String(p["taskId"]))
        if (task === undefined) return error(-32602, "unknown task")
        const give = () =>
          task.status === "completed"
            ? { ...task.result, _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } } }
            : task.status === "failed"
            ? { error: task.error ?? { code: -32603, message: "failed" } }
            : error(-32603, "cancelled")
        if (task.status === "working" || task.status === "input_required") {
          return new Promise((resolve) => task.ended.push(() => resolve(give())))
        }
        return give()
      }
      case "tasks/list":
        return { tasks: order.map((id) => wire(tasks.get(id)!)) }
      case "tasks/cancel": {
        const task = tasks.get(String(p["taskId"]))
        if (task === undefined) return error(-32602, "unknown task")
        if (era === "handshake" && task.status !== "working" && task.status !== "input_required") return error(-32602, "terminal")
        end(task, "cancelled")
        return era === "handshake" ? wire(task) : {}
      }
      case "tasks/update": {
        const task = tasks.get(String(p["taskId"]))
        if (task === undefined) return error(-32602, "unknown task")
        const responses = p["inputResponses"]
        const q1 = isRecord(responses) ? responses["q1"] : undefined
        if (isRecord(q1) && isRecord(q1["content"]) && task.status === "input_required") {
          task.answer = String(q1["content"]["pick"])
          task.status = "working"
          task.lastUpdatedAt = now()
        }
        return {}
      }
      default:
        return error(-32601, "method not found")
    }
  }

  const respond = (res: ServerResponse, id: unknown, answered: unknown) => {
    const body = isRecord(answered) && "error" in answered && Object.keys(answered).length === 1
      ? { jsonrpc: "2.0", id, error: answered["error"] }
      : { jsonrpc: "2.0", id, result: answered }
    const text = JSON.stringify(body)
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
    res.end(text)
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET") {
      if (era !== "handshake" || options.statusNotifications === false) {
        res.writeHead(405)
        return void res.end()
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" })
      res.write(": open\n\n")
      streams.add(res)
      res.on("close", () => streams.delete(res))
      return
    }
    if (req.method === "DELETE") {
      res.writeHead(200)
      return void res.end()
    }
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      let message: unknown
      try {
        message = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        res.writeHead(400)
        return void res.end()
      }
      if (!isRecord(message) || typeof message["method"] !== "string") {
        res.writeHead(202)
        return void res.end()
      }
      const method = message["method"]
      const p = isRecord(message["params"]) ? message["params"] : {}
      if (era === "stateless") {
        const meta = isRecord(p["_meta"]) ? p["_meta"] : {}
        clientCapabilities = meta["io.modelcontextprotocol/clientCapabilities"]
        if (method.startsWith("tasks/")) {
          const header = req.headers["mcp-name"]
          nameHeaders.push(Array.isArray(header) ? header[0] : header)
        }
      }
      bump(method)
      if (!("id" in message)) {
        res.writeHead(202)
        return void res.end()
      }
      const answered = answer(method, p)
      if (answered === undefined) {
        // A 2025 server does not know server/discover.
        res.writeHead(400, { "content-type": "application/json" })
        return void res.end(JSON.stringify({ jsonrpc: "2.0", id: message["id"], error: { code: -32601, message: "method not found" } }))
      }
      if (answered instanceof Promise) {
        void answered.then((value) => {
          if (!res.writableEnded && !res.destroyed) respond(res, message["id"], value)
        })
        return
      }
      respond(res, message["id"], answered)
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    count: (method) => counts.get(method) ?? 0,
    toolCalls: (name) => calls.get(name) ?? 0,
    waitFor: (method, n) => (counts.get(method) ?? 0) >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ method, n, resolve })),
    taskIds: () => [...order],
    callParams: () => [...params],
    taskNameHeaders: () => [...nameHeaders],
    lastClientCapabilities: () => clientCapabilities,
    complete: (taskId) => {
      const task = latest(taskId)
      if (task !== undefined) end(task, "completed")
    },
    fail: (taskId, failure) => {
      const task = latest(taskId)
      if (task === undefined) return
      task.error = failure ?? { code: -32603, message: "the job broke at http://internal.example/secret" }
      end(task, "failed")
    },
    status: (taskId) => tasks.get(taskId)?.status,
    notify: (taskId, override) => {
      const task = tasks.get(taskId)
      if (task !== undefined) notifyStatus(task, override)
    },
    progress: (taskId, progress) => {
      const task = tasks.get(taskId)
      if (task === undefined || task.progressToken === undefined) return
      const frame = `event: message\ndata: ${
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: task.progressToken, progress } })
      }\n\n`
      for (const stream of streams) stream.write(frame)
    },
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.end()
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
