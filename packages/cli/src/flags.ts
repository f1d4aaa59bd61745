/**
 * Every flag of the CLI, once: its name, its kind, its help text, the commands that take it and,
 * for the budget and OAuth flags, the client option it becomes. The @effect/cli options of each
 * command, the values a handler receives and the names a usage record may carry
 * (bin.ts) are all read from this table; code elsewhere names a flag with `flag(key)`.
 *
 * A command's options appear in its help in table order, section by section (`sections`).
 */
import * as Options from "@effect/cli/Options"
import type * as Authorization from "@phasebound/client/Authorization"
import * as Option from "effect/Option"

export type CommandName =
  | "tools"
  | "call"
  | "resources"
  | "templates"
  | "read"
  | "prompts"
  | "prompt"
  | "skills"
  | "skill"
  | "discover"
  | "ping"
  | "watch"
  | "login"
  | "logout"
  | "demo"
  | "complete"
  | "tasks"
  | "task"
  | "servers"
  | "types"

/** `text`: optional, once; `repeated`: zero or more times; `boolean`: present or not. */
export type FlagKind = "text" | "repeated" | "boolean"

/** Where a flag sits in a command's help: the target and its budgets, the output, OAuth, `login`'s own, the operation's. */
export type Section = "target" | "output" | "auth" | "login" | "operation"

/** A budget flag's place in `PhasePolicy.Options` (`releaseTimeout`: the whole release, split in steps by cli.ts). */
export type PolicyField =
  | "timeout"
  | "maxBytes"
  | "discovery.timeout"
  | "discovery.maxBytes"
  | "call.timeout"
  | "call.maxBytes"
  | "releaseTimeout"
  | "task.timeout"

export interface FlagSpec {
  /** The name without its dashes. */
  readonly name: string
  readonly kind: FlagKind
  readonly section: Section
  readonly commands: ReadonlyArray<CommandName>
  /** The help text, or one per command when it differs between them. */
  readonly description: string | Readonly<Partial<Record<CommandName, string>>>
  /** A budget flag: the policy option its parsed value becomes. */
  readonly policy?: PolicyField
  /** An OAuth flag: the `Authorization.Options` field it sets (problems of that field are named by this flag). */
  readonly auth?: keyof Authorization.Options
}

/** The commands that connect to a server (HTTP or stdio) and run one operation on it. */
export const connectingCommands = [
  "tools",
  "call",
  "resources",
  "templates",
  "read",
  "prompts",
  "prompt",
  "skills",
  "skill",
  "discover",
  "ping",
  "complete",
  "watch",
  "tasks",
  "task",
  "types"
] as const satisfies ReadonlyArray<CommandName>

const connecting = connectingCommands
const http = [...connecting, "login"] as const
const named = [...http, "logout"] as const
const configured = [...named, "servers"] as const
const all = [...configured, "demo"] as const

export const flagTable = {
  stdio: {
    name: "stdio",
    kind: "text",
    section: "target",
    commands: connecting,
    description: "run the server as a child process: 'command args...' (split like a shell would, no shell run)"
  },
  config: {
    name: "config",
    kind: "text",
    section: "target",
    commands: configured,
    description:
      "config file for server names: mcpServers (.mcp.json, Cursor, Claude Desktop, Windsurf), VS Code mcp.json or settings.json, Codex config.toml, server.json (default: the search order, project files then user files)"
  },
  format: {
    name: "format",
    kind: "text",
    section: "target",
    commands: configured,
    description:
      "--config's format instead of detecting it: mcp-servers | claude-code | claude-desktop | cursor | vscode | vscode-settings | windsurf | codex | server-json"
  },
  catalog: {
    name: "catalog",
    kind: "boolean",
    section: "target",
    commands: ["tools", "call"],
    description: {
      tools:
        "list the merged catalog of every server of the config file instead of one target: catalog names (server__tool by default; the entries' prefix, allowTools, blockTools), their servers, conflicts and rejected names",
      call:
        "call a tool of the config file's merged catalog by its catalog name (server__tool by default) instead of naming a target: routed to its server; a blocked, conflicted or unknown name is refused before anything is sent"
    }
  },
  header: {
    name: "header",
    kind: "repeated",
    section: "target",
    commands: http,
    description: "'Name: value' sent with every HTTP request; ${VAR} reads the environment (repeatable)"
  },
  // Text, checked in cli.ts: a bad value is then an InvalidOption naming --transport.
  transport: {
    name: "transport",
    kind: "text",
    section: "target",
    commands: http,
    description: "auto | streamable-http | sse (default auto: Streamable HTTP, then legacy HTTP+SSE)"
  },
  revision: {
    name: "revision",
    kind: "repeated",
    section: "target",
    commands: http,
    description: "a protocol revision the client may speak, e.g. 2026-07-28 or 2025-11-25 (repeatable; default all)"
  },
  timeout: {
    name: "timeout",
    kind: "text",
    section: "target",
    commands: http,
    description: "baseline deadline of each phase (500ms, 30s, 2m; default 60s)",
    policy: "timeout"
  },
  maxBytes: {
    name: "max-bytes",
    kind: "text",
    section: "target",
    commands: http,
    description: "baseline byte ceiling of each response (1048576, 64KiB, 16MiB; default 16MiB)",
    policy: "maxBytes"
  },
  discoveryTimeout: {
    name: "discovery-timeout",
    kind: "text",
    section: "target",
    commands: http,
    description: "deadline of the whole discovery",
    policy: "discovery.timeout"
  },
  discoveryMaxBytes: {
    name: "discovery-max-bytes",
    kind: "text",
    section: "target",
    commands: http,
    description: "byte ceiling of each discovery response",
    policy: "discovery.maxBytes"
  },
  callTimeout: {
    name: "call-timeout",
    kind: "text",
    section: "target",
    commands: http,
    description: "deadline of the operation after discovery (a tool call, a listing, a read, a prompt)",
    policy: "call.timeout"
  },
  callMaxBytes: {
    name: "call-max-bytes",
    kind: "text",
    section: "target",
    commands: http,
    description: "byte ceiling of that operation's response",
    policy: "call.maxBytes"
  },
  releaseTimeout: {
    name: "release-timeout",
    kind: "text",
    section: "target",
    commands: http,
    description:
      "bound of the release after the run or a failure (closing a session; a stdio server: stdin closed, SIGTERM, SIGKILL, a third each; default 6s)",
    policy: "releaseTimeout"
  },
  env: {
    name: "env",
    kind: "repeated",
    section: "target",
    commands: connecting,
    description: "KEY=VALUE added to a --stdio server's environment; ${VAR} reads ours; never printed (repeatable)"
  },
  envPass: {
    name: "env-pass",
    kind: "repeated",
    section: "target",
    commands: connecting,
    description: "NAME: pass this variable of our environment, when set, to a --stdio server (repeatable)"
  },
  serverStderr: {
    name: "server-stderr",
    kind: "text",
    section: "target",
    commands: connecting,
    description: "a stdio server's stderr: tail (default: kept, its last lines shown on a terminal when the run fails) | inherit (straight to ours) | drop"
  },
  json: {
    name: "json",
    kind: "boolean",
    section: "output",
    commands: all,
    description: "machine output (JSON) even on a TTY"
  },
  debug: {
    name: "debug",
    kind: "boolean",
    section: "output",
    commands: all,
    description: "on an internal error, print its scrubbed cause on stderr after the record"
  },
  authGrant: {
    name: "auth-grant",
    kind: "text",
    section: "auth",
    commands: http,
    description:
      "OAuth grant when the server asks for it (a 401): authorization_code (default; a user authorizes once with `phasebound login`) | client_credentials (a service: --auth-client-id and --auth-client-secret or --auth-private-key-file; no login needed)",
    auth: "grant"
  },
  authClientId: {
    name: "auth-client-id",
    kind: "text",
    section: "auth",
    commands: named,
    description: "OAuth client id registered with the authorization server (default: --auth-client-metadata-url where supported, else dynamic registration)",
    auth: "clientId"
  },
  authClientSecret: {
    name: "auth-client-secret",
    kind: "text",
    section: "auth",
    commands: http,
    description: "OAuth client secret; ${VAR} reads the environment (never printed)",
    auth: "clientSecret"
  },
  authClientMetadataUrl: {
    name: "auth-client-metadata-url",
    kind: "text",
    section: "auth",
    commands: named,
    description: "https URL of this client's Client ID Metadata Document, used as its client id where the authorization server supports them",
    auth: "clientMetadataUrl"
  },
  authPrivateKeyFile: {
    name: "auth-private-key-file",
    kind: "text",
    section: "auth",
    commands: http,
    description: "PKCS#8 PEM file of a private key: private_key_jwt client authentication (with --auth-client-id), instead of a secret (never printed)",
    auth: "privateKey"
  },
  authPrivateKeyAlg: {
    name: "auth-private-key-alg",
    kind: "text",
    section: "auth",
    commands: http,
    description: "RS256 | ES256: the key's signing algorithm (default RS256)",
    auth: "privateKeyAlgorithm"
  },
  authScope: {
    name: "auth-scope",
    kind: "text",
    section: "auth",
    commands: http,
    description:
      "'scope1 scope2': the scopes to ask for (default: the server's challenge, else its metadata); with client_credentials, the most the server may make the CLI ask for",
    auth: "scope"
  },
  authIssuer: {
    name: "auth-issuer",
    kind: "text",
    section: "auth",
    commands: http,
    description:
      "issuer of the only authorization server to use, exactly as its metadata names it (https URL): the client id's secret or key is never sent to another one (without it: the first one used, recorded in the token file)",
    auth: "issuer"
  },
  authAllowPrivateAuthority: {
    name: "auth-allow-private-authority",
    kind: "boolean",
    section: "auth",
    commands: http,
    description:
      "let the server's documents name authorization servers on private, link-local or loopback addresses (an authorization server on a private network); plain http stays refused",
    auth: "allowPrivateAuthority"
  },
  authAllowScopeStepUp: {
    name: "auth-allow-scope-step-up",
    kind: "boolean",
    section: "auth",
    commands: http,
    description: "with client_credentials and --auth-scope: let the server's 403 insufficient_scope widen the scope past it",
    auth: "allowScopeStepUp"
  },
  tokenFile: {
    name: "token-file",
    kind: "text",
    section: "auth",
    commands: named,
    description: "the OAuth token file (default $PHASEBOUND_TOKEN_FILE, else phasebound/tokens.json in the user's config directory); written 0600"
  },
  authRedirectPort: {
    name: "auth-redirect-port",
    kind: "text",
    section: "login",
    commands: ["login"],
    description:
      "port of the 127.0.0.1 redirect listener (default 0: any free port, fine with dynamic registration; a pre-registered client usually needs its registered port)"
  },
  authTimeout: {
    name: "auth-timeout",
    kind: "text",
    section: "login",
    commands: ["login"],
    description: "how long to wait for the browser's redirect (default 5m)"
  },
  args: {
    name: "args",
    kind: "text",
    section: "operation",
    commands: ["call", "prompt"],
    description: {
      call: "the tool's arguments, a JSON object (default {})",
      prompt: "the prompt's arguments, a JSON object of strings (default {})"
    }
  },
  idleTimeout: {
    name: "idle-timeout",
    kind: "text",
    section: "operation",
    commands: ["call"],
    description:
      "fail the call (DeadlineExceeded, reason idle-timeout) when the server reported no progress for this long (500ms, 30s, 2m); --call-timeout stays the cap"
  },
  // Not `--log-level`: @effect/cli reserves that one for Effect's own logger and takes it before
  // any command sees it.
  serverLogLevel: {
    name: "server-log-level",
    kind: "text",
    section: "operation",
    commands: ["call"],
    description:
      "ask the server for its log messages at this level and above during the call (debug, info, notice, warning, error, critical, alert, emergency): added to the output (JSON: logs), never to stderr"
  },
  effectIdentity: {
    name: "effect-identity",
    kind: "text",
    section: "operation",
    commands: ["call"],
    description:
      "the call's effect identity: a key of yours, sent in _meta (io.phasebound/effect-identity), that you give again when you retry the same effect, so a server that honours it can tell a retry from a second effect"
  },
  prompt: {
    name: "prompt",
    kind: "text",
    section: "operation",
    commands: ["complete"],
    description: "complete an argument of this prompt (its name; or --resource)"
  },
  resource: {
    name: "resource",
    kind: "repeated",
    section: "operation",
    commands: ["complete", "watch"],
    description:
      "(complete) the resource template to complete an argument of (its URI template, e.g. 'file:///{path}'; or --prompt); (watch) a resource URI to subscribe to: each of its updates is one event (repeatable; refused when the server does not declare resources.subscribe)"
  },
  argument: {
    name: "argument",
    kind: "text",
    section: "operation",
    commands: ["complete"],
    description: "the name of the argument to complete"
  },
  value: {
    name: "value",
    kind: "text",
    section: "operation",
    commands: ["complete"],
    description: "what has been typed of it so far (default empty: every suggestion)"
  },
  context: {
    name: "context",
    kind: "repeated",
    section: "operation",
    commands: ["complete"],
    description: "NAME=VALUE: a value already chosen for another argument of the same prompt or template (repeatable, one per name)"
  },
  lists: {
    name: "lists",
    kind: "boolean",
    section: "operation",
    commands: ["watch"],
    description: "also print each tools, prompts or resources list change (the default without --resource)"
  },
  task: {
    name: "task",
    kind: "boolean",
    section: "operation",
    commands: ["call"],
    description:
      "call the tool as a task where the server allows it and print the task (its id) without waiting; come back with `phasebound task <target> <id> --wait` (a server that answers at once: its result)"
  },
  wait: {
    name: "wait",
    kind: "boolean",
    section: "operation",
    commands: ["task"],
    description: "wait for the task's end (polling at the server's interval, under --task-timeout) and print its result as call does"
  },
  cancel: {
    name: "cancel",
    kind: "boolean",
    section: "operation",
    commands: ["task"],
    description: "ask the server to cancel the task (cooperative: it may still end otherwise)"
  },
  out: {
    name: "out",
    kind: "text",
    section: "operation",
    commands: ["types"],
    description:
      "write the module to this file (atomically: a temporary file beside it, then renamed) and print what was written; default: the module on stdout"
  },
  allServers: {
    name: "all-servers",
    kind: "boolean",
    section: "operation",
    commands: ["types"],
    description:
      "every server of the config file (--config, default ./.mcp.json), one after the other, in one module: each server's identifiers begin with its name (no <target>)"
  },
  taskTimeout: {
    name: "task-timeout",
    kind: "text",
    section: "operation",
    commands: ["call", "task"],
    description: "deadline of one wait for a task's result (default 10m); a call the server turns into a task stays under --call-timeout",
    policy: "task.timeout"
  }
} as const satisfies Readonly<Record<string, FlagSpec>>

type Table = typeof flagTable

export type FlagKey = keyof Table

type ValueOf<K extends FlagKind> = K extends "boolean" ? boolean : K extends "repeated" ? ReadonlyArray<string> : Option.Option<string>

/** The parsed flags a handler receives: every flag of the table (those its command lacks at their empty value). */
export type Flags = { readonly [K in FlagKey]: ValueOf<Table[K]["kind"]> }

/** The flags given at most once, as text. */
export type TextFlagKey = { [K in FlagKey]: Table[K]["kind"] extends "text" ? K : never }[FlagKey]

/** The flags of one section, as a handler receives them. */
export type SectionFlags<S extends Section> = Pick<Flags, { [K in FlagKey]: Table[K]["section"] extends S ? K : never }[FlagKey]>

/** A flag as the command line and the records write it. */
export type FlagName<K extends FlagKey> = `--${Table[K]["name"]}`

/** A flag as the command line and the records write it: `flag("maxBytes")` is `--max-bytes`. */
export const flag = <K extends FlagKey>(key: K): FlagName<K> => `--${flagTable[key].name}`

const keys = Object.keys(flagTable) as ReadonlyArray<FlagKey>

const spec = (key: FlagKey): FlagSpec => flagTable[key]

/** The keys of one section, in table order. */
export const sectionKeys = (section: Section): ReadonlyArray<FlagKey> => keys.filter((key) => spec(key).section === section)

/** The budget flags, in table order, with the policy option each becomes. */
export const policyFlags: ReadonlyArray<{ readonly key: TextFlagKey; readonly field: PolicyField }> = keys.flatMap((key) => {
  const field = spec(key).policy
  return field === undefined ? [] : [{ key: key as TextFlagKey, field }]
})

/** Every flag as the command line writes it: the names a usage error may put in a record (never a value). */
export const flagNames: ReadonlySet<string> = new Set(keys.map(flag))

/** The order of the sections in a command's help, unless the command gives its own. */
export const defaultSections: ReadonlyArray<Section> = ["target", "output", "auth", "login", "operation"]

const optionOf = (key: FlagKey, command: CommandName): Options.Options<unknown> => {
  const { description, kind, name } = spec(key)
  const text = typeof description === "string" ? description : description[command] ?? ""
  switch (kind) {
    case "boolean":
      return Options.boolean(name).pipe(Options.withDescription(text))
    case "repeated":
      return Options.text(name).pipe(Options.withDescription(text), Options.repeated)
    case "text":
      return Options.text(name).pipe(Options.withDescription(text), Options.optional)
  }
}

/** The @effect/cli options of `command`, keyed as in `Flags`, in help order. */
export const commandOptions = (
  command: CommandName,
  sections: ReadonlyArray<Section> = defaultSections
): Record<string, Options.Options<unknown>> => {
  const options: Record<string, Options.Options<unknown>> = {}
  for (const section of sections) {
    for (const key of sectionKeys(section)) {
      if (spec(key).commands.includes(command)) options[key] = optionOf(key, command)
    }
  }
  return options
}

const emptyValue = (kind: FlagKind): unknown => kind === "boolean" ? false : kind === "repeated" ? [] : Option.none()

/** What @effect/cli parsed for a command, completed with the empty value of every flag it does not take. */
export const completeFlags = (parsed: Readonly<Record<string, unknown>>): Flags => {
  const flags: Record<string, unknown> = {}
  for (const key of keys) flags[key] = key in parsed ? parsed[key] : emptyValue(spec(key).kind)
  return flags as Flags
}
