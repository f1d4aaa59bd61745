/**
 * The era per origin (docs/DESIGN.md, "The era per origin"). The 2026-07-28 revision says the
 * era a server speaks is a property of the server, which a client SHOULD remember for the
 * server's origin (HTTP) or process (stdio), re-probing when the remembered era later fails.
 * So a discovery that negotiated (era, transport) for an origin records it here, and the next
 * discovery of that origin starts with that candidate: a 2025 Streamable HTTP server is no longer
 * sent a `server/discover` it refuses, a 2025 stdio server no longer waits out the probe.
 *
 * When the remembered candidate fails in a way that means the server changed (`serverChanged`),
 * the entry is forgotten and the whole negotiation runs from its first candidate, under the same
 * discovery deadline. Any other failure (401, 403, 5xx, a deadline, a transport failure, a
 * broken answer) ends the discovery as it would have anyway, and the entry stays: a server that
 * is down has not changed its era.
 *
 * Bounded (`maxOrigins`, least recently used first out), each entry for `maxAgeMs` at most (a
 * server that learns a new era while still answering the old one is probed again then), and
 * keyed by the origin's fingerprint (`internal/cacheService.ts`): no URL, path or query is kept.
 */
import type { McpConnectionError } from "../McpConnectionError.js"
import type * as McpSchema from "../McpSchema.js"
import type { EraName } from "./era.js"
import type { TransportKind } from "./transport/transport.js"
import { type Candidate, handshakeFallback, usableCandidates } from "./negotiation.js"

/** What a server spoke at its last discovery. */
export interface Remembered {
  readonly era: EraName
  readonly transport: TransportKind
}

export interface EraCache {
  /** The era remembered for the origin, if it was recorded less than `maxAgeMs` before `now`. */
  readonly get: (origin: string, now: number) => Remembered | undefined
  readonly set: (origin: string, remembered: Remembered, now: number) => void
  readonly forget: (origin: string) => void
  readonly clear: () => void
  readonly size: () => number
}

export const defaultMaxOrigins = 256
export const defaultMaxAgeMs = 60 * 60 * 1000

export const make = (maxOrigins: number = defaultMaxOrigins, maxAgeMs: number = defaultMaxAgeMs): EraCache => {
  const entries = new Map<string, { readonly remembered: Remembered; readonly at: number }>()
  return {
    get: (origin, now) => {
      const found = entries.get(origin)
      if (found === undefined) return undefined
      entries.delete(origin)
      if (now - found.at >= maxAgeMs) return undefined
      entries.set(origin, found)
      return found.remembered
    },
    set: (origin, remembered, now) => {
      entries.delete(origin)
      entries.set(origin, { remembered, at: now })
      for (const oldest of entries.keys()) {
        if (entries.size <= maxOrigins) break
        entries.delete(oldest)
      }
    },
    forget: (origin) => void entries.delete(origin),
    clear: () => entries.clear(),
    size: () => entries.size
  }
}

const endpointProblems: ReadonlySet<string> = new Set(["missing-endpoint", "bad-endpoint", "unexpected-content-type", "missing-response"])
const unanswered: ReadonlySet<string> = new Set(["missing-response", "invalid-result"])

/**
 * Whether the failure of a remembered candidate means the server speaks another era or
 * transport now: its opening request refused as a server of another era refuses it.
 *
 * - `initialize` (the handshake remembered): any JSON-RPC error (a 2026-only server names the
 *   revisions it supports there), a 400, 404 or 405 without one (a legacy HTTP+SSE server, or a
 *   stateless one that wants its headers), or no answer that is an `initialize` result;
 * - `server/discover` (the stateless era remembered): what makes the handshake follow in a first
 *   negotiation (`handshakeFallback`);
 * - the legacy `endpoint`: a 400, 404 or 405, or a stream without a usable `endpoint`.
 *
 * Never 401, 403, 5xx, a deadline, a transport failure (the server is down, not changed) or a
 * byte ceiling.
 */
export const serverChanged = (revisions: ReadonlyArray<McpSchema.Revision>) => (error: McpConnectionError): boolean => {
  const statusRefusal = error._tag === "UpstreamFailure" && (error.status === 400 || error.status === 404 || error.status === 405)
  switch (error.stage) {
    case "initialize":
      return error._tag === "RemoteRefusal" || statusRefusal ||
        (error._tag === "ProtocolViolation" && error.reason !== undefined && unanswered.has(error.reason))
    case "discover":
      return handshakeFallback(revisions)(error)
    case "endpoint":
      return statusRefusal || (error._tag === "ProtocolViolation" && error.reason !== undefined && endpointProblems.has(error.reason))
    default:
      return false
  }
}

/**
 * The candidates of a discovery, the remembered one first: when it fails and the server
 * changed, the entry is forgotten (`onChanged`) and every candidate follows in its own order
 * (the full negotiation); otherwise its failure ends the discovery. Unchanged when nothing is
 * remembered, when the remembered candidate is first anyway, or when the caller's transport or
 * revisions leave it out.
 */
export const ordered = <R>(
  candidates: ReadonlyArray<Candidate<R>>,
  remembered: Remembered | undefined,
  revisions: ReadonlyArray<McpSchema.Revision>,
  onChanged: () => void
): ReadonlyArray<Candidate<R>> => {
  if (remembered === undefined) return candidates
  const usable = usableCandidates(candidates, revisions)
  const index = usable.findIndex((candidate) => candidate.era.name === remembered.era && candidate.opener.kind === remembered.transport)
  if (index <= 0) return candidates
  const changed = serverChanged(revisions)
  return [
    { ...usable[index]!, follows: () => false },
    ...usable.map((candidate, i) =>
      i === 0
        ? {
          ...candidate,
          follows: (error: McpConnectionError) => {
            if (!changed(error)) return false
            onChanged()
            return true
          }
        }
        : candidate
    )
  ]
}
