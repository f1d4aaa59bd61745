import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { McpConnectionError } from "../src/index.js"

const fields: McpConnectionError.PublicFields = {
  stage: "call",
  phase: "call",
  limits: { timeoutMs: 1000, maxBytes: 64 },
  observedBytes: 65,
  status: 200,
  outcome: "applied",
  retryable: false
}

describe("McpConnectionError", () => {
  const secretCause = new Error("GET https://user:hunter2@example.test/mcp?token=s3cr3t failed: body {\"x\":1}")
  const error = new McpConnectionError.ByteCeilingExceeded(fields, secretCause)

  it("derives its message from typed fields", () => {
    expect(error.message).toBe(
      "byte ceiling exceeded, stage call, phase call, HTTP 200, read 65 bytes, limits 1000 ms / 64 bytes, outcome applied"
    )
    expect(String(error)).toBe(`ByteCeilingExceeded: ${error.message}`)
    expect(error.name).toBe("ByteCeilingExceeded")
    expect(error).toBeInstanceOf(Error)
  })

  it("keeps the cause in process, non-enumerable", () => {
    expect(error.cause).toBe(secretCause)
    expect(Object.keys(error)).not.toContain("cause")
    expect(Object.getOwnPropertyDescriptor(error, "cause")?.enumerable).toBe(false)
    const serialized = JSON.stringify(error)
    expect(serialized).not.toContain("hunter2")
    expect(serialized).not.toContain("s3cr3t")
    expect(serialized).not.toContain("stack")
    expect({ ...error }).not.toHaveProperty("cause")
  })

  it("serializes to the public record", () => {
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      tag: "ByteCeilingExceeded",
      stage: "call",
      phase: "call",
      limits: { timeoutMs: 1000, maxBytes: 64 },
      observedBytes: 65,
      status: 200,
      outcome: "applied",
      retryable: false
    })
    expect(McpConnectionError.toRecord(error)).toEqual(JSON.parse(JSON.stringify(error)))
  })

  it("withAttempts: the same class, fields and cause, with the attempts copied into the record", () => {
    const upstream = new McpConnectionError.UpstreamFailure(
      { stage: "endpoint", phase: "discovery", limits: { timeoutMs: 1000, maxBytes: 64 }, status: 404, outcome: "not-applied", retryable: false },
      secretCause
    )
    const attempts = [
      McpConnectionError.attemptOf("stateless", "streamable-http", new McpConnectionError.UpstreamFailure({ ...fields, stage: "discover", status: 404 })),
      McpConnectionError.attemptOf("handshake", "sse", upstream)
    ]
    // Only the attempt's public fields, whatever else the error carries.
    expect(attempts[0]).toEqual({ era: "stateless", transport: "streamable-http", tag: "UpstreamFailure", stage: "discover", status: 404 })
    const withAttempts = McpConnectionError.withAttempts(upstream, attempts)
    expect(withAttempts).toBeInstanceOf(McpConnectionError.UpstreamFailure)
    expect(withAttempts.cause).toBe(secretCause)
    expect(withAttempts.message).toContain("after 2 attempts")
    const record = McpConnectionError.toRecord(withAttempts)
    expect(Object.keys(record)).toEqual(["tag", "stage", "phase", "limits", "status", "attempts", "outcome", "retryable"])
    expect(record.attempts).toEqual(attempts)
    // Copies, never shared with the caller's array or objects.
    expect(record.attempts).not.toBe(withAttempts.attempts)
    expect(record.attempts![0]).not.toBe(attempts[0])
    expect(JSON.parse(JSON.stringify(withAttempts))).toEqual(record)
    expect(JSON.stringify(withAttempts)).not.toContain("hunter2")
  })

  it("is a yieldable, catchable tagged error", () => {
    const exit = Effect.runSyncExit(Effect.gen(function*() {
      return yield* error
    }).pipe(Effect.catchTag("ByteCeilingExceeded", (e) => Effect.succeed(e.observedBytes))))
    expect(exit).toEqual(Exit.succeed(65))
    expect(McpConnectionError.isMcpConnectionError(error)).toBe(true)
    expect(McpConnectionError.isMcpConnectionError(new Error("x"))).toBe(false)
  })

  it("has one class per documented tag", () => {
    const tags = [
      McpConnectionError.InvalidOption,
      McpConnectionError.DeadlineExceeded,
      McpConnectionError.ByteCeilingExceeded,
      McpConnectionError.Unauthorized,
      McpConnectionError.Forbidden,
      McpConnectionError.UpstreamFailure,
      McpConnectionError.RemoteRefusal,
      McpConnectionError.ProtocolViolation,
      McpConnectionError.TransportFailure,
      McpConnectionError.SessionExpired,
      McpConnectionError.LimitExceeded
    ].map((C) => new C(fields)._tag)
    expect(tags).toEqual([
      "InvalidOption",
      "DeadlineExceeded",
      "ByteCeilingExceeded",
      "Unauthorized",
      "Forbidden",
      "UpstreamFailure",
      "RemoteRefusal",
      "ProtocolViolation",
      "TransportFailure",
      "SessionExpired",
      "LimitExceeded"
    ])
  })

  it("secretsOf covers header values, userinfo (also as the Basic token built from it) and query values", () => {
    const secrets = McpConnectionError.secretsOf(new URL("http://alice:s%40cret@host/mcp?token=tok123"), {
      "x-api-key": "Bearer key-123"
    })
    for (const expected of ["Bearer key-123", "key-123", "alice", "s%40cret", "s@cret", "tok123", btoa("alice:s@cret")]) {
      expect(secrets).toContain(expected)
    }
    expect(McpConnectionError.redact(`Basic ${btoa("alice:s@cret")} and tok123`, secrets)).toBe("Basic [redacted] and [redacted]")
  })

  describe("sanitizeRemoteMessage", () => {
    it("redacts configured secrets, URLs and control characters, and cuts to 512", () => {
      const text = McpConnectionError.sanitizeRemoteMessage(
        "bad token Bearer-abc123XYZ\nsee https://u:p@host/x?k=v\u0007 for details",
        ["Bearer-abc123XYZ"]
      )
      expect(text).toBe("bad token [redacted] see [url]  for details")
      expect(McpConnectionError.sanitizeRemoteMessage("x".repeat(2000), [])).toHaveLength(512)
      expect(McpConnectionError.sanitizeRemoteMessage(42, [])).toBeUndefined()
    })
    it("redacts a secret before cutting, so no prefix of it survives", () => {
      const secret = "SECRET-" + "z".repeat(40)
      const text = McpConnectionError.sanitizeRemoteMessage("a".repeat(500) + secret, [secret])!
      expect(text).not.toContain("SECRET-zzz")
    })
  })
})
