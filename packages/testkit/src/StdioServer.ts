/**
 * The scriptable stdio MCP server, test side: how to spawn it (`stdioServerCommand`) and a
 * fixture that observes it from outside (`makeStdioFixture`: counter, arrivals, pid, liveness).
 *
 * The child program is stdio/stdioServer.ts, the stdio framing of the MCP behaviour the HTTP
 * servers serve too, bundled by esbuild into one plain JavaScript file (only `node:` imports) so
 * that it runs under Node and Bun without a TypeScript loader: dist/stdio/stdio-server.mjs in the
 * built package, a bundle made on demand when running from the sources (stdioBundle.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { checkFaultFraming, FAULT_FRAMINGS, validateFault, type Fault } from "./faults.js"
import type { FeatureCounters } from "./features.js"
import { isRunning, parseIdentity, type ProcessIdentity } from "./processIdentity.js"
import { childProgramPath, STDIO_SERVER_PROGRAM } from "./stdioBundle.js"

/**
 * Per-method faults: the shared vocabulary of faults.ts, those kinds `FAULT_FRAMINGS` gives
 * "stdio" (the others, and `cut-mid-answer` with `how: "reset"`, are refused when the command is
 * built). Each replaces only the answer: the request's side effects (the `increment` counter)
 * have already happened. On a notification (e.g. "notifications/cancelled") only `exit` applies.
 * They apply in every era, to any method, "server/discover" included (also where the era does
 * not know it). On stdio `exact-size` sizes the response line, "\n" included; `never-answer`
 * and `never-ending` (also spelled `never-ending-line`) are a line never started or never
 * finished; `cut-mid-answer` with `how: "end"` is `exit-mid-answer`.
 */
export type StdioMethodFault = Fault

/** Behaviours of the whole process. */
export type StdioGlobalFault =
  /** A non-JSON line on stdout before anything else (default text "Server starting... ready"), and before every response if asked. */
  | { readonly kind: "banner"; readonly text?: string; readonly bannerEachResponse?: boolean }
  /** Writes `bytes` bytes of log lines to stderr at startup and reads nothing until they were all taken. */
  | { readonly kind: "stderr-flood"; readonly bytes: number }
  /** Ignores SIGTERM and stays alive after stdin closes: only SIGKILL ends it. */
  | { readonly kind: "ignore-sigterm" }
  /** When stdin ends, waits `ms` before exiting (default: exit promptly). */
  | { readonly kind: "linger-after-stdin-close"; readonly ms: number }
  /** Writes the child's identity to `path` at startup: its pid, then its start time where the system has one (processIdentity.ts). */
  | { readonly kind: "write-pid"; readonly path: string }

export type StdioFault = StdioMethodFault | StdioGlobalFault
export type StdioFaultKind = StdioFault["kind"]

/**
 * Which protocol era the stdio server speaks.
 *
 * - "handshake": 2024-11-05..2025-11-25 only: `initialize`, `notifications/initialized`, `ping`;
 *   `server/discover` is -32601 Method not found, as real 2025 servers answer it.
 * - "stateless": 2026-07-28 only: no handshake; every request must carry in `params._meta`
 *   "io.modelcontextprotocol/protocolVersion" (string) and ".../clientCapabilities" (object),
 *   and may carry ".../clientInfo" (`{ name, version }`). Checked in the Streamable HTTP server's
 *   order: a string version (-32602), a version served statelessly (else -32022 with `data:
 *   { supported, requested }`), then the capabilities and clientInfo (-32602). Methods:
 *   `server/discover`, `tools/list`, `tools/call` (no `ping`). Results carry `resultType:
 *   "complete"`; discover and tools/list also `ttlMs` and `cacheScope: "public"`. The extra tool
 *   `ask_name` asks for a name by MRTR. `initialize` is refused with -32022 naming the versions.
 * - "dual": a request carrying modern `_meta` (and `server/discover`, always) is served as in
 *   "stateless"; `initialize`, and any request without modern `_meta`, as in "handshake".
 *
 * In the stateless era a `notifications/cancelled` for a request whose answer is still held back
 * (a `delay` fault) drops that answer: nothing more is sent for it.
 *
 * With `features` (see `StdioServerOptions.features`) both eras gain what features.ts describes;
 * the stateless era also `subscriptions/listen`, answered on stdout.
 */
export type StdioEra = "handshake" | "stateless" | "dual"

export interface StdioServerOptions {
  readonly faults?: ReadonlyArray<StdioFault>
  /** The `increment` counter is written here (synchronously, before each answer; "0" at startup). */
  readonly counterFile?: string
  /** Every received message appends one line: its method, or "#response", "#invalid-json", "#invalid-utf8", "#not-jsonrpc", "#batch". */
  readonly logFile?: string
  /** What initialize answers; default: the client's version if supported (2024-11-05..2025-11-25), else "2025-06-18". */
  readonly protocolVersion?: string
  /** Additional generated tools "tool-0".."tool-N-1" (default 0). */
  readonly extraTools?: number
  /** tools/list page size, with nextCursor pagination (default: all in one page). */
  readonly pageSize?: number
  /**
   * At start-up, before it reads stdin, the child writes to `file` a JSON object of the values of
   * the environment variables `names` as it was given them (null when unset): how a test shows an
   * environment secret reached the child (read it with `readEnvReport`).
   */
  readonly envReport?: { readonly file: string; readonly names: ReadonlyArray<string> }
  /** Pads the `add` tool's inputSchema description to this many bytes. */
  readonly schemaPadBytes?: number
  /** The protocol era (default "handshake": only the initialize handshake, as before eras existed). */
  readonly era?: StdioEra
  /**
   * The versions the server names: server/discover's supportedVersions and every -32022's
   * data.supported. "stateless" serves all of them statelessly (default ["2026-07-28"]); "dual"
   * serves those that are not handshake versions statelessly, the handshake ones through
   * initialize (default ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]).
   * Unused by "handshake" (except as the default list of an `unsupported-version` fault), as in
   * the Streamable HTTP server.
   */
  readonly supportedVersions?: ReadonlyArray<string>
  /** `ttlMs` of server/discover and tools/list results in the stateless era (default 60000). */
  readonly ttlMs?: number
  /**
   * A request for a method the server does not know gets no answer at all (instead of -32601),
   * as some legacy servers do with `server/discover`: a client probing one must give up after a
   * bounded wait. The arrival is still logged.
   */
  readonly silentOnUnknown?: boolean
  /**
   * The long-lived connection features of features.ts: capabilities; the tools slow_progress,
   * weather, weather_error, link_resource, log, change_tools and flood_notifications after every
   * other tool; resources, resource templates and prompts; logging/setLevel (handshake era), the
   * per-request `_meta` log level and `subscriptions/listen` (stateless era). A request's
   * notifications go on stdout before its answer; list changes and floods go to stdout once
   * initialize was served (handshake era) and to each subscription that agreed to
   * `toolsListChanged`, with its subscriptionId. `notifications/cancelled` naming a request still
   * playing out stops it (no answer); naming a subscription ends it. Default false: none of it.
   */
  readonly features?: boolean
  /** With `features`: how many `test://docs/i` resources are listed (default 3). */
  readonly resources?: number
  /** The tools with a lasting effect of effects.ts (`lookup`, `upsert`, `append`), after the generated tools. Default false. */
  readonly effectTools?: boolean
  /**
   * Events are appended here, one line each, synchronously: `tool NAME` when a tools/call is
   * run (then `identity NAME JSON` when it carried an effect identity), `sent METHOD` when a
   * notification is handed to stdout, `subscription-closed ID` when the client ends a
   * subscription.
   */
  readonly eventsFile?: string
}

export interface StdioServerCommand {
  /** `process.execPath`: node under Node, bun under Bun. */
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Extra environment for the child; the server needs none (empty), merge it with yours or pass it alone. */
  readonly env: Record<string, string>
}

/**
 * Absolute path of the child program (the bundle of stdio/stdioServer.ts: plain ESM JavaScript,
 * `node:` imports only). A function, not a constant: from the sources the first call bundles it,
 * and a program that imports the testkit but spawns no child (the CLI's demo) never pays for that.
 */
export const stdioServerScript = (): string => childProgramPath(STDIO_SERVER_PROGRAM)

const ERAS: ReadonlySet<string> = new Set<StdioEra>(["handshake", "stateless", "dual"])

const isMethodFault = (fault: StdioFault): fault is StdioMethodFault => fault.kind in FAULT_FRAMINGS

const nonNegativeInteger = (value: number): boolean => Number.isSafeInteger(value) && value >= 0
const finiteNonNegative = (value: number): boolean => Number.isFinite(value) && value >= 0

/** Refuses options that could never apply, when the command is built rather than in the child. */
const validate = (options: StdioServerOptions): void => {
  for (
    const [name, value] of [
      ["extraTools", options.extraTools],
      ["pageSize", options.pageSize],
      ["schemaPadBytes", options.schemaPadBytes],
      ["resources", options.resources]
    ] as const
  ) {
    if (value !== undefined && !nonNegativeInteger(value)) throw new RangeError(`stdio server: ${name} must be an integer >= 0`)
  }
  if (options.ttlMs !== undefined && !nonNegativeInteger(options.ttlMs)) throw new RangeError("stdio server: ttlMs must be an integer >= 0")
  if (options.era !== undefined && !ERAS.has(options.era)) throw new RangeError("stdio server: era must be handshake, stateless or dual")
  if (options.supportedVersions !== undefined) {
    if (options.supportedVersions.length === 0 || options.supportedVersions.some((version) => version === "")) {
      throw new RangeError("stdio server: supportedVersions must name at least one version, none of them empty")
    }
  }
  for (const fault of options.faults ?? []) {
    if (isMethodFault(fault)) {
      checkFaultFraming(fault, "stdio")
      validateFault(fault)
    }
    switch (fault.kind) {
      case "exact-size":
        if (fault.chunkDelayMs !== undefined && !finiteNonNegative(fault.chunkDelayMs)) {
          throw new RangeError("exact-size: chunkDelayMs must be a finite number >= 0")
        }
        break
      case "exit":
      case "exit-mid-answer":
        if (fault.code !== undefined && !(Number.isSafeInteger(fault.code) && fault.code >= 0 && fault.code <= 255)) {
          throw new RangeError("exit: code must be an integer 0..255")
        }
        break
      case "linger-after-stdin-close":
        if (!finiteNonNegative(fault.ms)) throw new RangeError(`${fault.kind}: ms must be a finite number >= 0`)
        break
      case "stderr-flood":
        if (!nonNegativeInteger(fault.bytes)) throw new RangeError("stderr-flood: bytes must be an integer >= 0")
        break
      case "banner":
        if (fault.text !== undefined && /[\r\n]/.test(fault.text)) throw new RangeError("banner: text must be one line")
        break
      default:
        break
    }
  }
}

/**
 * How to spawn the stdio test server with these options: `process.execPath` and the script path
 * plus arguments encoding them (`--era E`, `--supported-version V` repeated, `--ttl-ms N`,
 * `--silent-on-unknown`, `--features`, `--resources N`, `--events-file PATH`; `--fault <json>`,
 * repeated; `times: Infinity` travels as null).
 * Throws a RangeError for options that could never apply, a TypeError for a fault kind stdio does
 * not have (faults.ts `FAULT_FRAMINGS`).
 */
export const stdioServerCommand = (options: StdioServerOptions = {}): StdioServerCommand => {
  validate(options)
  const args: Array<string> = [stdioServerScript()]
  const flag = (name: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(name, String(value))
  }
  flag("--counter-file", options.counterFile)
  flag("--log-file", options.logFile)
  flag("--protocol-version", options.protocolVersion)
  flag("--extra-tools", options.extraTools)
  flag("--page-size", options.pageSize)
  flag("--schema-pad-bytes", options.schemaPadBytes)
  flag("--era", options.era)
  for (const version of options.supportedVersions ?? []) args.push("--supported-version", version)
  flag("--ttl-ms", options.ttlMs)
  if (options.silentOnUnknown === true) args.push("--silent-on-unknown")
  if (options.features === true) args.push("--features")
  flag("--resources", options.resources)
  if (options.effectTools === true) args.push("--effect-tools")
  flag("--events-file", options.eventsFile)
  if (options.envReport !== undefined) {
    args.push("--env-report", options.envReport.file)
    for (const name of options.envReport.names) args.push("--env-report-name", name)
  }
  for (const fault of options.faults ?? []) args.push("--fault", JSON.stringify(fault))
  return { command: process.execPath, args, env: {} }
}

export type StdioFixtureOptions = Omit<StdioServerOptions, "counterFile" | "logFile" | "eventsFile">

export interface StdioFixture extends StdioServerCommand, FeatureCounters {
  /** The temporary directory holding the files below. */
  readonly dir: string
  readonly counterFile: string
  readonly logFile: string
  readonly eventsFile: string
  readonly pidFile: string
  /** Executions of the side-effecting `increment` tool (0 before the child started). */
  counter(): number
  /** Messages with that JSON-RPC method that arrived (also "#invalid-json" and the like). */
  rpcCalls(method: string): number
  /** Every arrival, in order. */
  arrivals(): ReadonlyArray<string>
  /** The child's pid once it has started. */
  pid(): number | undefined
  /** The child's pid and start time once it has started: what `isAlive` compares (processIdentity.ts). */
  identity(): ProcessIdentity | undefined
  /**
   * Whether the child is still a live (or unreaped) process: its pid is live and held by the
   * process that started then, not by another that was given the pid since; false before it started.
   */
  isAlive(): boolean
  /** Polls until `pred` holds; rejects after `timeoutMs` (default 5000). */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>
  /** SIGKILLs the child if it is still alive (a safety net; check `isAlive()` first), then removes the directory. */
  cleanup(): void
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

/**
 * What a child started with `envReport` says it was given: each asked name with its value (null
 * when unset); undefined until the child has written the report (or when it is not one).
 */
export const readEnvReport = (file: string): Readonly<Record<string, string | null>> | undefined => {
  const text = readText(file)
  if (text === undefined) return undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined
    const entries = Object.entries(parsed)
    return entries.every(([, value]) => value === null || typeof value === "string")
      ? Object.fromEntries(entries) as Record<string, string | null>
      : undefined
  } catch {
    return undefined
  }
}

/**
 * A temporary directory, the command to spawn the server with (a counter file, an arrival log and
 * a pid file are added to the options), and readers for what the child leaves there.
 */
export const makeStdioFixture = (options: StdioFixtureOptions = {}): StdioFixture => {
  const dir = mkdtempSync(join(tmpdir(), "phasebound-stdio-"))
  const counterFile = join(dir, "counter")
  const logFile = join(dir, "arrivals.log")
  const eventsFile = join(dir, "events.log")
  const pidFile = join(dir, "pid")
  const command = stdioServerCommand({
    ...options,
    counterFile,
    logFile,
    eventsFile,
    faults: [...(options.faults ?? []), { kind: "write-pid", path: pidFile }]
  })

  const arrivals = (): ReadonlyArray<string> => (readText(logFile) ?? "").split("\n").filter((line) => line !== "")
  const eventLines = (): ReadonlyArray<string> => (readText(eventsFile) ?? "").split("\n")
  const events = (line: string): number => eventLines().filter((entry) => entry === line).length
  const eventsStartingWith = (prefix: string): number => eventLines().filter((entry) => entry.startsWith(prefix)).length
  const sent = (method: string): number => events(`sent ${method}`)
  const identity = (): ProcessIdentity | undefined => parseIdentity(readText(pidFile))
  const pid = (): number | undefined => identity()?.pid
  const isAlive = (): boolean => {
    const current = identity()
    return current !== undefined && isRunning(current)
  }

  return {
    ...command,
    dir,
    counterFile,
    logFile,
    eventsFile,
    pidFile,
    counter: () => {
      const value = Number.parseInt(readText(counterFile) ?? "0", 10)
      return Number.isSafeInteger(value) ? value : 0
    },
    rpcCalls: (method) => arrivals().filter((line) => line === method).length,
    arrivals,
    toolCalls: (name) => events(`tool ${name}`),
    effectIdentities: (name) =>
      eventLines().flatMap((line) => {
        const prefix = `identity ${name} `
        if (!line.startsWith(prefix)) return []
        const identity: unknown = JSON.parse(line.slice(prefix.length))
        return typeof identity === "string" ? [identity] : []
      }),
    notificationsSent: sent,
    progressSent: () => sent("notifications/progress"),
    logMessagesSent: () => sent("notifications/message"),
    listChangedSent: () => sent("notifications/tools/list_changed"),
    subscriptionsClosed: () => eventsStartingWith("subscription-closed "),
    timelinesStopped: () => eventsStartingWith("timeline-stopped "),
    pid,
    identity,
    isAlive,
    waitFor: async (pred, timeoutMs = 5000) => {
      const deadline = Date.now() + timeoutMs
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`stdio fixture: condition not met within ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
    cleanup: () => {
      const current = pid()
      if (current !== undefined && isAlive()) {
        try {
          process.kill(current, "SIGKILL")
        } catch {
          // already gone
        }
      }
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
    }
  }
}
