/** Starts a server child process and waits for the JSON line with its URLs. */
import { spawn, type ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"

export interface ServerChild<I> {
  readonly info: I
  readonly proc: ChildProcess
  readonly stop: () => Promise<void>
}

export const tsxArgs = ["--no-warnings", "--import", "tsx", "--conditions=@phasebound/source"]

export const startChild = <I>(script: string, args: ReadonlyArray<string>): Promise<ServerChild<I>> =>
  new Promise((resolve, reject) => {
    const path = fileURLToPath(new URL(script, import.meta.url))
    const proc = spawn(process.execPath, [...tsxArgs, path, ...args], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    const timer = setTimeout(() => {
      proc.kill("SIGKILL")
      reject(new Error(`${script} did not start within 30 s`))
    }, 30_000)
    proc.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${script} exited early (${code})`))
    })
    proc.stdout!.on("data", (chunk) => {
      out += chunk
      const line = out.indexOf("\n")
      if (line < 0) return
      clearTimeout(timer)
      proc.removeAllListeners("exit")
      const info = JSON.parse(out.slice(0, line)) as I
      resolve({
        info,
        proc,
        stop: () =>
          new Promise<void>((done) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return done()
            const kill = setTimeout(() => proc.kill("SIGKILL"), 3_000)
            proc.once("exit", () => {
              clearTimeout(kill)
              done()
            })
            proc.kill("SIGTERM")
          })
      })
    })
  })
