/**
 * A real peer that completes arguments, written by no one here: the MCP TypeScript SDK v2 server
 * (`@modelcontextprotocol/server` 2.4.0) on 127.0.0.1 port 0, `createMcpHandler(factory)` with
 * its default `legacy: "stateless"`, so one peer answers 2026-07-28 requests and the 2025
 * revisions' (a fresh instance per request, no sessions); `answers` is its `responseMode`.
 *
 * - the prompt `code_review`, whose `language` and `framework` are `completable` (the SDK then
 *   declares `completions` itself): `framework` is completed from the `language` given in
 *   `context.arguments`, as the spec's example does;
 * - the resource template `repo://{owner}/{repo}`, whose `complete` callbacks complete `owner`,
 *   and `repo` from the owner in the context.
 *
 * The callbacks record the context they received (`contexts`), to show what reached the SDK; an
 * `echo` tool is there for the discovery's listing.
 */
import { completable, createMcpHandler, McpServer, ResourceTemplate } from "@modelcontextprotocol/server"
import { z } from "zod"
import { serveWebHandler, type WebRequestRecord } from "./webHandlerServer.js"

export const LANGUAGES = ["python", "pytorch", "pyside", "typescript", "rust"] as const
export const FRAMEWORKS: Readonly<Record<string, ReadonlyArray<string>>> = {
  python: ["flask", "fastapi", "django"],
  typescript: ["effect", "express", "fastify"]
}
export const OWNERS: Readonly<Record<string, ReadonlyArray<string>>> = {
  effect: ["effect", "examples"],
  modelcontextprotocol: ["typescript-sdk", "inspector"]
}

export interface CompletionSdkV2Server {
  readonly url: string
  readonly requests: ReadonlyArray<WebRequestRecord>
  /** The `context.arguments` each completion callback received, in order. */
  readonly contexts: () => ReadonlyArray<Readonly<Record<string, string>> | undefined>
  readonly close: () => Promise<void>
}

const starting = (candidates: ReadonlyArray<string>, value: string) => candidates.filter((candidate) => candidate.startsWith(value))

export const startCompletionSdkV2Server = async (answers: "json" | "sse"): Promise<CompletionSdkV2Server> => {
  const contexts: Array<Readonly<Record<string, string>> | undefined> = []
  const record = (context: { arguments?: Record<string, string> } | undefined) =>
    void contexts.push(context?.arguments === undefined ? undefined : { ...context.arguments })

  const makeServer = () => {
    const server = new McpServer({ name: "completion-sdk-v2-peer", version: "2.4.0" })
    server.registerTool("echo", { description: "Echoes text", inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
      content: [{ type: "text", text }]
    }))
    server.registerPrompt(
      "code_review",
      {
        description: "Reviews code in a language and framework",
        argsSchema: z.object({
          language: completable(z.string(), (value, context) => {
            record(context)
            return starting(LANGUAGES, value)
          }),
          framework: completable(z.string(), (value, context) => {
            record(context)
            const language = context?.arguments?.["language"]
            return starting(language !== undefined && Object.hasOwn(FRAMEWORKS, language) ? FRAMEWORKS[language]! : [], value)
          })
        })
      },
      ({ framework, language }) => ({
        messages: [{ role: "user", content: { type: "text", text: `Review this ${language} code (${framework})` } }]
      })
    )
    server.registerResource(
      "repository",
      new ResourceTemplate("repo://{owner}/{repo}", {
        list: undefined,
        complete: {
          owner: (value, context) => {
            record(context)
            return starting(Object.keys(OWNERS), value)
          },
          repo: (value, context) => {
            record(context)
            const owner = context?.arguments?.["owner"]
            return starting(owner !== undefined && Object.hasOwn(OWNERS, owner) ? OWNERS[owner]! : [], value)
          }
        }
      }),
      { description: "A repository", mimeType: "text/plain" },
      (uri, { owner, repo }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `${String(owner)}/${String(repo)}` }] })
    )
    return server
  }

  // `responseMode: "json"` makes the SDK warn once that it drops notifications before a result;
  // these handlers send none.
  const warn = console.warn
  console.warn = (...args: Array<unknown>) => {
    if (typeof args[0] === "string" && args[0].startsWith("responseMode: 'json' drops")) return
    warn(...args)
  }
  let handler: ReturnType<typeof createMcpHandler>
  try {
    handler = createMcpHandler(() => makeServer(), { responseMode: answers })
  } finally {
    console.warn = warn
  }
  const web = await serveWebHandler((request) => handler.fetch(request))
  return {
    url: `http://127.0.0.1:${web.port}/mcp`,
    requests: web.requests,
    contexts: () => [...contexts],
    close: () => web.close(() => handler.close())
  }
}
