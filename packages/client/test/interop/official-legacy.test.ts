/**
 * Interop with real peers no one here wrote, over legacy HTTP+SSE and Streamable HTTP, with
 * `transport: "auto"` and forced: the official SDK's SSEServerTransport, and
 * @modelcontextprotocol/server-everything in `sse` and `streamableHttp` modes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { startEverythingServer } from "../support/everythingServer.js"
import { startOfficialLegacyServer } from "../support/officialLegacyServer.js"
import { httpClients } from "../support/harness.js"

const resource = <A extends { close: () => Promise<void> }>(start: () => Promise<A>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

/** Explicit budgets, well inside the test's own timeout: a hung peer fails as a typed error. */
const policy = { discovery: { timeout: 15_000 }, call: { timeout: 5_000 } } as const

describe.each(httpClients)("interop through %s", (_, httpClient) => {
  for (const transport of ["auto", "sse"] as const) {
    it.scopedLive(`official SDK SSEServerTransport, transport ${transport}`, () =>
      Effect.gen(function*() {
        const server = yield* resource(startOfficialLegacyServer)
        const connection = yield* McpClient.connect({ url: server.url, transport, policy })
        expect(connection.transport).toBe("sse")
        expect(connection.serverInfo?.name).toBe("official-sdk-legacy-peer")
        expect(connection.tools.map((t) => t.name).sort()).toEqual(["add", "increment"])
        expect(yield* connection.callTool("add", { a: 40, b: 2 })).toMatchObject({ content: [{ type: "text", text: "42" }] })
        yield* connection.callTool("increment")
        expect(server.counter()).toBe(1)
        // The revision is negotiated by initialize, not by the transport: this server accepts the
        // newest handshake revision the client asks for, over legacy HTTP+SSE too.
        expect(connection.protocolVersion).toBe("2025-11-25")
      }).pipe(Effect.provide(httpClient)), 30_000)
  }

  for (
    const [mode, transport, expected] of [
      ["sse", "auto", "sse"],
      ["sse", "sse", "sse"],
      ["streamableHttp", "auto", "streamable-http"],
      ["streamableHttp", "streamable-http", "streamable-http"]
    ] as const
  ) {
    it.scopedLive(`server-everything in ${mode} mode, transport ${transport}`, () =>
      Effect.gen(function*() {
        const server = yield* resource(() => startEverythingServer(mode))
        const connection = yield* McpClient.connect({ url: server.url, transport, policy })
        expect(connection.transport).toBe(expected)
        const names = connection.tools.map((t) => t.name)
        expect(names).toContain("echo")
        expect(names).toContain("get-sum")
        const echoed = yield* connection.callTool("echo", { message: "héllo 😀" })
        expect(echoed.content).toEqual([{ type: "text", text: "Echo: héllo 😀" }])
        const sum = yield* connection.callTool("get-sum", { a: 2, b: 3 })
        expect(sum.content).toEqual([{ type: "text", text: "The sum of 2 and 3 is 5." }])
      }).pipe(Effect.provide(httpClient)), 30_000)
  }
})

it("server-everything over legacy SSE through the Promise API", async () => {
  const server = await startEverythingServer("sse")
  try {
    const connection = await connect({ url: server.url, policy: { discovery: { timeout: 15_000 }, call: { timeout: 5_000 } } })
    try {
      expect(connection.transport).toBe("sse")
      const result = await connection.callTool("get-sum", { a: 1, b: 1 })
      expect(result.content).toEqual([{ type: "text", text: "The sum of 1 and 1 is 2." }])
    } finally {
      await connection.close()
    }
  } finally {
    await server.close()
  }
}, 30_000)
