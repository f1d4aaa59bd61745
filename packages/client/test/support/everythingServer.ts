/**
 * `@modelcontextprotocol/server-everything` as a child process in `sse` or `streamableHttp`
 * mode. It listens on all interfaces on the port it is given; we only ever connect to it on
 * 127.0.0.1. The port is found by binding 127.0.0.1:0 and releasing it.
 */
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"

const require = createRequire(import.meta.url)
const entry = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js")

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

export interface EverythingServer {
  readonly url: string
  readonly close: () => Promise<void>
}

export const startEverythingServer = async (mode: "sse" | "streamableHttp"): Promise<EverythingServer> => {
  const port = await freePort()
  const child = spawn(process.execPath, [entry, mode], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    let log = ""
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${log}`)), 15_000)
    child.stderr.on("data", (chunk) => {
      log += chunk
      if (/running on port|listening on port/i.test(log)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once("exit", (code) => reject(new Error(`server-everything exited ${code}: ${log}`)))
  })
  return {
    url: `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGKILL")
      })
  }
}
