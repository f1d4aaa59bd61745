// A minimal stdio MCP server (2025 handshake) for the CLI tests of the server's environment and
// stderr: its tool `env` answers with the environment it was given, as JSON; its tool `args`
// refuses with a JSON-RPC error that quotes the arguments it was started with. Run with
// `--fail-start`, it writes two lines to stderr (the second names $API_KEY's value) and exits 1
// before reading anything.
import { createInterface } from "node:readline"

if (process.argv.includes("--fail-start")) {
  process.stderr.write("starting the server\n")
  process.stderr.write(`fatal: the API key ${process.env.API_KEY ?? "(none)"} was refused \u001b[2J\n`)
  process.exit(1)
}

/** @param {Record<string, unknown>} message */
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)
createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line)
  if (message.id === undefined) return
  switch (message.method) {
    case "initialize":
      return send({
        id: message.id,
        result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "env", version: "1" } }
      })
    case "tools/list":
      return send({
        id: message.id,
        result: { tools: [{ name: "env", inputSchema: { type: "object" } }, { name: "args", inputSchema: { type: "object" } }] }
      })
    case "tools/call":
      if (message.params?.name === "args") {
        return send({ id: message.id, error: { code: -32000, message: `refused, started with: ${process.argv.slice(2).join(" ")}` } })
      }
      return send({ id: message.id, result: { content: [{ type: "text", text: JSON.stringify(process.env) }] } })
    default:
      return send({ id: message.id, error: { code: -32601, message: "Method not found" } })
  }
})
