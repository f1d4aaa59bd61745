/**
 * Shared fixtures for the end-to-end suites: the HTTP client layers every suite runs through,
 * a scoped testkit server, and assertions on what a failure must never leave behind.
 */
import { FetchHttpClient } from "@effect/platform"
import type { HttpClient } from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Testkit from "@phasebound/testkit"
import { Effect, type Layer } from "effect"
import { expect } from "vitest"
import type { McpClient } from "../../src/index.js"

export const httpClients: ReadonlyArray<readonly [string, Layer.Layer<HttpClient>]> = [
  ["FetchHttpClient", FetchHttpClient.layer],
  ["NodeHttpClient", NodeHttpClient.layerUndici]
]

export const server = (options?: Testkit.TestServerOptions) => Testkit.scoped(options)

/** Waits (in real time) until the predicate holds, or fails the test after `timeoutMs`. */
export const eventually = (predicate: () => boolean, timeoutMs = 5_000) =>
  Effect.promise(async () => {
    const started = Date.now()
    while (!predicate()) {
      if (Date.now() - started > timeoutMs) throw new Error("condition not met in time")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })

/** After a failure: no pending request and no background fiber remain in the connection. */
export const expectReleased = (connection: McpClient.Connection) =>
  Effect.gen(function*() {
    yield* Effect.promise(async () => {
      const started = Date.now()
      for (;;) {
        const diagnostics = await Effect.runPromise(connection.diagnostics)
        if (diagnostics.pending === 0 && diagnostics.background === 0) return
        if (Date.now() - started > 5_000) {
          throw new Error(`still holding ${JSON.stringify(diagnostics)}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    })
  })

/** Runs an effect that must fail, and returns its error with how long it took. */
export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const error = yield* Effect.flip(effect)
    return { error, elapsedMs: Date.now() - started }
  })

export const expectTag = (error: unknown, tag: string) => {
  expect((error as { _tag?: string })._tag).toBe(tag)
}
