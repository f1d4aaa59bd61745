/**
 * Resources and prompts (docs/DESIGN.md, "Resources and prompts", "Bytes", "Release"), end to
 * end against the testkit servers with `features`, in both eras and over every transport
 * (Streamable HTTP 2025 and 2026-07-28 with JSON and SSE answers, legacy HTTP+SSE, stdio in both
 * eras; every HTTP row through `FetchHttpClient` and undici): listings followed page by page,
 * text and blob reads, a tool's `resource_link` read like any other URI, the era's refusal of an
 * unknown resource, prompts with and without their argument, the call phase's byte ceiling and
 * deadline with their release, inputs refused before any I/O, each request sent once and
 * observed, and the Promise API's methods resolving and rejecting the same way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { McpClient, McpConnectionError, McpSchema } from "../../src/index.js"
import { featureRows, type Row, subscribed } from "../support/featureRows.js"
import { eventually, failureOf } from "../support/harness.js"

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

// `connect` returns once a 2026-07-28 subscription reached the server: counts of what it received are stable.
const { rows } = featureRows(
  [["handshake", "json"], ["handshake", "sse"], ["stateless", "json"], ["stateless", "sse"]],
  { connectWaitsForSubscription: true }
)

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** What the era answers for an unknown resource: -32002 until 2025-11-25, -32602 in 2026-07-28. */
const notFoundCode = (row: Row) => (row.era === "handshake" ? -32002 : -32602)

const operationsOf = (connection: McpClient.Connection) =>
  Effect.map(connection.observations, (all) => all.map((o) => [o.operation, o.stage, o.outcome] as const))

const textOfPrompt = (result: McpSchema.GetPromptResult) => result.messages.map((m) => (m.content as { text?: string }).text ?? "").join("")

/** After a failure: nothing pending, nothing in the background (a 2026 subscription is standing, not pending). */
const expectReleased = (connection: McpClient.Connection) =>
  eventually(() => {
    const diagnostics = Effect.runSync(connection.diagnostics)
    return diagnostics.pending === 0 && diagnostics.background === 0
  }, 10_000)

const scoped = (row: Row, name: string, body: () => Effect.Effect<void, unknown, any>, timeout = 30_000) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(row.layer)) as Effect.Effect<void, unknown, never>, timeout)

const BLOB_BYTES = Array.from({ length: 256 }, (_, i) => i)

// ---------------------------------------------------------------------------------------------
// Every row
// ---------------------------------------------------------------------------------------------

describe.concurrent.each(rows.map((row) => [row.name, row] as const))("resources and prompts, %s", (_, row) => {
  scoped(row, "listings: every page of resources (page size 2), the templates, the prompts; each request once, observed", () =>
    Effect.gen(function*() {
      const live = yield* row.start({ pageSize: 2, resources: 5 })
      const connection = yield* live.connect()
      const resources = yield* connection.listResources()
      expect(resources.map((r) => r.uri)).toEqual([
        "test://docs/1",
        "test://docs/2",
        "test://docs/3",
        "test://docs/4",
        "test://docs/5",
        "test://blob/1"
      ])
      expect(resources[0]).toMatchObject({ name: "doc-1", mimeType: "text/plain" })
      // Six resources, two a page: three requests under the one deadline.
      expect(live.rpcCalls("resources/list")).toBe(3)

      const templates = yield* connection.listResourceTemplates()
      expect(templates).toEqual([{ uriTemplate: "test://docs/{id}", name: "doc", mimeType: "text/plain" }])
      expect(live.rpcCalls("resources/templates/list")).toBe(1)

      const prompts = yield* connection.listPrompts()
      expect(prompts.map((p) => p.name)).toEqual(["greet", "plain"])
      expect(prompts[0]).toMatchObject({ arguments: [{ name: "name", required: true }] })
      expect(live.rpcCalls("prompts/list")).toBe(1)

      const observed = yield* connection.observations
      expect(observed.map((o) => [o.operation, o.stage, o.outcome])).toEqual([
        ["resources/list", "list-resources", "ok"],
        ["resources/templates/list", "list-resource-templates", "ok"],
        ["prompts/list", "list-prompts", "ok"]
      ])
      for (const o of observed) expect(o.bytes).toBeGreaterThan(0)
    }))

  scoped(row, "reads text and blob resources, and the URI of a tool's resource_link; each read sent once", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const text = yield* connection.readResource("test://docs/2")
      expect(text.contents).toEqual([{ uri: "test://docs/2", mimeType: "text/plain", text: "Document 2" }])

      const blob = yield* connection.readResource("test://blob/1")
      expect(blob.contents).toHaveLength(1)
      const content = blob.contents[0] as { uri: string; mimeType?: string; blob: string }
      expect(content).toMatchObject({ uri: "test://blob/1", mimeType: "application/octet-stream" })
      expect([...Buffer.from(content.blob, "base64")]).toEqual(BLOB_BYTES)

      const linked = yield* connection.callTool("link_resource")
      const link = linked.content[0] as { type: string; uri: string }
      expect(link).toMatchObject({ type: "resource_link", uri: "test://docs/1" })
      const read = yield* connection.readResource(link.uri)
      expect(read.contents).toEqual([{ uri: "test://docs/1", mimeType: "text/plain", text: "Document 1" }])

      expect(live.rpcCalls("resources/read")).toBe(3)
      expect((yield* operationsOf(connection)).filter(([op]) => op === "resources/read")).toEqual([
        ["resources/read", "read-resource", "ok"],
        ["resources/read", "read-resource", "ok"],
        ["resources/read", "read-resource", "ok"]
      ])
    }))

  scoped(row, "an unknown resource: RemoteRefusal with the era's code, sent once, observed", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const { error } = yield* failureOf(connection.readResource("test://docs/999"))
      expect(error).toMatchObject({
        _tag: "RemoteRefusal",
        code: notFoundCode(row),
        stage: "read-resource",
        phase: "call",
        outcome: "not-applied",
        retryable: false
      })
      expect(live.rpcCalls("resources/read")).toBe(1)
      expect(yield* operationsOf(connection)).toEqual([["resources/read", "read-resource", "RemoteRefusal"]])
      // The connection goes on.
      expect((yield* connection.readResource("test://docs/1")).contents).toHaveLength(1)
    }))

  scoped(row, "an answer past its ceiling: ByteCeilingExceeded (read-resource, call), released; the next read works", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const { error } = yield* failureOf(connection.readResource("test://big/200000", { maxBytes: 65_536 }))
      expect(error).toMatchObject({
        _tag: "ByteCeilingExceeded",
        stage: "read-resource",
        phase: "call",
        limits: { maxBytes: 65_536 },
        retryable: false
      })
      expect((error as { observedBytes?: number }).observedBytes).toBeGreaterThan(65_536)
      yield* expectReleased(connection)
      expect(live.rpcCalls("resources/read")).toBe(1)
      expect(yield* operationsOf(connection)).toEqual([["resources/read", "read-resource", "ByteCeilingExceeded"]])
      // The same resource under a ceiling that holds it.
      const big = yield* connection.readResource("test://big/200000", { maxBytes: 1_000_000 })
      expect((big.contents[0] as { text: string }).text.length).toBeGreaterThan(0)
      expect(live.rpcCalls("resources/read")).toBe(2)
    }))

  scoped(row, "a read past its deadline: DeadlineExceeded (read-resource, call), never re-sent, released", () =>
    Effect.gen(function*() {
      const live = yield* row.start({ faults: [{ on: "resources/read", kind: "delay", ms: 3_000 }] })
      const connection = yield* live.connect()
      const { elapsedMs, error } = yield* failureOf(connection.readResource("test://docs/1", { timeout: 200 }))
      expect(error).toMatchObject({
        _tag: "DeadlineExceeded",
        stage: "read-resource",
        phase: "call",
        limits: { timeoutMs: 200 },
        outcome: "unknown",
        retryable: false
      })
      expect(elapsedMs).toBeGreaterThanOrEqual(180)
      expect(elapsedMs).toBeLessThan(2_500)
      yield* expectReleased(connection)
      expect(live.rpcCalls("resources/read")).toBe(1)
      expect(yield* operationsOf(connection)).toEqual([["resources/read", "read-resource", "DeadlineExceeded"]])
      // The next read is answered at once (the fault applied once).
      expect((yield* connection.readResource("test://docs/1")).contents).toHaveLength(1)
      expect(live.rpcCalls("resources/read")).toBe(2)
    }))

  scoped(row, "getPrompt with its argument, and without it (RemoteRefusal -32602); each sent once", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const greeting = yield* connection.getPrompt("greet", { name: "Ada" })
      expect(greeting.description).toBe("Greets someone")
      expect(greeting.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada" } }])
      expect(textOfPrompt(yield* connection.getPrompt("plain"))).toBe("A plain prompt")

      const { error } = yield* failureOf(connection.getPrompt("greet"))
      expect(error).toMatchObject({
        _tag: "RemoteRefusal",
        code: -32602,
        stage: "get-prompt",
        phase: "call",
        outcome: "not-applied",
        retryable: false
      })
      expect(live.rpcCalls("prompts/get")).toBe(3)
      expect(yield* operationsOf(connection)).toEqual([
        ["prompts/get", "get-prompt", "ok"],
        ["prompts/get", "get-prompt", "ok"],
        ["prompts/get", "get-prompt", "RemoteRefusal"]
      ])
    }))

  scoped(row, "invalid inputs and budgets are refused before any I/O: InvalidOption naming the option", () =>
    Effect.gen(function*() {
      const live = yield* row.start()
      const connection = yield* live.connect()
      const before = live.received()
      const refused = [
        [connection.readResource(""), "uri", "read-resource"],
        [connection.readResource(42 as never), "uri", "read-resource"],
        [connection.getPrompt("greet", { name: 3 as never }), "arguments", "get-prompt"],
        [connection.getPrompt("", { name: "Ada" }), "name", "get-prompt"],
        [connection.readResource("test://docs/1", { timeout: 0 }), "call.timeout", "read-resource"],
        [connection.listResources({ maxBytes: 1.5 }), "call.maxBytes", "list-resources"],
        [connection.getPrompt("greet", { name: "Ada" }, { timeout: -1 }), "call.timeout", "get-prompt"]
      ] as const
      for (const [effect, option] of refused) {
        const { error } = yield* failureOf(effect as Effect.Effect<unknown, McpConnectionError.McpConnectionError>)
        expect(error, option).toMatchObject({ _tag: "InvalidOption", option, outcome: "not-sent", retryable: false })
      }
      // Nothing reached the server.
      expect(live.received()).toBe(before)
      expect(live.rpcCalls("resources/read")).toBe(0)
      expect(live.rpcCalls("prompts/get")).toBe(0)
    }))

  scoped(row, "the Promise API resolves and rejects the same way", () =>
    Effect.gen(function*() {
      const live = yield* row.start({ pageSize: 2, faults: [{ on: "resources/read", kind: "delay", ms: 3_000 }] })
      const connection = yield* Effect.promise(() => live.promise())
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      yield* subscribed(row.era, live.rpcCalls)()
      yield* Effect.promise(async () => {
        // The first read meets the delay: its own timeout.
        await expect(connection.readResource("test://docs/1", { timeout: 200 })).rejects.toMatchObject({
          _tag: "DeadlineExceeded",
          stage: "read-resource"
        })
        expect((await connection.listResources()).map((r) => r.uri)).toEqual([
          "test://docs/1",
          "test://docs/2",
          "test://docs/3",
          "test://blob/1"
        ])
        expect(await connection.listResourceTemplates()).toHaveLength(1)
        expect((await connection.listPrompts()).map((p) => p.name)).toEqual(["greet", "plain"])
        expect((await connection.readResource("test://docs/3")).contents).toEqual([
          { uri: "test://docs/3", mimeType: "text/plain", text: "Document 3" }
        ])
        expect(textOfPrompt(await connection.getPrompt("greet", { name: "Ada" }))).toBe("Hello, Ada")
        await expect(connection.readResource("test://nowhere")).rejects.toMatchObject({
          _tag: "RemoteRefusal",
          code: notFoundCode(row),
          stage: "read-resource"
        })
        await expect(connection.getPrompt("greet")).rejects.toMatchObject({ _tag: "RemoteRefusal", code: -32602, stage: "get-prompt" })
        await expect(connection.readResource("test://big/200000", { maxBytes: 65_536 })).rejects.toMatchObject({
          _tag: "ByteCeilingExceeded",
          stage: "read-resource",
          phase: "call"
        })
        const before = live.received()
        await expect(connection.readResource("")).rejects.toMatchObject({ _tag: "InvalidOption", option: "uri" })
        await expect(connection.getPrompt("greet", { name: 3 as never })).rejects.toMatchObject({
          _tag: "InvalidOption",
          option: "arguments"
        })
        expect(live.received()).toBe(before)
        // An aborted signal rejects with its reason, and sends nothing.
        const reason = new Error("not wanted")
        await expect(connection.readResource("test://docs/1", { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
        expect(live.received()).toBe(before)
      })
      expect(live.rpcCalls("resources/read")).toBe(4)
      expect(live.rpcCalls("prompts/get")).toBe(2)
    }))
})

// ---------------------------------------------------------------------------------------------
// A session that must be renewed first (Streamable HTTP 2025)
// ---------------------------------------------------------------------------------------------

describe.concurrent.each(rows.filter((row) => row.transport === "streamable-http" && row.era === "handshake").map((r) => [r.name, r] as const))(
  "before any I/O, even when the session must be renewed, %s",
  (_, row) => {
    // "Everything is validated before any I/O" (docs/DESIGN.md, "Phases and budgets"): an input
    // the connection refuses must not first start a new session.

    scoped(row, "an invalid uri or prompt argument does not start a new session", () =>
      Effect.gen(function*() {
        const live = yield* row.start()
        const connection = yield* live.connect()
        live.expireSession!()
        yield* failureOf(connection.listPrompts())
        const before = live.rpcCalls("initialize")
        expect(before).toBe(1)
        const uri = yield* failureOf(connection.readResource(""))
        expect(uri.error).toMatchObject({ _tag: "InvalidOption", option: "uri", outcome: "not-sent" })
        const args = yield* failureOf(connection.getPrompt("greet", { name: 3 as never }))
        expect(args.error).toMatchObject({ _tag: "InvalidOption", option: "arguments", outcome: "not-sent" })
        expect(live.rpcCalls("initialize")).toBe(before)
        // The next valid request starts it.
        expect((yield* connection.readResource("test://docs/1")).contents).toHaveLength(1)
        expect(live.rpcCalls("initialize")).toBe(2)
      }))
  }
)
