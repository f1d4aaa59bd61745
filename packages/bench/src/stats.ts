/** Small statistics helpers shared by the runners and the report. */

export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Nearest-rank percentile, p in (0, 100]. */
export const percentile = (values: ArrayLike<number>, p: number): number => {
  const sorted = Array.from(values).sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length))
  return sorted[rank - 1]!
}

export const round = (value: number, digits = 3): number => {
  if (!Number.isFinite(value)) return value
  const f = 10 ** digits
  return Math.round(value * f) / f
}

/** ABAB order: forward on even repetitions, backward on odd ones. */
export const abab = <A>(items: ReadonlyArray<A>, rep: number): ReadonlyArray<A> => (rep % 2 === 0 ? items : [...items].reverse())
