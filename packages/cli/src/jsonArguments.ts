/** `--args`: the JSON object of a tool call's arguments, or of a prompt's (strings only). */
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import * as Effect from "effect/Effect"
import { flag } from "./flags.js"
import { invalidOption } from "./record.js"

const refused = () => invalidOption(flag("args"), "invalid-value")

/** `--args`: a JSON object, or nothing. */
export const parseArguments = (text: string | undefined): Effect.Effect<Record<string, unknown>, McpConnectionError> => {
  if (text === undefined) return Effect.succeed({})
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return Effect.succeed(parsed as Record<string, unknown>)
    }
  } catch {
    // falls through to the refusal below
  }
  return Effect.fail(refused())
}

/** `prompt --args`: a JSON object of strings (MCP prompt arguments are strings), or nothing. */
export const parsePromptArguments = (text: string | undefined): Effect.Effect<Record<string, string>, McpConnectionError> =>
  Effect.flatMap(parseArguments(text), (args) => {
    const strings: Record<string, string> = {}
    for (const [name, given] of Object.entries(args)) {
      if (typeof given !== "string") return Effect.fail(refused())
      strings[name] = given
    }
    return Effect.succeed(strings)
  })
