/**
 * `completion/complete` of the test servers with `features` (the `completions` capability), pure
 * MCP logic with no transport, in both eras:
 *
 * - `ref/prompt` `greet`, argument `name`: the names of `COMPLETION_NAMES` that start with the
 *   typed value (case-insensitive), `total` their number;
 * - `ref/resource` `test://docs/{id}`, argument `id`: the ids of the listed documents that start
 *   with the value;
 * - `ref/resource` `test://repos/{owner}/{repo}` (not listed, so the listings stay as they were):
 *   `owner` from `COMPLETION_REPOS`' owners, `repo` from the repositories of the owner chosen in
 *   `context.arguments.owner` (none without it): the template with several variables;
 * - `ref/prompt` `completion_faults` (not listed either), a hostile server's answers chosen by the
 *   argument's name: `too-many` (`value` values, at most `MAX_FAULT_VALUES`), `huge` (one value of
 *   `value` bytes, at most `MAX_FAULT_BYTES`), `wrong-type` (values that are numbers),
 *   `no-completion` (a result without `completion`), `echo` (one value: the request's params as JSON).
 *
 * Anything else is -32602, as the spec asks of an unknown prompt or template.
 */
import { ErrorCode, isRecord } from "./jsonrpc.js"
import type { Outcome } from "./mcp.js"
import { padString } from "./payload.js"

/** The names `greet`'s `name` completes from. */
export const COMPLETION_NAMES: ReadonlyArray<string> = ["Ada", "Alan", "Alonzo", "Barbara", "Grace", "Edsger"]

/** The owners and repositories `test://repos/{owner}/{repo}` completes from. */
export const COMPLETION_REPOS: Readonly<Record<string, ReadonlyArray<string>>> = {
  effect: ["effect", "effect-ts.github.io", "examples"],
  modelcontextprotocol: ["modelcontextprotocol", "typescript-sdk", "inspector"]
}

/** The most values `completion_faults`' `too-many` sends. */
export const MAX_FAULT_VALUES = 1_000_000
/** The longest value `completion_faults`' `huge` sends. */
export const MAX_FAULT_BYTES = 64 * 1024 * 1024

/** The spec's bound: at most 100 values per answer. */
const MAX_VALUES = 100

const result = (value: unknown): Outcome => ({ _tag: "result", result: value })
const invalidParams = (message: string): Outcome => ({ _tag: "error", error: { code: ErrorCode.InvalidParams, message } })

/** The candidates that start with `value` (case-insensitive), at most 100 of them, with their total. */
const matching = (candidates: ReadonlyArray<string>, value: string): Outcome => {
  const prefix = value.toLowerCase()
  const found = candidates.filter((candidate) => candidate.toLowerCase().startsWith(prefix))
  return result({ completion: { values: found.slice(0, MAX_VALUES), total: found.length, hasMore: found.length > MAX_VALUES } })
}

const count = (value: string, max: number): number | undefined => {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(value)) return undefined
  const n = Number(value)
  return n <= max ? n : undefined
}

const fault = (name: string, value: string, params: Readonly<Record<string, unknown>>): Outcome => {
  switch (name) {
    case "too-many": {
      const n = count(value, MAX_FAULT_VALUES)
      if (n === undefined) return invalidParams(`too-many expects a count of at most ${MAX_FAULT_VALUES}`)
      return result({ completion: { values: Array.from({ length: n }, (_, i) => `v${i}`), total: n, hasMore: false } })
    }
    case "huge": {
      const n = count(value, MAX_FAULT_BYTES)
      if (n === undefined) return invalidParams(`huge expects a byte count of at most ${MAX_FAULT_BYTES}`)
      return result({ completion: { values: [padString(n)], total: 1, hasMore: false } })
    }
    case "wrong-type":
      return result({ completion: { values: [1, 2, 3], total: 3 } })
    case "no-completion":
      return result({ values: ["a"] })
    case "echo":
      return result({ completion: { values: [JSON.stringify({ ref: params["ref"], argument: params["argument"], context: params["context"] })] } })
    default:
      return invalidParams(`Unknown completion fault: ${name}`)
  }
}

/**
 * Answers `completion/complete`; `documents` is how many `test://docs/i` are listed.
 */
export const complete = (params: unknown, documents: number): Outcome => {
  if (!isRecord(params) || !isRecord(params["ref"]) || !isRecord(params["argument"])) {
    return invalidParams("completion/complete needs a ref and an argument")
  }
  const ref = params["ref"]
  const argument = params["argument"]
  const name = argument["name"]
  const value = argument["value"]
  if (typeof name !== "string" || typeof value !== "string") return invalidParams("the argument needs a string name and value")
  const context = isRecord(params["context"]) && isRecord(params["context"]["arguments"]) ? params["context"]["arguments"] : {}
  switch (ref["type"]) {
    case "ref/prompt":
      if (ref["name"] === "greet" && name === "name") return matching(COMPLETION_NAMES, value)
      if (ref["name"] === "completion_faults") return fault(name, value, params)
      return invalidParams(`Unknown prompt or argument: ${String(ref["name"])}`)
    case "ref/resource":
      if (ref["uri"] === "test://docs/{id}" && name === "id") {
        return matching(Array.from({ length: documents }, (_, i) => String(i + 1)), value)
      }
      if (ref["uri"] === "test://repos/{owner}/{repo}") {
        if (name === "owner") return matching(Object.keys(COMPLETION_REPOS), value)
        if (name === "repo") {
          const owner = context["owner"]
          // Own keys only: an owner named `__proto__` is no owner.
          return matching(typeof owner === "string" && Object.hasOwn(COMPLETION_REPOS, owner) ? COMPLETION_REPOS[owner]! : [], value)
        }
      }
      return invalidParams(`Unknown resource template or argument: ${String(ref["uri"])}`)
    default:
      return invalidParams("ref.type must be ref/prompt or ref/resource")
  }
}
