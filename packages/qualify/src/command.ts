/**
 * A command run to completion, asynchronously: the qualification runs its builds, packs and
 * installs side by side, and the MCP servers its programs talk to live in the orchestrator's
 * process, whose event loop must go on answering meanwhile.
 */
import { execFile } from "node:child_process"

/** A command run to completion: its exit, what it printed, how long it took. */
export interface Ran {
  readonly ok: boolean
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  /** Why it has no exit status: it could not start, or was killed at its timeout. */
  readonly error: (Error & { code?: string }) | undefined
  readonly ms: number
}

export interface CommandOptions {
  readonly cwd: string
  readonly env?: NodeJS.ProcessEnv
  readonly timeout?: number
}

export const runCommand = (command: string, args: ReadonlyArray<string>, options: CommandOptions): Promise<Ran> =>
  new Promise((resolve) => {
    const started = Date.now()
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        encoding: "utf8",
        timeout: options.timeout ?? 300_000,
        maxBuffer: 64 * 1024 * 1024
      },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : null
        const failure = error !== null && status === null
          ? Object.assign(error, { code: error.killed ? `killed (${error.signal ?? "signal"})` : String(error.code ?? "") }) as Error & { code?: string }
          : undefined
        resolve({ ok: error === null, status, stdout, stderr, error: failure, ms: Date.now() - started })
      }
    )
  })
