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
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Options_ from "./internal/options.js"
import { Count, decoder, Timeout } from "./internal/optionSchema.js"
import * as PolicyDefaults from "./internal/policyDefaults.js"
import type { InvalidOption, Stage } from "./McpConnectionError.js"

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
  /**
   * The task budget (docs/DESIGN.md, "Tasks"): `timeout` bounds one wait for a task's result
   * (default 10 minutes), `maxBytes` each answer read while waiting (default the baseline's);
   * the server's suggested poll interval is clamped into `[minPollInterval, maxPollInterval]`
   * (default 250 ms and 30 s; 1 s, clamped, when it suggests none).
   */
  readonly task?: TaskBudgetOptions | undefined
}

/**
 * The task budget's options (`Options.task`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskBudgetOptions extends BudgetOptions {
  readonly minPollInterval?: Duration.DurationInput | undefined
  readonly maxPollInterval?: Duration.DurationInput | undefined
}

/**
 * The validated task budget: a wait's deadline and byte ceiling, and the poll interval's bounds.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskBudget extends Budget {
  readonly minPollIntervalMs: number
  readonly maxPollIntervalMs: number
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
  readonly task: TaskBudget
}

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaults: typeof PolicyDefaults.defaults = PolicyDefaults.defaults

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
): Effect.Effect<number, InvalidOption> => decoder(Timeout, { root: option, stage })(input)

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
): Effect.Effect<number, InvalidOption> => decoder(Count, { root: option, stage })(input)

/**
 * The deepest `maxDepth` accepted: what the client does with a message (`JSON.stringify` among
 * it) walks it recursively, and a thousand levels leave the stack room to spare.
 *
 * @since 0.1.0
 * @category defaults
 */
export const maxDepthCeiling: typeof PolicyDefaults.maxDepthCeiling = PolicyDefaults.maxDepthCeiling

/**
 * Validates options into a policy (the policy's Schema, `internal/options.ts`). Runs before
 * any I/O.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<PhasePolicy, InvalidOption> => Options_.decodePolicy(options)

/**
 * The budget of one call: the policy's call budget with the per-call overrides, validated the
 * same way (stage `call`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const callBudget = (policy: PhasePolicy, overrides?: CallBudgetOptions): Effect.Effect<Budget, InvalidOption> => {
  if (overrides === undefined) return Effect.succeed(policy.call)
  return Effect.map(Options_.decodeCallBudget(overrides), (fields) => {
    const base = policy.call
    const limits = { timeoutMs: fields.timeout ?? base.timeoutMs, maxBytes: fields.maxBytes ?? base.maxBytes }
    // The structure bound is the policy's.
    const budget = base.maxDepth === undefined ? limits : { ...limits, maxDepth: base.maxDepth, maxNodes: base.maxNodes }
    return fields.idleTimeout === undefined ? budget : { ...budget, idleTimeoutMs: fields.idleTimeout }
  })
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
