/**
 * Spans: under a tracer the application installed (docs/DESIGN.md, "Observation"), the
 * connection's discovery, listings and calls are the spans `mcp.connect`, `mcp.tools.list` and
 * `mcp.tools.call`, children of the application's span, ended, carrying phase, stage,
 * transport, protocol revision, observed bytes and outcome, and never a URL, a header, a body
 * or a secret, even when the server echoes the secrets back. The HTTP client's own spans (which
 * record the URL) are not made.
 *
 * Axes: none beyond the server row. The spans are the client's own, built from typed fields;
 * the HTTP client's own spans are switched off, which the case checks (no other span recorded).
 * One case waits on a live deadline: a call's 1 s (its discovery's 20 s is never reached), for
 * the span of a call ended by its deadline.
 */
import { Cause, Effect, Exit, Logger, LogLevel, Option, type Scope } from "effect"
import { check, failureOf } from "../assert.js"
import { FORBIDDEN } from "../canaries.js"
import type { ClientError } from "../client.js"
import type { SitedFault } from "../faults.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"
import { type RecordedSpan, recordingTracer } from "../tracer.js"
import { checkClean, echoingRefusalFault, label } from "./redaction.js"

const APPLICATION_SPAN = "contract.application"
/** A tool argument, echoed in the answer: a body no span may carry. */
const BODY = "BODY-CANARY-e2a7"
const MCP_SPANS = new Set(["mcp.connect", "mcp.tools.list", "mcp.tools.call"])

/** The attribute names of docs/DESIGN.md's "Observation", as the client spells them. */
const ATTRIBUTE = {
  phase: "mcp.phase",
  stage: "mcp.stage",
  transport: "mcp.transport",
  revision: "mcp.protocol.version",
  bytes: "mcp.observed_bytes",
  outcome: "mcp.outcome"
} as const

/** The transport as the client names it. */
const transportOf = <R>(row: Row<R>): string => row.transport === "legacy-sse" ? "sse" : row.transport

const attributesOf = (span: RecordedSpan): string => [...span.attributes].map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(" ")

/**
 * Runs `program` under a recording tracer, inside an application span, with a peer of the row
 * (canaries on, `faults` scripted) and a logger that records every line at `minimumLogLevel` or
 * above (default: the application's default, Info); then checks that the client logged nothing
 * (docs/DESIGN.md, "Observation": the library does not log) and `verify` judges the program's
 * value and the spans.
 */
const traced = <R, A>(
  row: Row<R>,
  faults: ReadonlyArray<SitedFault>,
  program: (server: Peer<R>) => Effect.Effect<A, unknown, R | Scope.Scope>,
  verify: (value: A, spans: ReadonlyArray<RecordedSpan>) => void,
  minimumLogLevel?: LogLevel.LogLevel
): CaseSpec["run"] =>
() =>
  row.run(Effect.gen(function*() {
    const server = yield* peer(row, { faults, canaries: true })
    const recording = recordingTracer()
    const logs: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      logs.push(`${logLevel.label} ${JSON.stringify(message)}`)
    })
    const observed = program(server).pipe(
      Effect.withSpan(APPLICATION_SPAN),
      Effect.withTracer(recording.tracer),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    const value = yield* (minimumLogLevel === undefined ? observed : Logger.withMinimumLogLevel(observed, minimumLogLevel))
    // The lines' messages are fixed texts; their causes (never printed here) are the failures.
    check(logs.length === 0, `the client logged ${logs.length} line(s): ${[...new Set(logs)].join("; ")}`)
    verify(value, recording.spans)
  }))

/** The spans of the case: ended, children of the application, clean, and none but ours. */
const checkAll = <R>(row: Row<R>, spans: ReadonlyArray<RecordedSpan>): void => {
  const application = spans.find((span) => span.name === APPLICATION_SPAN)
  check(application !== undefined, "the application's span was not recorded")
  const others = spans.filter((span) => span.name !== APPLICATION_SPAN && !MCP_SPANS.has(span.name))
  check(others.length === 0, `spans other than the client's own were recorded: ${others.map((span) => span.name).join(", ")}`)
  for (const span of spans.filter((span) => MCP_SPANS.has(span.name))) {
    check(span.ended, `${span.name} was not ended`)
    check(span.kind === "client", `${span.name} is of kind ${span.kind}, expected client`)
    check(
      Option.isSome(span.parent) && span.parent.value.spanId === application!.spanId,
      `${span.name} is not a child of the application's span`
    )
    const texts: ReadonlyArray<readonly [string, string]> = [
      ...[...span.attributes].map(([key, value]): readonly [string, string] => [`attribute ${key}`, `${key} ${JSON.stringify(value) ?? String(value)}`]),
      ...span.events.map((event): readonly [string, string] => [`event ${event.name}`, `${event.name} ${JSON.stringify(event.attributes ?? {})}`]),
      ...span.links.map((link): readonly [string, string] => ["a link", JSON.stringify(link.attributes)])
    ]
    for (const [where, text] of texts) {
      for (const forbidden of [...FORBIDDEN, BODY]) check(!text.includes(forbidden), `${span.name}: ${where} contains ${label(forbidden)}`)
    }
    // The failure a span ended with is what an exporter records (status, exception event):
    // as clean as every public view of it.
    if (span.exit !== undefined && Exit.isFailure(span.exit)) {
      const failure = Cause.failureOption(span.exit.cause)
      if (Option.isSome(failure)) checkClean(row, failure.value, `the failure ${span.name} ended with`)
    }
  }
}

/** One span of that name; returns it. */
const single = (spans: ReadonlyArray<RecordedSpan>, name: string, count = 1): ReadonlyArray<RecordedSpan> => {
  const found = spans.filter((span) => span.name === name)
  check(found.length === count, `${found.length} ${name} spans, expected ${count}`)
  return found
}

/** Every `expected` attribute has that value. */
const checkAttributes = (span: RecordedSpan, expected: Readonly<Record<string, unknown>>, what: string): void => {
  for (const [key, value] of Object.entries(expected)) {
    check(
      span.attributes.get(key) === value,
      `${what}: ${key} is ${JSON.stringify(span.attributes.get(key))}, expected ${JSON.stringify(value)} (${attributesOf(span)})`
    )
  }
}

/** The attribute is a whole number of bytes (at least `min`). */
const checkBytes = (span: RecordedSpan, min: number, what: string): void => {
  const bytes = span.attributes.get(ATTRIBUTE.bytes)
  check(
    typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes >= min,
    `${what}: ${ATTRIBUTE.bytes} is ${JSON.stringify(bytes)}, expected a byte count of at least ${min} (${attributesOf(span)})`
  )
}

const everyOperation = <R>(row: Row<R>): CaseSpec => ({
  name:
    "connect, listTools, a refused call, a call and a call over its ceiling: one span each, ended, children of the application's, with their attributes, none holding a secret or a body; no HTTP client span",
  run: traced(
    row,
    [{ site: "call", fault: echoingRefusalFault(row) }],
    (server) =>
      Effect.gen(function*() {
        const connection = yield* server.connect({ timeout: 20_000 })
        yield* connection.listTools
        // The refusal is scripted for the first call.
        const refused = yield* failureOf(connection.callTool("increment"))
        yield* connection.callTool("echo", { text: BODY })
        // An answer over this call's own ceiling (last: on a shared stream it may end the session).
        const tooLarge = yield* failureOf(connection.callTool("echo", { text: BODY.repeat(100) }, { maxBytes: 1_000 }))
        return { revision: connection.protocolVersion, refused, tooLarge }
      }),
    ({ refused, revision, tooLarge }, spans) => {
      check(refused._tag === "RemoteRefusal", `the first call failed with ${refused._tag}, expected the scripted RemoteRefusal`)
      check(
        row.era === "stateless" ? revision === "2026-07-28" : revision !== "2026-07-28",
        `the connection speaks ${revision}, not a revision of the ${row.era} era`
      )
      checkAll(row, spans)
      const where = { [ATTRIBUTE.transport]: transportOf(row), [ATTRIBUTE.revision]: revision }
      const [connectSpan] = single(spans, "mcp.connect")
      checkAttributes(connectSpan!, { [ATTRIBUTE.phase]: "discovery", ...where }, "mcp.connect")
      const [list] = single(spans, "mcp.tools.list")
      checkAttributes(list!, { [ATTRIBUTE.phase]: "discovery", [ATTRIBUTE.stage]: "list-tools", ...where, [ATTRIBUTE.outcome]: "ok" }, "mcp.tools.list")
      checkBytes(list!, 1, "mcp.tools.list")
      check(tooLarge._tag === "ByteCeilingExceeded", `the large answer failed with ${tooLarge._tag}, expected ByteCeilingExceeded`)
      const [refusedSpan, ok, over] = single(spans, "mcp.tools.call", 3)
      checkAttributes(
        refusedSpan!,
        { [ATTRIBUTE.phase]: "call", [ATTRIBUTE.stage]: "call", ...where, [ATTRIBUTE.outcome]: "RemoteRefusal" },
        "the refused call's span"
      )
      checkAttributes(refusedSpan!, { [ATTRIBUTE.bytes]: refused.observedBytes ?? 0 }, "the refused call's span")
      check(refusedSpan!.exit !== undefined && Exit.isFailure(refusedSpan!.exit), "the refused call's span did not end with its failure")
      checkAttributes(ok!, { [ATTRIBUTE.phase]: "call", [ATTRIBUTE.stage]: "call", ...where, [ATTRIBUTE.outcome]: "ok" }, "the call's span")
      checkBytes(ok!, 1, "the call's span")
      check(ok!.exit !== undefined && Exit.isSuccess(ok!.exit), "the call's span did not end with its success")
      checkAttributes(over!, { [ATTRIBUTE.outcome]: "ByteCeilingExceeded", [ATTRIBUTE.bytes]: tooLarge.observedBytes }, "the span of the call over its ceiling")
      checkBytes(over!, 1_001, "the span of the call over its ceiling")
    }
  )
})

const deadline = <R>(row: Row<R>): CaseSpec => ({
  name: "a call that meets its deadline: its span ended, with outcome DeadlineExceeded, no secret",
  run: traced(
    row,
    [{ site: "call", fault: { kind: "stall" } }],
    (server) =>
      Effect.gen(function*() {
        const connection = yield* server.connect({ timeout: 20_000, call: { timeout: 1_000 } })
        return yield* failureOf(connection.callTool("increment"))
      }),
    (failure, spans) => {
      check(failure._tag === "DeadlineExceeded", `the call failed with ${failure._tag}, expected DeadlineExceeded`)
      checkAll(row, spans)
      const [span] = single(spans, "mcp.tools.call")
      checkAttributes(span!, {
        [ATTRIBUTE.phase]: "call",
        [ATTRIBUTE.stage]: "call",
        [ATTRIBUTE.transport]: transportOf(row),
        [ATTRIBUTE.outcome]: "DeadlineExceeded"
      }, "the call's span")
      checkBytes(span!, 0, "the call's span")
    }
  )
})

const failedDiscovery = <R>(row: Row<R>): CaseSpec => ({
  name: "a discovery refused with every secret echoed: the mcp.connect span ended with the failure, no secret",
  run: traced(
    row,
    [{ site: "discovery", fault: echoingRefusalFault(row) }],
    (server) => failureOf(server.connect({ timeout: 20_000 })),
    (failure, spans) => {
      check(failure._tag === "RemoteRefusal", `discovery failed with ${failure._tag}, expected the scripted RemoteRefusal`)
      checkAll(row, spans)
      const [span] = single(spans, "mcp.connect")
      checkAttributes(span!, { [ATTRIBUTE.phase]: "discovery" }, "mcp.connect")
      check(span!.exit !== undefined && Exit.isFailure(span!.exit), "the mcp.connect span did not end with the failure")
    }
  )
})

/**
 * docs/DESIGN.md, "Observation": `mcp.connect` too carries stage, observed bytes and outcome,
 * whether discovery succeeds (its last stage, the bytes it read) or fails (the failure's stage,
 * its bytes, its tag).
 */
const connectOutcome = <R>(row: Row<R>): CaseSpec => ({
  name: "the mcp.connect span carries stage, observed bytes and outcome, on success and on failure",
  run: traced(
    row,
    [{ site: "discovery", fault: echoingRefusalFault(row) }],
    (server) =>
      Effect.gen(function*() {
        // A discovery that meets the refusal, then one (to a server of the row without faults)
        // that succeeds.
        const failure: ClientError = yield* failureOf(server.connect({ timeout: 20_000 }))
        const clean = yield* peer(row, { canaries: true })
        yield* clean.connect({ timeout: 20_000 })
        return failure
      }),
    (failure, spans) => {
      const [failed, succeeded] = single(spans, "mcp.connect", 2)
      const gaps = [
        ...missing(failed!, { [ATTRIBUTE.stage]: failure.stage, [ATTRIBUTE.outcome]: failure._tag }, 0).map((gap) => `failed: ${gap}`),
        ...missing(succeeded!, { [ATTRIBUTE.stage]: "list-tools", [ATTRIBUTE.outcome]: "ok" }, 1).map((gap) => `succeeded: ${gap}`)
      ]
      check(
        gaps.length === 0,
        `mcp.connect ${gaps.join("; ")} (failed: ${attributesOf(failed!)}; succeeded: ${attributesOf(succeeded!)})`
      )
    }
  )
})

/** What a span lacks of `expected` and of a byte count of at least `minBytes`, in words. */
const missing = (span: RecordedSpan, expected: Readonly<Record<string, unknown>>, minBytes: number): ReadonlyArray<string> => {
  const gaps = Object.entries(expected)
    .filter(([key, value]) => span.attributes.get(key) !== value)
    .map(([key, value]) => `${key} is ${JSON.stringify(span.attributes.get(key))}, expected ${JSON.stringify(value)}`)
  const bytes = span.attributes.get(ATTRIBUTE.bytes)
  if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes < minBytes) {
    gaps.push(`${ATTRIBUTE.bytes} is ${JSON.stringify(bytes)}, expected a byte count of at least ${minBytes}`)
  }
  return gaps
}

/**
 * docs/DESIGN.md, "Observation": the library does not log, whatever level the application lets
 * through: a failed discovery and a failed call leave no line even at `LogLevel.All`.
 */
const silentAtEveryLevel = <R>(row: Row<R>): CaseSpec => ({
  name: "a failed discovery and a failed call log nothing, even at LogLevel.All",
  run: traced(
    row,
    [{ site: "discovery", fault: echoingRefusalFault(row) }],
    (server) =>
      Effect.gen(function*() {
        yield* failureOf(server.connect({ timeout: 20_000 }))
        const clean = yield* peer(row, { faults: [{ site: "call", fault: echoingRefusalFault(row) }], canaries: true })
        const connection = yield* clean.connect({ timeout: 20_000 })
        yield* failureOf(connection.callTool("increment"))
      }),
    () => {},
    LogLevel.All
  )
})

export const spans: Family = {
  name: "spans",
  dependsOn: [],
  promise:
    "under an installed tracer: mcp.connect, mcp.tools.list and mcp.tools.call spans, ended, with phase, stage, transport, revision, observed bytes and outcome, never a URL, header, body or secret; no HTTP client span",
  cases: (row) => [everyOperation(row), deadline(row), failedDiscovery(row), connectOutcome(row), silentAtEveryLevel(row)]
}
