/**
 * The shared vocabulary of faults: one name per misbehaviour, whatever the transport. Each row
 * translates a fault into its own server's script, or says it has no such fault (a TCP reset
 * has no meaning on a pipe, a `Content-Length` none on an SSE stream).
 */
import type { Fault } from "../faults.js"
import type { LegacyResponseFault } from "../legacyFaults.js"
import type { StdioMethodFault } from "../StdioServer.js"

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

export const streamableFault = (sited: SitedFault): Fault | undefined => {
  const base = { on: methodOf(sited.site), times: sited.times ?? 1 }
  const fault = sited.fault
  switch (fault.kind) {
    case "stall":
      return { ...base, kind: "headers-never-sent" }
    case "never-ending":
      return { ...base, kind: "never-ending-body" }
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

export const legacyFault = (sited: SitedFault): LegacyResponseFault | undefined => {
  const base = { on: methodOf(sited.site), times: sited.times ?? 1 }
  const fault = sited.fault
  switch (fault.kind) {
    case "stall":
      return { ...base, kind: "no-response" }
    case "never-ending":
      return { ...base, kind: "never-ending-frame" }
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
      return undefined // the answers travel on the GET stream, which has no length
  }
}

export const stdioFault = (sited: SitedFault): StdioMethodFault | undefined => {
  const base = { on: methodOf(sited.site), times: sited.times ?? 1 }
  const fault = sited.fault
  switch (fault.kind) {
    case "stall":
      return { ...base, kind: "never-answer" }
    case "never-ending":
      return { ...base, kind: "never-ending-line" }
    case "exact-size":
      return { ...base, kind: "exact-size", bytes: fault.bytes, chunkSize: 7 }
    case "close-mid-answer":
      return { ...base, kind: "exit-mid-answer" }
    case "refusal":
      return { ...base, kind: "jsonrpc-error", code: fault.code, message: fault.message, data: fault.data }
    case "wrong-id":
      return { ...base, kind: "wrong-id" }
    case "late-answer":
      return { ...base, kind: "delay", ms: fault.ms }
    case "reset-mid-answer":
    case "lying-content-length":
      return undefined // a pipe has neither
  }
}
