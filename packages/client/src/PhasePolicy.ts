/**
 * Phase budgets (docs/DESIGN.md, "Phases and budgets"): a shared baseline
 * `{ timeout, maxBytes }`, per-phase overrides for discovery, call and authorization (the OAuth
 * exchanges: metadata, registration, tokens), a bound for unsolicited
 * frames, the structure bound of every JSON message (`maxDepth`, `maxNodes`), and the separate
 * constraints `maxTools`, `maxPages`, `maxSchemaBytes`, `maxListingBytes` and `maxInputRounds`.
 * Everything is validated before any
 * I/O into a typed `InvalidOption` that names the option: never a silent clamp, never an
 * unlimited wait or read.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { InvalidOption, type Limits, type Reason, type Stage } from "./McpConnectionError.js"

/**
 * A budget override: either field may be left out to inherit it.
 *
 * @since 0.1.0
 * @category models
 */
export interface BudgetOptions {
  /** A finite duration > 0: a number is milliseconds, a bigint nanoseconds (as Effect reads them). */
  readonly timeout?: Duration.DurationInput | undefined
  /** A safe integer >= 1. */
  readonly maxBytes?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends BudgetOptions {
  readonly discovery?: BudgetOptions | undefined
  readonly call?: BudgetOptions | undefined
  /** Each OAuth exchange (metadata, registration, token) is bounded by this budget. */
  readonly authorization?: BudgetOptions | undefined
  /** One `ping` (default 5 s and 64 KiB: a liveness check is small and quick). */
  readonly ping?: BudgetOptions | undefined
  /** Bounds frames that belong to no pending request (default: the baseline maxBytes). */
  readonly unsolicited?: { readonly maxBytes?: number | undefined } | undefined
  /** Most tools accepted from tools/list (default 4,096). */
  readonly maxTools?: number | undefined
  /** Most tools/list pages followed (default 64). */
  readonly maxPages?: number | undefined
  /** Largest input schema accepted per tool, in bytes of its JSON (default 1 MiB). */
  readonly maxSchemaBytes?: number | undefined
  /**
   * Most bytes one listing may read over all its pages (`tools/list`, `resources/list`,
   * `resources/templates/list`, `prompts/list`; default 32 MiB). Each page is bounded by its
   * phase's `maxBytes` as well.
   */
  readonly maxListingBytes?: number | undefined
  /**
   * Deepest nesting of arrays and objects accepted in one JSON message from a peer (default
   * 128). Checked before the message is parsed (docs/DESIGN.md, "Structure bounds").
   */
  readonly maxDepth?: number | undefined
  /**
   * Most nodes accepted in one JSON message from a peer, and in one listing over all its pages
   * (default 1,048,576): every `{`, `[` and `,` of the text counts one. Checked before the
   * message is parsed, so that what a message costs in memory is bounded, not only its bytes.
   */
  readonly maxNodes?: number | undefined
  /** Most `input_required` rounds one request may take (2026-07-28; default 8). */
  readonly maxInputRounds?: number | undefined
  /**
   * Most new sessions started in a row after the server forgot one (a 404 on `Mcp-Session-Id`,
   * a legacy stream that ended) without an operation succeeding in between (default 3).
   */
  readonly maxSessionRenewals?: number | undefined
  /** Bound of each release step: DELETE of a session, a cancellation notice (default 2 s). */
  readonly releaseTimeout?: Duration.DurationInput | undefined
  /**
   * How long the connection waits after the server says its tools changed before it lists them
   * again; the changes announced meanwhile share that one listing (default 200 ms).
   */
  readonly relistDelay?: Duration.DurationInput | undefined
  /** Most server log messages kept for a reader that falls behind; older ones go first (default 1,000). */
  readonly logBuffer?: number | undefined
}

/**
 * A validated budget: finite milliseconds and bytes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Budget {
  readonly timeoutMs: number
  readonly maxBytes: number
  /** The policy's `maxDepth`: every JSON message read under this budget is bounded by it. */
  readonly maxDepth?: number | undefined
  /** The policy's `maxNodes`, likewise. */
  readonly maxNodes?: number | undefined
  /** A call's idle timeout, when it has one (`McpClient.CallOptions.idleTimeout`). */
  readonly idleTimeoutMs?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PhasePolicy {
  readonly discovery: Budget
  readonly call: Budget
  readonly authorization: Budget
  readonly ping: Budget
  readonly unsolicitedMaxBytes: number
  readonly maxTools: number
  readonly maxPages: number
  readonly maxSchemaBytes: number
  readonly maxListingBytes: number
  readonly maxDepth: number
  readonly maxNodes: number
  readonly maxInputRounds: number
  readonly maxSessionRenewals: number
  readonly releaseTimeoutMs: number
  readonly relistDelayMs: number
  readonly logBuffer: number
}

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaults = {
  timeoutMs: 60_000,
  maxBytes: 16 * 1024 * 1024,
  maxTools: 4_096,
  maxPages: 64,
  maxSchemaBytes: 1024 * 1024,
  maxListingBytes: 32 * 1024 * 1024,
  maxDepth: 128,
  maxNodes: 1_048_576,
  maxInputRounds: 8,
  maxSessionRenewals: 3,
  pingTimeoutMs: 5_000,
  pingMaxBytes: 64 * 1024,
  releaseTimeoutMs: 2_000,
  relistDelayMs: 200,
  logBuffer: 1_000
} as const

const configLimits: Limits = { timeoutMs: defaults.timeoutMs, maxBytes: defaults.maxBytes }

const invalid = (option: string, reason: Reason, stage: Stage = "config"): InvalidOption =>
  new InvalidOption({
    stage,
    phase: stage === "call" ? "call" : "discovery",
    limits: configLimits,
    option,
    reason,
    outcome: "not-sent",
    retryable: false
  })

/**
 * Validates a duration option into finite milliseconds > 0.
 *
 * Inputs are read as Effect's `Duration.decode` reads them: a number is milliseconds, a
 * `bigint` is nanoseconds (`5_000_000_000n` is 5,000 ms; a positive bigint under 1,000,000 ns
 * gives a fractional number of milliseconds, still > 0), and a string such as `"10 seconds"`,
 * a `[seconds, nanos]` tuple or a `Duration` is decoded by Effect. Zero or less is refused as
 * `not-positive`; NaN, an infinite duration or one too large for a finite number of
 * milliseconds as `not-finite`; anything Effect cannot decode as `not-a-duration`.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateTimeout = (
  option: string,
  input: unknown,
  stage: Stage = "config"
): Effect.Effect<number, InvalidOption> => {
  if (typeof input === "number") {
    if (Number.isNaN(input) || !Number.isFinite(input)) return Effect.fail(invalid(option, "not-finite", stage))
    if (input <= 0) return Effect.fail(invalid(option, "not-positive", stage))
    return Effect.succeed(input)
  }
  // Everything else, a bigint (nanoseconds) included, goes through Effect's own decoding.
  const decoded = Duration.decodeUnknown(input)
  if (decoded._tag === "None") return Effect.fail(invalid(option, "not-a-duration", stage))
  const duration = decoded.value
  if (!Duration.isFinite(duration)) return Effect.fail(invalid(option, "not-finite", stage))
  const millis = Duration.toMillis(duration)
  if (Number.isNaN(millis) || !Number.isFinite(millis)) return Effect.fail(invalid(option, "not-finite", stage))
  if (millis <= 0) return Effect.fail(invalid(option, "not-positive", stage))
  return Effect.succeed(millis)
}

/**
 * Validates a byte or count option into a safe integer >= 1.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateCount = (
  option: string,
  input: unknown,
  stage: Stage = "config"
): Effect.Effect<number, InvalidOption> => {
  if (typeof input !== "number") return Effect.fail(invalid(option, "invalid-value", stage))
  if (Number.isNaN(input) || !Number.isFinite(input)) return Effect.fail(invalid(option, "not-finite", stage))
  if (!Number.isInteger(input)) return Effect.fail(invalid(option, "not-integer", stage))
  if (input < 1) return Effect.fail(invalid(option, "not-positive", stage))
  if (!Number.isSafeInteger(input)) return Effect.fail(invalid(option, "unsafe-integer", stage))
  return Effect.succeed(input)
}

/**
 * The deepest `maxDepth` accepted: what the client does with a message (`JSON.stringify` among
 * it) walks it recursively, and a thousand levels leave the stack room to spare.
 *
 * @since 0.1.0
 * @category defaults
 */
export const maxDepthCeiling = 1_000

const validateDepth = (input: unknown): Effect.Effect<number, InvalidOption> =>
  Effect.flatMap(
    validateCount("maxDepth", input),
    (depth) => depth > maxDepthCeiling ? Effect.fail(invalid("maxDepth", "invalid-value")) : Effect.succeed(depth)
  )

const optional = <A>(
  input: unknown,
  fallback: A,
  validate: (input: unknown) => Effect.Effect<A, InvalidOption>
): Effect.Effect<A, InvalidOption> => (input === undefined ? Effect.succeed(fallback) : validate(input))

const resolveBudget = (
  prefix: string,
  options: BudgetOptions | undefined,
  base: Budget,
  stage: Stage
): Effect.Effect<Budget, InvalidOption> =>
  Effect.map(
    Effect.all({
      timeoutMs: optional(options?.timeout, base.timeoutMs, (u) => validateTimeout(`${prefix}timeout`, u, stage)),
      maxBytes: optional(options?.maxBytes, base.maxBytes, (u) => validateCount(`${prefix}maxBytes`, u, stage))
    }),
    // The structure bound is the policy's, whatever the phase.
    (limits) => base.maxDepth === undefined ? limits : { ...limits, maxDepth: base.maxDepth, maxNodes: base.maxNodes }
  )

/**
 * Validates options into a policy. Runs before any I/O.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<PhasePolicy, InvalidOption> =>
  Effect.gen(function*() {
    const maxDepth = yield* optional(options.maxDepth, defaults.maxDepth, validateDepth)
    const maxNodes = yield* optional(options.maxNodes, defaults.maxNodes, (u) => validateCount("maxNodes", u))
    const baseline = yield* resolveBudget("", options, { ...configLimits, maxDepth, maxNodes }, "config")
    return {
      discovery: yield* resolveBudget("discovery.", options.discovery, baseline, "config"),
      call: yield* resolveBudget("call.", options.call, baseline, "config"),
      authorization: yield* resolveBudget("authorization.", options.authorization, baseline, "config"),
      // Not the baseline: a ping is small and quick whatever the tools are.
      ping: yield* resolveBudget(
        "ping.",
        options.ping,
        { timeoutMs: defaults.pingTimeoutMs, maxBytes: defaults.pingMaxBytes, maxDepth, maxNodes },
        "config"
      ),
      unsolicitedMaxBytes: yield* optional(
        options.unsolicited?.maxBytes,
        baseline.maxBytes,
        (u) => validateCount("unsolicited.maxBytes", u)
      ),
      maxTools: yield* optional(options.maxTools, defaults.maxTools, (u) => validateCount("maxTools", u)),
      maxPages: yield* optional(options.maxPages, defaults.maxPages, (u) => validateCount("maxPages", u)),
      maxSchemaBytes: yield* optional(
        options.maxSchemaBytes,
        defaults.maxSchemaBytes,
        (u) => validateCount("maxSchemaBytes", u)
      ),
      maxListingBytes: yield* optional(
        options.maxListingBytes,
        defaults.maxListingBytes,
        (u) => validateCount("maxListingBytes", u)
      ),
      maxDepth,
      maxNodes,
      maxInputRounds: yield* optional(
        options.maxInputRounds,
        defaults.maxInputRounds,
        (u) => validateCount("maxInputRounds", u)
      ),
      maxSessionRenewals: yield* optional(
        options.maxSessionRenewals,
        defaults.maxSessionRenewals,
        (u) => validateCount("maxSessionRenewals", u)
      ),
      releaseTimeoutMs: yield* optional(
        options.releaseTimeout,
        defaults.releaseTimeoutMs,
        (u) => validateTimeout("releaseTimeout", u)
      ),
      relistDelayMs: yield* optional(options.relistDelay, defaults.relistDelayMs, (u) => validateTimeout("relistDelay", u)),
      logBuffer: yield* optional(options.logBuffer, defaults.logBuffer, (u) => validateCount("logBuffer", u))
    }
  })

/**
 * The budget of one call: the policy's call budget with the per-call overrides, validated the
 * same way (stage `call`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const callBudget = (policy: PhasePolicy, overrides?: CallBudgetOptions): Effect.Effect<Budget, InvalidOption> => {
  if (overrides === undefined) return Effect.succeed(policy.call)
  const budget = resolveBudget("call.", overrides, policy.call, "call")
  if (overrides.idleTimeout === undefined) return budget
  return Effect.zipWith(
    budget,
    validateTimeout("call.idleTimeout", overrides.idleTimeout, "call"),
    (budget, idleTimeoutMs) => ({ ...budget, idleTimeoutMs })
  )
}

/**
 * A call's budget overrides, and its idle timeout: the longest wait for the call's first, or
 * next, sign of progress (a finite duration > 0). The call's deadline stays the hard cap.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallBudgetOptions extends BudgetOptions {
  readonly idleTimeout?: Duration.DurationInput | undefined
}
