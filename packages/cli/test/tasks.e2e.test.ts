/**
 * Tasks from the command line (packages/cli/README.md, "Tasks"), as the Node bundle runs them
 * against the testkit's task server: `call --task` prints the task without waiting, `task`
 * shows it, `task --wait` prints its result (the tool never called again), `task --cancel`,
 * `tasks`; a plain `call` of a tool whose tasks are required waits for its result; the failures
 * are one record each, with their exit codes.
 */
import { startTaskServer, type TaskServer } from "@phasebound/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectFailure, expectJson, run } from "./support/cli.js"

let server: TaskServer
let modern: TaskServer
beforeAll(async () => {
  server = await startTaskServer({ era: "handshake", statusNotifications: false })
  modern = await startTaskServer({ era: "stateless", completeAfterPolls: 2 })
})
afterAll(async () => {
  await server.close()
  await modern.close()
})

const cli = (args: ReadonlyArray<string>) => run("node", [...args, "--revision", "2025-11-25"])

describe("tasks", () => {
  it("call --task prints the task; task shows it; task --wait prints the result; the tool is called once", async () => {
    const created = expectJson(await cli(["call", server.url, "job", "--task"])) as { task: { taskId: string } }
    expect(created).toMatchObject({ task: { taskId: "task-1", status: "working", ttlMs: 60_000 } })
    expect(expectJson(await cli(["task", server.url, "task-1"]))).toMatchObject({ task: { taskId: "task-1", status: "working" } })
    const waiting = cli(["task", server.url, "task-1", "--wait"])
    const polls = server.count("tasks/get")
    await server.waitFor("tasks/get", polls + 1)
    server.complete("task-1")
    expect(expectJson(await waiting)).toEqual({
      content: [{ type: "text", text: "done task-1" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "task-1" } }
    })
    expect(expectJson(await cli(["tasks", server.url]))).toMatchObject({ tasks: [{ taskId: "task-1", status: "completed" }] })
    expect(server.toolCalls("job")).toBe(1)
  })

  it("task --cancel; --wait with --cancel is a usage error; a wait past --task-timeout is DeadlineExceeded (exit 4)", async () => {
    const created = expectJson(await cli(["call", server.url, "job", "--task"])) as { task: { taskId: string } }
    const { taskId } = created.task
    expect(expectFailure(await cli(["task", server.url, taskId, "--wait", "--cancel"]), 2, "InvalidOption")).toMatchObject({ option: "--cancel" })
    const late = expectFailure(await cli(["task", server.url, taskId, "--wait", "--task-timeout", "300ms"]), 4, "DeadlineExceeded")
    expect(late).toMatchObject({ stage: "get-task", outcome: "unknown", limits: { timeoutMs: 300 } })
    expect(expectJson(await cli(["task", server.url, taskId, "--cancel"]))).toEqual({ cancelled: taskId })
    expect(server.status(taskId)).toBe("cancelled")
  })

  it("a plain call of a tool whose tasks are required waits for its result (2026-07-28: the server decides)", async () => {
    const result = expectJson(await run("node", ["call", modern.url, "job", "--revision", "2026-07-28"]))
    expect(result).toEqual({ content: [{ type: "text", text: "done task-1" }] })
    expect(modern.toolCalls("job")).toBe(1)
    // The extension has no listing: refused before anything is sent.
    expect(expectFailure(await run("node", ["tasks", modern.url, "--revision", "2026-07-28"]), 2, "InvalidOption")).toMatchObject({
      reason: "undeclared-capability"
    })
    expect(modern.count("tasks/list")).toBe(0)
  })
})
