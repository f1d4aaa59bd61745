/**
 * The skills extension (docs/DESIGN.md, "Skills"): `skills/list` (every page under one deadline
 * of the call budget), `skills/get` of one skill, and the read of one skill file with
 * `resources/read`, verified against the skill's entry before it is returned (size, then
 * digest, then for a `SKILL.md` its frontmatter). Nothing is fetched before it is asked: a
 * listing reads no file, a file read reads that file only.
 *
 * A listed file's read is bounded by its declared size as well as by the call budget: the wire
 * ceiling becomes the smaller of the budget's `maxBytes` and what the largest JSON encoding of
 * that many bytes can take (six characters a byte, as `\u00XX`, plus room for the envelope), so
 * a server that lies about a size is cut off while reading, long before it can send the budget's
 * worth.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpClient from "../../McpClient.js"
import type { McpConnectionError } from "../../McpConnectionError.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpSkills from "../../McpSkills.js"
import * as PhasePolicy from "../../PhasePolicy.js"
import type { Exchange } from "../transport/transport.js"
import { FrontmatterError, parseSkillMarkdown } from "../skills/frontmatter.js"
import { bytesOf, contentOf, decodeUtf8, entryOf, resolveRef, sameFrontmatter, sha256Digest } from "../skills/verify.js"
import { invalidResult, listAll } from "../listing.js"
import { type Core, decodedAs, resultViolation } from "./core.js"

const decodeGet = Schema.decodeUnknownEither(Schema.Struct({ skill: McpSkills.Skill }))
const decodeRead = Schema.decodeUnknownEither(McpSchema.ReadResourceResult)
const isSkill = Schema.is(McpSkills.Skill)

/** Room for a read's envelope (its `uri`, `mimeType`, `_meta`, the JSON-RPC frame) beyond the file's own bytes. */
const envelopeBytes = 65_536

export interface Skills {
  readonly listSkills: McpClient.Connection["listSkills"]
  readonly getSkill: McpClient.Connection["getSkill"]
  readonly readSkillFile: McpClient.Connection["readSkillFile"]
}

export const make = (core: Core): Skills => {
  const declared = () => McpSkills.isDeclared(core.live.current().session.capabilities)

  const listSkills: Skills["listSkills"] = (options) =>
    Effect.suspend(() => {
      // A server that does not declare the extension has no skills to list: nothing is sent.
      if (!declared()) {
        return Effect.flatMap(PhasePolicy.callBudget(core.policy, options), () => Effect.succeed({ skills: [], cacheHint: undefined }))
      }
      return core.callPhase("skills/list", "list-skills", options, undefined, (on, exchange) =>
        // Every page bounded as every listing is (`maxPages`, `maxListingBytes`, `maxNodes`), the
        // hint the most cautious of the pages' and none when a page had none.
        Effect.map(
          listAll(on.session, McpSkills.methods.list, "skills", McpSkills.Skill, exchange, core.policy),
          ({ bytes, cacheable, items }) => ({ value: { skills: items, cacheHint: cacheable }, bytes })
        ))
    })

  const getSkill: Skills["getSkill"] = (uri, options) =>
    core.callPhase(
      "skills/get",
      "get-skill",
      options,
      typeof uri !== "string" || uri.length === 0 ? "uri" : undefined,
      (on, exchange) =>
        Effect.flatMap(on.session.request(McpSkills.methods.get, { uri }, exchange), (response) =>
          Effect.flatMap(decodedAs(decodeGet, exchange)(response), ({ bytes, value }) =>
            // Another skill than the one asked for is not an answer to the request.
            value.skill.uri === uri
              ? Effect.succeed({ value: value.skill, bytes })
              : Effect.fail(resultViolation(exchange, "invalid-result", bytes))))
    )

  const readSkillFile: Skills["readSkillFile"] = (skill, ref, options) =>
    Effect.suspend(() => {
      const valid = isSkill(skill)
      const root = valid ? McpSkills.rootOf(skill) : ""
      const uri = valid && (ref === undefined || typeof ref === "string") ? resolveRef(skill, root, ref) : undefined
      const entry = valid && uri !== undefined ? entryOf(skill, uri) : undefined
      // A listed skill's file must be listed: checked before any request.
      const refused = !valid
        ? "skill"
        : uri === undefined || (skill.resources !== "dynamic" && entry === undefined)
        ? "ref"
        : undefined
      return Effect.flatMap(PhasePolicy.callBudget(core.policy, options), (budget) => {
        const ceiling = entry === undefined ? budget.maxBytes : Math.min(budget.maxBytes, entry.size * 6 + envelopeBytes)
        const bounded = { ...options, maxBytes: ceiling }
        return core.callPhase(
          "resources/read",
          "read-skill",
          bounded,
          refused,
          (on, exchange) =>
            Effect.flatMap(
              on.session.request("resources/read", { uri: entry?.uri ?? uri! }, exchange),
              (response) =>
                verified(exchange, skill, entry?.uri ?? uri!, entry, response.result, response.bytes).pipe(
                  Effect.map((file) => ({ value: file, bytes: response.bytes }))
                )
            )
        )
      })
    })

  return { listSkills, getSkill, readSkillFile }
}

/** The read's content, checked against the entry: size first, then digest, then a `SKILL.md`'s frontmatter. */
const verified = (
  exchange: Exchange,
  skill: McpSkills.Skill,
  uri: string,
  entry: McpSkills.SkillResourceEntry | undefined,
  result: unknown,
  observed: number
): Effect.Effect<McpSkills.SkillFile, McpConnectionError> =>
  Effect.gen(function*() {
    const decoded = decodeRead(result)
    if (decoded._tag === "Left") return yield* Effect.fail(invalidResult(exchange, observed)(decoded.left))
    const content = contentOf(decoded.right, uri)
    const bytes = content === undefined ? undefined : bytesOf(content)
    if (content === undefined || bytes === undefined) return yield* Effect.fail(resultViolation(exchange, "invalid-result", observed))
    if (entry !== undefined) {
      if (bytes.length !== entry.size) return yield* Effect.fail(resultViolation(exchange, "skill-size-mismatch", observed))
      if ((yield* sha256Digest(bytes)) !== entry.digest) {
        return yield* Effect.fail(resultViolation(exchange, "skill-digest-mismatch", observed))
      }
    }
    const file = {
      uri,
      mimeType: content.mimeType,
      bytes,
      text: "text" in content ? content.text : undefined,
      verified: entry !== undefined,
      frontmatter: undefined,
      body: undefined
    }
    if (uri !== skill.uri) return file
    // The skill's own SKILL.md: its frontmatter must be the entry's (only its text is decoded).
    const text = "text" in content ? content.text : decodeUtf8(bytes)
    if (text === undefined) return yield* Effect.fail(resultViolation(exchange, "invalid-utf8", observed))
    let parsed: { readonly frontmatter: Record<string, unknown>; readonly body: string }
    try {
      parsed = parseSkillMarkdown(text, McpSkills.frontmatterLimits)
    } catch (error) {
      const reason = error instanceof FrontmatterError && error.kind === "too-large" ? "skill-frontmatter-too-large" : "skill-frontmatter-invalid"
      return yield* Effect.fail(resultViolation(exchange, reason, observed, error))
    }
    if (!sameFrontmatter(skill.frontmatter, parsed.frontmatter)) {
      return yield* Effect.fail(resultViolation(exchange, "skill-frontmatter-mismatch", observed))
    }
    return { ...file, text, frontmatter: parsed.frontmatter, body: parsed.body }
  })
