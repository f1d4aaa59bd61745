/**
 * The phasebound CLI qualification, run by `node qualify-cli.mjs` inside the fresh project where
 * the packed packages were installed (src/run.ts bundles it with esbuild, every package import
 * left external). It starts @phasebound/testkit servers
 * (the installed package) and drives the CLI as a subprocess:
 *
 * - the single executable compiled with `bun build --compile` from the INSTALLED package's bin
 *   (every scenario and the whole CLI family below);
 * - the installed bin under `node` and under `bun` (a smoke subset and a slice of the family).
 *
 * Two parts, as in qualify.mjs:
 *
 * - The CLI family (`cliFamily`): the contract suite's rows (@phasebound/testkit/contract: one
 *   server per row, Streamable HTTP with JSON and SSE answers in both eras, legacy HTTP+SSE,
 *   stdio in both eras) and its shared faults (stall, never-ending answer, one byte over the
 *   ceiling, close and TCP reset mid-answer, a refusal echoing every secret, a wrong id), each
 *   at the call (`phasebound call`) and at discovery (`phasebound tools`), with the contract's
 *   canaries: URL userinfo and query, the credential headers, a `${VAR}` header (HTTP) or an
 *   `mcpServers` config entry's env (stdio). Each run must leave one parseable record with the
 *   fields `expectedFailure` gives, the exit code the README's table gives for its tag, the
 *   limits of the flags, the tool run exactly once (call) or never (discovery), no stdio child
 *   left, and no string of the contract's FORBIDDEN on stdout or stderr. Cases run 4 at a time.
 * - Scenarios of the CLI alone: results and exit codes (0, 1, 2, 3, 7), the 2026-07-28 wire and
 *   negotiation, SIGINT (exit 130, `Interrupted`, released), `${VAR}` headers, a foreign legacy
 *   endpoint, an injected header, a spawn failure, an initialize never answered, release at exit.
 *
 * A stdio child is checked gone ONCE, right after the CLI exited: the CLI awaits the child's exit
 * (the client's bounded shutdown) before it exits itself.
 *
 * Arguments: --compiled <path> --bin <installed dist/bin.js> --bun <bun>. Like qualify.ts it
 * prints a table and the testkit's report line (`formatReport`), never calls process.exit, and
 * sets process.exitCode on failure.
 */
import { spawn } from "node:child_process"
import { request as httpRequest } from "node:http"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Testkit from "@phasebound/testkit"
import * as Contract from "@phasebound/testkit/contract"
import { Layer } from "effect"
import { check, fail, runScenario } from "./harness.js"

const { CANARIES, CANARY_ENV, CANARY_HEADERS, FORBIDDEN, withCanaries, withoutPublicVocabulary } = Contract

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const compiled = arg("--compiled")
const bin = arg("--bin")
const bunPath = arg("--bun")

const DEADLINE_MS = 500
/** From initialize's arrival at the server to the CLI's exit: deadline, release, process exit. */
const DEADLINE_MAX_MS = 1_500
/** After SIGINT, the CLI has exited within this (it releases what it holds first). */
const SIGINT_EXIT_MS = 3_000
const RUN_TIMEOUT_MS = 20_000
const STATELESS = Testkit.MODERN_PROTOCOL_VERSION
/** What a handshake-era testkit server answers initialize with, for a client that asks the latest. */
const HANDSHAKE_LATEST = "2025-11-25"

/** The exit code of each record tag (README, "The CLI"). */
const EXIT_CODES: Readonly<Record<string, number>> = {
  InvalidOption: 2,
  Unauthorized: 3,
  Forbidden: 3,
  AuthorizationFailed: 3,
  DeadlineExceeded: 4,
  ByteCeilingExceeded: 5,
  LimitExceeded: 5,
  RemoteRefusal: 6,
  ProtocolViolation: 7,
  TransportFailure: 7,
  UpstreamFailure: 7,
  SessionExpired: 7,
  HandlerFailed: 7,
  InternalError: 8,
  Interrupted: 130
}

// --- harness -----------------------------------------------------------------------------------

const results: Array<Testkit.CheckResult> = []
/** The stdio children the CLI runs spawned, by pid, with their start times (as in qualify.ts). */
const children = new Map<number, Testkit.ProcessIdentity>()
const noteChild = (identity: Testkit.ProcessIdentity | undefined) => {
  if (identity !== undefined) children.set(identity.pid, identity)
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
/** Polls until `predicate` holds (a sync point: an event that must come). */
const until = async (predicate: () => boolean, what: string, timeoutMs = 5_000) => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) fail(`not within ${timeoutMs} ms: ${what}`)
    await sleep(5)
  }
}
const inRange = (ms: number, min: number, max: number, what: string) => check(ms >= min && ms <= max, `${what} after ${ms} ms, outside [${min}, ${max}] ms`)

const scenario = async (name: string, body: () => unknown, timeoutMs?: number) => {
  results.push(await runScenario(name, body, timeoutMs ?? 30_000))
}
/** Runs independent scenarios `concurrency` at a time; their rows keep the given order. */
interface CliCase {
  readonly name: string
  readonly timeoutMs: number
  readonly run: () => Promise<unknown>
}
const pool = async (scenarios: ReadonlyArray<CliCase>, concurrency: number) => {
  const rows = new Array<Testkit.CheckResult>(scenarios.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < scenarios.length; i = next++) {
      const { name, run, timeoutMs } = scenarios[i]!
      rows[i] = await runScenario(name, run, timeoutMs)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, scenarios.length) }, worker))
  for (const row of rows) results.push(row)
}

/** POSIX single-quoting, for `--stdio 'command args...'`. */
const shellQuote = (words: ReadonlyArray<string>) => words.map((w) => (/^[A-Za-z0-9_/.,:=+@%-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)).join(" ")

/**
 * Runs the CLI once. `sigintWhen`: a predicate polled every 5 ms; when it holds, SIGINT is sent.
 * `arrivedWhen`: a predicate whose first truth is timed (e.g. the call reached the server), so
 * that the time from there to the exit can be judged.
 */
interface Target {
  readonly label: string
  readonly command: string | undefined
  readonly prefix: ReadonlyArray<string | undefined>
  readonly full: boolean
}
interface RunOptions {
  readonly env?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
  readonly sigintWhen?: () => boolean
  readonly arrivedWhen?: () => boolean
}
interface CliRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly killed: boolean
  readonly timeoutMs: number
  readonly ms: number
  readonly sigintToExitMs: number | undefined
  readonly arrivalToExitMs: number | undefined
}
/** A failure record the CLI printed, as its public fields are read here. */
type CliRecord = { readonly [field: string]: any }

const runCli = (target: Target, args: ReadonlyArray<string>, options: RunOptions = {}) =>
  new Promise<CliRun>((resolve) => {
    const started = Date.now()
    const child = spawn(target.command ?? "", [...(target.prefix as ReadonlyArray<string>), ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let killed = false
    let sigintAt: number | undefined
    let arrivedAt: number | undefined
    let exited = false
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk))
    const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS
    const timer = setTimeout(() => {
      killed = true
      child.kill("SIGKILL")
    }, timeoutMs)
    const watch = async () => {
      while (!exited) {
        if (arrivedAt === undefined && options.arrivedWhen?.()) arrivedAt = Date.now()
        if (sigintAt === undefined && options.sigintWhen?.()) {
          sigintAt = Date.now()
          child.kill("SIGINT")
        }
        await sleep(5)
      }
    }
    if (options.sigintWhen !== undefined || options.arrivedWhen !== undefined) void watch()
    child.on("error", (error) => {
      stderr += `spawn error: ${error.message}`
    })
    child.on("close", (code, signal) => {
      exited = true
      clearTimeout(timer)
      const now = Date.now()
      resolve({
        code,
        signal,
        stdout,
        stderr,
        killed,
        timeoutMs,
        ms: now - started,
        sigintToExitMs: sigintAt === undefined ? undefined : now - sigintAt,
        arrivalToExitMs: arrivedAt === undefined ? undefined : now - arrivedAt
      })
    })
  })

/** How a check may name a forbidden string: a canary by its role, never its value. */
const label = (forbidden: string) => {
  const role = Object.entries(CANARIES).find(([, value]) => value === forbidden)
  return role === undefined ? JSON.stringify(forbidden) : `the ${role[0]} canary`
}
/** A run exited by itself. */
const exitedByItself = (r: CliRun) => check(!r.killed, `had to be killed after ${r.timeoutMs} ms`)
/** A successful run: it exited by itself, and no canary in anything it printed. */
const basics = (r: CliRun) => {
  exitedByItself(r)
  for (const canary of Object.values(CANARIES)) check(!(r.stdout + r.stderr).includes(canary), `${label(canary)} in the CLI's output`)
}
/** Success: the exit code, JSON on stdout, nothing on stderr. */
const expectOk = (r: CliRun, code = 0): CliRecord => {
  basics(r)
  check(r.stderr === "", `stderr: ${r.stderr.slice(0, 200)}`)
  check(r.code === code, `exit ${r.code ?? r.signal}, expected ${code}`)
  try {
    return JSON.parse(r.stdout)
  } catch {
    return fail(`stdout is not JSON: ${r.stdout.slice(0, 120)}`)
  }
}
/** `text` without `part` (raw and JSON-escaped). */
const without = (text: string, part: string | undefined) =>
  part === undefined || part.length === 0 ? text : text.split(part).join("").split(JSON.stringify(part).slice(1, -1)).join("")
/**
 * No string of the contract's FORBIDDEN (canaries, URL parts, header names) anywhere the CLI
 * printed, and no stack. The one latitude is the contract's redaction family's: `remoteMessage`
 * is the server's text with the configured secrets redacted and URLs removed, so what the
 * server wrote that the CLI was never told is secret (`unknowable`: a header name in prose, the
 * canaries of another transport) may stay in it, and only in it.
 */
const expectNothingForbidden = (r: CliRun, record: CliRecord | undefined, unknowable: ReadonlySet<string> = new Set()) => {
  const remoteMessage = typeof record?.remoteMessage === "string" ? record.remoteMessage : undefined
  const ours = withoutPublicVocabulary(without(r.stdout + r.stderr, remoteMessage))
  for (const forbidden of [...FORBIDDEN, "stack"]) check(!ours.includes(forbidden), `the CLI printed ${label(forbidden)}`)
  if (remoteMessage !== undefined) {
    for (const forbidden of FORBIDDEN) {
      if (!unknowable.has(forbidden)) check(!remoteMessage.includes(forbidden), `remoteMessage contains ${label(forbidden)}`)
    }
  }
}
/**
 * Failure: nothing on stdout, exactly one JSON record `{"error":{...}}` on stderr; returns the
 * record. What it may not contain is `expectNothingForbidden`'s to judge (every caller does).
 */
const recordOf = (r: CliRun): CliRecord => {
  exitedByItself(r)
  const lines = r.stderr.split("\n").filter((l) => l !== "")
  const [line] = lines
  check(lines.length === 1 && line !== undefined, `${lines.length} stderr lines, expected one record: ${r.stderr.slice(0, 200)}`)
  let record: CliRecord | null | undefined
  try {
    record = (JSON.parse(line) as { error?: CliRecord | null }).error
  } catch {
    return fail(`stderr is not a JSON record: ${line.slice(0, 120)}`)
  }
  if (record === null || typeof record !== "object") return fail("no error object in the record")
  check(r.stdout === "", `stdout on failure: ${r.stdout.slice(0, 120)}`)
  return record
}
/** A failure record of `tag` with the exit code the README gives it, clean, and these fields. */
const expectRecord = (r: CliRun, tag: string, fields: Readonly<Record<string, unknown>> = {}, unknowable?: ReadonlySet<string>) => {
  const record = recordOf(r)
  check(record.tag === tag, `tag ${record.tag}, expected ${tag} (exit ${r.code ?? r.signal})`)
  check(r.code === EXIT_CODES[tag], `exit ${r.code ?? r.signal}, expected ${EXIT_CODES[tag]} (${record.tag})`)
  expectNothingForbidden(r, record, unknowable)
  for (const [key, value] of Object.entries(fields)) {
    const actual = key === "maxBytes" || key === "timeoutMs" ? record.limits?.[key] : record[key]
    check(actual === value, `${key}=${JSON.stringify(actual)}, expected ${JSON.stringify(value)} (${record.tag})`)
  }
  return record
}
const brief = (r: CliRun, record?: CliRecord) =>
  `exit ${r.code}${
    record
      ? ` ${record.tag}${record.stage ? ` ${record.stage}` : ""}${record.reason ? ` ${record.reason}` : ""}${
        record.observedBytes !== undefined ? ` observed=${record.observedBytes}` : ""
      }`
      : ""
  }, ${r.ms} ms`

const PROBE_HEADER = "x-qualify-probe"
/**
 * One request of the qualification's own to `server`, on a connection of its own (closed after),
 * answered: a later event than anything an exited CLI sent it.
 */
const probe = (server: { readonly url: string }) =>
  new Promise<void>((resolve, reject) => {
    const request = httpRequest(server.url, {
      method: "POST",
      agent: false,
      headers: { [PROBE_HEADER]: "1", connection: "close", "content-type": "application/json", accept: "application/json, text/event-stream" }
    }, (response) => {
      response.resume()
      response.on("end", () => resolve())
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(JSON.stringify({ jsonrpc: "2.0", id: "probe", method: "ping" }))
  })

/** Servers for one scenario, closed after it. */
interface Closable {
  close(): Promise<void>
}
const withServers = async <S extends ReadonlyArray<Closable>, A>(
  starts: { readonly [K in keyof S]: () => Promise<S[K]> },
  body: (...servers: S) => Promise<A>
): Promise<A> => {
  const servers: Array<Closable> = []
  try {
    for (const start of starts as ReadonlyArray<() => Promise<Closable>>) servers.push(await start())
    return await body(...(servers as unknown as S))
  } finally {
    await Promise.all(servers.map((s) => s.close()))
  }
}
const streamable = (options?: Testkit.TestServerOptions) => () => Testkit.startServer(options)
const legacy = (options?: Testkit.LegacyServerOptions) => () => Testkit.startLegacyServer(options)
/** A server of the stateless era only (2026-07-28): no initialize, no session, no GET stream, no DELETE. */
const stateless = (options?: Testkit.TestServerOptions) => () => Testkit.startServer({ era: "stateless", ...options })

const withFixture = async <A>(options: Testkit.StdioFixtureOptions, body: (f: Testkit.StdioFixture, line: string) => Promise<A>): Promise<A> => {
  const f = Testkit.makeStdioFixture(options)
  try {
    return await body(f, shellQuote([f.command, ...f.args]))
  } finally {
    noteChild(f.identity())
    f.cleanup()
  }
}
/**
 * No stdio child outlives the CLI run that spawned it. Checked ONCE, right after the CLI exited:
 * the CLI awaited the child's exit before exiting itself, so there is nothing to wait for.
 */
const childGone = (f: Testkit.StdioFixture) => {
  noteChild(f.identity())
  check(!f.isAlive(), "the stdio child is still alive after the CLI exited")
}

/** The canary headers as --header flags, plus a `${VAR}` header read from CANARY_ENV. */
const ENV_HEADER = "X-Env-Token"
const ENV_VARIABLE = Object.keys(CANARY_ENV)[0] ?? ""
const secretHeaderFlags = (headers: Readonly<Record<string, string>> = CANARY_HEADERS) => [
  ...Object.entries(headers).flatMap(([name, value]) => ["--header", `${name}: ${value}`]),
  "--header",
  `${ENV_HEADER}: \${${ENV_VARIABLE}}`
]
/** The secrets reached the configured origin: the headers (the `${VAR}` one expanded) and the query. */
const expectDelivered = (request: Testkit.RecordedHttpRequest | undefined) => {
  check(request?.headers["authorization"] === `Bearer ${CANARIES.header}`, "the Authorization header did not reach the configured origin")
  check(request?.headers["x-api-key"] === CANARIES.header, "the X-Api-Key header did not reach the configured origin")
  check(request?.headers[ENV_HEADER.toLowerCase()] === CANARIES.env, "the ${VAR} header did not reach the configured origin")
  check(request?.url.includes(`token=${CANARIES.query}`) === true, "the query did not reach the configured origin")
}

// --- the CLI family: the contract's rows and shared faults, through the CLI --------------------

/**
 * The ceiling of the site's phase (the contract's), and its deadline (the contract's policy: 1 s
 * where the deadline ends the request, 20 s where only the fault may). The baseline (the other
 * phase, and the bound of a shared stream's frames that belong to no request) is 64 KiB: the
 * limits in the record then show that the site's own flags were applied.
 */
const CEILING = 4_000
const BASELINE_MAX_BYTES = "64KiB"
/**
 * A deadline that ends a discovery over stdio includes the child's start-up (spawn, runtime
 * start, initialize): generous, so that a loaded machine cannot move the deadline to an earlier
 * stage than the one the fault is at (no timing is asserted on it).
 */
const STDIO_DISCOVERY_DEADLINE_MS = 5_000
const budgetFor = (row: ContractRow, site: Contract.Site, expected: Contract.ExpectedFailure) =>
  expected._tag !== "DeadlineExceeded" ? 20_000 : site === "discovery" && row.transport === "stdio" ? STDIO_DISCOVERY_DEADLINE_MS : 1_000

/** A stub client under test: the rows only need `httpClients` and `layer` (the CLI has its own HTTP client). */
const contractRows = Contract.rows({ httpClients: ["fetch"], layer: () => Layer.empty } as unknown as Contract.ClientUnderTest<never>)
type ContractRow = (typeof contractRows)[number]
/** One row per server of the table. */
const familyRows = contractRows.filter((row, i) => contractRows.findIndex((other) => other.server === row.server) === i)

/**
 * A URL of the row's kind with the canaries in it, for a refusal to echo (the fault is scripted
 * before the server listens; the userinfo and query are the secrets, and URLs are removed).
 */
const echoedUrl = (row: ContractRow) => (row.transport === "legacy-sse" ? "http://127.0.0.1:3000/sse" : "http://127.0.0.1:3000/mcp")

const familyFaults = (row: ContractRow) => {
  const refusal = Contract.echoingRefusal(echoedUrl(row))
  const all: ReadonlyArray<readonly [string, Contract.ContractFault]> = [
    ["a stall", { kind: "stall" }],
    ["a never-ending answer", { kind: "never-ending" }],
    [`an answer one byte over the ceiling (${CEILING + 1} B)`, { kind: "exact-size", bytes: CEILING + 1 }],
    ["a close mid-answer", { kind: "close-mid-answer" }],
    ["a TCP reset mid-answer", { kind: "reset-mid-answer" }],
    ["a refusal echoing every secret", { kind: "refusal", code: refusal.code, message: refusal.message, data: refusal.data }],
    ["an answer with a wrong id", { kind: "wrong-id" }]
  ]
  return all.filter(([, fault]) => row.supports(fault.kind))
}

/**
 * What a server may write in a refusal that this CLI run was never told is secret (the contract's
 * redaction family's rule): over HTTP the header name in prose (the env canary is configured here,
 * as the `${VAR}` header); for a child, the canaries of HTTP and the header names.
 */
const unknowableFor = (row: ContractRow) =>
  new Set(
    row.transport === "stdio"
      ? [CANARIES.header, CANARIES.user, CANARIES.password, CANARIES.query, "Bearer", "x-api-key"]
      : ["x-api-key"]
  )

/** The stdio child's identity (pid and start time), from the pid file the row's fixture has it write. */
const stdioChild = (endpoint: { readonly args: ReadonlyArray<string> }) => {
  const i = endpoint.args.findIndex((word, at) => word === "--fault" && (JSON.parse(endpoint.args[at + 1] ?? "{}") as { kind?: string }).kind === "write-pid")
  if (i === -1) fail("the stdio row's command writes no pid file")
  const path = (JSON.parse(endpoint.args[i + 1] ?? "{}") as { path: string }).path
  let text: string | undefined
  try {
    text = readFileSync(path, "utf8")
  } catch {
    text = undefined
  }
  return Testkit.parseIdentity(text)
}

/** One case: the row's server with the fault at `site`, the CLI run against it with canaries. */
const familyCase = (target: Target, row: ContractRow, site: Contract.Site, faultName: string, fault: Contract.ContractFault): CliCase => ({
  name: `${target.label}: contract[cli] ${row.server}: \`${site === "call" ? "call" : "tools"}\` meets ${faultName}: the record and exit code the rules give, ${
    site === "call" ? "run once" : "no tool run"
  }, no secret printed`,
  timeoutMs: 45_000,
  run: async () => {
    const expected = Contract.expectedFailure(row, site, fault)
    const timeoutMs = budgetFor(row, site, expected)
    const budget = [
      "--max-bytes",
      BASELINE_MAX_BYTES,
      ...(site === "call"
        ? ["--call-timeout", `${timeoutMs}ms`, "--call-max-bytes", String(CEILING)]
        : ["--discovery-timeout", `${timeoutMs}ms`, "--discovery-max-bytes", String(CEILING)])
    ]
    const peer = await row.start({ faults: [{ site, fault }], canaries: true })
    const dir = mkdtempSync(join(tmpdir(), "phasebound-cli-contract-"))
    try {
      const endpoint = peer.endpoint
      let where: ReadonlyArray<string>
      if (endpoint.kind === "http") {
        where = [...secretHeaderFlags(endpoint.headers), "--transport", endpoint.transport, endpoint.url]
      } else {
        // An mcpServers entry: the child's env (with the env canary) is the config's.
        const config = join(dir, "mcp.json")
        writeFileSync(config, JSON.stringify({ mcpServers: { contract: { command: endpoint.command, args: endpoint.args, env: endpoint.env } } }))
        where = ["--config", config, "contract"]
      }
      const args = site === "call" ? ["call", "--json", ...budget, ...where, "increment"] : ["tools", "--json", ...budget, ...where]
      const r = await runCli(target, args, { env: CANARY_ENV, timeoutMs: 30_000 })
      // The CLI has exited: the child it spawned (it writes its pid file first thing, so every
      // run that spawned it has one) must be gone already (checked once).
      if (endpoint.kind === "stdio") {
        const child = stdioChild(endpoint)
        if (child === undefined) return fail("the stdio child left no pid file: was it spawned?")
        noteChild(child)
        check(!Testkit.isRunning(child), "the stdio child is still alive after the CLI exited")
      }
      const record = recordOf(r)
      const fields: Readonly<Record<string, unknown>> = {
        tag: expected._tag,
        ...(expected.reason === undefined ? {} : { reason: expected.reason }),
        ...(expected.code === undefined ? {} : { code: expected.code }),
        outcome: expected.outcome,
        stage: expected.stage,
        phase: expected.phase,
        retryable: expected.retryable
      }
      for (const [key, value] of Object.entries(fields)) {
        check(record[key] === value, `${key}=${JSON.stringify(record[key])}, expected ${JSON.stringify(value)} (${brief(r, record)})`)
      }
      check(r.code === EXIT_CODES[expected._tag], `exit ${r.code ?? r.signal}, expected ${EXIT_CODES[expected._tag]} for ${expected._tag}`)
      // The flags of the site's phase are the limits in force.
      check(
        record.limits?.timeoutMs === timeoutMs && record.limits?.maxBytes === CEILING,
        `limits ${JSON.stringify(record.limits)}, expected ${timeoutMs} ms / ${CEILING} B`
      )
      if (expected._tag === "ByteCeilingExceeded") {
        const exact = fault.kind === "exact-size"
        check(
          exact ? record.observedBytes === fault.bytes : record.observedBytes > CEILING,
          `observedBytes ${record.observedBytes}, expected ${exact ? fault.bytes : `> ${CEILING}`}`
        )
      }
      if (expected._tag === "RemoteRefusal") {
        check(
          typeof record.remoteMessage === "string" && record.remoteMessage.includes("[redacted]") && record.remoteMessage.includes("[url]"),
          "remoteMessage shows no [redacted] and [url] where the secrets and the URL were"
        )
      }
      expectNothingForbidden(r, record, unknowableFor(row))
      if (site === "call") {
        check(peer.counter() === 1, `the tool ran ${peer.counter()} times, expected once`)
        check(peer.calls("tools/call") === 1, `tools/call arrived ${peer.calls("tools/call")} times, expected once`)
      } else {
        check(peer.counter() === 0, `a failed discovery ran the tool ${peer.counter()} times`)
        check(peer.calls("tools/list") === 1, `tools/list arrived ${peer.calls("tools/list")} times, expected once`)
      }
      if (endpoint.kind === "http") {
        const received = peer.receivedSecrets()
        check(
          received.includes(`Bearer ${CANARIES.header}`) && received.some((value) => value.includes(`token=${CANARIES.query}`)),
          "the canaries did not reach the configured origin"
        )
      }
      return brief(r, record)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await peer.close()
    }
  }
})

/** Every case of the family for `target`, or those `only` selects (server, site, fault kind). */
const cliFamily = (target: Target, only?: ReadonlyArray<readonly [string, Contract.Site, string]>) =>
  familyRows.flatMap((row) =>
    familyFaults(row).flatMap(([faultName, fault]) =>
      ["call", "discovery"]
        .filter((site): site is Contract.Site =>
          only === undefined || only.some(([server, s, kind]) => server === row.server && s === site && kind === fault.kind)
        )
        .map((site) => familyCase(target, row, site, faultName, fault))
    )
  )
/** The slice of the family the node and bun bins run: one case per row kind, each exit code of a fault. */
const FAMILY_SMOKE: ReadonlyArray<readonly [string, Contract.Site, string]> = [
  ["streamable-json/2025", "call", "exact-size"],
  ["streamable-sse/2026", "call", "refusal"],
  ["legacy-sse/2024", "discovery", "close-mid-answer"],
  ["stdio/2026", "discovery", "stall"]
]
const FAMILY_CONCURRENCY = 4

// --- scenarios of the CLI alone ----------------------------------------------------------------

const cliScenarios = async (target: Target, full: boolean) => {
  const C = (name: string, body: () => Promise<unknown>, timeoutMs?: number) => scenario(`${target.label}: ${name}`, body, timeoutMs)
  const cli = (args: ReadonlyArray<string>, options?: RunOptions) => runCli(target, args, options)

  await C("tools <url> lists the tools (exit 0, JSON, nothing on stderr)", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["tools", "--json", srv.url])
      const out = expectOk(r)
      check(out.tools?.map((t: { name: string }) => t.name).join() === "add,echo,increment", `tools ${JSON.stringify(out).slice(0, 100)}`)
      return `${r.ms} ms`
    }))
  await C("call <url> increment: exit 0, called once, the session DELETEd", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["call", "--json", srv.url, "increment", "--args", "{}"])
      const out = expectOk(r)
      check(out.content?.[0]?.text === "1", `result ${JSON.stringify(out).slice(0, 100)}`)
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
      return `${r.ms} ms`
    }))
  await C("call with isError: true exits 1 with the result on stdout", () =>
    withServers([streamable()], async (srv) => {
      const out = expectOk(await cli(["call", "--json", srv.url, "add", "--args", `{"a":"x","b":1}`]), 1)
      check(out.isError === true, "isError")
    }))
  await C("an invalid option exits 2 (InvalidOption) and sends nothing", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["tools", "--json", "--timeout", "0s", srv.url])
      const record = expectRecord(r, "InvalidOption", { option: "--timeout" })
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
      return brief(r, record)
    }))
  await C("stdio: call over --stdio, exit 0; the child is gone when the CLI exits", () =>
    withFixture({}, async (f, line) => {
      const out = expectOk(await cli(["call", "--json", "--stdio", line, "add", "--args", `{"a":20,"b":22}`]))
      check(out.content?.[0]?.text === "42", "add")
      childGone(f)
    }))
  await C("SIGINT during a call: exit 130 (Interrupted), the server sees the request closed, called once", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/call", kind: "headers-never-sent" })
      const r = await cli(["call", "--json", "--call-timeout", "30s", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, "Interrupted", { stage: "call" })
      check(r.sigintToExitMs !== undefined && r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C(
    "exit 7 (UpstreamFailure): a 500 echoing the canaries of --header, ${VAR}, URL userinfo and query prints none; they reached the origin",
    () =>
      withServers([streamable()], async (srv) => {
        const echo = `at ${CANARIES.header} ${CANARIES.query} ${CANARIES.env} ${CANARIES.password}`
        srv.script({ on: "tools/call", kind: "status", status: 500, body: echo })
        const r = await cli(["call", "--json", ...secretHeaderFlags(), withCanaries(srv.url), "increment"], { env: CANARY_ENV })
        const record = expectRecord(r, "UpstreamFailure", { status: 500, stage: "call" })
        expectDelivered(srv.requests.find((q) => q.rpcMethod === "tools/call"))
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return brief(r, record)
      })
  )

  // The stateless era (2026-07-28): every target.
  await C("2026 call <url> increment: exit 0, called once with _meta and the Mcp-* headers; no DELETE", () =>
    withServers([stateless()], async (srv) => {
      const r = await cli(["call", "--json", srv.url, "increment", "--args", "{}"])
      const out = expectOk(r)
      check(out.content?.[0]?.text === "1", `result ${JSON.stringify(out).slice(0, 100)}`)
      check(srv.counter() === 1 && srv.deletes() === 0, `counter ${srv.counter()}, ${srv.deletes()} DELETEs`)
      const call = srv.requests.find((q) => q.rpcMethod === "tools/call")
      check(call?.meta?.[Testkit.META_PROTOCOL_VERSION] === STATELESS, "no _meta revision")
      check(
        call.headers["mcp-protocol-version"] === STATELESS && call.headers["mcp-method"] === "tools/call" && call.headers["mcp-name"] === "increment",
        "the Mcp-* headers"
      )
      return `${r.ms} ms`
    }))
  await C(
    "2026 discover --json: protocolVersion 2026-07-28; stages discover and list-tools, era stateless over streamable-http",
    () =>
      withServers([stateless()], async (srv) => {
        const r = await cli(["discover", "--json", srv.url])
        const out = expectOk(r)
        check(out.protocolVersion === STATELESS && out.transport === "streamable-http", `${out.protocolVersion} over ${out.transport}`)
        const stages = (out.stages ?? []).map((s: CliRecord) => `${s.stage}:${s.era}:${s.transport}:${s.outcome}`).join()
        check(stages === "discover:stateless:streamable-http:ok,list-tools:stateless:streamable-http:ok", `stages ${stages}`)
        return `${r.ms} ms`
      })
  )
  await C(
    "2026 --revision 2026-07-28 against a handshake-era server: exit 6 (RemoteRefusal) at stage discover; initialize never sent",
    () =>
      withServers([streamable()], async (srv) => {
        const r = await cli(["tools", "--json", "--revision", STATELESS, srv.url])
        const record = expectRecord(r, "RemoteRefusal", { stage: "discover", phase: "discovery" })
        check(srv.rpcCalls("initialize") === 0 && srv.requests.length === 1, `${srv.requests.length} requests, initialize ${srv.rpcCalls("initialize")}`)
        return brief(r, record)
      })
  )
  await C("2026 --revision bogus: exit 2 (InvalidOption --revision); nothing sent", () =>
    withServers([stateless()], async (srv) => {
      const r = await cli(["tools", "--json", "--revision", "bogus", srv.url])
      const record = expectRecord(r, "InvalidOption", { option: "--revision", stage: "config" })
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
      return brief(r, record)
    }))
  await C(
    `2026 a tools/call past --call-timeout ${DEADLINE_MS}ms (exit 4): its stream is closed, no notifications/cancelled over HTTP`,
    () =>
      withServers([stateless()], async (srv) => {
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const r = await cli(["call", "--json", "--call-timeout", `${DEADLINE_MS}ms`, srv.url, "increment"])
        const record = expectRecord(r, "DeadlineExceeded", { stage: "call", phase: "call", timeoutMs: DEADLINE_MS })
        await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
        check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return brief(r, record)
      })
  )
  if (!full) return

  // Caller abort (SIGINT) against deadline.
  await C("SIGINT during discovery: exit 130, the session is DELETEd, nothing called", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/list", kind: "headers-never-sent" })
      const r = await cli(["call", "--json", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/list") === 1 })
      const record = expectRecord(r, "Interrupted")
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
      check(srv.rpcCalls("tools/call") === 0, "a call was sent")
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C("SIGINT during a legacy call: exit 130, the GET stream closed, called once", () =>
    withServers([legacy()], async (srv) => {
      srv.script({ on: "tools/call", kind: "no-response" })
      const r = await cli(["call", "--json", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, "Interrupted")
      check(r.sigintToExitMs !== undefined && r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
      await until(() => srv.closedStreams() === 1, "the server sees the GET stream closed")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C(
    "SIGINT during a stdio call: exit 130; the child is gone",
    () =>
      withFixture({ faults: [{ on: "tools/call", kind: "never-answer" }] }, async (f, line) => {
        const r = await cli(["call", "--json", "--stdio", line, "increment"], { sigintWhen: () => f.rpcCalls("tools/call") === 1 })
        const record = expectRecord(r, "Interrupted")
        check(r.sigintToExitMs !== undefined && r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
        childGone(f)
        check(f.counter() === 1, `counter ${f.counter()}`)
        return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
      })
  )
  await C(
    "SIGINT with a stdio child that ignores SIGTERM: exit 130; the child is gone",
    () =>
      withFixture({ faults: [{ kind: "ignore-sigterm" }, { on: "tools/call", kind: "never-answer" }] }, async (f, line) => {
        const r = await cli(["call", "--json", "--stdio", line, "increment"], { sigintWhen: () => f.rpcCalls("tools/call") === 1 })
        const record = expectRecord(r, "Interrupted")
        childGone(f)
        return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
      })
  )

  // The exit codes of failures outside the contract's shared faults (HTTP statuses), with the
  // canaries: --header values, a ${VAR} header, URL userinfo and query.
  const echo = `Bearer ${CANARIES.header} env ${CANARIES.env} at ${withCanaries("http://127.0.0.1/mcp")}`
  const statuses = [
    ["a 401", { kind: "status", status: 401, body: echo }, "Unauthorized", "not-applied"],
    ["a 403", { kind: "status", status: 403, body: echo }, "Forbidden", "not-applied"],
    ["a 502", { kind: "status", status: 502, body: echo }, "UpstreamFailure", "unknown"]
  ] as const
  for (const [name, fault, tag, outcome] of statuses) {
    await C(
      `exit ${EXIT_CODES[tag]} (${tag}): ${name} echoing the canaries prints none; they reached the configured origin; called once`,
      () =>
        withServers([streamable()], async (srv) => {
          srv.script({ on: "tools/call", ...fault })
          const r = await cli(["call", "--json", ...secretHeaderFlags(), withCanaries(srv.url), "increment"], { env: CANARY_ENV })
          const record = expectRecord(r, tag, { status: fault.status, stage: "call", outcome, retryable: false })
          expectDelivered(srv.requests.find((q) => q.rpcMethod === "tools/call"))
          check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
          return brief(r, record)
        })
    )
  }
  await C(
    "credentials: a foreign legacy endpoint: exit 7 (ProtocolViolation), nothing reaches the foreign origin",
    () =>
      withServers([legacy(), streamable()], async (srv, foreign) => {
        srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
        const r = await cli(["tools", "--json", ...secretHeaderFlags(), withCanaries(srv.url)], { env: CANARY_ENV })
        const record = expectRecord(r, "ProtocolViolation", { stage: "endpoint", reason: "foreign-endpoint" })
        // The CLI has exited: whatever it sent was written before. A request of ours, answered,
        // was accepted after any connection of the CLI's (one listen queue, first in first out).
        await probe(foreign)
        await until(() => foreign.openConnections() === 0, "the foreign origin's connections closed")
        const others = foreign.requests.filter((q) => q.headers[PROBE_HEADER] === undefined)
        check(others.length === 0, `${others.length} requests reached the foreign origin`)
        return brief(r, record)
      })
  )
  await C("credentials: a header with CR LF (injection) exits 2 without echoing it", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["tools", "--json", "--header", `Authorization: ${CANARIES.header}\r\nInjected: yes`, srv.url])
      const record = expectRecord(r, "InvalidOption")
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
      return brief(r, record)
    }))
  await C("credentials: a stdio spawn failure names neither the command nor its arguments (exit 7)", async () => {
    const r = await cli(["tools", "--json", "--stdio", `/nonexistent/${CANARIES.user}/server --token=${CANARIES.query}`])
    const record = expectRecord(r, "TransportFailure", { reason: "spawn-failed" })
    check(!r.stderr.includes("nonexistent"), "the path is in the record")
    return brief(r, record)
  })
  await C(`initialize never answered: exit 4 at --discovery-timeout ${DEADLINE_MS}ms (stage initialize)`, () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "initialize", kind: "headers-never-sent" })
      const r = await cli(["tools", "--json", "--discovery-timeout", `${DEADLINE_MS}ms`, srv.url], { arrivedWhen: () => srv.rpcCalls("initialize") === 1 })
      const record = expectRecord(r, "DeadlineExceeded", { stage: "initialize", timeoutMs: DEADLINE_MS })
      // The lower bound on the whole run (the deadline starts after the process did): the arrival
      // is seen by polling, late under load, so arrival-to-exit only bounds from above.
      check(r.ms >= DEADLINE_MS, `the CLI exited ${r.ms} ms after it started, before its ${DEADLINE_MS} ms deadline`)
      inRange(r.arrivalToExitMs ?? -1, 0, DEADLINE_MAX_MS, "the exit")
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      return `${brief(r, record)}, ${r.arrivalToExitMs} ms after initialize arrived`
    }))

  // Release when the CLI exits.
  await C(
    "release: a stdio child that ignores SIGTERM does not outlive a successful run",
    () =>
      withFixture({ faults: [{ kind: "ignore-sigterm" }] }, async (f, line) => {
        const r = await cli(["call", "--json", "--stdio", line, "increment"])
        check(expectOk(r).content?.[0]?.text === "1", "increment")
        childGone(f)
        return `${r.ms} ms`
      })
  )
  await C(
    "release: every connection the CLI opened is closed when it exits (Streamable and legacy)",
    () =>
      withServers([streamable(), legacy()], async (srv, old) => {
        expectOk(await cli(["call", "--json", srv.url, "increment"]))
        expectOk(await cli(["call", "--json", old.url, "increment"]))
        await until(() => srv.openConnections() === 0 && old.openConnections() === 0, "no socket left open")
        check(old.closedStreams() === 1 && old.openStreams() === 0, "the GET stream closed")
        check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
      })
  )

  // The stateless era (2026-07-28): the rest of the full set.
  await C(
    "2026 tools <url> against a stateless server: exit 0, tools listed; no initialize, nothing but POSTs",
    () =>
      withServers([stateless()], async (srv) => {
        const r = await cli(["tools", "--json", srv.url])
        const out = expectOk(r)
        const names = out.tools?.map((t: { name: string }) => t.name).join() ?? ""
        check(names.startsWith("add,echo,increment") && names.includes("region_query"), `tools ${names}`)
        check(
          srv.rpcCalls("initialize") === 0 && srv.requests.every((q) => q.method === "POST"),
          `initialize ${srv.rpcCalls("initialize")}, ${srv.requests.map((q) => q.method).join()}`
        )
        return `${r.ms} ms`
      })
  )
  await C(
    "2026 discover --json against a handshake-era server (default revisions): 2025-11-25 after the refused probe",
    () =>
      withServers([streamable()], async (srv) => {
        const r = await cli(["discover", "--json", srv.url])
        const out = expectOk(r)
        check(out.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${out.protocolVersion}`)
        const stages = (out.stages ?? []).map((s: CliRecord) => `${s.stage}:${s.era}:${s.outcome}`).join()
        check(stages.startsWith("discover:stateless:RemoteRefusal,initialize:handshake:ok,"), `stages ${stages}`)
        check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
        return stages
      })
  )
  await C(
    "2026 negotiation: a stalled server/discover fails at --discovery-timeout 300ms (exit 4, stage discover); no fallback",
    () =>
      withServers([stateless()], async (srv) => {
        srv.script({ on: "server/discover", kind: "delay", ms: 2_000 })
        const r = await cli(["call", "--json", "--discovery-timeout", "300ms", "--call-timeout", "5s", srv.url, "increment"])
        const record = expectRecord(r, "DeadlineExceeded", { stage: "discover", phase: "discovery", timeoutMs: 300 })
        check(srv.requests.length === 1, `${srv.requests.length} requests (a deadline never falls back)`)
        return brief(r, record)
      })
  )
  await C(
    "2026 SIGINT during a call: exit 130 (Interrupted), the server sees the request closed; no notifications/cancelled",
    () =>
      withServers([stateless()], async (srv) => {
        srv.script({ on: "tools/call", kind: "headers-never-sent" })
        const r = await cli(["call", "--json", "--call-timeout", "30s", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/call") === 1 })
        const record = expectRecord(r, "Interrupted", { stage: "call" })
        check(r.sigintToExitMs !== undefined && r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
        await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
        check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
      })
  )
  await C(
    "2026 exit 3 (Unauthorized): a 401 echoing the canaries prints none; none in _meta or the Mcp-* headers",
    () =>
      withServers([stateless()], async (srv) => {
        srv.script({ on: "tools/call", kind: "status", status: 401, body: echo })
        const r = await cli(["call", "--json", ...secretHeaderFlags(), withCanaries(srv.url), "increment"], { env: CANARY_ENV })
        const record = expectRecord(r, "Unauthorized", { status: 401, stage: "call" })
        expectDelivered(srv.requests.find((q) => q.rpcMethod === "tools/call"))
        for (const q of srv.requests) {
          const added = JSON.stringify([q.meta ?? {}, Object.entries(q.headers).filter(([header]) => header.startsWith("mcp-"))])
          check(!Object.values(CANARIES).some((canary) => added.includes(canary)), `${q.rpcMethod}: a canary in _meta or an Mcp-* header`)
        }
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return brief(r, record)
      })
  )
  await C(
    "2026 input_required (the CLI declares no handler): exit 7 (ProtocolViolation undeclared-capability); called once, not re-sent",
    () =>
      withServers([stateless()], async (srv) => {
        srv.script({ on: "tools/call", kind: "input-required" })
        const r = await cli(["call", "--json", srv.url, "increment"])
        const record = expectRecord(r, "ProtocolViolation", { reason: "undeclared-capability", stage: "call" })
        check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
        return brief(r, record)
      })
  )
  await C(
    "2026 stdio: call over --stdio to a stateless child: exit 0, 2026-07-28 without initialize; the child is gone",
    () =>
      withFixture({ era: "stateless" }, async (f, line) => {
        const out = expectOk(await cli(["call", "--json", "--stdio", line, "add", "--args", `{"a":20,"b":22}`]))
        check(out.content?.[0]?.text === "42", "add")
        check(f.rpcCalls("server/discover") === 1 && f.rpcCalls("initialize") === 0, `arrivals ${f.arrivals().join()}`)
        childGone(f)
      })
  )
}

// --- authorization: the login-free client credentials flow --------------------------------------

const SERVICE_SECRET_VARIABLE = "QUALIFY_SERVICE_SECRET"
const SERVICE = { clientId: "qualify-service", clientSecret: CANARIES.header, grantTypes: ["client_credentials"] } satisfies Testkit.OAuthClient

/** A protected MCP server and its authorization server, which knows the service client. */
const withProtected = async <A>(
  oauthOptions: Testkit.OAuthServerOptions,
  body: (srv: Testkit.TestServer, oauth: Testkit.OAuthTestServer, tokenFile: string) => Promise<A>
): Promise<A> => {
  const oauth = await Testkit.startOAuthServer({ clients: [SERVICE], ...oauthOptions })
  const srv = await Testkit.startServer({ auth: { oauth } })
  const dir = mkdtempSync(join(tmpdir(), "phasebound-qualify-auth-"))
  try {
    return await body(srv, oauth, join(dir, "tokens.json"))
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await Promise.all([srv.close(), oauth.close()])
  }
}

const serviceFlags = (tokenFile: string) => [
  "--auth-grant",
  "client_credentials",
  "--auth-client-id",
  SERVICE.clientId,
  "--auth-client-secret",
  `\${${SERVICE_SECRET_VARIABLE}}`,
  "--token-file",
  tokenFile
]
const serviceEnv = { [SERVICE_SECRET_VARIABLE]: SERVICE.clientSecret }

const authorizationScenarios = async (target: Target) => {
  const C = (name: string, body: () => Promise<unknown>, timeoutMs?: number) => scenario(`${target.label}: auth ${name}`, body, timeoutMs)
  const cli = (args: ReadonlyArray<string>, options?: RunOptions) => runCli(target, args, options)
  await C("client credentials, no login: 401, a token, the call sent once more and run once", () =>
    withProtected({}, async (srv, oauth, tokenFile) => {
      const r = await cli(["call", "--json", ...serviceFlags(tokenFile), srv.url, "increment"], { env: serviceEnv })
      const out = expectOk(r)
      check(out.content?.[0]?.text === "1", `result ${JSON.stringify(out).slice(0, 100)}`)
      check(srv.counter() === 1, `the tool ran ${srv.counter()} times`)
      check(oauth.calls("token") === 1 && srv.unauthorizedCount() >= 1, `${oauth.calls("token")} token requests, ${srv.unauthorizedCount()} refused`)
      // The token went to the MCP server, and nowhere else.
      const issued = oauth.issuedTokens().map((t) => t.accessToken)
      check(srv.bearerTokens().length > 0 && srv.bearerTokens().every((t) => issued.includes(t)), "bearer tokens")
      check(
        !oauth.requests.some((request) => issued.some((token) => JSON.stringify(request.headers).includes(token))),
        "a token went to the authorization server"
      )
      return `${r.ms} ms`
    }))
  await C(
    "client credentials refused, the secret echoed back: exit 3 (AuthorizationFailed), no secret printed",
    () =>
      withProtected({ faults: [{ kind: "echo-secrets-in-error", times: Infinity }] }, async (srv, _oauth, tokenFile) => {
        const r = await cli(["tools", "--json", ...serviceFlags(tokenFile), srv.url], { env: serviceEnv })
        const record = expectRecord(r, "AuthorizationFailed", { phase: "authorization", authorizationStep: "token", outcome: "not-applied" })
        check(!(r.stdout + r.stderr).includes(SERVICE.clientSecret), "the client secret was printed")
        check(srv.counter() === 0, "a tool ran")
        return brief(r, record)
      })
  )
  await C("no way to authorize: the 401 stays Unauthorized (exit 3), nothing sent to the authority", () =>
    withProtected({}, async (srv, oauth, tokenFile) => {
      const r = await cli(["tools", "--json", "--token-file", tokenFile, srv.url])
      const record = expectRecord(r, "Unauthorized", { status: 401 })
      check(oauth.requests.length === 0, `${oauth.requests.length} requests to the authorization server`)
      return brief(r, record)
    }))
}

// --- main ----------------------------------------------------------------------------------------

const targets: ReadonlyArray<Target> = [
  { label: "compiled", command: compiled, prefix: [], full: true },
  { label: "node bin.js", command: process.execPath, prefix: [bin], full: false },
  { label: "bun bin.js", command: bunPath, prefix: [bin], full: false }
]
const started = Date.now()
for (const target of targets) {
  if (target.command === undefined || (target.prefix.length > 0 && target.prefix[0] === undefined)) {
    results.push({ name: `${target.label}: available`, ok: false, detail: "missing argument", ms: 0 })
    continue
  }
  await cliScenarios(target, target.full)
  await authorizationScenarios(target)
  await pool(cliFamily(target, target.full ? undefined : FAMILY_SMOKE), FAMILY_CONCURRENCY)
}

const failed = results.filter((r) => !r.ok)
const width = Math.max(...results.map((r) => r.name.length))
console.log(`phasebound CLI qualification (driven from node ${process.version})`)
for (const r of results) console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(width)}  ${String(r.ms).padStart(5)} ms  ${r.detail}`)
console.log(`${results.length - failed.length} passed, ${failed.length} failed (${Date.now() - started} ms)`)
process.stdout.write(Testkit.formatReport({
  results: results.map(({ name, ok, detail }) => ({ name, ok, detail })),
  children: [...children.values()].map(({ pid, start }) => (start === undefined ? { pid } : { pid, start }))
}))
if (failed.length > 0) process.exitCode = 1
