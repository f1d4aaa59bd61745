/**
 * The qualification program of @phasebound/workflow, run by `node qualify-workflow.mjs` and
 * `bun qualify-workflow.mjs` in the project where the packed packages were installed (src/run.ts
 * bundles it with esbuild, every package import left external). It imports public entry points only: @phasebound/workflow (and one
 * module behind its `./*` export), @phasebound/client, @phasebound/testkit, @effect/workflow,
 * effect, @effect/platform and @effect/platform-node.
 *
 * A short workflow on `WorkflowEngine.layerMemory` calls the testkit server's side-effecting
 * `increment` tool through `ToolCall.call`, against a connection from `McpConnection.layerHttp`:
 * the tool runs once however often the execution is run, the call carries the effect identity,
 * another execution gets another identity, and a connection that cannot be made is a typed
 * `ToolCallFailed` that sent nothing.
 *
 * Like program/qualify.ts it prints a table and the testkit's report line (`formatReport`),
 * never calls process.exit, and sets process.exitCode on failure.
 */
import { FetchHttpClient } from "@effect/platform"
import { Workflow, WorkflowEngine } from "@effect/workflow"
import { McpClient, McpConnection } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import { EffectIdentity, SentMarker, ToolCall, ToolCallError } from "@phasebound/workflow"
import * as ToolCallModule from "@phasebound/workflow/ToolCall"
import { Effect, Exit, Layer, Schema } from "effect"
import { check, printResults, runScenario } from "./harness.js"

const bunVersion = (globalThis as { readonly Bun?: { readonly version: string } }).Bun?.version
const runtime = bunVersion === undefined ? "node" : "bun"
const results: Array<Testkit.CheckResult> = []

const scenario = async (name: string, body: () => unknown, timeoutMs = 20_000) => {
  results.push(await runScenario(name, body, timeoutMs))
}

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => result.content.map((c) => (c as { text?: string }).text ?? "").join("")

/** A workflow of one order, one `increment` call: its result is the tool's text. */
const orderWorkflow = (name: string) =>
  Workflow.make({
    name,
    payload: { order: Schema.String },
    success: Schema.String,
    error: ToolCallError.ToolCallError,
    idempotencyKey: ({ order }) => order
  })

const Order = orderWorkflow("QualifyOrder")
/** The same workflow over a connection that cannot be made (a port nothing listens on). */
const Unreachable = orderWorkflow("QualifyUnreachable")

const toolCalls = (server: Testkit.TestServer) =>
  server.requests.filter((request) => (request.json as { method?: string } | undefined)?.method === "tools/call")

await scenario("the public exports: EffectIdentity, SentMarker, ToolCall, ToolCallError; ./ToolCall by path", () => {
  check(typeof EffectIdentity.derive === "function", "EffectIdentity.derive")
  check(typeof SentMarker.make === "function", "SentMarker.make")
  check(typeof ToolCall.call === "function" && typeof ToolCall.retryUnknown === "function", "ToolCall.call, retryUnknown")
  check(ToolCallModule.call === ToolCall.call, "@phasebound/workflow/ToolCall is the module @phasebound/workflow exports")
  check(typeof ToolCallError.isRetrySafe === "function", "ToolCallError.isRetrySafe")
  return "4 modules"
})

await scenario("a workflow on WorkflowEngine.layerMemory calls the tool once; a second run gets the persisted result", async () => {
  const server = await Testkit.startServer()
  try {
    const layer = Order.toLayer(() => ToolCall.call({ name: "increment", connection: McpConnection.McpConnection, tool: "increment" }).pipe(Effect.map(textOf)))
      .pipe(
        Layer.provide(McpConnection.layerHttp({ url: server.url, policy: { timeout: "5 seconds" } })),
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provide(FetchHttpClient.layer)
      )
    const [first, second, other] = await Effect.runPromise(
      Effect.all([
        Order.execute({ order: "A-1" }),
        Order.execute({ order: "A-1" }),
        Order.execute({ order: "B-2" })
      ]).pipe(Effect.provide(layer))
    )
    check(first === second, `the second run of A-1 answered ${JSON.stringify(second)}, not ${JSON.stringify(first)}`)
    check(first !== other, `B-2 answered the same as A-1: ${JSON.stringify(other)}`)
    check(server.counter() === 2, `increment ran ${server.counter()} times for two orders`)
    const identities = toolCalls(server).map((request) => request.meta?.[McpClient.effectIdentityMetaKey])
    check(identities.length === 2, `${identities.length} tools/call requests for two orders`)
    check(identities.every((id) => typeof id === "string" && id.length > 0), `identities ${JSON.stringify(identities)}`)
    check(identities[0] !== identities[1], "the two orders carried the same effect identity")
    return `A-1 ${JSON.stringify(first)} twice, B-2 ${JSON.stringify(other)}; 2 calls, 2 identities`
  } finally {
    await server.close()
  }
})

await scenario("a connection that cannot be made is a ToolCallFailed that sent nothing", async () => {
  const server = await Testkit.startServer()
  const url = server.url
  await server.close()
  const layer = Unreachable.toLayer(() =>
    ToolCall.call({
      name: "increment",
      connection: McpClient.connect({ url, policy: { timeout: "2 seconds" } }),
      tool: "increment"
    }).pipe(Effect.map(textOf))
  ).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide(FetchHttpClient.layer))
  const exit = await Effect.runPromiseExit(Unreachable.execute({ order: "C-3" }).pipe(Effect.provide(layer)))
  check(Exit.isFailure(exit), "the workflow succeeded")
  const error: unknown = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  check(error instanceof ToolCallError.ToolCallFailed, `failed with ${exit.cause._tag} ${(error as { _tag?: string } | undefined)?._tag ?? ""}`)
  check(error.outcome === "not-sent", `outcome ${error.outcome}`)
  check(!JSON.stringify(error).includes(url), "the URL is in the error")
  return `${error.tag}, outcome ${error.outcome}`
})

printResults(`phasebound workflow qualification under ${runtime} ${bunVersion ?? process.version}`, results, Testkit.formatReport)
