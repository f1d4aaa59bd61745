/**
 * The phasebound CLI qualification: a plain ESM program, run by `node qualify-cli.mjs` inside the
 * fresh project where the packed packages were installed. It starts @phasebound/testkit servers
 * (the installed package) and drives the CLI as a subprocess:
 *
 * - the single executable compiled with `bun build --compile` from the INSTALLED package's bin
 *   (every scenario);
 * - the installed bin under `node` and under `bun` (a smoke subset).
 *
 * Rows named "2026" run against servers of the stateless era (2026-07-28), or narrow the revisions.
 *
 * Arguments: --compiled <path> --bin <installed dist/bin.js> --bun <bun>. Like qualify.mjs it
 * prints a table and one `QUALIFY-SUMMARY {json}` line, never calls process.exit, and sets
 * process.exitCode on failure.
 */
import { spawn } from "node:child_process"
import * as Testkit from "@phasebound/testkit"

const arg = (name) => {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const compiled = arg("--compiled")
const bin = arg("--bin")
const bunPath = arg("--bun")

const DEADLINE_MS = 500
const DEADLINE_MIN_MS = 450
/** From the call's arrival at the server to the CLI's exit: deadline, release, process exit. */
const DEADLINE_MAX_MS = 1_500
/** A missing response fails the whole CLI run (process start and discovery included) within this. */
const PROMPT_MS = 3_000
/** After SIGINT, the CLI has exited within this (it releases what it holds first). */
const SIGINT_EXIT_MS = 3_000
const CEILING = 4_000
const CHUNK = 7
const MULTIBYTE = "é€😀a"
const RUN_TIMEOUT_MS = 20_000
const STATELESS = Testkit.MODERN_PROTOCOL_VERSION
/** What a handshake-era testkit server answers initialize with, for a client that asks the latest. */
const HANDSHAKE_LATEST = "2025-11-25"

// --- harness -----------------------------------------------------------------------------------

const results = []
const childPids = new Set()
class CheckFailed extends Error {}
const fail = (message) => {
  throw new CheckFailed(message)
}
const check = (condition, message) => {
  if (!condition) fail(message)
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const until = async (predicate, what, timeoutMs = 5_000) => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) fail(`not within ${timeoutMs} ms: ${what}`)
    await sleep(5)
  }
}
const inRange = (ms, min, max, what) => check(ms >= min && ms <= max, `${what} after ${ms} ms, outside [${min}, ${max}] ms`)

const scenario = async (name, body, timeoutMs = 30_000) => {
  const started = Date.now()
  let timer
  try {
    const detail = await Promise.race([
      Promise.resolve().then(body),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`scenario did not finish within ${timeoutMs} ms`)), timeoutMs)
      })
    ])
    results.push({ name, ok: true, detail: typeof detail === "string" ? detail : "", ms: Date.now() - started })
  } catch (error) {
    const detail = error instanceof CheckFailed ? error.message : `unexpected: ${String(error?.message ?? error).split("\n")[0]}`
    results.push({ name, ok: false, detail, ms: Date.now() - started })
  } finally {
    clearTimeout(timer)
  }
}

const canaries = {
  header: "CANARY-HEADER-7f3a9c",
  apiKey: "CANARY-APIKEY-2b71",
  env: "CANARY-ENVTOKEN-93d0",
  user: "canaryuser8b2d",
  password: "CANARY-PASS-41e6",
  query: "CANARY-QUERY-d09b"
}
const withCanaries = (url) => {
  const u = new URL(url)
  u.username = canaries.user
  u.password = canaries.password
  u.searchParams.set("token", canaries.query)
  return u.href
}
const canaryPattern = /CANARY|canaryuser/

/** POSIX single-quoting, for `--stdio 'command args...'`. */
const shellQuote = (words) => words.map((w) => (/^[A-Za-z0-9_\/.,:=+@%-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)).join(" ")

/**
 * Runs the CLI once. `sigintWhen`: a predicate polled every 5 ms; when it holds, SIGINT is sent.
 * `arrivedWhen`: a predicate whose first truth is timed (e.g. the call reached the server), so
 * that the time from there to the exit can be judged.
 */
const runCli = (target, args, options = {}) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(target.command, [...target.prefix, ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let killed = false
    let sigintAt
    let arrivedAt
    let exited = false
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      killed = true
      child.kill("SIGKILL")
    }, options.timeoutMs ?? RUN_TIMEOUT_MS)
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
        ms: now - started,
        sigintToExitMs: sigintAt === undefined ? undefined : now - sigintAt,
        arrivalToExitMs: arrivedAt === undefined ? undefined : now - arrivedAt
      })
    })
  })

/** Every run: it exited by itself, and no canary secret in anything it printed. */
const basics = (r) => {
  check(!r.killed, `had to be killed after ${RUN_TIMEOUT_MS} ms`)
  const leak = (r.stdout + r.stderr).match(canaryPattern)
  check(leak === null, "a canary secret in the CLI's output")
}
/** Success: the exit code, JSON on stdout, nothing on stderr. */
const expectOk = (r, code = 0) => {
  basics(r)
  check(r.stderr === "", `stderr: ${r.stderr.slice(0, 200)}`)
  check(r.code === code, `exit ${r.code ?? r.signal}, expected ${code}`)
  try {
    return JSON.parse(r.stdout)
  } catch {
    return fail(`stdout is not JSON: ${r.stdout.slice(0, 120)}`)
  }
}
/** Failure: the exit code, nothing on stdout, exactly one JSON record `{"error":{...}}` on stderr. */
const expectRecord = (r, code, tag, fields = {}) => {
  basics(r)
  const lines = r.stderr.split("\n").filter((l) => l !== "")
  check(lines.length === 1, `${lines.length} stderr lines, expected one record: ${r.stderr.slice(0, 200)}`)
  let record
  try {
    record = JSON.parse(lines[0]).error
  } catch {
    fail(`stderr is not a JSON record: ${lines[0].slice(0, 120)}`)
  }
  check(record !== null && typeof record === "object", "no error object in the record")
  check(record.tag === tag, `tag ${record.tag}, expected ${tag}`)
  check(r.code === code, `exit ${r.code ?? r.signal}, expected ${code} (${record.tag})`)
  check(r.stdout === "", `stdout on failure: ${r.stdout.slice(0, 120)}`)
  for (const forbidden of ["127.0.0.1", "http://", "/mcp", "/sse", "authorization", "Bearer", "stack"]) {
    check(!lines[0].includes(forbidden), `the record contains ${JSON.stringify(forbidden)}`)
  }
  for (const [key, value] of Object.entries(fields)) {
    const actual = key === "maxBytes" || key === "timeoutMs" ? record.limits?.[key] : record[key]
    check(actual === value, `${key}=${JSON.stringify(actual)}, expected ${JSON.stringify(value)}`)
  }
  return record
}
const brief = (r, record) =>
  `exit ${r.code}${record ? ` ${record.tag}${record.stage ? ` ${record.stage}` : ""}${record.observedBytes !== undefined ? ` observed=${record.observedBytes}` : ""}` : ""}, ${r.ms} ms`

/** Servers for one scenario, closed after it. */
const withServers = async (starts, body) => {
  const servers = []
  try {
    for (const start of starts) servers.push(await start())
    return await body(...servers)
  } finally {
    await Promise.all(servers.map((s) => s.close()))
  }
}
const streamable = (options) => () => Testkit.startServer(options)
const legacy = (options) => () => Testkit.startLegacyServer(options)
/** A server of the stateless era only (2026-07-28): no initialize, no session, no GET stream, no DELETE. */
const stateless = (options) => () => Testkit.startServer({ era: "stateless", ...options })

const withFixture = async (options, body) => {
  const f = Testkit.makeStdioFixture(options)
  try {
    return await body(f, shellQuote([f.command, ...f.args]))
  } finally {
    const pid = f.pid()
    if (pid !== undefined) childPids.add(pid)
    f.cleanup()
  }
}
/** No stdio child outlives the CLI run that spawned it. */
const childGone = async (f) => {
  const pid = f.pid()
  if (pid !== undefined) childPids.add(pid)
  await until(() => !f.isAlive(), "the stdio child is gone once the CLI exited", 250)
}

// --- scenarios -----------------------------------------------------------------------------------

const cliScenarios = async (target, full) => {
  const C = (name, body, timeoutMs) => scenario(`${target.label}: ${name}`, body, timeoutMs)
  const cli = (args, options) => runCli(target, args, options)

  await C("tools <url> lists the tools (exit 0, JSON, nothing on stderr)", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["tools", "--json", srv.url])
      const out = expectOk(r)
      check(out.tools?.map((t) => t.name).join() === "add,echo,increment", `tools ${JSON.stringify(out).slice(0, 100)}`)
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
      const record = expectRecord(r, 2, "InvalidOption", { option: "--timeout" })
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
      return brief(r, record)
    }))
  await C("stdio: call over --stdio, exit 0; the child is gone when the CLI exits", () =>
    withFixture({}, async (f, line) => {
      const out = expectOk(await cli(["call", "--json", "--stdio", line, "add", "--args", `{"a":20,"b":22}`]))
      check(out.content?.[0]?.text === "42", "add")
      await childGone(f)
    }))
  await C("SIGINT during a call: exit 130 (Interrupted), the server sees the request closed, called once", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/call", kind: "headers-never-sent" })
      const r = await cli(["call", "--json", "--call-timeout", "30s", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 130, "Interrupted", { stage: "call" })
      check(r.sigintToExitMs !== undefined && r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C("credentials: canaries in --header, URL userinfo and query never printed on a 500 echoing them", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/call", kind: "status", status: 500, body: `at ${canaries.header} ${canaries.query}` })
      const r = await cli(["call", "--json", "--header", `Authorization: Bearer ${canaries.header}`, withCanaries(srv.url), "increment"])
      const record = expectRecord(r, 7, "UpstreamFailure", { status: 500 })
      const call = srv.requests.find((q) => q.rpcMethod === "tools/call")
      check(call?.headers["authorization"] === `Bearer ${canaries.header}`, "the header reached the configured origin")
      return brief(r, record)
    }))
  await C(`bytes: call answer of ${CEILING + 1} B over --call-max-bytes ${CEILING}: exit 5, observed ${CEILING + 1}`, () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/call", kind: "exact-size", bytes: CEILING + 1, chunkSize: CHUNK })
      const r = await cli(["call", "--json", "--call-max-bytes", String(CEILING), srv.url, "increment"])
      const record = expectRecord(r, 5, "ByteCeilingExceeded", { observedBytes: CEILING + 1, maxBytes: CEILING })
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return brief(r, record)
    }))

  // The stateless era (2026-07-28): every target.
  await C("2026 call <url> increment: exit 0, called once with _meta and the Mcp-* headers; no DELETE", () =>
    withServers([stateless()], async (srv) => {
      const r = await cli(["call", "--json", srv.url, "increment", "--args", "{}"])
      const out = expectOk(r)
      check(out.content?.[0]?.text === "1", `result ${JSON.stringify(out).slice(0, 100)}`)
      check(srv.counter() === 1 && srv.deletes() === 0, `counter ${srv.counter()}, ${srv.deletes()} DELETEs`)
      const call = srv.requests.find((q) => q.rpcMethod === "tools/call")
      check(call?.meta?.[Testkit.META_PROTOCOL_VERSION] === STATELESS, "no _meta revision")
      check(call.headers["mcp-protocol-version"] === STATELESS && call.headers["mcp-method"] === "tools/call" && call.headers["mcp-name"] === "increment", "the Mcp-* headers")
      return `${r.ms} ms`
    }))
  await C("2026 discover --json: protocolVersion 2026-07-28; stages discover and list-tools, era stateless over streamable-http", () =>
    withServers([stateless()], async (srv) => {
      const r = await cli(["discover", "--json", srv.url])
      const out = expectOk(r)
      check(out.protocolVersion === STATELESS && out.transport === "streamable-http", `${out.protocolVersion} over ${out.transport}`)
      const stages = (out.stages ?? []).map((s) => `${s.stage}:${s.era}:${s.transport}:${s.outcome}`).join()
      check(stages === "discover:stateless:streamable-http:ok,list-tools:stateless:streamable-http:ok", `stages ${stages}`)
      return `${r.ms} ms`
    }))
  await C("2026 --revision 2026-07-28 against a handshake-era server: exit 6 (RemoteRefusal) at stage discover; initialize never sent", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["tools", "--json", "--revision", STATELESS, srv.url])
      const record = expectRecord(r, 6, "RemoteRefusal", { stage: "discover", phase: "discovery" })
      check(srv.rpcCalls("initialize") === 0 && srv.requests.length === 1, `${srv.requests.length} requests, initialize ${srv.rpcCalls("initialize")}`)
      return brief(r, record)
    }))
  await C("2026 --revision bogus: exit 2 (InvalidOption --revision); nothing sent", () =>
    withServers([stateless()], async (srv) => {
      const r = await cli(["tools", "--json", "--revision", "bogus", srv.url])
      const record = expectRecord(r, 2, "InvalidOption", { option: "--revision", stage: "config" })
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
      return brief(r, record)
    }))
  await C(`2026 --call-timeout ${DEADLINE_MS}ms, a stalled tools/call: exit 4 (DeadlineExceeded stage call); the stream closed, no notifications/cancelled`, () =>
    withServers([stateless()], async (srv) => {
      srv.script({ on: "tools/call", kind: "headers-never-sent" })
      const r = await cli(["call", "--json", "--call-timeout", `${DEADLINE_MS}ms`, srv.url, "increment"], { arrivedWhen: () => srv.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "call", phase: "call", timeoutMs: DEADLINE_MS })
      inRange(r.arrivalToExitMs ?? -1, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the exit")
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return `${brief(r, record)}, ${r.arrivalToExitMs} ms after the call arrived`
    }))
  if (!full) return

  // Opposite phase overrides.
  await C("overrides: --discovery-timeout 300ms --call-timeout 5s, slow tools/list: exit 4 at discovery", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/list", kind: "delay", ms: 2_000 })
      const r = await cli(["call", "--json", "--discovery-timeout", "300ms", "--call-timeout", "5s", srv.url, "increment"])
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "list-tools", phase: "discovery", timeoutMs: 300 })
      check(srv.rpcCalls("tools/call") === 0, "a call was sent")
      return brief(r, record)
    }))
  await C("overrides: --discovery-timeout 300ms --call-timeout 5s, a 700 ms call succeeds", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/call", kind: "delay", ms: 700 })
      const r = await cli(["call", "--json", "--discovery-timeout", "300ms", "--call-timeout", "5s", srv.url, "increment"])
      check(expectOk(r).content?.[0]?.text === "1", "increment")
      return `${r.ms} ms`
    }))
  await C("overrides: --discovery-timeout 5s --call-timeout 300ms, slow initialize passes, slow call: exit 4 at call", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "initialize", kind: "delay", ms: 700 })
      srv.script({ on: "tools/call", kind: "delay", ms: 2_000 })
      const r = await cli(["call", "--json", "--discovery-timeout", "5s", "--call-timeout", "300ms", srv.url, "increment"])
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "call", phase: "call", timeoutMs: 300 })
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return brief(r, record)
    }))
  await C("overrides: stdio --discovery-timeout 5s --call-timeout 300ms: exit 4 at call; the child is gone", () =>
    withFixture({ faults: [{ on: "initialize", kind: "delay", ms: 700 }, { on: "tools/call", kind: "delay", ms: 2_000 }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--discovery-timeout", "5s", "--call-timeout", "300ms", "--stdio", line, "increment"])
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "call", timeoutMs: 300 })
      await childGone(f)
      check(f.counter() === 1, `counter ${f.counter()}`)
      return brief(r, record)
    }))

  // Exact byte boundaries: JSON, Streamable SSE, legacy SSE, stdio; both phases.
  const transports = [
    ["Streamable JSON", "json"],
    ["Streamable SSE", "sse"],
    ["legacy SSE", "legacy"],
    ["stdio", "stdio"]
  ]
  for (const [name, kind] of transports) {
    for (const phase of ["call", "discovery"]) {
      for (const bytes of [CEILING - 1, CEILING, CEILING + 1]) {
        const on = phase === "call" ? "tools/call" : "tools/list"
        const chunkSize = phase === "call" ? CHUNK : 5
        const budget = phase === "call"
          ? ["--discovery-max-bytes", "2000", "--call-max-bytes", String(CEILING)]
          : ["--discovery-max-bytes", String(CEILING), "--call-max-bytes", "10"]
        const command = phase === "call" ? ["call", "--json", ...budget] : ["tools", "--json", ...budget]
        const tail = phase === "call" ? ["increment"] : []
        const judge = (r, counter) => {
          if (bytes <= CEILING) {
            const out = expectOk(r)
            const text = phase === "call" ? out.content?.[0]?.text ?? "" : out.tools?.[0]?.description ?? ""
            check(text.includes(MULTIBYTE), "the multi-byte padding printed intact")
            if (phase === "call") check(counter() === 1, `counter ${counter()}`)
            return `exit 0, ${r.ms} ms`
          }
          const record = expectRecord(r, 5, "ByteCeilingExceeded", {
            stage: phase === "call" ? "call" : "list-tools",
            phase,
            observedBytes: CEILING + 1,
            maxBytes: CEILING
          })
          if (phase === "call") check(counter() === 1, `counter ${counter()}`)
          return brief(r, record)
        }
        await C(`bytes: ${name} ${phase === "call" ? "call answer" : "tools/list"} of ${bytes} B, ${phase} ceiling ${CEILING}: ${bytes <= CEILING ? "accepted" : "refused"}`, () => {
          if (kind === "stdio") {
            return withFixture({ faults: [{ on, kind: "exact-size", bytes, chunkSize }] }, async (f, line) => {
              const r = await cli([...command, "--stdio", line, ...tail])
              const detail = judge(r, () => f.counter())
              await childGone(f)
              return detail
            })
          }
          if (kind === "legacy") {
            return withServers([legacy()], async (srv) => {
              srv.script({ on, kind: "exact-size", bytes, chunkSize })
              const r = await cli([...command, "--transport", "sse", srv.url, ...tail])
              const detail = judge(r, () => srv.counter())
              await until(() => srv.closedStreams() === 1, "the server sees the GET stream closed")
              return detail
            })
          }
          return withServers([streamable({ mode: kind })], async (srv) => {
            srv.script({ on, kind: "exact-size", bytes, chunkSize, as: kind })
            const r = await cli([...command, srv.url, ...tail])
            const detail = judge(r, () => srv.counter())
            await until(() => srv.deletes() === 1, "the session is released (DELETE)")
            return detail
          })
        })
      }
    }
  }

  // Caller abort (SIGINT) against deadline.
  await C("SIGINT during discovery: exit 130, the session is DELETEd, nothing called", () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "tools/list", kind: "headers-never-sent" })
      const r = await cli(["call", "--json", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/list") === 1 })
      const record = expectRecord(r, 130, "Interrupted")
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
      check(srv.rpcCalls("tools/call") === 0, "a call was sent")
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C("SIGINT during a legacy call: exit 130, the GET stream closed, called once", () =>
    withServers([legacy()], async (srv) => {
      srv.script({ on: "tools/call", kind: "no-response" })
      const r = await cli(["call", "--json", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 130, "Interrupted")
      check(r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
      await until(() => srv.closedStreams() === 1, "the server sees the GET stream closed")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C("SIGINT during a stdio call: exit 130; the child is gone", () =>
    withFixture({ faults: [{ on: "tools/call", kind: "never-answer" }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--stdio", line, "increment"], { sigintWhen: () => f.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 130, "Interrupted")
      check(r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
      await childGone(f)
      check(f.counter() === 1, `counter ${f.counter()}`)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  await C("SIGINT with a stdio child that ignores SIGTERM: exit 130; the child is gone", () =>
    withFixture({ faults: [{ kind: "ignore-sigterm" }, { on: "tools/call", kind: "never-answer" }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--stdio", line, "increment"], { sigintWhen: () => f.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 130, "Interrupted")
      await childGone(f)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))

  // Credential fences.
  const secretArgs = (url) => [
    "--header", `Authorization: Bearer ${canaries.header}`,
    "--header", `X-Api-Key: ${canaries.apiKey}`,
    "--header", "X-Env-Token: ${PB_QUALIFY_TOKEN}",
    withCanaries(url)
  ]
  const secretEnv = { PB_QUALIFY_TOKEN: canaries.env }
  const echo = `Bearer ${canaries.header} key ${canaries.apiKey} env ${canaries.env} at http://${canaries.user}:${canaries.password}@127.0.0.1/mcp?token=${canaries.query}`
  const fenced = [
    ["401", { kind: "status", status: 401, body: echo }, 3, "Unauthorized"],
    ["403", { kind: "status", status: 403, body: echo }, 3, "Forbidden"],
    ["500 echoing the secrets", { kind: "status", status: 500, body: echo }, 7, "UpstreamFailure"],
    ["JSON-RPC error echoing the secrets", { kind: "jsonrpc-error", code: -32000, message: echo }, 6, "RemoteRefusal"],
    ["byte ceiling", { kind: "exact-size", bytes: 5_000 }, 5, "ByteCeilingExceeded"],
    ["deadline", { kind: "headers-never-sent" }, 4, "DeadlineExceeded"],
    ["invalid JSON", { kind: "invalid-json" }, 7, "ProtocolViolation"],
    ["missing response", { kind: "wrong-id" }, 7, "ProtocolViolation"]
  ]
  for (const [name, fault, code, tag] of fenced) {
    await C(`credentials: no canary printed on a ${name} (exit ${code}, ${tag}); they reached the configured origin`, () =>
      withServers([streamable()], async (srv) => {
        srv.script({ on: "tools/call", ...fault })
        const r = await cli(["call", "--json", "--call-timeout", "500ms", "--call-max-bytes", "1000", ...secretArgs(srv.url), "increment"], { env: secretEnv })
        const record = expectRecord(r, code, tag)
        const call = srv.requests.find((q) => q.rpcMethod === "tools/call")
        check(call?.headers["authorization"] === `Bearer ${canaries.header}`, "authorization header")
        check(call?.headers["x-env-token"] === canaries.env, "the ${VAR} header")
        check(call?.url.includes(`token=${canaries.query}`), "the query")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return brief(r, record)
      }))
  }
  await C("credentials: a foreign legacy endpoint: exit 7 (ProtocolViolation), nothing reaches the foreign origin", () =>
    withServers([legacy(), streamable()], async (srv, foreign) => {
      srv.script({ kind: "endpoint-foreign", target: `http://127.0.0.1:${foreign.port}/messages?sessionId=x` })
      const r = await cli(["tools", "--json", ...secretArgs(srv.url)], { env: secretEnv })
      const record = expectRecord(r, 7, "ProtocolViolation", { stage: "endpoint", reason: "foreign-endpoint" })
      await sleep(150)
      check(foreign.requests.length === 0, `${foreign.requests.length} requests reached the foreign origin`)
      return brief(r, record)
    }))
  await C("credentials: a header with CR LF (injection) exits 2 without echoing it", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["tools", "--json", "--header", `Authorization: ${canaries.header}\r\nInjected: yes`, srv.url])
      const record = expectRecord(r, 2, "InvalidOption")
      check(srv.requests.length === 0, `${srv.requests.length} requests`)
      return brief(r, record)
    }))
  await C("credentials: a stdio spawn failure names neither the command nor its arguments (exit 7)", async () => {
    const r = await cli(["tools", "--json", "--stdio", `/nonexistent/${canaries.user}/server --token=${canaries.query}`])
    const record = expectRecord(r, 7, "TransportFailure", { reason: "spawn-failed" })
    check(!r.stderr.includes("nonexistent"), "the path is in the record")
    return brief(r, record)
  })

  // Missing responses.
  const prompt = [
    ["Streamable JSON without the id", streamable(), { on: "tools/call", kind: "wrong-id" }, "ProtocolViolation", "missing-response", []],
    ["Streamable SSE ending without the response", streamable({ mode: "sse" }), { on: "tools/call", kind: "close-before-response" }, "ProtocolViolation", "missing-response", []],
    ["a legacy stream closing", legacy(), { on: "tools/call", kind: "close-stream" }, "TransportFailure", "stream-ended", ["--transport", "sse"]]
  ]
  for (const [name, start, fault, tag, reason, extra] of prompt) {
    await C(`missing: ${name}: exit 7 (${tag}) promptly (run < ${PROMPT_MS} ms with --call-timeout 30s)`, () =>
      withServers([start], async (srv) => {
        srv.script(fault)
        const r = await cli(["call", "--json", "--call-timeout", "30s", ...extra, srv.url, "increment"])
        const record = expectRecord(r, 7, tag, { reason, stage: "call" })
        check(r.ms < PROMPT_MS, `${r.ms} ms`)
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return brief(r, record)
      }))
  }
  await C(`missing: a stdio child exiting mid-call: exit 7 (TransportFailure) promptly (< ${PROMPT_MS} ms)`, () =>
    withFixture({ faults: [{ on: "tools/call", kind: "exit", code: 9 }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--call-timeout", "30s", "--stdio", line, "increment"])
      const record = expectRecord(r, 7, "TransportFailure", { reason: "process-exited", exitCode: 9 })
      check(r.ms < PROMPT_MS, `${r.ms} ms`)
      check(f.counter() === 1, `counter ${f.counter()}`)
      await childGone(f)
      return brief(r, record)
    }))
  const silent = [
    ["Streamable JSON", streamable(), "http", { on: "tools/call", kind: "headers-never-sent" }],
    ["Streamable SSE", streamable({ mode: "sse" }), "http", { on: "tools/call", kind: "response-never-sent", as: "sse" }],
    ["legacy SSE", legacy(), "legacy", { on: "tools/call", kind: "no-response" }]
  ]
  for (const [name, start, kind, fault] of silent) {
    await C(`missing: ${name} never answers: exit 4 at --call-timeout ${DEADLINE_MS}ms (call arrival to exit ${DEADLINE_MIN_MS}-${DEADLINE_MAX_MS} ms)`, () =>
      withServers([start], async (srv) => {
        srv.script(fault)
        const r = await cli(["call", "--json", "--call-timeout", `${DEADLINE_MS}ms`, ...(kind === "legacy" ? ["--transport", "sse"] : []), srv.url, "increment"], {
          arrivedWhen: () => srv.rpcCalls("tools/call") === 1
        })
        const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "call", timeoutMs: DEADLINE_MS })
        inRange(r.arrivalToExitMs ?? -1, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the exit")
        if (kind === "http") await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return `${brief(r, record)}, ${r.arrivalToExitMs} ms after the call arrived`
      }))
  }
  await C(`missing: a stdio child that never answers: exit 4 at --call-timeout ${DEADLINE_MS}ms; the child is gone`, () =>
    withFixture({ faults: [{ on: "tools/call", kind: "never-answer" }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--call-timeout", `${DEADLINE_MS}ms`, "--stdio", line, "increment"], { arrivedWhen: () => f.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "call", timeoutMs: DEADLINE_MS })
      inRange(r.arrivalToExitMs ?? -1, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the exit")
      await childGone(f)
      check(f.counter() === 1, `counter ${f.counter()}`)
      return `${brief(r, record)}, ${r.arrivalToExitMs} ms after the call arrived`
    }))
  await C(`missing: initialize never answered: exit 4 at --discovery-timeout ${DEADLINE_MS}ms`, () =>
    withServers([streamable()], async (srv) => {
      srv.script({ on: "initialize", kind: "headers-never-sent" })
      const r = await cli(["tools", "--json", "--discovery-timeout", `${DEADLINE_MS}ms`, srv.url], { arrivedWhen: () => srv.rpcCalls("initialize") === 1 })
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "initialize", timeoutMs: DEADLINE_MS })
      inRange(r.arrivalToExitMs ?? -1, DEADLINE_MIN_MS, DEADLINE_MAX_MS, "the exit")
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      return `${brief(r, record)}, ${r.arrivalToExitMs} ms after initialize arrived`
    }))

  // Forbidden replay: one run, one arrival, whatever the failure.
  const replay = [
    ["a 502", streamable(), { on: "tools/call", kind: "status", status: 502 }, 7, "UpstreamFailure", []],
    ["a 503", streamable(), { on: "tools/call", kind: "status", status: 503 }, 7, "UpstreamFailure", []],
    ["an SSE stream closed early", streamable({ mode: "sse" }), { on: "tools/call", kind: "close-before-response" }, 7, "ProtocolViolation", []],
    ["invalid UTF-8", streamable(), { on: "tools/call", kind: "invalid-utf8" }, 7, "ProtocolViolation", []],
    ["a wrong content type", streamable(), { on: "tools/call", kind: "wrong-content-type" }, 7, "ProtocolViolation", []],
    ["legacy (auto fallback) 500 on the POST", legacy(), { on: "tools/call", kind: "post-status", status: 500 }, 7, "UpstreamFailure", []],
    ["legacy (auto fallback) byte ceiling", legacy(), { on: "tools/call", kind: "exact-size", bytes: 2_000 }, 5, "ByteCeilingExceeded", []],
    ["legacy (auto fallback) deadline", legacy(), { on: "tools/call", kind: "no-response" }, 4, "DeadlineExceeded", []]
  ]
  for (const [name, start, fault, code, tag, extra] of replay) {
    await C(`replay: after ${name} (exit ${code}, ${tag}): the counter is exactly 1`, () =>
      withServers([start], async (srv) => {
        srv.script(fault)
        const r = await cli(["call", "--json", "--call-timeout", "300ms", "--call-max-bytes", "1000", ...extra, srv.url, "increment"])
        const record = expectRecord(r, code, tag)
        await sleep(200)
        check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
        return brief(r, record)
      }))
  }
  const stdioReplay = [
    ["a deadline", { kind: "never-answer" }, 4, "DeadlineExceeded"],
    ["a byte ceiling", { kind: "exact-size", bytes: 2_000 }, 5, "ByteCeilingExceeded"],
    ["invalid UTF-8", { kind: "invalid-utf8" }, 7, "ProtocolViolation"],
    ["a JSON-RPC error", { kind: "jsonrpc-error", code: -32603, message: "boom" }, 6, "RemoteRefusal"]
  ]
  for (const [name, fault, code, tag] of stdioReplay) {
    await C(`replay: stdio after ${name} (exit ${code}, ${tag}): the counter is exactly 1; the child is gone`, () =>
      withFixture({ faults: [{ on: "tools/call", ...fault }] }, async (f, line) => {
        const r = await cli(["call", "--json", "--call-timeout", "300ms", "--call-max-bytes", "1000", "--stdio", line, "increment"])
        const record = expectRecord(r, code, tag)
        await childGone(f)
        check(f.counter() === 1 && f.rpcCalls("tools/call") === 1, `counter ${f.counter()}, tools/call ${f.rpcCalls("tools/call")}`)
        return brief(r, record)
      }))
  }

  // Release.
  await C("release: a stdio child that ignores SIGTERM does not outlive a successful run", () =>
    withFixture({ faults: [{ kind: "ignore-sigterm" }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--stdio", line, "increment"])
      check(expectOk(r).content?.[0]?.text === "1", "increment")
      await childGone(f)
      return `${r.ms} ms`
    }))
  await C("release: after invalid UTF-8 from a child that ignores SIGTERM (exit 7), the child does not outlive the CLI", () =>
    withFixture({ faults: [{ kind: "ignore-sigterm" }, { on: "tools/call", kind: "invalid-utf8" }] }, async (f, line) => {
      const r = await cli(["call", "--json", "--stdio", line, "increment"])
      const record = expectRecord(r, 7, "ProtocolViolation", { reason: "invalid-utf8" })
      await childGone(f)
      return brief(r, record)
    }))
  await C("release: every connection the CLI opened is closed when it exits (Streamable and legacy)", () =>
    withServers([streamable(), legacy()], async (srv, old) => {
      expectOk(await cli(["call", "--json", srv.url, "increment"]))
      expectOk(await cli(["call", "--json", old.url, "increment"]))
      await until(() => srv.openConnections() === 0 && old.openConnections() === 0, "no socket left open")
      check(old.closedStreams() === 1 && old.openStreams() === 0, "the GET stream closed")
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
    }))

  // The stateless era (2026-07-28): the rest of the full set.
  await C("2026 tools <url> against a stateless server: exit 0, tools listed; no initialize, nothing but POSTs", () =>
    withServers([stateless()], async (srv) => {
      const r = await cli(["tools", "--json", srv.url])
      const out = expectOk(r)
      const names = out.tools?.map((t) => t.name).join() ?? ""
      check(names.startsWith("add,echo,increment") && names.includes("region_query"), `tools ${names}`)
      check(srv.rpcCalls("initialize") === 0 && srv.requests.every((q) => q.method === "POST"), `initialize ${srv.rpcCalls("initialize")}, ${srv.requests.map((q) => q.method).join()}`)
      return `${r.ms} ms`
    }))
  await C("2026 discover --json against a handshake-era server (default revisions): 2025-11-25 after the refused probe", () =>
    withServers([streamable()], async (srv) => {
      const r = await cli(["discover", "--json", srv.url])
      const out = expectOk(r)
      check(out.protocolVersion === HANDSHAKE_LATEST, `protocolVersion ${out.protocolVersion}`)
      const stages = (out.stages ?? []).map((s) => `${s.stage}:${s.era}:${s.outcome}`).join()
      check(stages.startsWith("discover:stateless:RemoteRefusal,initialize:handshake:ok,"), `stages ${stages}`)
      check(srv.deletes() === 1, `${srv.deletes()} DELETEs`)
      return stages
    }))
  await C("2026 overrides: --discovery-timeout 300ms --call-timeout 5s, a stalled server/discover: exit 4 at stage discover, no fallback", () =>
    withServers([stateless()], async (srv) => {
      srv.script({ on: "server/discover", kind: "delay", ms: 2_000 })
      const r = await cli(["call", "--json", "--discovery-timeout", "300ms", "--call-timeout", "5s", srv.url, "increment"])
      const record = expectRecord(r, 4, "DeadlineExceeded", { stage: "discover", phase: "discovery", timeoutMs: 300 })
      check(srv.requests.length === 1, `${srv.requests.length} requests (a deadline never falls back)`)
      return brief(r, record)
    }))
  await C("2026 SIGINT during a call: exit 130 (Interrupted), the server sees the request closed; no notifications/cancelled", () =>
    withServers([stateless()], async (srv) => {
      srv.script({ on: "tools/call", kind: "headers-never-sent" })
      const r = await cli(["call", "--json", "--call-timeout", "30s", srv.url, "increment"], { sigintWhen: () => srv.rpcCalls("tools/call") === 1 })
      const record = expectRecord(r, 130, "Interrupted", { stage: "call" })
      check(r.sigintToExitMs !== undefined && r.sigintToExitMs < SIGINT_EXIT_MS, `exited ${r.sigintToExitMs} ms after SIGINT`)
      await until(() => srv.abortedResponses() === 1, "the server sees the request closed")
      check(srv.rpcCalls("notifications/cancelled") === 0, "notifications/cancelled was sent over HTTP")
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return `${brief(r, record)}, ${r.sigintToExitMs} ms after SIGINT`
    }))
  for (const [name, fault, code, tag] of fenced.filter(([name]) => name === "401" || name.startsWith("JSON-RPC"))) {
    await C(`2026 credentials: no canary printed on a ${name} (exit ${code}, ${tag}); none in _meta or the Mcp-* headers`, () =>
      withServers([stateless()], async (srv) => {
        srv.script({ on: "tools/call", ...fault })
        const r = await cli(["call", "--json", "--call-timeout", "500ms", ...secretArgs(srv.url), "increment"], { env: secretEnv })
        const record = expectRecord(r, code, tag)
        const call = srv.requests.find((q) => q.rpcMethod === "tools/call")
        check(call?.headers["authorization"] === `Bearer ${canaries.header}`, "authorization header")
        check(call?.headers["x-env-token"] === canaries.env, "the ${VAR} header")
        check(call?.url.includes(`token=${canaries.query}`), "the query")
        for (const q of srv.requests) {
          const added = JSON.stringify([q.meta ?? {}, Object.entries(q.headers).filter(([header]) => header.startsWith("mcp-"))])
          check(!canaryPattern.test(added), `${q.rpcMethod}: a canary in _meta or an Mcp-* header`)
        }
        check(srv.counter() === 1, `counter ${srv.counter()}`)
        return brief(r, record)
      }))
  }
  await C(`2026 bytes: Streamable SSE call answer of ${CEILING + 1} B over --call-max-bytes ${CEILING}: exit 5, observed ${CEILING + 1}`, () =>
    withServers([stateless({ mode: "sse" })], async (srv) => {
      srv.script({ on: "tools/call", kind: "exact-size", bytes: CEILING + 1, chunkSize: CHUNK, as: "sse" })
      const r = await cli(["call", "--json", "--call-max-bytes", String(CEILING), srv.url, "increment"])
      const record = expectRecord(r, 5, "ByteCeilingExceeded", { stage: "call", observedBytes: CEILING + 1, maxBytes: CEILING })
      check(srv.counter() === 1, `counter ${srv.counter()}`)
      return brief(r, record)
    }))
  await C("2026 replay: input_required (the CLI declares no handler): exit 7 (ProtocolViolation undeclared-capability); the counter is exactly 1", () =>
    withServers([stateless()], async (srv) => {
      srv.script({ on: "tools/call", kind: "input-required" })
      const r = await cli(["call", "--json", srv.url, "increment"])
      const record = expectRecord(r, 7, "ProtocolViolation", { reason: "undeclared-capability", stage: "call" })
      await sleep(200)
      check(srv.counter() === 1 && srv.rpcCalls("tools/call") === 1, `counter ${srv.counter()}, tools/call ${srv.rpcCalls("tools/call")}`)
      return brief(r, record)
    }))
  await C("2026 stdio: call over --stdio to a stateless child: exit 0, 2026-07-28 without initialize; the child is gone", () =>
    withFixture({ era: "stateless" }, async (f, line) => {
      const out = expectOk(await cli(["call", "--json", "--stdio", line, "add", "--args", `{"a":20,"b":22}`]))
      check(out.content?.[0]?.text === "42", "add")
      check(f.rpcCalls("server/discover") === 1 && f.rpcCalls("initialize") === 0, `arrivals ${f.arrivals().join()}`)
      await childGone(f)
    }))
}

// --- main ----------------------------------------------------------------------------------------

const targets = [
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
}

const failed = results.filter((r) => !r.ok)
const width = Math.max(...results.map((r) => r.name.length))
console.log(`phasebound CLI qualification (driven from node ${process.version})`)
for (const r of results) console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(width)}  ${String(r.ms).padStart(5)} ms  ${r.detail}`)
console.log(`${results.length - failed.length} passed, ${failed.length} failed (${Date.now() - started} ms)`)
console.log(`QUALIFY-SUMMARY ${JSON.stringify({ runtime: "cli", results: results.map((r) => ({ name: r.name, ok: r.ok, detail: r.detail })), childPids: [...childPids] })}`)
if (failed.length > 0) process.exitCode = 1
