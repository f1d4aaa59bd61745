/**
 * Interop with the MCP TypeScript SDK v2 server (`@modelcontextprotocol/server` 2.4.0), a peer
 * that speaks 2026-07-28: stateless 2026-only, dual-era (2026 plus stateless 2025 fallback) and
 * stateful 2025 (sessions), each answering in JSON and in SSE (test/support/sdkV2Server.ts).
 *
 * The client connects with its defaults (every revision it supports), so these tests also pin
 * the era negotiation: 2026-07-28 wherever the server speaks it, a 2025 revision with
 * `initialize` where it does not.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClient, McpSchema } from "../../src/index.js"
import { type SdkV2Mode, type SdkV2Server, startSdkV2Server } from "../support/sdkV2Server.js"

const modes: ReadonlyArray<readonly [mode: SdkV2Mode, expected: "2026" | "2025"]> = [
  ["stateless", "2026"],
  ["dual", "2026"],
  ["stateful", "2025"]
]

/**
 * Explicit budgets, and every test on the live clock (`it.scopedLive`): a hung peer fails at the
 * client's deadline as a typed error, well inside vitest's timeout. (Under `it.scoped` a
 * TestClock drives the deadlines, and virtual time never reaches them.)
 */
const policy = { discovery: { timeout: 10_000 }, call: { timeout: 5_000 } } as const
const TEST_TIMEOUT = 30_000

const server = (mode: SdkV2Mode, answers: "json" | "sse") =>
  Effect.acquireRelease(
    Effect.promise(() => startSdkV2Server({ mode, answers })),
    (s) => Effect.promise(() => s.close())
  )

/** The JSON-RPC POSTs the server received, with their parsed bodies. */
const posts = (s: SdkV2Server) =>
  s.requests
    .filter((r) => r.method === "POST")
    .map((r) => ({ headers: r.headers, body: JSON.parse(r.body) as { method?: string; params?: Record<string, any> } }))

describe.each(modes)("SDK v2 (2.4.0) server, %s mode", (mode, expected) => {
  describe.each(["json", "sse"] as const)("answering in %s", (answers) => {
    it.scopedLive("negotiates, lists, calls, and does not replay", () =>
      Effect.gen(function*() {
        const peer = yield* server(mode, answers)
        const connection = yield* McpClient.connect({ url: peer.url, policy })
        expect(connection.transport).toBe("streamable-http")
        // The newest revision of the era the server speaks: the client offers its newest.
        expect(connection.protocolVersion).toBe(expected === "2026" ? "2026-07-28" : "2025-11-25")
        expect(connection.tools.map((t) => t.name).sort()).toEqual(["add", "echo", "increment"])
        const sum = yield* connection.callTool("add", { a: 1, b: 2 })
        expect(sum.content).toEqual([{ type: "text", text: "3" }])
        expect((yield* connection.callTool("increment")).content).toEqual([{ type: "text", text: "1" }])
        expect(peer.counter()).toBe(1)
        const echoed = yield* connection.callTool("echo", { text: "héllo 😀" })
        expect(echoed.content).toEqual([{ type: "text", text: "héllo 😀" }])
      }).pipe(Effect.provide(FetchHttpClient.layer)), TEST_TIMEOUT)

    it.scopedLive("speaks the negotiated era on the wire", () =>
      Effect.gen(function*() {
        const peer = yield* server(mode, answers)
        const connection = yield* McpClient.connect({ url: peer.url, policy })
        yield* connection.callTool("add", { a: 1, b: 2 })
        const sent = posts(peer)
        const methods = sent.map((p) => p.body.method)
        if (expected === "2026") {
          // Stateless: no handshake, no session; every request names its revision in the
          // header and in _meta, and says its method (and the tool's name) in headers.
          expect(methods).not.toContain("initialize")
          expect(methods).toContain("tools/call")
          for (const { headers, body } of sent) {
            expect(headers["mcp-session-id"]).toBeUndefined()
            if (body.method === undefined) continue
            expect(headers["mcp-protocol-version"]).toBe("2026-07-28")
            expect(headers["mcp-method"]).toBe(body.method)
            expect(body.params?._meta?.["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28")
            expect(body.params?._meta?.["io.modelcontextprotocol/clientCapabilities"]).toBeTypeOf("object")
            if (body.method === "tools/call") expect(headers["mcp-name"]).toBe(body.params?.name)
          }
        } else {
          // The handshake, then everything in the session at the negotiated revision.
          const first = methods.indexOf("initialize")
          expect(first).toBeGreaterThanOrEqual(0)
          for (const { headers, body } of sent.slice(first + 1)) {
            expect(headers["mcp-session-id"], String(body.method)).toBeDefined()
            expect(headers["mcp-protocol-version"]).toBe(connection.protocolVersion)
          }
        }
      }).pipe(Effect.provide(FetchHttpClient.layer)), TEST_TIMEOUT)
  })
})

// Pinned revisions: what each mode does when the client may speak only one era.
const pinned: ReadonlyArray<readonly [SdkV2Mode, "2026" | "handshake", string]> = [
  ["stateless", "2026", "2026-07-28"],
  ["dual", "2026", "2026-07-28"],
  ["stateful", "2026", "fails at discover"],
  ["stateless", "handshake", "fails at initialize"],
  ["dual", "handshake", "2025"],
  ["stateful", "handshake", "2025"]
]

describe("SDK v2 (2.4.0) server, pinned revisions", () => {
  for (const [mode, era, expected] of pinned) {
    it.scopedLive(`${mode} mode, ${era} revisions only: ${expected}`, () =>
      Effect.gen(function*() {
        const peer = yield* server(mode, "json")
        const revisions = era === "2026" ? ["2026-07-28"] : McpSchema.handshakeRevisions
        const outcome = yield* Effect.either(McpClient.connect({ url: peer.url, revisions, policy }))
        const methods = posts(peer).map((p) => p.body.method)
        if (expected === "2026-07-28" || expected === "2025") {
          if (outcome._tag === "Left") throw outcome.left
          const connection = outcome.right
          expect(connection.protocolVersion).toBe(expected === "2026-07-28" ? "2026-07-28" : "2025-11-25")
          const sum = yield* connection.callTool("add", { a: 1, b: 2 })
          expect(sum.content).toEqual([{ type: "text", text: "3" }])
          // Pinned: the other era's discovery request is never sent.
          expect(methods).not.toContain(era === "2026" ? "initialize" : "server/discover")
          return
        }
        expect(outcome._tag).toBe("Left")
        const error = outcome._tag === "Left" ? outcome.left : undefined
        if (expected === "fails at discover") {
          // A 2025 server refuses the probe; pinned to 2026, nothing falls back to initialize.
          expect(error).toMatchObject({
            _tag: "RemoteRefusal",
            status: 400,
            code: -32000,
            stage: "discover",
            phase: "discovery",
            outcome: "not-applied",
            retryable: false
          })
          expect(methods).toEqual(["server/discover"])
        } else {
          // A 2026-only server refuses initialize with a JSON-RPC error naming its versions:
          // a refusal, not a reason to try legacy HTTP+SSE.
          expect(error).toMatchObject({ _tag: "RemoteRefusal", stage: "initialize", code: -32022 })
          expect(methods).toEqual(["initialize"])
          expect(peer.requests.filter((r) => r.method === "GET")).toEqual([])
        }
      }).pipe(Effect.provide(FetchHttpClient.layer)), TEST_TIMEOUT)
  }
})
