/**
 * Private-key JWT client authentication (RFC 7523 §2.2 and §3, OpenID Connect Core §9
 * `private_key_jwt`) for the client credentials grant (the MCP extension
 * `io.modelcontextprotocol/oauth-client-credentials`, SEP-1046).
 *
 * The token request carries `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer`
 * and `client_assertion=<the compact JWS made here>`. This module only makes the assertion; the
 * token request itself is `token.ts`'s.
 *
 * The JWS: header `{ alg, typ: "JWT", kid? }`; claims `{ iss, sub, aud, jti, iat, exp }` with
 * `iss` = `sub` = the client id (RFC 7523 §3 items 1 and 2), one `aud` string (item 3), `exp`
 * (item 4) = `iat` + `lifetimeSeconds` (default 60, at most 300: an assertion is short-lived and
 * single-use), `iat` (item 6) from Effect's `Clock` (so a `TestClock` drives it), and a `jti`
 * (item 7) of 256 random bits in base64url, fresh at every signing, so the authorization server
 * can refuse a replay.
 *
 * The audience (`audience`): RFC 7523 §3 asks for a value that identifies the authorization
 * server and allows its token endpoint URL. phasebound sends exactly the string given, as one
 * string (never an array, never normalized). The caller should pass the authorization server's
 * `issuer` identifier from its validated metadata: that is what draft-ietf-oauth-rfc7523bis
 * requires (it closes the audience-injection attack of using the token endpoint, which another
 * server may claim as its own), and what the MCP conformance scenario `auth/client-credentials-jwt`
 * verifies the assertion against. The token endpoint URL is accepted too, for servers that still
 * require it (the extension page says "typically" the token endpoint). Either way it must be an
 * absolute `https` URL (`http` on loopback only) without userinfo or fragment.
 *
 * Signing is WebCrypto's (`globalThis.crypto.subtle`, Node 20 and Bun): RS256 is
 * RSASSA-PKCS1-v1_5 with SHA-256 and a modulus of at least 2048 bits (RFC 7518 §3.3); ES256 is
 * ECDSA on P-256 with SHA-256, whose WebCrypto signature is already the 64-byte `r || s` (IEEE
 * P1363) form a JWS requires (RFC 7518 §3.4), not DER. The key is a `CryptoKey` (a private key
 * with the `sign` usage, of the algorithm named) or a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`)
 * as `Redacted`, imported non-extractable. PKCS#1 (`RSA PRIVATE KEY`), SEC 1 (`EC PRIVATE KEY`)
 * and encrypted PKCS#8 are refused.
 *
 * Every problem is an `InvalidOption` (stage `config`, phase `authorization`, outcome
 * `not-sent`, not retryable) naming the option; for the key, `privateKey`, whatever is wrong with
 * it (not a PEM, does not import, another algorithm, curve or hash, a public key, too short).
 * The non-enumerable cause says only which of those it was (`ClientAssertionKeyProblem`): never
 * the key, its bytes, or WebCrypto's own error. The assertion is a secret until it is sent: it
 * is returned `Redacted`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Redacted from "effect/Redacted"
import { InvalidOption } from "../../McpConnectionError.js"
import { defaults } from "../../PhasePolicy.js"
import { isSecure, parseHttpUrl } from "./discoveryUrls.js"

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

/** The `token_endpoint_auth_method` of this authentication (RFC 7591 §2, OpenID Connect Core §9). */
export const privateKeyJwtAuthMethod = "private_key_jwt"

/** The JWS algorithms phasebound signs with (RFC 7518 §3.1). */
export type ClientAssertionAlgorithm = "RS256" | "ES256"

export const clientAssertionAlgorithms: ReadonlyArray<ClientAssertionAlgorithm> = ["RS256", "ES256"]

/** The default lifetime of an assertion, in seconds, and the bounds of `lifetimeSeconds`. */
export const defaultLifetimeSeconds = 60
export const minLifetimeSeconds = 1
export const maxLifetimeSeconds = 300

/** The largest PEM accepted (an RSA 8192-bit PKCS#8 PEM is under 7 KiB). */
const maxPemChars = 16 * 1024

/** The minimum RSA modulus for RS256 (RFC 7518 §3.3). */
const minRsaModulusBits = 2048

/** Random octets of a `jti`: 256 bits (43 base64url characters). */
const jtiOctets = 32

export interface ClientAssertionOptions {
  /** The client id: both `iss` and `sub`. */
  readonly clientId: string
  /**
   * The `aud` claim, sent as is: the authorization server's `issuer` (recommended), or its token
   * endpoint URL where the server requires that. See the module's documentation.
   */
  readonly audience: string
  /** A private `CryptoKey` with the `sign` usage, or a PKCS#8 PEM. */
  readonly privateKey: CryptoKey | Redacted.Redacted<string>
  readonly algorithm: ClientAssertionAlgorithm
  /** The `kid` header, when the authorization server knows the key by one. */
  readonly keyId?: string | undefined
  /** `exp - iat`: an integer from 1 to 300; default 60. */
  readonly lifetimeSeconds?: number | undefined
}

/** What was wrong with the key: the only thing an `InvalidOption` for `privateKey` keeps (as its cause). */
export interface ClientAssertionKeyProblem {
  readonly _tag: "ClientAssertionKeyProblem"
  readonly problem:
    | "not-a-key"
    | "not-pkcs8-pem"
    | "import-failed"
    | "not-private"
    | "no-sign-usage"
    | "algorithm-mismatch"
    | "rsa-modulus-too-short"
    | "signing-failed"
}

/** A validated key and claims, signing a fresh assertion at every run of `sign`. */
export interface ClientAssertionSigner {
  readonly algorithm: ClientAssertionAlgorithm
  /** A fresh compact JWS: a new `jti`, `iat` now. */
  readonly sign: Effect.Effect<Redacted.Redacted<string>, InvalidOption>
}

const invalid = (option: string, problem?: ClientAssertionKeyProblem["problem"]): InvalidOption =>
  new InvalidOption(
    {
      stage: "config",
      phase: "authorization",
      limits: { timeoutMs: defaults.timeoutMs, maxBytes: defaults.maxBytes },
      option,
      reason: "invalid-value",
      outcome: "not-sent",
      retryable: false
    },
    problem === undefined ? undefined : { _tag: "ClientAssertionKeyProblem", problem } satisfies ClientAssertionKeyProblem
  )

const base64UrlJson = (value: unknown): string => Encoding.encodeBase64Url(new TextEncoder().encode(JSON.stringify(value)))

const importParams = {
  RS256: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  ES256: { name: "ECDSA", namedCurve: "P-256" }
} as const

const signParams = {
  RS256: { name: "RSASSA-PKCS1-v1_5" },
  ES256: { name: "ECDSA", hash: "SHA-256" }
} as const

/** RFC 7468 §10 PKCS#8 `PRIVATE KEY`, strictly: one block, base64 lines, nothing around it but whitespace. */
const pemPattern = /^-----BEGIN PRIVATE KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PRIVATE KEY-----$/

const pemDer = (pem: string): Uint8Array<ArrayBuffer> | undefined => {
  if (pem.length > maxPemChars) return undefined
  const match = pemPattern.exec(pem.trim())
  if (match === null) return undefined
  const body = match[1]!.replaceAll("\r", "").replaceAll("\n", "")
  if (body.length === 0 || body.length % 4 !== 0) return undefined
  let binary: string
  try {
    binary = atob(body)
  } catch {
    return undefined
  }
  const der = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) der[i] = binary.charCodeAt(i)
  return der
}

const isCryptoKeyLike = (value: unknown): value is CryptoKey =>
  typeof value === "object" && value !== null &&
  typeof (value as CryptoKey).type === "string" &&
  typeof (value as CryptoKey).algorithm === "object" && (value as CryptoKey).algorithm !== null &&
  Array.isArray((value as CryptoKey).usages)

/** The key's own problem for `algorithm`, or `undefined` when it signs exactly that. */
const keyProblem = (key: CryptoKey, algorithm: ClientAssertionAlgorithm): ClientAssertionKeyProblem["problem"] | undefined => {
  if (key.type !== "private") return "not-private"
  if (!key.usages.includes("sign")) return "no-sign-usage"
  if (algorithm === "RS256") {
    const rsa = key.algorithm as RsaHashedKeyAlgorithm
    if (rsa.name !== "RSASSA-PKCS1-v1_5" || rsa.hash?.name !== "SHA-256") return "algorithm-mismatch"
    if (typeof rsa.modulusLength !== "number" || rsa.modulusLength < minRsaModulusBits) return "rsa-modulus-too-short"
    return undefined
  }
  const ec = key.algorithm as EcKeyAlgorithm
  return ec.name === "ECDSA" && ec.namedCurve === "P-256" ? undefined : "algorithm-mismatch"
}

const importKey = (
  privateKey: CryptoKey | Redacted.Redacted<string>,
  algorithm: ClientAssertionAlgorithm
): Effect.Effect<CryptoKey, InvalidOption> => {
  if (Redacted.isRedacted(privateKey)) {
    const pem: unknown = Redacted.value(privateKey)
    const der = typeof pem === "string" ? pemDer(pem) : undefined
    if (der === undefined) return Effect.fail(invalid("privateKey", "not-pkcs8-pem"))
    return Effect.tryPromise({
      // WebCrypto's error is not kept: only that the import failed.
      try: () => globalThis.crypto.subtle.importKey("pkcs8", der, importParams[algorithm], false, ["sign"]),
      catch: () => invalid("privateKey", "import-failed")
    }).pipe(Effect.filterOrElse(
      (key) => keyProblem(key, algorithm) === undefined,
      (key) => Effect.fail(invalid("privateKey", keyProblem(key, algorithm)))
    ))
  }
  if (!isCryptoKeyLike(privateKey)) return Effect.fail(invalid("privateKey", "not-a-key"))
  const problem = keyProblem(privateKey, algorithm)
  return problem === undefined ? Effect.succeed(privateKey) : Effect.fail(invalid("privateKey", problem))
}

/** Validates every option but the key, in order; the first invalid one is named. */
const validate = (options: ClientAssertionOptions): InvalidOption | number => {
  if (typeof options.clientId !== "string" || options.clientId.length === 0) return invalid("clientId")
  if (typeof options.audience !== "string") return invalid("audience")
  const audience = parseHttpUrl(options.audience)
  if (audience === undefined || !isSecure(audience) || options.audience.includes("#")) return invalid("audience")
  if (!clientAssertionAlgorithms.includes(options.algorithm)) return invalid("algorithm")
  if (options.keyId !== undefined && (typeof options.keyId !== "string" || options.keyId.length === 0)) {
    return invalid("keyId")
  }
  const lifetime = options.lifetimeSeconds ?? defaultLifetimeSeconds
  if (!Number.isSafeInteger(lifetime) || lifetime < minLifetimeSeconds || lifetime > maxLifetimeSeconds) {
    return invalid("lifetimeSeconds")
  }
  return lifetime
}

/**
 * Validates the options and imports the key once; the signer's `sign` makes a fresh assertion
 * (new `jti`, `iat` from the `Clock`) at each run.
 */
export const makeClientAssertionSigner = (
  options: ClientAssertionOptions
): Effect.Effect<ClientAssertionSigner, InvalidOption> =>
  Effect.suspend(() => {
    const lifetime = validate(options)
    if (typeof lifetime !== "number") return Effect.fail(lifetime)
    const { algorithm, audience, clientId, keyId } = options
    const header = base64UrlJson(keyId === undefined ? { alg: algorithm, typ: "JWT" } : { alg: algorithm, typ: "JWT", kid: keyId })
    return Effect.map(importKey(options.privateKey, algorithm), (key): ClientAssertionSigner => ({
      algorithm,
      sign: Effect.gen(function*() {
        const iat = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const jti = Encoding.encodeBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(jtiOctets)))
        const claims = base64UrlJson({ iss: clientId, sub: clientId, aud: audience, jti, iat, exp: iat + lifetime })
        const signingInput = `${header}.${claims}`
        const signature = yield* Effect.tryPromise({
          try: () => globalThis.crypto.subtle.sign(signParams[algorithm], key, new TextEncoder().encode(signingInput)),
          catch: () => invalid("privateKey", "signing-failed")
        })
        // ES256 (RFC 7518 §3.4): exactly the 64 octets of r || s.
        if (algorithm === "ES256" && signature.byteLength !== 64) return yield* Effect.fail(invalid("privateKey", "signing-failed"))
        return Redacted.make(`${signingInput}.${Encoding.encodeBase64Url(new Uint8Array(signature))}`)
      })
    }))
  })

/** One fresh client assertion (a compact JWS, `Redacted`): `makeClientAssertionSigner` and one `sign`. */
export const makeClientAssertion = (
  options: ClientAssertionOptions
): Effect.Effect<Redacted.Redacted<string>, InvalidOption> => Effect.flatMap(makeClientAssertionSigner(options), (signer) => signer.sign)

/** The form parameters of the assertion, for the token request (RFC 7523 §2.2). */
export const clientAssertionParameters = (
  assertion: Redacted.Redacted<string>
): ReadonlyArray<readonly [string, string]> => [
  ["client_assertion_type", clientAssertionType],
  ["client_assertion", Redacted.value(assertion)]
]
