/**
 * The secret values of a configuration: every header value, URL userinfo and every query
 * value. They are redacted from the only peer-provided text that reaches a public field
 * (`remoteMessage`).
 */

/** @internal */
export const secretsOf = (url: URL | undefined, headers: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const secrets = new Set<string>()
  const add = (value: string) => {
    const trimmed = value.trim()
    if (trimmed.length === 0) return
    secrets.add(trimmed)
    // "Bearer abc" is often quoted without its scheme.
    for (const part of trimmed.split(/\s+/)) if (part.length >= 3) secrets.add(part)
    try {
      const decoded = decodeURIComponent(trimmed)
      if (decoded !== trimmed) secrets.add(decoded)
    } catch {
      // not percent-encoded: nothing more to add
    }
  }
  for (const value of Object.values(headers)) add(value)
  if (url !== undefined) {
    if (url.username) add(url.username)
    if (url.password) add(url.password)
    for (const [, value] of url.searchParams) add(value)
  }
  // Longest first, so a secret containing another is redacted whole.
  return [...secrets].sort((a, b) => b.length - a.length)
}
