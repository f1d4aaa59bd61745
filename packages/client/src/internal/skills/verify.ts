/**
 * The checks of a skill file against its entry (docs/DESIGN.md, "Skills"): the bytes the entry
 * covers (a text's UTF-8, a blob's base64 decoded strictly), their length, their SHA-256, and
 * for a `SKILL.md` its frontmatter compared field by field with the entry's.
 */
import * as Effect from "effect/Effect"
import type * as McpSchema from "../../McpSchema.js"
import type * as McpSkills from "../../McpSkills.js"

const utf8 = new TextEncoder()

/** `sha256:` and the lowercase hexadecimal SHA-256 of `bytes` (WebCrypto: Node, Bun, browsers). */
export const sha256Digest = (bytes: Uint8Array<ArrayBuffer>): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", bytes)),
    (hash) => `sha256:${Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, "0")).join("")}`
  )

/** The standard base64 alphabet with its padding, nothing else (no line breaks, no URL alphabet). */
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** The bytes of a content item: a text's UTF-8, a blob's base64; `undefined` for a blob that is not base64. */
export const bytesOf = (content: McpSchema.ResourceContents): Uint8Array<ArrayBuffer> | undefined => {
  if ("text" in content) return utf8.encode(content.text)
  if (!base64.test(content.blob)) return undefined
  const binary = atob(content.blob)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** The content item of `uri` in a read's result: the one that names it, else the only one. */
export const contentOf = (result: McpSchema.ReadResourceResult, uri: string): McpSchema.ResourceContents | undefined =>
  result.contents.find((c) => c.uri === uri) ?? (result.contents.length === 1 ? result.contents[0] : undefined)

/** UTF-8 decoded only when nothing is lost. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Whether the entry's frontmatter and the file's are the same: every key both ways (own keys
 * only), objects in any key order, arrays in order, numbers by value, no coercion. The walk
 * goes no deeper than the parsed side, which the reader bounds (`frontmatterLimits.maxDepth`).
 */
export const sameFrontmatter = (entry: unknown, parsed: unknown): boolean => {
  if (Array.isArray(parsed)) {
    return Array.isArray(entry) && entry.length === parsed.length && parsed.every((item, i) => sameFrontmatter(entry[i], item))
  }
  if (isRecord(parsed)) {
    if (!isRecord(entry)) return false
    const keys = Object.keys(parsed)
    const entryKeys = Object.keys(entry)
    return keys.length === entryKeys.length && keys.every((key) => Object.hasOwn(entry, key) && sameFrontmatter(entry[key], parsed[key]))
  }
  return entry === parsed
}

/** The entry of `uri` among a skill's files, however either side percent-encodes it. */
export const entryOf = (skill: McpSkills.Skill, uri: string): McpSkills.SkillResourceEntry | undefined => {
  if (skill.resources === "dynamic") return undefined
  const wanted = normalized(uri)
  return skill.resources.find((entry) => entry.uri === uri) ?? skill.resources.find((entry) => normalized(entry.uri) === wanted)
}

const normalized = (uri: string): string => {
  try {
    return decodeURI(uri)
  } catch {
    return uri
  }
}

/**
 * The URI a reference names within a skill: an absolute URI as it is, a relative path under the
 * skill's root; a fragment dropped. `undefined` for a path that climbs out of the root.
 */
export const resolveRef = (skill: McpSkills.Skill, root: string, ref: string | undefined): string | undefined => {
  if (ref === undefined) return skill.uri
  const bare = ref.includes("#") ? ref.slice(0, ref.indexOf("#")) : ref
  if (bare === "") return undefined
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(bare)) return bare
  const segments = bare.split("/")
  if (bare.startsWith("/") || segments.some((s) => s === ".." || s === "." || s === "")) return undefined
  return `${root}/${bare}`
}
