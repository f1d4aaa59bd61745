/** A raw driver for the stdio test server: spawn, write JSON lines, collect stdout lines and bytes. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import type { StdioServerCommand } from "../src/StdioServer.js"

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface StdioDriver {
  readonly child: ChildProcessWithoutNullStreams
  /** Complete stdout lines, without their "\n". */
  readonly lines: ReadonlyArray<Buffer>
  /** Byte offsets (into stdout) where each 'data' event ended. */
  readonly chunkEnds: ReadonlyArray<number>
  stdoutBytes(): number
  stderrBytes(): number
  /** All of stdout so far. */
  stdout(): Buffer
  send(message: unknown): void
  /** Sends a request and resolves with the parsed line answering its id. */
  request(id: number, method: string, params?: unknown, timeoutMs?: number): Promise<Record<string, unknown>>
  /** Resolves with the index of the first line (from `from`) that satisfies `pred`. */
  waitForLine(pred: (line: Buffer) => boolean, timeoutMs?: number, from?: number): Promise<number>
  readonly exited: Promise<Exit>
  /** Exit status, or undefined while it runs. */
  exit(): Exit | undefined
  /** Starts reading stderr (when spawned with `drainStderr: false`). */
  drainStderr(): void
}

export const waitUntil = async (pred: () => boolean, timeoutMs = 3000, what = "condition"): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const parseLine = (line: Buffer): Record<string, unknown> => JSON.parse(line.toString("utf8")) as Record<string, unknown>

export const spawnStdio = (command: StdioServerCommand, options: { drainStderr?: boolean } = {}): StdioDriver => {
  const child = spawn(command.command, [...command.args], {
    env: { ...process.env, ...command.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const chunks: Array<Buffer> = []
  const chunkEnds: Array<number> = []
  const lines: Array<Buffer> = []
  let pending: Array<Buffer> = []
  let stdoutBytes = 0
  let stderrBytes = 0
  let exit: Exit | undefined

  child.stdout.on("data", (chunk: Buffer) => {
    chunks.push(chunk)
    stdoutBytes += chunk.length
    chunkEnds.push(stdoutBytes)
    let data = chunk
    let newline = data.indexOf(0x0a)
    while (newline !== -1) {
      pending.push(data.subarray(0, newline))
      lines.push(Buffer.concat(pending))
      pending = []
      data = data.subarray(newline + 1)
      newline = data.indexOf(0x0a)
    }
    if (data.length > 0) pending.push(data)
  })
  const drainStderr = () => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderrBytes += chunk.length
    })
  }
  if (options.drainStderr ?? true) drainStderr()
  // Writing to a child that already exited is expected in some tests.
  child.stdin.on("error", () => {})
  const exited = new Promise<Exit>((resolve) => {
    child.on("exit", (code, signal) => {
      exit = { code, signal }
      resolve(exit)
    })
  })

  const waitForLine = async (pred: (line: Buffer) => boolean, timeoutMs = 3000, from = 0): Promise<number> => {
    let found = -1
    await waitUntil(
      () => {
        found = lines.findIndex((line, index) => index >= from && pred(line))
        return found !== -1
      },
      timeoutMs,
      "a stdout line"
    )
    return found
  }

  const send = (message: unknown) => {
    child.stdin.write(JSON.stringify(message) + "\n")
  }

  return {
    child,
    lines,
    chunkEnds,
    stdoutBytes: () => stdoutBytes,
    stderrBytes: () => stderrBytes,
    stdout: () => Buffer.concat(chunks),
    send,
    request: async (id, method, params = {}, timeoutMs = 3000) => {
      send({ jsonrpc: "2.0", id, method, params })
      const index = await waitForLine((line) => {
        try {
          return parseLine(line)["id"] === id
        } catch {
          return false
        }
      }, timeoutMs)
      return parseLine(lines[index] ?? Buffer.alloc(0))
    },
    waitForLine,
    exited,
    exit: () => exit,
    drainStderr
  }
}

/** The stateless era's revision (2026-07-28). */
export const MODERN_VERSION = "2026-07-28"

/** The stateless era's per-request `_meta` fields; `undefined` in `overrides` leaves a field out. */
export const modernMeta = (
  overrides: {
    readonly protocolVersion?: unknown
    readonly clientCapabilities?: unknown
    readonly clientInfo?: unknown
  } = {}
): Record<string, unknown> => {
  const fields: Record<string, unknown> = {
    "io.modelcontextprotocol/protocolVersion": "protocolVersion" in overrides ? overrides.protocolVersion : MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": "clientCapabilities" in overrides ? overrides.clientCapabilities : {},
    "io.modelcontextprotocol/clientInfo": "clientInfo" in overrides ? overrides.clientInfo : { name: "stdio-test", version: "0" }
  }
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
}

/** Request params carrying the stateless era's `_meta` (default: `modernMeta()`). */
export const modernParams = (params: Record<string, unknown> = {}, meta: Record<string, unknown> = modernMeta()) => ({
  ...params,
  _meta: meta
})
