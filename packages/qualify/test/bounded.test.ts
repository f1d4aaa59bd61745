import { describe, expect, it } from "vitest"
import { bounded } from "../src/bounded.js"

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe("bounded", () => {
  it("runs at most `limit` tasks at a time, the others in the order they came", async () => {
    const jobs = bounded(2)
    const gates = [deferred(), deferred(), deferred(), deferred()]
    const starts = gates.map(() => deferred())
    const started: Array<number> = []
    const results = gates.map((gate, index) =>
      jobs(async () => {
        started.push(index)
        starts[index]!.resolve()
        await gate.promise
        return index
      })
    )
    await Promise.all([starts[0]!.promise, starts[1]!.promise])
    expect(started).toEqual([0, 1])
    gates[1]!.resolve()
    await starts[2]!.promise
    expect(started).toEqual([0, 1, 2])
    gates[0]!.resolve()
    await starts[3]!.promise
    expect(started).toEqual([0, 1, 2, 3])
    gates[2]!.resolve()
    gates[3]!.resolve()
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3])
  })

  it("frees the slot of a task that fails, and hands on its failure", async () => {
    const jobs = bounded(1)
    const failing = jobs(() => Promise.reject(new Error("boom")))
    const thrown = jobs(() => {
      throw new Error("thrown")
    })
    const next = jobs(async () => "next")
    await expect(failing).rejects.toThrow("boom")
    await expect(thrown).rejects.toThrow("thrown")
    expect(await next).toBe("next")
  })
})
