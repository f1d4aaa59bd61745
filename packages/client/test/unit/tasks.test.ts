/**
 * Tasks' pure parts (docs/DESIGN.md, "Tasks"): the wire forms of both revisions read strictly
 * into one `Task` (whatever a hostile server sends: FastCheck), the clamped poll interval, the
 * created-task detection, the extension declared beside others, and the routing of status
 * notifications to the waits on that task (bounded).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { FastCheck as fc } from "effect"
import type { Core } from "../../src/internal/connection/core.js"
import * as Tasks from "../../src/internal/connection/tasks.js"
import { pollIntervalOf } from "../../src/internal/connection/tasks.js"
import * as Notifications from "../../src/internal/notifications.js"
import * as TaskWire from "../../src/internal/taskWire.js"
import * as McpTask from "../../src/McpTask.js"
import * as PhasePolicy from "../../src/PhasePolicy.js"

describe("task wire forms", () => {
  it("reads 2025-11-25's ttl and pollInterval, and 2026-07-28's ttlMs and pollIntervalMs, into one Task", () => {
    const stamps = { createdAt: "2025-11-25T10:30:00Z", lastUpdatedAt: "2025-11-25T10:40:00Z" }
    expect(TaskWire.taskOf({ taskId: "a", status: "working", ...stamps, ttl: 60_000, pollInterval: 5_000 })).toEqual({
      taskId: "a",
      status: "working",
      ...stamps,
      ttlMs: 60_000,
      pollIntervalMs: 5_000
    })
    expect(TaskWire.taskOf({ taskId: "b", status: "completed", ttlMs: null, pollIntervalMs: 1, result: { content: [] } })).toEqual({
      taskId: "b",
      status: "completed",
      ttlMs: null,
      pollIntervalMs: 1
    })
    // No ttl at all: unlimited, as the spec's null.
    expect(TaskWire.taskOf({ taskId: "c", status: "cancelled" })?.ttlMs).toBeNull()
  })

  it("refuses what is no task: a missing or empty id, an unknown status, a wrong type, an id over 1,024 characters", () => {
    for (
      const wire of [
        {},
        { taskId: "", status: "working" },
        { taskId: 7, status: "working" },
        { taskId: "a", status: "paused" },
        { taskId: "a", status: "working", ttl: "long" },
        { taskId: "a", status: "working", pollInterval: -1 },
        { taskId: "a", status: "working", pollIntervalMs: Number.POSITIVE_INFINITY },
        { taskId: "a", status: "working", statusMessage: 42 },
        { taskId: "x".repeat(1_025), status: "working" },
        null,
        "task"
      ]
    ) expect(TaskWire.taskOf(wire)).toBeUndefined()
  })

  it("whatever a server sends, a task read is well-formed (FastCheck)", () => {
    const anything = fc.oneof(
      fc.anything(),
      fc.record({
        taskId: fc.oneof(fc.string({ maxLength: 1_100 }), fc.anything()),
        status: fc.oneof(fc.constantFrom(...McpTask.TaskStatus.literals), fc.string()),
        ttl: fc.oneof(fc.double(), fc.constant(null), fc.anything()),
        pollIntervalMs: fc.oneof(fc.double(), fc.anything()),
        statusMessage: fc.anything()
      }, { requiredKeys: [] })
    )
    fc.assert(
      fc.property(anything, (wire) => {
        const task = TaskWire.taskOf(wire)
        if (task === undefined) return
        expect(task.taskId.length).toBeGreaterThan(0)
        expect(task.taskId.length).toBeLessThanOrEqual(TaskWire.maxTaskIdLength)
        expect(McpTask.TaskStatus.literals).toContain(task.status)
        if (task.ttlMs !== null) expect(Number.isFinite(task.ttlMs) && task.ttlMs >= 0).toBe(true)
        if (task.pollIntervalMs !== undefined) expect(Number.isFinite(task.pollIntervalMs) && task.pollIntervalMs >= 0).toBe(true)
        // Clamped whatever the server suggested.
        const interval = pollIntervalOf(task, { minPollIntervalMs: 250, maxPollIntervalMs: 30_000 })
        expect(interval).toBeGreaterThanOrEqual(250)
        expect(interval).toBeLessThanOrEqual(30_000)
      }),
      { numRuns: 500 }
    )
  })

  it("tells a created task from a call's result, in both revisions", () => {
    expect(TaskWire.isCreatedTask({ task: { taskId: "a", status: "working" } })).toBe(true)
    expect(TaskWire.isCreatedTask({ resultType: "task", taskId: "a", status: "working" })).toBe(true)
    // A result that happens to carry a `task` field beside its content is a result.
    expect(TaskWire.isCreatedTask({ content: [], task: {} })).toBe(false)
    expect(TaskWire.isCreatedTask({ content: [] })).toBe(false)
    expect(TaskWire.createdTaskOf({ resultType: "task", taskId: "a", status: "working", ttlMs: 5 })?.ttlMs).toBe(5)
    expect(TaskWire.createdTaskOf({ task: { taskId: "a" } })).toBeUndefined()
  })

  it("reads a 2026-07-28 task's result, error and input requests; refuses them malformed", () => {
    expect(TaskWire.detailOf({ result: { content: [] } })?.result).toEqual({ content: [] })
    expect(TaskWire.detailOf({ error: { code: -32603, message: "no" } })?.error).toEqual({ code: -32603, message: "no", data: undefined })
    expect(TaskWire.detailOf({ inputRequests: { q: { method: "elicitation/create", params: {} } } })?.inputRequests).toEqual([
      ["q", { method: "elicitation/create", params: {} }]
    ])
    for (
      const result of [{ result: [] }, { error: { code: "x" } }, { error: { code: 1.5 } }, { inputRequests: [] }, {
        inputRequests: { q: { params: {} } }
      }]
    ) expect(TaskWire.detailOf(result)).toBeUndefined()
  })

  it("declares the tasks extension beside the extensions already there", () => {
    expect(TaskWire.withTasksExtension({ elicitation: {} })).toEqual({ elicitation: {}, extensions: { [McpTask.extensionId]: {} } })
    expect(TaskWire.withTasksExtension({ extensions: { "io.example/x": { a: 1 } } })).toEqual({
      extensions: { "io.example/x": { a: 1 }, [McpTask.extensionId]: {} }
    })
  })

  it("clamps the poll interval: the server's suggestion within the policy's bounds, 1 s when it suggests none", () => {
    const bounds = { minPollIntervalMs: 250, maxPollIntervalMs: 30_000 }
    const at = (pollIntervalMs?: number) =>
      pollIntervalOf({ taskId: "a", status: "working", ttlMs: null, ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }) }, bounds)
    expect([at(0), at(5_000), at(86_400_000), at()]).toEqual([250, 5_000, 30_000, 1_000])
  })
})

const status = (params: unknown) => ({ jsonrpc: "2.0" as const, method: "notifications/tasks/status", params: params as Record<string, unknown> })

describe("task status notifications", () => {
  it.effect("reach the waits on that task only, in both revisions' methods, until released", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const a: Array<unknown> = []
      const b: Array<unknown> = []
      const releaseA = router.trackTask("a", (params) => a.push(params))
      router.trackTask("b", (params) => b.push(params))
      yield* router.take(status({ taskId: "a", status: "working" }))
      yield* router.take({ jsonrpc: "2.0", method: "notifications/tasks", params: { taskId: "a", status: "completed" } })
      yield* router.take(status({ taskId: "nobody", status: "working" }))
      yield* router.take(status({ taskId: 7 }))
      yield* router.take(status(undefined))
      releaseA()
      releaseA()
      yield* router.take(status({ taskId: "a", status: "failed" }))
      expect(a).toEqual([{ taskId: "a", status: "working" }, { taskId: "a", status: "completed" }])
      expect(b).toEqual([])
    }))

  it.effect("are routed to at most maxTrackedTasks waits at once: past that a wait polls unwoken", () =>
    Effect.gen(function*() {
      const router = yield* Notifications.make(10)
      const releases = Array.from({ length: Notifications.maxTrackedTasks }, (_, i) => router.trackTask(`t${i}`, () => {}))
      let woken = 0
      const extra = router.trackTask("extra", () => woken++)
      yield* router.take(status({ taskId: "extra", status: "working" }))
      expect(woken).toBe(0)
      extra()
      // Released waits free their room.
      releases[0]!()
      const again = router.trackTask("extra", () => woken++)
      yield* router.take(status({ taskId: "extra", status: "working" }))
      expect(woken).toBe(1)
      again()
    }))
})

describe("a task's wait", () => {
  it.effect("hands its result to the finish with the wait's own deadline, not a fresh one after the wait (TestClock)", () =>
    Effect.gen(function*() {
      const policy = yield* PhasePolicy.make({ task: { timeout: 1_000, minPollInterval: 100, maxPollInterval: 100 } })
      const notifications = yield* Notifications.make(8)
      let polls = 0
      const answer = (result: Record<string, unknown>) => Effect.succeed({ result, bytes: 10, nodes: 1, headers: {} })
      const session = {
        era: "handshake",
        request: (method: string) => {
          if (method === "tasks/result") return answer({ content: [{ type: "text", text: "done" }] })
          polls++
          return answer({ taskId: "t", status: polls < 3 ? "working" : "completed", ttl: null, pollInterval: 100 })
        }
      }
      const on = { session }
      const core = {
        notifications,
        policy,
        auth: undefined,
        observe: () => {},
        live: { current: () => on },
        observed: (_: string, __: unknown, effect: (on: unknown) => Effect.Effect<unknown>) => effect(on),
        abandonOnClose: () => ({ register: () => () => {}, failure: () => new Error("closed") })
      } as unknown as Core
      const deadlines: Array<number> = []
      const tasks = Tasks.make(core, (_, __, ___, deadlineAt) => {
        deadlines.push(deadlineAt)
        return Effect.succeed({ content: [] })
      })
      const waiting = yield* Effect.fork(tasks.taskResult("t"))
      // Two pauses of 100 ms before the task is seen completed.
      yield* TestClock.adjust(100)
      yield* TestClock.adjust(100)
      yield* Fiber.join(waiting)
      expect(polls).toBe(3)
      // The wait began at 0 under a 1 s budget: the result is checked within that, not 200 + 1,000.
      expect(deadlines).toEqual([1_000])
    }))
})
