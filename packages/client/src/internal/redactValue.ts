/**
 * A JSON value (a call's result) with every secret in its strings, keys included, replaced by
 * `[redacted]`, exactly as `redact` (`secrets.ts`) would replace them string by string, as an
 * Effect that bounds its own work (docs/DESIGN.md, "AI toolkits"):
 *
 * - It yields to the scheduler after each `stepUnits` of scanned text (a string scanned by each
 *   secret's pattern counts once per pattern; each value at least `valueUnits`), and asks
 *   `pastDeadline` there: the call's deadline and an interruption apply while it runs, and other
 *   fibers go on.
 * - A string longer than a step is scanned window by window; a match is found as over the whole
 *   string (see `pass`).
 * - Copy on change: a value in which nothing matches is returned itself, and every part of a
 *   value that did not change is shared by the copy. Own keys stay own keys (a `__proto__` key
 *   is a property of the copy, never its prototype), in their order.
 * - The walk keeps its own stack: any depth.
 */
import * as Effect from "effect/Effect"
import { isInvisible, patternsOf, replacement, type SecretPattern } from "./secrets.js"

/** Text scanned between two yields (64 KiB of code units). */
export const stepUnits = 64 * 1024

/** What a value costs at least, however short: the walk's own work on it. */
const valueUnits = 64

/** The text scanned since the last yield. */
interface Meter {
  scanned: number
  readonly step: number
}

/** Charges `units`; whether a step is full (the walk then yields). */
const charge = (meter: Meter, units: number): boolean => {
  meter.scanned += units
  if (meter.scanned < meter.step) return false
  meter.scanned = 0
  return true
}

/**
 * The first position from which every match found in `text.slice(from, end)` is the match over
 * the whole text: a match that reaches past `end` holds at most `maxVisibleUnits` visible units
 * before it, so it starts after the last `maxVisibleUnits + 1` of them. `from` when there are
 * not that many.
 */
const exactBefore = (text: string, from: number, end: number, maxVisibleUnits: number): number => {
  let visible = 0
  for (let i = end - 1; i >= from; i--) {
    if (!isInvisible(text.charCodeAt(i)) && ++visible > maxVisibleUnits) return i + 1
  }
  return from
}

/**
 * One secret's `replace` over a long text, one window at a time. In a window `[from, end)`, the
 * matches that start before `exactBefore` are those of the whole text; the next window starts
 * after the last of them, or at that bound. A window that could decide nothing (its text is
 * mostly invisible characters) is doubled until it can; the text's last window decides all.
 */
function* pass(text: string, secret: SecretPattern, meter: Meter): Generator<void, string> {
  const { maxVisibleUnits, pattern } = secret
  const parts: Array<string> = []
  let copied = 0
  let from = 0
  let width = meter.step
  while (from < text.length) {
    const end = Math.min(text.length, from + width)
    const exact = end === text.length ? end : exactBefore(text, from, end, maxVisibleUnits)
    const window = text.slice(from, end)
    let next = from
    pattern.lastIndex = 0
    for (let match = pattern.exec(window); match !== null; match = pattern.exec(window)) {
      const start = from + match.index
      if (start >= exact) break
      parts.push(text.slice(copied, start), replacement)
      copied = next = start + match[0].length
    }
    pattern.lastIndex = 0
    const scanned = end - from
    next = Math.max(next, exact)
    if (next > from) {
      from = next
      width = meter.step
    } else {
      width *= 2
    }
    if (charge(meter, scanned)) yield
  }
  if (parts.length === 0) return text
  parts.push(text.slice(copied))
  return parts.join("")
}

/** A string with every secret replaced, pattern after pattern, as `redact` does. */
function* redactText(text: string, secrets: ReadonlyArray<SecretPattern>, meter: Meter): Generator<void, string> {
  let out = text
  for (const secret of secrets) {
    // A match holds at least one unit per visible character.
    if (out.length < secret.visible) continue
    if (out.length <= meter.step) {
      secret.pattern.lastIndex = 0
      out = out.replace(secret.pattern, replacement)
      if (charge(meter, out.length)) yield
    } else {
      out = yield* pass(out, secret, meter)
    }
  }
  if (charge(meter, valueUnits)) yield
  return out
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** An array or object being walked: its children so far, copied only once one of them changed. */
interface Frame {
  readonly from: ReadonlyArray<unknown> | Record<string, unknown>
  /** An object's own keys, and their redacted forms (`undefined` for an array). */
  readonly keys: ReadonlyArray<string> | undefined
  readonly newKeys: ReadonlyArray<string> | undefined
  readonly keysChanged: boolean
  readonly length: number
  index: number
  copy: Array<unknown> | undefined
}

const childOf = (frame: Frame, index: number): unknown =>
  frame.keys === undefined ? (frame.from as ReadonlyArray<unknown>)[index] : (frame.from as Record<string, unknown>)[frame.keys[index]!]

const define = (target: object, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** The value of a frame whose children are all done: itself when nothing in it changed. */
const built = (frame: Frame): unknown => {
  if (frame.copy === undefined && !frame.keysChanged) return frame.from
  if (frame.keys === undefined) return frame.copy
  const out = {}
  // In order; two keys redacted alike are one property, at the first one's place, with the last one's value.
  for (let i = 0; i < frame.length; i++) define(out, frame.newKeys![i]!, frame.copy === undefined ? childOf(frame, i) : frame.copy[i])
  return out
}

function* walk(value: unknown, secrets: ReadonlyArray<SecretPattern>, meter: Meter): Generator<void, unknown> {
  const stack: Array<Frame> = []
  let current = value
  for (;;) {
    // Down to a value that is done at once: a string, a scalar, an empty array or object.
    let done: unknown
    if (typeof current === "string") {
      done = yield* redactText(current, secrets, meter)
    } else if (Array.isArray(current) && current.length > 0) {
      stack.push({ from: current, keys: undefined, newKeys: undefined, keysChanged: false, length: current.length, index: 0, copy: undefined })
      current = current[0]
      continue
    } else if (isObject(current) && !Array.isArray(current)) {
      const keys = Object.keys(current)
      if (keys.length > 0) {
        const newKeys: Array<string> = []
        for (const key of keys) newKeys.push(yield* redactText(key, secrets, meter))
        const keysChanged = newKeys.some((key, i) => key !== keys[i])
        stack.push({ from: current, keys, newKeys, keysChanged, length: keys.length, index: 0, copy: undefined })
        current = current[keys[0]!]
        continue
      }
      done = current
    } else {
      if (charge(meter, valueUnits)) yield
      done = current
    }
    // Up: the value done goes to its parent, and so on while the parents are done too.
    for (;;) {
      const frame = stack.at(-1)
      if (frame === undefined) return done
      if (frame.copy === undefined && done !== childOf(frame, frame.index)) {
        frame.copy = []
        for (let i = 0; i < frame.index; i++) frame.copy.push(childOf(frame, i))
      }
      frame.copy?.push(done)
      frame.index++
      if (frame.index < frame.length) {
        current = childOf(frame, frame.index)
        break
      }
      stack.pop()
      done = built(frame)
    }
  }
}

/**
 * `value` with the secrets replaced. After each step, `pastDeadline` says whether to stop: the
 * error to fail with, or `undefined` to go on (it is asked once more when the walk is done: a
 * redaction that ended past the deadline does not make a late result a success).
 */
export const redactValue = <E>(
  value: unknown,
  secrets: ReadonlyArray<string>,
  pastDeadline: () => E | undefined,
  step: number = stepUnits
): Effect.Effect<unknown, E> => {
  const patterns = patternsOf(secrets)
  if (patterns.length === 0) return Effect.succeed(value)
  const steps = walk(value, patterns, { scanned: 0, step })
  const loop: Effect.Effect<unknown, E> = Effect.suspend(() => {
    const next = steps.next()
    const late = pastDeadline()
    if (late !== undefined) return Effect.fail(late)
    return next.done === true ? Effect.succeed(next.value) : Effect.zipRight(Effect.yieldNow(), loop)
  })
  return loop
}
