/**
 * The work bound of an output check (docs/DESIGN.md, "Typed results"). A check is synchronous:
 * nothing can interrupt it, so it counts its own work and stops itself.
 *
 * The generated code of a compiled schema (`internal/meteredSource.ts`) takes one step at every
 * function entry, loop iteration and `if` statement; the helpers it calls (deep equality, string
 * length, the linear regular-expression engine, unique items) charge in proportion to what they
 * read. Every `chunk` steps the meter compares the clock with the call's deadline; it stops the
 * check (a thrown `CheckStopped`) past the deadline, or once the check has spent its ceiling of
 * steps. Between checks the meter is idle and never stops anything (Ajv's own validation of a
 * schema against its meta-schema, at compile time, runs idle).
 *
 * JavaScript runs one check at a time, so one meter serves the process.
 */

/** Why a check was stopped. */
export type StopReason = "deadline" | "too-costly"

/** Thrown through the generated code (which catches nothing) to stop a check. */
export class CheckStopped {
  constructor(readonly reason: StopReason) {}
}

/** Steps between two looks at the clock (about 0.1 ms of the slowest steps). */
export const chunk = 4_096

export interface Meter {
  /** Steps left before the next look at the clock; `Infinity` when idle. */
  left: number
  /** Called by the generated code once `left` is below zero. */
  readonly spill: () => void
  /** `Object.keys(value)`, charged its length. */
  readonly keys: (value: object) => ReadonlyArray<string>
  /** `Object.assign(target, source)`, charged the keys copied. */
  readonly assign: (target: object, source: object) => object
  /** `errors.concat(more)`, charged their length. */
  readonly concat: (errors: ReadonlyArray<unknown>, more: unknown) => ReadonlyArray<unknown>
  /** The metered stand-in of a runtime helper of the generated code (`meterHelper`), or itself. */
  readonly wrap: (helper: unknown) => unknown
}

const standIns = new Map<unknown, unknown>()

/** Makes `wrap(helper)` return `standIn` in the code compiled from now on. */
export const meterHelper = (helper: unknown, standIn: unknown): void => {
  standIns.set(helper, standIn)
}

let granted = Infinity
let spent = 0
let ceiling = Infinity
let deadlineAt = Infinity
let now: () => number = () => 0

export const meter: Meter = {
  left: Infinity,
  spill: () => {
    spent += granted - meter.left
    if (spent >= ceiling) throw new CheckStopped("too-costly")
    if (now() >= deadlineAt) throw new CheckStopped("deadline")
    granted = Math.min(chunk, ceiling - spent)
    meter.left = granted
  },
  keys: (value) => {
    const keys = Object.keys(value)
    charge(1 + keys.length)
    return keys
  },
  assign: (target, source) => {
    charge(1 + Object.keys(source).length)
    return Object.assign(target, source)
  },
  concat: (errors, more) => {
    charge(errors.length + (Array.isArray(more) ? more.length : 1))
    return errors.concat(more)
  },
  wrap: (helper) => standIns.get(helper) ?? helper
}

/** Charges `steps` of work (a helper's, in proportion to what it read). */
export const charge = (steps: number): void => {
  meter.left -= steps
  if (meter.left < 0) meter.spill()
}

/** The bounds of one check. */
export interface CheckBounds {
  /** At most this many steps. */
  readonly maxSteps: number
  /** The call's deadline, on the `now` clock. */
  readonly deadlineAt: number
  readonly now: () => number
}

/**
 * Runs `check` under `bounds`: its result, or the reason it was stopped. Anything else it throws
 * is thrown again, after the meter is idle once more.
 */
export const metered = <A>(bounds: CheckBounds, check: () => A): A | CheckStopped => {
  spent = 0
  ceiling = bounds.maxSteps
  deadlineAt = bounds.deadlineAt
  now = bounds.now
  granted = Math.min(chunk, ceiling)
  meter.left = granted
  try {
    return check()
  } catch (error) {
    if (error instanceof CheckStopped) return error
    throw error
  } finally {
    granted = Infinity
    ceiling = Infinity
    deadlineAt = Infinity
    meter.left = Infinity
  }
}
