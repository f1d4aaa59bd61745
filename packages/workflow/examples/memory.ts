/**
 * A durable workflow of three tool calls on the in-memory engine, against a testkit server on
 * loopback (docs/DURABILITY.md, "How it works"): a read-only `lookup`, an idempotent `upsert`
 * and a non-idempotent `append`, each with the effect identity of its activity.
 *
 *   npm run example:workflow
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Workflow, WorkflowEngine } from "@effect/workflow"
import { Authorization, McpServers } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import { ToolCall, ToolCallError } from "@phasebound/workflow"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const Order = Workflow.make({
  name: "Order",
  payload: { order: Schema.String },
  idempotencyKey: ({ order }) => order,
  success: Schema.Struct({ stock: Schema.String, reserved: Schema.String, ledger: Schema.String }),
  error: ToolCallError.ToolCallError
})

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string =>
  result.content.map((block) => typeof block === "object" && block !== null && "text" in block && typeof block.text === "string" ? block.text : "").join("")

const OrderLive = Order.toLayer(({ order }) =>
  Effect.gen(function*() {
    const shop = ToolCall.server("shop")
    const stock = yield* ToolCall.call({ name: "stock", connection: shop, tool: "lookup", arguments: { key: order } })
    const reserved = yield* ToolCall.call({
      name: "reserve",
      connection: shop,
      tool: "upsert",
      arguments: { key: order, value: "reserved" }
    })
    const entry = { name: "ledger", connection: shop, tool: "append", arguments: { entry: order } }
    const ledger = yield* ToolCall.call(entry).pipe(
      // Not idempotent: an unknown outcome is the workflow's to decide. This one sends it again,
      // with the same identity (a server that honours identities applies it once).
      Effect.catchTag("ToolCallOutcomeUnknown", (unknown) => ToolCall.retryUnknown(entry, unknown))
    )
    return { stock: textOf(stock), reserved: textOf(reserved), ledger: textOf(ledger) }
  })
)

const main = Effect.gen(function*() {
  const server = yield* Testkit.scoped({ effectTools: true })
  const servers = McpServers.layer({ servers: { shop: { url: server.url } } }).pipe(
    Layer.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, Authorization.layerDefaults))
  )
  const engine = Layer.provideMerge(OrderLive, WorkflowEngine.layerMemory).pipe(Layer.provide(servers))

  yield* Effect.gen(function*() {
    const first = yield* Order.execute({ order: "order-1" })
    const again = yield* Order.execute({ order: "order-1" }) // the same execution: nothing is called again
    console.log(JSON.stringify({ first, again }))
  }).pipe(Effect.provide(engine))

  for (const tool of ["lookup", "upsert", "append"]) {
    console.log(JSON.stringify({ tool, calls: server.toolCalls(tool), effectIdentities: server.effectIdentities(tool) }))
  }
})

Effect.runPromise(Effect.scoped(main)).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
