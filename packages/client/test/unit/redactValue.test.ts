/**
 * The redaction of a call's result (`internal/redactValue.ts`; docs/DESIGN.md, "AI toolkits"):
 * every string and key of any JSON value gets what `redact` gives it, window by window for a long
 * string, and nothing else changes; a value with no secret is returned itself; the work stops
 * at the deadline and at an interruption, between steps of about 64 KiB; no depth overflows
 * the stack.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, FastCheck as fc, Fiber } from "effect"
import { redactValue, stepUnits } from "../../src/internal/redactValue.js"
import { invisibleCharacterPattern, isInvisible, redact, secretValues } from "../../src/internal/secrets.js"

const SECRET = "tok-AB/cd é😀+xyz"
const secrets = secretValues([SECRET, "key=v4lue-77"])

const never = () => undefined

/** `redact` on every string and key, recursively, as a reference (fine for the small values FastCheck draws). */
const reference = (value: unknown): unknown => {
  if (typeof value === "string") return redact(value, secrets)
  if (Array.isArray(value)) return value.map(reference)
  if (typeof value === "object" && value !== null) {
    const out = {}
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, redact(key, secrets), { value: reference(item), enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  return value
}

/** A secret as it may travel: raw, percent-encoded, JSON-escaped, split by invisible characters, or cut short. */
const travelled = fc.tuple(fc.constantFrom(...secrets), fc.nat(5), fc.stringOf(fc.constantFrom("\u0000", "\n", "\u200b", "\ufeff"))).map(
  ([secret, form, run]) => {
    const characters = Array.from(secret)
    switch (form) {
      case 0:
        return encodeURIComponent(secret)
      case 1:
        return characters.map((c) => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")).join("")
      case 2:
        return characters.join(run)
      case 3:
        return secret.slice(0, Math.max(1, secret.length - 2))
      default:
        return secret
    }
  }
)

/** Text made of what a match is made of: parts of secrets, hex digits, `%`, `\`, `u`, invisible characters. */
const text = fc.array(fc.oneof(travelled, fc.stringOf(fc.constantFrom("a", "B", "%", "2", "F", "\\", "u", "0", " ", "\u0000", "\n", "-", "é"))), {
  maxLength: 12
}).map((parts) => parts.join(""))

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value")),
    fc.dictionary(fc.oneof(text, fc.constantFrom("__proto__", "constructor")), tie("value"))
  )
})).value

const redacted = (value: unknown, step?: number) => Effect.runSync(redactValue(value, secrets, never, step))

describe("redactValue", () => {
  it.prop("every string and key as `redact` gives it, nothing else changed", [json], ([value]) => {
    expect(JSON.stringify(redacted(value))).toBe(JSON.stringify(reference(value)))
  })

  it.prop("a string longer than a step, scanned window by window, as `redact` gives it whole", [fc.array(text, { maxLength: 20 })], ([parts]) => {
    const long = parts.join("")
    // Steps of 8 units: every string is long, every match may cross a window's end.
    expect(redacted(long, 8)).toBe(redact(long, secrets))
    expect(redacted({ [long]: [long] }, 8)).toStrictEqual({ [redact(long, secrets)]: [redact(long, secrets)] })
  })

  it("a secret split by invisible characters across many windows is found whole", () => {
    const split = Array.from(SECRET).join("\u0000".repeat(100))
    expect(redacted(`a${split}b`, 8)).toBe("a[redacted]b")
  })

  it.prop("a value with no secret in it is returned itself, not a copy", [json], ([value]) => {
    fc.pre(JSON.stringify(reference(value)) === JSON.stringify(value))
    expect(redacted(value)).toBe(value)
  })

  it("a copy only where something changed: the rest is shared", () => {
    const kept = { type: "text", text: "nothing here" }
    const meta = { trace: ["t-1"] }
    const value = { content: [kept, { type: "text", text: `echo ${SECRET}` }], _meta: meta }
    const out = redacted(value) as typeof value
    expect(out).not.toBe(value)
    expect(out.content[0]).toBe(kept)
    expect(out._meta).toBe(meta)
    expect(out.content[1]).toStrictEqual({ type: "text", text: "echo [redacted]" })
    expect(value.content[1]?.text).toBe(`echo ${SECRET}`)
  })

  it("an own __proto__ key stays a key of the copy, never its prototype", () => {
    const value: unknown = JSON.parse(`{"__proto__":{"polluted":"${SECRET}"},"a":["${SECRET}"]}`)
    const out = redacted(value) as Record<string, unknown>
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(Object.keys(out)).toEqual(["__proto__", "a"])
    expect(JSON.stringify(out)).toBe(`{"__proto__":{"polluted":"[redacted]"},"a":["[redacted]"]}`)
    expect(out["polluted"]).toBeUndefined()
  })

  it("100,000 levels of nesting: no stack overflow", () => {
    const depth = 100_000
    const value: unknown = JSON.parse(`${"[".repeat(depth)}"${SECRET}"${"]".repeat(depth)}`)
    let inner = redacted(value)
    for (let i = 0; i < depth; i++) inner = (inner as Array<unknown>)[0]
    expect(inner).toBe("[redacted]")
  })

  it("the invisible characters are those of the pattern", () => {
    for (let code = 0; code <= 0xffff; code++) {
      invisibleCharacterPattern.lastIndex = 0
      expect(isInvisible(code), `U+${code.toString(16)}`).toBe(invisibleCharacterPattern.test(String.fromCharCode(code)))
    }
  })
})

describe("redactValue: bounded", () => {
  const large = { content: [{ type: "text", text: `${"lorem ipsum ".repeat(400_000)}${SECRET}` }] }

  it.effect("the deadline is asked after each step of about 64 KiB: 1 MiB and one secret, 16 steps", () =>
    Effect.gen(function*() {
      let asked = 0
      const value = "x".repeat(1024 * 1024)
      const out = yield* redactValue(value, ["only-one-secret"], () => void asked++)
      expect(out).toBe(value)
      expect(asked).toBeGreaterThanOrEqual(1024 * 1024 / stepUnits)
      expect(asked).toBeLessThanOrEqual(1024 * 1024 / stepUnits + 2)
    }))

  it.effect("past the deadline at its third step, a large result's redaction fails there: the rest is never scanned", () =>
    Effect.gen(function*() {
      let asked = 0
      const exit = yield* Effect.exit(redactValue(large, secrets, () => ++asked === 3 ? "past the deadline" : undefined))
      expect(exit).toStrictEqual(Exit.fail("past the deadline"))
      expect(asked).toBe(3)
    }))

  it.effect("a large result's redaction is interrupted between two steps", () =>
    Effect.gen(function*() {
      let asked = 0
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(redactValue(large, secrets, () => {
        // The sync point: the redaction has done its first step.
        if (++asked === 1) Deferred.unsafeDone(started, Exit.void)
        return undefined
      }))
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      // Of the thousands of steps the whole redaction takes (4.8 MB, one pass per secret form).
      expect(asked).toBeLessThanOrEqual(2)
    }))
})
