/**
 * The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): what a server's skills
 * look like, and what phasebound gives back when it reads one of their files. The operations
 * are on the connection (`listSkills`, `getSkill`, `readSkillFile`); see docs/DESIGN.md,
 * "Skills".
 *
 * A skill is a folder of files whose root holds a `SKILL.md` (YAML frontmatter, then markdown).
 * The server lists each skill as an entry: the `SKILL.md`'s URI, its frontmatter as JSON, and
 * every file with its size and SHA-256 digest (or `"dynamic"` when it cannot list them).
 * phasebound fetches no file before it is asked, and verifies every file it reads against the
 * entry before returning it: its size, its digest, and for the `SKILL.md` its frontmatter.
 *
 * @example
 * ```ts
 * import { McpClient } from "@phasebound/client"
 * import { Effect } from "effect"
 *
 * const firstSkill = (connection: McpClient.Connection) =>
 *   Effect.gen(function*() {
 *     const { skills } = yield* connection.listSkills()
 *     if (skills.length === 0) return undefined
 *     // SKILL.md, verified; its frontmatter equals the entry's.
 *     return yield* connection.readSkillFile(skills[0]!)
 *   })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as McpSchema from "./McpSchema.js"

/**
 * The extension's identifier, as both sides declare it under `capabilities.extensions`.
 *
 * @since 0.1.0
 * @category constants
 */
export const extensionId = "io.modelcontextprotocol/skills" as const

/**
 * The methods of the extension.
 *
 * @since 0.1.0
 * @category constants
 */
export const methods = { list: "skills/list", get: "skills/get" } as const

/**
 * The bounds of phasebound's frontmatter reader (docs/DESIGN.md, "Skills"): a frontmatter
 * larger, deeper or with more nodes is refused (`skill-frontmatter-too-large`) before or while
 * it is parsed. Skills carry a name, a description and a little metadata: these leave room for
 * far more.
 *
 * @since 0.1.0
 * @category constants
 */
export const frontmatterLimits = { maxBytes: 65_536, maxDepth: 32, maxNodes: 4_096 } as const

const preserve = { onExcessProperty: "preserve" } as const

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A skill's frontmatter as the entry carries it: a JSON object with a string `name` and
 * `description`, and whatever else the file's frontmatter holds. Kept as the server sent it
 * (never copied key by key, so a `__proto__` key stays a plain field); an object with an own
 * `__proto__` key is refused, as the frontmatter of a file could never hold one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillFrontmatter: Schema.Schema<SkillFrontmatter> = Schema.declare(
  (u: unknown): u is SkillFrontmatter => isRecord(u) && typeof u["name"] === "string" && typeof u["description"] === "string" && !Object.hasOwn(u, "__proto__"),
  { identifier: "SkillFrontmatter" }
)

/**
 * @since 0.1.0
 * @category models
 */
export interface SkillFrontmatter {
  readonly name: string
  readonly description: string
  readonly [key: string]: unknown
}

/**
 * One file of a skill: its URI, its size in bytes and the SHA-256 of those bytes
 * (`sha256:` and 64 lowercase hexadecimal digits).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillResourceEntry = Schema.Struct({
  uri: Schema.String,
  digest: Schema.String.pipe(Schema.pattern(/^sha256:[0-9a-f]{64}$/)),
  size: Schema.NonNegativeInt
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category models
 */
export type SkillResourceEntry = typeof SkillResourceEntry.Type

/**
 * A skill as `skills/list` and `skills/get` give it: the URI of its `SKILL.md`, its
 * frontmatter, and its files (`"dynamic"`: the server cannot list them; they are read
 * unverified, the `SKILL.md`'s frontmatter still checked).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Skill = Schema.Struct({
  uri: Schema.String,
  frontmatter: SkillFrontmatter,
  resources: Schema.Union(Schema.Array(SkillResourceEntry), Schema.Literal("dynamic")),
  _meta: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ parseOptions: preserve })

/**
 * @since 0.1.0
 * @category models
 */
export type Skill = typeof Skill.Type

/**
 * What `listSkills` gives: every skill of every page, and the caching hint of the listing
 * (2026-07-28 servers give one).
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillListing {
  readonly skills: ReadonlyArray<Skill>
  readonly cacheHint: McpSchema.CacheHint | undefined
}

/**
 * A file of a skill, read and verified.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillFile {
  /** The URI read: the entry's spelling of it. */
  readonly uri: string
  readonly mimeType: string | undefined
  /** Exactly the bytes the entry's size and digest cover. */
  readonly bytes: Uint8Array
  /** The file as text, when the server sent text (always for a `SKILL.md`). */
  readonly text: string | undefined
  /** `true` when size and digest were checked; `false` only for a `"dynamic"` skill. */
  readonly verified: boolean
  /** The skill's own `SKILL.md` only: its frontmatter, equal to the entry's. */
  readonly frontmatter: Readonly<Record<string, unknown>> | undefined
  /** The skill's own `SKILL.md` only: the markdown after the frontmatter. */
  readonly body: string | undefined
}

/**
 * Whether the server declared the extension (`capabilities.extensions`): without it,
 * `listSkills` answers an empty listing and sends nothing.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDeclared = (serverCapabilities: Readonly<Record<string, unknown>>): boolean => {
  const extensions = serverCapabilities["extensions"]
  return isRecord(extensions) && isRecord(extensions[extensionId])
}

/**
 * The extensions phasebound's client declares in its capabilities (`initialize`, or each
 * request's `_meta` in 2026-07-28): the skills extension, which it supports on every connection.
 *
 * @since 0.1.0
 * @category constants
 */
export const clientExtensions: Readonly<Record<string, Readonly<Record<string, unknown>>>> = { [extensionId]: {} }

/**
 * The root of a skill, under which its files' relative paths resolve: `skill://a/b` for the
 * skill whose `SKILL.md` is `skill://a/b/SKILL.md`.
 *
 * @since 0.1.0
 * @category utils
 */
export const rootOf = (skill: Pick<Skill, "uri">): string =>
  skill.uri.endsWith("/SKILL.md") ? skill.uri.slice(0, -"/SKILL.md".length) : skill.uri.slice(0, skill.uri.lastIndexOf("/"))
