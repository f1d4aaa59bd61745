/**
 * URL-mode elicitation against real peers:
 *
 * - server-everything (`trigger-url-elicitation`, registered only for a client that declares the
 *   `url` mode): its request path reaches the handler; its -32042 error path is
 *   `UrlElicitationRequired` with the prerequisite elicitation, and the call retried goes through;
 * - the SDK v2 server in the 2026-07-28 revision (`inputRequired.elicitUrl`, a multi round-trip
 *   tool): the URL reaches the handler, the action goes back, the tool completes.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ClientHandlers, McpClient, McpConnectionError } from "../../src/index.js"
import { createMcpHandler, inputRequired, McpServer } from "@modelcontextprotocol/server"
import { startEverythingServer } from "../support/everythingServer.js"
import { serveWebHandler } from "../support/webHandlerServer.js"

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

describe("URL elicitation, interop: the SDK v2 server (2026-07-28)", () => {
  httpTest("inputRequired.elicitUrl: the URL reaches the handler, the action goes back, the tool completes", () =>
    Effect.gen(function*() {
      const makeServer = () => {
        const server = new McpServer({ name: "sdk-v2-url", version: "2.4.0" })
        server.registerTool("connect", { description: "Needs the user to open a URL" }, (ctx) => {
          const answer = ctx.mcpReq.inputResponses?.["link"] as { readonly action?: string } | undefined
          if (answer === undefined) {
            return inputRequired({
              inputRequests: { link: inputRequired.elicitUrl({ url: "https://sdk.example.org/connect?step=1", message: "Connect to SDK" }) },
              requestState: "round-1"
            })
          }
          return { content: [{ type: "text", text: `action ${answer.action}` }] }
        })
        return server
      }
      const handler = createMcpHandler(() => makeServer(), { legacy: "reject", responseMode: "json" })
      const web = yield* Effect.acquireRelease(
        Effect.promise(() => serveWebHandler((request) => handler.fetch(request))),
        (served) => Effect.promise(() => served.close(() => handler.close()))
      )
      const seen: Array<ClientHandlers.UrlElicitation> = []
      const connection = yield* McpClient.connect({
        url: `http://127.0.0.1:${web.port}/mcp`,
        handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request), { action: "accept" as const })) }
      })
      expect(connection.protocolVersion).toBe("2026-07-28")
      const result = yield* connection.callTool("connect")
      expect(result, JSON.stringify(result)).toMatchObject({ content: [{ type: "text", text: "action accept" }] })
      expect(seen).toEqual([{
        mode: "url",
        message: "Connect to SDK",
        url: "https://sdk.example.org/connect?step=1",
        host: "sdk.example.org",
        punycode: false,
        elicitationId: undefined
      }])
    }))
})
