/**
 * What the CLI leaves beside the record when the server refuses until URL elicitations are done
 * (src/urlElicitation.ts): machine mode, one JSON line on stdout with each elicitation; human
 * mode, lines for a terminal with each message (its control characters and escape sequences
 * made spaces), whole URL and host (punycode flagged); for any other error, nothing.
 */
import { McpConnectionError } from "@phasebound/client"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { RunState } from "../src/runContext.js"
import { humanLines, leaveElicitations, machineLine } from "../src/urlElicitation.js"

const fields = {
  stage: "call",
  phase: "call",
  limits: { timeoutMs: 1_000, maxBytes: 1_000 },
  code: -32042,
  outcome: "not-applied",
  retryable: true
} as const

const refusal = (elicitations: ReadonlyArray<unknown>) =>
  new McpConnectionError.UrlElicitationRequired(fields, { code: -32042, message: "open", data: { elicitations } })

const state = (): RunState => ({ position: { stage: "call", phase: "call", limits: fields.limits }, secrets: [], stdout: "", exitCode: 0, hint: undefined })

/** A run's state, and what it printed on stdout at once. */
const context = () => {
  const printed: Array<string> = []
  const ctx = { state: state(), print: (text: string) => Effect.sync(() => void printed.push(text)) }
  return { ctx, printed }
}

const ELICITATIONS = [
  { mode: "url", elicitationId: "e-1", url: "https://auth.example.com/go?x=1", message: "Authorize\u001b[31m now\u0007" },
  { mode: "url", elicitationId: "e-2", url: "https://xn--pple-43d.com/pay", message: "Pay" }
]

describe("URL elicitations beside the record", () => {
  it("machine mode: one JSON line on stdout", () => {
    const { ctx, printed } = context()
    Effect.runSync(leaveElicitations(ctx, true, refusal(ELICITATIONS)))
    expect(ctx.state.hint).toBeUndefined()
    expect(printed).toHaveLength(1)
    expect(printed[0]!.endsWith("\n")).toBe(true)
    expect(JSON.parse(printed[0]!)).toEqual({
      urlElicitationRequired: {
        elicitations: [
          { elicitationId: "e-1", message: "Authorize\u001b[31m now\u0007", url: "https://auth.example.com/go?x=1", host: "auth.example.com", punycode: false },
          { elicitationId: "e-2", message: "Pay", url: "https://xn--pple-43d.com/pay", host: "xn--pple-43d.com", punycode: true }
        ]
      }
    })
    expect(machineLine([]).trim()).toBe(`{"urlElicitationRequired":{"elicitations":[]}}`)
  })

  it("human mode: the hint lines, nothing of the server's control characters, punycode flagged", () => {
    const { ctx, printed } = context()
    Effect.runSync(leaveElicitations(ctx, false, refusal(ELICITATIONS)))
    const run = ctx.state
    expect(printed).toEqual([])
    expect(run.hint).toBe([
      "the server asks you to open these 2 URLs first, then to run the command again:",
      "  1. Authorize [31m now ",
      "     https://auth.example.com/go?x=1",
      "     host: auth.example.com",
      "  2. Pay",
      "     https://xn--pple-43d.com/pay",
      "     host: xn--pple-43d.com (punycode: the name may imitate another; check it)"
    ].join("\n"))
    for (const line of run.hint!.split("\n")) expect(line).not.toMatch(/[\u0000-\u001f]/)
    expect(humanLines([{ ...ELICITATIONS[1]!, mode: "url", host: "h", punycode: false, message: "x".repeat(600) } as never]))
      .toContain(`${"x".repeat(512)}...`)
  })

  it("any other error leaves nothing", () => {
    const { ctx, printed } = context()
    Effect.runSync(leaveElicitations(ctx, true, new McpConnectionError.RemoteRefusal({ ...fields, code: -32602, retryable: false })))
    Effect.runSync(leaveElicitations(ctx, false, refusal([{ ...ELICITATIONS[0], url: "javascript:alert(1)" }])))
    expect(ctx.state).toEqual(state())
    expect(printed).toEqual([])
  })
})
