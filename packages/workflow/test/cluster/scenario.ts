/**
 * The crash story both stores are held to. One `ToolChain` workflow of four tool calls runs on
 * the cluster; the runner executing it is killed with SIGKILL twice, each time with a call in
 * flight (its effect applied by the server, its answer held back):
 *
 * 0. upsert a=1     answered before the first crash: never sent again
 * 1. append first   answered before the first crash: never sent again
 * 2. upsert b=2     in flight at the first crash: idempotent, so the runner that resumes sends it
 *                   again, with the same effect identity
 * 3. append second  in flight at the second crash: not idempotent, so the runner that resumes
 *                   does not send it; the workflow fails with `ToolCallOutcomeUnknown`
 *
 * The second crash is also the crash of two one-call workflows (`append`, not idempotent) on the
 * same runner, each stopped at a kill point of its own (toolChain.ts), the three points of a call
 * together (docs/DURABILITY.md, "How it works"):
 *
 * - before-marker  (`halt-before-marker`): no marker, nothing sent; the runner that resumes finds
 *                  no marker and sends it: exactly once at the server
 * - before-send    (`halt-before-send`): the marker recorded, nothing sent; the runner that resumes
 *                  finds the marker and does not send: `ToolCallOutcomeUnknown` (`source:
 *                  "resumed"`), 0 at the server
 * - after the send (`3:append` above): applied by the server; not sent again: 1 at the server
 *
 * Before it, a workflow of its own (`timeout-1`, on the same runners) makes one call that times
 * out: `append` with a budget of 1 s, answered after 6 s. Not idempotent, so it is not sent
 * again: the workflow fails with `ToolCallOutcomeUnknown` (`source: "call"`), and executing it
 * again, from another process after both crashes, answers that stored failure without a call.
 *
 * The MCP server (testkit, in the test process) counts every call and the identity it carried.
 */
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { META_EFFECT_IDENTITY, startServer, type TestServer } from "@phasebound/testkit"
import { EffectIdentity } from "@phasebound/workflow"
import { Effect } from "effect"
import { expect } from "vitest"
import { SHARDS_PER_GROUP, type Store } from "./clusterLayer.js"
import { ownedShards, type Runner, startRunner, STARTUP_MS, until } from "./harness.js"
import type { EncodedExit, RunnerEvent } from "./protocol.js"
import { type KillPointAt, type Step, ToolChain } from "./toolChain.js"

export const STEPS: ReadonlyArray<Step> = [
  { tool: "upsert", args: { key: "a", value: "1" } },
  { tool: "append", args: { entry: "first" } },
  { tool: "upsert", args: { key: "b", value: "2" } },
  // The server applies it on arrival and answers a minute later: in flight until the kill.
  { tool: "append", args: { entry: "second", delayMs: 60_000 } }
]

/**
 * When the server answers the timed-out call: long after its 1 s budget (a retry under the
 * default schedule would run out of budget too, each sending one more at the server).
 */
const TIMED_OUT_DELAY_MS = 6_000

/** One call, to a tool that is neither read-only nor idempotent, that runs out of budget. */
const TIMED_OUT: ReadonlyArray<Step> = [
  { tool: "append", args: { entry: "timed-out", delayMs: TIMED_OUT_DELAY_MS }, timeoutMs: 1_000 }
]
const TIMED_OUT_KEY = "timeout-1"

/** The workflows stopped at a kill point at the second crash, by key: one `append` each, its entry the key. */
const KILL_POINTS: ReadonlyArray<{ readonly key: string; readonly at: KillPointAt }> = [
  { key: "halt-before-marker", at: "before-marker" },
  { key: "halt-before-send", at: "before-send" }
]

/** The one call of a kill point's workflow: `runner` stops in it `at` the point. */
const killPointSteps = (key: string, at: KillPointAt, runner: string): ReadonlyArray<Step> => [
  { tool: "append", args: { entry: key }, killPoint: { runner, at } }
]

/** Generous: a takeover waits for the dead runner's heartbeat to expire (2 s), on a busy machine. */
const RESUME_MS = 60_000

export interface Measured {
  /** From spawning the runners (all at once) to the last one loaded: tsx and the modules. */
  readonly loadMs: number
  /** From each "join" to that runner's "ready": the store, the socket server, the MCP connection. */
  readonly joinMs: ReadonlyArray<number>
  /** From each SIGKILL to the first sign of the resumed workflow at the server (or its result). */
  readonly resumeMs: ReadonlyArray<number>
  /** `timeout-1`: from its "run" to its result (the 1 s budget, and the failure stored). */
  readonly timedOutMs: number
  /** From killing every runner at the end to the server's last socket of theirs closed: the counts are final. */
  readonly drainMs: number
  readonly totalMs: number
  /** Which runner ran each call that was in flight at a crash, and which one resumed it. */
  readonly runners: ReadonlyArray<string>
  /** How each kill point's workflow ended, resumed by the last runner. */
  readonly killPoints: ReadonlyArray<{ readonly key: string; readonly at: KillPointAt; readonly exit: EncodedExit["_tag"] }>
}

const isEvent = <K extends RunnerEvent["event"]>(kind: K) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: K }> => event.event === kind

const startedOf = (key: string) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: "started" }> => event.event === "started" && event.key === key

const haltedOf = (key: string) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: "halted" }> => event.event === "halted" && event.key === key

const resultOf = (key: string) => (event: RunnerEvent): event is Extract<RunnerEvent, { event: "result" }> => event.event === "result" && event.key === key

/** The effect identities of the `append` calls of `entry` that reached the server, in order. */
const appendsOf = (server: TestServer, entry: string): ReadonlyArray<string | undefined> =>
  server.requests.flatMap((request) => {
    const json = request.json
    if (typeof json !== "object" || json === null || !("method" in json) || json.method !== "tools/call") return []
    const params = "params" in json && typeof json.params === "object" && json.params !== null ? json.params : {}
    const args = "arguments" in params && typeof params.arguments === "object" && params.arguments !== null
      ? params.arguments
      : {}
    if (!("name" in params) || params.name !== "append" || !("entry" in args) || args.entry !== entry) return []
    const identity = request.meta?.[META_EFFECT_IDENTITY]
    return [typeof identity === "string" ? identity : undefined]
  })

/** The effect identities `ToolCall.call` derives for these activities of the execution. */
const identitiesOf = (executionId: string, activities: ReadonlyArray<string>): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(
    Effect.forEach(activities, EffectIdentity.derive).pipe(
      Effect.provideService(WorkflowInstance, WorkflowInstance.initial(ToolChain, executionId))
    )
  )

/** The live runner whose workflow reached `activity`: the one executing it (a dead one ran it before). */
const executorOf = (runners: ReadonlyArray<Runner>, activity: string): Runner | undefined =>
  runners.find((runner) => runner.alive() && runner.events.some((event) => event.event === "step" && event.activity === activity))

/** `executorOf`, once its "step" line is read (it is written before the call, but read apart from it). */
const executorWhen = async (runners: ReadonlyArray<Runner>, activity: string): Promise<Runner> => {
  await until(`a live runner executing ${activity}`, () => executorOf(runners, activity) !== undefined, RESUME_MS)
  const runner = executorOf(runners, activity)
  if (runner === undefined) throw new Error(`no live runner executing ${activity}`)
  return runner
}

/**
 * Runs the story on `store`, starting with `initialRunners` runners (a second one, if any, is the
 * survivor that resumes after the first crash). Every process and the server are gone when it
 * returns or throws.
 */
export const crashTwice = async (options: { readonly store: Store; readonly initialRunners: 1 | 2 }): Promise<Measured> => {
  const started = Date.now()
  const server = await startServer({ effectTools: true })
  const runners: Array<Runner> = []
  const alive = () => runners.filter((runner) => runner.alive() && runner.events.some(isEvent("ready")))
  const describe = () => runners.map((runner) => `${runner.name}: ${JSON.stringify(runner.events)}\n${runner.stderrTail()}`).join("\n")
  const joinMs: Array<number> = []
  const join = async (runner: Runner) => {
    const asked = Date.now()
    await runner.join()
    joinMs.push(Date.now() - asked)
    return runner
  }
  const calls = (tool: string, count: number) => until(`${count} ${tool} calls at the server`, () => server.toolCalls(tool) >= count, RESUME_MS, describe)

  try {
    // Every process the story needs is loaded up front (loading is not what a takeover measures);
    // one joins the cluster only when its part comes. Without a second initial runner, r3 is the
    // fresh process that resumes after the first crash; r4 always resumes after the second.
    const spawned = Date.now()
    const spawn = (name: string) => {
      const runner = startRunner({ name, store: options.store, mcpUrl: server.url })
      runners.push(runner)
      return runner
    }
    const first = spawn("r1")
    const second = spawn(options.initialRunners === 2 ? "r2" : "r3")
    const last = spawn("r4")
    await Promise.all(runners.map((runner) => runner.waitFor("loaded", isEvent("loaded"), STARTUP_MS)))
    const loadMs = Date.now() - spawned

    await join(first)
    if (options.initialRunners === 2) await join(second)
    // Start only once every runner holds its share: no shard moves under the running workflow.
    await until(
      "the runners to share the shards",
      () =>
        alive().every((runner) => ownedShards(runner) > 0) &&
        alive().reduce((sum, runner) => sum + ownedShards(runner), 0) === SHARDS_PER_GROUP,
      STARTUP_MS,
      describe
    )

    // The timed-out call, on a runner that stays alive until its failure is stored (the crashes
    // come after): it is out of budget after 1 s, and its answer is 6 s away.
    const runAsked = Date.now()
    first.send({ cmd: "run", key: TIMED_OUT_KEY, steps: TIMED_OUT })
    await until("the timed-out call at the server", () => appendsOf(server, "timed-out").length >= 1, RESUME_MS, describe)
    const timedOut = await first.waitFor(`${TIMED_OUT_KEY}'s result`, resultOf(TIMED_OUT_KEY), RESUME_MS)
    const timedOutMs = Date.now() - runAsked

    // Scripted only now, so that the timed-out call took none of it: order-1's calls 0 and 1 are
    // answered at once, call 2's answer is held back a minute; nothing else is scripted.
    server.script({ on: "tools/call", kind: "delay", ms: 0, times: 2 })
    server.script({ on: "tools/call", kind: "delay", ms: 60_000 })

    first.send({ cmd: "start", key: "order-1", steps: STEPS })
    const { executionId } = await first.waitFor("started", startedOf("order-1"), RESUME_MS)

    // First crash: call 2 has reached the server (its effect applied), its answer has not come back.
    await calls("upsert", 2)
    const crashed1 = await executorWhen(runners, "2:upsert")
    const killed1 = Date.now()
    await crashed1.kill()
    const resumer1 = alive()[0] ?? await join(second)

    await calls("upsert", 3)
    const resumed1 = Date.now() - killed1
    const resent = await executorWhen(runners, "2:upsert")

    // The kill points' workflows, on the one live runner (holding every shard: none of them moves
    // before the crash), each stopped at its point.
    await until("the live runner to hold every shard", () => ownedShards(resumer1) === SHARDS_PER_GROUP, RESUME_MS, describe)
    const stopped = await Promise.all(KILL_POINTS.map(async ({ at, key }) => {
      resumer1.send({ cmd: "start", key, steps: killPointSteps(key, at, resumer1.name) })
      const { executionId } = await resumer1.waitFor(`${key} started`, startedOf(key), RESUME_MS)
      const halted = await resumer1.waitFor(`${key} at its kill point`, haltedOf(key), RESUME_MS)
      return { key, at, executionId, halted }
    }))

    // Second crash: call 3 has reached the server, its answer is a minute away; the kill points'
    // calls have not (each runner reports its point before the call can leave, and stays there).
    await until("order-1's call 3 at the server", () => appendsOf(server, "second").length >= 1, RESUME_MS, describe)
    const crashed2 = await executorWhen(runners, "3:append")
    expect(crashed2.name).toBe(resumer1.name)
    for (const { key } of KILL_POINTS) expect(appendsOf(server, key)).toEqual([])
    const killed2 = Date.now()
    await crashed2.kill()
    const resumer2 = await join(last)
    resumer2.send({ cmd: "await", key: "order-1", executionId })
    const result = await resumer2.waitFor("the workflow's result", resultOf("order-1"), RESUME_MS)
    const resumed2 = Date.now() - killed2
    const killPointResults = await Promise.all(stopped.map(async (point) => {
      resumer2.send({ cmd: "await", key: point.key, executionId: point.executionId })
      const { exit } = await resumer2.waitFor(`${point.key}'s result`, resultOf(point.key), RESUME_MS)
      return { ...point, exit }
    }))

    // timeout-1 again, from a process that never ran it, after both crashes: the stored failure.
    resumer2.send({ cmd: "run", key: TIMED_OUT_KEY, steps: TIMED_OUT })
    const rerun = await resumer2.waitFor(`${TIMED_OUT_KEY}'s result, again`, resultOf(TIMED_OUT_KEY), RESUME_MS)
    // The counts are final once no runner is left and the server has seen each of their sockets
    // close: a process that is gone sends nothing more, and the server records a request when its
    // body has arrived, which TCP orders before the socket's end. Nothing is waited for by time.
    const killedAll = Date.now()
    await Promise.all(runners.map((runner) => runner.kill()))
    await until(
      "the runners' sockets closed at the server",
      () => server.openConnections() === 0,
      RESUME_MS,
      () => `${server.openConnections()} open\n${describe()}`
    )
    const drainMs = Date.now() - killedAll

    const exit: EncodedExit = result.exit
    const upserts = server.effectIdentities("upsert")
    const appends = server.effectIdentities("append")

    // Each identity is the one derived from the execution id and the activity's name, whichever
    // process sent it. Calls 0 and 1 went once; call 2 twice, with one identity; call 3 once.
    const [id0, id1, id2, id3] = await identitiesOf(executionId, ["0:upsert", "1:append", "2:upsert", "3:append"])
    const [idT] = await identitiesOf(timedOut.executionId, ["0:append"])
    const [beforeMarker, beforeSend] = killPointResults
    if (beforeMarker?.at !== "before-marker" || beforeSend?.at !== "before-send") throw new Error("KILL_POINTS out of order")
    const [idM] = await identitiesOf(beforeMarker.executionId, ["0:append"])
    const [idS] = await identitiesOf(beforeSend.executionId, ["0:append"])
    expect(server.toolCalls("upsert")).toBe(3)
    // timeout-1's, order-1's two, and the one of the workflow killed before its marker.
    expect(server.toolCalls("append")).toBe(4)
    expect(upserts).toEqual([id0, id2, id2])
    expect(appends).toEqual([idT, id1, id3, idM])
    expect(new Set([id0, id1, id2, id3, idT, idM, idS]).size).toBe(7)
    expect(resent.name).not.toBe(crashed1.name)
    expect(exit).toEqual({
      _tag: "Failure",
      error: {
        _tag: "ToolCallOutcomeUnknown",
        tool: "append",
        activity: "3:append",
        effectIdentity: id3,
        source: "resumed",
        retry: 0
      }
    })

    // Each kill point's call stopped at its point in the runner killed second, and r4 resumed it.
    for (const point of killPointResults) {
      expect(point.halted).toEqual({ event: "halted", name: crashed2.name, key: point.key, activity: "0:append", at: point.at })
    }
    // Killed before its marker: nothing was sent and nothing recorded, so the runner that resumed
    // sent it, once (the only `append` of its entry at the server), and the workflow succeeded.
    expect(appendsOf(server, beforeMarker.key)).toEqual([idM])
    expect(beforeMarker.exit).toEqual({
      _tag: "Success",
      value: [{ activity: "0:append", tool: "append", identity: idM, text: expect.any(String) }]
    })
    expect(resumer2.events.some((event) => event.event === "step" && event.key === beforeMarker.key)).toBe(true)
    // Killed between its marker and the sending: the runner that resumed found the marker and, the
    // tool not idempotent, did not send: the documented outcome of "marker written, sending
    // unknown" (docs/DURABILITY.md, "How it works"). 0 at the server, counted once every
    // process is gone (above): not sent silently, by anyone.
    expect(beforeSend.exit).toEqual({
      _tag: "Failure",
      error: {
        _tag: "ToolCallOutcomeUnknown",
        tool: "append",
        activity: "0:append",
        effectIdentity: idS,
        source: "resumed",
        retry: 0
      }
    })
    expect(appendsOf(server, beforeSend.key)).toEqual([])

    // The timed-out call was sent once, with its own identity, and failed with an unknown
    // outcome; the same execution, run again elsewhere, answers that failure and sends nothing.
    expect(appendsOf(server, "timed-out")).toEqual([idT])
    const timedOutFailure = {
      _tag: "Failure",
      error: {
        _tag: "ToolCallOutcomeUnknown",
        tool: "append",
        activity: "0:append",
        effectIdentity: idT,
        source: "call",
        retry: 0,
        tag: "DeadlineExceeded",
        stage: "call"
      }
    }
    expect(timedOut.exit).toEqual(timedOutFailure)
    expect(rerun.executionId).toBe(timedOut.executionId)
    expect(rerun.exit).toEqual(timedOutFailure)

    return {
      loadMs,
      joinMs,
      resumeMs: [resumed1, resumed2],
      timedOutMs,
      drainMs,
      totalMs: Date.now() - started,
      runners: [crashed1.name, resumer1.name, crashed2.name, resumer2.name],
      killPoints: killPointResults.map(({ at, exit, key }) => ({ key, at, exit: exit._tag }))
    }
  } finally {
    await Promise.all(runners.map((runner) => runner.kill()))
    await server.close()
  }
}
