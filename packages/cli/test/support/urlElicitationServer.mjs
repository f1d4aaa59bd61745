// A 2025-11-25 stdio server whose one tool, `gated`, is refused -32042 until it has been called
// once: the URL elicitation the CLI shows beside its record. Its message carries an escape
// sequence (which must never reach a terminal) and its error message a URL (never in a record).
import * as readline from "node:readline"

/** @param {unknown} message */
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line)
  if (message.id === undefined || message.method === undefined) return
  switch (message.method) {
    case "initialize":
      return send({
        jsonrpc: "2.0",
        id: message.id,
        result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "gated", version: "1" } }
      })
    case "tools/list":
      return send({ jsonrpc: "2.0", id: message.id, result: { tools: [{ name: "gated", inputSchema: { type: "object" } }] } })
    case "tools/call":
      return send({
        jsonrpc: "2.0",
        id: message.id,
        error: {
          code: -32042,
          message: "Authorize at https://auth.example.org/start?session=abc first",
          data: {
            elicitations: [{
              mode: "url",
              elicitationId: "gate-1",
              url: "https://auth.example.org/start?session=abc",
              message: "Authorize\u001b[2J Example"
            }]
          }
        }
      })
    default:
      return send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
  }
})
