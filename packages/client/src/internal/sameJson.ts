/**
 * Whether two values parsed from JSON are the same, keys in the same order: what comparing their
 * `JSON.stringify` texts says, without building the texts. A listing said again unchanged is
 * the usual case, so the walk is linear and allocates little; it stops at the first difference.
 * An explicit stack, not recursion: the values are a peer's.
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  const stack: Array<unknown> = [a, b]
  while (stack.length > 0) {
    const y = stack.pop()
    const x = stack.pop()
    if (x === y) continue
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false
      // `JSON.stringify` writes a missing element as `null`.
      for (let i = 0; i < x.length; i++) stack.push(x[i] ?? null, y[i] ?? null)
      continue
    }
    if (Array.isArray(y)) return false
    const xs = definedKeys(x as Record<string, unknown>)
    const ys = definedKeys(y as Record<string, unknown>)
    if (xs.length !== ys.length) return false
    for (let i = 0; i < xs.length; i++) {
      if (xs[i] !== ys[i]) return false
      stack.push((x as Record<string, unknown>)[xs[i]!], (y as Record<string, unknown>)[ys[i]!])
    }
  }
  return true
}

/** The keys `JSON.stringify` writes: those whose value is not `undefined`, in order. */
const definedKeys = (record: Record<string, unknown>): Array<string> => {
  const keys = Object.keys(record)
  for (const key of keys) {
    if (record[key] === undefined) return keys.filter((k) => record[k] !== undefined)
  }
  return keys
}
