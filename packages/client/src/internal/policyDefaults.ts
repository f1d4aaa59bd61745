/** The policy's defaults (docs/DESIGN.md, "Phases and budgets"), published as `PhasePolicy.defaults`. */
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
  logBuffer: 1_000,
  // Tasks (docs/DESIGN.md, "Tasks"): the longest wait for a task's result, and the bounds the
  // server's suggested poll interval is clamped into (the middle one when it suggests none).
  taskTimeoutMs: 10 * 60_000,
  taskMinPollIntervalMs: 250,
  taskPollIntervalMs: 1_000,
  taskMaxPollIntervalMs: 30_000
} as const

/** The deepest `maxDepth` accepted, published as `PhasePolicy.maxDepthCeiling`. */
export const maxDepthCeiling = 1_000
