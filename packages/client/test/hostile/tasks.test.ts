/**
 * Generated hostile answers to `tasks/get` over a real wire (docs/SECURITY.md, "1. The MCP
 * server"; docs/DESIGN.md, "Tasks"): whatever the server says a task is, a call followed to its
 * task ends within its budget as one typed error or a result, carries none of what the server
 * put in its answer, and is never sent twice.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { startTaskServer } from "@phasebound/testkit"
import { Effect, Either, FastCheck as fc } from "effect"
import { McpClient, McpConnectionError } from "../../src/index.js"

const CANARY = "http://canary.example/secret-path"

/** What a hostile server may answer instead of a task: near-tasks, wrong types, anything. */
const hostileTask = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record({
    taskId: fc.oneof(fc.constant("task-1"), fc.string({ maxLength: 40 }), fc.integer(), fc.constant(CANARY)),
    status: fc.oneof(fc.constantFrom("working", "completed", "failed", "cancelled", "input_required"), fc.string({ maxLength: 12 })),
    statusMessage: fc.oneof(fc.constant(CANARY), fc.string(), fc.integer()),
    ttl: fc.oneof(fc.integer(), fc.constant(null), fc.double(), fc.string()),
    pollInterval: fc.oneof(fc.integer({ min: -10, max: 10 }), fc.double(), fc.constant(CANARY)),
    result: fc.jsonValue({ maxDepth: 2 }),
    error: fc.oneof(fc.record({ code: fc.integer(), message: fc.constant(CANARY) }), fc.jsonValue({ maxDepth: 2 }))
  }, { requiredKeys: [] })
)

describe("hostile tasks/get answers", () => {
  it.live("end within the budget as a typed error or a result, redacted, the call sent once (FastCheck)", () =>
    Effect.gen(function*() {
      let answer: unknown = undefined
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startTaskServer({ era: "handshake", statusNotifications: false, mangleTask: () => answer })),
        (s) => Effect.promise(() => s.close())
      )
      const connection = yield* McpClient.connect({
        url: server.url,
        revisions: ["2025-11-25"],
        policy: { call: { timeout: 400 }, task: { minPollInterval: 5, maxPollInterval: 20 } }
      })
      let calls = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(hostileTask, async (generated) => {
            answer = generated
            const started = Date.now()
            const outcome = await Effect.runPromise(Effect.either(connection.callTool("job")))
            calls++
            expect(server.toolCalls("job")).toBe(calls)
            // The deadline, with room for a busy machine: never an unbounded wait.
            expect(Date.now() - started).toBeLessThan(5_000)
            if (Either.isLeft(outcome)) {
              expect(McpConnectionError.Tag.literals).toContain(outcome.left._tag)
              expect(JSON.stringify(outcome.left)).not.toContain("canary.example")
              expect(String(outcome.left)).not.toContain("canary.example")
            }
          }),
          { numRuns: 60 }
        )
      )
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)), 120_000)
})
