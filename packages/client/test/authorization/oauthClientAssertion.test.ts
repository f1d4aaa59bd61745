import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Redacted, TestClock } from "effect"
import { KeyObject, verify as nodeVerify } from "node:crypto"
import { inspect } from "node:util"
import { InvalidOption } from "../../src/McpConnectionError.js"
import {
  type ClientAssertionOptions,
  clientAssertionParameters,
  clientAssertionType,
  makeClientAssertion,
  makeClientAssertionSigner
} from "../../src/internal/oauth/clientAssertion.js"

const subtle = globalThis.crypto.subtle
const issuer = "https://auth.example.com"

const rsaKeys = (hash = "SHA-256", modulusLength = 2048) =>
  Effect.promise(() =>
    subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash },
      true,
      ["sign", "verify"]
    ) as Promise<CryptoKeyPair>
  )
const ecKeys = (namedCurve = "P-256") =>
  Effect.promise(() => subtle.generateKey({ name: "ECDSA", namedCurve }, true, ["sign", "verify"]) as Promise<CryptoKeyPair>)

const pemOf = (key: CryptoKey, newline = "\n") =>
  Effect.promise(async () => {
    const der = new Uint8Array(await subtle.exportKey("pkcs8", key))
    const base64 = Buffer.from(der).toString("base64")
    const lines = base64.match(/.{1,64}/g)!
    return ["-----BEGIN PRIVATE KEY-----", ...lines, "-----END PRIVATE KEY-----", ""].join(newline)
  })

const fromBase64Url = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(Buffer.from(text, "base64url"))
const json = (text: string): Record<string, unknown> => JSON.parse(Buffer.from(text, "base64url").toString("utf8"))

const split = (assertion: Redacted.Redacted<string>) => {
  const compact = Redacted.value(assertion)
  expect(compact).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
  const [header, claims, signature] = compact.split(".") as [string, string, string]
  return {
    header: json(header),
    claims: json(claims),
    signingInput: new TextEncoder().encode(`${header}.${claims}`),
    signature: fromBase64Url(signature)
  }
}

const verifyParams = { RS256: { name: "RSASSA-PKCS1-v1_5" }, ES256: { name: "ECDSA", hash: "SHA-256" } } as const

const verified = (publicKey: CryptoKey, algorithm: "RS256" | "ES256", parts: ReturnType<typeof split>) =>
  Effect.promise(() => subtle.verify(verifyParams[algorithm], publicKey, parts.signature, parts.signingInput))

const base = (privateKey: ClientAssertionOptions["privateKey"], algorithm: "RS256" | "ES256"): ClientAssertionOptions => ({
  clientId: "service-client",
  audience: issuer,
  privateKey,
  algorithm
})

const failure = <A>(effect: Effect.Effect<A, InvalidOption>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const error = Cause.failureOption(exit.cause)
    expect(error._tag).toBe("Some")
    if (error._tag !== "Some") throw new Error("expected a typed failure")
    expect(error.value).toBeInstanceOf(InvalidOption)
    return { error: error.value, cause: exit.cause }
  })

/** Every way an error can be looked at. */
const views = (error: InvalidOption, cause: Cause.Cause<InvalidOption>): ReadonlyArray<string> => [
  error.message,
  String(error),
  JSON.stringify(error),
  JSON.stringify({ ...error }),
  inspect(error, { depth: 10, showHidden: true }),
  Cause.pretty(cause),
  inspect(cause, { depth: 10 }),
  String(error.stack)
]

describe("client assertion (RFC 7523 private_key_jwt)", () => {
  it.effect("RS256: a JWS that WebCrypto verifies, with the RFC 7523 §3 claims", () =>
    Effect.gen(function*() {
      const { privateKey, publicKey } = yield* rsaKeys()
      yield* TestClock.setTime(1_700_000_000_999)
      const assertion = yield* makeClientAssertion({ ...base(privateKey, "RS256"), keyId: "key-1" })
      const parts = split(assertion)
      expect(parts.header).toStrictEqual({ alg: "RS256", typ: "JWT", kid: "key-1" })
      expect(Object.keys(parts.claims).sort()).toStrictEqual(["aud", "exp", "iat", "iss", "jti", "sub"])
      expect(parts.claims.iss).toBe("service-client")
      expect(parts.claims.sub).toBe("service-client")
      expect(parts.claims.aud).toBe(issuer)
      expect(parts.claims.iat).toBe(1_700_000_000)
      expect(parts.claims.exp).toBe(1_700_000_060)
      expect(parts.claims.jti).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(yield* verified(publicKey, "RS256", parts)).toBe(true)
      // A changed claim does not verify.
      const tampered = { ...parts, signingInput: new TextEncoder().encode("x" + new TextDecoder().decode(parts.signingInput)) }
      expect(yield* verified(publicKey, "RS256", tampered)).toBe(false)
    }))

  it.effect("ES256: the signature is the 64-octet r || s form (IEEE P1363), not DER", () =>
    Effect.gen(function*() {
      const { privateKey, publicKey } = yield* ecKeys()
      const parts = split(yield* makeClientAssertion(base(privateKey, "ES256")))
      expect(parts.header).toStrictEqual({ alg: "ES256", typ: "JWT" })
      expect(parts.signature.length).toBe(64)
      expect(yield* verified(publicKey, "ES256", parts)).toBe(true)
      // Independently, with node:crypto reading the JWS signature form.
      const ok = nodeVerify(
        "sha256",
        parts.signingInput,
        { key: KeyObject.from(publicKey), dsaEncoding: "ieee-p1363" },
        parts.signature
      )
      expect(ok).toBe(true)
    }))

  it.effect("iat and exp follow Effect's Clock (TestClock), exp - iat = lifetimeSeconds", () =>
    Effect.gen(function*() {
      const { privateKey } = yield* ecKeys()
      const signer = yield* makeClientAssertionSigner({ ...base(privateKey, "ES256"), lifetimeSeconds: 300 })
      yield* TestClock.setTime(5_000)
      const first = split(yield* signer.sign).claims
      expect([first.iat, first.exp]).toStrictEqual([5, 305])
      yield* TestClock.adjust("90 seconds")
      const second = split(yield* signer.sign).claims
      expect([second.iat, second.exp]).toStrictEqual([95, 395])
      const short = split(yield* makeClientAssertion({ ...base(privateKey, "ES256"), lifetimeSeconds: 1 })).claims
      expect((short.exp as number) - (short.iat as number)).toBe(1)
    }))

  it.effect("every assertion has its own jti (256 random bits)", () =>
    Effect.gen(function*() {
      const { privateKey } = yield* ecKeys()
      const signer = yield* makeClientAssertionSigner(base(privateKey, "ES256"))
      const jtis = new Set<unknown>()
      for (let i = 0; i < 200; i++) jtis.add(split(yield* signer.sign).claims.jti)
      expect(jtis.size).toBe(200)
      for (const jti of jtis) expect(fromBase64Url(jti as string).length).toBe(32)
    }))

  it.effect("imports a PKCS#8 PEM (LF or CRLF) for RS256 and ES256", () =>
    Effect.gen(function*() {
      const rsa = yield* rsaKeys()
      const ec = yield* ecKeys()
      for (const newline of ["\n", "\r\n"]) {
        const rsaPem = Redacted.make(yield* pemOf(rsa.privateKey, newline))
        const rsaParts = split(yield* makeClientAssertion(base(rsaPem, "RS256")))
        expect(yield* verified(rsa.publicKey, "RS256", rsaParts)).toBe(true)
        const ecPem = Redacted.make(yield* pemOf(ec.privateKey, newline))
        const ecParts = split(yield* makeClientAssertion(base(ecPem, "ES256")))
        expect(yield* verified(ec.publicKey, "ES256", ecParts)).toBe(true)
      }
    }))

  it.effect("the assertion is Redacted and its form parameters are RFC 7523 §2.2's", () =>
    Effect.gen(function*() {
      const { privateKey } = yield* ecKeys()
      const assertion = yield* makeClientAssertion(base(privateKey, "ES256"))
      const compact = Redacted.value(assertion)
      for (const view of [String(assertion), inspect(assertion), JSON.stringify({ assertion })]) {
        expect(view).not.toContain(compact.split(".")[2])
      }
      expect(clientAssertionParameters(assertion)).toStrictEqual([
        ["client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"],
        ["client_assertion", compact]
      ])
      expect(clientAssertionType).toBe("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    }))

  it.effect("a key of another algorithm, curve or hash is refused as privateKey", () =>
    Effect.gen(function*() {
      const rsa = yield* rsaKeys()
      const ec = yield* ecKeys()
      const p384 = yield* ecKeys("P-384")
      const rsa384 = yield* rsaKeys("SHA-384")
      const rsaPem = Redacted.make(yield* pemOf(rsa.privateKey))
      const ecPem = Redacted.make(yield* pemOf(ec.privateKey))
      const p384Pem = Redacted.make(yield* pemOf(p384.privateKey))
      const cases: ReadonlyArray<[ClientAssertionOptions["privateKey"], "RS256" | "ES256", string]> = [
        [ec.privateKey, "RS256", "algorithm-mismatch"],
        [rsa.privateKey, "ES256", "algorithm-mismatch"],
        [p384.privateKey, "ES256", "algorithm-mismatch"],
        [rsa384.privateKey, "RS256", "algorithm-mismatch"],
        [rsa.publicKey, "RS256", "not-private"],
        [ec.publicKey, "ES256", "not-private"],
        [ecPem, "RS256", "import-failed"],
        [rsaPem, "ES256", "import-failed"],
        [p384Pem, "ES256", "import-failed"]
      ]
      for (const [privateKey, algorithm, problem] of cases) {
        const { error } = yield* failure(makeClientAssertion(base(privateKey, algorithm)))
        expect(error.option).toBe("privateKey")
        expect(error.reason).toBe("invalid-value")
        expect(error.stage).toBe("config")
        expect(error.phase).toBe("authorization")
        expect(error.outcome).toBe("not-sent")
        expect(error.retryable).toBe(false)
        expect(error.cause).toStrictEqual({ _tag: "ClientAssertionKeyProblem", problem })
      }
    }))

  it.effect("a key without the sign usage, an RSA modulus under 2048 bits, or not a key is refused", () =>
    Effect.gen(function*() {
      const ec = yield* ecKeys()
      const der = yield* Effect.promise(() => subtle.exportKey("pkcs8", ec.privateKey))
      const noSign = yield* Effect.promise(() => subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]))
      // WebCrypto keys cannot lose a usage; a key whose usages lack "sign" looks like this.
      const unusable = Object.create(noSign, { usages: { value: [] } }) as CryptoKey
      const short = yield* rsaKeys("SHA-256", 1024)
      const cases: ReadonlyArray<[unknown, "RS256" | "ES256", string]> = [
        [unusable, "ES256", "no-sign-usage"],
        [short.privateKey, "RS256", "rsa-modulus-too-short"],
        ["-----BEGIN PRIVATE KEY-----", "ES256", "not-a-key"],
        [{}, "ES256", "not-a-key"]
      ]
      for (const [privateKey, algorithm, problem] of cases) {
        const { error } = yield* failure(
          makeClientAssertion(base(privateKey as ClientAssertionOptions["privateKey"], algorithm))
        )
        expect(error.option).toBe("privateKey")
        expect(error.cause).toStrictEqual({ _tag: "ClientAssertionKeyProblem", problem })
      }
    }))

  it.effect("a PEM that is not PKCS#8, or not a PEM at all, is refused and never echoed", () =>
    Effect.gen(function*() {
      const { privateKey } = yield* rsaKeys()
      const pem = yield* pemOf(privateKey)
      const body = pem.split("\n").slice(1, -2).join("")
      const pkcs1 = pem.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY")
      const encrypted = pem.replaceAll("PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
      const wrap = (base64: string) => `-----BEGIN PRIVATE KEY-----\n${base64.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`
      expect(wrap(body)).toBe(pem)
      // Not a multiple of 4 base64 characters.
      const truncated = wrap(body.slice(0, 100) + body.slice(201))
      // Well-formed base64, but the DER's outer SEQUENCE is broken.
      const corrupted = wrap("AAAAAAAA" + body.slice(8))
      const bare = body
      const huge = `-----BEGIN PRIVATE KEY-----\n${"QUFB\n".repeat(5_000)}-----END PRIVATE KEY-----\n`
      const secrets = [body.slice(0, 48), body.slice(500, 548), body.slice(-60, -12)]
      for (
        const [text, problem] of [
          [pkcs1, "not-pkcs8-pem"],
          [encrypted, "not-pkcs8-pem"],
          [truncated, "not-pkcs8-pem"],
          [corrupted, "import-failed"],
          [bare, "not-pkcs8-pem"],
          [huge, "not-pkcs8-pem"],
          ["", "not-pkcs8-pem"]
        ] as const
      ) {
        const { cause, error } = yield* failure(makeClientAssertion(base(Redacted.make(text), "RS256")))
        expect(error.option).toBe("privateKey")
        expect(error.cause).toStrictEqual({ _tag: "ClientAssertionKeyProblem", problem })
        for (const view of views(error, cause)) {
          for (const secret of secrets) expect(view).not.toContain(secret)
          expect(view).not.toContain("BEGIN")
        }
      }
    }))

  it.effect("a wrong-algorithm key's error views never show the key", () =>
    Effect.gen(function*() {
      const ec = yield* ecKeys()
      const pem = yield* pemOf(ec.privateKey)
      const body = pem.split("\n").slice(1, -2).join("")
      const jwk = yield* Effect.promise(() => subtle.exportKey("jwk", ec.privateKey))
      for (const privateKey of [Redacted.make(pem), ec.privateKey]) {
        const { cause, error } = yield* failure(makeClientAssertion(base(privateKey, "RS256")))
        for (const view of views(error, cause)) {
          expect(view).not.toContain(body.slice(0, 40))
          expect(view).not.toContain(body.slice(-40))
          expect(view).not.toContain(jwk.d!)
        }
      }
    }))

  it.effect("the other options are validated before the key, each by name", () =>
    Effect.gen(function*() {
      const { privateKey } = yield* ecKeys()
      const ok = base(privateKey, "ES256")
      const cases: ReadonlyArray<[Partial<Record<keyof ClientAssertionOptions, unknown>>, string]> = [
        [{ clientId: "" }, "clientId"],
        [{ clientId: 7 }, "clientId"],
        [{ audience: "http://auth.example.com" }, "audience"],
        [{ audience: "ftp://auth.example.com" }, "audience"],
        [{ audience: "/token" }, "audience"],
        [{ audience: "https://auth.example.com/#x" }, "audience"],
        [{ audience: "https://user@auth.example.com" }, "audience"],
        [{ algorithm: "HS256" }, "algorithm"],
        [{ algorithm: "none" }, "algorithm"],
        [{ keyId: "" }, "keyId"],
        [{ lifetimeSeconds: 0 }, "lifetimeSeconds"],
        [{ lifetimeSeconds: 301 }, "lifetimeSeconds"],
        [{ lifetimeSeconds: 1.5 }, "lifetimeSeconds"],
        [{ lifetimeSeconds: Number.NaN }, "lifetimeSeconds"],
        // A bad option is named even with a bad key.
        [{ lifetimeSeconds: -1, privateKey: Redacted.make("nope") }, "lifetimeSeconds"]
      ]
      for (const [override, option] of cases) {
        const { error } = yield* failure(makeClientAssertion({ ...ok, ...override } as ClientAssertionOptions))
        expect(error.option).toBe(option)
        expect(error.cause).toBeUndefined()
      }
      // The token endpoint, and http on loopback, are accepted audiences, sent exactly as given.
      for (const audience of ["https://auth.example.com/oauth/token", "http://127.0.0.1:8080", "https://auth.example.com/"]) {
        expect(split(yield* makeClientAssertion({ ...ok, audience })).claims.aud).toBe(audience)
      }
    }))
})
