/**
 * The fallback rules of negotiation, as pure functions of the failure (docs/DESIGN.md,
 * "Negotiation"): when the handshake era may follow a failed stateless probe, and when legacy
 * HTTP+SSE may follow a failed handshake over Streamable HTTP. The end-to-end suites prove the
 * same rules against real servers.
 */
import { describe, expect, it } from "vitest"
import * as Failures from "../../src/internal/failures.js"
import { handshakeFallback, legacyHttpFallback, statelessRetry } from "../../src/internal/negotiation.js"
import { McpSchema } from "../../src/index.js"
import type { Exchange } from "../../src/internal/transport/transport.js"

const at = (stage: Exchange["stage"]): Exchange => ({ stage, phase: "discovery", budget: { timeoutMs: 1_000, maxBytes: 1_000 } })
const refusal = (stage: Exchange["stage"], code: number, data?: unknown, status = 400) =>
  Failures.remoteRefusal(at(stage), code, "refused", { status }, { code, message: "refused", data })

const all = McpSchema.supportedRevisions
const followsProbe = handshakeFallback(all)

describe("handshakeFallback: after a failed server/discover", () => {
  it("follows a refusal no stateless server gives (2025 servers: -32000, -32601, -32600)", () => {
    for (const code of [-32000, -32601, -32600, -32602]) expect(followsProbe(refusal("discover", code))).toBe(true)
  })

  it("does not follow the stateless revision's own errors", () => {
    expect(followsProbe(refusal("discover", -32020))).toBe(false)
    expect(followsProbe(refusal("discover", -32021))).toBe(false)
    expect(followsProbe(refusal("discover", -32022, { supported: ["2026-07-28"] }))).toBe(false)
  })

  it("follows a -32022 naming a handshake revision the client may speak, and only then", () => {
    expect(followsProbe(refusal("discover", -32022, { supported: ["2025-06-18"] }))).toBe(true)
    expect(handshakeFallback(["2026-07-28", "2025-11-25"])(refusal("discover", -32022, { supported: ["2025-06-18"] })))
      .toBe(false)
    expect(followsProbe(refusal("discover", -32022, { supported: "2025-06-18" }))).toBe(false)
    expect(followsProbe(refusal("discover", -32022))).toBe(false)
  })

  it("follows 400, 404 and 405 without a JSON-RPC body; never 401, 403 or 5xx", () => {
    for (const status of [400, 404, 405]) expect(followsProbe(Failures.httpStatus(at("discover"), status))).toBe(true)
    for (const status of [401, 403, 500, 502, 503]) expect(followsProbe(Failures.httpStatus(at("discover"), status))).toBe(false)
  })

  it("follows an answer that is no discovery result, or none in the probe's wait; never a broken one", () => {
    expect(followsProbe(Failures.protocol(at("discover"), "invalid-result"))).toBe(true)
    expect(followsProbe(Failures.protocol(at("discover"), "missing-response"))).toBe(true)
    for (const reason of ["invalid-json", "invalid-utf8", "unexpected-content-type", "unknown-result-type"] as const) {
      expect(followsProbe(Failures.protocol(at("discover"), reason))).toBe(false)
    }
  })

  it("never follows a deadline, a transport failure, a byte ceiling, or anything after the probe", () => {
    expect(followsProbe(Failures.deadline(at("discover"), "unknown"))).toBe(false)
    expect(followsProbe(Failures.transport(at("discover"), "connection-failed", "not-sent"))).toBe(false)
    expect(followsProbe(Failures.ceiling(at("discover"), 1_001))).toBe(false)
    expect(followsProbe(refusal("list-tools", -32601))).toBe(false)
  })
})

describe("statelessRetry: over stdio, after initialize was refused", () => {
  it("probes once more only when -32022 names a stateless revision the client may speak", () => {
    expect(statelessRetry(all)(refusal("initialize", -32022, { supported: ["2026-07-28"] }))).toBe(true)
    expect(statelessRetry(["2025-11-25"])(refusal("initialize", -32022, { supported: ["2026-07-28"] }))).toBe(false)
    expect(statelessRetry(all)(refusal("initialize", -32022, { supported: ["2025-06-18"] }))).toBe(false)
    expect(statelessRetry(all)(refusal("initialize", -32601))).toBe(false)
    expect(statelessRetry(all)(refusal("discover", -32022, { supported: ["2026-07-28"] }))).toBe(false)
  })
})

describe("legacyHttpFallback: after a failed initialize over Streamable HTTP", () => {
  it("follows 400, 404 and 405 without a JSON-RPC body, at initialize only", () => {
    for (const status of [400, 404, 405]) {
      expect(legacyHttpFallback(Failures.httpStatus(at("initialize"), status))).toBe(true)
      expect(legacyHttpFallback(Failures.httpStatus(at("initialized"), status))).toBe(false)
    }
  })

  it("never follows a JSON-RPC refusal, 401, 403, 5xx, a deadline or a transport failure", () => {
    expect(legacyHttpFallback(refusal("initialize", -32600))).toBe(false)
    for (const status of [401, 403, 500]) expect(legacyHttpFallback(Failures.httpStatus(at("initialize"), status))).toBe(false)
    expect(legacyHttpFallback(Failures.deadline(at("initialize"), "unknown"))).toBe(false)
    expect(legacyHttpFallback(Failures.transport(at("initialize"), "connection-failed", "not-sent"))).toBe(false)
  })
})
