/**
 * Dev measurement: the latency of one `completion/complete` round trip, phasebound against the
 * official SDK clients, all against the same peer in its own process:
 * `@modelcontextprotocol/server-everything` over Streamable HTTP (2025 revisions, the SDK v1
 * server), completing its `completable-prompt`'s `name` from the `department` in the context.
 * Each client connects once, warms up, then runs N sequential completions; rounds alternate the
 * clients so that a noisy neighbour costs them alike.
 *
 *   tsx --conditions=@phasebound/source src/dev/completionLatency.ts [N] [rounds]
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient } from "@phasebound/client"
import * as PromiseApi from "@phasebound/client/promise"
import { Exit, Layer, ManagedRuntime, Scope } from "effect"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"

const N = Number(process.argv[2] ?? 1_000)
const ROUNDS = Number(process.argv[3] ?? 3)
const WARMUP = 100

const request = {
  ref: { type: "ref/prompt", name: "completable-prompt" },
  argument: { name: "name", value: "" },
  context: { arguments: { department: "Engineering" } }
} as const

const require = createRequire(import.meta.url)
const entry = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js")

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

const startEverything = async () => {
  const port = await freePort()
  const child = spawn(process.execPath, [entry, "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    let log = ""
    child.stderr.on("data", (chunk) => {
      log += chunk
      if (/running on port|listening on port/i.test(log)) resolve()
    })
    child.once("exit", (code) => reject(new Error(`server-everything exited ${code}`)))
  })
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => void child.kill("SIGKILL") }
}

interface Session {
  readonly complete: () => Promise<unknown>
  readonly close: () => Promise<void>
}

const phaseboundEffect = (layer: Layer.Layer<import("@effect/platform/HttpClient").HttpClient>) => async (url: string): Promise<Session> => {
  const runtime = ManagedRuntime.make(layer)
  const scope = await runtime.runPromise(Scope.make())
  const connection = await runtime.runPromise(Scope.extend(McpClient.connect({ url }), scope))
  return {
    complete: () => runtime.runPromise(connection.complete(request)),
    close: async () => {
      await runtime.runPromise(Scope.close(scope, Exit.void))
      await runtime.dispose()
    }
  }
}

const clients: ReadonlyArray<readonly [string, (url: string) => Promise<Session>]> = [
  ["phasebound Effect API + FetchHttpClient", phaseboundEffect(FetchHttpClient.layer)],
  ["phasebound Effect API + undici", phaseboundEffect(NodeHttpClient.layerUndici)],
  ["phasebound Promise API", async (url) => {
    const connection = await PromiseApi.connect({ url })
    return { complete: () => connection.complete(request), close: () => connection.close() }
  }],
  ["@modelcontextprotocol/sdk 1.32.2 Client", async (url) => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
    const client = new Client({ name: "bench", version: "0.1.0" })
    const transport = new StreamableHTTPClientTransport(new URL(url))
    await client.connect(transport)
    return {
      complete: () => client.complete(request),
      close: async () => {
        await transport.terminateSession().catch(() => undefined)
        await client.close()
      }
    }
  }],
  ["@modelcontextprotocol/client 2.4.0 Client", async (url) => {
    const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client")
    const client = new Client({ name: "bench", version: "0.1.0" })
    const transport = new StreamableHTTPClientTransport(new URL(url))
    await client.connect(transport)
    return {
      complete: () => client.complete(request),
      close: async () => {
        await transport.terminateSession().catch(() => undefined)
        await client.close()
      }
    }
  }]
]

const quantile = (sorted: Float64Array, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

const server = await startEverything()
const results = new Map<string, Array<number>>()
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, open] of round % 2 === 0 ? clients : [...clients].reverse()) {
      const session = await open(server.url)
      for (let i = 0; i < WARMUP; i++) await session.complete()
      const times = new Float64Array(N)
      for (let i = 0; i < N; i++) {
        const t = performance.now()
        await session.complete()
        times[i] = performance.now() - t
      }
      await session.close()
      results.set(name, [...(results.get(name) ?? []), ...times])
    }
  }
} finally {
  server.stop()
}
console.log(`completion/complete against server-everything (Streamable HTTP, 2025-11-25), ${ROUNDS} x ${N} sequential each, ms`)
console.log(`${"client".padEnd(44)} ${"median".padStart(7)} ${"p95".padStart(7)} ${"mean".padStart(7)}`)
for (const [name, all] of results) {
  const sorted = Float64Array.from(all).sort()
  const mean = all.reduce((a, b) => a + b, 0) / all.length
  console.log(
    `${name.padEnd(44)} ${quantile(sorted, 0.5).toFixed(3).padStart(7)} ${quantile(sorted, 0.95).toFixed(3).padStart(7)} ${mean.toFixed(3).padStart(7)}`
  )
}
