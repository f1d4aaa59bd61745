/**
 * Redirects are not followed (docs/GUIDE.md, "Decisions"): a server answering 307 to
 * another origin gets an `UpstreamFailure` with the 307, and the other origin receives nothing:
 * neither the request nor its credentials. Through each HTTP client, on real loopback servers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as http from "node:http"
import { McpClient, McpConnectionError } from "../../src/index.js"
import { httpClients } from "../support/harness.js"
import { rawHttpServer } from "../support/rawMcpServer.js"

/** A loopback server (support/rawMcpServer.ts) that records what it receives and answers with `answer`. */
const listen = (answer: (res: http.ServerResponse) => void) =>
  Effect.map(rawHttpServer((_, res) => answer(res)), (server) => ({ ...server, url: `${server.origin}/mcp` }))

describe.each(httpClients)("redirects through %s", (_, layer) => {
  it.scopedLive("a 307 to another origin is a failure with its status; the other origin receives nothing", () =>
    Effect.gen(function*() {
      const elsewhere = yield* listen((res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
      const redirecting = yield* listen((res) => res.writeHead(307, { location: elsewhere.url }).end())
      const error = yield* Effect.flip(
        McpClient.connect({
          url: redirecting.url,
          transport: "streamable-http",
          headers: { authorization: "Bearer secret-token" }
        })
      )
      // The first POST (the stateless probe) is answered 307: never followed, never a reason to fall back.
      expect(error).toMatchObject({ _tag: "UpstreamFailure", status: 307, stage: "discover" })
      expect(redirecting.received).toHaveLength(1)
      expect(redirecting.received[0]!.headers.authorization).toBe("Bearer secret-token")
      expect(elsewhere.received).toEqual([])
      expect(JSON.stringify(McpConnectionError.toRecord(error))).not.toContain("secret-token")
    }).pipe(Effect.provide(layer)))
})
