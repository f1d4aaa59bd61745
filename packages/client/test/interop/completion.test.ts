/**
 * Argument completion against real peers no one here wrote (docs/DESIGN.md, "Completion"):
 *
 * - `@modelcontextprotocol/server-everything` (SDK v1 underneath) over Streamable HTTP, legacy
 *   HTTP+SSE and stdio, 2025 revisions: its `completable-prompt` (`department`, then `name`
 *   completed from the department in `context.arguments`), its `resource-prompt`, and its
 *   template `demo://resource/dynamic/text/{resourceId}`;
 * - the SDK v2 server (`@modelcontextprotocol/server` 2.4.0, support/completionSdkV2Server.ts)
 *   in 2026-07-28 and, on the same peer, a 2025 revision, answering in JSON and SSE: a prompt
 *   and a template with two variables, the second completed from the first.
 *
 * Through the Effect API and the Promise API; each completion sent once.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"
import { startCompletionSdkV2Server } from "../support/completionSdkV2Server.js"
import { startEverythingServer } from "../support/everythingServer.js"

const policy = { discovery: { timeout: 15_000 }, call: { timeout: 5_000 } } as const
const TEST_TIMEOUT = 60_000

const require = createRequire(import.meta.url)
const everythingEntry = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js")

/** The completions server-everything gives, whichever transport carries them. */
const everythingCompletions = (connection: McpClient.Connection) =>
  Effect.gen(function*() {
    expect(connection.capabilities).toMatchObject({ completions: {} })
    const prompt = { type: "ref/prompt", name: "completable-prompt" } as const
    const departments = yield* connection.complete({ ref: prompt, argument: { name: "department", value: "S" } })
    expect(departments.completion.values).toEqual(["Sales", "Support"])
    const everyone = yield* connection.complete({ ref: prompt, argument: { name: "department", value: "" } })
    expect(everyone.completion.values).toEqual(["Engineering", "Sales", "Marketing", "Support"])
    // The second argument from the first one's value.
    const engineers = yield* connection.complete({
      ref: prompt,
      argument: { name: "name", value: "" },
      context: { arguments: { department: "Engineering" } }
    })
    expect(engineers.completion.values).toEqual(["Alice", "Bob", "Charlie"])
    const marketing = yield* connection.complete({ ref: prompt, argument: { name: "name", value: "I" }, context: { arguments: { department: "Marketing" } } })
    expect(marketing.completion.values).toEqual(["Iris"])
    // Without the context: nothing to suggest.
    expect((yield* connection.complete({ ref: prompt, argument: { name: "name", value: "" } })).completion.values).toEqual([])

    const types = yield* connection.complete({ ref: { type: "ref/prompt", name: "resource-prompt" }, argument: { name: "resourceType", value: "B" } })
    expect(types.completion.values).toEqual(["Blob"])
    const ids = yield* connection.complete({
      ref: { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
      argument: { name: "resourceId", value: "7" }
    })
    expect(ids.completion.values).toEqual(["7"])
    const observed = yield* connection.observations
    expect(observed.filter((o) => o.operation === "completion/complete").map((o) => o.outcome)).toEqual(Array.from({ length: 7 }, () => "ok"))
  })

describe("server-everything", () => {
  for (const mode of ["streamableHttp", "sse"] as const) {
    it.scopedLive(
      `over ${mode === "sse" ? "legacy HTTP+SSE" : "Streamable HTTP"}: prompt and template arguments, with context arguments`,
      () =>
        Effect.gen(function*() {
          const peer = yield* Effect.acquireRelease(Effect.promise(() => startEverythingServer(mode)), (p) => Effect.promise(() => p.close()))
          const connection = yield* McpClient.connect({ url: peer.url, policy, ...(mode === "sse" ? { transport: "sse" } : {}) })
          yield* everythingCompletions(connection)
        }).pipe(Effect.provide(FetchHttpClient.layer)),
      TEST_TIMEOUT
    )
  }

  it.scopedLive("over stdio", () =>
    Effect.gen(function*() {
      const connection = yield* McpClient.connectStdio({
        command: process.execPath,
        args: [everythingEntry, "stdio"],
        env: { PATH: process.env.PATH ?? "" },
        policy
      })
      yield* everythingCompletions(connection)
    }).pipe(Effect.provide(Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer))), TEST_TIMEOUT)

  it("through the Promise API", async () => {
    const peer = await startEverythingServer("streamableHttp")
    try {
      const connection = await connect({ url: peer.url, policy })
      try {
        const result = await connection.complete({
          ref: { type: "ref/prompt", name: "completable-prompt" },
          argument: { name: "name", value: "" },
          context: { arguments: { department: "Support" } }
        })
        expect(result.completion.values).toEqual(["John", "Kim", "Lee"])
        await expect(connection.complete({ ref: { type: "ref/prompt", name: "no-such-prompt" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
          _tag: "RemoteRefusal",
          stage: "complete"
        })
      } finally {
        await connection.close()
      }
    } finally {
      await peer.close()
    }
  }, TEST_TIMEOUT)
})

describe.each(["json", "sse"] as const)("SDK v2 (2.4.0) server answering in %s", (answers) => {
  for (const revisions of [undefined, ["2025-11-25"]] as const) {
    const era = revisions === undefined ? "2026-07-28" : "2025-11-25"
    it.scopedLive(`${era}: a prompt argument and a template's second variable from the first`, () =>
      Effect.gen(function*() {
        const peer = yield* Effect.acquireRelease(Effect.promise(() => startCompletionSdkV2Server(answers)), (p) => Effect.promise(() => p.close()))
        const connection = yield* McpClient.connect({ url: peer.url, policy, ...(revisions === undefined ? {} : { revisions }) })
        expect(connection.protocolVersion).toBe(era)
        // Declared by the SDK itself, for the completable arguments.
        expect(connection.capabilities).toMatchObject({ completions: {} })
        const review = { type: "ref/prompt", name: "code_review" } as const
        const languages = yield* connection.complete({ ref: review, argument: { name: "language", value: "py" } })
        expect(languages.completion.values).toEqual(["python", "pytorch", "pyside"])
        const frameworks = yield* connection.complete({
          ref: review,
          argument: { name: "framework", value: "fa" },
          context: { arguments: { language: "python" } }
        })
        expect(frameworks.completion.values).toEqual(["fastapi"])
        const repos = yield* connection.complete({
          ref: { type: "ref/resource", uri: "repo://{owner}/{repo}" },
          argument: { name: "repo", value: "" },
          context: { arguments: { owner: "modelcontextprotocol" } }
        })
        expect(repos.completion.values).toEqual(["typescript-sdk", "inspector"])
        const owners = yield* connection.complete({ ref: { type: "ref/resource", uri: "repo://{owner}/{repo}" }, argument: { name: "owner", value: "e" } })
        expect(owners.completion.values).toEqual(["effect"])
        // What reached the SDK's callbacks: the context as given, none when none was given.
        expect(peer.contexts()).toEqual([undefined, { language: "python" }, { owner: "modelcontextprotocol" }, undefined])
        const sent = peer.requests.filter((r) => r.method === "POST" && r.body.includes("\"completion/complete\""))
        expect(sent).toHaveLength(4)
        for (const request of sent) {
          if (era === "2026-07-28") expect(request.headers["mcp-method"]).toBe("completion/complete")
          expect(request.headers["mcp-name"]).toBeUndefined()
        }
      }).pipe(Effect.provide(FetchHttpClient.layer)), TEST_TIMEOUT)
  }
})
