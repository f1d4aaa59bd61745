/**
 * Hostile completion results (docs/DESIGN.md, "Completion"; the harness of hostile.test.ts):
 * FastCheck generates what a hostile server answers to `completion/complete` and the testkit's
 * HostileServer serves it over Streamable HTTP (JSON and SSE answers) in both eras, and the
 * scripted stdio child (a child per case) in both eras. Each case is
 * generated with what the client must make of it, written from the spec, not from the client:
 *
 * - a valid result (0 to 100 values of any text, `total` and `hasMore` present or not, fields of
 *   later revisions): returned as sent;
 * - an invalid one (101 to 5,000 values, a value that is not a string, `total` or `hasMore` of
 *   the wrong type, no `completion` object): `ProtocolViolation` `invalid-result`, `applied`;
 * - one nested past the structure bound (inside the ceiling): `LimitExceeded` `maxDepth`;
 * - one past the call's byte ceiling (a value of 70 to 300 KB against 64 KiB):
 *   `ByteCeilingExceeded`;
 * - a JSON-RPC error that echoes a configured secret and a URL: `RemoteRefusal` whose public
 *   views carry neither.
 *
 * And for every case: it ends by its deadline plus the slack (P1), fails only typed (P2), leaks no
 * secret (P3), and the request arrived exactly once.
 */
import { describe, expect, it } from "@effect/vitest"
import { type HostileServer, hostileStdioCase, ID_PLACEHOLDER, messageAnswer, startHostileServer } from "@phasebound/testkit"
import { Cause, Effect, Exit, FastCheck as fc } from "effect"
import { afterAll, beforeAll } from "vitest"
import { McpClient, type McpSchema } from "../../src/index.js"
import { secretForm, SECRET_SLOT, withSecret } from "./arbitraries.js"
import {
  checkDeadline,
  checkNoPollution,
  checkNoSecret,
  checkTyped,
  fastCheck,
  HTTP_SECRETS,
  outcomeOf,
  platform,
  SECRETS,
  type SecretName,
  secretUrl,
  verdict
} from "./support.js"

const DEADLINE_MS = 2_000
const MAX_BYTES = 65_536

type Expected =
  | { readonly kind: "ok"; readonly completion: McpSchema.CompleteResult["completion"] }
  | { readonly kind: "invalid" }
  | { readonly kind: "deep" }
  | { readonly kind: "ceiling" }
  | { readonly kind: "refusal" }

interface Case {
  /** The JSON-RPC message, `__ID__` for the id and `__SECRET__` for the echoed secret. */
  readonly message: string
  readonly expected: Expected
  readonly summary: string
}

const resultMessage = (result: string) => `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"result":${result}}`

/** Any text a value may be: control characters, lone surrogates' replacements, every plane. */
const text = fc.oneof(fc.fullUnicodeString({ maxLength: 40 }), fc.string({ maxLength: 20 }), fc.constantFrom("", "\u0000", "\u001b[2J", "\u2028", "__proto__"))

const valid = (stateless: boolean): fc.Arbitrary<Case> =>
  fc.record({
    values: fc.array(text, { maxLength: 100 }),
    total: fc.option(fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true })), { nil: undefined }),
    hasMore: fc.option(fc.boolean(), { nil: undefined }),
    extra: fc.boolean(),
    resultType: fc.boolean()
  }).map(({ extra, hasMore, resultType, total, values }) => {
    const completion = { values, ...(total === undefined ? {} : { total }), ...(hasMore === undefined ? {} : { hasMore }) }
    const result = {
      completion: extra ? { ...completion, "x-later": { nested: [1, 2] } } : completion,
      ...(extra ? { _meta: { "x.example/hint": true } } : {}),
      ...(stateless && resultType ? { resultType: "complete" } : {})
    }
    return {
      message: resultMessage(JSON.stringify(result)),
      expected: { kind: "ok", completion: result.completion } as const,
      summary: `valid: ${values.length} values, total ${String(total)}, hasMore ${String(hasMore)}`
    }
  })

const invalid: fc.Arbitrary<Case> = fc.oneof(
  fc.integer({ min: 101, max: 5_000 }).map((n) => ({
    result: JSON.stringify({ completion: { values: Array.from({ length: n }, (_, i) => `v${i}`) } }),
    what: `${n} values`
  })),
  fc.tuple(fc.array(text, { maxLength: 99 }), fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.constant({}), fc.constant([])), fc.nat()).map(
    ([values, odd, at]) => {
      const mixed: Array<unknown> = [...values]
      mixed.splice(at % (values.length + 1), 0, odd)
      return { result: JSON.stringify({ completion: { values: mixed } }), what: `a value ${JSON.stringify(odd)}` }
    }
  ),
  fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.constant({}), fc.constant([1])).map((total) => ({
    result: JSON.stringify({ completion: { values: ["a"], total } }),
    what: `total ${JSON.stringify(total)}`
  })),
  fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.constant({})).map((hasMore) => ({
    result: JSON.stringify({ completion: { values: ["a"], hasMore } }),
    what: `hasMore ${JSON.stringify(hasMore)}`
  })),
  fc.oneof(fc.constant("null"), fc.constant("[]"), fc.constant("\"a\""), fc.constant("7"), fc.constant("{\"values\":\"a\"}"), fc.constant("{}")).map((
    completion
  ) => ({
    result: `{"completion":${completion}}`,
    what: `completion ${completion}`
  })),
  fc.constantFrom("{}", "{\"values\":[\"a\"]}").map((result) => ({ result, what: `result ${result}` }))
).map(({ result, what }) => ({ message: resultMessage(result), expected: { kind: "invalid" } as const, summary: `invalid: ${what}` }))

const deep: fc.Arbitrary<Case> = fc.integer({ min: 129, max: 30_000 }).map((levels) => ({
  message: resultMessage(`{"completion":{"values":[],"x":${"[".repeat(levels)}${"]".repeat(levels)}}}`),
  expected: { kind: "deep" },
  summary: `nested ${levels} deep`
}))

const oversized: fc.Arbitrary<Case> = fc.integer({ min: 70_000, max: 300_000 }).map((bytes) => ({
  message: resultMessage(JSON.stringify({ completion: { values: ["é".repeat(Math.floor(bytes / 2))] } })),
  expected: { kind: "ceiling" },
  summary: `a value of ${bytes} bytes`
}))

const refusal: fc.Arbitrary<Case> = fc.constantFrom(-32602, -32603, -32601, 1).map((code) => ({
  message:
    `{"jsonrpc":"2.0","id":${ID_PLACEHOLDER},"error":{"code":${code},"message":"no completion for ${SECRET_SLOT}, see https://evil.example/c?t=${SECRET_SLOT}","data":{"echo":"${SECRET_SLOT}"}}}`,
  expected: { kind: "refusal" },
  summary: `refusal ${code} echoing a secret`
}))

const completionCase = (stateless: boolean): fc.Arbitrary<Case> =>
  fc.oneof({ arbitrary: valid(stateless), weight: 3 }, { arbitrary: invalid, weight: 3 }, { arbitrary: deep, weight: 1 }, { arbitrary: oversized, weight: 1 }, {
    arbitrary: refusal,
    weight: 1
  })

/** What the case's outcome must be, beside the properties every case keeps. */
const checkExpected = (expected: Expected, exit: Exit.Exit<McpSchema.CompleteResult, unknown>): ReadonlyArray<string> => {
  const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
  const error = failure?._tag === "Some" ? (failure.value as Record<string, unknown>) : undefined
  switch (expected.kind) {
    case "ok": {
      if (Exit.isFailure(exit)) return [`expected the result, got ${error?.["_tag"]} ${error?.["reason"]}`]
      try {
        expect(exit.value.completion).toEqual(expected.completion)
        return []
      } catch {
        return ["the result differs from what the server sent"]
      }
    }
    case "invalid":
      return error?.["_tag"] === "ProtocolViolation" && error["reason"] === "invalid-result" && error["outcome"] === "applied" && error["stage"] === "complete"
        ? []
        : [`expected ProtocolViolation invalid-result applied, got ${JSON.stringify(error ?? "success")}`]
    case "deep":
      return error?.["_tag"] === "LimitExceeded" && error["limit"] === "maxDepth"
        ? []
        : [`expected LimitExceeded maxDepth, got ${JSON.stringify(error ?? "success")}`]
    case "ceiling":
      return error?.["_tag"] === "ByteCeilingExceeded" && error["stage"] === "complete"
        ? []
        : [`expected ByteCeilingExceeded, got ${JSON.stringify(error ?? "success")}`]
    case "refusal": {
      if (error?.["_tag"] !== "RemoteRefusal") return [`expected RemoteRefusal, got ${JSON.stringify(error ?? "success")}`]
      return /https?:|evil\.example/.test(JSON.stringify(error) + String(error)) ? ["the refusal's public views carry the server's URL"] : []
    }
  }
}

for (const era of ["stateless", "handshake"] as const) {
  for (const mode of ["json", "sse"] as const) {
    describe(`hostile completion results, ${era} era over Streamable HTTP (${mode})`, () => {
      let server: HostileServer
      beforeAll(async () => {
        server = await startHostileServer({ era, mode })
      })
      afterAll(() => server.close())

      const revision = era === "stateless" ? "2026-07-28" : "2025-11-25"
      const probe = era === "stateless"
        ? resultMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"completions":{}}}`)
        : resultMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"completions":{}},"serverInfo":{"name":"h","version":"1"}}`)

      it.live.prop(
        "each answer as the spec says (P1 deadline, P2 typed, P3 no secret), sent once",
        [completionCase(era === "stateless"), fc.constantFrom<SecretName>(...HTTP_SECRETS), secretForm],
        ([c, secret, form]) =>
          Effect.gen(function*() {
            server.reset()
            server.setScript((request) => {
              if (request.method === "server/discover" && era === "stateless") return messageAnswer(probe, mode)
              if (request.method === "initialize" && era === "handshake") return messageAnswer(probe, mode, [["mcp-session-id", "s"]])
              if (request.method === "completion/complete") return messageAnswer(withSecret(c.message, SECRETS[secret], form), mode)
              return "normal"
            })
            const started = performance.now()
            const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
              const connection = yield* McpClient.connect({
                url: secretUrl(server),
                headers: { "x-canary": SECRETS.header },
                revisions: [revision],
                transport: "streamable-http",
                policy: { discovery: { timeout: 10_000 }, call: { timeout: DEADLINE_MS, maxBytes: MAX_BYTES }, releaseTimeout: 500 }
              })
              const callStarted = performance.now()
              const called = yield* Effect.exit(connection.complete({ ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "" } }))
              return { called, elapsed: performance.now() - callStarted }
            })))
            const total = performance.now() - started
            if (Exit.isFailure(exit)) return verdict(`${era} ${mode}`, c.summary, [`the connection failed: ${outcomeOf(exit, total)}`], "")
            const { called, elapsed } = exit.value
            const arrived = server.requests.filter((request) => request.method === "completion/complete").length
            verdict(`${era} ${mode}`, c.summary, [
              ...checkExpected(c.expected, called),
              ...checkDeadline("the completion", elapsed, DEADLINE_MS),
              ...checkTyped("the completion", called),
              ...checkNoSecret("the completion", called, HTTP_SECRETS),
              ...checkNoPollution(),
              ...(arrived === 1 ? [] : [`the request arrived ${arrived} times`])
            ], outcomeOf(called, elapsed))
          }).pipe(Effect.provide(platform)),
        { timeout: 120_000, fastCheck: fastCheck(40) }
      )
    })
  }
}

// The same answers from the scripted stdio child, one per case, its environment holding the secret.
for (const era of ["stateless", "handshake"] as const) {
  describe(`hostile completion results, ${era} era over stdio`, () => {
    const revision = era === "stateless" ? "2026-07-28" : "2025-11-25"
    const probeMethod = era === "stateless" ? "server/discover" : "initialize"
    const probe = era === "stateless"
      ? resultMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"completions":{}}}`)
      : resultMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"completions":{}},"serverInfo":{"name":"h","version":"1"}}`)

    it.live.prop(
      "each answer as the spec says (P1 deadline, P2 typed, P3 no secret), sent once",
      [completionCase(era === "stateless"), secretForm],
      ([c, form]) =>
        Effect.gen(function*() {
          const child = hostileStdioCase({
            era,
            answers: {
              [probeMethod]: [{ text: `${probe}\n` }],
              "completion/complete": [{ text: `${withSecret(c.message, SECRETS.env, form)}\n` }]
            },
            env: { CANARY_TOKEN: SECRETS.env }
          })
          yield* Effect.addFinalizer(() => Effect.sync(() => child.cleanup()))
          const started = performance.now()
          const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
            const connection = yield* McpClient.connectStdio({
              command: child.command,
              args: child.args,
              env: child.env,
              revisions: [revision],
              policy: { discovery: { timeout: 10_000 }, call: { timeout: DEADLINE_MS, maxBytes: MAX_BYTES }, releaseTimeout: 500 }
            })
            const callStarted = performance.now()
            const called = yield* Effect.exit(connection.complete({ ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "" } }))
            return { called, elapsed: performance.now() - callStarted }
          })))
          const total = performance.now() - started
          if (Exit.isFailure(exit)) return verdict(`${era} stdio`, c.summary, [`the connection failed: ${outcomeOf(exit, total)}`], "")
          const { called, elapsed } = exit.value
          const arrived = child.received().filter((message) => message.method === "completion/complete").length
          verdict(`${era} stdio`, c.summary, [
            ...checkExpected(c.expected, called),
            ...checkDeadline("the completion", elapsed, DEADLINE_MS),
            ...checkTyped("the completion", called),
            ...checkNoSecret("the completion", called, ["env"]),
            ...checkNoPollution(),
            ...(arrived === 1 ? [] : [`the request arrived ${arrived} times`])
          ], outcomeOf(called, elapsed))
        }).pipe(Effect.scoped, Effect.provide(platform)),
      { timeout: 180_000, fastCheck: fastCheck(15) }
    )
  })
}
