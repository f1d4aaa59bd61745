/**
 * `complete`: suggestions for one argument of a prompt (`--prompt NAME`) or of a resource
 * template (`--resource URI`), `completion/complete` under the call budget (docs/DESIGN.md,
 * "Completion"). Its own flags are checked before any I/O: exactly one of `--prompt` and
 * `--resource`, an `--argument`, `--value` (default empty: every suggestion), each `--context`
 * a `name=value` of its own name.
 */
import type { McpSchema } from "@phasebound/client"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { flag, type Flags } from "./flags.js"
import { json, oneLine } from "./output.js"
import { invalidOption } from "./record.js"

/** `--context name=value` (repeatable): the values already chosen for the other arguments. */
const contextOf = (given: ReadonlyArray<string>): Effect.Effect<Record<string, string> | undefined, McpConnectionError> => {
  if (given.length === 0) return Effect.succeed(undefined)
  // A Map, then own properties: a name such as `__proto__` stays a name.
  const context = new Map<string, string>()
  for (const pair of given) {
    const at = pair.indexOf("=")
    const name = at < 0 ? "" : pair.slice(0, at)
    // A name given twice would leave one of its values unsaid: refused, as a pair without a name.
    if (name === "" || context.has(name)) return Effect.fail(invalidOption(flag("context")))
    context.set(name, pair.slice(at + 1))
  }
  return Effect.succeed(Object.fromEntries(context))
}

/** `complete`'s own flags, as the request they make. */
export const parseComplete = (flags: Flags): Effect.Effect<McpSchema.CompleteRequest, McpConnectionError> =>
  Effect.gen(function*() {
    const prompt = Option.getOrUndefined(flags.prompt)
    // `--resource` is repeatable for `watch`; `complete` takes one template.
    if (flags.resource.length > 1) return yield* Effect.fail(invalidOption(flag("resource")))
    const resource = flags.resource[0]
    // Exactly one reference: neither, or both, names the first flag of the pair.
    if ((prompt === undefined) === (resource === undefined)) return yield* Effect.fail(invalidOption(flag("prompt")))
    if (prompt === "" || resource === "") return yield* Effect.fail(invalidOption(flag(prompt === "" ? "prompt" : "resource")))
    const argument = Option.getOrUndefined(flags.argument)
    if (argument === undefined || argument === "") return yield* Effect.fail(invalidOption(flag("argument")))
    const context = yield* contextOf(flags.context)
    const ref: McpSchema.CompletionReference = prompt !== undefined ? { type: "ref/prompt", name: prompt } : { type: "ref/resource", uri: resource! }
    return {
      ref,
      argument: { name: argument, value: Option.getOrElse(flags.value, () => "") },
      ...(context === undefined ? {} : { context: { arguments: context } })
    }
  })

/**
 * JSON: the result as the server sent it (`completion`: `values`, `total`, `hasMore`). A
 * terminal: one suggestion a line (printable), then how many of how many.
 */
export const renderCompletion = (result: McpSchema.CompleteResult, machine: boolean): string => {
  if (machine) return json(result)
  const { hasMore, total, values } = result.completion
  if (values.length === 0) return "no suggestions\n"
  const more = hasMore === true ? ", more available" : ""
  const of = total === undefined ? "" : ` of ${total}`
  return values.map((value) => `${oneLine(value)}\n`).join("") + `(${values.length}${of} suggestion${values.length === 1 ? "" : "s"}${more})\n`
}
