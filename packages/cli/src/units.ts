/**
 * Budget flags as people type them: durations (`500ms`, `30s`, `2m`, `1h`) and sizes
 * (`1048576`, `64KiB`, `16MiB`, `1GiB`, and the decimal `KB`/`MB`/`GB`). The strings are parsed
 * here; the numbers are then validated by the client's PhasePolicy helpers, so a zero, a
 * negative or a fractional byte count is refused exactly as the library refuses it.
 */
import { PhasePolicy } from "@phasebound/client"
import type { InvalidOption } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import { invalidOption } from "./record.js"

const durationUnits: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }

// The unit is required: a bare "30" could mean seconds or milliseconds, so it is refused.
const durationPattern = /^(-?\d+(?:\.\d+)?)(ms|s|m|h)$/

const sizeUnits: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3
}

const sizePattern = /^(-?\d+(?:\.\d+)?)([a-z]*)$/i

/** A duration flag into finite milliseconds > 0, or InvalidOption naming the flag. */
export const parseDuration = (option: string, text: string): Effect.Effect<number, InvalidOption> => {
  const match = durationPattern.exec(text.trim())
  if (match === null) return Effect.fail(invalidOption(option, "not-a-duration"))
  const millis = Number(match[1]) * durationUnits[match[2]!]!
  return PhasePolicy.validateTimeout(option, millis)
}

/** A size flag into a safe integer >= 1 of bytes, or InvalidOption naming the flag. */
export const parseSize = (option: string, text: string): Effect.Effect<number, InvalidOption> => {
  const match = sizePattern.exec(text.trim())
  const unit = match === null ? undefined : sizeUnits[match[2]!.toLowerCase()]
  if (match === null || unit === undefined) return Effect.fail(invalidOption(option, "invalid-value"))
  return PhasePolicy.validateCount(option, Number(match[1]) * unit)
}
