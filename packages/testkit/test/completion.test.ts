/** The testkit's `completion/complete` (src/completion.ts): what it completes, and its hostile answers, bounded. */
import { describe, expect, it } from "vitest"
import { complete, MAX_FAULT_VALUES } from "../src/completion.js"

const prompt = (name: string, argument: string, value: string, context?: Record<string, string>) => ({
  ref: { type: "ref/prompt", name },
  argument: { name: argument, value },
  ...(context === undefined ? {} : { context: { arguments: context } })
})
const template = (uri: string, argument: string, value: string, context?: Record<string, string>) => ({
  ref: { type: "ref/resource", uri },
  argument: { name: argument, value },
  ...(context === undefined ? {} : { context: { arguments: context } })
})
const resultOf = (outcome: ReturnType<typeof complete>) => (outcome._tag === "result" ? outcome.result : outcome)

describe("testkit completion/complete", () => {
  it("completes greet's name (case-insensitive prefix), the listed documents' ids, and a template's second variable from the context", () => {
    expect(resultOf(complete(prompt("greet", "name", "AL"), 3))).toEqual({ completion: { values: ["Alan", "Alonzo"], total: 2, hasMore: false } })
    expect(resultOf(complete(template("test://docs/{id}", "id", ""), 3))).toEqual({ completion: { values: ["1", "2", "3"], total: 3, hasMore: false } })
    expect(resultOf(complete(template("test://repos/{owner}/{repo}", "repo", "ex", { owner: "effect" }), 3))).toMatchObject({
      completion: { values: ["examples"] }
    })
    // Without the owner, or with one it does not know: nothing.
    expect(resultOf(complete(template("test://repos/{owner}/{repo}", "repo", ""), 3))).toMatchObject({ completion: { values: [], total: 0 } })
    expect(resultOf(complete(template("test://repos/{owner}/{repo}", "repo", "", { owner: "__proto__" }), 3))).toMatchObject({ completion: { values: [] } })
  })

  it("refuses what it does not know with -32602", () => {
    for (
      const params of [prompt("nope", "x", ""), template("test://x/{y}", "y", ""), { ref: { type: "ref/tool" }, argument: { name: "a", value: "" } }, {}, null]
    ) {
      expect(complete(params, 3)).toMatchObject({ _tag: "error", error: { code: -32602 } })
    }
  })

  it("answers hostile results by argument name, within its own bounds", () => {
    expect((resultOf(complete(prompt("completion_faults", "too-many", "101"), 3)) as { completion: { values: Array<string> } }).completion.values).toHaveLength(
      101
    )
    expect(complete(prompt("completion_faults", "too-many", String(MAX_FAULT_VALUES + 1)), 3)).toMatchObject({ _tag: "error" })
    expect(complete(prompt("completion_faults", "too-many", "1e3"), 3)).toMatchObject({ _tag: "error" })
    const huge = resultOf(complete(prompt("completion_faults", "huge", "1000"), 3)) as { completion: { values: Array<string> } }
    expect(Buffer.byteLength(huge.completion.values[0]!, "utf8")).toBe(1000)
    expect(resultOf(complete(prompt("completion_faults", "wrong-type", ""), 3))).toEqual({ completion: { values: [1, 2, 3], total: 3 } })
    expect(resultOf(complete(prompt("completion_faults", "no-completion", ""), 3))).toEqual({ values: ["a"] })
  })
})
