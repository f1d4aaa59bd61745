/**
 * One fault vocabulary (faults.ts `Fault`): every framing accepts the shared kinds, refuses with
 * a TypeError the kinds it does not have, and plays the shared kinds the contract uses.
 */
import { afterEach, describe, expect, it } from "vitest"
import { FAULT_FRAMINGS, faultRefusal, type Fault, type FaultKind, type Framing } from "../src/faults.js"
import { startServer, startLegacyServer, type LegacyTestServer, type TestServer } from "../src/index.js"
import { makeStdioFixture, stdioServerCommand, type StdioFixture } from "../src/StdioServer.js"
import { spawnStdio, type StdioDriver } from "./stdio-helpers.js"

const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

const SHARED: ReadonlyArray<FaultKind> = ["exact-size", "never-answer", "never-ending", "cut-mid-answer", "wrong-id", "delay", "jsonrpc-error"]

describe("the fault vocabulary", () => {
  it("gives the shared kinds to every framing, the rest to some", () => {
    for (const kind of SHARED) expect(FAULT_FRAMINGS[kind], kind).toEqual(["streamable-http", "legacy-sse", "stdio"])
    expect(FAULT_FRAMINGS["lying-content-length"]).toEqual(["streamable-http"])
    expect(FAULT_FRAMINGS["post-status"]).toEqual(["legacy-sse"])
    expect(FAULT_FRAMINGS["exit"]).toEqual(["stdio"])
    const reset: Fault = { on: "tools/call", kind: "cut-mid-answer", how: "reset" }
    const refusals: Record<Framing, string | undefined> = {
      "streamable-http": faultRefusal(reset, "streamable-http"),
      "legacy-sse": faultRefusal(reset, "legacy-sse"),
      stdio: faultRefusal(reset, "stdio")
    }
    expect(refusals["streamable-http"]).toBeUndefined()
    expect(refusals["legacy-sse"]).toBeUndefined()
    expect(refusals.stdio).toMatch(/does not apply to stdio/)
  })

  it("each server refuses, with a TypeError, a kind its framing does not have", async () => {
    const http: TestServer = await startServer({ sessions: false })
    closers.push(() => http.close())
    expect(() => http.script({ on: "tools/call", kind: "exit" })).toThrow(/exit does not apply to streamable-http \(only to stdio\)/)
    expect(() => http.script({ on: "tools/call", kind: "post-status", status: 500 })).toThrow(TypeError)
    http.script({ on: "tools/call", kind: "never-answer" }) // a shared kind: accepted

    const legacy: LegacyTestServer = await startLegacyServer()
    closers.push(() => legacy.close())
    expect(() => legacy.script({ on: "tools/call", kind: "lying-content-length", declared: 1, bytes: 100, then: "close" })).toThrow(
      /lying-content-length does not apply to legacy-sse/
    )
    expect(() => legacy.script({ on: "tools/call", kind: "invalid-utf8" })).toThrow(TypeError)
    legacy.script({ on: "tools/call", kind: "never-ending" })

    expect(() => stdioServerCommand({ faults: [{ on: "tools/call", kind: "cut-mid-answer", how: "reset" }] })).toThrow(
      /a pipe has no reset/
    )
    expect(() => stdioServerCommand({ faults: [{ on: "tools/call", kind: "headers-never-sent" }] })).toThrow(TypeError)
    expect(stdioServerCommand({ faults: [{ on: "tools/call", kind: "cut-mid-answer", how: "end" }] }).args).toContain(
      JSON.stringify({ on: "tools/call", kind: "cut-mid-answer", how: "end" })
    )
  })
})

describe("the shared kinds on stdio", () => {
  const start = (faults: ReadonlyArray<Fault>): { fixture: StdioFixture; driver: StdioDriver } => {
    const fixture = makeStdioFixture({ faults })
    const driver = spawnStdio(fixture)
    closers.push(() => {
      driver.child.kill("SIGKILL")
      fixture.cleanup()
    })
    return { fixture, driver }
  }
  const initialize = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }

  it("cut-mid-answer (end): half of the answer line, no line break, then the child exits", async () => {
    const { fixture, driver } = start([{ on: "tools/call", kind: "cut-mid-answer", how: "end" }])
    await driver.request(1, "initialize", initialize)
    const before = driver.stdoutBytes()
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "increment", arguments: {} } })
    expect(await driver.exited).toEqual({ code: 3, signal: null })
    const whole = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "1" }] } }) + "\n"
    expect(driver.stdout().subarray(before).toString()).toBe(whole.slice(0, Math.floor(whole.length / 2)))
    expect(fixture.counter()).toBe(1) // the call ran; only its answer was cut
  })

  it("never-ending: the answer line starts and keeps growing past 64 KiB without a line break", async () => {
    const { driver } = start([{ on: "tools/call", kind: "never-ending" }])
    await driver.request(1, "initialize", initialize)
    const lines = driver.lines.length
    driver.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } })
    const offset = driver.stdoutBytes()
    const deadline = Date.now() + 10_000
    while (driver.stdoutBytes() - offset < 256 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(driver.stdoutBytes() - offset).toBeGreaterThanOrEqual(256 * 1024)
    expect(driver.lines.length).toBe(lines)
    const opening = `{"jsonrpc":"2.0","id":2,"result":`
    expect(driver.stdout().subarray(offset, offset + opening.length).toString()).toBe(opening)
  })
})
