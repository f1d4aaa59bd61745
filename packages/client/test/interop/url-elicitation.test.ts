/**
 * URL-mode elicitation against server-everything (`trigger-url-elicitation`, registered only for
 * a client that declares the `url` mode): its request path reaches the handler; its -32042
 * error path is `UrlElicitationRequired` with the prerequisite elicitation, and the call retried
 * goes through.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ClientHandlers, McpClient, McpConnectionError } from "../../src/index.js"
import { startEverythingServer } from "../support/everythingServer.js"

const httpTest = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(FetchHttpClient.layer)) as Effect.Effect<void, unknown, never>, timeout)

describe("URL elicitation, interop: server-everything", () => {
  httpTest(
    "trigger-url-elicitation: the request path reaches the handler; the error path is UrlElicitationRequired, then retried",
    () =>
      Effect.gen(function*() {
        const everything = yield* Effect.acquireRelease(Effect.promise(() => startEverythingServer("streamableHttp")), (s) => Effect.promise(() => s.close()))
        const seen: Array<ClientHandlers.UrlElicitation> = []
        const connection = yield* McpClient.connect({
          url: everything.url,
          handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request), { action: "accept" as const })) }
        })
        expect(connection.tools.map((tool) => tool.name)).toContain("trigger-url-elicitation")
        const args = { url: "https://flow.example.com/start", message: "Open the flow", elicitationId: "everything-1" }
        const result = yield* connection.callTool("trigger-url-elicitation", args)
        expect(seen).toMatchObject([{ mode: "url", url: "https://flow.example.com/start", host: "flow.example.com", elicitationId: "everything-1" }])
        expect(JSON.stringify(result.content)).toContain("completed the URL elicitation")

        const errorArgs = { ...args, elicitationId: "everything-2", errorPath: true }
        const refused = yield* Effect.flip(connection.callTool("trigger-url-elicitation", errorArgs))
        expect(refused).toMatchObject({ _tag: "UrlElicitationRequired", code: -32042, outcome: "not-applied", retryable: true })
        const [prerequisite] = McpConnectionError.urlElicitationsOf(refused)
        expect(prerequisite).toMatchObject({ mode: "url", url: "https://modelcontextprotocol.io/", host: "modelcontextprotocol.io" })
        expect(JSON.stringify(McpConnectionError.toRecord(refused))).not.toContain("modelcontextprotocol.io")
        // The user completed it (the server sends no completion here): the same call again goes through.
        const retried = yield* connection.callTool("trigger-url-elicitation", errorArgs)
        expect(JSON.stringify(retried.content)).toContain("completed the URL elicitation")
        expect(seen).toHaveLength(2)
      }),
    60_000
  )
})
