/**
 * The stateless era (revision 2026-07-28), over Streamable HTTP and stdio
 * (docs/DESIGN.md, "The stateless era"):
 *
 * - no handshake and no session: every request carries `_meta` with the revision, the client's
 *   capabilities and its identity; over HTTP also `MCP-Protocol-Version`, `Mcp-Method`,
 *   `Mcp-Name` and the `Mcp-Param-*` headers of the called tool's `x-mcp-header` parameters;
 * - discovery starts with `server/discover`; a refusal `-32022` naming a mutually supported
 *   revision is retried once with it; over stdio the probe waits a bounded time, since a
 *   server of the handshake era may stay silent;
 * - results carry `resultType`: absent or `complete` is final, `input_required` asks for
 *   another round (a new request with a new id, `requestState` echoed exactly), bounded by
 *   `maxInputRounds` inside the request's one deadline; anything else is a protocol violation;
 * - an interrupted request is cancelled by closing its answer stream over HTTP, and by
 *   `notifications/cancelled` over stdio; answers are never resumed;
 * - a server that announces changes (`listChanged` of tools, prompts or resources, or
 *   `resources.subscribe`) is asked for them with `subscriptions/listen`, a request answered
 *   only when the subscription ends (`internal/listen.ts`).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { InvalidOption, LimitExceeded, type McpConnectionError } from "../McpConnectionError.js"
import * as McpSchema from "../McpSchema.js"
import type { Era, Session } from "./era.js"
import type { Exchange, Outgoing, Request, Response } from "./transport/transport.js"
import * as Failures from "./failures.js"
import * as Listen from "./listen.js"
import { encodeHeaderValue, headerParameters, parameterHeaders } from "./mcpHeaders.js"
import { withTasksExtension } from "./taskWire.js"

const decodeDiscover = Schema.decodeUnknownEither(McpSchema.DiscoverResult)
const decodeInputRequired = Schema.decodeUnknownEither(McpSchema.InputRequiredResult)
const decodeImplementation = Schema.decodeUnknownEither(McpSchema.Implementation)

/** The requests a server may answer with `input_required`. */
const multiRoundMethods: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"])

/** The requests whose `Mcp-Name` header mirrors `params.name`, `params.uri` or `params.taskId`. */
const namedBy: Readonly<Record<string, "name" | "uri" | "taskId">> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  // The tasks extension routes a task's requests by its id (docs/DESIGN.md, "Tasks").
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId"
}

/** The longest a stdio probe waits for an answer before taking the server for a handshake one. */
const maxProbeWaitMs = 5_000

const cancelNotice = (id: McpSchema.RequestId): Outgoing => ({
  method: "notifications/cancelled",
  params: { requestId: id, reason: "interrupted" }
})

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The revisions a `-32022` refusal says the server supports (its `data.supported`), in process
 * only; empty when the refusal is anything else.
 */
export const supportedByRefusal = (error: McpConnectionError): ReadonlyArray<string> => {
  if (error.code !== McpSchema.ErrorCode.UnsupportedProtocolVersion) return []
  const data = Failures.wireError(error)?.data
  const supported = isRecord(data) ? data["supported"] : undefined
  return Array.isArray(supported) ? supported.filter((v): v is string => typeof v === "string") : []
}

/** Each listed tool's header declarations, worked out once (at the listing) and kept with it. */
const declarations = new WeakMap<McpSchema.Tool, ReturnType<typeof headerParameters>>()
const declarationsOf = (tool: McpSchema.Tool) => {
  const known = declarations.get(tool)
  if (known !== undefined || declarations.has(tool)) return known
  const found = headerParameters(tool)
  declarations.set(tool, found)
  return found
}

const violation = (exchange: Exchange, response: Response, reason: "invalid-result" | "unknown-result-type") =>
  Failures.protocol(exchange, reason, { observedBytes: response.bytes })

export const era: Era = {
  name: "stateless",
  revisions: McpSchema.statelessRevisions,
  open: (transport, context) =>
    Effect.gen(function*() {
      const { cancelsByClosing, mayIgnoreUnknownRequests, messageHeaders } = transport.capabilities
      // The extensions the client supports are declared with every request (docs/DESIGN.md, "Tasks").
      const capabilities = withTasksExtension(context.capabilities)

      /** One request of the era: `_meta` in the body; over HTTP, the mirrored headers. */
      const build = (
        revision: McpSchema.Revision,
        method: string,
        params: Record<string, unknown> | undefined,
        extraHeaders: Readonly<Record<string, string>> | undefined,
        cancellable: boolean
      ): Request => {
        const callerMeta = isRecord(params?.["_meta"]) ? params["_meta"] : {}
        const logLevel = context.logLevel()
        const body = {
          ...params,
          _meta: {
            ...callerMeta,
            ...(logLevel === undefined ? {} : { [McpSchema.MetaKey.logLevel]: logLevel }),
            [McpSchema.MetaKey.protocolVersion]: revision,
            [McpSchema.MetaKey.clientInfo]: context.clientInfo,
            [McpSchema.MetaKey.clientCapabilities]: capabilities
          }
        }
        const standing = method === "subscriptions/listen" ? { standing: true } : {}
        // Where closing the answer stream is the cancellation, no notice.
        const notice = cancellable && !cancelsByClosing ? { cancelNotice } : {}
        if (!messageHeaders) return { method, params: body, ...notice, ...standing }
        const headers: Record<string, string> = { "mcp-protocol-version": revision, "mcp-method": method, ...extraHeaders }
        const nameField = namedBy[method]
        const name = nameField === undefined ? undefined : params?.[nameField]
        if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name)
        return { method, params: body, headers, ...notice, ...standing }
      }

      // server/discover: the probe, and a second one when -32022 names a mutual revision.
      const discoverExchange = context.exchange("discover")
      const probeWaitMs = Math.min(maxProbeWaitMs, discoverExchange.budget.timeoutMs / 2)
      const probe = (revision: McpSchema.Revision) => {
        const sent = transport.request(build(revision, "server/discover", undefined, undefined, false), discoverExchange)
        // A handshake-era server may never answer a method it does not know.
        return !mayIgnoreUnknownRequests ? sent : Effect.timeoutFail(sent, {
          duration: probeWaitMs,
          onTimeout: () => Failures.protocol(discoverExchange, "missing-response")
        })
      }
      let revision = context.revisions[0]!
      const discovered = yield* probe(revision).pipe(
        Effect.catchAll((error) => {
          // Once only: a server that refuses again (or names nothing mutual) has said its last.
          const mutual = context.revisions.find((r) => supportedByRefusal(error).includes(r))
          if (mutual === undefined) return Effect.fail(error)
          context.record("discover", error.observedBytes ?? 0, error)
          revision = mutual
          return probe(mutual)
        })
      )
      context.record("discover", discovered.bytes)
      const type = discovered.result["resultType"]
      if (type !== undefined && type !== "complete") {
        return yield* Effect.fail(violation(discoverExchange, discovered, "unknown-result-type"))
      }
      const result = decodeDiscover(discovered.result)
      if (Either.isLeft(result)) return yield* Effect.fail(violation(discoverExchange, discovered, "invalid-result"))
      const serverInfo = decodeImplementation(result.right._meta?.[McpSchema.MetaKey.serverInfo])

      /** Sends one request; follows `input_required` rounds up to `maxInputRounds`. */
      const request: Session["request"] = (method, params, exchange, tool) =>
        Effect.suspend(() => {
          let headers: Record<string, string> | undefined
          const declared = messageHeaders && tool !== undefined ? declarationsOf(tool) : undefined
          if (declared !== undefined && declared.length > 0) {
            const args = params?.["arguments"]
            const mirrored = parameterHeaders(declared, isRecord(args) ? args : {})
            if ("parameter" in mirrored) {
              return Effect.fail(
                new InvalidOption({
                  ...Failures.fields(exchange),
                  option: "arguments",
                  reason: "invalid-value",
                  outcome: "not-sent",
                  retryable: false
                })
              )
            }
            headers = mirrored
          }
          const round = (current: Record<string, unknown> | undefined, rounds: number): Effect.Effect<Response, McpConnectionError> =>
            Effect.flatMap(transport.request(build(revision, method, current, headers, true), exchange), (response) => {
              const type = response.result["resultType"]
              // A created task answers a call too (the tasks extension): the connection follows it up.
              if (type === undefined || type === "complete" || (type === "task" && method === "tools/call")) {
                return Effect.succeed(rounds === 0 ? response : { ...response, rounds })
              }
              if (type !== "input_required") return Effect.fail(violation(exchange, response, "unknown-result-type"))
              if (!multiRoundMethods.has(method)) return Effect.fail(violation(exchange, response, "invalid-result"))
              const asked = decodeInputRequired(response.result)
              if (Either.isLeft(asked)) return Effect.fail(violation(exchange, response, "invalid-result"))
              const { inputRequests, requestState } = asked.right
              const requested = Object.entries(inputRequests ?? {})
              if (requested.length === 0 && requestState === undefined) {
                return Effect.fail(violation(exchange, response, "invalid-result"))
              }
              if (rounds >= context.maxInputRounds) {
                return Effect.fail(
                  new LimitExceeded({
                    ...Failures.fields(exchange),
                    limit: "maxInputRounds",
                    observedBytes: response.bytes,
                    outcome: "not-applied",
                    retryable: false
                  })
                )
              }
              // The handlers answer, one input request after the other (a person may be asked).
              const answers = Effect.forEach(
                requested,
                ([key, input]) => Effect.map(context.fulfil(input.method, input.params, exchange), (answer) => [key, answer] as const)
              )
              // The next round is a new request the server asked for: the same params, the
              // answers, and its state echoed exactly (none if it gave none).
              return Effect.flatMap(answers, (entries) =>
                round({
                  ...params,
                  ...(entries.length === 0 ? {} : { inputResponses: Object.fromEntries(entries) }),
                  ...(requestState === undefined ? {} : { requestState })
                }, rounds + 1))
            })
          return round(params, 0)
        })

      // The server announces changes: listen for them while the session lives.
      const announces = Listen.announcesOf(result.right.capabilities)
      let listener: Listen.Listener | undefined
      if (announces.tools || announces.prompts || announces.resources || announces.subscribe) {
        const exchange: Exchange = {
          stage: "discover",
          phase: "session",
          budget: { timeoutMs: discoverExchange.budget.timeoutMs, maxBytes: context.unsolicitedMaxBytes }
        }
        listener = yield* Listen.make({
          subscribe: (params) => request("subscriptions/listen", params, exchange),
          hooks: context.listening,
          announces,
          acknowledgementTimeoutMs: discoverExchange.budget.timeoutMs
        })
      }

      return {
        era: "stateless",
        protocolVersion: revision,
        serverInfo: Either.getOrUndefined(serverInfo),
        capabilities: result.right.capabilities,
        instructions: result.right.instructions,
        request,
        // Where its headers are sent, a tool whose header declarations are invalid cannot be
        // called correctly.
        admits: (tool) => !messageHeaders || declarationsOf(tool) !== undefined,
        listener
      } satisfies Session
    })
}
