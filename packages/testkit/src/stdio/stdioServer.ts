/**
 * phasebound testkit: a scriptable MCP server over stdio, normal by default and hostile on
 * request. A client spawns it as a child process and speaks newline-delimited JSON-RPC on
 * stdin/stdout; stderr is its log.
 *
 * This is only the stdio framing: the MCP behaviour is the one the HTTP servers serve
 * (../mcp.ts, ../modern.ts, ../features.ts, ../effects.ts, ../pagination.ts, ../payload.ts).
 * It is not run from its TypeScript source: esbuild bundles it into one plain ESM file with only
 * `node:` imports (stdio-server.mjs), which runs under Node 20 and Bun with no loader; see
 * ../stdioBundle.ts for where that file comes from. The typed, test-facing side is
 * ../StdioServer.ts (`stdioServerCommand`, `makeStdioFixture`), which builds the arguments below
 * and documents every option and fault.
 *
 * Eras (--era):
 *   handshake (default)  2024-11-05..2025-11-25: initialize, notifications/initialized; any other
 *                        method, server/discover included, is -32601 Method not found.
 *   stateless            2026-07-28: no handshake. Every request carries in params._meta
 *                        "io.modelcontextprotocol/protocolVersion" (a string),
 *                        ".../clientCapabilities" (an object) and optionally ".../clientInfo";
 *                        checked as ../modern.ts `validateStatelessRequest` does, without the
 *                        header checks (a pipe has no headers). An unknown method is -32601
 *                        before the _meta is looked at. initialize is refused with -32022.
 *   dual                 a request carrying modern _meta (and server/discover always) is served
 *                        as in "stateless"; initialize, and any request without modern _meta, as
 *                        in "handshake".
 *
 * Arguments (each flag takes one value, except --silent-on-unknown, --features and --effect-tools):
 *   --counter-file PATH      the `increment` counter, rewritten synchronously before each answer
 *   --log-file PATH          one line per received message, appended synchronously on arrival:
 *                            its method, or "#response", "#invalid-json", "#invalid-utf8",
 *                            "#not-jsonrpc", "#batch"
 *   --protocol-version V     what initialize answers (default: the client's version if supported)
 *   --extra-tools N          generated tools "tool-0".."tool-N-1"
 *   --page-size N            listing page size (nextCursor pagination)
 *   --schema-pad-bytes N     pads the `add` tool's input schema description to N bytes
 *   --fault JSON             a scripted behaviour (repeatable), see ../StdioServer.ts
 *   --era E                  handshake | stateless | dual (default handshake)
 *   --supported-version V    a version the server names in server/discover and -32022 (repeatable)
 *   --ttl-ms N               ttlMs of server/discover and tools/list results (default 60000)
 *   --silent-on-unknown      a request for an unknown method gets no answer at all
 *   --features               the features of ../features.ts
 *   --resources N            with --features: how many test://docs/i resources are listed (default 3)
 *   --effect-tools           the effect tools of ../effects.ts
 *   --env-report PATH        at start-up, before stdin is read: a JSON object of the values of the
 *                            variables named by --env-report-name (repeatable) in this process's
 *                            environment, null for an unset one (written to a temporary name, then
 *                            renamed: a reader never sees half of it)
 *   --events-file PATH       one line per event, appended synchronously: "tool NAME" when a
 *                            tools/call is run (then "identity NAME JSON" when it carried an
 *                            effect identity), "sent METHOD" when a notification is handed to
 *                            stdout, "subscription-closed ID" when the client ends a subscription
 *
 * Per-method faults (`on`, `times`: default 1; null, which is what JSON.stringify makes of
 * Infinity, means always) replace only the answer: the request's side effects (the counter) have
 * already happened. On a notification only `exit` applies. A fault replaces what the request
 * would play out too (`delay` only postpones it), but a list change still goes out at once.
 */
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { FAULT_FRAMINGS } from "../faults.js"
import { STATELESS_FEATURE_METHODS } from "../features.js"
import {
  ErrorCode,
  errorMessage,
  isRecord,
  notificationMessage,
  resultMessage,
  type JsonRpcErrorObject,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcOutgoing
} from "../jsonrpc.js"
import { makeMcpBehaviour, SUPPORTED_PROTOCOL_VERSIONS, type ModernOutcome } from "../mcp.js"
import {
  ASK_NAME_INPUT_REQUESTS,
  DEFAULT_MODERN_VERSIONS,
  DEFAULT_TTL_MS,
  hasModernMeta,
  inputRequiredResult,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
  metaOf,
  MODERN_METHODS,
  unsupportedVersionError,
  validateStatelessRequest
} from "../modern.js"
import { exactJsonResponse, paddedResultTemplate, utf8Length } from "../payload.js"
import type { StdioFault, StdioMethodFault } from "../StdioServer.js"
import { playTimeline } from "../timeline.js"

/** The handshake versions of a stdio server: 2024-11-05 too (over HTTP it is the legacy SSE server's). */
const HANDSHAKE_VERSIONS: ReadonlyArray<string> = ["2024-11-05", ...SUPPORTED_PROTOCOL_VERSIONS]
const ERAS: ReadonlySet<string> = new Set(["handshake", "stateless", "dual"])

const DEFAULT_CHUNK_SIZE = 7
const DEFAULT_EXIT_CODE = 3
const DEFAULT_BANNER = "Server starting... ready"
const NEVER_ENDING_CHUNK = Buffer.alloc(64 * 1024, 0x61) // "a"
/** Exit code for a bad command line (a testkit bug, not a scripted fault). */
const USAGE_EXIT_CODE = 64

/** The fault kinds of faults.ts this framing has (StdioServer.ts refuses the others before the child starts). */
const isMethodFaultKind = (kind: string): boolean => (FAULT_FRAMINGS as Readonly<Record<string, ReadonlyArray<string>>>)[kind]?.includes("stdio") === true
const GLOBAL_FAULTS: ReadonlySet<string> = new Set(["banner", "stderr-flood", "ignore-sigterm", "linger-after-stdin-close", "write-pid"])

// ---------------------------------------------------------------------------------------------
// Logging (stderr) and configuration

const log = (text: string): void => {
  process.stderr.write(`[phasebound-testkit stdio ${process.pid}] ${text}\n`)
}

const usage = (text: string): never => {
  log(`usage error: ${text}`)
  process.exit(USAGE_EXIT_CODE)
}

const intArg = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 0) usage(`${flag} needs a non-negative integer`)
  return n
}

const parseFault = (text: string): StdioFault => {
  let fault: unknown
  try {
    fault = JSON.parse(text)
  } catch {
    return usage(`--fault is not JSON: ${text}`)
  }
  if (!isRecord(fault) || typeof fault["kind"] !== "string") return usage(`--fault needs a "kind": ${text}`)
  const kind = fault["kind"]
  if (isMethodFaultKind(kind)) {
    if (typeof fault["on"] !== "string") usage(`fault ${kind} needs "on" (a JSON-RPC method)`)
  } else if (!GLOBAL_FAULTS.has(kind)) {
    usage(`unknown fault kind ${kind}`)
  }
  return fault as unknown as StdioFault
}

const readConfig = () => {
  let values
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        "counter-file": { type: "string" },
        "log-file": { type: "string" },
        "protocol-version": { type: "string" },
        "extra-tools": { type: "string" },
        "page-size": { type: "string" },
        "schema-pad-bytes": { type: "string" },
        fault: { type: "string", multiple: true },
        era: { type: "string" },
        "supported-version": { type: "string", multiple: true },
        "ttl-ms": { type: "string" },
        "silent-on-unknown": { type: "boolean" },
        features: { type: "boolean" },
        resources: { type: "string" },
        "effect-tools": { type: "boolean" },
        "events-file": { type: "string" },
        "env-report": { type: "string" },
        "env-report-name": { type: "string", multiple: true }
      },
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error))
  }
  const era = values.era ?? "handshake"
  if (!ERAS.has(era)) usage(`--era must be handshake, stateless or dual: ${era}`)
  const supportedVersions = values["supported-version"] ??
    (era === "dual" ? [...DEFAULT_MODERN_VERSIONS, ...[...HANDSHAKE_VERSIONS].reverse()] : DEFAULT_MODERN_VERSIONS)
  if (supportedVersions.some((version) => version === "")) usage("--supported-version needs a non-empty version")
  return {
    era,
    supportedVersions,
    /** The versions served statelessly: in "dual", the handshake versions are initialize's. */
    statelessVersions: era === "dual"
      ? supportedVersions.filter((version) => !HANDSHAKE_VERSIONS.includes(version))
      : supportedVersions,
    ttlMs: intArg(values["ttl-ms"], "--ttl-ms") ?? DEFAULT_TTL_MS,
    silentOnUnknown: values["silent-on-unknown"] === true,
    features: values.features === true,
    effectTools: values["effect-tools"] === true,
    resources: intArg(values.resources, "--resources") ?? 3,
    eventsFile: values["events-file"],
    envReport: values["env-report"],
    envReportNames: values["env-report-name"] ?? [],
    counterFile: values["counter-file"],
    logFile: values["log-file"],
    protocolVersion: values["protocol-version"],
    extraTools: intArg(values["extra-tools"], "--extra-tools") ?? 0,
    pageSize: intArg(values["page-size"], "--page-size"),
    schemaPadBytes: intArg(values["schema-pad-bytes"], "--schema-pad-bytes") ?? 0,
    faults: (values.fault ?? []).map(parseFault)
  }
}

const config = readConfig()

const globalFault = <K extends StdioFault["kind"]>(kind: K): Extract<StdioFault, { kind: K }> | undefined =>
  config.faults.find((fault): fault is Extract<StdioFault, { kind: K }> => fault.kind === kind)

/** Scripted per-method faults in order; the first one matching a method is applied. */
const methodFaults = config.faults
  .filter((fault): fault is StdioMethodFault => isMethodFaultKind(fault.kind))
  .map((fault) => ({ fault, remaining: fault.times === undefined ? 1 : fault.times === null ? Infinity : fault.times }))

/** Takes one application of the first fault for `method`, if any (on a notification, only `exit`). */
const takeFault = (method: string, notification: boolean): StdioMethodFault | undefined => {
  const index = methodFaults.findIndex((entry) => entry.fault.on === method && (!notification || entry.fault.kind === "exit"))
  const entry = methodFaults[index]
  if (entry === undefined) return undefined
  entry.remaining -= 1
  if (entry.remaining <= 0) methodFaults.splice(index, 1)
  return entry.fault
}

const record = (line: string): void => {
  if (config.logFile !== undefined) appendFileSync(config.logFile, line + "\n")
}

const event = (line: string): void => {
  if (config.eventsFile !== undefined) appendFileSync(config.eventsFile, line + "\n")
}

// ---------------------------------------------------------------------------------------------
// The MCP behaviour, shared with the HTTP servers

const mcp = makeMcpBehaviour({
  protocolVersion: config.protocolVersion,
  handshakeVersions: HANDSHAKE_VERSIONS,
  extraTools: config.extraTools,
  pageSize: config.pageSize,
  schemaPadBytes: config.schemaPadBytes,
  supportedVersions: config.supportedVersions,
  ttlMs: config.ttlMs,
  headerTools: false,
  signedRequestStates: true,
  features: config.features,
  resources: config.resources,
  effectTools: config.effectTools,
  onToolCall: (name, identity) => {
    event(`tool ${name}`)
    if (identity !== undefined) event(`identity ${name} ${JSON.stringify(identity)}`)
  }
})

let writtenCounter = -1
/** Rewrites the counter file when `increment` moved it: synchronously, before the answer is sent. */
const writeCounter = (): void => {
  const value = mcp.counter()
  if (value === writtenCounter) return
  writtenCounter = value
  if (config.counterFile !== undefined) writeFileSync(config.counterFile, String(value))
}

/** Whether a request is served statelessly: every request in "stateless"; in "dual" those with modern _meta, and server/discover. */
const isModernRequest = (method: string, params: unknown): boolean =>
  config.era === "stateless" ||
  (config.era === "dual" && method !== "initialize" && (method === "server/discover" || hasModernMeta(params)))

/** The version a request asks for: its modern _meta's, else initialize's `protocolVersion`. */
const requestedVersion = (params: unknown): string => {
  const fromMeta = metaOf(params)?.[META_PROTOCOL_VERSION]
  if (typeof fromMeta === "string") return fromMeta
  const fromInitialize = isRecord(params) ? params["protocolVersion"] : undefined
  return typeof fromInitialize === "string" ? fromInitialize : ""
}

const failure = (error: JsonRpcErrorObject): ModernOutcome => ({ _tag: "error", error })

const methodNotFound = (method: string): ModernOutcome => failure({ code: ErrorCode.MethodNotFound, message: `Method not found: ${method}` })

/** Runs one request of the stateless era (its _meta checked first), side effects included. */
const handleModern = (method: string, params: unknown): ModernOutcome => {
  if (!(MODERN_METHODS.has(method) || (config.features && STATELESS_FEATURE_METHODS.has(method)))) return methodNotFound(method)
  const checked = validateStatelessRequest({
    method,
    params,
    header: undefined,
    accepted: config.statelessVersions,
    supported: config.supportedVersions
  })
  return checked.ok ? mcp.handleModern(method, params) : failure(checked.refusal.error)
}

/** Runs one request in the configured era. */
const serve = (method: string, params: unknown): { readonly outcome: ModernOutcome; readonly modern: boolean } => {
  if (config.era === "stateless" && method === "initialize") {
    // A modern-only server names its versions to a legacy client, which cannot fall forward.
    return { outcome: failure(unsupportedVersionError(config.supportedVersions, requestedVersion(params))), modern: true }
  }
  return isModernRequest(method, params)
    ? { outcome: handleModern(method, params), modern: true }
    : { outcome: mcp.handle(method, params), modern: false }
}

// ---------------------------------------------------------------------------------------------
// Output: every stdout write goes through one queue, so chunked and never-ending lines are
// never interleaved with other lines. A write resolves on its callback (the data was handed to
// the pipe), which is also how backpressure is respected.

let stdoutBroken = false
/** Set when the process is about to exit: long writers stop at their next chunk. */
let stopping = false
let queue: Promise<unknown> = Promise.resolve()

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  stdoutBroken = true
  log(`stdout failed (${error.code ?? error.message}); no more output`)
})

const enqueue = (job: () => unknown): Promise<unknown> => {
  queue = queue.then(job).catch((error: unknown) => log(`output job failed: ${error instanceof Error ? error.message : String(error)}`))
  return queue
}

const write = (data: Uint8Array | string): Promise<boolean> =>
  new Promise((resolve) => {
    if (stdoutBroken) return resolve(false)
    try {
      process.stdout.write(data, (error) => resolve(error == null))
    } catch {
      stdoutBroken = true
      resolve(false)
    }
  })

const pause = (ms: number): Promise<void> => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))

const banner = globalFault("banner")
const bannerLine = banner === undefined ? undefined : `${typeof banner.text === "string" ? banner.text : DEFAULT_BANNER}\n`
const bannerEachResponse = banner?.bannerEachResponse === true

/** Writes one whole line (a string or bytes ending in "\n"), after the banner if asked. */
const writeLine = async (line: Uint8Array | string): Promise<void> => {
  if (bannerLine !== undefined && bannerEachResponse) await write(bannerLine)
  await write(line)
}

const sendMessage = (message: unknown): Promise<unknown> => enqueue(() => writeLine(JSON.stringify(message) + "\n"))

/** The message that answers `id` with an outcome (a subscription's: its graceful end). */
const toMessage = (id: JsonRpcId, outcome: ModernOutcome): JsonRpcOutgoing => {
  switch (outcome._tag) {
    case "result":
      return resultMessage(id, outcome.result)
    case "error":
      return errorMessage(id, outcome.error)
    case "listen":
      return resultMessage(id, { resultType: "complete", _meta: { [META_SUBSCRIPTION_ID]: id } })
  }
}

// ---------------------------------------------------------------------------------------------
// Playing out (--features): a request's notifications before its answer, list changes after it

/** A notification of the server's own, recorded in the events file as it is handed to stdout. */
const sendNotification = (message: JsonRpcNotification): Promise<unknown> =>
  enqueue(async () => {
    if (stdoutBroken) return
    event(`sent ${message.method}`)
    await writeLine(JSON.stringify(message) + "\n")
  })

/** Open subscriptions, by the id of their subscriptions/listen request. */
const subscriptions = new Map<string | number, { readonly toolsListChanged: boolean }>()
/** Requests still playing out, by id: each entry stops one. */
const inFlight = new Map<string | number, () => boolean>()
/** Whether initialize was served: stdout is then a handshake-era listener of list changes. */
let initialized = false

/** A notification as a subscription delivers it: its subscriptionId in _meta. */
const onSubscription = (message: JsonRpcNotification, id: string | number): JsonRpcNotification => {
  const params = message.params ?? {}
  const meta = isRecord(params["_meta"]) ? params["_meta"] : {}
  return notificationMessage(message.method, { ...params, _meta: { ...meta, [META_SUBSCRIPTION_ID]: id } })
}

/** Sends each notification to every listener. */
const broadcast = (notifications: ReadonlyArray<JsonRpcNotification>): void => {
  if (initialized && config.era !== "stateless") { for (const message of notifications) void sendNotification(message) }
  for (const [id, subscription] of subscriptions) {
    if (subscription.toolsListChanged) { for (const message of notifications) void sendNotification(onSubscription(message, id)) }
  }
}

/**
 * Answers a request and plays out what comes with it: a subscription's acknowledgement, or the
 * request's notifications, its answer, then its list changes.
 */
const respond = (id: string | number, outcome: ModernOutcome): void => {
  if (outcome._tag === "listen") {
    subscriptions.set(id, { toolsListChanged: outcome.notifications["toolsListChanged"] === true })
    void sendNotification(onSubscription(notificationMessage("notifications/subscriptions/acknowledged", { notifications: outcome.notifications }), id))
    return
  }
  const timeline = outcome._tag === "result" ? outcome.timeline : undefined
  if (timeline === undefined) return void sendMessage(toMessage(id, outcome))
  let answered = false
  const stop = playTimeline(timeline, {
    notify: (message) => void sendNotification(message),
    answer: () => {
      answered = true
      inFlight.delete(id)
      void sendMessage(toMessage(id, outcome))
      broadcast(timeline.broadcast)
    }
  })
  if (!answered) inFlight.set(id, stop)
}

/** notifications/cancelled: stops a request still playing out, or ends a subscription. */
const cancelPlaying = (requestId: string | number): void => {
  if (inFlight.get(requestId)?.() === true) event(`timeline-stopped ${JSON.stringify(requestId)}`)
  inFlight.delete(requestId)
  if (subscriptions.delete(requestId)) event(`subscription-closed ${JSON.stringify(requestId)}`)
}

const writeInChunks = async (line: Uint8Array, chunkSize: number, delayMs: number): Promise<void> => {
  if (bannerLine !== undefined && bannerEachResponse) await write(bannerLine)
  for (let offset = 0; offset < line.length; offset += chunkSize) {
    if (stopping || stdoutBroken) return
    if (!(await write(line.subarray(offset, offset + chunkSize)))) return
    await pause(delayMs)
  }
}

/** A JSON line that is started and never finished, 64 KiB at a time. */
const writeForever = async (id: JsonRpcId): Promise<void> => {
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
 * Delayed answers to requests served statelessly, by request id: a notifications/cancelled for
 * one drops its answer (the stateless era forbids any further message for a cancelled request).
 */
const pendingAnswers = new Map<string | number, NodeJS.Timeout>()

const cancelPending = (requestId: string | number): void => {
  const timer = pendingAnswers.get(requestId)
  if (timer === undefined) return
  clearTimeout(timer)
  pendingAnswers.delete(requestId)
  log(`request ${JSON.stringify(requestId)} cancelled; its delayed answer is dropped`)
}

/** The response line, "\n" included, of exactly `bytes` bytes; undefined (and the minimum) if it cannot be that small. */
const exactLine = (id: JsonRpcId, method: string, normal: unknown, bytes: number): { readonly minimum: number; readonly line?: Uint8Array } => {
  const template = paddedResultTemplate(method, normal)
  const minimum = utf8Length(JSON.stringify(resultMessage(id, template("")))) + 1
  if (bytes < minimum) return { minimum }
  return { minimum, line: Buffer.concat([exactJsonResponse(id, template, bytes - 1), Buffer.from("\n")]) }
}

/** Exits once every earlier answer has been handed to stdout. */
const exitAfterOutput = (code: number, why: string): Promise<unknown> =>
  enqueue(() => {
    log(`exiting with code ${code}: ${why}`)
    process.exit(code)
  })

/** Answers a request (or, for `exit`, a notification: id 0) as the fault says. */
const respondWithFault = (
  fault: StdioMethodFault,
  id: string | number,
  method: string,
  served: ModernOutcome,
  request: { readonly params?: unknown; readonly modern?: boolean } = {}
): void => {
  const normal = toMessage(id, served)
  switch (fault.kind) {
    case "exact-size": {
      const { minimum, line } = exactLine(id, method, "result" in normal ? normal.result : {}, fault.bytes)
      if (line === undefined) {
        log(`exact-size: ${fault.bytes} bytes is impossible for ${method}, the smallest line is ${minimum} bytes`)
        return void sendMessage(errorMessage(id, { code: -32603, message: `testkit: exact-size ${fault.bytes} is below ${minimum}` }))
      }
      return void enqueue(() => writeInChunks(line, fault.chunkSize ?? DEFAULT_CHUNK_SIZE, fault.chunkDelayMs ?? 0))
    }
    case "never-ending":
    case "never-ending-line":
      return void enqueue(() => writeForever(id))
    case "exit":
      return void exitAfterOutput(fault.code ?? DEFAULT_EXIT_CODE, `exit fault on ${method}`)
    case "never-answer":
      return
    case "cut-mid-answer": // how: "end" (a reset is refused before the child starts)
    case "exit-mid-answer": {
      // Half of the response line (no "\n"), then the process exits.
      const code = fault.kind === "exit-mid-answer" ? fault.code ?? DEFAULT_EXIT_CODE : DEFAULT_EXIT_CODE
      return void enqueue(async () => {
        const line = Buffer.from(JSON.stringify(normal) + "\n")
        await write(line.subarray(0, Math.floor(line.length / 2)))
        log(`exiting with code ${code} in the middle of an answer to ${method}`)
        process.exit(code)
      })
    }
    case "invalid-utf8":
      // 0xC3 opens a 2-byte sequence; 0x28 "(" is not a continuation byte.
      return void enqueue(() =>
        writeLine(Buffer.concat([
          Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"bad `),
          Buffer.from([0xc3, 0x28]),
          Buffer.from(` byte"}]}}\n`)
        ]))
      )
    case "invalid-json":
      return void enqueue(() => writeLine(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},\n`))
    case "not-jsonrpc":
      return void enqueue(async () => {
        await writeLine(`{"hello":1}\n`)
        await writeLine(JSON.stringify(normal) + "\n")
      })
    case "wrong-id":
      return void sendMessage({ ...normal, id: 999_999 })
    case "delay": {
      const timer = setTimeout(() => {
        pendingAnswers.delete(id)
        respond(id, served)
      }, fault.ms)
      if (request.modern === true) pendingAnswers.set(id, timer)
      return
    }
    case "jsonrpc-error": {
      const error = fault.data === undefined
        ? { code: fault.code, message: fault.message }
        : { code: fault.code, message: fault.message, data: fault.data }
      return void sendMessage(errorMessage(id, error))
    }
    case "unsupported-version":
      return void sendMessage(errorMessage(id, unsupportedVersionError(fault.supported ?? config.supportedVersions, requestedVersion(request.params))))
    case "input-required":
      return void sendMessage(resultMessage(
        id,
        inputRequiredResult(
          fault.inputRequests === null ? undefined : fault.inputRequests ?? ASK_NAME_INPUT_REQUESTS,
          fault.requestState === null ? undefined : fault.requestState ?? mcp.issueRequestState()
        )
      ))
    case "result-type": {
      if (!("result" in normal && isRecord(normal.result))) return void sendMessage(normal) // an error answer as is
      const { resultType: _, ...rest } = normal.result
      return void sendMessage(resultMessage(id, fault.value === null ? rest : { resultType: fault.value ?? "bogus", ...rest }))
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Input: bytes split on "\n", each line decoded strictly and parsed

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

const handleLine = (bytes: Uint8Array): void => {
  let textLine: string
  try {
    textLine = strictUtf8.decode(bytes)
  } catch {
    record("#invalid-utf8")
    return void sendMessage(errorMessage(null, { code: ErrorCode.ParseError, message: "Parse error: invalid UTF-8" }))
  }
  if (textLine.trim() === "") return
  let value: unknown
  try {
    value = JSON.parse(textLine)
  } catch {
    record("#invalid-json")
    return void sendMessage(errorMessage(null, { code: ErrorCode.ParseError, message: "Parse error" }))
  }
  if (Array.isArray(value)) {
    record("#batch")
    return void sendMessage(errorMessage(null, { code: ErrorCode.InvalidRequest, message: "Batches are not supported" }))
  }
  if (!isRecord(value) || value["jsonrpc"] !== "2.0") {
    record("#not-jsonrpc")
    return void sendMessage(errorMessage(null, { code: ErrorCode.InvalidRequest, message: "Invalid Request" }))
  }
  const { id, method, params } = value
  if (typeof method !== "string") {
    record("#response") // an answer to a server request; this server sends none
    return
  }
  record(method)
  if (id === undefined) {
    const requestId = isRecord(params) ? params["requestId"] : undefined
    if (method === "notifications/cancelled" && (typeof requestId === "string" || typeof requestId === "number")) {
      cancelPending(requestId)
      cancelPlaying(requestId)
    }
    const fault = takeFault(method, true)
    if (fault !== undefined) respondWithFault(fault, 0, method, { _tag: "result", result: {} })
    return
  }
  if (typeof id !== "string" && typeof id !== "number") {
    return void sendMessage(errorMessage(null, { code: ErrorCode.InvalidRequest, message: "Invalid Request: bad id" }))
  }
  // Run the request (side effects included) before any fault decides how it is answered.
  const { outcome, modern } = serve(method, params)
  writeCounter()
  if (method === "initialize" && !modern && outcome._tag === "result") initialized = true
  const fault = takeFault(method, false)
  if (fault === undefined) {
    if (config.silentOnUnknown && outcome._tag === "error" && outcome.error.code === ErrorCode.MethodNotFound) {
      log(`${method}: unknown method, left unanswered (silent-on-unknown)`)
      return
    }
    return respond(id, outcome)
  }
  // The fault replaces the answer and what comes with it (delay only postpones them), not the change.
  if (outcome._tag === "result" && outcome.timeline !== undefined && fault.kind !== "delay") broadcast(outcome.timeline.broadcast)
  respondWithFault(fault, id, method, outcome, { params, modern })
}

const readStdin = (): void => {
  let pending: Array<Buffer> = []
  process.stdin.on("data", (chunk: Buffer | string) => {
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

const onStdinEnd = (): void => {
  if (ignoreSigterm) {
    log("stdin closed; staying alive (ignore-sigterm)")
    return
  }
  const linger = globalFault("linger-after-stdin-close")?.ms ?? 0
  log(linger > 0 ? `stdin closed; exiting in ${linger} ms` : "stdin closed; exiting")
  setTimeout(() => {
    stopping = true
    void exitAfterOutput(0, "stdin closed")
    // A write the reader never takes must not keep us here.
    setTimeout(() => process.exit(0), 500).unref()
  }, linger)
}

/** Writes exactly `bytes` bytes of log lines to stderr and resolves once they were all taken. */
const floodStderr = async (bytes: number): Promise<void> => {
  const line = "[phasebound-testkit stdio] stderr flood: this log line only proves that the client drains stderr\n"
  const all = Buffer.from(line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes))
  if (all.length > 0) all[all.length - 1] = 0x0a
  const writes: Array<Promise<void>> = []
  for (let offset = 0; offset < all.length; offset += 16 * 1024) {
    const piece = all.subarray(offset, offset + 16 * 1024)
    writes.push(new Promise((resolve) => process.stderr.write(piece, () => resolve())))
  }
  await Promise.all(writes)
}

/**
 * `pid start`: the start time (Linux, field 22 of /proc/self/stat) tells this process from a
 * later one given the same pid (../processIdentity.ts reads it back); `pid` alone elsewhere.
 */
const ownIdentity = (): string => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8")
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
    return /^\d+$/.test(start ?? "") ? `${process.pid} ${start}` : String(process.pid)
  } catch {
    return String(process.pid)
  }
}

/** The environment values the parent asked about (`--env-report-name`), as this process was given them. */
const writeEnvReport = (): void => {
  if (config.envReport === undefined) return
  const seen = Object.fromEntries(config.envReportNames.map((name) => [name, process.env[name] ?? null]))
  const partial = `${config.envReport}.${process.pid}.partial`
  writeFileSync(partial, JSON.stringify(seen))
  renameSync(partial, config.envReport)
}

const main = async (): Promise<void> => {
  writeEnvReport()
  for (const fault of config.faults) if (fault.kind === "write-pid") writeFileSync(String(fault.path), ownIdentity())
  writeCounter()
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

main().catch((error: unknown) => {
  log(`startup failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(70)
})
