/**
 * Tasks against a server no one here wrote (docs/DESIGN.md, "Tasks"):
 * @modelcontextprotocol/server-everything's task-only tool `simulate-research-query` (SDK v1's
 * experimental tasks of 2025-11-25; its `execution.taskSupport` is `required`, so a plain
 * `tools/call` is refused `-32601`). `callTool` asks for the task and follows it; `callToolTask`
 * gives the handle; an ambiguous query moves the task to `input_required`, and the elicitation
 * the server sends on the `tasks/result` stream reaches the handler.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClient } from "../../src/index.js"
import { startEverythingServer } from "../support/everythingServer.js"
import { httpClients } from "../support/harness.js"

const everything = Effect.acquireRelease(
  Effect.promise(() => startEverythingServer("streamableHttp")),
  (server) => Effect.promise(() => server.close())
)

const policy = { discovery: { timeout: 15_000 }, call: { timeout: 20_000 }, task: { timeout: 20_000 } } as const

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  result.content.map((block) => (block as { readonly text?: string }).text ?? "").join("")

describe("server-everything's task tool", () => {
  it.scopedLive("callTool on a task-required tool: task-augmented, polled, its result read", () =>
    Effect.gen(function*() {
      const server = yield* everything
      const connection = yield* McpClient.connect({ url: server.url, policy })
      expect(connection.protocolVersion).toBe("2025-11-25")
      const tool = connection.tools.find((t) => t.name === "simulate-research-query")
      expect((tool as Record<string, unknown> | undefined)?.["execution"]).toEqual({ taskSupport: "required" })
      const result = yield* connection.callTool("simulate-research-query", { topic: "durable handles" })
      expect(textOf(result)).toContain("# Research Report: durable handles")
      const operations = (yield* connection.observations).map((o) => o.operation)
      expect(operations.filter((o) => o === "tools/call")).toHaveLength(1)
      expect(operations).toContain("tasks/get")
      expect(operations).toContain("tasks/result")
    }).pipe(Effect.provide(httpClients[0]![1])), 60_000)

  it.scopedLive("callToolTask: the handle, its states, tasks/list, and the result", () =>
    Effect.gen(function*() {
      const server = yield* everything
      const connection = yield* McpClient.connect({ url: server.url, policy })
      const call = yield* connection.callToolTask("simulate-research-query", { topic: "tasks" }, { ttl: 60_000 })
      if (call._tag !== "Task") throw new Error("server-everything answered without a task")
      expect(call.handle.created.status).toBe("working")
      expect(call.handle.created.pollIntervalMs).toBe(1_000)
      const listed = yield* connection.listTasks()
      expect(listed.map((task) => task.taskId)).toContain(call.handle.taskId)
      const messages: Array<string> = []
      const result = yield* call.handle.result({ onStatus: (task) => messages.push(`${task.status}: ${task.statusMessage ?? ""}`) })
      expect(textOf(result)).toContain("# Research Report: tasks")
      expect(messages[0]).toMatch(/^working/)
      expect((yield* connection.getTask(call.handle.taskId)).status).toBe("completed")
    }).pipe(Effect.provide(httpClients[1]![1])), 60_000)

  it.scopedLive("an ambiguous query: input_required, the elicitation reaches the handler through tasks/result", () =>
    Effect.gen(function*() {
      const server = yield* everything
      const asked: Array<string> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        policy,
        handlers: {
          elicitation: (params) =>
            Effect.sync(() => {
              asked.push(String(params["message"]))
              return { action: "accept", content: { interpretation: "programming" } }
            })
        }
      })
      const result = yield* connection.callTool("simulate-research-query", { topic: "python", ambiguous: true })
      expect(asked).toHaveLength(1)
      expect(asked[0]).toContain("python")
      expect(textOf(result)).toContain("python (programming)")
    }).pipe(Effect.provide(httpClients[0]![1])), 60_000)
})
