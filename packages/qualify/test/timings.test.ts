import { describe, expect, it } from "vitest"
import { formatTimings, makeTimings } from "../src/timings.js"

describe("timings", () => {
  it("times a value's phase and a promise's phase, from the qualification's start", async () => {
    let clock = 1_000
    const timings = makeTimings(() => clock)
    clock = 1_500
    expect(timings.time("sync", () => {
      clock = 2_000
      return 42
    })).toBe(42)
    const pending = timings.time("async", async () => "done")
    clock = 4_500
    expect(await pending).toBe("done")
    expect(timings.phases).toEqual([
      { name: "sync", startMs: 500, ms: 500 },
      { name: "async", startMs: 1_000, ms: 2_500 }
    ])
  })

  it("times a phase that fails too", async () => {
    const timings = makeTimings(() => 0)
    await expect(timings.time("fails", () => Promise.reject(new Error("no")))).rejects.toThrow("no")
    expect(timings.phases.map((phase) => phase.name)).toEqual(["fails"])
  })

  it("prints one line per phase by start, in seconds, then the whole", () => {
    expect(formatTimings([
      { name: "install", startMs: 12_340, ms: 8_000 },
      { name: "build", startMs: 0, ms: 12_300 }
    ], 20_400)).toBe([
      " start    took  phase",
      "   0.0    12.3  build",
      "  12.3     8.0  install",
      "   0.0    20.4  the qualification"
    ].join("\n"))
  })
})
