/**
 * The Promise API over real loopback HTTP: connect, list, call and close (closing twice), the
 * shared HTTP client and a program that exits on its own, an already-aborted signal, and options
 * validated before any I/O.
 */
import * as Testkit from "@phasebound/testkit"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { connect } from "../../src/promise.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const tsx = path.join(path.dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/cli.mjs")

let srv: Testkit.TestServer
beforeEach(async () => {
  srv = await Testkit.startServer()
})
afterEach(async () => {
  await srv.close()
})

describe("Promise API", () => {
  it("connects, lists, calls, and closes (DELETE once, even when closed twice)", async () => {
    const connection = await connect({ url: srv.url, clientInfo: { name: "test", version: "1.0.0" } })
    expect(connection.transport).toBe("streamable-http")
    expect(connection.protocolVersion).toBe("2025-11-25")
    expect(connection.serverInfo?.name).toBe("phasebound-testkit")
    expect(connection.tools.map((t) => t.name)).toEqual(["add", "echo", "increment"])
    expect(await connection.callTool("add", { a: 1, b: 2 })).toMatchObject({ content: [{ type: "text", text: "3" }] })
    expect((await connection.listTools()).length).toBe(3)
    await Promise.all([connection.close(), connection.close()])
    expect(srv.deletes()).toBe(1)
    const [discover, initialize] = srv.requests.slice(0, 2).map((request) => JSON.parse(request.body))
    expect(discover.params._meta["io.modelcontextprotocol/clientInfo"]).toEqual({ name: "test", version: "1.0.0" })
    expect(initialize.params.clientInfo).toEqual({ name: "test", version: "1.0.0" })
  })

  it("connections without an httpClient share one HTTP client: the second reuses the first's sockets", async () => {
    const first = await connect({ url: srv.url })
    await first.callTool("add", { a: 1, b: 2 })
    await first.close()
    const accepted = srv.acceptedConnections()
    // Kept alive for the next connection (a client per connection would have closed them).
    expect(srv.openConnections()).toBeGreaterThanOrEqual(1)
    const second = await connect({ url: srv.url })
    await second.callTool("add", { a: 1, b: 2 })
    await second.close()
    // The second connection's requests all went over sockets the first one opened.
    expect(srv.acceptedConnections()).toBe(accepted)
    expect(srv.rpcCalls("initialize")).toBe(2)
  })

  it("a program that used the shared client exits on its own once its connections are closed", async () => {
    const child = spawn(process.execPath, [tsx, "--conditions=@phasebound/source", path.join(here, "../support/children/promise-exit.ts"), srv.url], {
      cwd: here,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    // The clock starts when the program has closed its connection and printed the answer (its
    // last act), so tsx's start-up on a loaded machine is not counted; a socket holding the
    // process open past that would hit the kill 30 s later.
    let printedAt: number | undefined
    let killer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.stdout.on("data", (chunk) => {
      out += chunk
      if (printedAt === undefined && out.includes("\n")) {
        printedAt = Date.now()
        clearTimeout(killer)
        killer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      }
    })
    child.stderr.on("data", (chunk) => (err += chunk))
    const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (code, signal) => resolve([code, signal])))
    const exitedAfterMs = printedAt === undefined ? undefined : Date.now() - printedAt
    clearTimeout(killer)
    expect({ status, signal }, err.slice(-3_000)).toEqual({ status: 0, signal: null })
    expect(JSON.parse(out)).toMatchObject({ content: [{ type: "text", text: "5" }] })
    expect(exitedAfterMs).toBeLessThan(20_000)
  }, 160_000)

  // A typed rejection with a call's own timeout in milliseconds, an aborted signal rejecting with
  // its own reason (never a deadline) and the abandoned request released at the server, in a
  // call and in connect: the contract suite's (overrides, cancellation), through the Promise API
  // on every row.

  it("an already-aborted signal rejects at once and sends nothing", async () => {
    const connection = await connect({ url: srv.url })
    const before = srv.requests.length
    const reason = "stop"
    await expect(connection.callTool("increment", {}, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    expect(srv.requests.length).toBe(before)
    await connection.close()
  })

  it("validates per-call overrides before sending", async () => {
    const connection = await connect({ url: srv.url })
    const before = srv.requests.length
    await expect(connection.callTool("increment", {}, { timeout: Number.NaN })).rejects.toMatchObject({
      _tag: "InvalidOption",
      option: "call.timeout"
    })
    await expect(connection.callTool("increment", {}, { maxBytes: 0.5 })).rejects.toMatchObject({
      _tag: "InvalidOption",
      option: "call.maxBytes"
    })
    expect(srv.requests.length).toBe(before)
    await connection.close()
  })

  it("refuses invalid options before any I/O", async () => {
    await expect(connect({ url: srv.url, policy: { discovery: { maxBytes: -1 } } })).rejects.toMatchObject({
      _tag: "InvalidOption",
      option: "discovery.maxBytes"
    })
    expect(srv.requests.length).toBe(0)
  })
})
