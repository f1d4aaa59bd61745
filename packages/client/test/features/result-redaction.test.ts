/**
 * A call's result cleared of the secrets a server echoes (`redact: true`, docs/DESIGN.md, "AI
 * toolkits"), against real loopback servers of the testkit: a connection's own secrets, a
 * catalog's of every server it connected, a refused option that sends nothing. The bounds of
 * the redaction itself (steps, deadline, interruption) are `unit/redactValue.test.ts`'s.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Effect, Layer, Stream } from "effect"
import { Authorization, McpCatalog, McpClient, McpServers } from "../../src/index.js"
import { failureOf, server } from "../support/harness.js"

const platform = Layer.mergeAll(
  FetchHttpClient.layer,
  NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer)),
  Authorization.layerDefaults
)

const ALPHA_KEY = "alpha-key-CANARY-6d1f3e"
const BETA_KEY = "beta-key-CANARY-90ab7c"

const echoed = (result: { readonly content: ReadonlyArray<unknown> }) => (result.content[0] as { readonly text: string }).text

describe("result redaction", () => {
  it.scopedLive("redact: true clears the connection's secrets from what the server echoes; without it the result is the server's", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url, headers: { "x-api-key": ALPHA_KEY } })
      const text = `key=${ALPHA_KEY} encoded=${encodeURIComponent(ALPHA_KEY)} split=${Array.from(ALPHA_KEY).join("\u0000")}`
      expect(echoed(yield* connection.callTool("echo", { text }, { redact: true }))).toBe("key=[redacted] encoded=[redacted] split=[redacted]")
      expect(echoed(yield* connection.callTool("echo", { text }))).toBe(text)
      const events = yield* Stream.runCollect(connection.callToolStream("echo", { text: ALPHA_KEY }, { redact: true }))
      expect(Chunk.toReadonlyArray(events)).toMatchObject([{ _tag: "Result", result: { content: [{ type: "text", text: "[redacted]" }] } }])
      expect(srv.rpcCalls("tools/call")).toBe(3)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("a redact option that is not a boolean is refused before anything is sent", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const connection = yield* McpClient.connect({ url: srv.url })
      const { error } = yield* failureOf(connection.callTool("echo", { text: "x" }, { redact: "yes" as unknown as boolean }))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "redact", outcome: "not-sent" })
      expect(srv.rpcCalls("tools/call")).toBe(0)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("a catalog's call clears the secrets of every server it connected, not only its own server's", () =>
    Effect.gen(function*() {
      const alpha = yield* server()
      const beta = yield* server()
      const context = yield* Layer.build(
        McpServers.layer({
          servers: { alpha: { url: alpha.url, headers: { "x-api-key": ALPHA_KEY } }, beta: { url: beta.url, headers: { "x-api-key": BETA_KEY } } }
        }).pipe(Layer.provide(platform))
      )
      const catalog = yield* McpCatalog.fromServers(Context.get(context, McpServers.McpServers))
      // The listing connects both.
      expect((yield* catalog.listing).failures).toEqual([])
      const text = `${ALPHA_KEY} ${BETA_KEY}`
      expect(echoed(yield* catalog.callTool("alpha__echo", { text }, { redact: true }))).toBe("[redacted] [redacted]")
      expect(echoed(yield* catalog.callTool("alpha__echo", { text }))).toBe(text)
      expect(catalog.redact(text)).toBe("[redacted] [redacted]")
    }))
})
