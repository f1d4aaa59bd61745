/**
 * A Promise user's program, for the consumer project of @phasebound/promise (src/consumers.ts):
 * a project whose root has Effect 4 and no other Effect. The qualification type-checks this file
 * there with `tsc --noEmit` against the installed declarations, bundles it with esbuild (every
 * package import left external) and runs it under Node 22 against the testkit server it started
 * (MCP_URL). It connects, lists the tools and calls `add`, the last step through the project's
 * own Effect 4 (its `Effect.promise`), beside the Effect 3 inside the bundle. It prints one JSON
 * line: what it saw.
 */
import { type CallToolResult, connect, type Connection, type Tool } from "@phasebound/promise"
import { Effect } from "effect"

const url = process.env.MCP_URL
if (url === undefined) throw new Error("MCP_URL is not set")

const connection: Connection = await connect({ url, policy: { timeout: 10_000, call: { maxBytes: 1024 * 1024 } } })
try {
  const tools: ReadonlyArray<Tool> = await connection.listTools()
  const result: CallToolResult = await Effect.runPromise(
    Effect.promise(() => connection.callTool("add", { a: 1, b: 2 }, { timeout: "5 seconds" }))
  )
  console.log(JSON.stringify({ protocolVersion: connection.protocolVersion, tools: tools.map((tool) => tool.name), result }))
} finally {
  await connection.close()
}
