/**
 * A `LanguageModel` whose answers come from a script, and a record of everything it was given:
 * the tools as a provider sees them (name, description, the JSON Schema of the parameters, via
 * `Tool.getJsonSchema`, as the providers build their requests) and the prompt.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as Tool from "@effect/ai/Tool"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** One tool as the model saw it. */
export interface SeenTool {
  readonly name: string
  readonly description: string | undefined
  readonly parameters: unknown
}

/** One request the model received. */
export interface Seen {
  readonly tools: ReadonlyArray<SeenTool>
  /** The prompt, encoded as a provider would send it. */
  readonly prompt: unknown
}

/** What the model answers to its `turn`-th request (from 0): encoded response parts. */
export type Script = (seen: Seen, turn: number) => Effect.Effect<ReadonlyArray<Response.PartEncoded>>

const encodePrompt = Schema.encodeSync(Prompt.Prompt)

export const scriptedModel = (script: Script) => {
  const seen: Array<Seen> = []
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.suspend(() => {
          const request: Seen = {
            tools: options.tools.map((tool) => ({
              name: tool.name,
              description: Tool.getDescription(tool as never),
              parameters: Tool.getJsonSchema(tool as never)
            })),
            prompt: encodePrompt(options.prompt)
          }
          seen.push(request)
          return Effect.map(script(request, seen.length - 1), (parts) => [...parts])
        }),
      streamText: () => Stream.die("the scripted model does not stream")
    })
  )
  return { layer, seen }
}

/** A tool call part as a provider decodes it from the model's answer. */
export const toolCall = (id: string, name: string, params: unknown): Response.PartEncoded => ({ type: "tool-call", id, name, params })

/** The end of an answer. */
export const finish: Response.PartEncoded = {
  type: "finish",
  reason: "tool-calls",
  usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, reasoningTokens: undefined, cachedInputTokens: undefined }
}

/** The prompt of a second turn: the first one's, then the response (tool calls and results). */
export const followUp = (prompt: Prompt.RawInput, response: { readonly content: ReadonlyArray<Response.AnyPart> }) =>
  Prompt.merge(Prompt.make(prompt), Prompt.fromResponseParts(response.content))

/** Waits (in real time) until the predicate holds, or fails the test after `timeoutMs`. */
export const eventually = (predicate: () => boolean, timeoutMs = 10_000) =>
  Effect.promise(async () => {
    const started = Date.now()
    while (!predicate()) {
      if (Date.now() - started > timeoutMs) throw new Error("condition not met in time")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })
