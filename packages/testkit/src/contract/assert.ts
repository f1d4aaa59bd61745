/**
 * Assertions of the contract suite, free of any test framework: each throws a `ContractFailure`
 * whose message says what was expected and what was seen (never a secret: it prints public
 * fields only).
 */
import { Cause, Effect, Exit } from "effect"
import type { ClientError } from "./client.js"

export class ContractFailure extends Error {
  override readonly name = "ContractFailure"
}

export const check = (condition: boolean, message: string): void => {
  if (!condition) throw new ContractFailure(message)
}

const PUBLIC_KEYS = ["_tag", "stage", "phase", "limits", "observedBytes", "status", "code", "reason", "exitCode", "outcome", "retryable"] as const

/** The public fields of an error, for messages. */
export const summary = (error: unknown): string => {
  if (error === null || typeof error !== "object") return String(error)
  const record = error as Record<string, unknown>
  return PUBLIC_KEYS.filter((key) => record[key] !== undefined).map((key) => `${key}=${JSON.stringify(record[key])}`).join(" ")
}

/** Every field of `expected` equals (deeply, for plain objects) the same field of `actual`. */
export const checkFields = (actual: unknown, expected: Readonly<Record<string, unknown>>, what = "failure"): void => {
  const record = (actual ?? {}) as Record<string, unknown>
  for (const [key, value] of Object.entries(expected)) {
    const seen = record[key]
    const same = value !== null && typeof value === "object"
      ? JSON.stringify(seen) === JSON.stringify(value)
      : seen === value
    check(same, `${what}: ${key} is ${JSON.stringify(seen)}, expected ${JSON.stringify(value)} (${summary(actual)})`)
  }
}

/** Runs `effect`, which must fail with a typed error (not a defect, not an interruption). */
export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<ClientError, never, R> =>
  Effect.flatMap(Effect.exit(effect), (exit) =>
    Effect.sync(() => {
      if (Exit.isSuccess(exit)) throw new ContractFailure("succeeded where a failure was expected")
      const failure = Cause.failureOption(exit.cause)
      if (failure._tag === "None") {
        throw new ContractFailure(
          Cause.isInterruptedOnly(exit.cause)
            ? "interrupted where a typed failure was expected"
            : `a defect where a typed failure was expected: ${Cause.pretty(exit.cause).split("\n")[0]}`
        )
      }
      return failure.value as ClientError
    }))

/** Awaits a promise that must reject; returns what it rejected with. */
export const rejectionOf = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new ContractFailure("resolved where a rejection was expected")
}

/** Waits until the connection holds no pending request and no background fiber. */
export const expectReleased = (connection: { readonly diagnostics: Effect.Effect<{ readonly pending: number; readonly background: number }> }) =>
  Effect.promise(async () => {
    const started = Date.now()
    for (;;) {
      const diagnostics = await Effect.runPromise(connection.diagnostics)
      if (diagnostics.pending === 0 && diagnostics.background === 0) return
      if (Date.now() - started > 10_000) throw new ContractFailure(`the connection still holds ${JSON.stringify(diagnostics)}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

/**
 * The next call after a session's shared stream was given up (docs/DESIGN.md, "Sessions that
 * heal"): where the row heals (legacy HTTP+SSE), it runs on a new session, once, and the failed
 * call is not sent again; elsewhere (stdio) it is refused before it is sent. `counter` is the
 * server's count of tool runs.
 */
export const checkNextCallAfterStreamGivenUp = (
  row: { readonly heals: boolean },
  connection: { readonly callTool: (name: string) => Effect.Effect<unknown, ClientError> },
  counter: () => number
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const before = counter()
    if (row.heals) {
      yield* Effect.orDie(connection.callTool("increment"))
      check(counter() === before + 1, `after the session ended, the next call ran the tool ${counter() - before} times, expected once`)
    } else {
      const next = yield* failureOf(connection.callTool("increment"))
      checkFields(next, { outcome: "not-sent" }, "the next call, after the shared stream was given up")
      check(counter() === before, `after the session ended the tool ran ${counter() - before} more times, expected none`)
    }
  })
