/**
 * `skills` and `skill`, as the Node bundle runs them against the testkit's skills server in both
 * eras: the listing (no file read), one skill's SKILL.md read and verified, and a tampered one
 * refused with one record (exit 7, `skill-digest-mismatch`) that names neither the file nor its
 * URI; an unknown skill is a usage error.
 */
import * as Testkit from "@phasebound/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectFailure, expectJson, run } from "./support/cli.js"

const manifest = Testkit.skillMarkdown("name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents", "Skill body.\n")
const skills: ReadonlyArray<Testkit.SkillDefinition> = [
  {
    name: "pdf-processing",
    frontmatter: { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" },
    files: [{ path: "SKILL.md", content: manifest }, { path: "references/FORMS.md", content: "Forms.\n" }]
  },
  {
    name: "tampered",
    frontmatter: { name: "tampered", description: "d" },
    files: [{
      path: "SKILL.md",
      content: Testkit.skillMarkdown("name: tampered\ndescription: d"),
      served: Testkit.skillMarkdown("name: tampered\ndescription: D")
    }]
  }
]

const servers: Array<Testkit.SkillsServer> = []
beforeAll(async () => {
  servers.push(await Testkit.startSkillsServer({ era: "stateless", skills }), await Testkit.startSkillsServer({ era: "handshake", skills }))
})
afterAll(() => Promise.all(servers.map((s) => s.close())))

describe.each([["2026-07-28", 0], ["2025-11-25", 1]] as const)("skills at %s", (revision, index) => {
  const cli = (args: ReadonlyArray<string>) => run("node", [...args, "--revision", revision])

  it("skills: the listing, no file read", async () => {
    const server = servers[index]!
    const before = server.reads().length
    const listing = expectJson(await cli(["skills", server.url])) as { skills: Array<{ uri: string; frontmatter: unknown }> }
    expect(listing.skills.map((s) => s.uri)).toEqual([Testkit.skillUri("pdf-processing"), Testkit.skillUri("tampered")])
    expect(server.reads().length).toBe(before)
  })

  it("skill: one SKILL.md, verified", async () => {
    const server = servers[index]!
    expect(expectJson(await cli(["skill", server.url, "pdf-processing"]))).toEqual({
      uri: Testkit.skillUri("pdf-processing"),
      verified: true,
      size: new TextEncoder().encode(manifest).length,
      frontmatter: { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" },
      body: "\nSkill body.\n"
    })
  })

  it("skill: a tampered SKILL.md is one record, exit 7, no content or URI in it; an unknown skill is a usage error", async () => {
    const server = servers[index]!
    const result = await cli(["skill", server.url, "tampered"])
    expect(expectFailure(result, 7, "ProtocolViolation")).toMatchObject({ reason: "skill-digest-mismatch", stage: "read-skill" })
    expect(result.stderr).not.toContain("skill://")
    expect(result.stderr).not.toContain("description: D")
    expect(expectFailure(await cli(["skill", server.url, "nothing"]), 2, "InvalidOption")).toMatchObject({ option: "skill" })
  })
})
