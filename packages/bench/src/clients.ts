/**
 * One adapter per measured client, all with the same shape. The Effect API adapters run their
 * loops inside Effect (one `runPromise` per loop, not per call), as an Effect user would; the
 * Promise-based ones (phasebound's Promise API and the official SDKs) run plain async loops.
 */
import { FetchHttpClient } from "@effect/platform"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpCache, McpClient } from "@phasebound/client"
import * as PromiseApi from "@phasebound/client/promise"
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"

/**
 * json, sse, legacy: the 2025 era, against the official SDK v1 server (servers/officialServer.ts).
 * stateless: the 2026-07-28 revision, against the official SDK v2 server in its 2026-only mode
 * (servers/statelessServer.ts); only the clients that speak 2026-07-28 run there.
 */
export type ServerMode = "json" | "sse" | "legacy" | "stateless"

export interface Session {
  /** Tools known after discovery. */
  readonly toolCount: number
  /** The protocol revision negotiated, when the client says. */
  readonly protocolVersion?: string | undefined
  readonly call: (name: string, args: Record<string, unknown>) => Promise<unknown>
  readonly listTools: () => Promise<number>
  /** `n` sequential calls of `add`; the latency of each, in ms. */
  readonly sequential: (n: number) => Promise<Float64Array>
  /** `n` calls of `add`, `concurrency` in flight; total ms. */
  readonly concurrent: (n: number, concurrency: number) => Promise<number>
  readonly close: () => Promise<void>
}

export interface ClientAdapter {
  readonly name: string
  readonly label: string
  readonly ours: boolean
  readonly modes: ReadonlyArray<ServerMode>
  /** Connect, initialize, list the tools. */
  readonly connect: (url: string, mode: ServerMode, options?: { readonly maxBytes?: number }) => Promise<Session>
  /** Called once when the adapter is no longer needed. */
  readonly dispose?: () => Promise<void>
}

const now = () => performance.now()

/** Generic loops over a Promise `call`. */
const promiseLoops = (call: Session["call"]) => ({
  sequential: async (n: number) => {
    const out = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      const t = now()
      await call("add", { a: i, b: 1 })
      out[i] = now() - t
    }
    return out
  },
  concurrent: async (n: number, concurrency: number) => {
    let next = 0
    const t = now()
    const worker = async () => {
      while (next < n) {
        const i = next++
        await call("add", { a: i, b: 1 })
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    return now() - t
  }
})

// ---------------------------------------------------------------------------------------------
// phasebound, Effect API

const phaseboundEffect = (
  name: string,
  label: string,
  layer: Layer.Layer<HttpClient.HttpClient>,
  modes: ReadonlyArray<ServerMode>
): ClientAdapter => {
  // One HTTP client (and its connection pool) for the whole run, as an application would have,
  // and one McpCache: a long-running service that connects again to the same server remembers
  // the era it spoke (docs/DESIGN.md, "The era per origin"), so only the first connect to a 2025
  // server pays the refused `server/discover`.
  const runtime = ManagedRuntime.make(Layer.merge(layer, McpCache.layer()))
  return {
    name,
    label,
    ours: true,
    modes,
    dispose: () => runtime.dispose(),
    connect: async (url, mode, options) => {
      const scope = Effect.runSync(Scope.make())
      const connection = await runtime.runPromise(
        McpClient.connect({
          url,
          transport: mode === "legacy" ? "sse" : "streamable-http",
          policy: options?.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes }
        }).pipe(Scope.extend(scope))
      ).catch(async (error) => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        throw error
      })
      return {
        toolCount: connection.tools.length,
        protocolVersion: connection.protocolVersion,
        // Rejects with the typed error itself (runPromise would wrap it in a FiberFailure).
        call: (tool, args) =>
          runtime.runPromise(Effect.either(connection.callTool(tool, args))).then((either) =>
            either._tag === "Left" ? Promise.reject(either.left) : either.right
          ),
        listTools: () => runtime.runPromise(Effect.map(connection.listTools, (tools) => tools.length)),
        sequential: (n) =>
          runtime.runPromise(Effect.gen(function*() {
            const out = new Float64Array(n)
            for (let i = 0; i < n; i++) {
              const t = now()
              yield* connection.callTool("add", { a: i, b: 1 })
              out[i] = now() - t
            }
            return out
          })),
        concurrent: (n, concurrency) =>
          runtime.runPromise(Effect.gen(function*() {
            const t = now()
            yield* Effect.forEach(
              Array.from({ length: n }, (_, i) => i),
              (i) => connection.callTool("add", { a: i, b: 1 }),
              { concurrency, discard: true }
            )
            return now() - t
          })),
        close: () => Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// phasebound, Promise API (its default HTTP client: one undici client per process under Node).
// Both phasebound APIs keep their default `revisions` (every revision, 2026-07-28 tried first).

// One cache for the whole run (`createCache`), as the Effect adapters have: see above.
const promiseCache = PromiseApi.createCache()

const phaseboundPromise: ClientAdapter = {
  name: "phasebound-promise",
  label: "phasebound Promise API (fetch)",
  ours: true,
  modes: ["json", "sse", "legacy", "stateless"],
  connect: async (url, mode, options) => {
    const connection = await PromiseApi.connect({
      url,
      cache: promiseCache,
      transport: mode === "legacy" ? "sse" : "streamable-http",
      policy: options?.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes }
    })
    const call: Session["call"] = (tool, args) => connection.callTool(tool, args)
    return {
      toolCount: connection.tools.length,
      protocolVersion: connection.protocolVersion,
      call,
      listTools: async () => (await connection.listTools()).length,
      ...promiseLoops(call),
      close: () => connection.close()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// @modelcontextprotocol/sdk 1.32.2

const sdk1: ClientAdapter = {
  name: "sdk-1.32.2",
  label: "@modelcontextprotocol/sdk 1.32.2 Client",
  ours: false,
  // No stateless: SDK v1 knows only the 2025 revisions (no `server/discover`, no per-request `_meta`).
  modes: ["json", "sse", "legacy"],
  connect: async (url, mode) => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
    const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js")
    const client = new Client({ name: "bench", version: "0.1.0" })
    const transport = mode === "legacy" ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url))
    await client.connect(transport)
    const { tools } = await client.listTools()
    const call: Session["call"] = (name, args) => client.callTool({ name, arguments: args })
    return {
      toolCount: tools.length,
      call,
      listTools: async () => (await client.listTools()).tools.length,
      ...promiseLoops(call),
      close: async () => {
        if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined)
        await client.close()
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// @modelcontextprotocol/client 2.4.0

// Against the 2025-era servers: its default (`versionNegotiation` absent = "legacy", the plain
// 2025 `initialize`). Against the 2026-07-28 server: `versionNegotiation: { mode: "auto" }`, the
// counterpart of phasebound's default (probe with `server/discover`, fall back to `initialize`
// only on definitive legacy evidence); its default mode cannot talk to a 2026-only server (the
// server refuses its `initialize` with -32022). `{ pin: "2026-07-28" }` sends the same requests.

const sdk2: ClientAdapter = {
  name: "client-2.4.0",
  label: "@modelcontextprotocol/client 2.4.0 Client",
  ours: false,
  modes: ["json", "sse", "legacy", "stateless"],
  connect: async (url, mode) => {
    const { Client, StreamableHTTPClientTransport, SSEClientTransport } = await import("@modelcontextprotocol/client")
    const client = new Client(
      { name: "bench", version: "0.1.0" },
      mode === "stateless" ? { versionNegotiation: { mode: "auto" } } : undefined
    )
    const transport = mode === "legacy" ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url))
    await client.connect(transport)
    const { tools } = await client.listTools()
    const call: Session["call"] = (name, args) => client.callTool({ name, arguments: args })
    return {
      toolCount: tools.length,
      protocolVersion: client.getNegotiatedProtocolVersion(),
      call,
      listTools: async () => (await client.listTools()).tools.length,
      ...promiseLoops(call),
      close: async () => {
        if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined)
        await client.close()
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// effect@4 `effect/ai/McpClient` (experimental), under the npm alias `effect4`

const effect4 = async (): Promise<ClientAdapter> => {
  const E = await import("effect4")
  const Mcp = await import("effect4/ai/McpClient")
  const Protocol = await import("effect4/ai/McpProtocol")
  const Http = await import("effect4/http")
  // Effect 4 is a second major loaded under an alias: its types and effect 3's cannot meet in
  // one signature, so this adapter alone talks to it untyped, and returns plain values.
  const Eff: any = E.Effect
  const ScopeM: any = E.Scope
  const ExitM: any = E.Exit
  const run = <A>(effect: unknown): Promise<A> => Eff.runPromise(Eff.provide(effect, Http.FetchHttpClient.layer))
  return {
    name: "effect4-mcp",
    label: "effect 4.1.0 effect/ai/McpClient (fetch)",
    ours: false,
    // No legacy HTTP+SSE transport. Its McpClient takes one protocol adapter and does not
    // negotiate: 2025-11-25 against the 2025-era servers, `v2026_07_28` against the stateless one
    // (same requests as the others there: server/discover, tools/list, tools/call with the headers).
    modes: ["json", "sse", "stateless"],
    connect: async (url, mode, options) => {
      const scope: any = await Eff.runPromise(ScopeM.make())
      const connected = await run<{ client: any; tools: ReadonlyArray<any> }>(
        Eff.gen(function*() {
          const transport = yield* Mcp.http({
            url,
            protocol: mode === "stateless" ? Protocol.v2026_07_28 : Protocol.v2025_11_25,
            ...(options?.maxBytes === undefined ? {} : { maxMessageBytes: options.maxBytes })
          })
          const client = yield* Eff.provideService(Mcp.make({ name: "bench", version: "0.1.0" }), Mcp.Transport, transport)
          const tools = yield* client.listTools()
          return { client, tools }
        }).pipe(Eff.provideService(ScopeM.Scope, scope))
      ).catch(async (error) => {
        await Eff.runPromise(ScopeM.close(scope, ExitM.void))
        throw error
      })
      const { client } = connected
      const byName = new Map<string, unknown>(connected.tools.map((tool: any) => [tool.name, tool]))
      const callEffect = (name: string, args: Record<string, unknown>) =>
        client.callTool({ tool: byName.get(name) ?? { name, inputSchema: { type: "object" } }, arguments: args })
      return {
        toolCount: connected.tools.length,
        protocolVersion: client.protocolVersion,
        call: (name, args) => run(callEffect(name, args)),
        listTools: () => run(Eff.map(client.listTools(), (tools: ReadonlyArray<unknown>) => tools.length)),
        sequential: (n) =>
          run(Eff.gen(function*() {
            const out = new Float64Array(n)
            for (let i = 0; i < n; i++) {
              const t = now()
              yield* callEffect("add", { a: i, b: 1 })
              out[i] = now() - t
            }
            return out
          })),
        concurrent: (n, concurrency) =>
          run(Eff.gen(function*() {
            const t = now()
            yield* Eff.forEach(
              Array.from({ length: n }, (_, i) => i),
              (i: number) => callEffect("add", { a: i, b: 1 }),
              { concurrency, discard: true }
            )
            return now() - t
          })),
        close: () => Eff.runPromise(ScopeM.close(scope, ExitM.void))
      }
    }
  }
}

// pb Effect+fetch is left out of the stateless mode, to keep the full run short: the two
// configurations the targets are judged on (Effect+undici, Promise) run there.
export const phaseboundFetch = () =>
  phaseboundEffect("phasebound-fetch", "phasebound Effect API + FetchHttpClient", FetchHttpClient.layer, ["json", "sse", "legacy"])
export const phaseboundUndici = () =>
  phaseboundEffect("phasebound-undici", "phasebound Effect API + NodeHttpClient.layerUndici", NodeHttpClient.layerUndici, [
    "json",
    "sse",
    "legacy",
    "stateless"
  ])

/** Every adapter by name; effect4 is loaded lazily (it may not load here). */
export const adapters: Record<string, () => Promise<ClientAdapter>> = {
  "phasebound-fetch": async () => phaseboundFetch(),
  "phasebound-undici": async () => phaseboundUndici(),
  "phasebound-promise": async () => phaseboundPromise,
  "sdk-1.32.2": async () => sdk1,
  "client-2.4.0": async () => sdk2,
  "effect4-mcp": effect4
}

export const clientNames = Object.keys(adapters)
