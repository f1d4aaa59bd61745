/**
 * The crash of a worker while a task runs (docs/DURABILITY.md, "Tasks"), the story both stores
 * are held to. One `ToolChain` workflow makes one call as a task (`job`, whose tasks are
 * required) against the testkit's task server, in the test process, which counts every request:
 *
 * 1. The runner executing the workflow calls `job`: the server creates `task-1` and answers with
 *    it; the activity records the task's handle in the engine's storage, then polls `tasks/get`.
 *    The task runs until the test ends it.
 * 2. Once the server has seen the call and a poll (the handle is stored before the first poll),
 *    that runner is killed with SIGKILL.
 * 3. Another runner takes the shard over (SQLite: a fresh process on the same file; PostgreSQL:
 *    the survivor), replays the workflow, finds the handle and polls the same task: two more
 *    polls at the server (a dead process can have had at most one in flight).
 * 4. The test ends the task; the workflow completes with its result.
 *
 * Every runner is then killed and the server's sockets drain, so the counts are final: exactly
 * one `tools/call`, and the result is the task's.
 */
import { startTaskServer } from "@phasebound/testkit"
import { expect } from "vitest"
import { SHARDS_PER_GROUP, type Store } from "./clusterLayer.js"
import { ownedShards, type Runner, startRunner, STARTUP_MS, until } from "./harness.js"
import type { RunnerEvent } from "./protocol.js"
import type { Step } from "./toolChain.js"

const STEPS: ReadonlyArray<Step> = [{ tool: "job", args: {}, task: true }]
const KEY = "task-order-1"

/** Generous: a takeover waits for the dead runner's heartbeat to expire (2 s), on a busy machine. */
const RESUME_MS = 60_000

export interface TaskMeasured {
  readonly loadMs: number
  /** From the SIGKILL to the resumed runner's second poll of the same task at the server. */
  readonly resumeMs: number
  readonly totalMs: number
  /** The runner killed while its task ran, and the one that resumed polling it. */
  readonly runners: ReadonlyArray<string>
  /** `tasks/get` at the server before the kill, and in all. */
  readonly polls: { readonly beforeKill: number; readonly total: number }
}

const isEvent = <K extends RunnerEvent["event"]>(kind: K) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: K }> => event.event === kind

const startedOf = (key: string) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: "started" }> => event.event === "started" && event.key === key

const resultOf = (key: string) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: "result" }> => event.event === "result" && event.key === key

const executorOf = (runners: ReadonlyArray<Runner>, activity: string): Runner | undefined =>
  runners.find((runner) => runner.alive() && runner.events.some((event) => event.event === "step" && event.activity === activity))

export const crashWhileTaskRuns = async (options: { readonly store: Store; readonly initialRunners: 1 | 2 }): Promise<TaskMeasured> => {
  const started = Date.now()
  const server = await startTaskServer({ era: "handshake", statusNotifications: false })
  const runners: Array<Runner> = []
  const alive = () => runners.filter((runner) => runner.alive() && runner.events.some(isEvent("ready")))
  const describe = () =>
    `server: tools/call ${server.count("tools/call")}, tasks/get ${server.count("tasks/get")}\n` +
    runners.map((runner) => `${runner.name}: ${JSON.stringify(runner.events)}\n${runner.stderrTail()}`).join("\n")
  try {
    const spawned = Date.now()
    const spawn = (name: string) => {
      const runner = startRunner({ name, store: options.store, mcpUrl: server.url })
      runners.push(runner)
      return runner
    }
    const first = spawn("r1")
    const second = spawn(options.initialRunners === 2 ? "r2" : "r3")
    await Promise.all(runners.map((runner) => runner.waitFor("loaded", isEvent("loaded"), STARTUP_MS)))
    const loadMs = Date.now() - spawned
    await first.join()
    if (options.initialRunners === 2) await second.join()
    await until(
      "the runners to share the shards",
      () =>
        alive().every((runner) => ownedShards(runner) > 0) &&
        alive().reduce((sum, runner) => sum + ownedShards(runner), 0) === SHARDS_PER_GROUP,
      STARTUP_MS,
      describe
    )

    first.send({ cmd: "start", key: KEY, steps: STEPS })
    const { executionId } = await first.waitFor("started", startedOf(KEY), RESUME_MS)
    // The call went, the task exists, and its handle is stored: the first poll follows the record.
    await until("the task call and its first poll at the server", () => server.count("tasks/get") >= 1, RESUME_MS, describe)
    expect(server.toolCalls("job")).toBe(1)
    await until("the executor's step line", () => executorOf(runners, "0:job") !== undefined, RESUME_MS, describe)
    const crashed = executorOf(runners, "0:job")!
    expect(server.status("task-1")).toBe("working")

    const killed = Date.now()
    await crashed.kill()
    const beforeKill = server.count("tasks/get")
    const resumer = alive()[0] ?? await (async () => {
      await second.join()
      return second
    })()
    // The dead process may have had one poll in flight; two more are the resumer's.
    await until("the resumed runner polling the same task", () => server.count("tasks/get") >= beforeKill + 2, RESUME_MS, describe)
    const resumeMs = Date.now() - killed
    expect(server.toolCalls("job")).toBe(1)
    server.complete("task-1")
    resumer.send({ cmd: "await", key: KEY, executionId })
    const result = await resumer.waitFor("the workflow's result", resultOf(KEY), RESUME_MS)

    await Promise.all(runners.map((runner) => runner.kill()))
    await until("the runners' sockets closed at the server", () => server.openConnections() === 0, RESUME_MS, describe)

    expect(result.exit).toEqual({
      _tag: "Success",
      value: [{ activity: "0:job", tool: "job", identity: expect.any(String), text: "done task-1" }]
    })
    // One call, ever: the resumed activity polled the stored task instead.
    expect(server.toolCalls("job")).toBe(1)
    expect(server.count("tools/call")).toBe(1)
    expect(server.taskIds()).toEqual(["task-1"])
    expect(resumer.name).not.toBe(crashed.name)
    expect(resumer.events.some((event) => event.event === "step" && event.key === KEY)).toBe(true)
    return {
      loadMs,
      resumeMs,
      totalMs: Date.now() - started,
      runners: [crashed.name, resumer.name],
      polls: { beforeKill, total: server.count("tasks/get") }
    }
  } finally {
    await Promise.all(runners.map((runner) => runner.kill()))
    await server.close()
  }
}
