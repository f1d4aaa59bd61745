/**
 * URL-mode elicitation in the stateless era (2026-07-28) over HTTP, against a raw loopback
 * server: a URL elicitation in an `input_required` round reaches the handler (no `elicitationId`
 * in this revision), its action goes back in `inputResponses` with the `requestState` echoed; a
 * hostile URL is a typed `ProtocolViolation` (`invalid-elicitation`) and no second round is
 * sent; a URL request to a client that declared only form mode is `undeclared-capability`. Over
 * stdio: test/transport/stdio-url-elicitation.test.ts; against server-everything:
 * test/interop/url-elicitation.test.ts.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ClientHandlers, McpClient } from "../../src/index.js"
import { json, rawHttpServer, type RawRequest } from "../support/rawMcpServer.js"

const META_VERSION = "io.modelcontextprotocol/protocolVersion"
const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

/**
 * A stateless server: `server/discover`, `tools/list` (one tool, `connect`), and `tools/call`
 * answering `input_required` with `inputRequest` (and a request state) until the retry carries
 * `inputResponses`, then a result echoing them.
 */
const statelessServer = (inputRequest: Record<string, unknown>) =>
  Effect.map(
    rawHttpServer((_req, res, request) => {
      const message = request.message
      const result = (body: unknown) => json(res, { jsonrpc: "2.0", id: message.id, result: body })
      switch (message?.method) {
        case "server/discover":
          return result({
            supportedVersions: ["2026-07-28"],
            capabilities: { tools: {} },
            _meta: { "io.modelcontextprotocol/serverInfo": { name: "raw-stateless", version: "1" } }
          })
        case "tools/list":
          return result({ tools: [{ name: "connect", inputSchema: { type: "object" } }] })
        case "tools/call": {
          const responses = message.params?.inputResponses
          if (responses === undefined) {
            return result({ resultType: "input_required", inputRequests: { link: inputRequest }, requestState: "state-1" })
          }
          return result({
            resultType: "complete",
            content: [{ type: "text", text: JSON.stringify({ responses, state: message.params.requestState }) }]
          })
        }
        default:
          return json(res, { jsonrpc: "2.0", id: message?.id ?? null, error: { code: -32601, message: "Method not found" } })
      }
    }),
    (server) => ({
      url: `${server.origin}/mcp`,
      calls: () => server.received.filter((r: RawRequest) => r.rpcMethod === "tools/call")
    })
  )

const URL_INPUT = { method: "elicitation/create", params: { mode: "url", url: "https://auth.example.net/consent", message: "Consent" } }

const httpTest = (name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(FetchHttpClient.layer)) as Effect.Effect<void, unknown, never>, timeout)

describe("URL elicitation, stateless era (input_required)", () => {
  httpTest("reaches the handler; the action goes back with the request state; the capability is in every _meta", () =>
    Effect.gen(function*() {
      const server = yield* statelessServer(URL_INPUT)
      const seen: Array<ClientHandlers.UrlElicitation> = []
      const connection = yield* McpClient.connect({
        url: server.url,
        handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request), { action: "accept" as const })) }
      })
      expect(connection.protocolVersion).toBe("2026-07-28")
      const result = yield* connection.callTool("connect")
      expect(seen).toEqual([{
        mode: "url",
        message: "Consent",
        url: "https://auth.example.net/consent",
        host: "auth.example.net",
        punycode: false,
        elicitationId: undefined
      }])
      expect(JSON.parse((result.content[0] as unknown as { text: string }).text)).toEqual({ responses: { link: { action: "accept" } }, state: "state-1" })
      const calls = server.calls()
      expect(calls).toHaveLength(2)
      for (const call of calls) {
        expect(call.message.params._meta[META_VERSION]).toBe("2026-07-28")
        expect(call.message.params._meta[META_CAPABILITIES]).toEqual({
          elicitation: { url: {} },
          extensions: { "io.modelcontextprotocol/skills": {}, "io.modelcontextprotocol/tasks": {} }
        })
      }
    }))

  httpTest("a hostile URL is a typed ProtocolViolation, and no second round is sent; an undeclared mode too", () =>
    Effect.gen(function*() {
      for (const url of ["javascript:alert(1)", "https://u:p@auth.example.net/", "http://auth.example.net/", "file:///etc/shadow"]) {
        const server = yield* statelessServer({ ...URL_INPUT, params: { ...URL_INPUT.params, url } })
        let asked = 0
        const connection = yield* McpClient.connect({
          url: server.url,
          handlers: { elicitationUrl: () => Effect.sync(() => (asked++, { action: "accept" as const })) }
        })
        const error = yield* Effect.flip(connection.callTool("connect"))
        expect(error).toMatchObject({
          _tag: "ProtocolViolation",
          reason: "invalid-elicitation",
          capability: "elicitation",
          stage: "call",
          outcome: "not-applied",
          retryable: false
        })
        expect(JSON.stringify(error)).not.toContain("auth.example.net")
        expect(error.message).not.toContain(url)
        expect(asked).toBe(0)
        expect(server.calls()).toHaveLength(1)
      }
      const formOnly = yield* statelessServer(URL_INPUT)
      const connection = yield* McpClient.connect({ url: formOnly.url, handlers: { elicitation: () => Effect.succeed({ action: "accept" }) } })
      expect(yield* Effect.flip(connection.callTool("connect"))).toMatchObject({
        _tag: "ProtocolViolation",
        reason: "undeclared-capability",
        capability: "elicitation",
        outcome: "not-applied"
      })
      expect(formOnly.calls()).toHaveLength(1)
    }))
})
