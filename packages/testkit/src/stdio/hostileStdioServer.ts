/**
 * A stdio MCP server whose answers come from a script file, for property-based tests that
 * generate hostile answers (the HTTP counterpart is HostileServer.ts). Bundled by esbuild into
 * hostile-stdio-server.mjs (only `node:` imports), so that it runs under Node and Bun without a
 * loader (see ../stdioBundle.ts).
 *
 * The script is the JSON file named by the environment variable PHASEBOUND_HOSTILE_SCRIPT:
 *
 *   { "era": "stateless" | "handshake",
 *     "log": "/path/of/arrivals.jsonl",            (optional)
 *     "answers": { "<method>": [ Answer, ... ] } }  (optional)
 *
 * Each request of a method takes the next Answer of its list (the last one is repeated); a
 * method with no list gets the era's honest answer (as HostileServer.ts gives it). An Answer:
 *
 *   { "text": "..." }         written to stdout as is (`__ID__` becomes the request's id, as
 *                              JSON); it carries its own line ends, or none
 *   { "base64": "..." }       raw bytes written as they are
 *   "chunkSize": n            written n bytes at a time, an event-loop turn between writes
 *   "then": "exit"            exits (code 3) once written; "silent" without writing anything
 *   "silent": true            nothing is written: the request is never answered
 *
 * Every message received appends one JSON line to `log` (synchronously, before it is answered):
 * `{ "method", "id", "nonce", "effectIdentity" }`, so a test can count arrivals after the child
 * is gone. Non-JSON input lines are ignored.
 */
import { appendFileSync, readFileSync } from "node:fs"
import { isRecord } from "../jsonrpc.js"
import type { HostileStdioAnswer } from "../HostileStdio.js"

const MODERN = "2026-07-28"
const HANDSHAKE = "2025-11-25"
const SERVER_INFO = { name: "phasebound-hostile-stdio", version: "0.1.0" }
const EFFECT_IDENTITY_KEY = "io.phasebound/effect-identity"

const scriptPath = process.env["PHASEBOUND_HOSTILE_SCRIPT"]
if (scriptPath === undefined) {
  process.stderr.write("hostile-stdio-server: PHASEBOUND_HOSTILE_SCRIPT is not set\n")
  process.exit(2)
}
const script = JSON.parse(readFileSync(scriptPath, "utf8")) as {
  readonly era?: string
  readonly log?: string
  readonly answers?: Readonly<Record<string, ReadonlyArray<HostileStdioAnswer>>>
}
const era = script.era === "handshake" ? "handshake" : "stateless"
const answers = script.answers ?? {}
const taken = new Map<string, number>()

const line = (message: unknown): string => JSON.stringify(message) + "\n"

const normal = (method: string, id: unknown): string => {
  const complete = era === "stateless" ? { resultType: "complete" } : {}
  const result = (value: unknown) => line({ jsonrpc: "2.0", id, result: value })
  const error = (code: number, message: string, data?: unknown) =>
    line({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } })
  switch (method) {
    case "server/discover":
      return era === "stateless"
        ? result({ ...complete, supportedVersions: [MODERN], capabilities: { tools: {} }, _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO } })
        : error(-32601, "Method not found")
    case "initialize":
      return era === "stateless"
        ? error(-32022, "Unsupported protocol version", { supported: [MODERN], requested: "" })
        : result({ protocolVersion: HANDSHAKE, capabilities: { tools: {} }, serverInfo: SERVER_INFO })
    case "tools/list":
      return result({ ...complete, tools: [{ name: "echo", inputSchema: { type: "object" } }] })
    case "tools/call":
      return result({ ...complete, content: [{ type: "text", text: "ok" }] })
    default:
      return error(-32601, "Method not found")
  }
}

const next = (method: string): HostileStdioAnswer | undefined => {
  const list = answers[method]
  if (!Array.isArray(list) || list.length === 0) return undefined
  const index = taken.get(method) ?? 0
  taken.set(method, index + 1)
  return list[Math.min(index, list.length - 1)]
}

// Writes go out one after the other, in the order the requests came.
let queue: Promise<void> = Promise.resolve()
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

const write = (bytes: Uint8Array | string, chunkSize?: number): Promise<void> =>
  new Promise<void>((resolve) => {
    if (process.stdout.write(bytes)) resolve()
    else process.stdout.once("drain", () => resolve())
  }).then(() => (chunkSize === undefined ? undefined : turn()))

const play = async (answer: HostileStdioAnswer, id: unknown): Promise<void> => {
  if (answer.silent === true) return
  const bytes = answer.base64 !== undefined
    ? Buffer.from(answer.base64, "base64")
    : Buffer.from(String(answer.text ?? "").split("__ID__").join(JSON.stringify(id ?? null)), "utf8")
  const size = answer.chunkSize !== undefined && Number.isSafeInteger(answer.chunkSize) && answer.chunkSize > 0 ? answer.chunkSize : undefined
  for (let offset = 0; offset < bytes.length; offset += size ?? bytes.length) {
    await write(bytes.subarray(offset, offset + (size ?? bytes.length)), size)
  }
  if (answer.then === "exit") process.exit(3)
}

const receive = (message: unknown): void => {
  if (!isRecord(message)) return
  const method = typeof message["method"] === "string" ? message["method"] : undefined
  const id = message["id"]
  if (script.log !== undefined) {
    const params = isRecord(message["params"]) ? message["params"] : {}
    const args = isRecord(params["arguments"]) ? params["arguments"] : {}
    const meta = isRecord(params["_meta"]) ? params["_meta"] : {}
    appendFileSync(script.log, JSON.stringify({ method: method ?? "#response", id, nonce: args["nonce"], effectIdentity: meta[EFFECT_IDENTITY_KEY] }) + "\n")
  }
  if (method === undefined || id === undefined) return // a notification or a reply: nothing to answer
  const answer = next(method)
  queue = queue.then(() => (answer === undefined ? write(normal(method, id)) : play(answer, id)))
}

let buffered = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk: string) => {
  buffered += chunk
  let end
  while ((end = buffered.indexOf("\n")) >= 0) {
    const text = buffered.slice(0, end)
    buffered = buffered.slice(end + 1)
    try {
      receive(JSON.parse(text))
    } catch {
      // not JSON: ignored
    }
  }
})
process.stdin.on("end", () => {
  void queue.then(() => process.exit(0))
})
process.stdout.on("error", () => process.exit(0))
