/**
 * The human rendering of `tools --catalog` (packages/cli/src/catalog.ts) for what the end-to-end
 * suite shows as JSON: a server that could not be connected, and a tool held back because that
 * server could have its name, each on a line of its own after the table, with the error's
 * message (public fields only).
 */
import { McpConnectionError } from "@phasebound/client"
import { describe, expect, it } from "vitest"
import { renderCatalog } from "../src/catalog.js"

describe("tools --catalog, human output", () => {
  it("the tools that are listed, then held-back names and failed servers, one line each", () => {
    const error = new McpConnectionError.TransportFailure(
      {
        stage: "connect",
        phase: "discovery",
        limits: { timeoutMs: 60_000, maxBytes: 16_777_216 },
        reason: "connection-failed",
        server: "files",
        outcome: "not-sent",
        retryable: true
      },
      new Error("connect ECONNREFUSED http://127.0.0.1:1/mcp")
    )
    const text = renderCatalog({
      tools: [{ name: "read", server: "github", tool: { name: "read", description: "Reads", inputSchema: { type: "object" } } }],
      conflicts: [],
      rejected: [],
      unresolved: [{ name: "search", server: "github", tool: "search", failed: ["files"] }],
      failures: [{ server: "files", error }]
    }, false)
    expect(text.split("\n")).toEqual([
      "TOOL  SERVER  DESCRIPTION",
      "read  github  Reads",
      "unresolved: search (github: \"search\"; files could have it too): not listed",
      `failed: files: TransportFailure: ${error.message}`,
      ""
    ])
    expect(error.message).toContain("server files")
    expect(text).not.toContain("127.0.0.1")
  })
})
