/**
 * The test's side of the runner processes (runner.ts): spawns them, reads their JSON events,
 * waits for the ones it needs (real state, with generous bounds, never sleeps), sends commands,
 * and kills them with SIGKILL: the crash under test, and the cleanup of every test.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { Store } from "./clusterLayer.js"
import type { Command, RunnerEvent } from "./protocol.js"

const RUNNER = fileURLToPath(new URL("./runner.ts", import.meta.url))
const ROOT = fileURLToPath(new URL("../../../../", import.meta.url))

/** How long a runner may take to load: tsx and the cluster's modules load slowly on a busy 2-core machine. */
export const STARTUP_MS = 90_000

/** How long joining may take: the store, the socket server, the MCP connection. */
export const JOIN_MS = 30_000

export interface Runner {
  readonly name: string
  readonly events: ReadonlyArray<RunnerEvent>
  /** The first event (seen already or to come) that `pred` accepts; rejects after `timeoutMs` or if the runner exits. */
  readonly waitFor: <E extends RunnerEvent>(
    what: string,
    pred: (event: RunnerEvent) => event is E,
    timeoutMs?: number
  ) => Promise<E>
  readonly send: (command: Command) => void
  /** Tells the loaded runner to join the cluster; resolves once it has (its "ready"). */
  readonly join: () => Promise<void>
  /** SIGKILL, resolved once the process is gone. */
  readonly kill: () => Promise<void>
  readonly alive: () => boolean
  /** The end of its stderr (logs), for failure messages. */
  readonly stderrTail: () => string
}

interface Waiter {
  readonly pred: (event: RunnerEvent) => boolean
  readonly resolve: (event: RunnerEvent) => void
  readonly reject: (error: Error) => void
}

const TAIL_BYTES = 4_000

/** Every runner not known to be gone: killed if the test process exits with them still there. */
const live = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL")
})

export const startRunner = (options: { readonly name: string; readonly store: Store; readonly mcpUrl: string }): Runner => {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=@phasebound/source", "--import", "tsx", RUNNER],
    {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        PB_RUNNER_NAME: options.name,
        PB_STORE: JSON.stringify(options.store),
        PB_MCP_URL: options.mcpUrl
      }
    }
  )
  live.add(child)
  const events: Array<RunnerEvent> = []
  let waiters: Array<Waiter> = []
  let stderr = ""
  let exit: string | undefined
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child)
      exit = signal ?? `code ${code}`
      for (const waiter of waiters) waiter.reject(new Error(`runner ${options.name} exited (${exit})\n${stderr}`))
      waiters = []
      resolve()
    })
  )
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-TAIL_BYTES)
  })
  createInterface({ input: child.stdout! }).on("line", (line) => {
    let event: RunnerEvent
    try {
      event = JSON.parse(line)
    } catch {
      stderr = (stderr + `[stdout] ${line}\n`).slice(-TAIL_BYTES)
      return
    }
    events.push(event)
    const matched = waiters.filter((waiter) => waiter.pred(event))
    waiters = waiters.filter((waiter) => !matched.includes(waiter))
    for (const waiter of matched) waiter.resolve(event)
  })

  const waitFor = <E extends RunnerEvent>(
    what: string,
    pred: (event: RunnerEvent) => event is E,
    timeoutMs = 30_000
  ): Promise<E> => {
    const seen = events.find(pred)
    if (seen !== undefined) return Promise.resolve(seen)
    if (exit !== undefined) return Promise.reject(new Error(`runner ${options.name} exited (${exit}) before ${what}\n${stderr}`))
    return new Promise<E>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters = waiters.filter((waiter) => waiter !== entry)
        reject(new Error(`runner ${options.name}: no ${what} in ${timeoutMs} ms; events ${JSON.stringify(events)}\n${stderr}`))
      }, timeoutMs)
      const entry: Waiter = {
        pred,
        resolve: (event) => {
          clearTimeout(timer)
          if (pred(event)) resolve(event)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        }
      }
      waiters.push(entry)
    })
  }

  const send = (command: Command) => {
    child.stdin?.write(`${JSON.stringify(command)}\n`)
  }

  return {
    name: options.name,
    events,
    waitFor,
    send,
    join: async () => {
      await waitFor("loaded", (event): event is RunnerEvent => event.event === "loaded", STARTUP_MS)
      send({ cmd: "join" })
      await waitFor("ready", (event): event is RunnerEvent => event.event === "ready", JOIN_MS)
    },
    kill: () => {
      if (exit === undefined) child.kill("SIGKILL")
      return exited
    },
    alive: () => exit === undefined,
    stderrTail: () => stderr
  }
}

/** Polls `check` every 50 ms until it holds; rejects with `describe()` after `timeoutMs`. */
export const until = async (what: string, check: () => boolean, timeoutMs: number, describe: () => string = () => ""): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${describe()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The runner's latest report of the shards it holds (0 before its first). */
export const ownedShards = (runner: Runner): number => {
  for (let i = runner.events.length - 1; i >= 0; i--) {
    const event = runner.events[i]!
    if (event.event === "shards") return event.owned
  }
  return 0
}
