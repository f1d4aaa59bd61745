/** Prompts: `prompts/list` (every page under one deadline of the call budget) and `prompts/get`. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { isStringRecord } from "../records.js"
import { type Core, decodedAs } from "./core.js"
import { listOf } from "./pages.js"

const decodePrompt = Schema.decodeUnknownEither(McpSchema.GetPromptResult)

export interface Prompts {
  readonly listPrompts: McpClient.Connection["listPrompts"]
  readonly getPrompt: McpClient.Connection["getPrompt"]
}

export const make = (core: Core): Prompts => ({
  listPrompts: listOf(core, "prompts/list", "list-prompts", "prompts", McpSchema.Prompt, "prompts"),
  getPrompt: (name, args, options) =>
    core.callPhase(
      "prompts/get",
      "get-prompt",
      options,
      typeof name !== "string" || name.length === 0 ? "name" : args !== undefined && !isStringRecord(args) ? "arguments" : undefined,
      (on, exchange) => Effect.flatMap(on.session.request("prompts/get", { name, arguments: args ?? {} }, exchange), decodedAs(decodePrompt, exchange))
    )
})
