/**
 * What the client must answer to each shared fault, per row: the failure's tag, reason and
 * outcome. This is the table the rules of docs/DESIGN.md give (phasebound's design document);
 * every family that injects a fault checks the failure against it.
 *
 * - A stall or a late answer: `DeadlineExceeded`, outcome `unknown`.
 * - An answer over the ceiling (never-ending, exact size over it, a lying `Content-Length`
 *   held open): `ByteCeilingExceeded`, outcome `applied` (an answer arrived).
 * - Half an answer then a clean end: a JSON body or a stdio line that does not parse is a
 *   `ProtocolViolation` (`invalid-json`; a stdio line is kept at EOF); an SSE response stream
 *   whose event never completed lacks its answer (`missing-response`); the legacy GET stream
 *   ending is the session's end (`TransportFailure`, `stream-ended`).
 * - A reset, or a body shorter than its `Content-Length`: `TransportFailure`, `connection-closed`.
 * - A JSON-RPC error: `RemoteRefusal` with its code, outcome `not-applied`.
 * - An answer with another id: on a response of its own, `ProtocolViolation`
 *   (`missing-response`); on a shared stream it is dropped and counted, and the request waits
 *   for its deadline.
 */
import type { ContractFault, Site } from "./faults.js"
import type { Row } from "./rows.js"

export interface ExpectedFailure {
  readonly _tag: string
  readonly reason?: string
  readonly code?: number
  readonly outcome: string
  readonly stage: string
  readonly phase: string
  readonly retryable: boolean
  /** A stray answer on a shared stream: diagnostics' droppedFrames counts it. */
  readonly dropped?: number
}

const transient = (site: Site, outcome: string) => site === "discovery" && outcome !== "applied"

export const expectedFailure = <R>(row: Row<R>, site: Site, fault: ContractFault): ExpectedFailure => {
  const where = site === "discovery" ? { stage: "list-tools", phase: "discovery" } : { stage: "call", phase: "call" }
  const make = (tag: string, outcome: string, extra: { readonly reason?: string; readonly code?: number; readonly dropped?: number } = {}) => ({
    _tag: tag,
    ...extra,
    outcome,
    ...where,
    retryable: tag === "DeadlineExceeded" || tag === "TransportFailure" ? transient(site, outcome) : false
  })
  switch (fault.kind) {
    case "stall":
    case "late-answer":
      return make("DeadlineExceeded", "unknown")
    case "never-ending":
    case "exact-size":
      return make("ByteCeilingExceeded", "applied")
    case "lying-content-length":
      return fault.then === "hold"
        ? make("ByteCeilingExceeded", "applied")
        : make("TransportFailure", "unknown", { reason: "connection-closed" })
    case "close-mid-answer":
      if (row.transport === "legacy-sse") return make("TransportFailure", "unknown", { reason: "stream-ended" })
      if (row.server.startsWith("streamable-sse")) return make("ProtocolViolation", "unknown", { reason: "missing-response" })
      return make("ProtocolViolation", "unknown", { reason: "invalid-json" })
    case "reset-mid-answer":
      return make("TransportFailure", "unknown", { reason: "connection-closed" })
    case "refusal":
      return make("RemoteRefusal", "not-applied", { code: fault.code })
    case "wrong-id":
      return row.sharedStream
        ? make("DeadlineExceeded", "unknown", { dropped: 1 })
        : make("ProtocolViolation", "unknown", { reason: "missing-response" })
  }
}

/** The expected failure as the fields `checkFields` compares (without the drop count). */
export const expectedFields = ({ dropped: _, ...fields }: ExpectedFailure): Readonly<Record<string, unknown>> => fields

/**
 * The expected fields of a live discovery deadline, without the stage: the deadline counts from
 * the connect's start, so on a loaded machine (a child's start-up, a slow handshake) it may fall
 * at an earlier stage. The stage is proven under the TestClock, where only the stalled request's
 * wait is virtual.
 */
export const withoutStage = ({ stage: _, ...fields }: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> => fields
