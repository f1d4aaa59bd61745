/**
 * The skills extension against a real server no one here wrote: the MCP TypeScript SDK v2
 * server (`@modelcontextprotocol/server` 2.4.0) with its own skills extension
 * (`@modelcontextprotocol/server/ext/skills`): a catalog built by the SDK from files in memory
 * (it computes the digests and sizes), served by `createMcpHandler` in both eras (2026-07-28, and
 * the 2025 leg without sessions). The listing, `skills/get`, and each file read through
 * phasebound's verification; then a `SkillSource` of the SDK's that publishes honest entries but
 * serves other bytes, which phasebound refuses.
 */
import { FetchHttpClient } from "@effect/platform"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { memorySkillFiles, skillEntry, SkillsExtension } from "@modelcontextprotocol/server/ext/skills"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClient, McpSkills } from "../../src/index.js"
import { failureOf } from "../support/harness.js"
import { serveWebHandler } from "../support/webHandlerServer.js"

const manifest = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  author: example\n---\n\n# PDF processing\n"
const files = {
  "pdf-processing/SKILL.md": manifest,
  "pdf-processing/references/FORMS.md": "Forms, filled.\n"
}

const serve = (extension: () => Promise<SkillsExtension>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const skills = await extension()
      const handler = createMcpHandler(() => {
        const server = new McpServer({ name: "sdk-v2-skills", version: "2.4.0" })
        skills.attach(server)
        return server
      }, { legacy: "stateless" })
      const web = await serveWebHandler((request) => handler.fetch(request))
      return { url: `http://127.0.0.1:${web.port}/mcp`, requests: web.requests, close: () => web.close(() => handler.close()) }
    }),
    (server) => Effect.promise(() => server.close())
  )

const catalog = () => SkillsExtension.load(memorySkillFiles(files), { onWarning: () => undefined })

describe.each([["2026-07-28"], ["2025-11-25"]] as const)("the SDK v2 skills server, %s", (revision) => {
  it.scopedLive("lists, gets and reads each file, verified against the SDK's own entries", () =>
    Effect.gen(function*() {
      const server = yield* serve(catalog)
      const connection = yield* McpClient.connect({ url: server.url, revisions: [revision] })
      expect(McpSkills.isDeclared(connection.capabilities)).toBe(true)
      const { skills } = yield* connection.listSkills()
      expect(skills.map((s) => s.uri)).toEqual(["skill://pdf-processing/SKILL.md"])
      const [skill] = skills
      expect(skill!.frontmatter).toEqual({ name: "pdf-processing", description: "Extract, fill, and assemble PDF documents", metadata: { author: "example" } })
      expect(yield* connection.getSkill(skill!.uri)).toEqual(skill)
      const file = yield* connection.readSkillFile(skill!)
      expect(file).toMatchObject({ verified: true, frontmatter: skill!.frontmatter, body: "\n# PDF processing\n" })
      expect(yield* connection.readSkillFile(skill!, "references/FORMS.md")).toMatchObject({ verified: true, text: "Forms, filled.\n" })
    }).pipe(Effect.provide(FetchHttpClient.layer)), 30_000)

  it.scopedLive("a source that publishes honest entries but serves other bytes is refused", () =>
    Effect.gen(function*() {
      const server = yield* serve(async () => {
        const entry = await skillEntry("pdf-processing", { "SKILL.md": manifest })
        return new SkillsExtension({
          onWarning: () => undefined,
          source: {
            list: async () => ({ skills: [entry] }),
            get: async (uri) => (uri === entry.uri ? entry : undefined),
            read: async () => ({ text: manifest.replace("PDF processing", "PDF processinG"), mimeType: "text/markdown" })
          }
        })
      })
      const connection = yield* McpClient.connect({ url: server.url, revisions: [revision] })
      const [skill] = (yield* connection.listSkills()).skills
      const { error } = yield* failureOf(connection.readSkillFile(skill!))
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "skill-digest-mismatch", stage: "read-skill" })
    }).pipe(Effect.provide(FetchHttpClient.layer)), 30_000)
})
