import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc, Redacted } from "effect"
import { inspect } from "node:util"
import {
  type BearerChallenge,
  type Challenge,
  maxChallengeHeaderLength,
  maxChallengeParameters,
  maxChallenges,
  type NoBearerChallenge,
  parseBearerChallenge,
  parseChallenges,
  parseScope,
  selectScope,
  stepUpScope
} from "../../src/internal/oauth/challenge.js"

/** Challenges as plain data, for `toEqual`. */
const plain = (challenges: ReadonlyArray<Challenge>) => challenges.map((c) => ({ scheme: c.scheme, token68: c.token68, params: Object.fromEntries(c.params) }))

const parsed = (header: string) => {
  const result = parseChallenges(header)
  if (Either.isLeft(result)) throw new Error(`refused (${result.left}): ${JSON.stringify(header)}`)
  return plain(result.right)
}

const refusal = (header: string) => Either.match(parseChallenges(header), { onLeft: (reason) => reason, onRight: () => undefined })

const bearer = (header: Parameters<typeof parseBearerChallenge>[0]): BearerChallenge => {
  const result = parseBearerChallenge(header)
  if (result._tag !== "BearerChallenge") throw new Error(`no bearer challenge (${result.reason})`)
  return result
}

const none = (reason: NoBearerChallenge["reason"]): NoBearerChallenge => ({ _tag: "NoBearerChallenge", reason })

describe("parseChallenges: the RFC 9110 §11.6.1 grammar", () => {
  it("reads one challenge with quoted and token values, names and scheme in lower case", () => {
    expect(parsed(`Bearer realm="example", error=invalid_token`)).toEqual([
      { scheme: "bearer", token68: undefined, params: { realm: "example", error: "invalid_token" } }
    ])
    expect(parsed(`BEARER REALM="x", Error_Description="y"`)).toEqual([
      { scheme: "bearer", token68: undefined, params: { realm: "x", error_description: "y" } }
    ])
  })

  it("reads several challenges in one value, with and without parameters, and token68", () => {
    expect(parsed(`Basic realm="a", Bearer realm="b", scope="s1 s2", Negotiate abc+/9==, DPoP, Other`)).toEqual([
      { scheme: "basic", token68: undefined, params: { realm: "a" } },
      { scheme: "bearer", token68: undefined, params: { realm: "b", scope: "s1 s2" } },
      { scheme: "negotiate", token68: "abc+/9==", params: {} },
      { scheme: "dpop", token68: undefined, params: {} },
      { scheme: "other", token68: undefined, params: {} }
    ])
  })

  it("accepts OWS around commas, BWS around '=', empty list elements and trailing commas", () => {
    const expected = [
      { scheme: "basic", token68: undefined, params: {} },
      { scheme: "bearer", token68: undefined, params: { realm: "r", scope: "a" } }
    ]
    expect(parsed(` , ,Basic ,\t, Bearer   realm \t=\t "r" ,, ,scope= a ,\t,`)).toEqual(expected)
    expect(parsed(`Basic,Bearer realm="r",scope=a`)).toEqual(expected)
    expect(parsed("")).toEqual([])
    expect(parsed(" \t , , ")).toEqual([])
  })

  it("unescapes quoted-pairs and keeps qdtext, obs-text and tabs as they are", () => {
    expect(parsed(String.raw`Bearer realm="a\"b\\c\d", x="", y=" sp\	ace	 "`)).toEqual([
      { scheme: "bearer", token68: undefined, params: { realm: `a"b\\cd`, x: "", y: " sp\tace\t " } }
    ])
    expect(parsed(`Bearer realm="caf\u00e9 \u00ff"`)[0]!.params).toEqual({ realm: "caf\u00e9 \u00ff" })
  })

  it("reads a challenge whose first element is a parameter after spaces ('Bearer ,realm=x' and 'Bearer, realm=x')", () => {
    const expected = [{ scheme: "bearer", token68: undefined, params: { realm: "x" } }]
    expect(parsed(`Bearer ,realm=x`)).toEqual(expected)
    expect(parsed(`Bearer, realm=x`)).toEqual(expected)
  })

  it("tells token68 from a first auth-param however '=' is spaced", () => {
    expect(parsed(`X abc=`)).toEqual([{ scheme: "x", token68: "abc=", params: {} }])
    expect(parsed(`X abc= , Y`)).toEqual([
      { scheme: "x", token68: "abc=", params: {} },
      { scheme: "y", token68: undefined, params: {} }
    ])
    expect(parsed(`X abc= d`)).toEqual([{ scheme: "x", token68: undefined, params: { abc: "d" } }])
    expect(parsed(`X abc =d`)).toEqual([{ scheme: "x", token68: undefined, params: { abc: "d" } }])
    expect(parsed(`X realm`)).toEqual([{ scheme: "x", token68: "realm", params: {} }])
  })

  it("keeps a parameter inside a quoted string inside it (no smuggled challenge)", () => {
    expect(parsed(`Basic realm="x, Bearer resource_metadata=\\"https://evil.example/\\""`)).toEqual([
      { scheme: "basic", token68: undefined, params: { realm: `x, Bearer resource_metadata="https://evil.example/"` } }
    ])
  })

  it("refuses whole any value that breaks the grammar", () => {
    const malformed = [
      `Bearer realm="unterminated`,
      `Bearer realm="ends in a backslash\\`,
      `Bearer realm="x" junk`,
      `Bearer realm="x"junk`,
      `Bearer a=b, realm=`,
      `Bearer realm=, scope=x`,
      `Bearer realm=a b`,
      `Bearer realm=https://example.com/`,
      `Bearer realm="a\u0000b"`,
      `Bearer realm="a\nb"`,
      `Bearer realm="a\rb"`,
      `Bearer realm="a\u007fb"`,
      `Bearer realm="a\\\u0001"`,
      `Bearer realm="\u0100"`,
      `Bearer realm="\u2028"`,
      `Bearer realm="😀"`,
      `Bear\u00e9r realm="x"`,
      `realm="x", Bearer`,
      `=x`,
      `, =x`,
      `Bearer"x"`,
      `Bearer=x`,
      `Bearer\trealm="x"`,
      `Bearer \trealm="x"`,
      `Bearer realm="x" scope="y"`,
      `Negotiate abc==, realm="x"`,
      `Negotiate abc== def`,
      `Negotiate a=b=`,
      `Negotiate ==`,
      `Bearer realm="x";scope="y"`,
      `Bearer (realm)="x"`,
      `Bearer realm="x", "quoted"`,
      `Bearer realm="x", @`,
      `Bearer realm == "x"`,
      `Bearer a="1", Basic =`
    ]
    for (const header of malformed) expect([header, refusal(header)]).toEqual([header, "malformed"])
  })

  it("refuses a parameter given twice in one challenge, without regard to case", () => {
    expect(refusal(`Bearer resource_metadata="https://a/", resource_metadata="https://b/"`)).toBe("malformed")
    expect(refusal(`Bearer scope="a", SCOPE="b"`)).toBe("malformed")
    expect(refusal(`Bearer scope=a, realm=r, Scope=a`)).toBe("malformed")
    // The same name in two challenges is two parameters.
    expect(parsed(`Basic realm="a", Bearer realm="b"`)).toHaveLength(2)
  })

  it("accepts exactly the length bound and refuses one character more", () => {
    const base = `Bearer realm="`
    const at = base + "a".repeat(maxChallengeHeaderLength - base.length - 1) + `"`
    expect(at.length).toBe(maxChallengeHeaderLength)
    expect(Either.isRight(parseChallenges(at))).toBe(true)
    expect(refusal(at + " ")).toBe("too-large")
  })

  it("accepts exactly the parameter and challenge bounds and refuses one more", () => {
    const params = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=v`).join(", ")
    expect(parsed(`Bearer ${params(maxChallengeParameters)}`)[0]!.params).toHaveProperty(`p${maxChallengeParameters - 1}`)
    expect(refusal(`Bearer ${params(maxChallengeParameters + 1)}`)).toBe("too-large")
    // The bound is over the whole value, not per challenge.
    expect(refusal(`Basic ${params(maxChallengeParameters)}, Bearer realm=x`)).toBe("too-large")
    const schemes = (n: number) => Array.from({ length: n }, (_, i) => `S${i}`).join(", ")
    expect(parsed(schemes(maxChallenges))).toHaveLength(maxChallenges)
    expect(refusal(schemes(maxChallenges + 1))).toBe("too-large")
  })
})

describe("parseChallenges: properties", () => {
  const tchars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split("")
  const token = fc.array(fc.constantFrom(...tchars), { minLength: 1, maxLength: 8 }).map((cs) => cs.join(""))
  const token68 = fc
    .tuple(
      fc.array(fc.constantFrom(..."abcXYZ019-._~+/".split("")), { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 0, max: 2 })
    )
    .map(([cs, pad]) => cs.join("") + "=".repeat(pad))
  // Anything a quoted-string can carry: HTAB, SP, VCHAR, obs-text.
  const text = fc
    .array(fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f), { maxLength: 12 })
    .chain((codes) => fc.constant(String.fromCharCode(...codes)))
  const ows = fc.constantFrom("", " ", "\t", "  ", " \t ")
  const sp = fc.constantFrom(" ", "  ")
  const paramsArb = fc.uniqueArray(fc.tuple(token, fc.oneof(token, text)), {
    maxLength: 5,
    selector: ([name]) => name.toLowerCase()
  })
  const challengeArb = fc.record({
    scheme: token,
    body: fc.oneof(
      fc.constant({ kind: "none" as const }),
      token68.map((value) => ({ kind: "token68" as const, value })),
      paramsArb.filter((ps) => ps.length > 0).map((params) => ({ kind: "params" as const, params }))
    )
  })
  const isToken = (value: string) => value.length > 0 && [...value].every((c) => tchars.includes(c))
  const quote = (value: string, escapeAll: boolean) =>
    `"${[...value].map((c) => (c === `"` || c === "\\" || (escapeAll && c !== "\t") ? `\\${c}` : c)).join("")}"`

  const serialized = fc.array(challengeArb, { maxLength: 4 }).chain((challenges) =>
    fc
      .array(fc.tuple(ows, ows, ows, sp, fc.boolean(), fc.boolean(), fc.boolean()), {
        minLength: 40,
        maxLength: 40
      })
      .map((layout) => {
        let n = 0
        const next = () => layout[n++ % layout.length]!
        const elements = challenges.map((c) => {
          const [, , , space] = next()
          if (c.body.kind === "none") return c.scheme
          if (c.body.kind === "token68") return `${c.scheme}${space}${c.body.value}`
          const params = c.body.params.map(([name, value]) => {
            const [before, after, , , quoted, escapeAll] = next()
            const v = isToken(value) && !quoted ? value : quote(value, escapeAll)
            return `${name}${before}=${after}${v}`
          })
          return `${c.scheme}${space}${params.join(`${next()[0]},${next()[1]}`)}`
        })
        const [lead, , trail, , emptyElement] = next()
        const separator = emptyElement ? ` , ,${lead}` : `${lead},${trail}`
        return {
          header: `${lead}${elements.join(separator)}${trail}`,
          expected: challenges.map((c) => ({
            scheme: c.scheme.toLowerCase(),
            token68: c.body.kind === "token68" ? c.body.value : undefined,
            params: c.body.kind === "params"
              ? Object.fromEntries(c.body.params.map(([name, value]) => [name.toLowerCase(), value]))
              : {}
          }))
        }
      })
  )

  it("reads back whatever well-formed value is written, however it is spaced and quoted", () => {
    fc.assert(
      fc.property(serialized, ({ expected, header }) => {
        expect(parsed(header)).toEqual(expected)
      }),
      { numRuns: 500 }
    )
  })

  /** The canonical form of parsed challenges. */
  const canonical = (challenges: ReadonlyArray<Challenge>) =>
    challenges
      .map((c) =>
        c.token68 !== undefined
          ? `${c.scheme} ${c.token68}`
          : c.params.size === 0
          ? c.scheme
          : `${c.scheme} ${[...c.params].map(([k, v]) => `${k}=${quote(v, false)}`).join(", ")}`
      )
      .join(", ")

  const fragments = fc.constantFrom(
    "Bearer",
    "bearer",
    "Basic",
    " ",
    "  ",
    "\t",
    ",",
    "=",
    "==",
    `"`,
    "\\",
    "a",
    "realm",
    "scope",
    "resource_metadata",
    "error",
    "https://x.example/",
    "\u00e9",
    "\u0000",
    "\n",
    "\u2028",
    "😀",
    "/",
    "+"
  )
  const hostile = fc.oneof(
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.array(fragments, { maxLength: 60 }).map((parts) => parts.join(""))
  )

  it("never throws, and what it accepts means the same written canonically", () => {
    fc.assert(
      fc.property(hostile, (header) => {
        const result = parseChallenges(header)
        if (Either.isRight(result)) {
          expect(parsed(canonical(result.right))).toEqual(plain(result.right))
        } else if (result.left === "too-large") {
          // Only a bound gives too-large: the length, or more challenges (list elements) or
          // parameters (each needs an "=") than allowed.
          const elements = header.split(",").length
          const equalsSigns = header.split("=").length - 1
          expect(
            header.length > maxChallengeHeaderLength || elements > maxChallenges || equalsSigns > maxChallengeParameters,
            JSON.stringify(header)
          ).toBe(true)
        } else {
          // Anything else refused breaks the grammar, and is within the length bound.
          expect(result.left).toBe("malformed")
          expect(header.length).toBeLessThanOrEqual(maxChallengeHeaderLength)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("stays linear on values built to make a backtracking parser slow", () => {
    const n = maxChallengeHeaderLength
    const hostileValues = [
      `Bearer realm="${"\\\"".repeat(n / 2 - 10)}`,
      `Bearer realm="${"\\".repeat(n - 20)}`,
      " ,".repeat(n / 2),
      "a".repeat(n),
      `Bearer ${"a".repeat(n - 10)}`,
      `Bearer ${"a".repeat(n - 20)}=`,
      `Bearer a${" ".repeat(n - 20)}=b`,
      `x${" ".repeat(n - 2)}`,
      `Bearer a=b,${" \t".repeat(n / 2 - 10)}`,
      `${"a ".repeat(n / 2)}`,
      `B ${"=".repeat(n - 2)}`,
      `Bearer ${"a=b, ".repeat(n / 5)}`.slice(0, n)
    ]
    const start = performance.now()
    for (let round = 0; round < 50; round++) {
      for (const value of hostileValues) {
        expect(value.length).toBeLessThanOrEqual(n)
        parseChallenges(value)
        parseBearerChallenge(value)
      }
    }
    // 1 200 parses of 8 KiB: a few tens of milliseconds when linear; quadratic would be minutes.
    expect(performance.now() - start).toBeLessThan(5_000)
  })
})

describe("parseBearerChallenge: what MCP reads", () => {
  it("reads the 401 example of the MCP specification (field lines as one value or as an array)", () => {
    const expected: BearerChallenge = {
      _tag: "BearerChallenge",
      resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource",
      scope: ["files:read"],
      error: undefined,
      errorDescription: undefined,
      realm: undefined
    }
    expect(
      parseBearerChallenge(
        `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",` +
          `                         scope="files:read"`
      )
    ).toEqual(expected)
    expect(
      parseBearerChallenge([
        `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`,
        `scope="files:read"`
      ])
    ).toEqual(expected)
  })

  it("reads the 403 insufficient_scope example, keeping error_description redacted", () => {
    const challenge = bearer(
      `Bearer error="insufficient_scope", scope="files:read files:write user:profile", ` +
        `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", ` +
        `error_description="Additional file write permission required"`
    )
    expect(challenge.error).toBe("insufficient_scope")
    expect(challenge.scope).toEqual(["files:read", "files:write", "user:profile"])
    expect(challenge.errorDescription && Redacted.value(challenge.errorDescription)).toBe(
      "Additional file write permission required"
    )
  })

  it("reads what the conformance suite's servers send", () => {
    const challenge = bearer(`Bearer scope="mcp:basic", resource_metadata="http://localhost:3001/.well-known/oauth-protected-resource/mcp"`)
    expect(challenge.scope).toEqual(["mcp:basic"])
    expect(challenge.resourceMetadata).toBe("http://localhost:3001/.well-known/oauth-protected-resource/mcp")
    expect(parseBearerChallenge(`DPoP resource_metadata="http://localhost:3001/prm"`)).toEqual(none("absent"))
  })

  it("finds the Bearer challenge among others, in any case, and reads the first of several", () => {
    expect(bearer(`Basic realm="a", bEaReR realm="b", Bearer realm="c"`).realm).toBe("b")
    expect(bearer([`Negotiate abc==`, `Basic`, `Bearer realm="r"`]).realm).toBe("r")
    expect(bearer(`Bearer`)).toEqual({
      _tag: "BearerChallenge",
      resourceMetadata: undefined,
      scope: undefined,
      error: undefined,
      errorDescription: undefined,
      realm: undefined
    })
    // token68 is not Bearer's form (RFC 6750 uses parameters): a challenge with nothing to read.
    expect(bearer(`Bearer abc==`).scope).toBeUndefined()
  })

  it("returns no Bearer challenge when there is none, and says why when the header is refused", () => {
    expect(parseBearerChallenge(undefined)).toEqual(none("absent"))
    expect(parseBearerChallenge(null)).toEqual(none("absent"))
    expect(parseBearerChallenge("")).toEqual(none("absent"))
    expect(parseBearerChallenge([])).toEqual(none("absent"))
    expect(parseBearerChallenge(["", " "])).toEqual(none("absent"))
    expect(parseBearerChallenge(`Basic realm="x"`)).toEqual(none("absent"))
    expect(parseBearerChallenge(`Bearerx realm="x"`)).toEqual(none("absent"))
    expect(parseBearerChallenge(`Bearer realm="x`)).toEqual(none("malformed"))
    expect(parseBearerChallenge(`Bearer scope="a", scope="b"`)).toEqual(none("malformed"))
    expect(parseBearerChallenge("malformed")).toEqual(none("absent"))
    expect(parseBearerChallenge("too-large")).toEqual(none("absent"))
    expect(parseBearerChallenge(`Bearer realm="${"a".repeat(maxChallengeHeaderLength)}"`)).toEqual(none("too-large"))
  })

  it("bounds the field lines as a whole, before joining them", () => {
    const half = `Bearer realm="${"a".repeat(maxChallengeHeaderLength / 2)}"`
    expect(parseBearerChallenge([half, half])).toEqual(none("too-large"))
    expect(parseBearerChallenge(Array.from({ length: 100_000 }, () => ""))).toEqual(none("too-large"))
    // "Bearer" then 4 093 empty lines, each after ", ": exactly the bound once joined.
    const exact = ["Bearer", ...Array.from({ length: (maxChallengeHeaderLength - 6) / 2 }, () => "")]
    expect(exact.join(", ").length).toBe(maxChallengeHeaderLength)
    expect(parseBearerChallenge(exact)._tag).toBe("BearerChallenge")
    expect(parseBearerChallenge([...exact, ""])).toEqual(none("too-large"))
  })

  it("refuses field lines that are not strings without throwing", () => {
    expect(parseBearerChallenge([`Bearer realm="a"`, 42 as unknown as string])).toEqual(none("malformed"))
    expect(parseBearerChallenge(42 as unknown as string)).toEqual(none("malformed"))
    expect(parseBearerChallenge({ length: 1 } as unknown as string)).toEqual(none("malformed"))
  })

  describe("resource_metadata", () => {
    const metadata = (value: string) => bearer(`Bearer resource_metadata="${value}"`).resourceMetadata

    it("keeps an absolute http(s) URL, as its href", () => {
      expect(metadata("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")).toBe(
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
      )
      expect(metadata("http://127.0.0.1:8080/prm?x=1")).toBe("http://127.0.0.1:8080/prm?x=1")
      expect(metadata("HTTPS://MCP.Example.COM")).toBe("https://mcp.example.com/")
    })

    it("ignores anything else, and reads the other parameters all the same", () => {
      for (
        const value of [
          "",
          "/.well-known/oauth-protected-resource",
          "mcp.example.com/prm",
          "//mcp.example.com/prm",
          "ftp://mcp.example.com/prm",
          "javascript:alert(1)",
          "data:application/json,{}",
          "file:///etc/passwd",
          "https://user:pass@mcp.example.com/prm",
          "https://user@mcp.example.com/prm",
          "https://mcp.example.com/p rm",
          " https://mcp.example.com/prm",
          "https://mcp.example.com/prm ",
          "https://mcp.exa\tmple.com/prm",
          "https://mcp.example.com/pr\u00e9m",
          "https://",
          "https://[::1/prm"
        ]
      ) {
        const challenge = bearer(`Bearer resource_metadata="${value}", scope="a"`)
        expect([value, challenge.resourceMetadata]).toEqual([value, undefined])
        expect(challenge.scope).toEqual(["a"])
      }
    })
  })

  describe("scope", () => {
    it("splits on spaces, keeps order and drops repeats", () => {
      expect(bearer(`Bearer scope="b a b"`).scope).toEqual(["b", "a"])
      expect(bearer(`Bearer scope="  a   b  "`).scope).toEqual(["a", "b"])
      // ":" is not a token character: an unquoted scope with one breaks the grammar.
      expect(parseBearerChallenge(`Bearer scope=mcp:basic`)).toEqual(none("malformed"))
      expect(bearer(`Bearer scope=files.read`).scope).toEqual(["files.read"])
    })

    it("ignores a value that is not an RFC 6749 scope", () => {
      for (const value of ["", "   ", `a \\"b`, "a \\\\b", "a\tb", "caf\u00e9", "a\u0080"]) {
        expect([value, bearer(`Bearer scope="${value}", realm=r`).scope]).toEqual([value, undefined])
      }
    })

    it("parseScope accepts every RFC 6749 scope-token character and nothing else", () => {
      const allowed = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
        .filter((c) => c !== `"` && c !== "\\")
        .join("")
      expect(parseScope(allowed)).toEqual([allowed])
      for (let code = 0; code < 0x100; code++) {
        const c = String.fromCharCode(code)
        if (allowed.includes(c) || c === " ") continue
        expect([code, parseScope(`a${c}b`)]).toEqual([code, undefined])
      }
    })
  })

  describe("error", () => {
    it("keeps the RFC 6750 codes and other codes of valid characters", () => {
      expect(bearer(`Bearer error="invalid_request"`).error).toBe("invalid_request")
      expect(bearer(`Bearer error=invalid_token`).error).toBe("invalid_token")
      expect(bearer(`Bearer error="insufficient_scope"`).error).toBe("insufficient_scope")
      expect(bearer(`Bearer error="use_dpop_nonce"`).error).toBe("use_dpop_nonce")
    })

    it("ignores an empty code or one with characters RFC 6749 does not allow", () => {
      for (const value of ["", `a\\"b`, "a\\\\b", "a\tb", "caf\u00e9"]) {
        expect([value, bearer(`Bearer error="${value}"`).error]).toEqual([value, undefined])
      }
    })
  })

  describe("error_description is secret-bearing", () => {
    const secret = "token sk-live-0123456789abcdef was rejected"

    it("is kept in process as Redacted, never in the printed or serialized challenge", () => {
      const challenge = bearer(`Bearer error="invalid_token", error_description="${secret}"`)
      expect(Redacted.isRedacted(challenge.errorDescription)).toBe(true)
      expect(Redacted.value(challenge.errorDescription!)).toBe(secret)
      for (const shown of [JSON.stringify(challenge), String(challenge.errorDescription), inspect(challenge, { depth: 10 })]) {
        expect(shown).not.toContain("sk-live")
      }
    })

    it("is ignored when it has characters RFC 6749 does not allow", () => {
      expect(bearer(`Bearer error_description="a\tb"`).errorDescription).toBeUndefined()
      expect(bearer(`Bearer error_description="caf\u00e9"`).errorDescription).toBeUndefined()
      expect(bearer(`Bearer error_description=""`).errorDescription).toBeUndefined()
    })

    it("never shows up in the serialized result, whatever the server writes", () => {
      fc.assert(
        fc.property(fc.stringMatching(/^[a-zA-Z0-9]{12,40}$/), (text) => {
          const result = parseBearerChallenge(`Bearer error="invalid_token", error_description="secret ${text}"`)
          expect(JSON.stringify(result)).not.toContain(text)
          expect(inspect(result, { depth: 10 })).not.toContain(text)
        }),
        { numRuns: 200 }
      )
    })
  })

  it("never throws on hostile values or field lines; the result is what the parsed challenges give", () => {
    const seen = { bearer: 0 }
    const line = fc.oneof(
      fc.string({ unit: "binary", maxLength: 100 }),
      fc.string({ unit: "grapheme-ascii", maxLength: 100 }).map((s) => `Bearer ${s}`)
    )
    fc.assert(
      fc.property(fc.oneof(line, fc.array(line, { maxLength: 5 })), (header) => {
        const result = parseBearerChallenge(header)
        // What the rules give: the field lines joined as one list (all under the length bound
        // here), read by the grammar; a refusal is its reason, no Bearer scheme is "absent".
        const challenges = parseChallenges(typeof header === "string" ? header : header.join(", "))
        const scheme = Either.isRight(challenges) ? challenges.right.find((c) => c.scheme === "bearer") : undefined
        if (Either.isLeft(challenges)) expect(result).toEqual(none(challenges.left))
        else if (scheme === undefined) expect(result).toEqual(none("absent"))
        else {
          seen.bearer++
          expect(result._tag).toBe("BearerChallenge")
          const challenge = result as BearerChallenge
          expect(challenge.realm).toBe(scheme.params.get("realm"))
          if (challenge.resourceMetadata !== undefined) expect(challenge.resourceMetadata).toMatch(/^https?:\/\//)
          for (const token of challenge.scope ?? []) expect(token).toMatch(/^[\x21\x23-\x5b\x5d-\x7e]+$/)
        }
      }),
      { numRuns: 2000 }
    )
    // The generator reaches the Bearer branch, not only the refusals.
    expect(seen.bearer).toBeGreaterThan(0)
  })
})

describe("selectScope: MCP 'Scope Selection Strategy'", () => {
  const sources = {
    challenged: undefined,
    resourceScopesSupported: undefined,
    authorizationServerScopesSupported: undefined,
    wantsRefreshToken: false
  }

  it("uses the challenge's scope first, whatever scopes_supported says", () => {
    expect(selectScope({ ...sources, challenged: ["mcp:basic"], resourceScopesSupported: ["mcp:read", "mcp:write"] }))
      .toEqual(["mcp:basic"])
    expect(selectScope({ ...sources, challenged: ["x:not-listed"], resourceScopesSupported: ["a"] })).toEqual([
      "x:not-listed"
    ])
  })

  it("falls back to every scope of the resource's scopes_supported, then omits the parameter", () => {
    expect(selectScope({ ...sources, resourceScopesSupported: ["mcp:basic", "mcp:read", "mcp:write"] })).toEqual([
      "mcp:basic",
      "mcp:read",
      "mcp:write"
    ])
    expect(selectScope({ ...sources, challenged: [], resourceScopesSupported: ["a"] })).toEqual(["a"])
    expect(selectScope(sources)).toBeUndefined()
    expect(selectScope({ ...sources, resourceScopesSupported: [] })).toBeUndefined()
  })

  it("never takes the authorization server's scopes_supported as the scope", () => {
    expect(selectScope({ ...sources, authorizationServerScopesSupported: ["a", "b"] })).toBeUndefined()
  })

  it("adds offline_access only when refresh tokens are wanted and the authorization server lists it", () => {
    const base = { ...sources, challenged: ["mcp:basic"] }
    const listed = ["mcp:basic", "offline_access"]
    expect(selectScope({ ...base, wantsRefreshToken: true, authorizationServerScopesSupported: listed })).toEqual([
      "mcp:basic",
      "offline_access"
    ])
    expect(selectScope({ ...base, wantsRefreshToken: false, authorizationServerScopesSupported: listed })).toEqual([
      "mcp:basic"
    ])
    expect(selectScope({ ...base, wantsRefreshToken: true, authorizationServerScopesSupported: ["mcp:basic"] }))
      .toEqual(["mcp:basic"])
    expect(selectScope({ ...base, wantsRefreshToken: true, authorizationServerScopesSupported: undefined })).toEqual([
      "mcp:basic"
    ])
    // Listed by the resource only: not the authorization server's word.
    expect(selectScope({ ...sources, resourceScopesSupported: ["a", "offline_access"], wantsRefreshToken: true }))
      .toEqual(["a", "offline_access"])
    expect(selectScope({ ...base, resourceScopesSupported: ["offline_access"], wantsRefreshToken: true })).toEqual([
      "mcp:basic"
    ])
  })

  it("does not repeat offline_access, and does not request it alone where the scope is omitted", () => {
    expect(
      selectScope({
        ...sources,
        challenged: ["offline_access", "a"],
        wantsRefreshToken: true,
        authorizationServerScopesSupported: ["offline_access"]
      })
    ).toEqual(["offline_access", "a"])
    expect(
      selectScope({ ...sources, wantsRefreshToken: true, authorizationServerScopesSupported: ["offline_access"] })
    ).toBeUndefined()
  })

  it("leaves out invalid tokens and repeats, and does not change its inputs", () => {
    const challenged = Object.freeze(["a", "a", "b c", "", "caf\u00e9", "b"])
    expect(selectScope({ ...sources, challenged })).toEqual(["a", "b"])
    expect(selectScope({ ...sources, challenged: ["", " "], resourceScopesSupported: ["r"] })).toEqual(["r"])
    const supported = Object.freeze(["x"])
    const result = selectScope({
      ...sources,
      resourceScopesSupported: supported,
      wantsRefreshToken: true,
      authorizationServerScopesSupported: Object.freeze(["offline_access"])
    })
    expect(result).toEqual(["x", "offline_access"])
    expect(supported).toEqual(["x"])
  })

  it("chooses as the conformance scenarios expect, from parsed challenges", () => {
    const challenge = (header: string) => bearer(header).scope
    // auth/scope-from-www-authenticate
    expect(selectScope({ ...sources, challenged: challenge(`Bearer scope="mcp:basic", resource_metadata="http://l/p"`) }))
      .toEqual(["mcp:basic"])
    // auth/scope-from-scopes-supported
    expect(
      selectScope({
        ...sources,
        challenged: challenge(`Bearer resource_metadata="http://l/p"`),
        resourceScopesSupported: ["mcp:basic", "mcp:read", "mcp:write"]
      })
    ).toEqual(["mcp:basic", "mcp:read", "mcp:write"])
    // auth/scope-omitted-when-undefined
    expect(selectScope({ ...sources, challenged: challenge(`Bearer resource_metadata="http://l/p"`) })).toBeUndefined()
    // auth/offline-access-scope and auth/offline-access-not-supported
    expect(
      selectScope({
        ...sources,
        resourceScopesSupported: ["mcp:basic"],
        authorizationServerScopesSupported: ["mcp:basic", "offline_access"],
        wantsRefreshToken: true
      })
    ).toEqual(["mcp:basic", "offline_access"])
    expect(
      selectScope({
        ...sources,
        resourceScopesSupported: ["mcp:basic", "mcp:read"],
        authorizationServerScopesSupported: ["mcp:basic", "mcp:read"],
        wantsRefreshToken: true
      })
    ).toEqual(["mcp:basic", "mcp:read"])
  })
})

describe("stepUpScope: MCP 'Step-Up Authorization Flow'", () => {
  it("is the union of the scopes requested before and the challenge's, previous ones first", () => {
    expect(stepUpScope(["mcp:basic"], ["mcp:write"])).toEqual(["mcp:basic", "mcp:write"])
    expect(stepUpScope(["a", "offline_access"], ["b", "a"])).toEqual(["a", "offline_access", "b"])
    expect(stepUpScope(undefined, ["b"])).toEqual(["b"])
    expect(stepUpScope(["a"], undefined)).toEqual(["a"])
    expect(stepUpScope(undefined, undefined)).toBeUndefined()
    expect(stepUpScope([], [""])).toBeUndefined()
  })

  it("always contains every valid scope of both, once", () => {
    const scopeToken = fc.stringMatching(/^[a-z:]{1,6}$/)
    fc.assert(
      fc.property(fc.array(scopeToken, { maxLength: 6 }), fc.array(scopeToken, { maxLength: 6 }), (before, challenged) => {
        const union = stepUpScope(before, challenged) ?? []
        expect(new Set(union).size).toBe(union.length)
        expect(new Set(union)).toEqual(new Set([...before, ...challenged]))
      })
    )
  })
})
