/**
 * The plain declarations of @phasebound/promise (src/types.ts) held to the client's own types.
 * A type-level check, run by the workspace typecheck (`npm run typecheck`, root tsconfig.json):
 * it fails to compile when they drift apart.
 * - What the package hands out (the MCP values, the connection) is the client's type exactly.
 * - What it takes (the options) has the client's keys, less those that need Effect
 *   (`httpClient`: an Effect Layer), and is accepted by the client (src/index.ts assigns the
 *   client's `connect` to the plain signature, which checks that direction).
 */
import type * as ClientPromise from "@phasebound/client/promise"
import type * as Authorization from "@phasebound/client/Authorization"
import type * as ClientHandlers from "@phasebound/client/ClientHandlers"
import type * as McpClient from "@phasebound/client/McpClient"
import type * as McpSchema from "@phasebound/client/McpSchema"
import type * as McpTask from "@phasebound/client/McpTask"
import type * as McpSkills from "@phasebound/client/McpSkills"
import type * as PhasePolicy from "@phasebound/client/PhasePolicy"
import type * as Duration from "effect/Duration"
import type * as Plain from "../src/types.js"

/** True when A and B are the same type (TypeScript's identity, not only mutual assignability). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
/** Compiles only for `true`. */
type Holds<T extends true> = T
/** The keys of T, each optional or not, as one union. */
type Keys<T> = keyof T
/** What each member of T gives: a method's result, or the property's value. */
type Outputs<T> = { readonly [K in keyof T]: T[K] extends (...args: ReadonlyArray<never>) => infer R ? R : T[K] }

export type Checks = [
  // The values the server sends, as the client decodes them.
  Holds<Equal<Plain.Revision, McpSchema.Revision>>,
  Holds<Equal<Plain.Implementation, McpSchema.Implementation>>,
  Holds<Equal<Plain.Tool, McpSchema.Tool>>,
  Holds<Equal<Plain.CallToolResult, McpSchema.CallToolResult>>,
  Holds<Equal<Plain.Progress, McpSchema.Progress>>,
  Holds<Equal<Plain.LogLevel, McpSchema.LogLevel>>,
  Holds<Equal<Plain.LogMessage, McpSchema.LogMessage>>,
  Holds<Equal<Plain.Resource, McpSchema.Resource>>,
  Holds<Equal<Plain.ResourceTemplate, McpSchema.ResourceTemplate>>,
  Holds<Equal<Plain.ReadResourceResult, McpSchema.ReadResourceResult>>,
  Holds<Equal<Plain.Prompt, McpSchema.Prompt>>,
  Holds<Equal<Plain.GetPromptResult, McpSchema.GetPromptResult>>,
  Holds<Equal<Plain.CompleteResult, McpSchema.CompleteResult>>,
  Holds<Equal<Plain.CompletionReference, McpSchema.CompletionReference>>,
  Holds<Equal<Plain.CompleteRequest, McpSchema.CompleteRequest>>,
  Holds<Equal<Plain.TransportKind, McpClient.TransportKind>>,
  Holds<Equal<Plain.ChangeEvent, McpClient.ChangeEvent>>,
  Holds<Equal<Plain.ResourceUpdate, McpClient.ResourceUpdate>>,
  Holds<Equal<Plain.Skill, McpSkills.Skill>>,
  Holds<Equal<Plain.SkillListing, McpSkills.SkillListing>>,
  Holds<Equal<Plain.SkillFile, McpSkills.SkillFile>>,
  // The connection: every member but the Effect connection underneath, each giving the client's
  // type (what its methods take are options, below).
  Holds<Equal<Keys<Plain.Connection>, Exclude<Keys<ClientPromise.Connection>, "effect">>>,
  // `callToolTask` gives a handle whose methods take options (plain times there, any Duration
  // input in the client): its data is held below, its methods by src/index.ts's assignment.
  Holds<Equal<Omit<Outputs<Plain.Connection>, "callToolTask">, Omit<Outputs<ClientPromise.Connection>, "effect" | "callToolTask">>>,
  Holds<Equal<Keys<Plain.TaskHandle>, Keys<ClientPromise.TaskHandle>>>,
  // Times: Effect's inputs but a Duration value.
  Holds<Equal<Plain.DurationInput, Exclude<Duration.DurationInput, Duration.Duration>>>,
  // The options: the same keys (a new client option must be declared here too).
  Holds<Equal<Keys<Plain.HttpConnectOptions>, Exclude<Keys<ClientPromise.HttpConnectOptions>, "httpClient">>>,
  Holds<Equal<Keys<Plain.StdioConnectOptions>, Keys<ClientPromise.StdioConnectOptions>>>,
  Holds<Equal<Keys<Plain.StdioConnectOptions["stdio"]>, Keys<ClientPromise.StdioConnectOptions["stdio"]>>>,
  Holds<Equal<Keys<Plain.PolicyOptions>, Keys<PhasePolicy.Options>>>,
  Holds<Equal<Keys<Plain.BudgetOptions>, Keys<PhasePolicy.BudgetOptions>>>,
  Holds<Equal<Keys<Plain.AuthOptions>, Keys<ClientPromise.AuthOptions>>>,
  Holds<Equal<Keys<Plain.AuthOptions>, Keys<Authorization.Options> | "authorize">>,
  Holds<Equal<Keys<Plain.Handlers>, Keys<ClientPromise.Handlers>>>,
  Holds<Equal<Keys<Plain.RequestOptions>, Keys<ClientPromise.RequestOptions>>>,
  Holds<Equal<Keys<Plain.CallOptions>, Keys<ClientPromise.CallOptions>>>,
  Holds<Equal<Plain.Handler, ClientPromise.Handler>>,
  Holds<Equal<Plain.UrlElicitation, ClientHandlers.UrlElicitation>>,
  Holds<Equal<Plain.UrlHandler, ClientPromise.UrlHandler>>,
  Holds<Equal<Plain.Task, McpTask.Task>>,
  Holds<Equal<Keys<Plain.TaskCallOptions>, Keys<ClientPromise.TaskCallOptions>>>,
  Holds<Equal<Keys<Plain.WaitOptions>, Keys<ClientPromise.WaitOptions>>>,
  Holds<Equal<Keys<Plain.TaskBudgetOptions>, Keys<PhasePolicy.TaskBudgetOptions>>>
]
