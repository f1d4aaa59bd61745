/**
 * URL-mode elicitation over stdio (2025-11-25), against a child process
 * (support/children/url-elicitation-stdio.mjs): the request on stdout reaches the handler, its
 * completion (after an unknown id's) reaches `awaitElicitation`, a -32042 is
 * `UrlElicitationRequired` with its elicitation, and the call retried goes through.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import { McpClient, McpConnectionError } from "../../src/index.js"

const stdioServer = fileURLToPath(new URL("../support/children/url-elicitation-stdio.mjs", import.meta.url))
const stdioPlatform = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

describe("URL elicitation over stdio (2025-11-25)", () => {
  it.scopedLive("the request reaches the handler; its completion is awaited; -32042 is UrlElicitationRequired", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const connection = yield* McpClient.connectStdio({
        command: process.execPath,
        args: [stdioServer],
        revisions: ["2025-11-25"],
        handlers: { elicitationUrl: (request) => Effect.sync(() => (seen.push(request.url), { action: "decline" as const })) }
      })
      const result = yield* connection.callTool("connect")
      expect(seen).toEqual(["https://auth.example.org/connect?x=1"])
      expect(JSON.parse((result.content[0] as unknown as { text: string }).text)).toEqual({ action: "decline" })
      // The completion came before the answer, on the same stdout: it was expected (the handler saw its id).
      yield* connection.awaitElicitation("stdio-e-1", { timeout: "5 seconds" })

      const refused = yield* Effect.flip(connection.callTool("gated"))
      expect(refused).toBeInstanceOf(McpConnectionError.UrlElicitationRequired)
      expect(McpConnectionError.urlElicitationsOf(refused).map(({ elicitationId, url }) => ({ elicitationId, url }))).toEqual([
        { elicitationId: "stdio-gate", url: "https://auth.example.org/start" }
      ])
      expect(refused.remoteMessage).toBe("Authorize at [url] first")
      expect(JSON.stringify(refused)).not.toContain("example.org")
      expect((yield* connection.callTool("gated")).content).toEqual([{ type: "text", text: "through" }])
    }).pipe(Effect.provide(stdioPlatform)), 30_000)
})
