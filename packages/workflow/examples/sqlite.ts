/**
 * Durable MCP tool calls on a real cluster engine, with no setup: `ClusterWorkflowEngine` on a
 * single-runner `@effect/cluster` whose messages, replies and shard locks live in a SQLite file
 * (a temp dir), against a testkit MCP server on loopback.
 *
 * A workflow of three tool calls runs once; then the engine is shut down and a new one is built
 * on the same file, and the same workflow (same payload, so same execution id) is executed again:
 * the result comes back from the store, and the server sees no new call. Each call carries the
 * effect identity of its activity, derived from the execution id and the activity's name.
 *
 *   npm run example:workflow
 *
 * Several processes, crashes and PostgreSQL: packages/workflow/test/cluster/.
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as SingleRunner from "@effect/cluster/SingleRunner"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Workflow from "@effect/workflow/Workflow"
import { McpClient } from "@phasebound/client"
import { startServer } from "@phasebound/testkit"
import { EffectIdentity, ToolCall, ToolCallError } from "@phasebound/workflow"
import { Console, Context, Effect, Layer, Logger, LogLevel, Schema } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

const Called = Schema.Struct({ activity: Schema.String, tool: Schema.String, effectIdentity: Schema.String, answer: Schema.String })

const Checkout = Workflow.make({
  name: "Checkout",
  payload: { order: Schema.String },
  idempotencyKey: ({ order }) => order,
  success: Schema.Array(Called),
  error: ToolCallError.ToolCallError
})

/** The shop's MCP connection: one for the process, shared by the activities. */
class Shop extends Context.Tag("example/Shop")<Shop, McpClient.Connection>() {}

const textOf = (content: ReadonlyArray<unknown>): string =>
  content.map((part) => typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? part.text : "").join("")

const CheckoutLive = Checkout.toLayer(Effect.fn(function*({ order }) {
  const calls = [
    { name: "reserve", tool: "upsert", arguments: { key: order, value: "reserved" } }, // idempotent
    { name: "record", tool: "append", arguments: { entry: order } }, // neither: never re-sent
    { name: "check", tool: "lookup", arguments: { key: order } } // read-only
  ]
  const done: Array<typeof Called.Type> = []
  for (const call of calls) {
    const result = yield* ToolCall.call({ ...call, connection: Shop })
    const effectIdentity = yield* EffectIdentity.derive(call.name)
    done.push({ activity: call.name, tool: call.tool, effectIdentity, answer: textOf(result.content) })
  }
  return done
}))

/** A single-runner cluster on the SQLite file: the whole engine, durable, in this process. */
const engineOn = (filename: string) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({ shardingConfig: { entityTerminationTimeout: "2 seconds" } })),
    Layer.provide(SqliteClient.layer({ filename }))
  )

/** Builds an engine on the file, executes the workflow, shuts the engine down. */
const checkoutOn = (filename: string, url: string) =>
  Checkout.execute({ order: "order-42" }).pipe(
    Effect.provide(CheckoutLive.pipe(
      Layer.provideMerge(engineOn(filename)),
      Layer.provide(Layer.scoped(Shop, McpClient.connect({ url })).pipe(Layer.provide(NodeHttpClient.layerUndici)))
    ))
  )

const main = Effect.gen(function*() {
  const server = yield* Effect.acquireRelease(
    Effect.promise(() => startServer({ effectTools: true })),
    (server) => Effect.promise(() => server.close())
  )
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "phasebound-example-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  const filename = join(dir, "cluster.db")
  const sent = () => ["upsert", "append", "lookup"].map((tool) => server.toolCalls(tool)).reduce((a, b) => a + b, 0)
  yield* Console.log(`MCP server ${server.url}; cluster store ${filename}`)

  const first = yield* checkoutOn(filename, server.url)
  yield* Console.log(`first run: ${sent()} tool calls sent`)
  for (const call of first) {
    yield* Console.log(`  ${call.activity} (${call.tool}) -> ${JSON.stringify(call.answer)}, effect identity ${call.effectIdentity}`)
  }
  const seen = server.effectIdentities("upsert").concat(server.effectIdentities("append"), server.effectIdentities("lookup"))
  yield* Console.log(`the server saw the same identities: ${first.every((call) => seen.includes(call.effectIdentity))}`)

  const again = yield* checkoutOn(filename, server.url)
  const same = JSON.stringify(again) === JSON.stringify(first)
  yield* Console.log(`a new engine on the same file, same payload: result from the store ${same}, tool calls sent in total ${sent()}`)
  if (!same || sent() !== first.length) return yield* Effect.dieMessage("the second execution did not come from the store")
})

// The engine's own logs only when something is wrong.
Effect.runPromise(Effect.scoped(main).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
