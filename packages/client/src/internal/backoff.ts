/**
 * The one backoff of what is tried again in the background: a catalog's server that failed to
 * connect (docs/DESIGN.md, "Catalog"), a standalone stream opened again, a dropped subscription
 * ("Live tool lists", "Subscriptions").
 */

/** The longest wait. */
export const maxBackoffMs = 30_000

/** The wait after the `failures`-th failure in a row: 1, 2, 4 ... at most 30 seconds (1 s for the first, or none yet). */
export const backoffMs = (failures: number): number => Math.min(maxBackoffMs, 1_000 * 2 ** Math.max(0, failures - 1))
