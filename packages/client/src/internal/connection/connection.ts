/**
 * A connection, once its discovery is done: its operations (each in a module of its own, on the
 * one primitive of `core.ts`), the fiber that lists the tools again when they change
 * (`internal/relisting.ts`), and what the current session says of the server.
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Subscribable from "effect/Subscribable"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as McpClient from "../../McpClient.js"
import { relistOnChange } from "../relisting.js"
import * as Secrets from "../secrets.js"
import * as CallTool from "./callTool.js"
import { complete } from "./completion.js"
import * as Core from "./core.js"
import * as Elicitation from "./elicitation.js"
import * as LiveLists from "./liveLists.js"
import { setLogLevel } from "./logLevel.js"
import { ping } from "./ping.js"
import * as Prompts from "./prompts.js"
import * as Resources from "./resources.js"
import { listTools, listToolsWith } from "./tools.js"
import * as Subscriptions from "./subscriptions.js"
import * as Skills from "./skills.js"

export const make = (
  setup: Core.Setup,
  discovery: ReadonlyArray<McpClient.Observation>
): Effect.Effect<McpClient.Connection> =>
  Effect.gen(function*() {
    const core = yield* Core.make(setup)
    const relist = listTools(core)
    // Live tool lists: the connection's own fiber lists the tools again when they change (asking
    // the server, whatever the response cache holds).
    yield* Effect.forkIn(relistOnChange(setup.notifications.toolsChanged, setup.policy.relistDelayMs, relist), setup.scope)
    // Awaited URL elicitations end with the connection.
    yield* Scope.addFinalizer(setup.scope, setup.elicitations.close)
    const current = core.live.current
    // Subscriptions and the live prompt and resource lists (docs/DESIGN.md, "Subscriptions").
    const subscriptions = yield* Subscriptions.make(core)
    const prompts = Prompts.make(core)
    const resources = Resources.make(core)
    const promptList = yield* LiveLists.make(core, prompts.listPrompts(), setup.notifications.promptsChanged)
    const resourceList = yield* LiveLists.make(core, resources.listResources(), setup.notifications.resourcesChanged)
    const connection: McpClient.Connection = {
      get transport() {
        return current().kind
      },
      get protocolVersion() {
        return current().session.protocolVersion
      },
      get serverInfo() {
        return current().session.serverInfo
      },
      get capabilities() {
        return current().session.capabilities
      },
      get instructions() {
        return current().session.instructions
      },
      get tools() {
        return current().listing.tools
      },
      get toolsCacheHint() {
        return current().listing.cacheHint
      },
      toolList: Subscribable.make({ get: SubscriptionRef.get(core.toolList), changes: core.toolList.changes }),
      policy: setup.policy,
      // The secrets array grows as tokens are obtained: read at each call.
      redact: (text) => Secrets.redact(text, setup.secrets ?? []),
      discovery,
      ...CallTool.make(core),
      listTools: relist,
      listToolsWith: listToolsWith(core),
      ...resources,
      ...prompts,
      complete: complete(core),
      ...Skills.make(core),
      setLogLevel: setLogLevel(core),
      logMessages: setup.notifications.logs.stream,
      ...subscriptions,
      promptList,
      resourceList,
      ping: ping(core),
      observations: Effect.sync(core.observations),
      sessions: Effect.sync(core.live.sessions),
      // A server request dropped for want of room to answer it is a dropped frame too.
      diagnostics: Effect.suspend(() =>
        Effect.map(current().transport.diagnostics, (held) => ({ ...held, droppedFrames: held.droppedFrames + setup.droppedRequests() }))
      ),
      logTail: Effect.suspend(() => current().transport.logTail ?? Effect.succeed("")),
      ...Elicitation.make(core)
    }
    // A catalog redacts with the secrets of every server it connected.
    Secrets.registerSecrets(connection, setup.secrets ?? [])
    return connection
  })
