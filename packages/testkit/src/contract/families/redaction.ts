/**
 * Redaction: a connection given secrets (header values, URL userinfo and query, a child's
 * environment) sends them where they belong and never shows them. Whatever fault ends a
 * discovery or a call, every public view of the failure (docs/DESIGN.md, "Errors": `message`,
 * `toString()`, `JSON.stringify`, the public fields) holds no secret, no URL, no header and no
 * body; the original cause is never enumerable; a server's refusal text is sanitized; and the
 * connection's records (docs/DESIGN.md, "Observation") are as clean. Through the Effect API and
 * the Promise API alike.
 *
 * Axes: none beyond the server row. Every public view is built from the error's typed fields
 * alone (docs/DESIGN.md, "Errors"), never from an HTTP client's or runtime's own message, so
 * neither can change what a view shows; the secrets' delivery is the client's request building.
 *
 * Live deadlines still waited for: a stalled call (1 s, after a discovery with nothing to wait
 * for) and a stalled Promise-API connect (1 s over HTTP, 5 s on stdio, where the child's start-up
 * counts): the Promise API runs the client on its own runtime, out of the TestClock's reach. The
 * Effect API's stalled discovery is reached under the TestClock.
 */
import { inspect } from "node:util"
import { Effect } from "effect"
import { check, ContractFailure, failureOf, rejectionOf, summary } from "../assert.js"
import { CANARIES, CANARY_ENV, echoingRefusal, FORBIDDEN } from "../canaries.js"
import { type Connection, forCallSite } from "../client.js"
import { expectedFailure } from "../expectations.js"
import type { ContractFault, Site } from "../faults.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"
import { pastVirtualDeadline, underTestClock } from "../virtualTime.js"

const CEILING = 4_000

/**
 * A refusal whose message and data echo every canary and a URL of the row's kind with the
 * canaries in it (`echoingRefusal`). The fault is scripted before the server listens, so its
 * port is not known yet; redaction does not depend on it (the userinfo and query are the
 * secrets, and every URL is removed from a peer's text).
 */
export const echoingRefusalFault = <R>(row: Row<R>): ContractFault => {
  const refusal = echoingRefusal(row.transport === "legacy-sse" ? "http://127.0.0.1:3000/sse" : "http://127.0.0.1:3000/mcp")
  return { kind: "refusal", code: refusal.code, message: refusal.message, data: refusal.data }
}

/** The shared faults this family injects (those the row supports), each in both phases. */
const faults = <R>(row: Row<R>): ReadonlyArray<readonly [string, ContractFault]> => {
  const all: ReadonlyArray<readonly [string, ContractFault]> = [
    ["a refusal echoing every secret", echoingRefusalFault(row)],
    ["a stall", { kind: "stall" }],
    ["an answer one byte over the ceiling", { kind: "exact-size", bytes: CEILING + 1 }],
    ["a close mid-answer", { kind: "close-mid-answer" }],
    ["a TCP reset mid-answer", { kind: "reset-mid-answer" }],
    ["an answer with a wrong id", { kind: "wrong-id" }]
  ]
  return all.filter(([, fault]) => row.supports(fault.kind))
}

/**
 * A 1 s deadline where the deadline is what ends the request; elsewhere one no loaded machine
 * reaches, so only the fault ends it. Where the deadline ends a discovery, the Effect API reaches
 * it under the TestClock once tools/list arrived; the Promise API runs the client on its own
 * runtime (live clock), so a stdio child's start-up counts there: the budget is generous (no
 * case here asserts the stage, and the child must have started to show its environment).
 */
const DEADLINE_MS = 1_000
const LIVE_DISCOVERY_DEADLINE_MS = { stdio: 5_000, http: 1_000 } as const
const policyFor = (tag: string, timeout = DEADLINE_MS) => ({ timeout: tag === "DeadlineExceeded" ? timeout : 20_000, maxBytes: CEILING })

/** How a failure message names a forbidden string: canaries by their role, never their value. */
export const label = (forbidden: string): string => {
  const role = Object.entries(CANARIES).find(([, value]) => value === forbidden)
  return role === undefined ? JSON.stringify(forbidden) : `the ${role[0]} canary`
}

/**
 * Every field an error may carry (docs/DESIGN.md, "Errors": typed and finite). The testkit does
 * not depend on the client: the client's unit tests compare this list with its Schema's.
 */
export const PUBLIC_FIELDS = new Set([
  "_tag",
  "stage",
  "phase",
  "limits",
  "observedBytes",
  "status",
  "code",
  "remoteMessage",
  "option",
  "reason",
  "limit",
  "capability",
  "exitCode",
  "authorizationStep",
  "oauthError",
  "attempts",
  "server",
  "outcome",
  "retryable"
])

/**
 * The texts of a failure a user (or a logger, or the CLI) can see without reaching for its
 * in-process `cause`.
 */
const publicViews = (error: object): ReadonlyArray<readonly [string, string]> => {
  const e = error as Record<string, unknown>
  return [
    ["String(e)", String(error)],
    ["e.message", String(e["message"])],
    ["e.toString()", error.toString()],
    ["e.name", String(e["name"])],
    ["JSON.stringify(e)", JSON.stringify(error)],
    ["JSON.stringify({ ...e })", JSON.stringify({ ...e })],
    // What console.log and most loggers print; the stack's frames (file paths) are left out.
    ["util.inspect(e)", inspect(error, { depth: 8 }).split("\n").filter((line) => !/^\s+at /.test(line)).join("\n")],
    ...Object.entries(e).map(([key, value]): readonly [string, string] => [`JSON.stringify(e.${key})`, `${key} ${JSON.stringify(value)}`])
  ]
}

/**
 * What a server may write in a refusal that this row's client was never told is secret: a
 * header name in prose, and the canaries of the other transports (an HTTP connection has no
 * environment secret; a child has no header, URL or query). `remoteMessage` is the server's
 * text with the *configured* secrets redacted and URLs removed (docs/DESIGN.md, "Errors"): these
 * may stay in it, and only in it.
 */
const unknowable = <R>(row: Row<R>): ReadonlySet<string> =>
  new Set(
    row.transport === "stdio"
      ? [CANARIES.header, CANARIES.user, CANARIES.password, CANARIES.query, "Bearer", "x-api-key"]
      : [CANARIES.env, "x-api-key"]
  )

/** `text` with every occurrence of `part` (and of its JSON-escaped form) taken out. */
const without = (text: string, part: string | undefined): string =>
  part === undefined || part.length === 0
    ? text
    : text.split(part).join("").split(JSON.stringify(part).slice(1, -1)).join("")

/** Every public view of `error` is free of FORBIDDEN; its cause and stack are not enumerable. */
export const checkClean = <R>(row: Row<R>, error: unknown, what: string): void => {
  check(error !== null && typeof error === "object", `${what}: the failure is not an object (${typeof error})`)
  const e = error as Record<string, unknown>
  const keys = Object.keys(e)
  check(!keys.includes("cause"), `${what}: "cause" is enumerable (${summary(error)})`)
  check(!keys.includes("stack"), `${what}: "stack" is enumerable (${summary(error)})`)
  const extra = keys.filter((key) => !PUBLIC_FIELDS.has(key))
  check(extra.length === 0, `${what}: fields beyond the public ones: ${extra.join(", ")} (${summary(error)})`)
  const remoteMessage = typeof e["remoteMessage"] === "string" ? e["remoteMessage"] : undefined
  for (const [view, text] of publicViews(error as object)) {
    // The server's own (sanitized) text is judged on its own below.
    const ours = without(text, remoteMessage)
    for (const forbidden of FORBIDDEN) {
      check(!ours.includes(forbidden), `${what}: ${view} contains ${label(forbidden)} (${summary(error)})`)
    }
  }
  if (remoteMessage !== undefined) {
    const mayStay = unknowable(row)
    for (const forbidden of FORBIDDEN) {
      if (mayStay.has(forbidden)) continue
      check(!remoteMessage.includes(forbidden), `${what}: remoteMessage contains ${label(forbidden)} (${summary(error)})`)
    }
  }
}

/** A refusal that echoed the secrets: its `remoteMessage` shows where they were. */
const checkSanitized = (error: unknown, what: string): void => {
  const remoteMessage = (error as { readonly remoteMessage?: unknown }).remoteMessage
  check(typeof remoteMessage === "string", `${what}: a refusal without remoteMessage (${summary(error)})`)
  const text = remoteMessage as string
  check(text.includes("[redacted]"), `${what}: remoteMessage shows no [redacted] where the secrets were`)
  check(text.includes("[url]"), `${what}: remoteMessage shows no [url] where the URL was`)
}

/** The connection's records (discovery stages, operations) are as clean as its failures. */
const checkRecords = (discovery: ReadonlyArray<unknown>, observations: ReadonlyArray<unknown>, what: string): void => {
  const views: ReadonlyArray<readonly [string, string]> = [
    ["connection.discovery", JSON.stringify(discovery)],
    ["connection.observations", JSON.stringify(observations)]
  ]
  for (const [view, text] of views) {
    for (const forbidden of FORBIDDEN) check(!text.includes(forbidden), `${what}: ${view} contains ${label(forbidden)}`)
  }
  check(discovery.length > 0, `${what}: connection.discovery is empty`)
  check(observations.length > 0, `${what}: connection.observations has no record of the failed call`)
}

/**
 * The secrets did reach the server, where they belong: the header values on the requests, the
 * query token in the URL. The userinfo never travels as such (a given `Authorization` wins over
 * it, docs/GUIDE.md "Decisions"). A stdio child was started with the environment secret (the row reads
 * the child's environment as the system shows it).
 */
const checkDelivered = <R>(server: Peer<R>, what: string): void => {
  const received = server.receivedSecrets()
  if (server.row.transport === "stdio") {
    const entry = `${Object.keys(CANARY_ENV)[0]}=${CANARIES.env}`
    check(received.includes(entry), `${what}: the child was not started with the environment secret (its environment shows ${received.length} canary entries)`)
    return
  }
  check(received.includes(`Bearer ${CANARIES.header}`), `${what}: the server never received the Authorization header`)
  check(received.includes(CANARIES.header), `${what}: the server never received the X-Api-Key header`)
  check(received.some((value) => value.includes(`token=${CANARIES.query}`)), `${what}: no request URL carried the query token`)
  check(!received.some((value) => value.includes(CANARIES.password) || value.includes(CANARIES.user)), `${what}: the URL userinfo travelled as such`)
  check(!received.some((value) => value.startsWith("Basic ")), `${what}: the userinfo replaced the given Authorization header`)
}

/**
 * The failure is the one the fault makes (so the case proves what it names): its tag, phase and
 * code. The full table is the no-replay family's to check.
 */
const checkKind = <R>(row: Row<R>, site: Site, fault: ContractFault, error: unknown, what: string): void => {
  const expected = expectedFailure(row, site, fault)
  const e = error as Record<string, unknown>
  if (e["_tag"] !== expected._tag || e["phase"] !== expected.phase || (expected.code !== undefined && e["code"] !== expected.code)) {
    throw new ContractFailure(`${what}: expected ${expected._tag} in phase ${expected.phase}, got ${summary(error)}`)
  }
  if (expected._tag === "RemoteRefusal") checkSanitized(error, what)
}

const effectCase = <R>(row: Row<R>, site: Site, name: string, fault: ContractFault): CaseSpec => ({
  name: `Effect API: a ${site === "discovery" ? "discovery" : "call"} that meets ${name} shows no secret`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site, fault }], canaries: true })
      const policy = policyFor(expectedFailure(row, site, fault)._tag)
      let error: unknown
      let connection: Connection | undefined
      if (site === "discovery") {
        error = policy.timeout === DEADLINE_MS
          ? yield* failureOf(underTestClock(Effect.flatten(pastVirtualDeadline(server, "discovery", server.connect(policy), DEADLINE_MS))))
          : yield* failureOf(server.connect(policy))
      } else {
        connection = yield* server.connect(forCallSite(policy))
        error = yield* failureOf(connection.callTool("increment"))
      }
      const what = `${site} failure`
      checkKind(row, site, fault, error, what)
      checkClean(row, error, what)
      if (connection !== undefined) checkRecords(connection.discovery, yield* connection.observations, what)
      checkDelivered(server, what)
    }))
})

const promiseCase = <R>(row: Row<R>, site: Site, name: string, fault: ContractFault): CaseSpec => ({
  name: `Promise API: a ${site === "discovery" ? "connect" : "callTool"} that meets ${name} rejects with no secret`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site, fault }], canaries: true })
      const tag = expectedFailure(row, site, fault)._tag
      const policy = policyFor(tag)
      const what = `${site === "discovery" ? "connect" : "callTool"} rejection`
      if (site === "discovery") {
        const discoveryPolicy = policyFor(tag, LIVE_DISCOVERY_DEADLINE_MS[row.transport === "stdio" ? "stdio" : "http"])
        const error = yield* Effect.promise(() => rejectionOf(server.connectPromise({ policy: discoveryPolicy })))
        checkKind(row, site, fault, error, what)
        checkClean(row, error, what)
      } else {
        const connection = yield* Effect.acquireRelease(
          Effect.promise(() => server.connectPromise({ policy: forCallSite(policy) })),
          (c) => Effect.promise(() => c.close())
        )
        const error = yield* Effect.promise(() => rejectionOf(connection.callTool("increment")))
        checkKind(row, site, fault, error, what)
        checkClean(row, error, what)
        checkRecords(connection.effect.discovery, yield* connection.effect.observations, what)
      }
      checkDelivered(server, what)
    }))
})

export const redaction: Family = {
  name: "redaction",
  dependsOn: [],
  promise:
    "every shared fault, in both phases, through both APIs: no secret, URL, header or body in any public view of the failure or the connection's records, a refusal's text sanitized, and the secrets delivered where they belong",
  cases: (row) =>
    faults(row).flatMap(([name, fault]) =>
      (["discovery", "call"] as const).flatMap((site) => [
        effectCase(row, site, name, fault),
        promiseCase(row, site, name, fault)
      ])
    )
}
