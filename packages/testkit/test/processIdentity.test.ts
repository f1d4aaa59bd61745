/**
 * A process is named by its pid and its start time: a pid given to another process since is
 * not taken for the one recorded (real child processes; the start time is Linux's).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { makeStdioFixture } from "../src/index.js"
import { isRunning, parseIdentity, processStart } from "../src/processIdentity.js"

const linux = process.platform === "linux"

describe("process identity", () => {
  it("parses what a process writes, and refuses anything else", () => {
    expect(parseIdentity("123 456\n")).toEqual({ pid: 123, start: "456" })
    expect(parseIdentity("123")).toEqual({ pid: 123 })
    expect(parseIdentity("123 soon")).toEqual({ pid: 123 })
    for (const text of [undefined, "", "x", "0", "-5 1", "1.5 2"]) expect(parseIdentity(text)).toBeUndefined()
  })

  it("a running child is running; once reaped it is not; another start time under a live pid is a stranger", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
    await once(child, "spawn")
    const pid = child.pid!
    const start = processStart(pid)
    if (linux) expect(start).toMatch(/^\d+$/)
    const identity = start === undefined ? { pid } : { pid, start }
    expect(isRunning(identity)).toBe(true)
    // The pid as another process would hold it after the pid space wrapped: a start time that is not its own.
    if (linux) expect(isRunning({ pid, start: `${BigInt(start!) + 1n}` })).toBe(false)
    child.kill("SIGKILL")
    await once(child, "exit")
    expect(isRunning(identity)).toBe(false)
  })

  it("a stdio fixture's child writes its identity; isAlive follows the process, not the pid", async () => {
    const f = makeStdioFixture()
    try {
      const child = spawn(f.command, [...f.args], { stdio: ["pipe", "ignore", "ignore"] })
      await f.waitFor(() => f.identity() !== undefined)
      expect(f.pid()).toBe(child.pid)
      if (linux) expect(f.identity()).toEqual({ pid: child.pid, start: processStart(child.pid!) })
      expect(f.isAlive()).toBe(true)
      child.stdin!.end()
      await once(child, "exit")
      expect(f.isAlive()).toBe(false)
    } finally {
      f.cleanup()
    }
  })
})
