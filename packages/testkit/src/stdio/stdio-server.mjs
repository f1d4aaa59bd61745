#!/usr/bin/env node
// @ts-check
/**
 * phasebound testkit: a scriptable MCP server over stdio, normal by default and hostile on
 * request. A client spawns it as a child process and speaks newline-delimited JSON-RPC on
 * stdin/stdout; stderr is its log.
 *
 * Plain JavaScript with only `node:` imports, so that it runs as is under Node 20 and Bun, with
 * no TypeScript loader. It duplicates the small MCP behaviour of ../mcp.ts (initialize, ping,
 * tools/list with pagination, tools/call for add, echo, increment and generated tools) and the
 * padding of ../payload.ts. The typed, test-facing side is ../StdioServer.ts
 * (`stdioServerCommand`, `makeStdioFixture`), which builds the arguments below.
 *
 * Arguments (each flag takes one value):
 *   --counter-file PATH      the `increment` counter, rewritten synchronously before each answer
 *   --log-file PATH          one line per received message, appended synchronously on arrival:
 *                            its method, or "#response", "#invalid-json", "#invalid-utf8",
 *                            "#not-jsonrpc", "#batch"
 *   --protocol-version V     what initialize answers (default: the client's version if supported)
 *   --extra-tools N          generated tools "tool-0".."tool-N-1"
 *   --page-size N            tools/list page size (nextCursor pagination)
 *   --schema-pad-bytes N     pads the `add` tool's input schema description to N bytes
 *   --fault JSON             a scripted behaviour (repeatable), see ../StdioServer.ts
 *
 * Per-method faults (`on`, `times`: default 1; null, which is what JSON.stringify makes of
 * Infinity, means always) replace only the answer: the request's side effects (the counter) have
 * already happened. On a notification only `exit` applies.
 */
import { appendFileSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"

const SUPPORTED_PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
const DEFAULT_PROTOCOL_VERSION = "2025-06-18"
const SERVER_INFO = { name: "phasebound-testkit", version: "0.1.0" }

const ErrorCode = { ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, InternalError: -32603 }

const DEFAULT_CHUNK_SIZE = 7
const DEFAULT_EXIT_CODE = 3
const DEFAULT_BANNER = "Server starting... ready"
const NEVER_ENDING_CHUNK = Buffer.alloc(64 * 1024, 0x61) // "a"
/** Exit code for a bad command line (a testkit bug, not a scripted fault). */
const USAGE_EXIT_CODE = 64

const METHOD_FAULTS = new Set([
  "exact-size", "never-ending-line", "exit", "never-answer", "invalid-utf8", "invalid-json",
  "not-jsonrpc", "wrong-id", "delay", "jsonrpc-error"
])
const GLOBAL_FAULTS = new Set(["banner", "stderr-flood", "ignore-sigterm", "linger-after-stdin-close", "write-pid"])

// ---------------------------------------------------------------------------------------------
// Logging (stderr) and configuration

/** @param {string} text */
const log = (text) => {
  process.stderr.write(`[phasebound-testkit stdio ${process.pid}] ${text}\n`)
}

/** @param {string} text @returns {never} */
const usage = (text) => {
  log(`usage error: ${text}`)
  process.exit(USAGE_EXIT_CODE)
}

/** @param {string | undefined} value @param {string} flag */
const intArg = (value, flag) => {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 0) usage(`${flag} needs a non-negative integer`)
  return n
}

/** @param {unknown} value */
const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

const readConfig = () => {
  let parsed
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: {
        "counter-file": { type: "string" },
        "log-file": { type: "string" },
        "protocol-version": { type: "string" },
        "extra-tools": { type: "string" },
        "page-size": { type: "string" },
        "schema-pad-bytes": { type: "string" },
        fault: { type: "string", multiple: true }
      },
      strict: true,
      allowPositionals: false
    })
  } catch (error) {
    usage(error instanceof Error ? error.message : String(error))
  }
  const values = parsed.values
  /** @type {Array<Record<string, any>>} */
  const faults = []
  for (const text of values.fault ?? []) {
    let fault
    try {
      fault = JSON.parse(text)
    } catch {
      usage(`--fault is not JSON: ${text}`)
    }
    if (!isRecord(fault) || typeof fault.kind !== "string") usage(`--fault needs a "kind": ${text}`)
    if (METHOD_FAULTS.has(fault.kind)) {
      if (typeof fault.on !== "string") usage(`fault ${fault.kind} needs "on" (a JSON-RPC method)`)
    } else if (!GLOBAL_FAULTS.has(fault.kind)) {
      usage(`unknown fault kind ${fault.kind}`)
    }
    faults.push(fault)
  }
  const pageSize = intArg(values["page-size"], "--page-size")
  return {
    counterFile: values["counter-file"],
    logFile: values["log-file"],
    protocolVersion: values["protocol-version"],
    extraTools: intArg(values["extra-tools"], "--extra-tools") ?? 0,
    pageSize: pageSize === undefined ? undefined : Math.max(1, pageSize),
    schemaPadBytes: intArg(values["schema-pad-bytes"], "--schema-pad-bytes") ?? 0,
    faults
  }
}

const config = readConfig()

/** @param {string} kind */
const globalFault = (kind) => config.faults.find((fault) => fault.kind === kind)

/** Scripted per-method faults in order; the first one matching a method is applied. */
const methodFaults = config.faults
  .filter((fault) => METHOD_FAULTS.has(fault.kind))
  .map((fault) => ({ fault, remaining: fault.times === undefined ? 1 : fault.times === null ? Infinity : fault.times }))

/**
 * Takes one application of the first fault for `method`, if any.
 * @param {string} method @param {boolean} notification
 */
const takeFault = (method, notification) => {
  const index = methodFaults.findIndex((entry) =>
    entry.fault.on === method && (!notification || entry.fault.kind === "exit")
  )
  const entry = methodFaults[index]
  if (entry === undefined) return undefined
  entry.remaining -= 1
  if (entry.remaining <= 0) methodFaults.splice(index, 1)
  return entry.fault
}

/** @param {string} line */
const record = (line) => {
  if (config.logFile !== undefined) appendFileSync(config.logFile, line + "\n")
}

// ---------------------------------------------------------------------------------------------
// Padding (as in ../payload.ts): 1-, 2-, 3- and 4-byte characters that JSON does not escape

/** "é" (2 bytes) + "€" (3) + "😀" (4) + "a" (1) = 10 bytes. */
const PAD_UNIT = "é€😀a"
const PAD_UNIT_BYTES = 10

/** A string of exactly `bytes` UTF-8 bytes. @param {number} bytes */
const padString = (bytes) => PAD_UNIT.repeat(Math.floor(bytes / PAD_UNIT_BYTES)) + "a".repeat(bytes % PAD_UNIT_BYTES)

/**
 * Where a method's padded result carries its pad: tools/call as its text content, initialize in
 * `instructions`, tools/list in the first tool's description, anything else in `_meta`.
 * @param {string} method @param {any} normal @returns {(pad: string) => unknown}
 */
const paddedResultTemplate = (method, normal) => {
  const base = isRecord(normal) ? normal : {}
  switch (method) {
    case "tools/call":
      return (pad) => ({ content: [{ type: "text", text: pad }] })
    case "initialize":
      return (pad) => ({ ...base, instructions: pad })
    case "tools/list": {
      /** @type {Array<Record<string, unknown>>} */
      const tools = Array.isArray(base.tools) ? base.tools : []
      if (tools.length === 0) return (pad) => ({ ...base, tools: [], _meta: { "phasebound/pad": pad } })
      return (pad) => ({
        ...base,
        tools: tools.map((tool, i) => (i === 0 ? { ...tool, description: String(tool.description ?? "") + pad } : tool))
      })
    }
    default:
      return (pad) => ({ ...base, _meta: { "phasebound/pad": pad } })
  }
}

/**
 * The response line, `\n` included, of exactly `bytes` bytes; undefined if it cannot be that small.
 * @param {string | number} id @param {string} method @param {any} normal @param {number} bytes
 */
const exactLine = (id, method, normal, bytes) => {
  const template = paddedResultTemplate(method, normal)
  /** @param {string} pad */
  const render = (pad) => JSON.stringify({ jsonrpc: "2.0", id, result: template(pad) }) + "\n"
  const minimum = Buffer.byteLength(render(""))
  if (bytes < minimum) return { minimum, line: undefined }
  return { minimum, line: Buffer.from(render(padString(bytes - minimum)), "utf8") }
}

// ---------------------------------------------------------------------------------------------
// MCP behaviour (as in ../mcp.ts)

/** @param {unknown} result */
const ok = (result) => ({ result })
/** @param {number} code @param {string} message */
const fail = (code, message) => ({ error: { code, message } })
/** @param {string} value @param {boolean} [isError] */
const text = (value, isError = false) =>
  ok(isError ? { content: [{ type: "text", text: value }], isError: true } : { content: [{ type: "text", text: value }] })

const makeTools = () => {
  /** @type {Record<string, unknown>} */
  const addSchema = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }
  if (config.schemaPadBytes > 0) addSchema.description = padString(config.schemaPadBytes)
  const extra = Array.from({ length: config.extraTools }, (_, i) => ({
    name: `tool-${i}`,
    description: `Generated tool number ${i}`,
    inputSchema: { type: "object", properties: {} }
  }))
  return [
    { name: "add", description: "Adds two numbers", inputSchema: addSchema },
    {
      name: "echo",
      description: "Returns its text argument",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
    },
    {
      name: "increment",
      description: "Increments a server-side counter (a side effect) and returns the new value",
      inputSchema: { type: "object", properties: {} }
    },
    ...extra
  ]
}

const tools = makeTools()
let counter = 0

/** @param {number} value */
const writeCounter = (value) => {
  if (config.counterFile !== undefined) writeFileSync(config.counterFile, String(value))
}

/** @param {number} offset */
const encodeCursor = (offset) => Buffer.from(JSON.stringify({ offset })).toString("base64url")
/** @param {unknown} cursor @returns {number | undefined} */
const decodeCursor = (cursor) => {
  if (typeof cursor !== "string") return undefined
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    const offset = isRecord(parsed) ? parsed.offset : undefined
    return Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined
  } catch {
    return undefined
  }
}

/** @param {any} params */
const initialize = (params) => {
  const requested = isRecord(params) ? params.protocolVersion : undefined
  const protocolVersion = config.protocolVersion ??
    (typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : DEFAULT_PROTOCOL_VERSION)
  return ok({ protocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: SERVER_INFO })
}

/** @param {any} params */
const listTools = (params) => {
  const cursor = isRecord(params) ? params.cursor : undefined
  const offset = cursor === undefined ? 0 : decodeCursor(cursor)
  if (offset === undefined || offset > tools.length) return fail(ErrorCode.InvalidParams, "Invalid cursor")
  const end = Math.min(offset + (config.pageSize ?? tools.length), tools.length)
  const page = tools.slice(offset, end)
  return ok(end < tools.length ? { tools: page, nextCursor: encodeCursor(end) } : { tools: page })
}

/** @param {any} params */
const callTool = (params) => {
  if (!isRecord(params) || typeof params.name !== "string") return fail(ErrorCode.InvalidParams, "tools/call needs a tool name")
  const args = isRecord(params.arguments) ? params.arguments : {}
  switch (params.name) {
    case "add":
      return typeof args.a === "number" && typeof args.b === "number"
        ? text(String(args.a + args.b))
        : text("add expects numbers a and b", true)
    case "echo":
      return typeof args.text === "string" ? text(args.text) : text("echo expects a string text", true)
    case "increment":
      counter += 1
      writeCounter(counter) // before the answer is even built, let alone sent
      return text(String(counter))
    default:
      return tools.some((tool) => tool.name === params.name)
        ? text(params.name)
        : text(`Unknown tool: ${params.name}`, true)
  }
}

/** Runs one request, side effects included. @param {string} method @param {unknown} params */
const handle = (method, params) => {
  switch (method) {
    case "initialize":
      return initialize(params)
    case "ping":
      return ok({})
    case "tools/list":
      return listTools(params)
    case "tools/call":
      return callTool(params)
    default:
      return fail(ErrorCode.MethodNotFound, `Method not found: ${method}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Output: every stdout write goes through one queue, so chunked and never-ending lines are
// never interleaved with other lines. A write resolves on its callback (the data was handed to
// the pipe), which is also how backpressure is respected.

let stdoutBroken = false
/** Set when the process is about to exit: long writers stop at their next chunk. */
let stopping = false
/** @type {Promise<unknown>} */
let queue = Promise.resolve()

process.stdout.on("error", (error) => {
  stdoutBroken = true
  log(`stdout failed (${/** @type {any} */ (error).code ?? error.message}); no more output`)
})

/** @param {() => Promise<unknown> | unknown} job */
const enqueue = (job) => {
  queue = queue.then(job).catch((error) => log(`output job failed: ${error instanceof Error ? error.message : String(error)}`))
  return queue
}

/** @param {Uint8Array | string} data @returns {Promise<boolean>} */
const write = (data) =>
  new Promise((resolve) => {
    if (stdoutBroken) return resolve(false)
    try {
      process.stdout.write(data, (error) => resolve(error == null))
    } catch {
      stdoutBroken = true
      resolve(false)
    }
  })

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))

const banner = globalFault("banner")
const bannerLine = banner === undefined ? undefined : `${typeof banner.text === "string" ? banner.text : DEFAULT_BANNER}\n`

/** Writes one whole line (a string or bytes ending in "\n"), after the banner if asked. @param {Uint8Array | string} line */
const writeLine = async (line) => {
  if (bannerLine !== undefined && banner?.bannerEachResponse === true) await write(bannerLine)
  await write(line)
}

/** @param {unknown} message */
const sendMessage = (message) => enqueue(() => writeLine(JSON.stringify(message) + "\n"))

/** @param {string | number | null} id @param {{ result?: unknown, error?: unknown }} outcome */
const toMessage = (id, outcome) =>
  "error" in outcome ? { jsonrpc: "2.0", id, error: outcome.error } : { jsonrpc: "2.0", id, result: outcome.result }

/** @param {Buffer} line @param {number} chunkSize @param {number} delayMs */
const writeInChunks = async (line, chunkSize, delayMs) => {
  if (bannerLine !== undefined && banner?.bannerEachResponse === true) await write(bannerLine)
  for (let offset = 0; offset < line.length; offset += chunkSize) {
    if (stopping || stdoutBroken) return
    if (!(await write(line.subarray(offset, offset + chunkSize)))) return
    await pause(delayMs)
  }
}

/** A JSON line that is started and never finished, 64 KiB at a time. @param {string | number} id */
const writeForever = async (id) => {
  let next = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`)
  let total = 0
  while (!stopping && !stdoutBroken) {
    if (!(await write(next))) break
    total += next.length
    next = NEVER_ENDING_CHUNK
  }
  log(`never-ending line stopped after ${total} bytes`)
}

// ---------------------------------------------------------------------------------------------
// Faults

/**
 * Answers a request as the fault says.
 * @param {Record<string, any>} fault @param {string | number} id @param {string} method
 * @param {{ result?: unknown, error?: unknown }} outcome
 */
const respondWithFault = (fault, id, method, outcome) => {
  const normal = toMessage(id, outcome)
  switch (fault.kind) {
    case "exact-size": {
      const { minimum, line } = exactLine(id, method, "result" in outcome ? outcome.result : {}, fault.bytes)
      if (line === undefined) {
        log(`exact-size: ${fault.bytes} bytes is impossible for ${method}, the smallest line is ${minimum} bytes`)
        return sendMessage(toMessage(id, fail(ErrorCode.InternalError, `testkit: exact-size ${fault.bytes} is below ${minimum}`)))
      }
      return enqueue(() => writeInChunks(line, fault.chunkSize ?? DEFAULT_CHUNK_SIZE, fault.chunkDelayMs ?? 0))
    }
    case "never-ending-line":
      return enqueue(() => writeForever(id))
    case "exit":
      return exitAfterOutput(fault.code ?? DEFAULT_EXIT_CODE, `exit fault on ${method}`)
    case "never-answer":
      return
    case "invalid-utf8":
      // 0xC3 opens a 2-byte sequence; 0x28 "(" is not a continuation byte.
      return enqueue(() =>
        writeLine(Buffer.concat([
          Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"bad `),
          Buffer.from([0xc3, 0x28]),
          Buffer.from(` byte"}]}}\n`)
        ]))
      )
    case "invalid-json":
      return enqueue(() => writeLine(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},\n`))
    case "not-jsonrpc":
      return enqueue(async () => {
        await writeLine(`{"hello":1}\n`)
        await writeLine(JSON.stringify(normal) + "\n")
      })
    case "wrong-id":
      return sendMessage({ ...normal, id: 999_999 })
    case "delay":
      setTimeout(() => sendMessage(normal), fault.ms)
      return
    case "jsonrpc-error": {
      const error = fault.data === undefined
        ? { code: fault.code, message: fault.message }
        : { code: fault.code, message: fault.message, data: fault.data }
      return sendMessage({ jsonrpc: "2.0", id, error })
    }
  }
}

/** Exits once every earlier answer has been handed to stdout. @param {number} code @param {string} why */
const exitAfterOutput = (code, why) =>
  enqueue(() => {
    log(`exiting with code ${code}: ${why}`)
    process.exit(code)
  })

// ---------------------------------------------------------------------------------------------
// Input: bytes split on "\n", each line decoded strictly and parsed

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/** @param {Buffer} bytes */
const handleLine = (bytes) => {
  let textLine
  try {
    textLine = strictUtf8.decode(bytes)
  } catch {
    record("#invalid-utf8")
    return sendMessage(toMessage(null, fail(ErrorCode.ParseError, "Parse error: invalid UTF-8")))
  }
  if (textLine.trim() === "") return
  let value
  try {
    value = JSON.parse(textLine)
  } catch {
    record("#invalid-json")
    return sendMessage(toMessage(null, fail(ErrorCode.ParseError, "Parse error")))
  }
  if (Array.isArray(value)) {
    record("#batch")
    return sendMessage(toMessage(null, fail(ErrorCode.InvalidRequest, "Batches are not supported")))
  }
  if (!isRecord(value) || value.jsonrpc !== "2.0") {
    record("#not-jsonrpc")
    return sendMessage(toMessage(null, fail(ErrorCode.InvalidRequest, "Invalid Request")))
  }
  const { id, method } = value
  if (typeof method !== "string") {
    record("#response") // an answer to a server request; this server sends none
    return
  }
  record(method)
  if (id === undefined) {
    const fault = takeFault(method, true)
    if (fault !== undefined) respondWithFault(fault, 0, method, ok({}))
    return
  }
  if (typeof id !== "string" && typeof id !== "number") {
    return sendMessage(toMessage(null, fail(ErrorCode.InvalidRequest, "Invalid Request: bad id")))
  }
  // Run the request (side effects included) before any fault decides how it is answered.
  const outcome = handle(method, value.params)
  const fault = takeFault(method, false)
  if (fault === undefined) return sendMessage(toMessage(id, outcome))
  return respondWithFault(fault, id, method, outcome)
}

const readStdin = () => {
  /** @type {Buffer[]} */
  let pending = []
  process.stdin.on("data", (chunk) => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk
    let newline = data.indexOf(0x0a)
    while (newline !== -1) {
      pending.push(data.subarray(0, newline))
      const line = Buffer.concat(pending)
      pending = []
      handleLine(line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, -1) : line)
      data = data.subarray(newline + 1)
      newline = data.indexOf(0x0a)
    }
    if (data.length > 0) pending.push(data)
  })
  process.stdin.on("error", (error) => log(`stdin failed: ${error.message}`))
  process.stdin.on("end", onStdinEnd)
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

const ignoreSigterm = globalFault("ignore-sigterm") !== undefined

const onStdinEnd = () => {
  if (ignoreSigterm) {
    log("stdin closed; staying alive (ignore-sigterm)")
    return
  }
  const linger = globalFault("linger-after-stdin-close")?.ms ?? 0
  log(linger > 0 ? `stdin closed; exiting in ${linger} ms` : "stdin closed; exiting")
  setTimeout(() => {
    stopping = true
    exitAfterOutput(0, "stdin closed")
    // A write the reader never takes must not keep us here.
    setTimeout(() => process.exit(0), 500).unref()
  }, linger)
}

/** Writes exactly `bytes` bytes of log lines to stderr and resolves once they were all taken. @param {number} bytes */
const floodStderr = async (bytes) => {
  const line = "[phasebound-testkit stdio] stderr flood: this log line only proves that the client drains stderr\n"
  const all = Buffer.from(line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes))
  if (all.length > 0) all[all.length - 1] = 0x0a
  const writes = []
  for (let offset = 0; offset < all.length; offset += 16 * 1024) {
    const piece = all.subarray(offset, offset + 16 * 1024)
    writes.push(new Promise((resolve) => process.stderr.write(piece, () => resolve(undefined))))
  }
  await Promise.all(writes)
}

const main = async () => {
  const pidFault = config.faults.filter((fault) => fault.kind === "write-pid")
  for (const fault of pidFault) writeFileSync(String(fault.path), String(process.pid))
  writeCounter(0)
  if (ignoreSigterm) {
    process.on("SIGTERM", () => log("SIGTERM received and ignored"))
    setInterval(() => {}, 1 << 30) // stays alive after stdin closes: only SIGKILL ends it
  }
  if (bannerLine !== undefined) await enqueue(() => write(bannerLine))
  const flood = globalFault("stderr-flood")
  if (flood !== undefined) {
    // Nothing is read (so nothing is answered) until the client has taken the whole flood.
    await floodStderr(Number(flood.bytes))
    log(`stderr flood of ${flood.bytes} bytes taken`)
  }
  readStdin()
}

main().catch((error) => {
  log(`startup failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(70)
})
