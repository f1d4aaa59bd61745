/**
 * The `WWW-Authenticate` challenges of a 401 or 403 and the Bearer parameters MCP
 * authorization acts on, with the specification's rule for the scope to request. Pure: no I/O.
 *
 * Grammar (RFC 9110 §11.6.1, lists per §5.6.1, field lines per §5.3):
 *
 *     WWW-Authenticate = #challenge
 *     challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *     auth-param       = token BWS "=" BWS ( token / quoted-string )
 *
 * The header is peer input, so it is read by a one-pass scanner (no regular expression, no
 * backtracking beyond one list element), bounded in length, challenges and parameters, and
 * nothing here throws. Choices where the RFC leaves room:
 *
 * - A header that breaks the grammar anywhere is refused whole (`malformed`), never half-read:
 *   a parser that skips what it does not understand can be made to read a parameter where the
 *   server meant none.
 * - A parameter name given twice in one challenge (names compare without regard to case) makes
 *   the header `malformed`: RFC 9110 says each name occurs once, RFC 6750 §3 says the same of
 *   Bearer's; "first wins" and "last wins" parsers would disagree about which one applies.
 * - Several field lines are one list joined with ", " (RFC 9110 §5.3), bounded as a whole.
 * - A `name=value` list element always belongs to the challenge before it: a comma separates
 *   both challenges and the parameters of one challenge, and a scheme is never followed by "=".
 * - Several Bearer challenges: the first one is read (RFC 9110 lets a server send one per realm).
 *
 * `error_description` is the server's free text and may echo anything, a token included: it is
 * kept as `Redacted` and never belongs in a public field, message, span or log (docs/DESIGN.md,
 * "Errors").
 */
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"

/** Longest header value read (all field lines joined); a longer one is refused as `too-large`. */
export const maxChallengeHeaderLength = 8 * 1024

/** Most challenges read from one header value; more is refused as `too-large`. */
export const maxChallenges = 16

/** Most auth-params read from one header value, over all its challenges; more is `too-large`. */
export const maxChallengeParameters = 32

/** One challenge of a `WWW-Authenticate` header, as the grammar gives it. */
export interface Challenge {
  /** The auth-scheme in lower case (schemes are case-insensitive). */
  readonly scheme: string
  /** The token68 form, when the challenge has one (then it has no parameters). */
  readonly token68: string | undefined
  /** Parameter names in lower case; values unquoted (a token and a quoted-string are equal). */
  readonly params: ReadonlyMap<string, string>
}

/** Why a header value was not read: it breaks the grammar, or it is past one of the bounds. */
export type ChallengeRefusal = "malformed" | "too-large"

// Character classes, by code unit. Anything at or above 0x100 is in none of them: a header
// value is a byte string, and a character outside Latin-1 cannot have come from the wire.
const SP = 0x20
const HTAB = 0x09
const COMMA = 0x2c
const EQUALS = 0x3d
const DQUOTE = 0x22
const BACKSLASH = 0x5c

const charClass = (chars: string, ranges: ReadonlyArray<readonly [number, number]> = []): Uint8Array => {
  const table = new Uint8Array(0x100)
  for (const [from, to] of ranges) table.fill(1, from, to + 1)
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1
  return table
}
const alphaDigit: ReadonlyArray<readonly [number, number]> = [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]]
// RFC 9110 §5.6.2 tchar.
const tchar = charClass("!#$%&'*+-.^_`|~", alphaDigit)
// RFC 9110 §11.2 token68, before its trailing "=" padding.
const token68char = charClass("-._~+/", alphaDigit)
// RFC 9110 §5.6.4: qdtext is HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text.
const qdtext = charClass("\t", [[0x20, 0x21], [0x23, 0x5b], [0x5d, 0x7e], [0x80, 0xff]])
// RFC 9110 §5.6.4: quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ).
const quotable = charClass("\t", [[0x20, 0x7e], [0x80, 0xff]])

const isIn = (table: Uint8Array, code: number): boolean => code < 0x100 && table[code] === 1

/** A cursor over one header value. Every method moves forward only. */
class Scanner {
  i = 0
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.i >= this.text.length
  }

  /** The code unit at the cursor; NaN at the end, which is in no class. */
  peek(): number {
    return this.text.charCodeAt(this.i)
  }

  /** OWS / BWS: SP and HTAB. */
  skipWhitespace(): void {
    while (this.peek() === SP || this.peek() === HTAB) this.i++
  }

  /** SP only (the `1*SP` after a scheme); how many. */
  skipSpaces(): number {
    const start = this.i
    while (this.peek() === SP) this.i++
    return this.i - start
  }

  /** Whether only OWS remains before the end or a comma (the end of a list element). */
  atElementEnd(): boolean {
    const start = this.i
    this.skipWhitespace()
    const end = this.done || this.peek() === COMMA
    this.i = start
    return end
  }

  token(): string | undefined {
    const start = this.i
    while (isIn(tchar, this.peek())) this.i++
    return this.i > start ? this.text.slice(start, this.i) : undefined
  }

  token68(): string | undefined {
    const start = this.i
    while (isIn(token68char, this.peek())) this.i++
    if (this.i === start) return undefined
    while (this.peek() === EQUALS) this.i++
    return this.text.slice(start, this.i)
  }

  /** A quoted-string, its quoted-pairs unescaped; the cursor is on the opening quote. */
  quotedString(): string | undefined {
    this.i++
    let value = ""
    let runStart = this.i
    for (;;) {
      const code = this.peek()
      if (code === DQUOTE) {
        value += this.text.slice(runStart, this.i)
        this.i++
        return value
      }
      if (code === BACKSLASH) {
        value += this.text.slice(runStart, this.i)
        this.i++
        if (!isIn(quotable, this.peek())) return undefined
        runStart = this.i
        this.i++
      } else if (isIn(qdtext, code)) {
        this.i++
      } else {
        // The end of the text (unterminated), a control character or a non-Latin-1 one.
        return undefined
      }
    }
  }

  /** An auth-param value: token or quoted-string. */
  value(): string | undefined {
    return this.peek() === DQUOTE ? this.quotedString() : this.token()
  }
}

interface MutableChallenge {
  readonly scheme: string
  token68: string | undefined
  readonly params: Map<string, string>
}

/**
 * Every challenge of a header value, in order; empty list elements are skipped and OWS is
 * allowed around commas and `=`. `Left` when the value breaks the grammar or a bound.
 */
export const parseChallenges = (header: string): Either.Either<ReadonlyArray<Challenge>, ChallengeRefusal> => {
  if (header.length > maxChallengeHeaderLength) return Either.left("too-large")
  const scanner = new Scanner(header)
  const challenges: Array<MutableChallenge> = []
  let parameterCount = 0

  /** Adds `name BWS "=" BWS value` to `challenge`; the cursor is after the name. */
  const addParam = (challenge: MutableChallenge, name: string): ChallengeRefusal | undefined => {
    scanner.skipWhitespace()
    if (scanner.peek() !== EQUALS) return "malformed"
    scanner.i++
    scanner.skipWhitespace()
    const value = scanner.value()
    if (value === undefined) return "malformed"
    const key = name.toLowerCase()
    if (challenge.params.has(key)) return "malformed"
    if (++parameterCount > maxChallengeParameters) return "too-large"
    challenge.params.set(key, value)
    return undefined
  }

  scanner.skipWhitespace()
  while (!scanner.done) {
    if (scanner.peek() === COMMA) {
      // An empty list element, or the comma after the element before.
      scanner.i++
      scanner.skipWhitespace()
      continue
    }
    const start = scanner.i
    const name = scanner.token()
    if (name === undefined) return Either.left("malformed")
    scanner.skipWhitespace()
    const current = challenges[challenges.length - 1]
    if (scanner.peek() === EQUALS) {
      // `name=value`: a parameter of the challenge before (never of a token68 one).
      if (current === undefined || current.token68 !== undefined) return Either.left("malformed")
      const refused = addParam(current, name)
      if (refused !== undefined) return Either.left(refused)
    } else {
      // A new challenge: auth-scheme [ 1*SP ( token68 / auth-param ) ].
      scanner.i = start + name.length
      if (challenges.length >= maxChallenges) return Either.left("too-large")
      const challenge: MutableChallenge = { scheme: name.toLowerCase(), token68: undefined, params: new Map() }
      challenges.push(challenge)
      const spaces = scanner.skipSpaces()
      if (!scanner.atElementEnd()) {
        if (spaces === 0) return Either.left("malformed")
        // token68 when it makes the whole element; otherwise the first auth-param. The two
        // cannot both fit: an auth-param has a value after its "=", token68 ends with "=".
        const afterSpaces = scanner.i
        const token68 = scanner.token68()
        if (token68 !== undefined && scanner.atElementEnd()) {
          challenge.token68 = token68
        } else {
          scanner.i = afterSpaces
          const first = scanner.token()
          if (first === undefined) return Either.left("malformed")
          const refused = addParam(challenge, first)
          if (refused !== undefined) return Either.left(refused)
        }
      }
    }
    // The element ends with OWS, then the end or a comma.
    scanner.skipWhitespace()
    if (!scanner.done && scanner.peek() !== COMMA) return Either.left("malformed")
  }
  return Either.right(challenges)
}

/** RFC 6750 §3.1 error codes. A server may send others (extension codes). */
export type BearerErrorCode = "invalid_request" | "invalid_token" | "insufficient_scope"

/** The parameters of a Bearer challenge that MCP authorization uses. */
export interface BearerChallenge {
  readonly _tag: "BearerChallenge"
  /**
   * RFC 9728 §5.1: where the Protected Resource Metadata is. Only an absolute http(s) URL of
   * visible ASCII without userinfo, as `URL.href`; anything else is ignored (`undefined`), and
   * discovery falls back to the well-known URLs.
   */
  readonly resourceMetadata: string | undefined
  /**
   * RFC 6750 §3: the scopes the request needs, in order, without repeats. `undefined` when
   * absent or not a valid RFC 6749 §3.3 scope (tokens separated by spaces).
   */
  readonly scope: ReadonlyArray<string> | undefined
  /**
   * RFC 6750 §3.1 error code, or another code of valid characters (RFC 6749 §A.7). Chosen by
   * the server: a code other than the three known ones is peer text.
   */
  readonly error: BearerErrorCode | (string & {}) | undefined
  /**
   * SECRET-BEARING: the server's free text (RFC 6750 §3), which may echo a token. Kept in
   * process only, never in a public field, message, span or log (docs/DESIGN.md, "Errors").
   * Left out when it has characters RFC 6749 §A.8 does not allow.
   */
  readonly errorDescription: Redacted.Redacted<string> | undefined
  readonly realm: string | undefined
}

/**
 * No Bearer challenge to act on: none in the header (`absent`, also for no header at all), or
 * the header refused (`malformed`, `too-large`; see the module comment).
 */
export interface NoBearerChallenge {
  readonly _tag: "NoBearerChallenge"
  readonly reason: "absent" | ChallengeRefusal
}

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
export const isScopeToken = (token: string): boolean => {
  if (token.length === 0) return false
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i)
    if (code < 0x21 || code > 0x7e || code === DQUOTE || code === BACKSLASH) return false
  }
  return true
}

/**
 * A `scope` value as its tokens, in order, without repeats; `undefined` when empty or when a
 * token has a character RFC 6749 §3.3 does not allow. Tokens are separated by one or more SP
 * (the RFC says one: extra spaces do not change which scopes are meant).
 */
export const parseScope = (value: string): ReadonlyArray<string> | undefined => {
  const tokens = new Set<string>()
  for (const token of value.split(" ")) {
    if (token.length === 0) continue
    if (!isScopeToken(token)) return undefined
    tokens.add(token)
  }
  return tokens.size === 0 ? undefined : [...tokens]
}

// RFC 6749 §A.7 / §A.8: error and error_description = 1*NQSCHAR, NQSCHAR = %x20-21 / %x23-5B / %x5D-7E.
const isNqsText = (text: string): boolean => {
  if (text.length === 0) return false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code > 0x7e || code === DQUOTE || code === BACKSLASH) return false
  }
  return true
}

const isVisibleAscii = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x21 || code > 0x7e) return false
  }
  return true
}

/**
 * An absolute http(s) URL, or `undefined`. Only visible ASCII is accepted, since the URL parser
 * would silently drop tabs, newlines and surrounding spaces; userinfo is refused, since it
 * would be sent as credentials to whoever the URL names.
 */
const httpUrl = (value: string | undefined): string | undefined => {
  if (value === undefined || value.length === 0 || !isVisibleAscii(value)) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined
  if (url.username !== "" || url.password !== "") return undefined
  return url.href
}

/** The field lines as one list (RFC 9110 §5.3), bounded as a whole before it is built. */
const joinFieldLines = (lines: ReadonlyArray<unknown>): Either.Either<string, ChallengeRefusal> => {
  let length = 0
  for (const [index, line] of lines.entries()) {
    if (typeof line !== "string") return Either.left("malformed")
    length += line.length + (index === 0 ? 0 : 2)
    if (length > maxChallengeHeaderLength) return Either.left("too-large")
  }
  return Either.right(lines.join(", "))
}

const noBearer = (reason: NoBearerChallenge["reason"]): NoBearerChallenge => ({ _tag: "NoBearerChallenge", reason })

/**
 * The Bearer challenge of a 401 or 403, from the `WWW-Authenticate` value as an HTTP client
 * gives it: one string (field lines already joined), the field lines, or nothing. Parameters
 * with invalid values are left out one by one; a header that breaks the grammar or a bound is
 * refused whole. Never throws.
 */
export const parseBearerChallenge = (
  header: string | ReadonlyArray<string> | null | undefined
): BearerChallenge | NoBearerChallenge => {
  if (header === undefined || header === null) return noBearer("absent")
  const joined = typeof header === "string"
    ? Either.right(header)
    : Array.isArray(header)
    ? joinFieldLines(header)
    : Either.left("malformed" as const)
  if (Either.isLeft(joined)) return noBearer(joined.left)
  const parsed = parseChallenges(joined.right)
  if (Either.isLeft(parsed)) return noBearer(parsed.left)
  const bearer = parsed.right.find((challenge) => challenge.scheme === "bearer")
  if (bearer === undefined) return noBearer("absent")
  const { params } = bearer
  const scope = params.get("scope")
  const error = params.get("error")
  const description = params.get("error_description")
  return {
    _tag: "BearerChallenge",
    resourceMetadata: httpUrl(params.get("resource_metadata")),
    scope: scope === undefined ? undefined : parseScope(scope),
    error: error !== undefined && isNqsText(error) ? error : undefined,
    errorDescription: description !== undefined && isNqsText(description) ? Redacted.make(description) : undefined,
    realm: params.get("realm")
  }
}

/** What the scope of an authorization request is chosen from. */
export interface ScopeSources {
  /** The `scope` of the Bearer challenge that asked for authorization, when it had one. */
  readonly challenged: ReadonlyArray<string> | undefined
  /** `scopes_supported` of the Protected Resource Metadata (RFC 9728 §2). */
  readonly resourceScopesSupported: ReadonlyArray<string> | undefined
  /** `scopes_supported` of the Authorization Server Metadata (RFC 8414 §2). */
  readonly authorizationServerScopesSupported: ReadonlyArray<string> | undefined
  /** Whether the client wants a refresh token. */
  readonly wantsRefreshToken: boolean
}

const distinctScopeTokens = (...lists: ReadonlyArray<ReadonlyArray<string> | undefined>): Array<string> => {
  const tokens = new Set<string>()
  for (const list of lists) for (const token of list ?? []) if (isScopeToken(token)) tokens.add(token)
  return [...tokens]
}

/**
 * The scopes of an initial authorization request; `undefined` means the `scope` parameter is
 * omitted. MCP specification, Authorization, "Scope Selection Strategy" (2025-11-25 and
 * 2026-07-28):
 *
 * 1. the challenge's `scope`, when it has one (authoritative: no set relationship with
 *    `scopes_supported` is assumed);
 * 2. else every scope of the Protected Resource Metadata's `scopes_supported`;
 * 3. else the parameter is omitted.
 *
 * Then, 2026-07-28 "Refresh Tokens": a client that wants refresh tokens MAY add
 * `offline_access` to the `scope` parameter when the Authorization Server Metadata lists it in
 * `scopes_supported`. It is added only to a parameter that exists: requesting `offline_access`
 * alone would replace the server's default scopes with a refresh-only grant. Tokens that are
 * not valid RFC 6749 scope tokens are left out; the result has no repeats.
 */
export const selectScope = (sources: ScopeSources): ReadonlyArray<string> | undefined => {
  const challenged = distinctScopeTokens(sources.challenged)
  const base = challenged.length > 0 ? challenged : distinctScopeTokens(sources.resourceScopesSupported)
  if (base.length === 0) return undefined
  if (
    sources.wantsRefreshToken &&
    (sources.authorizationServerScopesSupported ?? []).includes("offline_access") &&
    !base.includes("offline_access")
  ) {
    base.push("offline_access")
  }
  return base
}

/**
 * The scopes of a step-up authorization after a 403 `insufficient_scope`: the union of the
 * scopes requested before and the challenge's, previous ones first; `undefined` when both are
 * empty. MCP specification 2026-07-28, Authorization, "Step-Up Authorization Flow" (the union
 * keeps permissions granted for other operations when a server challenges per operation); it
 * also meets 2025-11-25's "Step-Up Authorization Flow", which asks for the challenge's scopes.
 */
export const stepUpScope = (
  previouslyRequested: ReadonlyArray<string> | undefined,
  challenged: ReadonlyArray<string> | undefined
): ReadonlyArray<string> | undefined => {
  const union = distinctScopeTokens(previouslyRequested, challenged)
  return union.length === 0 ? undefined : union
}
