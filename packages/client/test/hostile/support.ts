/**
 * The harness of the hostile-server properties: the configured secrets, the rows (era x
 * transport), how a generated answer is served over each transport, how one case runs, and the
 * checks every case must pass. Each check returns the violations it found (an empty list when the
 * case passes), so one case reports every property it breaks at once.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import {
  type HostileAnswer,
  type HostileEra,
  type HostileServer,
  type HostileStdioAnswer,
  type ToolCallArrival
} from "@phasebound/testkit"
import { Cause, Exit, Layer } from "effect"
import { appendFileSync } from "node:fs"
import { McpConnectionError } from "../../src/index.js"
import { type Framing, rawFormOf, SECRET_SLOT, type SecretForm, sseBody, stdioText, withSecret } from "./arbitraries.js"

/**
 * The slack allowed past a deadline, measured with the real clock from outside. This is the one
 * place where a wall-clock bound is the property itself (docs/SECURITY.md, "1. The MCP server": a
 * call ends by its deadline plus a small bounded slack whatever the server sends); it is generous
 * so that a loaded CI machine never fails it, and still far below what unbounded work costs.
 */
export const SLACK_MS = 2_000

/** The configured secrets: each must never reach a public field of an error. */
export const SECRETS = {
  header: "hdr-Canary+7/Zq=k9&w",
  query: "qry-Canary+8/Yp=m3&v",
  userinfo: "usr-Canary+9/Xo=n5&t",
  env: "env-Canary+6/Wn=j2&u",
  clientSecret: "cli-Canary+5/Vm=h4&s"
} as const
export type SecretName = keyof typeof SECRETS

export const HTTP_SECRETS: ReadonlyArray<SecretName> = ["header", "query", "userinfo"]

/** The ways a leaked secret could be read back: as it is, percent-encoded, base64 (alone and in Basic credentials). */
export const leakFormsOf = (secret: string): ReadonlyArray<string> => [
  secret,
  encodeURIComponent(secret),
  btoa(secret),
  btoa(`hostile:${secret}`)
]

export type TransportName = "json" | "sse" | "stdio"

export interface Row {
  readonly era: HostileEra
  readonly transport: TransportName
  /** The only revision the client may speak, so each row tests its era (no negotiation). */
  readonly revision: "2026-07-28" | "2025-11-25"
}

export const rows: ReadonlyArray<Row> = (["stateless", "handshake"] as const).flatMap((era) =>
  (["json", "sse", "stdio"] as const).map((transport) => ({
    era,
    transport,
    revision: era === "stateless" ? "2026-07-28" as const : "2025-11-25" as const
  }))
)

export const rowName = (row: Row): string => `${row.era} era over ${row.transport === "stdio" ? "stdio" : `Streamable HTTP (${row.transport})`}`

/** The platform the client runs on: undici for HTTP, the Node command executor for stdio. */
export const platform = Layer.merge(NodeHttpClient.layerUndici, Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer))

/** The configured URL: userinfo and a query token, both secrets. */
export const secretUrl = (server: HostileServer): string => {
  const url = new URL(server.url)
  url.username = "hostile"
  url.password = encodeURIComponent(SECRETS.userinfo)
  url.searchParams.set("token", SECRETS.query)
  return url.toString()
}

/** Which secret a case echoes, and in which form. */
export interface Echo {
  readonly secret: SecretName
  readonly form: SecretForm
}

const SMALL_BODY = 64 * 1024

/** A generated message as an HTTP answer, framed as `framing` says (headers, SSE, chunks, end). */
export const httpAnswer = (message: string, transport: "json" | "sse", framing: Framing, echo: Echo): HostileAnswer => {
  const text = withSecret(message, SECRETS[echo.secret], echo.form)
  const body = transport === "sse" ? sseBody(text, framing) : text
  const contentType = framing.contentType === "default" ? (transport === "sse" ? "text/event-stream" : "application/json") : framing.contentType
  const headers: Array<readonly [string, string]> = contentType === undefined ? [] : [["content-type", contentType]]
  for (const [name, value] of framing.extraHeaders) {
    // A header value carries the secret's form as raw text (a header cannot hold control characters).
    const form = echo.form === "percent" || echo.form === "base64" ? echo.form : "raw"
    headers.push([name, value.split(SECRET_SLOT).join(rawFormOf(SECRETS[echo.secret], form))])
  }
  // Splitting at every byte is for small bodies: a large one would only cost the harness time.
  const chunkSize = framing.chunkSize !== undefined && framing.chunkSize < 4096 && body.length > SMALL_BODY ? undefined : framing.chunkSize
  return { status: framing.status, headers, body, ...(chunkSize === undefined ? {} : { chunkSize }), then: framing.then }
}

/** A generated message as the stdio child writes it. */
export const stdioAnswer = (message: string, framing: Framing, echo: Echo): HostileStdioAnswer => {
  const text = stdioText(withSecret(message, SECRETS[echo.secret], echo.form), framing)
  const chunkSize = framing.chunkSize !== undefined && framing.chunkSize < 4096 && text.length > SMALL_BODY ? undefined : framing.chunkSize
  return { text, ...(chunkSize === undefined ? {} : { chunkSize }), ...(framing.then === "reset" ? { then: "exit" as const } : {}) }
}

// --- checks ---------------------------------------------------------------------------------------

/** P1: the operation ended by its deadline plus the slack. */
export const checkDeadline = (label: string, elapsedMs: number, deadlineMs: number): ReadonlyArray<string> =>
  elapsedMs <= deadlineMs + SLACK_MS ? [] : [`P1 deadline: ${label} took ${Math.round(elapsedMs)} ms (deadline ${deadlineMs} ms + ${SLACK_MS} ms slack)`]

const brief = (u: unknown): string => {
  const text = u instanceof Error ? `${u.name}: ${u.message}` : String(u)
  return text.length > 300 ? `${text.slice(0, 300)}...` : text
}

/** P2: a failure is only typed errors of the family: no defect, no interruption, no InternalError. */
export const checkTyped = (label: string, exit: Exit.Exit<unknown, unknown>): ReadonlyArray<string> => {
  if (Exit.isSuccess(exit)) return []
  const found: Array<string> = []
  for (const defect of Cause.defects(exit.cause)) found.push(`P2 typed: ${label} died with a defect: ${brief(defect)}`)
  if (Cause.isInterrupted(exit.cause)) found.push(`P2 typed: ${label} was interrupted`)
  for (const failure of Cause.failures(exit.cause)) {
    if (!McpConnectionError.isMcpConnectionError(failure)) found.push(`P2 typed: ${label} failed with an untyped error: ${brief(failure)}`)
    else if (failure._tag === "InternalError") found.push(`P2 typed: ${label} failed InternalError (a defect inside): ${brief(failure.cause)}`)
  }
  return found
}

/** The public views of an error: what a caller may print, log or send on. */
export const publicViews = (error: McpConnectionError.McpConnectionError): Readonly<Record<string, string>> => ({
  "JSON.stringify(error)": JSON.stringify(error),
  "String(error)": String(error),
  "error.message": error.message,
  "toRecord(error)": JSON.stringify(McpConnectionError.toRecord(error)),
  "public fields": JSON.stringify(Object.fromEntries(Object.entries(error)))
})

const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u2060\ufeff]|\\u00[0-9a-f]{2}|\\u20[0-9a-f]{2}|\\[rnt]/gi

/** P3: no configured secret, in any form it could be read back in, in any public view of a failure. */
export const checkNoSecret = (label: string, exit: Exit.Exit<unknown, unknown>, secrets: ReadonlyArray<SecretName>): ReadonlyArray<string> => {
  if (Exit.isSuccess(exit)) return []
  const found: Array<string> = []
  for (const failure of Cause.failures(exit.cause)) {
    if (!McpConnectionError.isMcpConnectionError(failure)) continue
    for (const [view, text] of Object.entries(publicViews(failure))) {
      // Also as a reader would see it: invisible and control characters (raw or JSON-escaped) taken out.
      const visible = text.replace(INVISIBLE, "")
      for (const name of secrets) {
        if (leakFormsOf(SECRETS[name]).some((form) => text.includes(form) || visible.includes(form))) {
          found.push(`P3 secret: the ${name} secret in ${view} of ${label}: ${text.slice(0, 300)}`)
        }
      }
    }
  }
  return found
}

/** P4: each call arrived at most once, by JSON-RPC id and by nonce (the effect identity). */
export const checkSentOnce = (arrivals: ReadonlyArray<ToolCallArrival>, nonce: string): ReadonlyArray<string> => {
  const mine = arrivals.filter((arrival) => arrival.nonce === nonce || arrival.effectIdentity === nonce)
  const found: Array<string> = []
  if (mine.length > 1) found.push(`P4 sent once: the call with nonce ${nonce} arrived ${mine.length} times (ids ${mine.map((a) => String(a.id)).join(", ")})`)
  const ids = arrivals.map((arrival) => String(arrival.id))
  if (new Set(ids).size !== ids.length) found.push(`P4 sent once: a tools/call id arrived twice (${ids.join(", ")})`)
  return found
}

/**
 * The harness's own check that P4 is not vacuous: a call that was answered (a result, or an
 * error whose outcome is `applied`) reached the server, so the server must have counted it.
 */
export const checkArrived = (arrivals: ReadonlyArray<ToolCallArrival>, nonce: string, exit: Exit.Exit<unknown, unknown> | undefined): ReadonlyArray<string> => {
  if (exit === undefined) return []
  const answered = Exit.isSuccess(exit) ||
    [...Cause.failures(exit.cause)].some((failure) => McpConnectionError.isMcpConnectionError(failure) && failure.outcome === "applied")
  const arrived = arrivals.some((arrival) => arrival.nonce === nonce)
  return answered && !arrived ? [`harness: the call was answered but the server did not count its arrival (nonce ${nonce})`] : []
}

/** A server's `__proto__` keys must never reach the process's prototypes. */
export const checkNoPollution = (): ReadonlyArray<string> => {
  const probe = {} as Record<string, unknown>
  return probe["polluted"] === undefined ? [] : ["prototype pollution: Object.prototype.polluted is set"]
}

/**
 * Fails a case with every violation it found; with PHASEBOUND_HOSTILE_LOG set, also appends them
 * there (and with PHASEBOUND_HOSTILE_EXPLORE=1 as well, only appends them, to collect every
 * counterexample of a long local run).
 */
export const verdict = (row: string, summary: string, violations: ReadonlyArray<string>, outcome: string): void => {
  const trace = process.env["PHASEBOUND_HOSTILE_TRACE"]
  if (trace !== undefined) appendFileSync(trace, JSON.stringify({ row, outcome, violations: violations.length, summary: summary.slice(0, 400) }) + "\n")
  if (violations.length === 0) return
  const log = process.env["PHASEBOUND_HOSTILE_LOG"]
  if (log !== undefined) appendFileSync(log, JSON.stringify({ row, summary, violations }) + "\n")
  // An exploration (never the suite) goes on past failures to collect them all in the log.
  if (log !== undefined && process.env["PHASEBOUND_HOSTILE_EXPLORE"] === "1") return
  throw new Error(`${row}: ${summary}\n  ${violations.join("\n  ")}`)
}

/** What an operation ended with, in a few words: the tag, stage and reason of a failure, and how long it took. */
export const outcomeOf = (exit: Exit.Exit<unknown, unknown>, elapsedMs: number): string => {
  const time = `${Math.round(elapsedMs)} ms`
  if (Exit.isSuccess(exit)) return `success in ${time}`
  const failure = Cause.failures(exit.cause).pipe((failures) => [...failures][0])
  if (McpConnectionError.isMcpConnectionError(failure)) {
    return `${failure._tag} (${failure.stage}${failure.reason === undefined ? "" : `, ${failure.reason}`}) in ${time}`
  }
  const defect = [...Cause.defects(exit.cause)][0]
  return defect === undefined ? `${Cause.isInterrupted(exit.cause) ? "interrupted" : "failure"} in ${time}` : `defect ${brief(defect)} in ${time}`
}

/** A short description of a generated text: its length and both ends. */
export const describeText = (text: string): string =>
  text.length <= 160 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 100))}...${JSON.stringify(text.slice(-40))} (${text.length} chars)`

/** Runs of each property, overridable for a longer local exploration (PHASEBOUND_HOSTILE_RUNS). */
export const runs = (fallback: number): number => {
  const fromEnv = Number(process.env["PHASEBOUND_HOSTILE_RUNS"])
  return Number.isSafeInteger(fromEnv) && fromEnv > 0 ? fromEnv : fallback
}

/**
 * FastCheck parameters: no shrinking past the first failure (a case can take seconds), and a
 * reporter that names the seed without printing megabytes of generated text (the case's own
 * error says what it was).
 */
export const fastCheck = (numRuns: number) => ({
  numRuns: runs(numRuns),
  endOnFailure: true,
  reporter: (
    details: {
      readonly failed: boolean
      readonly seed: number
      readonly counterexamplePath: string | null
      readonly errorInstance: unknown
      readonly numRuns: number
    }
  ) => {
    if (!details.failed) return
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    throw new Error(`Property failed after ${details.numRuns} run(s) (seed ${details.seed}, path ${details.counterexamplePath}):\n${cause}`)
  }
})
