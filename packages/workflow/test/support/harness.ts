/**
 * What the durable tool call tests share: a testkit server with the effect tools, a real
 * connection to it, and the in-memory workflow engine.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { WorkflowEngine } from "@effect/workflow"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Authorization, McpClient, McpServers } from "@phasebound/client"
import * as Testkit from "@phasebound/testkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A loopback Streamable HTTP server with `lookup` (read-only), `upsert` (idempotent) and `append` (neither). */
export const effectServer = (options?: Testkit.TestServerOptions) => Testkit.scoped({ effectTools: true, ...options })

/** A real connection to it (handshake era, so that its session can expire). */
export const connectTo = (server: Testkit.TestServer) =>
  McpClient.connect({ url: server.url, revisions: ["2025-11-25"] }).pipe(Effect.provide(FetchHttpClient.layer))

/** Runs `body` with the workflows of `registrations` on a fresh in-memory engine. */
export const onMemoryEngine = <A, E, R, RIn>(
  registrations: Layer.Layer<never, never, RIn>,
  body: Effect.Effect<A, E, R>
) => Effect.provide(body, Layer.provideMerge(registrations, WorkflowEngine.layerMemory))

/** `McpServers` for these servers (HTTP, or stdio children). */
export const serversLayer = (servers: McpServers.Options["servers"]) =>
  McpServers.layer({ servers }).pipe(Layer.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, Authorization.layerDefaults)))

/** Waits (in real time) until the predicate holds, or fails the test after `timeoutMs`. */
export const eventually = (predicate: () => boolean, timeoutMs = 5_000) =>
  Effect.promise(async () => {
    const started = Date.now()
    while (!predicate()) {
      if (Date.now() - started > timeoutMs) throw new Error("condition not met in time")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })

/** The text of a tool result. */
export const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string =>
  result.content.map((block) => {
    const text = typeof block === "object" && block !== null && "text" in block ? block.text : undefined
    return typeof text === "string" ? text : ""
  }).join("")
