/**
 * One cluster runner, as a process of its own (run with tsx, see README.md). Told to join, it
 * joins the cluster of `clusterLayer.ts` on a free loopback port, registers the `ToolChain`
 * workflow, holds one MCP connection to `PB_MCP_URL`, and runs what it is told. A call whose
 * step names this runner at a kill point stops there and says `halted` (toolChain.ts). It talks
 * to the test in JSON lines: commands on stdin, events on stdout (`protocol.ts`); logs go to
 * stderr. The test kills it; it also stops when its stdin closes.
 *
 * Environment: `PB_RUNNER_NAME`, `PB_STORE` (a `Store` as JSON), `PB_MCP_URL`.
 */
import * as ShardId from "@effect/cluster/ShardId"
import * as Sharding from "@effect/cluster/Sharding"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { McpClient } from "@phasebound/client"
import { Cause, Effect, Exit, Layer, Logger, Option, Queue, Schedule, Schema } from "effect"
import { createInterface } from "node:readline"
import { clusterLayer, SHARDS_PER_GROUP, Store } from "./clusterLayer.js"
import { freePort } from "./freePort.js"
import { Command, type RunnerEvent } from "./protocol.js"
import { KillPoints, Mcp, type Step, StepObserver, ToolChain, ToolChainLive } from "./toolChain.js"

const emit = (event: RunnerEvent): void => {
  process.stdout.write(`${JSON.stringify(event)}\n`)
}

const required = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`runner: ${name} is not set`)
  return value
}

const name = required("PB_RUNNER_NAME")
const store = Schema.decodeUnknownSync(Schema.parseJson(Store))(required("PB_STORE"))
const mcpUrl = required("PB_MCP_URL")

/** Reports how many shards this runner holds the lock of, each time that changes. */
const watchShards = Effect.gen(function*() {
  const sharding = yield* Sharding.Sharding
  const shards = Array.from({ length: SHARDS_PER_GROUP }, (_, i) => ShardId.make("default", i + 1))
  let last = -1
  yield* Effect.sync(() => {
    const owned = shards.filter((shard) => sharding.hasShardId(shard)).length
    if (owned !== last) emit({ event: "shards", name, owned, total: SHARDS_PER_GROUP })
    last = owned
  }).pipe(Effect.repeat(Schedule.spaced("100 millis")))
})

const encodeExit = (exit: Exit.Exit<typeof ToolChain.successSchema.Type, typeof ToolChain.errorSchema.Type>) =>
  Exit.match(exit, {
    onSuccess: (value) => ({ _tag: "Success" as const, value: Schema.encodeSync(ToolChain.successSchema)(value) }),
    onFailure: (cause) =>
      Option.match(Cause.failureOption(cause), {
        onSome: (error) => ({ _tag: "Failure" as const, error: Schema.encodeSync(ToolChain.errorSchema)(error) }),
        onNone: () => ({ _tag: "Die" as const, cause: Cause.pretty(cause) })
      })
  })

/** Waits for the execution's result in the store, whichever runner produces it. */
const awaitResult = (key: string, executionId: string): Effect.Effect<void, never, WorkflowEngine> =>
  ToolChain.poll(executionId).pipe(
    Effect.flatMap((result) =>
      result !== undefined && result._tag === "Complete"
        ? Effect.sync(() => emit({ event: "result", name, key, executionId, exit: encodeExit(result.exit) }))
        : Effect.fail("pending" as const)
    ),
    // Retried until complete: "pending" never escapes.
    Effect.retry(Schedule.spaced("100 millis")),
    Effect.orDie
  )

/** Executes the workflow (or finds it complete) and reports its exit: "result", as for "await". */
const runToEnd = (key: string, steps: ReadonlyArray<Step>) =>
  Effect.gen(function*() {
    const payload = { key, steps }
    const executionId = yield* ToolChain.executionId(payload)
    const exit = yield* Effect.exit(ToolChain.execute(payload))
    emit({ event: "result", name, key, executionId, exit: encodeExit(exit) })
  })

const handle = (command: Exclude<Command, { readonly cmd: "join" }>) => {
  switch (command.cmd) {
    case "start":
      return ToolChain.execute({ key: command.key, steps: command.steps }, { discard: true }).pipe(
        Effect.tap((executionId) => emit({ event: "started", name, key: command.key, executionId }))
      )
    case "run":
      return runToEnd(command.key, command.steps)
    case "await":
      return awaitResult(command.key, command.executionId)
  }
}

/** The commands from stdin, in order (a line that is not a command is a bug of the test: it dies). */
const commandQueue = Effect.gen(function*() {
  const queue = yield* Queue.unbounded<Command>()
  const decode = Schema.decodeUnknownSync(Schema.parseJson(Command))
  createInterface({ input: process.stdin })
    .on("line", (line) => Queue.unsafeOffer(queue, decode(line)))
    // stdin closes when the test is gone: shut down (gracefully) rather than linger as an orphan.
    .on("close", () => process.kill(process.pid, "SIGTERM"))
  return queue
})

/** Serves the commands after "join", in the cluster: each one in a fiber of its own. */
const serve = (commands: Queue.Dequeue<Command>) =>
  Effect.gen(function*() {
    yield* Effect.forkScoped(Effect.tapErrorCause(watchShards, Effect.logError))
    emit({ event: "ready", name, pid: process.pid })
    for (;;) {
      const command = yield* Queue.take(commands)
      if (command.cmd !== "join") yield* Effect.forkScoped(Effect.tapErrorCause(handle(command), Effect.logError))
    }
  })

/**
 * Loaded, the process waits for "join" before it builds the cluster layer: the test starts
 * runners ahead of need, so that loading modules is not part of what a takeover measures.
 */
const runner = Effect.gen(function*() {
  const commands = yield* commandQueue
  emit({ event: "loaded", name, pid: process.pid })
  const first = yield* Queue.take(commands)
  if (first.cmd !== "join") return yield* Effect.dieMessage(`runner: "${first.cmd}" before "join"`)
  const port = yield* Effect.promise(freePort)
  const mcp = Layer.scoped(Mcp, McpClient.connect({ url: mcpUrl })).pipe(Layer.provide(NodeHttpClient.layerUndici))
  const observer = Layer.succeed(StepObserver, (step) => emit({ event: "step", name, ...step }))
  // At a kill point the call stops for good: the test kills this process once it has read "halted".
  const killPoints = Layer.succeed(KillPoints, {
    runner: name,
    halt: (point) => Effect.zipRight(Effect.sync(() => emit({ event: "halted", name, ...point })), Effect.never)
  })
  const layer = ToolChainLive.pipe(
    Layer.provideMerge(clusterLayer(store, port)),
    Layer.provide([mcp, observer, killPoints])
  )
  return yield* Effect.scoped(serve(commands)).pipe(Effect.provide(layer))
})

// stdout carries the protocol alone: logs (the cluster's included) go to stderr.
const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

NodeRuntime.runMain(runner.pipe(Effect.provide(stderrLogger)), { disablePrettyLogger: true })
