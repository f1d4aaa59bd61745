import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Redacted } from "effect"
import { createHash } from "node:crypto"
import { inspect } from "node:util"
import {
  codeChallengeMethod,
  codeChallengeOf,
  isCodeVerifier,
  makeCodeVerifier,
  makePkce,
  makeState,
  requireS256
} from "../../src/internal/oauth/pkce.js"

// RFC 7636 Appendix B.
const rfcOctets = [
  116,
  24,
  223,
  180,
  151,
  153,
  224,
  37,
  79,
  250,
  96,
  125,
  216,
  173,
  187,
  186,
  22,
  212,
  37,
  77,
  105,
  214,
  191,
  240,
  91,
  88,
  5,
  88,
  83,
  132,
  141,
  121
]
const rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
const rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

const base64UrlAlphabet = /^[A-Za-z0-9_-]+$/
const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("PKCE S256 (RFC 7636)", () => {
  it.effect("gives the challenge of the RFC 7636 Appendix B verifier", () =>
    Effect.gen(function*() {
      expect(yield* codeChallengeOf(Redacted.make(rfcVerifier))).toBe(rfcChallenge)
    }))

  it.effect("makes the Appendix B verifier from its 32 random octets (base64url, no padding)", () =>
    Effect.gen(function*() {
      const fixed = (array: Uint8Array) => {
        array.set(rfcOctets)
        return array
      }
      const spy = vi.spyOn(globalThis.crypto, "getRandomValues")
        .mockImplementation(fixed as typeof globalThis.crypto.getRandomValues)
      const verifier = yield* makeCodeVerifier
      expect(Redacted.value(verifier)).toBe(rfcVerifier)
      expect(spy).toHaveBeenCalledTimes(1)
      expect((spy.mock.calls[0]![0] as Uint8Array).length).toBe(32)
      const pkce = yield* makePkce
      expect(Redacted.value(pkce.verifier)).toBe(rfcVerifier)
      expect(pkce.challenge).toBe(rfcChallenge)
      expect(pkce.method).toBe("S256")
    }))

  it.effect("draws a fresh verifier each time the Effect runs", () =>
    Effect.gen(function*() {
      const draws = new Set<string>()
      for (let i = 0; i < 2_000; i++) draws.add(Redacted.value(yield* makeCodeVerifier))
      expect(draws.size).toBe(2_000)
      // 256 bits as base64url: 42 characters of 6 bits and one of 4, every character in use.
      const seen = new Set([...draws].flatMap((draw) => [...draw.slice(0, 42)]))
      expect(seen.size).toBe(64)
      for (const draw of draws) {
        expect(draw).toHaveLength(43)
        expect(draw).toMatch(base64UrlAlphabet)
        expect(isCodeVerifier(draw)).toBe(true)
      }
    }))

  it.effect("asks WebCrypto for 256 bits per verifier", () =>
    Effect.gen(function*() {
      const spy = vi.spyOn(globalThis.crypto, "getRandomValues")
      yield* makeCodeVerifier
      yield* makeState
      expect(spy.mock.calls.map(([array]) => (array as Uint8Array).byteLength)).toEqual([32, 32])
    }))

  it.effect("makePkce pairs a verifier with its own challenge", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 50; i++) {
        const pkce = yield* makePkce
        const expected = createHash("sha256").update(Redacted.value(pkce.verifier), "ascii").digest("base64url")
        expect(pkce.challenge).toBe(expected)
        expect(pkce.challenge).toHaveLength(43)
        expect(pkce.method).toBe(codeChallengeMethod)
      }
    }))

  it("computes S256 as Node's SHA-256 does, for every valid verifier", async () => {
    const verifier = fc
      .array(fc.constantFrom(...unreserved.split("")), { minLength: 43, maxLength: 128 })
      .map((chars) => chars.join(""))
    await fc.assert(
      fc.asyncProperty(verifier, async (text) => {
        expect(isCodeVerifier(text)).toBe(true)
        const challenge = await Effect.runPromise(codeChallengeOf(Redacted.make(text)))
        expect(challenge).toBe(createHash("sha256").update(text, "ascii").digest("base64url"))
        expect(challenge).toHaveLength(43)
        expect(challenge).toMatch(base64UrlAlphabet)
      }),
      { numRuns: 300 }
    )
  })

  it.effect("keeps the verifier out of anything printed or serialized", () =>
    Effect.gen(function*() {
      const pkce = yield* makePkce
      const secret = Redacted.value(pkce.verifier)
      for (const shown of [JSON.stringify(pkce), String(pkce.verifier), inspect(pkce, { depth: 10 }), `${pkce.verifier}`]) {
        expect(shown).not.toContain(secret)
      }
    }))
})

describe("isCodeVerifier", () => {
  it("accepts 43 to 128 unreserved characters", () => {
    expect(isCodeVerifier(rfcVerifier)).toBe(true)
    expect(isCodeVerifier("a".repeat(43))).toBe(true)
    expect(isCodeVerifier("~".repeat(128))).toBe(true)
    expect(isCodeVerifier(unreserved.slice(0, 64) + unreserved.slice(0, 64))).toBe(true)
    expect(isCodeVerifier(unreserved.repeat(2).slice(0, 128))).toBe(true)
  })

  it("refuses other lengths and any other character", () => {
    expect(isCodeVerifier("")).toBe(false)
    expect(isCodeVerifier("a".repeat(42))).toBe(false)
    expect(isCodeVerifier("a".repeat(129))).toBe(false)
    for (let code = 0; code < 0x180; code++) {
      const c = String.fromCharCode(code)
      if (unreserved.includes(c)) continue
      expect([code, isCodeVerifier("a".repeat(42) + c)]).toEqual([code, false])
    }
    for (const c of ["+", "/", "=", " ", "%", "😀", "\u0130"]) expect(isCodeVerifier(c.repeat(43))).toBe(false)
  })
})

describe("makeState", () => {
  it.effect("is 256 random bits as 43 base64url characters, fresh each time", () =>
    Effect.gen(function*() {
      const states = new Set<string>()
      for (let i = 0; i < 2_000; i++) {
        const state = yield* makeState
        expect(state).toHaveLength(43)
        expect(state).toMatch(base64UrlAlphabet)
        states.add(state)
      }
      expect(states.size).toBe(2_000)
    }))

  it.effect("is drawn apart from the verifier", () =>
    Effect.gen(function*() {
      const pkce = yield* makePkce
      const state = yield* makeState
      expect(state).not.toBe(Redacted.value(pkce.verifier))
    }))
})

describe("requireS256: MCP 'Authorization Code Protection'", () => {
  it("accepts metadata that lists S256", () => {
    expect(requireS256({ code_challenge_methods_supported: ["S256"] })).toEqual(Either.right("S256"))
    expect(requireS256({ code_challenge_methods_supported: ["plain", "S256"] })).toEqual(Either.right("S256"))
  })

  it("refuses metadata without code_challenge_methods_supported (the server does not support PKCE)", () => {
    expect(requireS256({})).toEqual(Either.left("absent"))
    expect(requireS256({ code_challenge_methods_supported: undefined })).toEqual(Either.left("absent"))
  })

  it("refuses a list without S256, compared exactly", () => {
    for (const methods of [[], ["plain"], ["s256"], ["S256 "], [" S256"], ["SHA256"], ["S256\u0000"]]) {
      expect([methods, requireS256({ code_challenge_methods_supported: methods })]).toEqual([
        methods,
        Either.left("s256-not-listed")
      ])
    }
  })

  it("refuses a field that is not an array of strings", () => {
    for (const value of [null, "S256", { 0: "S256" }, 256, true, ["S256", null], ["S256", 1], [["S256"]]]) {
      expect([value, requireS256({ code_challenge_methods_supported: value })]).toEqual([value, Either.left("invalid")])
    }
  })

  it("never throws, whatever the metadata holds", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const result = requireS256({ code_challenge_methods_supported: value })
        if (Either.isRight(result)) {
          expect(Array.isArray(value) && value.includes("S256")).toBe(true)
        }
      }),
      { numRuns: 500 }
    )
  })
})
