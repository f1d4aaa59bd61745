/**
 * The era per origin over stdio (docs/DESIGN.md, "The era per origin"): a 2025 server that never
 * answers a method it does not know costs a first discovery the probe's bounded wait; a second
 * child of the same command, connected with the same cache, is sent `initialize` first and waits
 * for nothing. A different command (another environment) is another server.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Layer } from "effect"
import { McpCache, McpClient } from "../../src/index.js"

const platform = Layer.mergeAll(Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer), McpCache.layer())

const fixture = Effect.acquireRelease(
  Effect.sync(() => Testkit.makeStdioFixture({ silentOnUnknown: true })),
  (f) => Effect.sync(() => f.cleanup())
)

const stages = (connection: McpClient.Connection) => connection.discovery.map((o) => [o.stage, o.outcome, o.attempt?.era])

describe("stdio, the era per origin", () => {
  it.scopedLive("the second child of a 2025 server is sent initialize first: no probe, no wait", () =>
    Effect.gen(function*() {
      const f = yield* fixture
      const command = { command: f.command, args: f.args, env: f.env, policy: { discovery: { timeout: 2_000 } } }
      const first = yield* McpClient.connectStdio(command)
      expect(first.protocolVersion).toBe("2025-11-25")
      // The probe's wait ran out (half the discovery timeout), then the handshake.
      expect(stages(first)[0]).toEqual(["discover", "ProtocolViolation", "stateless"])
      expect(first.discovery[0]!.durationMs).toBeGreaterThanOrEqual(950)
      const second = yield* McpClient.connectStdio(command)
      expect(second.protocolVersion).toBe("2025-11-25")
      expect(stages(second).find(([stage]) => stage === "initialize")).toEqual(["initialize", "ok", "handshake"])
      expect(stages(second).some(([stage]) => stage === "discover")).toBe(false)
      expect(f.arrivals().filter((method) => method === "server/discover")).toHaveLength(1)
      expect(f.arrivals().filter((method) => method === "initialize")).toHaveLength(2)
      expect(yield* second.callTool("increment")).toMatchObject({ content: [{ text: "1" }] })
      // Another environment is another server configuration: probed again.
      const other = yield* McpClient.connectStdio({ ...command, env: { ...f.env, PHASEBOUND_OTHER: "1" } })
      expect(other.protocolVersion).toBe("2025-11-25")
      expect(f.arrivals().filter((method) => method === "server/discover")).toHaveLength(2)
    }).pipe(Effect.provide(platform)), 30_000)
})
