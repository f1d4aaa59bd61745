/**
 * Secret values of a configuration (every header value and its cookie or parameter values, URL
 * userinfo, every query value, long URL path segments, a child's environment values) and their
 * redaction from text (docs/DESIGN.md, "Errors": Redaction). Only peer-provided text that
 * reaches a public field (`remoteMessage`) and debug output are ever redacted: everything else
 * never carries such values in the first place.
 */

/** A path segment at least this long is taken for a secret (`/mcp/<token>/`); shorter ones are route names. */
export const minPathSecretLength = 8

/** Base64 of the UTF-8 bytes; none for a string that is not well-formed UTF-16 (a lone surrogate). */
const base64Of = (value: string): string | undefined => {
  try {
    return btoa(unescape(encodeURIComponent(value)))
  } catch {
    return undefined
  }
}

/** The value percent-decoded, when that changes it and it is well-formed. */
const percentDecoded = (value: string): string | undefined => {
  try {
    const decoded = decodeURIComponent(value)
    return decoded === value ? undefined : decoded
  } catch {
    return undefined
  }
}

/**
 * Each value, its parts (split at whitespace, `;` and `,`, then at `&`: `Bearer abc` is often
 * quoted without its scheme, a cookie or parameter list without its neighbours), the value of
 * each `name=value` part (a cookie's value alone), and of each of these its percent-decoded
 * form and its base64 and base64url forms (for `user:password`, a Basic header). Longest
 * first, so a secret that contains another is redacted whole. The percent-encoded, JSON-escaped
 * and control-character-split forms are not listed: `redact` matches them.
 */
export const secretValues = (values: Iterable<string>): ReadonlyArray<string> => {
  const secrets = new Set<string>()
  const add = (value: string): void => {
    if (value.length < 3 || secrets.has(value)) return
    secrets.add(value)
    const decoded = percentDecoded(value)
    if (decoded !== undefined) add(decoded)
    const base64 = base64Of(value)
    if (base64 === undefined) return
    secrets.add(base64)
    const base64url = base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
    if (base64url.length >= 3) secrets.add(base64url)
  }
  for (const value of values) {
    const trimmed = value.trim()
    if (trimmed.length === 0) continue
    add(trimmed)
    // Cookie pairs (whose values may hold `&`), then query-like pairs within them.
    for (const part of trimmed.split(/[\s;,]+/)) {
      for (const piece of part.includes("&") ? [part, ...part.split("&")] : [part]) {
        add(piece)
        const equals = piece.indexOf("=")
        if (equals > 0) add(piece.slice(equals + 1).replace(/^"(.*)"$/, "$1"))
      }
    }
  }
  return [...secrets].sort((a, b) => b.length - a.length)
}

/** Lists of secrets as one, without repeats or empty values, longest first (so that a secret holding another is redacted whole). */
export const mergeSecrets = (...lists: ReadonlyArray<ReadonlyArray<string>>): Array<string> =>
  [...new Set(lists.flat().filter((secret) => secret.length > 0))].sort((a, b) => b.length - a.length)

/** URL userinfo (also as `user:password`), every query value, and every long path segment. */
const urlSecretValues = (url: URL): ReadonlyArray<string> => {
  const values: Array<string> = []
  if (url.username !== "") values.push(url.username)
  if (url.password !== "") values.push(url.password)
  if (url.username !== "" || url.password !== "") {
    values.push(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`)
  }
  for (const [, value] of url.searchParams) values.push(value)
  for (const segment of url.pathname.split("/")) {
    if (segment.length >= minPathSecretLength) values.push(segment)
  }
  return values
}

/** The secrets of an HTTP target. */
export const secretsOf = (url: URL | undefined, headers: Readonly<Record<string, string>>): ReadonlyArray<string> =>
  secretValues([...Object.values(headers), ...(url === undefined ? [] : urlSecretValues(url))])

/**
 * Characters that do not show as themselves: C0 and C1 controls (newlines included), zero-width
 * and bidirectional formatting characters, line and paragraph separators, the BOM. A peer can
 * put one inside a secret it echoes; a display strips them.
 */
const invisibleCharacters = "\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u2028-\\u202e" +
  "\\u2060-\\u2064\\u2066-\\u2069\\ufeff"

const anyInvisible = `[${invisibleCharacters}]*`

/** One invisible character, to be removed from a secret or turned into a space in a display. */
export const invisibleCharacterPattern = new RegExp(`[${invisibleCharacters}]`, "g")

/** Whether a UTF-16 code unit is one of `invisibleCharacters` (the same ranges, without a regular expression). */
export const isInvisible = (code: number): boolean =>
  code <= 0x1f || (code >= 0x7f && code <= 0x9f) || (code >= 0x200b && code <= 0x200f) || (code >= 0x2028 && code <= 0x202e) ||
  (code >= 0x2060 && code <= 0x2064) || (code >= 0x2066 && code <= 0x2069) || code === 0xfeff

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")

/** `2F` as `2[Ff]`: hex digits in either case, `width` of them. */
const hexPattern = (value: number, width: number): string =>
  Array.from(
    value.toString(16).toUpperCase().padStart(width, "0"),
    (digit) => /[A-F]/.test(digit) ? `[${digit}${digit.toLowerCase()}]` : digit
  ).join("")

/**
 * One character of a secret: itself, its UTF-8 bytes percent-encoded, or (a message quoting a
 * JSON body) its JSON escape, `\u002f` or `\/`, hex digits in either case; a space also as `+`.
 * (No form starts with an invisible character: with the runs of them allowed between two
 * characters, that would make a match quadratic in the length of such a run.)
 */
const characterPattern = (character: string): string => {
  const percent = Array.from(new TextEncoder().encode(character), (byte) => `%${hexPattern(byte, 2)}`).join("")
  const json = Array.from(
    { length: character.length },
    (_, i) => `\\\\u${hexPattern(character.charCodeAt(i), 4)}`
  ).join("")
  const forms = [escapeRegExp(character), percent, json]
  if (character === "/" || character === "\"" || character === "\\") forms.push(`\\\\${escapeRegExp(character)}`)
  if (character === " ") forms.push("\\+")
  return `(?:${forms.join("|")})`
}

/** What replaces a secret. */
export const replacement = "[redacted]"

/** A secret's pattern, with what bounds the text a match of it may span. */
export interface SecretPattern {
  /** Global: reset `lastIndex` before using it, it is shared. */
  readonly pattern: RegExp
  /** The visible characters (code points) of the secret: a match is at least this many code units long. */
  readonly visible: number
  /**
   * The most visible code units a match can hold: each character's longest form (12 units: a
   * 4-byte UTF-8 character percent-encoded, or a surrogate pair JSON-escaped). Only invisible
   * characters can make a match longer.
   */
  readonly maxVisibleUnits: number
}

const patterns = new Map<string, SecretPattern | undefined>()

/**
 * The secret as it may travel: each character as itself, percent-encoded (`%2F` or `%2f`) or
 * JSON-escaped, with any invisible characters between them (a secret split by `\u0000` or a
 * newline). None for a secret of fewer than 3 visible characters (it would redact ordinary text).
 */
const patternOf = (secret: string): SecretPattern | undefined => {
  if (patterns.has(secret)) return patterns.get(secret)
  const visible = Array.from(secret.replace(invisibleCharacterPattern, ""))
  const pattern = visible.length >= 3
    ? { pattern: new RegExp(visible.map(characterPattern).join(anyInvisible), "g"), visible: visible.length, maxVisibleUnits: 12 * visible.length }
    : undefined
  // A cache, not a registry: a long-lived process with ever-new tokens starts over.
  if (patterns.size >= 1024) patterns.clear()
  patterns.set(secret, pattern)
  return pattern
}

/** The patterns of the secrets that have one, in their order. */
export const patternsOf = (secrets: ReadonlyArray<string>): ReadonlyArray<SecretPattern> => {
  const out: Array<SecretPattern> = []
  for (const secret of secrets) {
    const pattern = patternOf(secret)
    if (pattern !== undefined) out.push(pattern)
  }
  return out
}

/**
 * Replaces every secret of 3 characters or more (shorter ones would redact ordinary text), also
 * percent-encoded, JSON-escaped and split by invisible characters (see `patternOf`).
 */
export const redact = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    const pattern = patternOf(secret)
    if (pattern !== undefined) out = out.replace(pattern.pattern, replacement)
  }
  return out
}

/**
 * The configured secrets of each connection (the array its tokens join as they are obtained),
 * for a catalog, which redacts with those of every server it connected.
 */
const connectionSecrets = new WeakMap<object, ReadonlyArray<string>>()

export const registerSecrets = (connection: object, secrets: ReadonlyArray<string>): void => {
  connectionSecrets.set(connection, secrets)
}

export const secretsOfConnection = (connection: object): ReadonlyArray<string> => connectionSecrets.get(connection) ?? []

/**
 * A call option only the catalog gives a connection's `callTool`: the secrets `redact: true`
 * clears from the result, read once the result is in, in place of the connection's own.
 */
export const redactWith: unique symbol = Symbol("phasebound/redactWith")
