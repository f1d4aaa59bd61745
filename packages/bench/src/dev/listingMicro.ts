/**
 * Dev micro-measurement: `listAllTools` over an in-process session that answers one page of the
 * bench server's 50 tools (no I/O), µs per listing. `tsx --conditions=@phasebound/source src/dev/listingMicro.ts`
 */
import { Effect } from "effect"
import { listAllTools } from "../../../client/src/internal/listing.js"
import { decodeHttp } from "../../../client/src/internal/options.js"

const tools = [
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      $schema: "http://json-schema.org/draft-07/schema#"
    }
  },
  ...Array.from({ length: 49 }, (_, i) => ({
    name: `tool-${i}`,
    description: `Generated tool number ${i}`,
    inputSchema: { type: "object", properties: { query: { type: "string" }, limit: { type: "number" } }, $schema: "http://json-schema.org/draft-07/schema#" }
  }))
]
const text = JSON.stringify({ tools })
const session: any = {
  era: "handshake",
  capabilities: { tools: { listChanged: true } },
  admits: () => true,
  request: () => Effect.sync(() => ({ result: JSON.parse(text), bytes: text.length, nodes: 500, headers: {} }))
}
const policy = Effect.runSync(decodeHttp({ url: "http://127.0.0.1:1/mcp" })).policy
for (let round = 0; round < 5; round++) {
  const n = 2000
  const t = performance.now()
  for (let i = 0; i < n; i++) Effect.runSync(listAllTools(session, policy, () => {}))
  console.log(`listAllTools, 50 tools: ${((performance.now() - t) / n * 1000).toFixed(1)} µs`)
}
