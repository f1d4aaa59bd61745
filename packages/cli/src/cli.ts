/**
 * The commands, with @effect/cli: `tools`, `call`, `resources`, `templates`, `read`, `prompts`,
 * `prompt`, `complete`, `skills`, `skill`, `discover`, `ping`, `watch`, `tasks`, `task`, `types`, `login`, `logout`, `servers` and `demo`, each
 * declared once (command.ts),
 * their flags taken from the table (flags.ts). A handler resolves its target, budgets and auth
 * settings (no I/O until all are valid), connects in its own scope, runs its operation, and
 * leaves what to print and the exit code in the run state; the entry point prints them.
 * OAuth: auth.ts and login.ts; a tool call: call.ts.
 */
import * as Command from "@effect/cli/Command"
import type { McpSchema } from "@phasebound/client"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { callTool, parseCall } from "./call.js"
import { callCatalog, listCatalog } from "./catalog.js"
import { command, connectingCommand, httpTarget, operation, target, type Use } from "./command.js"
import { parseComplete, renderCompletion } from "./complete.js"
import { runDemo } from "./demo.js"
import { flag } from "./flags.js"
import { parsePromptArguments } from "./jsonArguments.js"
import { login, logout } from "./login.js"
import {
  renderDemo,
  renderDiscover,
  renderPing,
  renderPrompt,
  renderPrompts,
  renderRead,
  renderResources,
  renderTemplates,
  renderTools
} from "./output.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"
import { parseWatch, watch } from "./watch.js"
import { listTasks, parseTask, useTask } from "./tasks.js"
import { runTypes } from "./types.js"
import { readSkill, renderSkill, renderSkills } from "./skills.js"
import { listServers, renderServers } from "./servers.js"

export const version = "0.1.0"

export const makeCommand = (ctx: RunContext) => {
  const subcommands = [
    connectingCommand(ctx, {
      name: "tools",
      description: "discover a server and list its tools (--catalog: the merged tools of every server of the config file)",
      use: (connection, { machine }) => Effect.succeed(renderTools(connection.tools, machine)),
      catalog: ({ flags }) => listCatalog(ctx, flags)
    }),
    connectingCommand(ctx, {
      name: "call",
      description: "discover a server, then call one tool once (never retried); on a terminal, its progress as a bar on stderr",
      then: { name: "tool", description: "the tool's name" },
      parse: parseCall,
      use: callTool(ctx),
      catalog: (use) => callCatalog(ctx, use)
    }),
    connectingCommand(ctx, {
      name: "resources",
      description: "discover a server, then list its resources (every page of resources/list, under the call budget)",
      use: operation(ctx, "list-resources", (connection) => connection.listResources(), renderResources)
    }),
    connectingCommand(ctx, {
      name: "templates",
      description: "discover a server, then list its resource templates (every page of resources/templates/list, under the call budget)",
      use: operation(ctx, "list-resource-templates", (connection) => connection.listResourceTemplates(), renderTemplates)
    }),
    connectingCommand(ctx, {
      name: "read",
      description:
        "discover a server, then read one resource (resources/read, under the call budget): text as is, a blob as <N bytes, mimeType>; JSON: the contents, blobs in base64",
      then: { name: "uri", description: "the resource's URI" },
      use: operation(ctx, "read-resource", (connection, { rest }) => connection.readResource(rest[0]!), renderRead)
    }),
    connectingCommand(ctx, {
      name: "prompts",
      description: "discover a server, then list its prompts and the arguments they take (every page of prompts/list, under the call budget)",
      use: operation(ctx, "list-prompts", (connection) => connection.listPrompts(), renderPrompts)
    }),
    connectingCommand(ctx, {
      name: "prompt",
      description: "discover a server, then get one prompt, its arguments filled in (prompts/get, under the call budget)",
      then: { name: "prompt", description: "the prompt's name" },
      parse: (flags) => parsePromptArguments(Option.getOrUndefined(flags.args)),
      use: operation(
        ctx,
        "get-prompt",
        (connection, { input, rest }: Use<Record<string, string>>) => connection.getPrompt(rest[0]!, input),
        renderPrompt
      )
    }),
    connectingCommand(ctx, {
      name: "complete",
      description:
        "discover a server, then ask it for suggestions for one argument of a prompt (--prompt) or a resource template (--resource) (completion/complete, under the call budget; a server that did not declare completions is not asked)",
      parse: parseComplete,
      use: operation(
        ctx,
        "complete",
        (connection, { input }: Use<McpSchema.CompleteRequest>) => connection.complete(input),
        renderCompletion
      )
    }),
    connectingCommand(ctx, {
      name: "skills",
      description: "discover a server, then list its skills (the skills extension: every page of skills/list, under the call budget; no file read)",
      use: operation(ctx, "list-skills", (connection) => connection.listSkills(), renderSkills)
    }),
    connectingCommand(ctx, {
      name: "skill",
      description: "discover a server, then read one skill's SKILL.md (by its name or URI), verified against its entry: size, sha256 digest, frontmatter",
      then: { name: "skill", description: "the skill's name (its frontmatter's) or the URI of its SKILL.md" },
      use: operation(ctx, "read-skill", (connection, { rest }) => readSkill(connection, rest[0]!), renderSkill)
    }),
    connectingCommand(ctx, {
      name: "discover",
      description: "discover a server: server info, revision, transport, per-stage timings and bytes",
      use: (connection, { machine }) => Effect.succeed(renderDiscover(connection, machine))
    }),
    connectingCommand(ctx, {
      name: "ping",
      description: "discover a server, then check it answers (ping; server/discover in 2026-07-28) under its own small budget",
      use: (connection, { machine }) => Effect.map(connection.ping, (ms) => renderPing(ms, connection, machine))
    }),
    connectingCommand(ctx, {
      name: "watch",
      description:
        "discover a server, subscribe to each --resource, then print one line per event (resource updates; with --lists, list changes) until interrupted (Ctrl-C: exit 0)",
      parse: parseWatch,
      use: watch(ctx)
    }),
    connectingCommand(ctx, {
      name: "tasks",
      description: "discover a server, then list its tasks (every page of tasks/list, 2025-11-25; under the call budget)",
      use: listTasks(ctx)
    }),
    connectingCommand(ctx, {
      name: "task",
      description:
        "discover a server, then show one task (tasks/get); --wait: wait for its end and print its result as call does (under --task-timeout, never calling the tool again); --cancel: ask the server to cancel it",
      then: { name: "task", description: "the task's id (as call --task printed it)" },
      parse: parseTask,
      use: useTask(ctx)
    }),
    command({
      name: "types",
      description:
        "discover a server, then write its typed tools: a TypeScript module with an Effect Schema of each tool's input and output, their types, and a helper that calls the tool through callToolDecoded (--out file.ts, else stdout; --all-servers: every server of the config file)",
      positionals: target,
      withoutPositionals: (flags) => flags.allServers,
      run: (flags, { target }) => runTypes(ctx, flags, target)
    }),
    command({
      name: "login",
      description:
        "authorize phasebound with an HTTP server's OAuth authorization server (prints the URL and opens a browser, receives the redirect on 127.0.0.1) and keep the tokens in the token file for tools, call and discover",
      positionals: httpTarget("an HTTP server: a URL (http, https) or a server name of the config file"),
      run: (flags, { target }) => login(ctx, flags, target)
    }),
    command({
      name: "logout",
      description: "forget the tokens stored for an HTTP server (the entry of its URL and client id in the token file; no network)",
      positionals: httpTarget("an HTTP server: a URL or a server name of the config file"),
      // Its help lists the flags that name the stored entry before the output flags.
      sections: ["target", "auth", "output"],
      run: (flags, { target }) => logout(ctx, flags, target)
    }),
    command({
      name: "servers",
      description:
        "list the servers the config files define (--config, else the search order: project files, then user files): where each was found and how it would be started, secrets masked; nothing is started",
      run: (flags) =>
        Effect.gen(function*() {
          const listing = yield* listServers(Option.getOrUndefined(flags.config), Option.getOrUndefined(flags.format), (hint) => {
            ctx.state.hint = hint
          })
          ctx.state.stdout = renderServers(listing, ctx.machine(flags.json))
        })
    }),
    command({
      name: "demo",
      description: "a testkit MCP server on loopback and a real session against it",
      run: (flags) =>
        Effect.gen(function*() {
          ctx.state.position = { stage: "connect", phase: "discovery", limits: ctx.state.position.limits }
          ctx.state.stdout = renderDemo(yield* runDemo, ctx.machine(flags.json))
        })
    })
  ] as const

  // Without a command there is nothing to do: a usage error (`--help` shows the commands).
  return Command.make("phasebound", {}, () => Effect.fail(invalidOption("command"))).pipe(
    Command.withDescription(
      `an MCP client with phase budgets and one parseable error record. OAuth servers: \`phasebound login <target>\` once (tokens kept in the token file: ${
        flag("tokenFile")
      }, else $PHASEBOUND_TOKEN_FILE, else the user's config directory), then every command that talks to that server uses them; a 401 that needs a user is Unauthorized (exit 3). Services: ${
        flag("authGrant")
      } client_credentials, no login`
    ),
    Command.withSubcommands(subcommands)
  )
}

export const runCli = (ctx: RunContext) => Command.run(makeCommand(ctx), { name: "phasebound", version })
