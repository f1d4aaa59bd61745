import { describe, expect, it } from "vitest"

describe("@phasebound/ai", () => {
  it("loads its entry point", async () => {
    const module = await import("@phasebound/ai")
    expect(typeof module).toBe("object")
  })
})
