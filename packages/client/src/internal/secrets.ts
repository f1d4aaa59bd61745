/**
 * Secret values of a configuration (every header value, URL userinfo, every query value, a
 * child's environment values) and their redaction from text. Only peer-provided text that
 * reaches a public field (`remoteMessage`) and debug output are ever redacted: everything
 * else never carries such values in the first place.
 */

/**
 * Each value, its whitespace-separated parts (`Bearer abc` is often quoted without its
 * scheme), its percent-decoded form, and for `user:password` its base64 (a Basic header).
 * Longest first, so a secret that contains another is redacted whole.
 */
export const secretValues = (values: Iterable<string>): ReadonlyArray<string> => {
  const secrets = new Set<string>()
  for (const value of values) {
    const trimmed = value.trim()
    if (trimmed.length === 0) continue
    secrets.add(trimmed)
    for (const part of trimmed.split(/\s+/)) if (part.length >= 3) secrets.add(part)
    try {
      const decoded = decodeURIComponent(trimmed)
      if (decoded !== trimmed) secrets.add(decoded)
    } catch {
      // not percent-encoded: nothing more to add
    }
    if (/^[^:]*:/.test(trimmed)) secrets.add(btoa(unescape(encodeURIComponent(trimmed))))
  }
  return [...secrets].sort((a, b) => b.length - a.length)
}

/** URL userinfo (also as `user:password`) and every query value. */
const urlSecretValues = (url: URL): ReadonlyArray<string> => {
  const values: Array<string> = []
  if (url.username !== "") values.push(url.username)
  if (url.password !== "") values.push(url.password)
  if (url.username !== "" || url.password !== "") {
    values.push(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`)
  }
  for (const [, value] of url.searchParams) values.push(value)
  return values
}

/** The secrets of an HTTP target. */
export const secretsOf = (url: URL | undefined, headers: Readonly<Record<string, string>>): ReadonlyArray<string> =>
  secretValues([...Object.values(headers), ...(url === undefined ? [] : urlSecretValues(url))])

/** Replaces every secret of 3 characters or more (shorter ones would redact ordinary text). */
export const redact = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length >= 3) out = out.split(secret).join("[redacted]")
  }
  return out
}
