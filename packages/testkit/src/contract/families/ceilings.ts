/**
 * Byte ceilings, in both phases (docs/DESIGN.md, "Bytes"): an answer of exactly the ceiling is
 * accepted, one byte more is refused while it is read, with `observedBytes` the bytes actually
 * read (here the whole answer: ceiling + 1) and outcome `applied` (an answer arrived). The size
 * is what the testkit's `exact-size` fault writes: a JSON body, an SSE event block (the legacy GET
 * stream's included) or a stdio line with its `\n`, in 7-byte writes. The tool runs exactly once
 * whatever its answer's size.
 *
 * The policy sets the baseline `maxBytes`, which is also the unsolicited bound: on a shared
 * stream (legacy GET stream, stdout) the frame being read is then bounded by the ceiling itself,
 * so a frame one byte over it gives up the stream and ends the session (docs/DESIGN.md, "Shared
 * streams"): the next call is refused without being sent. On a response of its own the
 * connection goes on.
 *
 * A never-ending answer is refused while it is being read: `observedBytes` is past the ceiling
 * by at most one chunk (the servers write 64 KiB chunks), and the server is
 * told to stop: over Streamable HTTP it sees the response closed by the client; on a shared
 * stream it sees the session released (the legacy GET stream closed, the child gone). Those are
 * what end the servers' write loops (each writes until its response or stdout is gone); the
 * servers' running byte counts are not part of the rows' view, so they are not read here.
 *
 * Axes: the HTTP client and the runtime: each reads bodies in its own chunks (and Bun's
 * `fetch` and pipes differ from Node's), and the ceiling must hold whatever the chunking. No
 * case waits on a deadline (20 s, never reached: only the ceiling ends these exchanges).
 */
import { Effect } from "effect"
import { check, checkFields, checkNextCallAfterStreamGivenUp, expectReleased, failureOf } from "../assert.js"
import type { Connection } from "../client.js"
import { expectedFailure, expectedFields } from "../expectations.js"
import type { ContractFault, Site } from "../faults.js"
import { type Peer, peer, type Row } from "../rows.js"
import type { CaseSpec, Family } from "../suite.js"

const CEILING = 4_000
/** Generous: 7-byte writes are slow under load, and only the ceiling may end these exchanges. */
const TIMEOUT = 20_000
const POLICY = { timeout: TIMEOUT, maxBytes: CEILING }
const LIMITS = { timeoutMs: TIMEOUT, maxBytes: CEILING }
/**
 * The most a reader may have taken past the ceiling when it refuses a never-ending answer:
 * `observedBytes` runs through the end of the chunk that crossed the ceiling. Under Node a chunk
 * is at most 64 KiB (its socket and pipe reads; also one write of the servers' never-ending
 * answers, `NEVER_ENDING_CHUNK`). Bun's readers hand over whatever the socket or pipe holds in
 * one read, several writes coalesced (110-300 KB seen): there the bound is 1 MiB. Either bound
 * proves the refusal came at the first chunk past the ceiling, not after reading on.
 */
const NEVER_ENDING_SLACK = "Bun" in globalThis ? 1024 * 1024 : 64 * 1024

const SIZES = [CEILING - 1, CEILING, CEILING + 1] as const

const describeSize = (bytes: number) => bytes === CEILING ? "exactly the ceiling" : bytes < CEILING ? "the ceiling - 1" : "the ceiling + 1"

const checkCounter = <R>(server: Peer<R>, runs: number, what: string) => {
  check(server.counter() === runs, `${what}: the tool ran ${server.counter()} times, expected ${runs}`)
  check(server.calls("tools/call") === runs, `${what}: tools/call arrived ${server.calls("tools/call")} times, expected ${runs}`)
}

const checkListedOnce = <R>(server: Peer<R>) => check(server.calls("tools/list") === 1, `tools/list arrived ${server.calls("tools/list")} times, expected once`)

/** After a refused answer: the session goes on (a response of its own) or is gone (a shared stream). */
const checkNextCall = <R>(row: Row<R>, server: Peer<R>, connection: Connection) =>
  Effect.gen(function*() {
    if (row.sharedStream) {
      yield* checkNextCallAfterStreamGivenUp(row, connection, server.counter)
    } else {
      yield* connection.callTool("increment")
      checkCounter(server, 2, "after a second call")
    }
  })

const discoveryCase = <R>(row: Row<R>, bytes: number): CaseSpec => {
  const fault: ContractFault = { kind: "exact-size", bytes }
  return {
    name: bytes <= CEILING
      ? `a discovery answer of ${describeSize(bytes)} (${bytes} bytes) is accepted`
      : `a discovery answer of ${describeSize(bytes)} (${bytes} bytes) is refused with observedBytes ${bytes}`,
    run: () =>
      row.run(Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site: "discovery", fault }] })
        if (bytes <= CEILING) {
          const connection = yield* server.connect(POLICY)
          check(connection.tools.some((tool) => tool.name === "increment"), "the discovery did not list the increment tool")
        } else {
          const error = yield* failureOf(server.connect(POLICY))
          checkFields(error, { ...expectedFields(expectedFailure(row, "discovery", fault)), limits: LIMITS, observedBytes: bytes })
        }
        checkListedOnce(server)
        check(server.counter() === 0, `the discovery ran the tool ${server.counter()} times`)
      }))
  }
}

const callCase = <R>(row: Row<R>, bytes: number): CaseSpec => {
  const fault: ContractFault = { kind: "exact-size", bytes }
  return {
    name: bytes <= CEILING
      ? `a call answer of ${describeSize(bytes)} (${bytes} bytes) is returned; the tool ran once`
      : `a call answer of ${describeSize(bytes)} (${bytes} bytes) is refused with observedBytes ${bytes}; the tool ran once`,
    run: () =>
      row.run(Effect.gen(function*() {
        const server = yield* peer(row, { faults: [{ site: "call", fault }] })
        const connection = yield* server.connect(POLICY)
        if (bytes <= CEILING) {
          const result = yield* connection.callTool("increment")
          const content = (result as { readonly content?: unknown } | null)?.content
          check(Array.isArray(content) && content.length === 1, `the result is not the padded answer: ${JSON.stringify(result)?.slice(0, 200)}`)
          checkCounter(server, 1, "the call")
        } else {
          const error = yield* failureOf(connection.callTool("increment"))
          checkFields(error, { ...expectedFields(expectedFailure(row, "call", fault)), limits: LIMITS, observedBytes: bytes })
          checkCounter(server, 1, "the refused call")
          yield* expectReleased(connection)
          yield* checkNextCall(row, server, connection)
        }
      }))
  }
}

const neverEnding: ContractFault = { kind: "never-ending" }

const checkNeverEnding = <R>(row: Row<R>, site: Site, error: unknown) => {
  checkFields(error, { ...expectedFields(expectedFailure(row, site, neverEnding)), limits: LIMITS })
  const observed = (error as { readonly observedBytes?: unknown }).observedBytes
  check(
    typeof observed === "number" && observed > CEILING && observed <= CEILING + NEVER_ENDING_SLACK,
    `observedBytes is ${observed}, expected past ${CEILING} and at most ${CEILING + NEVER_ENDING_SLACK}`
  )
}

/** The server sees the answer abandoned: the writer's own stop condition (see the header). */
const serverStopped = <R>(row: Row<R>, server: Peer<R>) =>
  Effect.promise(() =>
    row.sharedStream
      ? server.released()
      : server.waitFor(() => server.abandoned() >= 1, "the never-ending response closed by the client")
  )

const neverEndingCase = <R>(row: Row<R>, site: Site): CaseSpec => ({
  name: `a never-ending ${site === "call" ? "call" : "discovery"} answer is refused while it is being read, and the server stops writing`,
  run: () =>
    row.run(Effect.gen(function*() {
      const server = yield* peer(row, { faults: [{ site, fault: neverEnding }] })
      if (site === "discovery") {
        const error = yield* failureOf(server.connect(POLICY))
        checkNeverEnding(row, site, error)
        checkListedOnce(server)
        check(server.counter() === 0, `the discovery ran the tool ${server.counter()} times`)
        yield* serverStopped(row, server)
      } else {
        const connection = yield* server.connect(POLICY)
        const error = yield* failureOf(connection.callTool("increment"))
        checkNeverEnding(row, site, error)
        checkCounter(server, 1, "the refused call")
        // Before the connection closes: the refusal itself releases what the answer held.
        yield* serverStopped(row, server)
        yield* expectReleased(connection)
      }
    }))
})

export const ceilings: Family = {
  name: "byte ceilings",
  dependsOn: ["http-client", "runtime"],
  promise:
    "in both phases exactly the ceiling is accepted and one byte more refused, observedBytes the bytes read, the tool run once; a never-ending answer is cut off while read",
  cases: (row) => [
    ...SIZES.map((bytes) => discoveryCase(row, bytes)),
    ...SIZES.map((bytes) => callCase(row, bytes)),
    neverEndingCase(row, "discovery"),
    neverEndingCase(row, "call")
  ]
}
