/**
 * One runner process per server mode: workloads 1-4 for every client, alternating clients in
 * ABAB order within each workload, so that slow drifts (JIT, GC, thermal) spread over all of
 * them. The server runs in another process. Prints one JSON line with the raw samples.
 *
 *   tsx --conditions=@phasebound/source src/runLatency.ts '<json config>'
 */
import { adapters, type ClientAdapter, type ServerMode, type Session } from "./clients.js"
import { abab, median, percentile, round } from "./stats.js"

export interface LatencyConfig {
  readonly mode: ServerMode
  readonly url: string
  readonly bigUrl: string
  readonly reps: number
  readonly discoveryConnects: number
  readonly seqCalls: number
  readonly concCalls: number
  readonly concurrency: number
  readonly large: boolean
  readonly largeSamples: number
  readonly clients: ReadonlyArray<string>
  readonly workloads: ReadonlyArray<string>
}

export interface LatencyResult {
  readonly mode: ServerMode
  /** `protocolVersion`: the revision the client negotiated in the probe connect, when it says. */
  readonly clients: Record<string, { label: string; ours: boolean; protocolVersion?: string; error?: string }>
  /** per workload, per client: one value per repetition */
  readonly discoveryMs: Record<string, Array<number>>
  readonly seqP50Ms: Record<string, Array<number>>
  readonly seqP99Ms: Record<string, Array<number>>
  readonly concCallsPerSec: Record<string, Array<number>>
  readonly largeListMBps: Record<string, Array<number>>
  readonly largeCallMBps: Record<string, Array<number>>
  readonly largeBytes: { list: number; call: number }
  readonly errors: Array<string>
}

const config = JSON.parse(process.argv[2]!) as LatencyConfig
const now = () => performance.now()
const errors: Array<string> = []

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const describe = (error: unknown): string => {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300)
  if (typeof error === "object" && error !== null && "_tag" in error) return String((error as { _tag: unknown })._tag)
  return String(error).slice(0, 300)
}

// ---------------------------------------------------------------------------------------------
// The bare floor of workload 4: fetch + text + JSON.parse of the same response, nothing else.

const floorSession = async (url: string) => {
  let sessionId: string | null = null
  let id = 0
  const post = (body: unknown) =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId === null ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" })
      },
      body: JSON.stringify(body)
    })
  const init = await post({
    jsonrpc: "2.0",
    id: id++,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "floor", version: "0" } }
  })
  sessionId = init.headers.get("mcp-session-id")
  await init.text()
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text()
  /** Returns [ms, bytes]. */
  const request = async (method: string, params: unknown): Promise<[number, number]> => {
    const t = now()
    const res = await post({ jsonrpc: "2.0", id: id++, method, params })
    const text = await res.text()
    const sse = (res.headers.get("content-type") ?? "").startsWith("text/event-stream")
    const json = sse ? text.slice(text.indexOf("data: ") + 6, text.lastIndexOf("\n\n")) : text
    const parsed = JSON.parse(json) as { result?: unknown }
    const ms = now() - t
    if (parsed.result === undefined) throw new Error(`floor: ${method} has no result`)
    return [ms, Buffer.byteLength(text)]
  }
  const close = async () => {
    if (sessionId !== null) await fetch(url, { method: "DELETE", headers: { "mcp-session-id": sessionId } }).then((r) => r.text())
  }
  return { request, close }
}

// ---------------------------------------------------------------------------------------------

const result: LatencyResult = {
  mode: config.mode,
  clients: {},
  discoveryMs: {},
  seqP50Ms: {},
  seqP99Ms: {},
  concCallsPerSec: {},
  largeListMBps: {},
  largeCallMBps: {},
  largeBytes: { list: 0, call: 0 },
  errors
}

const push = (table: Record<string, Array<number>>, client: string, value: number) => {
  ;(table[client] ??= []).push(round(value, 4))
}

// Load every adapter; one that does not load is recorded and left out.
const loaded: Array<ClientAdapter> = []
for (const name of config.clients) {
  try {
    const adapter = await withTimeout(adapters[name]!(), 20_000, `${name} load`)
    if (!adapter.modes.includes(config.mode)) continue
    // Probe: one discovery, bounded, so that a client that cannot talk to this server is left out.
    const session = await withTimeout(adapter.connect(config.url, config.mode), 20_000, `${name} connect`)
    if (session.toolCount !== 50) throw new Error(`${name} saw ${session.toolCount} tools, not 50`)
    await withTimeout(session.call("add", { a: 1, b: 2 }), 20_000, `${name} call`)
    await session.close()
    // The 2026-07-28 workload measures that revision only: a client that fell back is left out.
    if (config.mode === "stateless" && session.protocolVersion !== "2026-07-28") {
      throw new Error(`${name} negotiated ${session.protocolVersion ?? "an unknown revision"}, not 2026-07-28`)
    }
    loaded.push(adapter)
    result.clients[name] = {
      label: adapter.label,
      ours: adapter.ours,
      ...(session.protocolVersion === undefined ? {} : { protocolVersion: session.protocolVersion })
    }
  } catch (error) {
    result.clients[name] = { label: name, ours: name.startsWith("phasebound"), error: describe(error) }
    errors.push(`${config.mode} ${name}: ${describe(error)}`)
  }
}

const startedAt = performance.now()
const progress = (message: string) => process.stderr.write(`[${config.mode} +${((performance.now() - startedAt) / 1000).toFixed(0)}s] ${message}\n`)

const guarded = async (what: string, client: string, body: () => Promise<void>) => {
  if (process.env["BENCH_VERBOSE"] === "1") progress(`${what} ${client}`)
  try {
    await body()
  } catch (error) {
    errors.push(`${config.mode} ${what} ${client}: ${describe(error)}`)
  }
}

const has = (w: string) => config.workloads.includes(w)

// (1) discovery: connect + initialize + tools/list of 50 tools (close is not timed).
if (has("discovery")) {
  progress("discovery")
  // Warm-up: one untimed block per client, as many connects as a timed one, so that every
  // repetition times code the JIT has compiled (as the other workloads' warm-ups do).
  for (const adapter of loaded) {
    await guarded("discovery", adapter.name, async () => {
      for (let i = 0; i < config.discoveryConnects; i++) await (await adapter.connect(config.url, config.mode)).close()
    })
  }
  for (let rep = 0; rep < config.reps; rep++) {
    for (const adapter of abab(loaded, rep)) {
      await guarded("discovery", adapter.name, async () => {
        const times: Array<number> = []
        for (let i = 0; i < config.discoveryConnects; i++) {
          const t = now()
          const session = await withTimeout(adapter.connect(config.url, config.mode), 30_000, "connect")
          times.push(now() - t)
          await session.close()
        }
        push(result.discoveryMs, adapter.name, median(times))
      })
    }
  }
}

// (2) and (3): one session per client for the whole workload.
const sessions = new Map<string, Session>()
if (has("sequential") || has("concurrent")) {
  for (const adapter of loaded) {
    await guarded("connect", adapter.name, async () => {
      const session = await adapter.connect(config.url, config.mode)
      await session.sequential(200) // warm-up
      sessions.set(adapter.name, session)
    })
  }
}
const withSession = loaded.filter((adapter) => sessions.has(adapter.name))

if (has("sequential")) {
  progress("sequential")
  for (let rep = 0; rep < config.reps; rep++) {
    for (const adapter of abab(withSession, rep)) {
      await guarded("sequential", adapter.name, async () => {
        const latencies = await withTimeout(sessions.get(adapter.name)!.sequential(config.seqCalls), 120_000, "sequential")
        push(result.seqP50Ms, adapter.name, percentile(latencies, 50))
        push(result.seqP99Ms, adapter.name, percentile(latencies, 99))
      })
    }
  }
}

if (has("concurrent")) {
  progress("concurrent")
  for (const adapter of withSession) {
    await guarded("concurrent", adapter.name, async () => {
      await sessions.get(adapter.name)!.concurrent(Math.min(1000, config.concCalls), config.concurrency) // warm-up
    })
  }
  for (let rep = 0; rep < config.reps; rep++) {
    for (const adapter of abab(withSession, rep)) {
      await guarded("concurrent", adapter.name, async () => {
        const ms = await withTimeout(sessions.get(adapter.name)!.concurrent(config.concCalls, config.concurrency), 180_000, "concurrent")
        push(result.concCallsPerSec, adapter.name, (config.concCalls / ms) * 1000)
      })
    }
  }
}
for (const session of sessions.values()) await session.close().catch(() => undefined)

// (4) large responses: an 8 MiB tools/list and an 8 MiB tools/call result, beside the floor.
if (config.large && has("large")) {
  progress("large")
  const floor = await floorSession(config.bigUrl)
  const [, listBytes] = await floor.request("tools/list", {})
  const [, callBytes] = await floor.request("tools/call", { name: "big", arguments: {} })
  result.largeBytes.list = listBytes
  result.largeBytes.call = callBytes
  const MB = 1_000_000
  type Big = { name: string; list: () => Promise<unknown>; call: () => Promise<unknown>; close: () => Promise<void> }
  const bigs: Array<Big> = [
    {
      name: "fetch-floor",
      list: () => floor.request("tools/list", {}),
      call: () => floor.request("tools/call", { name: "big", arguments: {} }),
      close: floor.close
    }
  ]
  for (const adapter of loaded) {
    await guarded("large connect", adapter.name, async () => {
      const session = await adapter.connect(config.bigUrl, config.mode)
      bigs.push({ name: adapter.name, list: session.listTools, call: () => session.call("big", {}), close: session.close })
    })
  }
  for (const big of bigs) {
    await guarded("large warm-up", big.name, async () => {
      await big.list()
      await big.call()
    })
  }
  for (let rep = 0; rep < config.reps; rep++) {
    for (const big of abab(bigs, rep)) {
      await guarded("large", big.name, async () => {
        const lists: Array<number> = []
        const calls: Array<number> = []
        for (let i = 0; i < config.largeSamples; i++) {
          let t = now()
          await big.list()
          lists.push(now() - t)
          t = now()
          await big.call()
          calls.push(now() - t)
        }
        push(result.largeListMBps, big.name, listBytes / MB / (median(lists) / 1000))
        push(result.largeCallMBps, big.name, callBytes / MB / (median(calls) / 1000))
      })
    }
  }
  for (const big of bigs) await big.close().catch(() => undefined)
}

for (const adapter of loaded) await adapter.dispose?.().catch(() => undefined)
process.stdout.write(JSON.stringify(result) + "\n")
process.exit(0)
