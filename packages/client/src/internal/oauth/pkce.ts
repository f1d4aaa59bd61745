/**
 * PKCE with the S256 method (RFC 7636) and the `state` of an authorization request, from
 * WebCrypto (`globalThis.crypto`, in Node 20 and Bun). Pure but for randomness, which comes in
 * Effects.
 *
 * MCP requires PKCE and S256, and requires refusing an authorization server whose metadata
 * does not say it supports them (MCP specification, Authorization, "Authorization Code
 * Protection": 2025-11-25 in the authorization page, 2026-07-28 in its "Security
 * Considerations" page).
 *
 * The code verifier is a secret until the token request that proves it: it is kept as
 * `Redacted`, never in a public field, message, span or log (docs/DESIGN.md, "Errors"). The
 * challenge and the state travel in the authorization URL and are not secret.
 */
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"

/** The only code challenge method phasebound uses (never `plain`). */
export const codeChallengeMethod = "S256"

/**
 * Random octets behind a code verifier and a state: 256 bits, whose base64url form is 43
 * characters (RFC 7636 §4.1 recommends exactly this for the verifier).
 */
const randomOctets = 32

const randomBase64Url: Effect.Effect<string> = Effect.sync(() => Encoding.encodeBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(randomOctets))))

/** RFC 7636 §4.1: code-verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~". */
export const isCodeVerifier = (text: string): boolean => {
  if (text.length < 43 || text.length > 128) return false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const unreserved = (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x61 && code <= 0x7a) || code === 0x2d || code === 0x2e || code === 0x5f || code === 0x7e
    if (!unreserved) return false
  }
  return true
}

/** A fresh code verifier: 256 random bits as 43 base64url characters (all unreserved). */
export const makeCodeVerifier: Effect.Effect<Redacted.Redacted<string>> = Effect.map(randomBase64Url, Redacted.make)

/**
 * RFC 7636 §4.2 S256: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), without padding.
 * The verifier must satisfy `isCodeVerifier` (ASCII, so its UTF-8 bytes are its ASCII bytes).
 */
export const codeChallengeOf = (verifier: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(Redacted.value(verifier)))),
    (digest) => Encoding.encodeBase64Url(new Uint8Array(digest))
  )

/** The PKCE values of one authorization request. */
export interface Pkce {
  /** Secret: sent only in the token request. */
  readonly verifier: Redacted.Redacted<string>
  /** Sent as `code_challenge` in the authorization request. */
  readonly challenge: string
  readonly method: typeof codeChallengeMethod
}

/** A fresh verifier and its S256 challenge. */
export const makePkce: Effect.Effect<Pkce> = Effect.flatMap(
  makeCodeVerifier,
  (verifier) => Effect.map(codeChallengeOf(verifier), (challenge) => ({ verifier, challenge, method: codeChallengeMethod }))
)

/**
 * A fresh `state` for one authorization request (OAuth 2.1 §4.1.1; MCP, "Open Redirection":
 * clients SHOULD use and verify it): 256 random bits as 43 base64url characters.
 */
export const makeState: Effect.Effect<string> = randomBase64Url

/**
 * Why an authorization server is refused for PKCE: its metadata has no
 * `code_challenge_methods_supported` (`absent`; MCP: the server "does not support PKCE"), the
 * field is not an array of strings (`invalid`), or the array does not list `S256`.
 */
export type PkceRefusal = "absent" | "invalid" | "s256-not-listed"

/**
 * Whether the authorization server's metadata (RFC 8414, or OpenID Connect Discovery, where
 * MCP requires the same field) allows PKCE with S256: `Right("S256")`, or the refusal. Method
 * names are compared exactly (RFC 7636 §4.3: `S256`, not `s256`).
 */
export const requireS256 = (
  metadata: { readonly code_challenge_methods_supported?: unknown }
): Either.Either<typeof codeChallengeMethod, PkceRefusal> => {
  const methods = metadata.code_challenge_methods_supported
  if (methods === undefined) return Either.left("absent")
  if (!Array.isArray(methods) || !methods.every((method) => typeof method === "string")) {
    return Either.left("invalid")
  }
  return methods.includes(codeChallengeMethod) ? Either.right(codeChallengeMethod) : Either.left("s256-not-listed")
}
