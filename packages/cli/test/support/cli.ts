/**
 * Runs the CLI as a subprocess under one of its three forms, and reads what it left: exit
 * code, stdout, and the stderr record (asserting the one-line rule on the way).
 */
import { spawn, type ChildProcess } from "node:child_process"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Testkit from "@phasebound/testkit"
import { afterAll, expect } from "vitest"

export const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const root = path.resolve(cliDir, "../..")

export type Runtime = "node" | "bun" | "compiled"

/** The command line of each form: the Node bundle, Bun on the sources, the compiled executable. */
export const commandOf = (runtime: Runtime): readonly [string, ReadonlyArray<string>] => {
  switch (runtime) {
    case "node":
      return [process.execPath, [path.join(cliDir, "dist/bin.js")]]
    case "bun":
      return [path.join(root, "node_modules/.bin/bun"), ["--conditions=@phasebound/source", path.join(cliDir, "src/bin.ts")]]
    case "compiled":
      return [path.join(cliDir, "dist/phasebound"), []]
  }
}

export interface RunResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  /** Called once the process started, e.g. to send it a signal later. */
  readonly onSpawn?: (child: ChildProcess) => void
  readonly timeoutMs?: number
}

/** Where the CLI keeps OAuth tokens in tests that do not choose: never the user's own token file. */
export const testTokenFile = path.join(tmpdir(), `phasebound-cli-test-${process.pid}`, "tokens.json")

/** A minimal environment: no inherited secrets, no colours, no debug switches, a token file of the test run's. */
export const baseEnv = (): Record<string, string> => ({
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  HOME: process.env["HOME"] ?? "/tmp",
  PHASEBOUND_TOKEN_FILE: testTokenFile,
  ...(process.env["TMPDIR"] === undefined ? {} : { TMPDIR: process.env["TMPDIR"] })
})

/** Runs asynchronously: the testkit servers live in this process and must keep answering. */
export const run = (runtime: Runtime, args: ReadonlyArray<string>, options: RunOptions = {}): Promise<RunResult> => {
  const [command, prefix] = commandOf(runtime)
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, ...args], {
      cwd: options.cwd ?? cliDir,
      env: { ...baseEnv(), ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20_000)
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
    options.onSpawn?.(child)
  })
}

export interface ErrorRecord {
  readonly tag: string
  readonly stage: string
  readonly phase: string
  readonly limits: { readonly timeoutMs: number; readonly maxBytes: number }
  readonly outcome: string
  readonly retryable: boolean
  readonly [key: string]: unknown
}

/** stderr must be exactly one line holding one JSON object `{"error": {...}}`. */
export const recordOf = (result: RunResult): ErrorRecord => {
  expect(result.stderr.endsWith("\n"), `stderr: ${result.stderr}`).toBe(true)
  const lines = result.stderr.slice(0, -1).split("\n")
  expect(lines, `stderr: ${result.stderr}`).toHaveLength(1)
  const parsed = JSON.parse(lines[0]!) as { readonly error: ErrorRecord }
  expect(Object.keys(parsed)).toEqual(["error"])
  return parsed.error
}

/** A failed run: the expected exit code, nothing on stdout, one record on stderr. */
export const expectFailure = (result: RunResult, code: number, tag: string): ErrorRecord => {
  const record = recordOf(result)
  expect({ code: result.code, tag: record.tag, stdout: result.stdout }).toEqual({ code, tag, stdout: "" })
  return record
}

/** A successful run's JSON stdout (non-TTY stdout is machine mode), with an empty stderr. */
export const expectJson = (result: RunResult, code = 0): unknown => {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code, stderr: "" })
  return JSON.parse(result.stdout)
}

/** Quotes words for `--stdio` the way a POSIX shell would read them back. */
export const shellQuote = (words: ReadonlyArray<string>): string =>
  words.map((word) => (/^[A-Za-z0-9_./=:-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(" ")

export const waitFor = async (predicate: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A maker of the testkit's stdio fixtures for one test file: each is cleaned up after its tests. */
export const stdioFixtures = () => {
  const made: Array<Testkit.StdioFixture> = []
  afterAll(() => made.forEach((f) => f.cleanup()))
  return (options?: Testkit.StdioFixtureOptions): Testkit.StdioFixture => {
    const f = Testkit.makeStdioFixture(options)
    made.push(f)
    return f
  }
}
