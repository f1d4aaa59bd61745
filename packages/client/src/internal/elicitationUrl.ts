/**
 * What a URL-mode elicitation must be before anyone sees it (docs/DESIGN.md, "Client
 * capabilities", URL mode; docs/SECURITY.md, "1. The MCP server"): the checks of its URL and of
 * its other fields, whichever way it came (a server request on a stream, an input request of an
 * `input_required` round, the `data` of a `-32042` refusal). Pure functions over the server's
 * values: nothing is fetched, resolved or opened here, or anywhere in the library.
 *
 * A URL is handed on only when it is an absolute `https` URL, or `http` to a loopback host (a
 * server in development), with no userinfo (a URL that carries credentials is one the spec
 * forbids servers to send), no control, invisible or white-space character anywhere in the text
 * the server sent (the WHATWG parser would drop or encode them silently, and what the user is
 * shown must be what opens), and at most `maxUrlLength` characters before and after
 * normalization. The handler gets the normalized `href` (what a browser would open), its host to
 * show prominently, and whether that host is written in punycode (a look-alike domain may be).
 */
import type { UrlElicitation } from "../ClientHandlers.js"
import { addressKindOf } from "./oauth/addresses.js"

/** The longest URL handed on, in characters (before and after normalization). */
export const maxUrlLength = 8_192
/** The longest `elicitationId` accepted, in characters. */
export const maxElicitationIdLength = 1_024
/** The most elicitations one `-32042` refusal may ask for. */
export const maxElicitationsPerRefusal = 16

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Controls, white space of any kind, zero-width and bidirectional formatting characters, line
 * and paragraph separators, the BOM: nothing a URL may show or hide.
 */
// eslint-disable-next-line no-control-regex -- a URL with a control character is refused
const unsafeCharacter = /[\u0000-\u0020\u007f-\u00a0\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff]/

/** A URL checked for the user's eyes: its normalized form, its host, and a warning sign. */
export interface CheckedUrl {
  readonly url: string
  readonly host: string
  readonly punycode: boolean
}

/** The URL, normalized, when it may be handed on (see the module comment); `undefined` otherwise. */
export const checkUrl = (raw: unknown): CheckedUrl | undefined => {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > maxUrlLength || unsafeCharacter.test(raw)) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    return undefined
  }
  const secure = parsed.protocol === "https:" || (parsed.protocol === "http:" && addressKindOf(parsed.hostname) === "loopback")
  if (!secure || parsed.hostname === "" || parsed.username !== "" || parsed.password !== "") return undefined
  // Percent-encoding can make the normalized form longer than what was sent.
  if (parsed.href.length > maxUrlLength) return undefined
  return {
    url: parsed.href,
    host: parsed.hostname,
    punycode: parsed.hostname.split(".").some((label) => label.toLowerCase().startsWith("xn--"))
  }
}

/** An `elicitationId`: a non-empty opaque string, bounded, with nothing invisible in it. */
export const isElicitationId = (u: unknown): u is string =>
  typeof u === "string" && u.length > 0 && u.length <= maxElicitationIdLength && !unsafeCharacter.test(u)

/**
 * The params of a URL-mode `elicitation/create` as the handler sees them, or `undefined` when
 * they cannot be handed on. `requireId`: the 2025-11-25 request (on a stream, or in a `-32042`)
 * must name its elicitation; the 2026-07-28 one has no id (one it gives anyway is kept).
 */
export const urlElicitationOf = (params: unknown, requireId: boolean): UrlElicitation | undefined => {
  if (!isRecord(params) || params["mode"] !== "url" || typeof params["message"] !== "string") return undefined
  const id = params["elicitationId"]
  if (id === undefined ? requireId : !isElicitationId(id)) return undefined
  const checked = checkUrl(params["url"])
  if (checked === undefined) return undefined
  return { mode: "url", message: params["message"], elicitationId: id as string | undefined, ...checked }
}

/**
 * The elicitations of a `-32042` refusal's `data` (`{ elicitations: [...] }`): every one a URL
 * elicitation that can be handed on, each with its id, at least one and at most
 * `maxElicitationsPerRefusal`; `undefined` when any of them is not (a refusal the caller cannot
 * act on in full is no better than one it cannot act on at all).
 */
export const refusalElicitations = (data: unknown): ReadonlyArray<UrlElicitation> | undefined => {
  const listed = isRecord(data) ? data["elicitations"] : undefined
  if (!Array.isArray(listed) || listed.length === 0 || listed.length > maxElicitationsPerRefusal) return undefined
  const checked: Array<UrlElicitation> = []
  for (const entry of listed) {
    const elicitation = urlElicitationOf(entry, true)
    if (elicitation === undefined) return undefined
    checked.push(elicitation)
  }
  return checked
}
