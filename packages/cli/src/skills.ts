/**
 * `skills` and `skill`: the server's skills (the skills extension, docs/DESIGN.md "Skills"). The
 * listing reads no file; `skill <target> <name>` finds the skill by its frontmatter name (or the
 * URI of its SKILL.md), reads that one file, verified against the entry, and prints it.
 */
import type { McpClient, McpConnectionError, McpSkills } from "@phasebound/client"
import * as Effect from "effect/Effect"
import { json, printable, table } from "./output.js"
import { invalidOption } from "./record.js"

export const renderSkills = (listing: McpSkills.SkillListing, machine: boolean): string =>
  machine
    ? json(listing)
    : listing.skills.length === 0
    ? "no skills\n"
    : table(
      ["SKILL", "FILES", "DESCRIPTION"],
      listing.skills.map((s) => [s.frontmatter.name, s.resources === "dynamic" ? "dynamic" : String(s.resources.length), s.frontmatter.description])
    )

/** The skill named `name` (its frontmatter's name, or its SKILL.md's URI), then its SKILL.md verified. */
export const readSkill = (
  connection: McpClient.Connection,
  name: string
): Effect.Effect<McpSkills.SkillFile, McpConnectionError.McpConnectionError> =>
  Effect.gen(function*() {
    const { skills } = yield* connection.listSkills()
    const skill = skills.find((s) => s.frontmatter.name === name) ?? skills.find((s) => s.uri === name)
    if (skill === undefined) return yield* Effect.fail(invalidOption("skill"))
    return yield* connection.readSkillFile(skill)
  })

/** A SKILL.md: as it is (printable) on a terminal; JSON: its URI, frontmatter, body and size, verified. */
export const renderSkill = (file: McpSkills.SkillFile, machine: boolean): string => {
  if (machine) {
    return json({ uri: file.uri, verified: file.verified, size: file.bytes.length, frontmatter: file.frontmatter, body: file.body })
  }
  const text = printable(file.text ?? "")
  return text.endsWith("\n") ? text : `${text}\n`
}
