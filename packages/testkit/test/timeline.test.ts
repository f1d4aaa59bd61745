import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { JsonRpcNotification } from "../src/jsonrpc.js"
import { playTimeline, type Timeline } from "../src/timeline.js"

const progress = (n: number): JsonRpcNotification => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: n } })

const timeline: Timeline = {
  notifications: [10, 20, 30].map((atMs, index) => ({ atMs, notification: progress(index + 1) })),
  answerAtMs: 40,
  broadcast: []
}

const record = () => {
  const sent: Array<string> = []
  return {
    sent,
    sink: {
      notify: (notification: JsonRpcNotification) => void sent.push(`progress ${String(notification.params?.["progress"])}`),
      answer: () => void sent.push("answer")
    }
  }
}

describe("playTimeline", () => {
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())

  it("sends each notification at its offset, then the answer; cancel after the end says it stopped nothing", () => {
    const { sent, sink } = record()
    const cancel = playTimeline(timeline, sink)
    expect(sent).toEqual([])
    vi.advanceTimersByTime(10)
    expect(sent).toEqual(["progress 1"])
    vi.advanceTimersByTime(30)
    expect(sent).toEqual(["progress 1", "progress 2", "progress 3", "answer"])
    expect(cancel()).toBe(false)
    expect(vi.getTimerCount()).toBe(0)
  })

  it("what is due at once goes in the same turn", () => {
    const { sent, sink } = record()
    playTimeline({ notifications: [{ atMs: 0, notification: progress(1) }], answerAtMs: 0, broadcast: [] }, sink)
    expect(sent).toEqual(["progress 1", "answer"])
  })

  it("a stopped timeline sends nothing more, the answer included, and leaves no timer", () => {
    const { sent, sink } = record()
    const cancel = playTimeline(timeline, sink)
    vi.advanceTimersByTime(15)
    expect(cancel()).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(1_000)
    expect(sent).toEqual(["progress 1"])
    expect(cancel()).toBe(false)
  })
})
