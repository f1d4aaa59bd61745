import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import {
  makeStdioFixture,
  stdioServerScript,
  stdioServerCommand,
  type StdioFixture,
  type StdioFixtureOptions
} from "../src/StdioServer.js"
import { parseLine, spawnStdio, waitUntil, type StdioDriver } from "./stdio-helpers.js"

const fixtures: Array<StdioFixture> = []
const drivers: Array<StdioDriver> = []

const start = (options: StdioFixtureOptions = {}, spawnOptions: { drainStderr?: boolean } = {}) => {
  const fixture = makeStdioFixture(options)
  fixtures.push(fixture)
  const driver = spawnStdio(fixture, spawnOptions)
  drivers.push(driver)
  return { fixture, driver }
}

afterEach(async () => {
  for (const driver of drivers.splice(0)) {
    if (driver.exit() === undefined) {
      driver.child.kill("SIGKILL")
      await driver.exited
    }
  }
  for (const fixture of fixtures.splice(0)) fixture.cleanup()
})

const initializeParams = (protocolVersion = "2025-11-25") => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "stdio-test", version: "0" }
})

const handshake = async (driver: StdioDriver, protocolVersion?: string) => {
  const response = await driver.request(1, "initialize", initializeParams(protocolVersion))
  driver.send({ jsonrpc: "2.0", method: "notifications/initialized" })
  return response
}

/** Collects the child's stderr as text (the server's log lines), alongside the driver's byte count. */
const collectStderr = (driver: StdioDriver) => {
  let text = ""
  driver.child.stderr.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8")
  })
  return (fragment: string, what = fragment) => waitUntil(() => text.includes(fragment), 3000, `stderr: ${what}`)
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })
const isContinuationByte = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80

describe("stdio server: normal behaviour", () => {
  it("answers initialize, tools/list and tools/call; the counter and arrivals are observable", async () => {
    const { fixture, driver } = start()
    const init = await handshake(driver)
    expect(init).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: { protocolVersion: "2025-11-25", serverInfo: { name: "phasebound-testkit" } }
    })
    const list = await driver.request(2, "tools/list")
    const tools = (list["result"] as { tools: Array<{ name: string }> }).tools
    expect(tools.map((tool) => tool.name)).toEqual(["add", "echo", "increment"])

    expect(fixture.counter()).toBe(0)
    const call = await driver.request(3, "tools/call", { name: "increment", arguments: {} })
    expect(call).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "1" }] } })
    expect(fixture.counter()).toBe(1)
    const add = await driver.request(4, "tools/call", { name: "add", arguments: { a: 2, b: 3 } })
    expect(add["result"]).toEqual({ content: [{ type: "text", text: "5" }] })

    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } })
    await driver.request(5, "ping")
    expect(fixture.rpcCalls("tools/call")).toBe(2)
    expect(fixture.rpcCalls("notifications/cancelled")).toBe(1)
    expect(fixture.arrivals()).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
      "tools/call",
      "notifications/cancelled",
      "ping"
    ])
    // Notifications get no answer: one line per request, nothing else.
    expect(driver.lines.map((line) => parseLine(line)["id"])).toEqual([1, 2, 3, 4, 5])

    // Closing stdin ends it promptly.
    expect(fixture.isAlive()).toBe(true)
    const closedAt = Date.now()
    driver.child.stdin.end()
    expect(await driver.exited).toEqual({ code: 0, signal: null })
    expect(Date.now() - closedAt).toBeLessThan(1000)
    expect(fixture.isAlive()).toBe(false)
  })

  it("negotiates 2024-11-05, paginates, and answers unknown methods and garbage with JSON-RPC errors", async () => {
    const { fixture, driver } = start({ extraTools: 3, pageSize: 4 })
    expect((await handshake(driver, "2024-11-05"))["result"]).toMatchObject({ protocolVersion: "2024-11-05" })
    const page1 = (await driver.request(2, "tools/list"))["result"] as { tools: Array<unknown>; nextCursor?: string }
    expect(page1.tools).toHaveLength(4)
    const page2 = (await driver.request(3, "tools/list", { cursor: page1.nextCursor }))["result"] as { tools: Array<unknown>; nextCursor?: string }
    expect(page2.tools).toHaveLength(2)
    expect(page2.nextCursor).toBeUndefined()
    expect(await driver.request(4, "server/discover")).toMatchObject({ error: { code: -32601 } })
    driver.child.stdin.write("not json at all\n")
    await driver.waitForLine((line) => parseLine(line)["id"] === null)
    expect(fixture.rpcCalls("#invalid-json")).toBe(1)
  })

  it("builds a command any spawner can use, and refuses options that could never apply", () => {
    const command = stdioServerCommand({ faults: [{ kind: "delay", on: "tools/call", ms: 5, times: Infinity }] })
    expect(command.command).toBe(process.execPath)
    expect(command.args[0]).toBe(stdioServerScript())
    expect(existsSync(stdioServerScript())).toBe(true)
    expect(command.args.slice(1)).toEqual(["--fault", `{"kind":"delay","on":"tools/call","ms":5,"times":null}`])
    expect(command.env).toEqual({})
    // Only node: imports, so it runs without a TypeScript loader (and under Bun).
    const imports = readFileSync(stdioServerScript(), "utf8").match(/^import .* from "(.*)";?$/gm) ?? []
    expect(imports.length).toBeGreaterThan(0)
    for (const line of imports) expect(line).toMatch(/from "node:/)

    expect(() => stdioServerCommand({ faults: [{ kind: "exact-size", on: "tools/call", bytes: 0 }] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ faults: [{ kind: "exact-size", on: "tools/call", bytes: 100, chunkSize: 0 }] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ faults: [{ kind: "delay", on: "tools/call", ms: Number.NaN }] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ faults: [{ kind: "exit", on: "tools/call", times: 0 }] })).toThrow(RangeError)
    expect(() => stdioServerCommand({ faults: [{ kind: "banner", text: "two\nlines" }] })).toThrow(RangeError)
  })
})

describe("stdio server: exact sizes", () => {
  for (
    const [on, bytes, chunkSize] of [
      ["tools/call", 200, 7],
      ["tools/call", 201, 3],
      ["tools/call", 1000, 7],
      ["tools/call", 1003, 3],
      ["tools/list", 1000, 7],
      ["initialize", 300, 3]
    ] as const
  ) {
    it(`writes a ${on} response line of exactly ${bytes} bytes in ${chunkSize}-byte writes`, async () => {
      // A 1 ms pause between writes, so that a busy test process still reads them apart.
      const { driver } = start({ faults: [{ kind: "exact-size", on, bytes, chunkSize, chunkDelayMs: 1 }] })
      if (on !== "initialize") await handshake(driver)
      const before = driver.stdoutBytes()
      const params = on === "tools/call" ? { name: "echo", arguments: { text: "x" } } : on === "initialize" ? initializeParams() : {}
      const response = await driver.request(9, on, params)
      expect(response).toMatchObject({ jsonrpc: "2.0", id: 9 })

      const wire = driver.stdout().subarray(before)
      expect(wire.length).toBe(bytes) // the whole line, its "\n" included
      expect(wire[wire.length - 1]).toBe(0x0a)
      expect(() => strictUtf8.decode(wire)).not.toThrow()
      // The writes were chunkSize bytes; several of those boundaries fall inside a character.
      const splits = Array.from({ length: Math.floor(bytes / chunkSize) }, (_, k) => (k + 1) * chunkSize)
        .filter((offset) => isContinuationByte(wire[offset]))
      expect(splits.length).toBeGreaterThan(3)
      // And the client read it in pieces, some of them ending inside a character.
      const observedSplits = driver.chunkEnds.filter((end) => end > before && isContinuationByte(wire[end - before]))
      expect(observedSplits.length).toBeGreaterThan(0)
    })
  }
})

describe("stdio server: hostile behaviours", () => {
  it("prints a banner before the first response, and before each one if asked", async () => {
    const { driver } = start({ faults: [{ kind: "banner" }] })
    await handshake(driver)
    await driver.request(2, "ping")
    expect(driver.lines.map((line) => line.toString("utf8"))).toEqual([
      "Server starting... ready",
      expect.stringContaining(`"id":1`),
      expect.stringContaining(`"id":2`)
    ])

    const each = start({ faults: [{ kind: "banner", text: "booting", bannerEachResponse: true }] }).driver
    await handshake(each)
    await each.request(2, "ping")
    expect(each.lines.map((line) => line.toString("utf8").slice(0, 7))).toEqual([
      "booting",
      "booting",
      `{"jsonr`,
      "booting",
      `{"jsonr`
    ])
  })

  it("floods stderr with 1 MiB and answers only once the client has drained it", async () => {
    const flood = 1024 * 1024
    const { driver } = start({ faults: [{ kind: "stderr-flood", bytes: flood }] }, { drainStderr: false })
    // How much stderr the client had taken when the first stdout byte arrived.
    let stderrTakenAtFirstAnswer: number | undefined
    driver.child.stdout.once("data", () => {
      stderrTakenAtFirstAnswer = driver.stderrBytes()
    })
    driver.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams() })
    driver.drainStderr()
    await driver.waitForLine((line) => parseLine(line)["id"] === 1)
    // The server's stderr writes block while the pipe (64 KiB on Linux) is full, and it reads stdin
    // only once the flood was taken: so the answer comes after all but at most a pipe's worth was
    // read. A client that does not drain stderr would never see it.
    expect(stderrTakenAtFirstAnswer).toBeGreaterThanOrEqual(flood - 64 * 1024)
    await waitUntil(() => driver.stderrBytes() >= flood, 3000, "the whole flood")
  })

  it("exits mid-call with the scripted code, without answering (the side effect happened)", async () => {
    const { fixture, driver } = start({ faults: [{ kind: "exit", on: "tools/call", code: 7 }] })
    await handshake(driver)
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "increment", arguments: {} } })
    expect(await driver.exited).toEqual({ code: 7, signal: null })
    expect(driver.lines).toHaveLength(1) // initialize only
    expect(fixture.rpcCalls("tools/call")).toBe(1)
    expect(fixture.counter()).toBe(1)
    expect(fixture.isAlive()).toBe(false)
  })

  it("exits with code 3 by default, also on a notification", async () => {
    const { driver } = start({ faults: [{ kind: "exit", on: "notifications/cancelled" }] })
    await handshake(driver)
    driver.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } })
    expect(await driver.exited).toEqual({ code: 3, signal: null })
  })

  it("ignores SIGTERM and stdin closing; only SIGKILL ends it", async () => {
    const { fixture, driver } = start({ faults: [{ kind: "ignore-sigterm" }] })
    const stderrLine = collectStderr(driver)
    await handshake(driver)
    await fixture.waitFor(() => fixture.pid() !== undefined)
    expect(fixture.pid()).toBe(driver.child.pid)
    driver.child.stdin.end()
    await stderrLine("stdin closed; staying alive")
    driver.child.kill("SIGTERM")
    // The server logs the SIGTERM from its event loop: it handled the signal and lived on. A
    // server that did not ignore it would die on delivery and never write this line.
    await stderrLine("SIGTERM received and ignored")
    expect(driver.exit()).toBeUndefined()
    expect(fixture.isAlive()).toBe(true)
    driver.child.kill("SIGKILL")
    expect(await driver.exited).toEqual({ code: null, signal: "SIGKILL" })
    expect(fixture.isAlive()).toBe(false)
  })

  it("lingers after stdin closes when asked", async () => {
    const { driver } = start({ faults: [{ kind: "linger-after-stdin-close", ms: 400 }] })
    await handshake(driver)
    const closedAt = Date.now()
    driver.child.stdin.end()
    expect(await driver.exited).toEqual({ code: 0, signal: null })
    // Real time is the point: the fault is a 400 ms wait before exiting (a prompt exit takes far less).
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(390)
  })

  it("writes a never-ending line until it is killed", async () => {
    const { driver } = start({ faults: [{ kind: "never-ending-line", on: "tools/call" }] })
    await handshake(driver)
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "increment", arguments: {} } })
    await waitUntil(() => driver.stdoutBytes() > 2 * 1024 * 1024, 5000, "2 MiB of the never-ending line")
    const seen = driver.stdoutBytes()
    await waitUntil(() => driver.stdoutBytes() > seen + 256 * 1024, 3000, "more of the line")
    expect(driver.lines).toHaveLength(1) // the line never ends
    driver.child.kill("SIGTERM")
    expect(await driver.exited).toEqual({ code: null, signal: "SIGTERM" })
  })

  it("stops the never-ending line and exits when stdin closes", async () => {
    const { fixture, driver } = start({ faults: [{ kind: "never-ending-line", on: "tools/call" }] })
    await handshake(driver)
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } })
    await waitUntil(() => driver.stdoutBytes() > 512 * 1024, 5000, "the never-ending line")
    driver.child.stdin.end()
    expect(await driver.exited).toEqual({ code: 0, signal: null })
    expect(fixture.isAlive()).toBe(false)
  })

  it("stops the never-ending line when stdout breaks (EPIPE), then exits when stdin closes", async () => {
    const { fixture, driver } = start({ faults: [{ kind: "never-ending-line", on: "tools/call" }] })
    const stderrLine = collectStderr(driver)
    await handshake(driver)
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } })
    await waitUntil(() => driver.stdoutBytes() > 512 * 1024, 5000, "the never-ending line")
    driver.child.stdout.destroy()
    await stderrLine("stdout failed (EPIPE)")
    // stdout is gone, stdin is not: it waits, and still reads stdin (the arrival log shows the ping).
    driver.send({ jsonrpc: "2.0", id: 3, method: "ping" })
    await fixture.waitFor(() => fixture.arrivals().includes("ping"))
    expect(driver.exit()).toBeUndefined()
    driver.child.stdin.end()
    expect(await driver.exited).toEqual({ code: 0, signal: null })
    expect(fixture.isAlive()).toBe(false)
  })

  it("sends invalid UTF-8, a non-JSON-RPC line, invalid JSON, a wrong id and JSON-RPC errors", async () => {
    const { driver } = start({
      faults: [
        { kind: "invalid-utf8", on: "tools/call" },
        { kind: "not-jsonrpc", on: "tools/call" },
        { kind: "invalid-json", on: "tools/call" },
        { kind: "wrong-id", on: "tools/call" },
        { kind: "jsonrpc-error", on: "tools/call", code: -32042, message: "scripted refusal" }
      ]
    })
    await handshake(driver)
    const call = (id: number) => driver.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } })

    call(2)
    let index = await driver.waitForLine(() => true, 3000, 1)
    const bad = driver.lines[index] ?? Buffer.alloc(0)
    expect(bad.includes(Buffer.from([0xc3, 0x28]))).toBe(true)
    expect(() => strictUtf8.decode(bad)).toThrow()

    call(3)
    index = await driver.waitForLine(() => true, 3000, index + 1)
    expect(driver.lines[index]?.toString()).toBe(`{"hello":1}`)
    index = await driver.waitForLine(() => true, 3000, index + 1)
    expect(parseLine(driver.lines[index] ?? Buffer.alloc(0))).toMatchObject({ id: 3, result: {} })

    call(4)
    index = await driver.waitForLine(() => true, 3000, index + 1)
    expect(driver.lines[index]?.toString()).toBe(`{"jsonrpc":"2.0","id":4,`)

    call(5)
    index = await driver.waitForLine(() => true, 3000, index + 1)
    expect(parseLine(driver.lines[index] ?? Buffer.alloc(0))).toMatchObject({ id: 999_999 })

    expect(await driver.request(6, "tools/call", { name: "echo", arguments: { text: "x" } })).toEqual({
      jsonrpc: "2.0",
      id: 6,
      error: { code: -32042, message: "scripted refusal" }
    })
    // Every fault was used once: the next call is normal.
    expect((await driver.request(7, "tools/call", { name: "echo", arguments: { text: "ok" } }))["result"]).toEqual({
      content: [{ type: "text", text: "ok" }]
    })
  })

  it("delays, and never answers, as scripted (times: Infinity keeps a fault)", async () => {
    const { fixture, driver } = start({
      faults: [
        { kind: "never-answer", on: "tools/call", times: 2 },
        { kind: "delay", on: "ping", ms: 250, times: Infinity }
      ]
    })
    await handshake(driver)
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "increment", arguments: {} } })
    driver.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "increment", arguments: {} } })
    const sentAt = Date.now()
    await driver.request(4, "ping")
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(240)
    const again = Date.now()
    await driver.request(5, "ping")
    expect(Date.now() - again).toBeGreaterThanOrEqual(240)
    expect(driver.lines.map((line) => parseLine(line)["id"])).toEqual([1, 4, 5]) // 2 and 3 never answered
    expect(fixture.counter()).toBe(2)
    expect(await driver.request(6, "tools/call", { name: "increment", arguments: {} })).toMatchObject({
      result: { content: [{ type: "text", text: "3" }] }
    })
  })
})

describe("stdio server under Bun", () => {
  const bun = join(process.cwd(), "node_modules", ".bin", "bun")
  const rootBun = join(process.cwd(), "..", "..", "node_modules", ".bin", "bun")
  const bunPath = [bun, rootBun].find((path) => existsSync(path))

  it.skipIf(bunPath === undefined)("runs the plain .mjs with bun", () => {
    const command = stdioServerCommand()
    const input = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams() },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "increment", arguments: {} } }
    ].map((message) => JSON.stringify(message) + "\n").join("")
    const result = spawnSync(bunPath ?? "bun", [...command.args], { input, timeout: 10_000 })
    expect(result.status).toBe(0)
    const lines = result.stdout.toString("utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map((line) => line["id"])).toEqual([1, 2])
  })
})
