// A small server on the official SDK's StdioServerTransport (@modelcontextprotocol/sdk 1.32.2),
// runnable by node and bun as it is.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

let counter = 0
const server = new McpServer({ name: "official-sdk-stdio-peer", version: "1.32.2" })
server.registerTool("add", { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
  content: [{ type: "text", text: String(a + b) }]
}))
server.registerTool("increment", {}, () => ({ content: [{ type: "text", text: String(++counter) }] }))
console.error("official stdio peer ready")
await server.connect(new StdioServerTransport())
