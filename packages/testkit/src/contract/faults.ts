/**
 * The contract's faults: one name per misbehaviour, whatever the transport. A contract fault is
 * sited on a method and becomes one `Fault` of ../faults.ts, the vocabulary all three servers
 * accept; a framing that has no such fault (a TCP reset has no meaning on a pipe, a
 * `Content-Length` none on an SSE stream) says so through `faultRefusal`.
 */
import { type Fault, faultRefusal, type Framing } from "../faults.js"

export type ContractFault =
  /** The request arrives; no answer ever starts. */
  | { readonly kind: "stall" }
  /** The answer starts and never ends (64 KiB chunks until the client leaves). */
  | { readonly kind: "never-ending" }
  /** The answer (JSON body, SSE event block or stdio line) is exactly `bytes` bytes, in 7-byte writes. */
  | { readonly kind: "exact-size"; readonly bytes: number }
  /** Half of the answer, then its stream ends cleanly (stdio: the child exits). */
  | { readonly kind: "close-mid-answer" }
  /** Half of the answer, then the TCP connection is reset. */
  | { readonly kind: "reset-mid-answer" }
  /** A JSON-RPC error answer (its message and data may echo secrets). */
  | { readonly kind: "refusal"; readonly code: number; readonly message: string; readonly data?: unknown }
  /** The answer carries another id. */
  | { readonly kind: "wrong-id" }
  /** The normal answer, `ms` milliseconds late. */
  | { readonly kind: "late-answer"; readonly ms: number }
  /** A JSON answer of `bytes` bytes under `Content-Length: declared`, then the connection held or closed. */
  | { readonly kind: "lying-content-length"; readonly declared: number; readonly bytes: number; readonly then: "hold" | "close" }

export type ContractFaultKind = ContractFault["kind"]

/** Where a fault applies: the last request of discovery (tools/list) or a tool call. */
export type Site = "discovery" | "call"

export interface SitedFault {
  readonly site: Site
  readonly fault: ContractFault
  /** How many matching requests it applies to (default 1). */
  readonly times?: number
}

export const methodOf = (site: Site): string => site === "discovery" ? "tools/list" : "tools/call"

/** The one `Fault` a sited contract fault is, on every framing. */
export const sitedFault = (sited: SitedFault): Fault => {
  const base = { on: methodOf(sited.site), times: sited.times ?? 1 }
  const fault = sited.fault
  switch (fault.kind) {
    case "stall":
      return { ...base, kind: "never-answer" }
    case "never-ending":
      return { ...base, kind: "never-ending" }
    case "exact-size":
      return { ...base, kind: "exact-size", bytes: fault.bytes, chunkSize: 7 }
    case "close-mid-answer":
      return { ...base, kind: "cut-mid-answer", how: "end" }
    case "reset-mid-answer":
      return { ...base, kind: "cut-mid-answer", how: "reset" }
    case "refusal":
      return { ...base, kind: "jsonrpc-error", code: fault.code, message: fault.message, data: fault.data }
    case "wrong-id":
      return { ...base, kind: "wrong-id" }
    case "late-answer":
      return { ...base, kind: "delay", ms: fault.ms }
    case "lying-content-length":
      return { ...base, kind: "lying-content-length", declared: fault.declared, bytes: fault.bytes, then: fault.then }
  }
}

/** The sited fault on `framing`, or undefined where that framing has no such fault. */
export const faultOn = (framing: Framing, sited: SitedFault): Fault | undefined => {
  const fault = sitedFault(sited)
  return faultRefusal(fault, framing) === undefined ? fault : undefined
}

export const streamableFault = (sited: SitedFault): Fault | undefined => faultOn("streamable-http", sited)
export const legacyFault = (sited: SitedFault): Fault | undefined => faultOn("legacy-sse", sited)
export const stdioFault = (sited: SitedFault): Fault | undefined => faultOn("stdio", sited)
