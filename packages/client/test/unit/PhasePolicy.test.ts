import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either } from "effect"
import { PhasePolicy } from "../../src/index.js"

const refusal = (options: PhasePolicy.Options) => Effect.runSync(PhasePolicy.make(options).pipe(Effect.flip))

describe("PhasePolicy", () => {
  it("applies the documented defaults (docs/DESIGN.md)", () => {
    const policy = Effect.runSync(PhasePolicy.make())
    // Every budget carries the policy's structure bound (docs/DESIGN.md, "Structure bounds").
    const structure = { maxDepth: 128, maxNodes: 1_048_576 }
    expect(policy).toEqual({
      discovery: { timeoutMs: 60_000, maxBytes: 16_777_216, ...structure },
      call: { timeoutMs: 60_000, maxBytes: 16_777_216, ...structure },
      authorization: { timeoutMs: 60_000, maxBytes: 16_777_216, ...structure },
      ping: { timeoutMs: 5_000, maxBytes: 65_536, ...structure },
      unsolicitedMaxBytes: 16_777_216,
      maxTools: 4_096,
      maxPages: 64,
      maxSchemaBytes: 1_048_576,
      maxListingBytes: 33_554_432,
      ...structure,
      maxInputRounds: 8,
      maxSessionRenewals: 3,
      releaseTimeoutMs: 2_000,
      relistDelayMs: 200,
      logBuffer: 1_000,
      task: { timeoutMs: 600_000, maxBytes: 16_777_216, ...structure, minPollIntervalMs: 250, maxPollIntervalMs: 30_000 }
    })
  })

  it("validates the task budget, its poll bounds in order (docs/DESIGN.md, \"Tasks\")", () => {
    const policy = Effect.runSync(PhasePolicy.make({ maxBytes: 1_000, task: { timeout: "1 minute", minPollInterval: 10, maxPollInterval: "2 seconds" } }))
    expect(policy.task).toMatchObject({ timeoutMs: 60_000, maxBytes: 1_000, minPollIntervalMs: 10, maxPollIntervalMs: 2_000 })
    for (
      const [task, option, reason] of [
        [{ timeout: 0 }, "task.timeout", "not-positive"],
        [{ maxBytes: 0.5 }, "task.maxBytes", "not-integer"],
        [{ minPollInterval: "never" }, "task.minPollInterval", "not-a-duration"],
        [{ minPollInterval: 40_000 }, "task.minPollInterval", "invalid-value"],
        [{ maxPollInterval: 100 }, "task.maxPollInterval", "invalid-value"]
      ] as const
    ) {
      const failure = Effect.runSync(Effect.flip(PhasePolicy.make({ task: task as unknown as PhasePolicy.TaskBudgetOptions })))
      expect([failure.option, failure.reason]).toEqual([option, reason])
    }
  })

  it("validates relistDelay like every duration and logBuffer like every count", () => {
    const policy = Effect.runSync(PhasePolicy.make({ relistDelay: "1 second", logBuffer: 5 }))
    expect([policy.relistDelayMs, policy.logBuffer]).toEqual([1_000, 5])
    for (
      const [options, option, reason] of [
        [{ relistDelay: 0 }, "relistDelay", "not-positive"],
        [{ relistDelay: "soon" }, "relistDelay", "not-a-duration"],
        [{ logBuffer: 0 }, "logBuffer", "not-positive"],
        [{ logBuffer: 2.5 }, "logBuffer", "not-integer"]
      ] as const
    ) {
      const error = Effect.runSync(Effect.flip(PhasePolicy.make(options as PhasePolicy.Options)))
      expect(error).toMatchObject({ _tag: "InvalidOption", option, reason, stage: "config" })
    }
  })

  it("validates a call's idle timeout like its timeout, and names it in the limits", () => {
    const policy = Effect.runSync(PhasePolicy.make())
    expect(Effect.runSync(PhasePolicy.callBudget(policy, { idleTimeout: 250 }))).toEqual({
      timeoutMs: 60_000,
      maxBytes: 16_777_216,
      maxDepth: 128,
      maxNodes: 1_048_576,
      idleTimeoutMs: 250
    })
    for (const [idleTimeout, reason] of [[0, "not-positive"], [Number.NaN, "not-finite"], ["later", "not-a-duration"]] as const) {
      const error = Effect.runSync(Effect.flip(PhasePolicy.callBudget(policy, { idleTimeout } as PhasePolicy.CallBudgetOptions)))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "call.idleTimeout", reason, stage: "call", phase: "call" })
    }
  })

  it("validates the structure bound and the listing bound like every count; maxDepth at most 1,000", () => {
    const policy = Effect.runSync(PhasePolicy.make({ maxDepth: 1_000, maxNodes: 10, maxListingBytes: 2048 }))
    expect([policy.maxDepth, policy.maxNodes, policy.maxListingBytes]).toEqual([1_000, 10, 2048])
    // The bound travels with every budget, a per-call one included.
    expect(policy.discovery).toMatchObject({ maxDepth: 1_000, maxNodes: 10 })
    expect(Effect.runSync(PhasePolicy.callBudget(policy, { maxBytes: 7 }))).toMatchObject({ maxDepth: 1_000, maxNodes: 10 })
    for (
      const [options, option, reason] of [
        [{ maxDepth: 1_001 }, "maxDepth", "invalid-value"],
        [{ maxDepth: 0 }, "maxDepth", "not-positive"],
        [{ maxNodes: 1.5 }, "maxNodes", "not-integer"],
        [{ maxNodes: Infinity }, "maxNodes", "not-finite"],
        [{ maxListingBytes: -1 }, "maxListingBytes", "not-positive"]
      ] as const
    ) {
      const error = Effect.runSync(Effect.flip(PhasePolicy.make(options as PhasePolicy.Options)))
      expect(error).toMatchObject({ _tag: "InvalidOption", option, reason, stage: "config" })
    }
  })

  it("validates maxSessionRenewals like every count", () => {
    expect(Effect.runSync(PhasePolicy.make({ maxSessionRenewals: 1 })).maxSessionRenewals).toBe(1)
    for (const [value, reason] of [[0, "not-positive"], [1.5, "not-integer"], [Number.NaN, "not-finite"], [Infinity, "not-finite"]] as const) {
      const error = Effect.runSync(Effect.flip(PhasePolicy.make({ maxSessionRenewals: value })))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "maxSessionRenewals", reason, stage: "config" })
    }
  })

  it("lets each phase override the baseline independently", () => {
    const policy = Effect.runSync(PhasePolicy.make({
      timeout: "10 seconds",
      maxBytes: 1000,
      discovery: { timeout: 200 },
      call: { maxBytes: 5 }
    }))
    expect(policy.discovery).toMatchObject({ timeoutMs: 200, maxBytes: 1000 })
    expect(policy.call).toMatchObject({ timeoutMs: 10_000, maxBytes: 5 })
    expect(policy.authorization).toMatchObject({ timeoutMs: 10_000, maxBytes: 1000 })
    expect(policy.unsolicitedMaxBytes).toBe(1000)
  })

  it("gives the authorization phase (the OAuth exchanges) the baseline and its own overrides", () => {
    const policy = Effect.runSync(PhasePolicy.make({
      timeout: 30_000,
      maxBytes: 1_000_000,
      authorization: { timeout: 5_000, maxBytes: 64 * 1024 }
    }))
    expect(policy.authorization).toMatchObject({ timeoutMs: 5_000, maxBytes: 64 * 1024 })
    // The other phases keep the baseline.
    expect(policy.discovery).toMatchObject({ timeoutMs: 30_000, maxBytes: 1_000_000 })
    expect(policy.call).toMatchObject({ timeoutMs: 30_000, maxBytes: 1_000_000 })
  })

  it("reads a bigint timeout as nanoseconds, as Effect's Duration.decode does", () => {
    expect(Duration.toMillis(Duration.decode(5_000_000_000n))).toBe(5_000)
    const policy = Effect.runSync(PhasePolicy.make({
      timeout: 5_000_000_000n,
      discovery: { timeout: 250_000_000n },
      releaseTimeout: 1_500_000_000n
    }))
    expect(policy.call.timeoutMs).toBe(5_000)
    expect(policy.discovery.timeoutMs).toBe(250)
    expect(policy.releaseTimeoutMs).toBe(1_500)
    const call = Effect.runSync(PhasePolicy.callBudget(policy, { timeout: 2_000_000n }))
    expect(call.timeoutMs).toBe(2)
  })

  it("keeps a bigint timeout under one millisecond as a positive fraction", () => {
    const policy = Effect.runSync(PhasePolicy.make({ timeout: 1n, call: { timeout: 500_000n } }))
    expect(policy.discovery.timeoutMs).toBe(0.000001)
    expect(policy.call.timeoutMs).toBe(0.5)
    expect(policy.discovery.timeoutMs).toBeGreaterThan(0)
  })

  const badTimeouts: ReadonlyArray<readonly [string, unknown, string]> = [
    ["NaN", Number.NaN, "not-finite"],
    ["Infinity", Number.POSITIVE_INFINITY, "not-finite"],
    ["-Infinity", Number.NEGATIVE_INFINITY, "not-finite"],
    ["negative", -1, "not-positive"],
    ["zero", 0, "not-positive"],
    ["Duration.infinity", Duration.infinity, "not-finite"],
    ["Duration.zero", Duration.zero, "not-positive"],
    ["0n (bigint nanoseconds)", 0n, "not-positive"],
    ["-1n (bigint nanoseconds)", -1n, "not-positive"],
    ["bigint past any finite millisecond count", 10n ** 400n, "not-finite"],
    ["a word", "soon", "not-a-duration"]
  ]
  const badBytes: ReadonlyArray<readonly [string, unknown, string]> = [
    ["NaN", Number.NaN, "not-finite"],
    ["Infinity", Number.POSITIVE_INFINITY, "not-finite"],
    ["negative", -5, "not-positive"],
    ["zero", 0, "not-positive"],
    ["fractional", 1.5, "not-integer"],
    ["unsafe", 2 ** 60, "unsafe-integer"],
    ["a string", "1024", "invalid-value"]
  ]
  const placements: ReadonlyArray<readonly [string, (field: "timeout" | "maxBytes", value: unknown) => PhasePolicy.Options]> = [
    ["", (field, value) => ({ [field]: value }) as PhasePolicy.Options],
    ["discovery.", (field, value) => ({ discovery: { [field]: value } }) as PhasePolicy.Options],
    ["call.", (field, value) => ({ call: { [field]: value } }) as PhasePolicy.Options],
    ["authorization.", (field, value) => ({ authorization: { [field]: value } }) as PhasePolicy.Options]
  ]

  describe.each(placements)("option prefix '%s'", (prefix, place) => {
    it.each(badTimeouts)("refuses a %s timeout", (_, value, reason) => {
      const error = refusal(place("timeout", value))
      expect(error._tag).toBe("InvalidOption")
      expect(error.option).toBe(`${prefix}timeout`)
      expect(error.reason).toBe(reason)
      expect(error.stage).toBe("config")
      expect(error.outcome).toBe("not-sent")
      expect(error.retryable).toBe(false)
    })
    it.each(badBytes)("refuses %s maxBytes", (_, value, reason) => {
      const error = refusal(place("maxBytes", value))
      expect(error._tag).toBe("InvalidOption")
      expect(error.option).toBe(`${prefix}maxBytes`)
      expect(error.reason).toBe(reason)
    })
  })

  it.each(
    [
      ["unsolicited.maxBytes", { unsolicited: { maxBytes: 0 } }],
      ["maxTools", { maxTools: 1.5 }],
      ["maxPages", { maxPages: -1 }],
      ["maxSchemaBytes", { maxSchemaBytes: Number.NaN }],
      ["maxInputRounds", { maxInputRounds: 0 }],
      ["maxInputRounds", { maxInputRounds: 2.5 }],
      ["maxInputRounds", { maxInputRounds: Infinity }],
      ["releaseTimeout", { releaseTimeout: Duration.infinity }]
    ] as const
  )("refuses a bad %s", (option, options) => {
    expect(refusal(options as PhasePolicy.Options).option).toBe(option)
  })

  describe("per-call overrides", () => {
    const policy = Effect.runSync(PhasePolicy.make({ call: { timeout: 5000, maxBytes: 100 } }))
    it("inherit what they leave out", () => {
      expect(Effect.runSync(PhasePolicy.callBudget(policy, { maxBytes: 7 }))).toMatchObject({ timeoutMs: 5000, maxBytes: 7 })
      expect(Effect.runSync(PhasePolicy.callBudget(policy))).toMatchObject({ timeoutMs: 5000, maxBytes: 100 })
    })
    it.each([...badTimeouts.map(([n, v, r]) => ["timeout", n, v, r] as const), ...badBytes.map(([n, v, r]) => ["maxBytes", n, v, r] as const)])(
      "refuse a bad %s (%s) at stage call",
      (field, _, value, reason) => {
        const result = Effect.runSync(Effect.either(PhasePolicy.callBudget(policy, { [field]: value } as PhasePolicy.BudgetOptions)))
        expect(Either.isLeft(result)).toBe(true)
        if (Either.isLeft(result)) {
          expect(result.left.option).toBe(`call.${field}`)
          expect(result.left.reason).toBe(reason)
          expect(result.left.stage).toBe("call")
          expect(result.left.phase).toBe("call")
        }
      }
    )
  })
})
