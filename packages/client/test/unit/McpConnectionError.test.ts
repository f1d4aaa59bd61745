import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, Schema } from "effect"
// The testkit does not depend on the client: its list of public fields is compared here.
import { PUBLIC_FIELDS } from "../../../testkit/src/contract/families/redaction.js"
import { McpConnectionError } from "../../src/index.js"

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
    const exit = Effect.runSyncExit(
      Effect.gen(function*() {
        return yield* error
      }).pipe(Effect.catchTag("ByteCeilingExceeded", (e) => Effect.succeed(e.observedBytes)))
    )
    expect(exit).toEqual(Exit.succeed(65))
    expect(McpConnectionError.isMcpConnectionError(error)).toBe(true)
    expect(McpConnectionError.isMcpConnectionError(new Error("x"))).toBe(false)
  })

  it("has one class per tag, each a member of the union's Schema", () => {
    const members = McpConnectionError.McpConnectionError.members
    expect(members.map((Class) => Class._tag)).toEqual(McpConnectionError.Tag.literals)
    for (const Class of members) {
      const instance = new Class(fields)
      expect(instance._tag).toBe(Class._tag)
      expect(instance.name).toBe(Class._tag)
      expect(McpConnectionError.isMcpConnectionError(instance)).toBe(true)
    }
  })

  it("keeps only the limits' own fields, and never shares the caller's limits", () => {
    const budget = { timeoutMs: 1000, maxBytes: 64, idleTimeoutMs: 50, attempt: 3 }
    const deadline = new McpConnectionError.DeadlineExceeded({ ...fields, limits: budget, reason: "idle-timeout", outcome: "unknown" })
    expect(deadline.limits).toEqual({ timeoutMs: 1000, maxBytes: 64, idleTimeoutMs: 50 })
    expect(deadline.limits).not.toBe(budget)
    expect(McpConnectionError.toRecord(deadline).limits).not.toBe(deadline.limits)
    expect(deadline.message).toContain("limits 1000 ms / 64 bytes, idle 50 ms")
  })

  it("does not validate when constructed (a failure path never fails again), only when decoded", () => {
    const odd = { ...fields, stage: "no-such-stage" } as unknown as McpConnectionError.PublicFields
    const error = new McpConnectionError.ProtocolViolation(odd)
    expect(error.stage).toBe("no-such-stage")
    const encoded = { ...McpConnectionError.toRecord(new McpConnectionError.ProtocolViolation(fields)), _tag: "ProtocolViolation" }
    expect(Schema.decodeUnknownEither(McpConnectionError.McpConnectionError)(encoded)._tag).toBe("Right")
    expect(Schema.decodeUnknownEither(McpConnectionError.McpConnectionError)({ ...encoded, stage: "no-such-stage" })._tag).toBe("Left")
    expect(Schema.decodeUnknownEither(McpConnectionError.McpConnectionError)({ ...encoded, _tag: "NoSuchError" })._tag).toBe("Left")
  })

  describe("the Schema of the union", () => {
    const limits = { timeoutMs: 1000, maxBytes: 64 }
    const base = { limits, outcome: "not-applied", retryable: false } as const
    /** One error of every tag, each with the fields its call sites give it. */
    const samples: ReadonlyArray<McpConnectionError.McpConnectionError> = [
      new McpConnectionError.InvalidOption({
        ...base,
        stage: "config",
        phase: "discovery",
        option: "discovery.timeout",
        reason: "not-positive",
        outcome: "not-sent"
      }),
      new McpConnectionError.DeadlineExceeded({
        ...base,
        stage: "call",
        phase: "call",
        limits: { ...limits, idleTimeoutMs: 10 },
        reason: "idle-timeout",
        outcome: "unknown"
      }),
      new McpConnectionError.ByteCeilingExceeded({ ...base, stage: "call", phase: "call", observedBytes: 65, status: 200, outcome: "applied" }),
      new McpConnectionError.Unauthorized({ ...base, stage: "list-tools", phase: "discovery", status: 401 }),
      new McpConnectionError.Forbidden({ ...base, stage: "call", phase: "call", status: 403 }),
      new McpConnectionError.AuthorizationFailed({
        ...base,
        stage: "connect",
        phase: "authorization",
        authorizationStep: "token",
        reason: "invalid-grant",
        oauthError: "invalid_grant",
        status: 400,
        outcome: "not-sent"
      }),
      new McpConnectionError.UpstreamFailure({
        ...base,
        stage: "discover",
        phase: "discovery",
        status: 404,
        attempts: [
          { era: "stateless", transport: "streamable-http", tag: "UpstreamFailure", stage: "discover", status: 404 },
          { era: "handshake", transport: "sse", tag: "UpstreamFailure", stage: "endpoint", status: 404 }
        ]
      }),
      new McpConnectionError.RemoteRefusal({ ...base, stage: "call", phase: "call", code: -32602, remoteMessage: "bad arguments [redacted]", status: 200 }),
      new McpConnectionError.ProtocolViolation({ ...base, stage: "initialize", phase: "discovery", reason: "undeclared-capability", capability: "sampling" }),
      new McpConnectionError.TransportFailure({
        ...base,
        stage: "connect",
        phase: "discovery",
        reason: "process-exited",
        exitCode: 3,
        outcome: "unknown",
        retryable: true
      }),
      new McpConnectionError.SessionExpired({ ...base, stage: "call", phase: "call", status: 404, retryable: true }),
      new McpConnectionError.LimitExceeded({ ...base, stage: "list-tools", phase: "discovery", limit: "maxTools", observedBytes: 4096, outcome: "applied" }),
      new McpConnectionError.HandlerFailed({ ...base, stage: "call", phase: "call", capability: "elicitation" }),
      new McpConnectionError.InternalError({ ...base, stage: "ping", phase: "session", reason: "defect", outcome: "unknown" }),
      new McpConnectionError.UrlElicitationRequired({
        ...base,
        stage: "call",
        phase: "call",
        code: -32042,
        remoteMessage: "open [url]",
        status: 200,
        retryable: true
      })
    ]
    const encode = Schema.encodeSync(McpConnectionError.McpConnectionError)
    const decode = Schema.decodeUnknownSync(McpConnectionError.McpConnectionError)

    it("covers every tag", () => {
      expect(samples.map((error) => error._tag)).toEqual(McpConnectionError.Tag.literals)
    })

    it.each(samples.map((error) => [error._tag, error] as const))("%s: encodes to its public fields, decodes to its class", (_, error) => {
      const Class = error.constructor as new(fields: McpConnectionError.PublicFields, cause?: unknown) => typeof error
      const withCause = new Class(error, secretCause)
      expect(withCause.cause).toBe(secretCause)
      const encoded = encode(withCause)
      // The public fields and the tag, nothing else: no cause, message, name or stack.
      const { tag, ...publicFields } = McpConnectionError.toRecord(withCause)
      expect(encoded).toEqual({ _tag: tag, ...publicFields })
      const persisted = JSON.stringify(encoded)
      expect(persisted).not.toContain("hunter2")
      expect(persisted).not.toContain("cause")

      const decoded = decode(JSON.parse(persisted))
      expect(decoded).toBeInstanceOf(error.constructor)
      expect(decoded).toBeInstanceOf(Error)
      expect(decoded._tag).toBe(error._tag)
      expect(decoded.message).toBe(error.message)
      expect(String(decoded)).toBe(String(error))
      expect(decoded.toJSON()).toEqual(error.toJSON())
      expect(Object.keys(decoded.toJSON())).toEqual(Object.keys(error.toJSON()))
      // Decoded, it has no cause: the cause never left the process.
      expect(decoded.cause).toBeUndefined()
      expect(Object.keys(decoded)).not.toContain("cause")
    })
  })

  it("the testkit's redaction family allows exactly the public fields and the tag", () => {
    expect([...PUBLIC_FIELDS].sort()).toEqual(["_tag", ...Object.keys(McpConnectionError.PublicFields.fields)].sort())
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
    it("works on a 64 KiB window of a huge message, and what the window cut cannot leak a secret's start", () => {
      const secret = "SECRET-" + "z".repeat(40)
      // 16 MiB of text: the result is still the first 512 characters, redacted.
      const huge = McpConnectionError.sanitizeRemoteMessage(`${secret} ${"x".repeat(16 * 1024 * 1024)}`, [secret])!
      expect(huge).toHaveLength(512)
      expect(huge.startsWith("[redacted] x")).toBe(true)
      // A URL shrinks to `[url]` and brings the window's end into view, where the cut split the secret.
      const url = `https://h.example/${"p".repeat(64 * 1024 - 30 - 201)}`
      const straddling = `${url} ${"w".repeat(200)} ${secret}`
      expect(straddling.indexOf(secret)).toBeLessThan(64 * 1024)
      expect(straddling.indexOf(secret) + secret.length).toBeGreaterThan(64 * 1024)
      const text = McpConnectionError.sanitizeRemoteMessage(straddling, [secret])!
      expect(text).not.toContain("SECRET")
      // What comes before the guard at the window's end is kept.
      expect(text.startsWith("[url] www")).toBe(true)
    })

    it("redacts a secret before cutting, so no prefix of it survives", () => {
      const secret = "SECRET-" + "z".repeat(40)
      const text = McpConnectionError.sanitizeRemoteMessage("a".repeat(500) + secret, [secret])!
      expect(text).not.toContain("SECRET-zzz")
    })

    it("redacts a cookie's value alone, and each name=value part of a header", () => {
      const secrets = McpConnectionError.secretsOf(undefined, { cookie: "session=SESSION-abc123; theme=OTHER-val" })
      for (const message of ["bad session SESSION-abc123", "cookie session=SESSION-abc123 expired", "theme OTHER-val?"]) {
        const text = McpConnectionError.sanitizeRemoteMessage(message, secrets)!
        expect(text).not.toContain("SESSION-abc123")
        expect(text).not.toContain("OTHER-val")
        expect(text).toContain("[redacted]")
      }
    })

    it("redacts a secret path segment quoted without its scheme; short segments are route names", () => {
      const secrets = McpConnectionError.secretsOf(new URL("https://h.example/mcp/TOKEN123/x"), {})
      const text = McpConnectionError.sanitizeRemoteMessage("no route /mcp/TOKEN123/x (try h.example/mcp/TOKEN123)", secrets)!
      expect(text).not.toContain("TOKEN123")
      expect(text).toBe("no route /mcp/[redacted]/x (try h.example/mcp/[redacted])")
    })

    it("redacts a query secret percent-encoded, in either case, or form-encoded", () => {
      const secrets = McpConnectionError.secretsOf(new URL("https://h.example/mcp?key=a%20b-c0ffee&sig=s3cr3t%2F%2B%3D"), {})
      for (const echoed of ["a%20b-c0ffee", "a b-c0ffee", "a+b-c0ffee", "s3cr3t%2F%2B%3D", "s3cr3t%2f%2b%3d", "s3cr3t/+=", "s3cr3t%2F+="]) {
        const text = McpConnectionError.sanitizeRemoteMessage(`bad key ${echoed}.`, secrets)!
        expect(text, echoed).toBe("bad key [redacted].")
      }
    })

    it("redacts a secret split by control characters (they are stripped first)", () => {
      for (const echoed of ["SEC\u0000RET-42x", "SEC\nRET-42x", "S\rE\tC\u007fR\u009bET-42x", "SEC\u200bRET-42x"]) {
        const text = McpConnectionError.sanitizeRemoteMessage(`token ${echoed} refused`, ["SECRET-42x"])!
        expect(text, JSON.stringify(echoed)).toBe("token [redacted] refused")
      }
      // A space of the secret sent as a newline.
      expect(McpConnectionError.sanitizeRemoteMessage("x ab\ncd-efgh y", ["ab cd-efgh"])).toBe("x [redacted] y")
    })

    it("redacts a secret quoted JSON-escaped (a message that embeds a JSON body)", () => {
      const secret = "s3cr3t/\"x\\é"
      const escaped = [
        JSON.stringify(secret).slice(1, -1),
        "s3cr3t\\/\\\"x\\\\\\u00e9",
        Array.from(secret, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`).join("")
      ]
      for (const echoed of escaped) {
        expect(McpConnectionError.sanitizeRemoteMessage(`{"error":"${echoed}"}`, [secret]), echoed).toBe(`{"error":"[redacted]"}`)
      }
    })

    it("redacts base64 and base64url forms", () => {
      const secrets = McpConnectionError.secretValues(["tok?>?>-secret"])
      const base64 = btoa("tok?>?>-secret")
      const base64url = base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
      expect(base64).not.toBe(base64url)
      for (const echoed of [base64, base64url]) {
        expect(McpConnectionError.sanitizeRemoteMessage(`got ${echoed}`, secrets)).toBe("got [redacted]")
      }
    })

    const printable = fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
      minLength: 8,
      maxLength: 24
    })
    const noise = fc.string({ unit: fc.constantFrom("a", "b", " ", "/", "=", ";", "%", "\n", "é", "x"), maxLength: 40 })
    const percentEncoded = (secret: string, lower: boolean) => {
      const all = Array.from(new TextEncoder().encode(secret), (byte) => `%${byte.toString(16).padStart(2, "0")}`).join("")
      return lower ? all : all.toUpperCase()
    }
    const jsonEscaped = (secret: string) => Array.from(secret, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")
    const base64urlOf = (secret: string) => btoa(secret).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
    /** Every form a secret travels in, and a message's way of carrying it. */
    const embeddings = (secret: string, split: number, control: string): ReadonlyArray<string> => [
      secret,
      encodeURIComponent(secret),
      percentEncoded(secret, true),
      percentEncoded(secret, false),
      secret.slice(0, split) + control + secret.slice(split),
      `sid=${secret}; other=1`,
      `/mcp/${encodeURIComponent(secret)}/tools`,
      btoa(secret),
      base64urlOf(secret),
      JSON.stringify(secret).slice(1, -1),
      jsonEscaped(secret)
    ]

    it.prop(
      "for any secret (cookie value, path segment or query value) and any embedding, no travelling form survives",
      [printable, noise, noise, fc.nat(), fc.constantFrom("\u0000", "\n", "\r\n", "\u001b", "\u2028", "\u200b"), fc.constantFrom("cookie", "path", "query")],
      ([secret, before, after, at, control, where]) => {
        const secrets = where === "cookie"
          // A cookie value is percent-encoded where its octets do not allow the secret as it is.
          ? McpConnectionError.secretsOf(undefined, { cookie: `sid=${encodeURIComponent(secret)}; theme=dark` })
          : where === "path"
          ? McpConnectionError.secretsOf(new URL(`https://h.example/mcp/${encodeURIComponent(secret)}/tools`), {})
          : McpConnectionError.secretsOf(new URL(`https://h.example/mcp?key=${encodeURIComponent(secret)}`), {})
        const forms = embeddings(secret, 1 + (at % (secret.length - 1)), control)
        const message = `${before}${forms.join(` ${before} `)}${after}`
        const text = McpConnectionError.sanitizeRemoteMessage(message, secrets)!
        expect(text.length).toBeLessThanOrEqual(512)
        expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/)
        const travelling = [
          secret,
          encodeURIComponent(secret),
          percentEncoded(secret, true),
          percentEncoded(secret, false),
          btoa(secret),
          base64urlOf(secret),
          jsonEscaped(secret)
        ]
        for (const form of travelling) expect(text).not.toContain(form)
        // Nor with the invisible characters taken out (as a display would).
        expect(text.replace(/ /g, "")).not.toContain(secret.replace(/ /g, ""))
      },
      { fastCheck: { numRuns: 300 } }
    )
  })
})
