/**
 * The fibers a connection starts (the relist loop, the transports' readers, the deadline's own
 * fork) are interruptible whatever the fiber that started them: a connection made inside an
 * `acquireRelease` acquisition or an uninterruptible region still closes at once, its session
 * ended or its child process gone, and a call made in an uninterruptible region still ends at
 * its deadline.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Effect, Exit, Layer, Scope } from "effect"
import { McpClient } from "../../src/index.js"
import { eventually, failureOf } from "../support/harness.js"

const commandExecutor = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

/** Closes `scope`; a close that waits for ever fails the test (10 s: generous, a close takes milliseconds). */
const closeWithin = (scope: Scope.CloseableScope) =>
  Scope.close(scope, Exit.void).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "the close never ended" }))

const regions = [
  ["inside an acquireRelease acquisition", <E, R>(connect: Effect.Effect<McpClient.Connection, E, R>) => Effect.acquireRelease(connect, () => Effect.void)],
  ["inside Effect.uninterruptible", <E, R>(connect: Effect.Effect<McpClient.Connection, E, R>) => Effect.uninterruptible(connect)]
] as const

describe.concurrent("the fibers a connection starts", () => {
  for (const [name, made] of regions) {
    it.scopedLive(`Streamable HTTP: a connection made ${name} closes, its session ended`, () =>
      Effect.gen(function*() {
        const srv = yield* Testkit.scoped({ features: true, mode: "sse" })
        const scope = yield* Scope.make()
        const connection = yield* made(McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] })).pipe(
          Scope.extend(scope),
          Effect.provide(FetchHttpClient.layer)
        )
        expect(connection.tools.length).toBeGreaterThan(0)
        yield* closeWithin(scope)
        yield* eventually(() => srv.deletes() === 1)
      }))

    it.scopedLive(`stdio: a connection made ${name} closes, the child gone`, () =>
      Effect.gen(function*() {
        const f = yield* Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture({ features: true })), (f) => Effect.sync(() => f.cleanup()))
        const scope = yield* Scope.make()
        const connection = yield* made(McpClient.connectStdio({ command: f.command, args: f.args, env: f.env })).pipe(
          Scope.extend(scope),
          Effect.provide(commandExecutor)
        )
        expect(connection.transport).toBe("stdio")
        yield* closeWithin(scope)
        expect(f.isAlive()).toBe(false)
      }))
  }

  it.scopedLive("a call made inside Effect.uninterruptible still ends at its deadline", () =>
    Effect.gen(function*() {
      const srv = yield* Testkit.scoped({ mode: "sse" })
      const connection = yield* McpClient.connect({ url: srv.url, revisions: ["2025-11-25"] }).pipe(Effect.provide(FetchHttpClient.layer))
      srv.script({ on: "tools/call", kind: "response-never-sent" })
      const { error } = yield* failureOf(Effect.uninterruptible(connection.callTool("increment", {}, { timeout: "300 millis" })))
      expect(error).toMatchObject({ _tag: "DeadlineExceeded", stage: "call" })
    }))
})
