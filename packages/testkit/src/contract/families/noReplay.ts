/**
 * No replay: whatever goes wrong with a tool call, the tool ran exactly once, the failure is
 * the one the fault calls for, and the connection still serves the next call (which runs the
 * tool a second time, not a third). Also for discovery: a failed discovery never calls a tool.
 *
 * A discovery that only its deadline ends (a stall, a late answer, a wrong id on a shared
 * stream) reaches it under the TestClock once tools/list has arrived (../virtualTime.ts): no
 * start-up counts, so the stage is list-tools on every machine. The call cases that only their
 * deadline ends still wait on a live 1 s deadline (after a discovery with a budget no machine
 * reaches): the late answer's case is about real time at the server (its answer, 1.6 s late,
 * must arrive after the deadline and be dropped and counted on a shared stream).
 *
 * Axes: the HTTP client and the runtime. Whether a reset, a cut body or a lying `Content-Length`
 * surfaces as the failure the rules give, and whether an abandoned request is really given up
 * (not re-sent), runs through each HTTP client's body reading and aborts and the runtime's sockets.
 */
import { Effect } from "effect"
import { check, checkFields, checkNextCallAfterStreamGivenUp, expectReleased, failureOf } from "../assert.js"
import { CANARIES } from "../canaries.js"
import { type ExpectedFailure, expectedFailure, expectedFields } from "../expectations.js"
import type { ContractFault } from "../faults.js"
import { type Connection, forCallSite } from "../client.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"
import { pastVirtualDeadline, underTestClock } from "../virtualTime.js"

const CEILING = 4_000
/**
 * The budget of a case: a 1 s deadline where the deadline is what ends the request (a call's:
 * live, far above loopback latency, short enough to keep the suite fast; a discovery's: reached
 * under the TestClock once tools/list arrived, so no start-up counts); elsewhere one no loaded
 * machine reaches (7-byte writes of 4 KB take a while under load), so only the fault can end it.
 */
const policyFor = (expected: ExpectedFailure) => ({
  timeout: expected._tag === "DeadlineExceeded" ? 1_000 : 20_000,
  maxBytes: CEILING
})

export const FAULTS: ReadonlyArray<readonly [string, ContractFault]> = [
  ["a stall", { kind: "stall" }],
  ["a never-ending answer", { kind: "never-ending" }],
  ["an answer one byte over the ceiling", { kind: "exact-size", bytes: 4_001 }],
  ["a close mid-answer", { kind: "close-mid-answer" }],
  ["a TCP reset mid-answer", { kind: "reset-mid-answer" }],
  ["a JSON-RPC refusal", { kind: "refusal", code: -32000, message: `refused ${CANARIES.header}` }],
  ["an answer with a wrong id", { kind: "wrong-id" }],
  ["an answer after the deadline", { kind: "late-answer", ms: 1_600 }],
  ["a body over the ceiling under a Content-Length of 1 MB", { kind: "lying-content-length", declared: 1_000_000, bytes: 4_001, then: "hold" }],
  ["a body cut short of its Content-Length", { kind: "lying-content-length", declared: 1_000_000, bytes: 3_000, then: "close" }]
]

const callCase = <R>(row: Row<R>, name: string, fault: ContractFault): CaseSpec => ({
  name: `a call that meets ${name} ran once and is not re-sent`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site: "call", fault }] })
      const expected = expectedFailure(row, "call", fault)
      const connection = yield* server.connect(forCallSite(policyFor(expected)))
      // Frames dropped before the call are not the fault's: a 2025 stdio child that answers the
      // stateless probe only after the probe's bounded wait (a loaded machine) adds one then.
      const droppedBefore = (yield* connection.diagnostics).droppedFrames
      const error = yield* failureOf(connection.callTool("increment"))
      checkFields(error, expectedFields(expected))
      check(server.counter() === 1, `the tool ran ${server.counter()} times, expected once`)
      check(server.calls("tools/call") === 1, `tools/call arrived ${server.calls("tools/call")} times, expected once`)
      yield* expectReleased(connection)
      if (expected.dropped !== undefined) {
        const dropped = (yield* connection.diagnostics).droppedFrames - droppedBefore
        check(dropped === expected.dropped, `the call dropped ${dropped} frames, expected ${expected.dropped}`)
      }
      if (fault.kind === "late-answer") yield* lateAnswerDropped(row, server, connection, droppedBefore)
      if (endsSession(row, fault)) {
        yield* checkNextCallAfterStreamGivenUp(row, connection, server.counter)
      } else {
        yield* connection.callTool("increment")
        check(server.counter() === 2, `after a second call the tool ran ${server.counter()} times, expected twice`)
      }
    }))
})

/**
 * A late answer (docs/GUIDE.md, "Decisions"): on a shared stream it still arrives after the deadline and
 * is dropped and counted (the sync point: the count grows by 1); a stateless stdio server drops it
 * itself on the cancellation notice, which must have arrived. Over Streamable HTTP the answer's
 * own response was closed by the client, so nothing can arrive.
 */
const lateAnswerDropped = <R>(row: Row<R>, server: Peer<R>, connection: Connection, droppedBefore: number) =>
  Effect.promise(async () => {
    if (!row.sharedStream) {
      await server.waitFor(() => server.abandoned() >= 1, "the late answer's response closed by the client")
    } else if (row.transport === "stdio" && row.era === "stateless") {
      await server.waitFor(() => server.abandoned() >= 1, "the cancellation notice that drops the late answer")
    } else {
      await server.waitFor(
        () => Effect.runSync(connection.diagnostics).droppedFrames === droppedBefore + 1,
        "the late answer dropped and counted"
      )
    }
  })

/**
 * Faults after which a shared stream's session is gone (docs/DESIGN.md, "Bytes"): the
 * stream ended or was reset, or a frame grew past the stream's bound while being read.
 */
const endsSession = <R>(row: Row<R>, fault: ContractFault): boolean =>
  row.sharedStream &&
  (fault.kind === "close-mid-answer" || fault.kind === "reset-mid-answer" || fault.kind === "never-ending" ||
    (fault.kind === "exact-size" && fault.bytes > CEILING))

const discoveryCase = <R>(row: Row<R>, name: string, fault: ContractFault): CaseSpec => ({
  name: `a discovery that meets ${name} fails as the rules say and runs no tool`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site: "discovery", fault }] })
      const expected = expectedFailure(row, "discovery", fault)
      const policy = policyFor(expected)
      // A deadline is reached under the TestClock once tools/list has arrived: a child's start-up
      // (or a slow handshake on a loaded machine) is outside the budget, so the stage is list-tools.
      const error = expected._tag === "DeadlineExceeded"
        ? yield* failureOf(underTestClock(Effect.flatten(pastVirtualDeadline(server, "discovery", server.connect(policy), policy.timeout))))
        : yield* failureOf(server.connect(policy))
      checkFields(error, expectedFields(expected))
      check(server.counter() === 0, `a failed discovery ran the tool ${server.counter()} times`)
      check(server.calls("tools/list") === 1, `tools/list arrived ${server.calls("tools/list")} times, expected once`)
    }))
})

export const noReplay: Family = {
  name: "no replay",
  dependsOn: ["http-client", "runtime"],
  promise:
    "every shared fault, in both phases: the failure the rules give, the tool run exactly once, nothing re-sent; a late answer on a shared stream dropped and counted",
  cases: (row) =>
    FAULTS.filter(([, fault]) => row.supports(fault.kind)).flatMap(([name, fault]) => [
      callCase(row, name, fault),
      discoveryCase(row, name, fault)
    ])
}
