// A 2025-11-25 stdio server for the URL elicitation tests: `server/discover` is refused -32601
// (as 2025 SDK servers do), `initialize` answered, one tool listed. `tools/call` of `connect`
// sends a URL-mode `elicitation/create`, then, once the client replied, says the elicitation is
// complete (after an unknown id's completion) and answers with the client's reply; of `gated`,
// refuses -32042 the first time, naming one elicitation, and answers after.
import * as readline from "node:readline"

/** @param {unknown} message */
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)
/** @type {Map<string, unknown>} */
const pending = new Map()
let gated = 0
let nextId = 0

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line)
  if (message.method === undefined && pending.has(message.id)) {
    const call = pending.get(message.id)
    pending.delete(message.id)
    send({ jsonrpc: "2.0", method: "notifications/elicitation/complete", params: { elicitationId: "unknown" } })
    send({ jsonrpc: "2.0", method: "notifications/elicitation/complete", params: { elicitationId: "stdio-e-1" } })
    send({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: JSON.stringify(message.result ?? message.error) }] } })
    return
  }
  if (message.id === undefined) return
  switch (message.method) {
    case "server/discover":
      return send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
    case "initialize":
      return send({
        jsonrpc: "2.0",
        id: message.id,
        result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "url-stdio", version: "1" } }
      })
    case "tools/list":
      return send({
        jsonrpc: "2.0",
        id: message.id,
        result: { tools: [{ name: "connect", inputSchema: { type: "object" } }, { name: "gated", inputSchema: { type: "object" } }] }
      })
    case "tools/call": {
      if (message.params.name === "gated") {
        if (gated++ === 0) {
          return send({
            jsonrpc: "2.0",
            id: message.id,
            error: {
              code: -32042,
              message: "Authorize at https://auth.example.org/start first",
              data: { elicitations: [{ mode: "url", elicitationId: "stdio-gate", url: "https://auth.example.org/start", message: "Authorize" }] }
            }
          })
        }
        return send({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "through" }] } })
      }
      const id = `srv-${++nextId}`
      pending.set(id, message.id)
      return send({
        jsonrpc: "2.0",
        id,
        method: "elicitation/create",
        params: { mode: "url", elicitationId: "stdio-e-1", url: "https://auth.example.org/connect?x=1", message: "Connect over stdio" }
      })
    }
    default:
      return send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
  }
})
