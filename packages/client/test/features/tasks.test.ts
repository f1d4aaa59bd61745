/**
 * Tasks (docs/DESIGN.md, "Tasks") against the testkit's task server, in both revisions that
 * carry them: a task-augmented call gives a handle; its result is waited for by polling (at the
 * clamped interval, woken by status notifications), then read; a tool whose tasks are required
 * is called transparently by `callTool`; a handle from elsewhere (a restart) resumes by id; a
 * cancellation, a failed task, a hostile task. `tools/call` is counted: never twice.
 */
import { describe, expect, it } from "@effect/vitest"
import { startTaskServer, type TaskServerOptions } from "@phasebound/testkit"
import { Effect, Either, Exit, Fiber, Scope } from "effect"
import { McpClient, McpConnectionError } from "../../src/index.js"
import { connect as connectPromise } from "../../src/promise.js"
import { eventually, httpClients } from "../support/harness.js"
import { type Recorded, recordingTracer } from "../support/recordingTracer.js"

const taskServer = (options: TaskServerOptions) =>
  Effect.acquireRelease(Effect.promise(() => startTaskServer(options)), (server) => Effect.promise(() => server.close()))

const revisionsOf = { handshake: ["2025-11-25"], stateless: ["2026-07-28"] } as const

const policy = {
  discovery: { timeout: 5_000 },
  call: { timeout: 5_000 },
  task: { timeout: 5_000, minPollInterval: 5, maxPollInterval: 50 }
} as const

describe.each(httpClients)("tasks through %s", (_, httpClient) => {
  for (const era of ["handshake", "stateless"] as const) {
    describe(era, () => {
      it.scopedLive("callToolTask gives a handle; its result waits for the task's end, polling; tools/call sent once", () =>
        Effect.gen(function*() {
          const server = yield* taskServer({ era, statusNotifications: false })
          const connection = yield* McpClient.connect({ url: server.url, revisions: revisionsOf[era], policy })
          const call = yield* connection.callToolTask("job", { n: 1 }, { ttl: 30_000 })
          expect(call._tag).toBe("Task")
          if (call._tag !== "Task") return
          const { handle } = call
          expect(handle.taskId).toBe("task-1")
          expect(handle.created).toMatchObject({ taskId: "task-1", status: "working", ttlMs: 60_000, pollIntervalMs: 20 })
          if (era === "handshake") expect(server.callParams()[0]?.["task"]).toEqual({ ttl: 30_000 })
          else expect(server.callParams()[0]?.["task"]).toBeUndefined()
          const seen: Array<string> = []
          const waiting = yield* Effect.fork(handle.result({ onStatus: (task) => seen.push(task.status) }))
          // Polling: the task is still running after a few polls; then it ends.
          yield* Effect.promise(() => server.waitFor("tasks/get", 3))
          expect((yield* handle.status).status).toBe("working")
          server.complete()
          const result = yield* Fiber.join(waiting)
          expect(result.content).toEqual([{ type: "text", text: "done task-1" }])
          expect(seen[0]).toBe("working")
          expect(seen).toContain("completed")
          expect(server.toolCalls("job")).toBe(1)
          expect(server.count("tasks/result")).toBe(era === "handshake" ? 1 : 0)
          const observed = (yield* connection.observations).map((o) => o.operation)
          expect(observed).toContain("tasks/get")
          if (era === "stateless") {
            // The extension declared in every request, and the task's requests routed by its id.
            expect(server.lastClientCapabilities()).toMatchObject({ extensions: { "io.modelcontextprotocol/tasks": {} } })
            expect(new Set(server.taskNameHeaders())).toEqual(new Set(["task-1"]))
          }
        }).pipe(Effect.provide(httpClient)), 30_000)

      it.scopedLive("callTool on a tool whose tasks are required: task-augmented and followed to its result", () =>
        Effect.gen(function*() {
          const server = yield* taskServer({ era, completeAfterPolls: 3, statusNotifications: false })
          const connection = yield* McpClient.connect({ url: server.url, revisions: revisionsOf[era], policy })
          const result = yield* connection.callTool("job", {})
          expect(result.content).toEqual([{ type: "text", text: "done task-1" }])
          expect(server.toolCalls("job")).toBe(1)
          expect(server.count("tasks/get")).toBe(3)
          // A plain tool stays a plain call.
          expect((yield* connection.callTool("quick")).content).toEqual([{ type: "text", text: "quick" }])
          expect(server.callParams()[1]?.["task"]).toBeUndefined()
        }).pipe(Effect.provide(httpClient)), 30_000)

      it.scopedLive("a handle from elsewhere: another connection resumes the same task by its id, never calling the tool", () =>
        Effect.gen(function*() {
          const server = yield* taskServer({ era, statusNotifications: false })
          const first = yield* McpClient.connect({ url: server.url, revisions: revisionsOf[era], policy })
          const call = yield* first.callToolTask("job")
          const taskId = call._tag === "Task" ? call.handle.taskId : ""
          const second = yield* McpClient.connect({ url: server.url, revisions: revisionsOf[era], policy })
          const waiting = yield* Effect.fork(second.taskResult(taskId))
          yield* Effect.promise(() => server.waitFor("tasks/get", 1))
          server.complete(taskId)
          expect((yield* Fiber.join(waiting)).content).toEqual([{ type: "text", text: `done ${taskId}` }])
          expect(server.toolCalls("job")).toBe(1)
        }).pipe(Effect.provide(httpClient)), 30_000)

      it.scopedLive("cancel, a failed task (redacted), and a wait past the task budget", () =>
        Effect.gen(function*() {
          const server = yield* taskServer({ era, statusNotifications: false })
          const connection = yield* McpClient.connect({ url: server.url, revisions: revisionsOf[era], policy })
          const cancelled = yield* connection.callToolTask("job")
          if (cancelled._tag !== "Task") throw new Error("no task")
          yield* cancelled.handle.cancel
          expect(server.status(cancelled.handle.taskId)).toBe("cancelled")
          const afterCancel = yield* Effect.either(cancelled.handle.result())
          expect(Either.isLeft(afterCancel) && afterCancel.left._tag).toBe("RemoteRefusal")

          const failing = yield* connection.callToolTask("job")
          if (failing._tag !== "Task") throw new Error("no task")
          server.fail(failing.handle.taskId)
          const failed = yield* Effect.flip(failing.handle.result())
          expect(failed._tag).toBe("RemoteRefusal")
          expect(failed.code).toBe(-32603)
          // The call ran, and ended in this error: its outcome is known.
          expect(failed.outcome).toBe("applied")
          expect(JSON.stringify(failed)).not.toContain("internal.example")

          const slow = yield* connection.callToolTask("job")
          if (slow._tag !== "Task") throw new Error("no task")
          const late = yield* Effect.flip(slow.handle.result({ timeout: 150 }))
          expect(late).toBeInstanceOf(McpConnectionError.DeadlineExceeded)
          expect(late.limits.timeoutMs).toBe(150)
          expect(late.outcome).toBe("unknown")
          expect(server.toolCalls("job")).toBe(3)
        }).pipe(Effect.provide(httpClient)), 30_000)
    })
  }

  it.scopedLive("2025-11-25: tasks/list, and a status notification wakes the wait before the next poll", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", pollIntervalMs: 60_000 })
      // The server suggests a minute between polls; the policy allows up to 30 s: only the
      // notification can end this wait within the test.
      const connection = yield* McpClient.connect({
        url: server.url,
        revisions: ["2025-11-25"],
        policy: { ...policy, task: { timeout: 20_000, minPollInterval: 5, maxPollInterval: 30_000 } }
      })
      const call = yield* connection.callToolTask("maybe_job")
      if (call._tag !== "Task") throw new Error("no task")
      expect((yield* connection.listTasks()).map((task) => task.taskId)).toEqual([call.handle.taskId])
      const waiting = yield* Effect.fork(call.handle.result())
      yield* Effect.promise(() => server.waitFor("tasks/get", 1))
      const started = Date.now()
      server.complete()
      const result = yield* Fiber.join(waiting)
      expect(result.content).toEqual([{ type: "text", text: "done task-1" }])
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(server.count("tasks/get")).toBe(2)
    }).pipe(Effect.provide(httpClient)), 30_000)
})

describe("tasks, refusals and hostile servers", () => {
  it.scopedLive("2025-11-25: a server that declares no tasks gets a plain call; a forbidden tool is never augmented", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", declareTasks: false })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy })
      const call = yield* connection.callToolTask("quick")
      expect(call._tag).toBe("Result")
      // A required tool on a server that declares no tasks: sent plainly (the spec forbids the
      // augmentation), and the server's refusal is the caller's.
      const refused = yield* Effect.flip(connection.callTool("job"))
      expect(refused._tag).toBe("RemoteRefusal")
      expect(server.callParams().every((params) => params["task"] === undefined)).toBe(true)
      expect(server.toolCalls("job")).toBe(1)
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)

  it.scopedLive("2026-07-28: no tasks/list (refused unsent); an input request is answered by the handler and tasks/update", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "stateless" })
      const asked: Array<unknown> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        revisions: ["2026-07-28"],
        policy,
        handlers: {
          elicitation: (params) =>
            Effect.sync(() => {
              asked.push(params)
              return { action: "accept", content: { pick: "blue" } }
            })
        }
      })
      const refused = yield* Effect.flip(connection.listTasks())
      expect(refused).toMatchObject({ _tag: "InvalidOption", reason: "undeclared-capability", outcome: "not-sent" })
      expect(server.count("tasks/list")).toBe(0)
      const call = yield* connection.callToolTask("ask_job")
      if (call._tag !== "Task") throw new Error("no task")
      const waiting = yield* Effect.fork(call.handle.result())
      yield* Effect.promise(() => server.waitFor("tasks/update", 1))
      server.complete()
      expect((yield* Fiber.join(waiting)).content).toEqual([{ type: "text", text: "done task-1 blue" }])
      // Asked once, however many polls saw the same input request.
      expect(asked).toHaveLength(1)
      expect(server.count("tasks/update")).toBe(1)
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)

  for (
    const [label, mangle] of [
      ["another task's id", (task: Record<string, unknown>) => ({ ...task, taskId: "task-999" })],
      ["an unknown status", (task: Record<string, unknown>) => ({ ...task, status: "sleeping" })],
      ["a task id of 2,000 characters", (task: Record<string, unknown>) => ({ ...task, taskId: "x".repeat(2_000) })],
      ["a negative poll interval", (task: Record<string, unknown>) => ({ ...task, pollInterval: -1 })]
    ] as const
  ) {
    it.scopedLive(`a hostile tasks/get (${label}) is a typed ProtocolViolation, redacted, the call not sent again`, () =>
      Effect.gen(function*() {
        const server = yield* taskServer({ era: "handshake", mangleTask: mangle, statusNotifications: false })
        const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy })
        const failure = yield* Effect.flip(connection.callTool("job"))
        expect(failure).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-result", stage: "get-task" })
        expect(server.toolCalls("job")).toBe(1)
        expect(server.count("tasks/get")).toBe(1)
      }).pipe(Effect.provide(httpClients[0]![1])), 30_000)
  }

  it.scopedLive("callTool's progress goes on while the task runs: the token stays valid for the task's lifetime", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake" })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy })
      const reports: Array<number> = []
      const calling = yield* Effect.fork(connection.callTool("job", {}, { onProgress: (p) => reports.push(p.progress) }))
      yield* Effect.promise(() => server.waitFor("tasks/get", 1))
      server.progress("task-1", 1)
      server.progress("task-1", 2)
      yield* eventually(() => reports.length === 2)
      server.complete()
      expect((yield* Fiber.join(calling)).content).toEqual([{ type: "text", text: "done task-1" }])
      expect(reports).toEqual([1, 2])
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)

  it.scopedLive(
    "a flood of status notifications wakes the wait, but no poll comes sooner than the policy's minimum after the last",
    () =>
      Effect.gen(function*() {
        const server = yield* taskServer({ era: "handshake", pollIntervalMs: 60_000 })
        const connection = yield* McpClient.connect({
          url: server.url,
          revisions: ["2025-11-25"],
          policy: { ...policy, task: { timeout: 5_000, minPollInterval: 100, maxPollInterval: 30_000 } }
        })
        const call = yield* connection.callToolTask("job")
        if (call._tag !== "Task") throw new Error("no task")
        const seen: Array<string> = []
        const waiting = yield* Effect.fork(call.handle.result({ onStatus: (task) => seen.push(task.statusMessage ?? task.status) }))
        yield* Effect.promise(() => server.waitFor("tasks/get", 1))
        const started = Date.now()
        // 2,000 notifications, each a new message: every one is seen, none makes a poll of its own.
        for (let i = 0; i < 2_000; i++) {
          server.notify(call.handle.taskId, { taskId: call.handle.taskId, status: "working", statusMessage: `step ${i}`, ttl: 60_000 })
        }
        yield* eventually(() => seen.includes("step 1999"))
        yield* Effect.sleep("350 millis")
        const elapsed = Date.now() - started
        // At most one poll per 100 ms since the flood began (and the first).
        expect(server.count("tasks/get")).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 100))
        server.complete()
        expect((yield* Fiber.join(waiting)).content).toEqual([{ type: "text", text: "done task-1" }])
      }).pipe(Effect.provide(httpClients[0]![1])),
    30_000
  )

  for (const era of ["handshake", "stateless"] as const) {
    it.scopedLive(`${era}: a failed task's error that echoes the caller's credential is redacted`, () =>
      Effect.gen(function*() {
        const server = yield* taskServer({ era, statusNotifications: false })
        const token = "tk-9f8e7d6c5b4a3210fedcba"
        const connection = yield* McpClient.connect({
          url: server.url,
          revisions: revisionsOf[era],
          headers: { authorization: `Bearer ${token}` },
          policy
        })
        const call = yield* connection.callToolTask("job")
        if (call._tag !== "Task") throw new Error("no task")
        server.fail(call.handle.taskId, { code: -32603, message: `denied for Bearer ${token} (${token})` })
        const failed = yield* Effect.flip(call.handle.result())
        expect(failed).toMatchObject({ _tag: "RemoteRefusal", code: -32603, outcome: "applied" })
        expect(JSON.stringify(failed)).not.toContain(token)
        expect(String(failed)).not.toContain(token)
      }).pipe(Effect.provide(httpClients[0]![1])), 30_000)
  }

  it.scopedLive("a task's result is checked against its tool's outputSchema: callTool, the handle, taskResult given the tool", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", completeAfterPolls: 1, statusNotifications: false })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy })
      const mismatch = { _tag: "ProtocolViolation", reason: "missing-structured-content", outcome: "applied" }
      expect(yield* Effect.flip(connection.callTool("typed_job"))).toMatchObject(mismatch)
      const call = yield* connection.callToolTask("typed_job")
      if (call._tag !== "Task") throw new Error("no task")
      expect(yield* Effect.flip(call.handle.result())).toMatchObject(mismatch)
      expect(yield* Effect.flip(connection.taskResult(call.handle.taskId, { tool: "typed_job" }))).toMatchObject(mismatch)
      // Without the tool, only the result's own shape is checked.
      expect((yield* connection.taskResult(call.handle.taskId)).content).toEqual([{ type: "text", text: "done task-2" }])
      expect(server.toolCalls("typed_job")).toBe(2)
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)

  it.scopedLive("each task request is observed and traced like every operation: mcp.tasks.get, mcp.tasks.result, mcp.tasks.cancel", () => {
    const spans: Array<Recorded> = []
    return Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", completeAfterPolls: 1, statusNotifications: false })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy })
      yield* connection.callTool("job")
      const other = yield* connection.callToolTask("job")
      if (other._tag === "Task") yield* other.handle.cancel
      const names = spans.map((span) => span.name)
      expect(names.filter((name) => name === "mcp.tools.call")).toHaveLength(2)
      expect(names).toContain("mcp.tasks.get")
      expect(names).toContain("mcp.tasks.result")
      expect(names).toContain("mcp.tasks.cancel")
      const poll = spans.find((span) => span.name === "mcp.tasks.get")!
      expect(poll.ended).toBe(true)
      expect(poll.attributes.get("mcp.stage")).toBe("get-task")
      expect(poll.attributes.get("mcp.outcome")).toBe("ok")
      const observed = (yield* connection.observations).map((o) => `${o.operation} ${o.stage} ${o.outcome}`)
      expect(observed).toEqual(expect.arrayContaining(["tasks/get get-task ok", "tasks/result task-result ok", "tasks/cancel cancel-task ok"]))
    }).pipe(Effect.provide(httpClients[0]![1]), Effect.withTracer(recordingTracer(spans)))
  }, 30_000)

  it.scopedLive("a server that suggests polling every millisecond is polled no faster than the policy's minimum", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", pollIntervalMs: 0, statusNotifications: false })
      const connection = yield* McpClient.connect({
        url: server.url,
        revisions: ["2025-11-25"],
        policy: { ...policy, task: { timeout: 5_000, minPollInterval: 100, maxPollInterval: 1_000 } }
      })
      const call = yield* connection.callToolTask("job")
      if (call._tag !== "Task") throw new Error("no task")
      const late = yield* Effect.flip(call.handle.result({ timeout: 450 }))
      expect(late._tag).toBe("DeadlineExceeded")
      // 450 ms at one poll per 100 ms at most: 5 polls, not hundreds.
      expect(server.count("tasks/get")).toBeLessThanOrEqual(5)
      expect(server.count("tasks/get")).toBeGreaterThanOrEqual(2)
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)

  it.scopedLive("a slow onStatus runs on the waiting fiber: a flood of statuses does not hold up another call's answer", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake", pollIntervalMs: 60_000 })
      const connection = yield* McpClient.connect({
        url: server.url,
        revisions: ["2025-11-25"],
        policy: { ...policy, task: { timeout: 20_000, minPollInterval: 200, maxPollInterval: 30_000 } }
      })
      const call = yield* connection.callToolTask("job")
      if (call._tag !== "Task") throw new Error("no task")
      const seen: Array<string> = []
      // 30 ms of work for each state seen: run on the notification reader, 100 of them would
      // hold everything behind them for 3 s.
      const slow = (task: { readonly status: string; readonly statusMessage?: string | undefined }) => {
        const until = Date.now() + 30
        while (Date.now() < until) {
          // busy
        }
        seen.push(task.statusMessage ?? task.status)
      }
      const waiting = yield* Effect.fork(call.handle.result({ onStatus: slow }))
      yield* Effect.promise(() => server.waitFor("tasks/get", 1))
      for (let i = 0; i < 100; i++) {
        server.notify(call.handle.taskId, { taskId: call.handle.taskId, status: "working", statusMessage: `step ${i}`, ttl: 60_000 })
      }
      expect((yield* connection.callTool("quick")).content).toEqual([{ type: "text", text: "quick" }])
      // Run on the reader, every one of the 100 would have been handled before the answer was read.
      expect(seen.length).toBeLessThan(100)
      // The latest status still reaches the wait.
      yield* eventually(() => seen.includes("step 99"))
      expect(seen.length).toBeLessThan(100)
      server.complete()
      expect((yield* Fiber.join(waiting)).content).toEqual([{ type: "text", text: "done task-1" }])
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)

  for (const followed of [false, true]) {
    it.scopedLive(
      `closing the connection ends a pending ${followed ? "followed callTool" : "handle.result"} at once: session-closed`,
      () =>
        Effect.gen(function*() {
          const server = yield* taskServer({ era: "handshake", pollIntervalMs: 60_000, statusNotifications: false })
          const scope = yield* Scope.make()
          // Polled once a minute (clamped to 30 s): only the close can end this wait within the test.
          const connection = yield* McpClient.connect({
            url: server.url,
            revisions: ["2025-11-25"],
            policy: { ...policy, call: { timeout: 60_000 }, task: { timeout: 60_000, minPollInterval: 5, maxPollInterval: 30_000 } }
          }).pipe(Scope.extend(scope))
          const reports: Array<number> = []
          const waiting = yield* Effect.fork(
            followed
              ? connection.callTool("job", {}, { onProgress: (p) => reports.push(p.progress) })
              : Effect.flatMap(connection.callToolTask("job"), (call) => call._tag === "Task" ? call.handle.result() : Effect.die("no task"))
          )
          // The first poll answered: the wait is in its pause, no request in flight.
          yield* eventually(() => Effect.runSync(connection.observations).some((o) => o.operation === "tasks/get"))
          const started = Date.now()
          yield* Scope.close(scope, Exit.void).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "the close never ended" }))
          const failed = yield* Effect.flip(Fiber.join(waiting))
          expect(Date.now() - started).toBeLessThan(5_000)
          expect(failed).toMatchObject({ _tag: "TransportFailure", reason: "session-closed" })
          expect(server.count("tasks/get")).toBe(1)
          expect(server.toolCalls("job")).toBe(1)
          // Released: a progress report for the task reaches no one now.
          server.progress("task-1", 1)
          expect(reports).toEqual([])
        }).pipe(Effect.provide(httpClients[0]![1])),
      30_000
    )
  }

  it.scopedLive("invalid task options are refused before any I/O", () =>
    Effect.gen(function*() {
      const server = yield* taskServer({ era: "handshake" })
      const bad = yield* Effect.flip(McpClient.connect({ url: server.url, policy: { task: { minPollInterval: 10_000, maxPollInterval: 1_000 } } }))
      expect(bad).toMatchObject({ _tag: "InvalidOption", option: "task.minPollInterval" })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2025-11-25"], policy })
      expect(yield* Effect.flip(connection.getTask(""))).toMatchObject({ _tag: "InvalidOption", option: "taskId", outcome: "not-sent" })
      expect(yield* Effect.flip(connection.taskResult("t", { timeout: -1 }))).toMatchObject({ _tag: "InvalidOption" })
      expect(yield* Effect.flip(connection.taskResult("t", { tool: "" }))).toMatchObject({ _tag: "InvalidOption", option: "tool" })
      expect(yield* Effect.flip(connection.callToolTask("job", {}, { ttl: "forever" as unknown as number }))).toMatchObject({
        _tag: "InvalidOption",
        option: "ttl"
      })
      expect(server.count("tasks/get") + server.toolCalls("job")).toBe(0)
    }).pipe(Effect.provide(httpClients[0]![1])), 30_000)
})

it("the Promise API: callToolTask, the handle's result with onStatus, taskResult by id", async () => {
  const server = await startTaskServer({ era: "handshake", statusNotifications: false })
  try {
    const connection = await connectPromise({ url: server.url, revisions: ["2025-11-25"], policy })
    try {
      const call = await connection.callToolTask("job")
      if (call._tag !== "Task") throw new Error("no task")
      const statuses: Array<string> = []
      const waiting = call.handle.result({ onStatus: (task) => statuses.push(task.status) })
      await server.waitFor("tasks/get", 2)
      server.complete()
      expect((await waiting).content).toEqual([{ type: "text", text: "done task-1" }])
      expect(statuses).toEqual(["working", "completed"])
      expect((await connection.getTask("task-1")).status).toBe("completed")
      expect((await connection.taskResult("task-1")).content).toEqual([{ type: "text", text: "done task-1" }])
      expect((await connection.listTasks()).length).toBe(1)
      expect(server.toolCalls("job")).toBe(1)
      const aborted = new AbortController()
      const second = await connection.callToolTask("job")
      if (second._tag !== "Task") throw new Error("no task")
      const pending = second.handle.result({ signal: aborted.signal })
      aborted.abort(new Error("stop"))
      await expect(pending).rejects.toThrow("stop")
      await second.handle.cancel()
      expect(server.status(second.handle.taskId)).toBe("cancelled")
    } finally {
      await connection.close()
    }
  } finally {
    await server.close()
  }
}, 30_000)
