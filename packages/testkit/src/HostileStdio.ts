/**
 * The scripted hostile stdio server, test side: writes a script of answers to a file and gives
 * the command that spawns the child (stdio/hostileStdioServer.ts, bundled: stdioBundle.ts) on
 * it, and reads back what arrived. The child's script format is described in its module comment;
 * HostileServer.ts is the HTTP counterpart.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { HostileEra, ToolCallArrival } from "./HostileServer.js"
import { childProgramPath, HOSTILE_STDIO_PROGRAM } from "./stdioBundle.js"

/** Absolute path of the hostile child program (bundled on first use from the sources; see stdioBundle.ts). */
export const hostileStdioScript = (): string => childProgramPath(HOSTILE_STDIO_PROGRAM)

/** One scripted answer of the stdio child. */
export interface HostileStdioAnswer {
  /** Written as is (`__ID__` becomes the request's id); carries its own line ends, or none. */
  readonly text?: string
  /** Raw bytes, base64. */
  readonly base64?: string
  /** Bytes per write, an event-loop turn between writes (default: one write). */
  readonly chunkSize?: number
  /** Exit (code 3) once written. */
  readonly then?: "exit"
  /** Never answer. */
  readonly silent?: boolean
}

/** Per JSON-RPC method, the answers in order (the last one is repeated); other methods answer honestly. */
export type HostileStdioAnswers = Readonly<Record<string, ReadonlyArray<HostileStdioAnswer>>>

export interface HostileStdioCase {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** The child's environment: the script's path, plus `env` as given. */
  readonly env: Readonly<Record<string, string>>
  /** Every message the child received, in order (read from its log file). */
  readonly received: () => ReadonlyArray<{ readonly method: string; readonly id: unknown }>
  /** The `tools/call` messages the child received. */
  readonly toolCallArrivals: () => ReadonlyArray<ToolCallArrival>
  /** Removes the script and log files. */
  readonly cleanup: () => void
}

interface LogLine {
  readonly method: string
  readonly id: unknown
  readonly nonce: unknown
  readonly effectIdentity: unknown
}

/** Writes the script; the child is spawned by whoever runs `command` with `args` and `env`. */
export const hostileStdioCase = (options: {
  readonly era: HostileEra
  readonly answers?: HostileStdioAnswers
  /** More variables for the child (a canary secret, say). */
  readonly env?: Readonly<Record<string, string>>
}): HostileStdioCase => {
  const dir = mkdtempSync(join(tmpdir(), "phasebound-hostile-"))
  const log = join(dir, "arrivals.jsonl")
  const scriptPath = join(dir, "script.json")
  writeFileSync(scriptPath, JSON.stringify({ era: options.era, log, answers: options.answers ?? {} }))
  const lines = (): ReadonlyArray<LogLine> =>
    existsSync(log)
      ? readFileSync(log, "utf8").split("\n").filter((text) => text !== "").map((text) => JSON.parse(text) as LogLine)
      : []
  return {
    command: process.execPath,
    args: [hostileStdioScript()],
    env: { ...options.env, PHASEBOUND_HOSTILE_SCRIPT: scriptPath },
    received: () => lines().map(({ method, id }) => ({ method, id })),
    toolCallArrivals: () =>
      lines()
        .filter((entry) => entry.method === "tools/call")
        .map((entry) => ({
          id: typeof entry.id === "string" || typeof entry.id === "number" ? entry.id : undefined,
          nonce: entry.nonce,
          effectIdentity: entry.effectIdentity
        })),
    cleanup: () => rmSync(dir, { recursive: true, force: true })
  }
}
