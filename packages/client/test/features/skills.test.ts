/**
 * The skills extension end to end (docs/DESIGN.md, "Skills", "Extensions"), against the
 * testkit's skills server on loopback, in the stateless era (JSON and SSE answers) and the
 * handshake era: the extension declared in the client's capabilities on every request that
 * carries them; listings followed page by page with nothing read; a file read only when asked,
 * verified against the entry before it is returned (size, then digest, then a SKILL.md's
 * frontmatter); every hostile variant a typed, redacted failure (wrong digest, size lie, a
 * result far past its file's size, frontmatter that differs, malformed YAML, aliases, tags,
 * `__proto__` keys, deep nesting, oversized frontmatter); references outside the entry refused
 * before any I/O; a server without the extension sent nothing; the Promise API the same.
 */
import { FetchHttpClient } from "@effect/platform"
import * as Testkit from "@phasebound/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { McpClient, McpSkills, type PhasePolicy } from "../../src/index.js"
import { connect as connectPromise } from "../../src/promise.js"
import { expectReleased, failureOf } from "../support/harness.js"

const fm = { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" }
const manifest = Testkit.skillMarkdown(`name: ${fm.name}\ndescription: ${fm.description}`, "Skill body.\n")
const forms = "Supporting content.\n"

const pdfSkill = (overrides: Partial<Testkit.SkillFileDefinition> = {}, frontmatter: Record<string, unknown> = fm): Testkit.SkillDefinition => ({
  name: "pdf-processing",
  frontmatter,
  files: [
    { path: "SKILL.md", content: manifest, ...overrides },
    { path: "references/FORMS.md", content: forms },
    { path: "assets/logo.bin", content: new Uint8Array(Array.from({ length: 256 }, (_, i) => i)), blob: true }
  ]
})

/** A skill whose SKILL.md holds `yaml` as its frontmatter, listed honestly (size and digest right). */
const yamlSkill = (name: string, yaml: string, frontmatter: Record<string, unknown> = { name, description: "d" }): Testkit.SkillDefinition => ({
  name,
  frontmatter,
  files: [{ path: "SKILL.md", content: Testkit.skillMarkdown(yaml) }]
})

const rows = [
  { name: "stateless, JSON", era: "stateless", sse: false, revisions: ["2026-07-28"] },
  { name: "stateless, SSE", era: "stateless", sse: true, revisions: ["2026-07-28"] },
  { name: "handshake, JSON", era: "handshake", sse: false, revisions: ["2025-11-25"] }
] as const

type Row = (typeof rows)[number]

const withServer = (row: Row, options: Omit<Testkit.SkillsServerOptions, "era" | "sse">) =>
  Effect.gen(function*() {
    const server = yield* Testkit.skillsServer({ ...options, era: row.era, sse: row.sse })
    const connection = yield* McpClient.connect({ url: server.url, revisions: row.revisions })
    return { server, connection }
  })

const scoped = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scopedLive(name, () => body().pipe(Effect.provide(FetchHttpClient.layer)) as Effect.Effect<void, unknown, never>, 30_000)

/** Neither the public record nor the message of an error carries the server's content or a URI. */
const expectRedacted = (error: unknown, ...secrets: ReadonlyArray<string>) => {
  const shown = JSON.stringify(error) + String(error) + (error as Error).message
  for (const secret of ["skill://", ...secrets]) expect(shown).not.toContain(secret)
}

describe.concurrent.each(rows.map((row) => [row.name, row] as const))("skills, %s", (_, row) => {
  scoped("the client declares the extension; listing follows every page and reads no file", () =>
    Effect.gen(function*() {
      const skills = [pdfSkill(), yamlSkill("alpha", "name: alpha\ndescription: d"), yamlSkill("beta", "name: beta\ndescription: d")]
      const { connection, server } = yield* withServer(row, { skills, pageSize: 1 })
      const listing = yield* connection.listSkills()
      expect(listing.skills.map((s) => s.uri)).toEqual(skills.map((s) => Testkit.skillUri(s.name)))
      expect(listing.skills[0]!.frontmatter).toEqual(fm)
      expect(listing.cacheHint).toEqual(row.era === "stateless" ? { ttlMs: 0, cacheScope: "private" } : undefined)
      expect(server.methods().filter((m) => m === "skills/list")).toHaveLength(3)
      expect(server.reads()).toEqual([])
      // Every request that declares capabilities declares the extension.
      expect(server.clientCapabilities().length).toBeGreaterThan(0)
      for (const declared of server.clientCapabilities()) {
        expect(declared).toMatchObject({ extensions: { [McpSkills.extensionId]: {} } })
      }
      const observed = (yield* connection.observations).map((o) => [o.operation, o.stage, o.outcome])
      expect(observed).toEqual([["skills/list", "list-skills", "ok"]])
    }))

  scoped("a listing is bounded as every listing is: maxPages, maxListingBytes and maxNodes over all its pages refuse it", () =>
    Effect.gen(function*() {
      const skills = Array.from({ length: 6 }, (_, i) => yamlSkill(`s${i}`, `name: s${i}\ndescription: d`))
      const server = yield* Testkit.skillsServer({ skills, pageSize: 1, era: row.era, sse: row.sse })
      const listed = (policy: PhasePolicy.Options) =>
        Effect.flatMap(McpClient.connect({ url: server.url, revisions: row.revisions, policy }), (connection) => failureOf(connection.listSkills()))
      const pages = yield* listed({ maxPages: 3 })
      expect(pages.error).toMatchObject({ _tag: "LimitExceeded", limit: "maxPages", stage: "list-skills", outcome: "applied", retryable: false })
      const bytes = yield* listed({ maxListingBytes: 1_500 })
      expect(bytes.error).toMatchObject({ _tag: "LimitExceeded", limit: "maxListingBytes", stage: "list-skills", outcome: "applied" })
      const nodes = yield* listed({ maxNodes: 60 })
      expect(nodes.error).toMatchObject({ _tag: "LimitExceeded", limit: "maxNodes", stage: "list-skills", outcome: "applied" })
      // No page past the one that crossed a bound was asked for.
      expect(server.methods().filter((m) => m === "skills/list").length).toBeLessThan(18)
      expect(server.reads()).toEqual([])
    }))

  scoped("reads only what is asked, each file verified: SKILL.md with its frontmatter and body, a text by path, a blob by URI", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* withServer(row, { skills: [pdfSkill()] })
      const [skill] = (yield* connection.listSkills()).skills
      const file = yield* connection.readSkillFile(skill!)
      expect(file).toMatchObject({ uri: Testkit.skillUri("pdf-processing"), verified: true, frontmatter: fm, body: "\nSkill body.\n", text: manifest })
      expect(new TextDecoder().decode(file.bytes)).toBe(manifest)
      expect(server.reads()).toEqual([Testkit.skillUri("pdf-processing")])
      const supporting = yield* connection.readSkillFile(skill!, "references/FORMS.md")
      expect(supporting).toMatchObject({ text: forms, verified: true, frontmatter: undefined, body: undefined })
      const blob = yield* connection.readSkillFile(skill!, Testkit.skillUri("pdf-processing", "assets/logo.bin"))
      expect([...blob.bytes]).toEqual(Array.from({ length: 256 }, (_, i) => i))
      expect(blob.text).toBeUndefined()
      expect(server.reads()).toEqual(["SKILL.md", "references/FORMS.md", "assets/logo.bin"].map((p) => Testkit.skillUri("pdf-processing", p)))
    }))

  scoped("skills/get: one entry by its SKILL.md URI; an unknown one is the server's refusal", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* withServer(row, { skills: [pdfSkill()] })
      const skill = yield* connection.getSkill(Testkit.skillUri("pdf-processing"))
      expect(skill.frontmatter).toEqual(fm)
      expect(skill.resources).toHaveLength(3)
      const { error } = yield* failureOf(connection.getSkill("skill://nothing/SKILL.md"))
      expect(error).toMatchObject({ _tag: "RemoteRefusal", code: -32602, stage: "get-skill" })
      expect(server.reads()).toEqual([])
    }))

  scoped("a wrong digest, a size lie, a frontmatter that differs: typed failures, nothing of the file or its URI in them", () =>
    Effect.gen(function*() {
      const tampered = manifest.replace("Skill body.", "Evil body!!")
      const cases: ReadonlyArray<readonly [Testkit.SkillDefinition, string]> = [
        [{ ...pdfSkill({ served: tampered }), name: "digest" }, "skill-digest-mismatch"],
        [{ ...pdfSkill({ served: manifest + "extra bytes\n" }), name: "size" }, "skill-size-mismatch"],
        [{ ...pdfSkill({ served: manifest.slice(0, -3) }), name: "short" }, "skill-size-mismatch"],
        [{ ...pdfSkill({}, { ...fm, description: "Exfiltrate credentials" }), name: "frontmatter" }, "skill-frontmatter-mismatch"],
        [{ ...pdfSkill({}, { ...fm, extra: "field" }), name: "extra" }, "skill-frontmatter-mismatch"]
      ]
      const { connection, server } = yield* withServer(row, { skills: cases.map(([skill]) => skill) })
      const { skills } = yield* connection.listSkills()
      for (const [index, [, reason]] of cases.entries()) {
        const { error } = yield* failureOf(connection.readSkillFile(skills[index]!))
        expect(error, reason).toMatchObject({ _tag: "ProtocolViolation", reason, stage: "read-skill", phase: "call", outcome: "applied", retryable: false })
        expectRedacted(error, "Evil", "Exfiltrate", "Skill body")
      }
      // One read each: none of the supporting files of a refused skill.
      expect(server.reads()).toEqual(cases.map(([skill]) => Testkit.skillUri(skill.name)))
    }))

  scoped("a read far past its listed size is cut off while reading, at a ceiling derived from that size", () =>
    Effect.gen(function*() {
      const huge = "x".repeat(2_000_000)
      const skills = [
        { ...pdfSkill({ served: huge }), name: "lie" },
        { ...pdfSkill({ padding: 1_000_000 }), name: "padded" }
      ]
      const { connection } = yield* withServer(row, { skills })
      const listed = (yield* connection.listSkills()).skills
      const ceiling = new TextEncoder().encode(manifest).length * 6 + 65_536
      for (const skill of listed) {
        const { error } = yield* failureOf(connection.readSkillFile(skill))
        expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", stage: "read-skill", limits: { maxBytes: ceiling } })
        expect((error as { observedBytes: number }).observedBytes).toBeLessThanOrEqual(ceiling + 65_536)
      }
      // The caller's own ceiling wins when it is the smaller.
      const { error } = yield* failureOf(connection.readSkillFile(listed[0]!, undefined, { maxBytes: 1_000 }))
      expect(error).toMatchObject({ _tag: "ByteCeilingExceeded", limits: { maxBytes: 1_000 } })
    }))

  scoped(
    "hostile frontmatter: malformed, aliases, tags, __proto__, deep, oversized, too many nodes; each refused, nothing polluted",
    () =>
      Effect.gen(function*() {
        const laughs = [
          "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
          "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
          "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]"
        ].join("\n")
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["malformed", "name: [unclosed\ndescription: d", "skill-frontmatter-invalid"],
          ["laughs", `name: laughs\ndescription: d\n${laughs}`, "skill-frontmatter-invalid"],
          ["tagged", "name: !!binary tagged\ndescription: d", "skill-frontmatter-invalid"],
          ["proto", "name: proto\ndescription: d\n__proto__:\n  polluted: true", "skill-frontmatter-invalid"],
          ["nested-proto", "name: nested-proto\ndescription: d\nmetadata: {__proto__: x}", "skill-frontmatter-invalid"],
          ["duplicate", "name: duplicate\nname: again\ndescription: d", "skill-frontmatter-invalid"],
          ["deep", `name: deep\ndescription: d\n${Array.from({ length: 64 }, (_, i) => `${" ".repeat(i * 2)}k:`).join("\n")} x`, "skill-frontmatter-too-large"],
          ["oversized", `name: oversized\ndescription: ${"d".repeat(100_000)}`, "skill-frontmatter-too-large"],
          ["nodes", `name: nodes\ndescription: d\nitems: [${Array.from({ length: 5_000 }, () => "1").join(", ")}]`, "skill-frontmatter-too-large"]
        ]
        const { connection } = yield* withServer(row, { skills: cases.map(([name, yaml]) => yamlSkill(name, yaml)) })
        const { skills } = yield* connection.listSkills()
        for (const [index, [name, , reason]] of cases.entries()) {
          const { error } = yield* failureOf(connection.readSkillFile(skills[index]!))
          expect(error, name).toMatchObject({ _tag: "ProtocolViolation", reason, stage: "read-skill", outcome: "applied" })
          expectRedacted(error, "lol", "polluted")
        }
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
      })
  )

  scoped("a reference outside the entry, or a skill that is not one, is refused before any I/O", () =>
    Effect.gen(function*() {
      const { connection, server } = yield* withServer(row, { skills: [pdfSkill()] })
      const [skill] = (yield* connection.listSkills()).skills
      for (const ref of ["references/OTHER.md", "../other-skill/SKILL.md", "/etc/passwd", "skill://other/SKILL.md", "#"]) {
        const { error } = yield* failureOf(connection.readSkillFile(skill!, ref))
        expect(error, ref).toMatchObject({ _tag: "InvalidOption", option: "ref", outcome: "not-sent" })
      }
      const { error } = yield* failureOf(connection.readSkillFile({ uri: "skill://x/SKILL.md" } as unknown as McpSkills.Skill))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "skill", outcome: "not-sent" })
      expect(server.reads()).toEqual([])
    }))

  scoped("a dynamic skill: files read unverified, the SKILL.md's frontmatter still compared", () =>
    Effect.gen(function*() {
      const dynamic = { ...pdfSkill(), name: "dynamic", dynamic: true }
      const lying = { ...pdfSkill({}, { ...fm, description: "other" }), name: "dynamic-lie", dynamic: true }
      const { connection } = yield* withServer(row, { skills: [dynamic, lying] })
      const [ok, lie] = (yield* connection.listSkills()).skills
      expect(ok!.resources).toBe("dynamic")
      expect(yield* connection.readSkillFile(ok!)).toMatchObject({ verified: false, frontmatter: fm })
      expect(yield* connection.readSkillFile(ok!, "references/FORMS.md")).toMatchObject({ verified: false, text: forms })
      const { error } = yield* failureOf(connection.readSkillFile(lie!))
      expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "skill-frontmatter-mismatch" })
    }))
})

/** A frontmatter object and the YAML that holds it. */
const frontmatterArb = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  description: fc.stringMatching(/^[A-Za-z][A-Za-z ,.]{0,40}[a-z]$/),
  metadata: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.oneof(fc.integer(), fc.boolean(), fc.stringMatching(/^[a-z]{1,10}$/)), { maxKeys: 4 })
}).map((fm) => ({
  object: Object.keys(fm.metadata).length === 0 ? { name: fm.name, description: fm.description } : fm,
  yaml: [
    `name: ${fm.name}`,
    `description: ${JSON.stringify(fm.description)}`,
    ...(Object.keys(fm.metadata).length === 0
      ? []
      : ["metadata:", ...Object.entries(fm.metadata).map(([k, v]) => `  ${k}: ${typeof v === "string" ? JSON.stringify(v) : String(v)}`)])
  ].join("\n")
}))

const tamperings = ["none", "flip", "append", "truncate", "entry-frontmatter", "size-lie", "yaml-noise"] as const

describe("skills, beyond the rows", () => {
  it.live("property: a read succeeds exactly when the file is the entry's, and fails typed otherwise", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          frontmatterArb,
          fc.constantFrom(...tamperings),
          fc.nat(),
          fc.string({ unit: fc.constantFrom(..."ab: -\n#'\"[]{}&*!|>"), maxLength: 60 }),
          async (fm, tampering, at, noise) => {
            const content = tampering === "yaml-noise" ? Testkit.skillMarkdown(noise) : Testkit.skillMarkdown(fm.yaml)
            const bytes = new TextEncoder().encode(content)
            const flipped = bytes.slice()
            flipped[at % flipped.length] = flipped[at % flipped.length]! ^ 0x01
            const served = tampering === "flip"
              ? flipped
              : tampering === "append"
              ? content + "x"
              : tampering === "truncate"
              ? content.slice(0, -1)
              : undefined
            const frontmatter = tampering === "entry-frontmatter" ? { ...fm.object, description: `${fm.object.description}!` } : fm.object
            const skill: Testkit.SkillDefinition = {
              name: "prop",
              frontmatter,
              files: [{
                path: "SKILL.md",
                content,
                ...(served === undefined ? {} : { served }),
                ...(tampering === "size-lie" ? { listedSize: bytes.length + 1 } : {})
              }]
            }
            const outcome = await Effect.runPromise(
              Effect.gen(function*() {
                const server = yield* Testkit.skillsServer({ skills: [skill] })
                const connection = yield* McpClient.connect({ url: server.url, revisions: ["2026-07-28"] })
                const [listed] = (yield* connection.listSkills()).skills
                return yield* Effect.either(connection.readSkillFile(listed!))
              }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
            )
            if (tampering === "none") {
              expect(outcome._tag).toBe("Right")
              if (outcome._tag === "Right") expect(outcome.right.frontmatter).toEqual(fm.object)
              return
            }
            if (tampering === "yaml-noise") {
              // Noise either parses into some other frontmatter (a mismatch) or is refused: never a defect, never a success.
              expect(outcome._tag).toBe("Left")
              if (outcome._tag === "Left") {
                expect((outcome.left as { readonly reason?: string }).reason).toMatch(/^skill-frontmatter-(mismatch|invalid|too-large)$/)
              }
              return
            }
            expect(outcome._tag).toBe("Left")
            if (outcome._tag === "Left") {
              const expected = {
                flip: /^skill-(digest-mismatch|size-mismatch)$/,
                append: /^skill-size-mismatch$/,
                truncate: /^skill-size-mismatch$/,
                "entry-frontmatter": /^skill-frontmatter-mismatch$/,
                "size-lie": /^skill-size-mismatch$/
              }[tampering]
              expect(outcome.left).toMatchObject({ _tag: "ProtocolViolation", outcome: "applied" })
              expect((outcome.left as { readonly reason?: string }).reason).toMatch(expected)
            }
          }
        ),
        { numRuns: 60 }
      )
    ), 60_000)

  scoped(
    "each operation under its budget: a read and a listing the server never answers end at their deadline, released, observed",
    () =>
      Effect.gen(function*() {
        const server = yield* Testkit.skillsServer({ skills: [pdfSkill()], stall: ["resources/read", "skills/get"] })
        const connection = yield* McpClient.connect({ url: server.url, revisions: ["2026-07-28"] })
        const [skill] = (yield* connection.listSkills()).skills
        const read = yield* failureOf(connection.readSkillFile(skill!, undefined, { timeout: 300 }))
        expect(read.error).toMatchObject({ _tag: "DeadlineExceeded", stage: "read-skill", phase: "call", outcome: "unknown", limits: { timeoutMs: 300 } })
        const get = yield* failureOf(connection.getSkill(skill!.uri, { timeout: 300 }))
        expect(get.error).toMatchObject({ _tag: "DeadlineExceeded", stage: "get-skill", outcome: "unknown" })
        yield* expectReleased(connection)
        const observed = (yield* connection.observations).map((o) => [o.operation, o.stage, o.outcome])
        expect(observed).toEqual([
          ["skills/list", "list-skills", "ok"],
          ["resources/read", "read-skill", "DeadlineExceeded"],
          ["skills/get", "get-skill", "DeadlineExceeded"]
        ])
        // Sent once each, never retried.
        expect(server.methods().filter((m) => m === "resources/read" || m === "skills/get")).toEqual(["resources/read", "skills/get"])
      })
  )

  scoped(
    "an entry whose frontmatter carries a __proto__ key fails the listing typed (invalid-result); nothing polluted, nothing read",
    () =>
      Effect.gen(function*() {
        const polluting = JSON.parse("{\"name\":\"p\",\"description\":\"d\",\"__proto__\":{\"polluted\":true}}") as Record<string, unknown>
        const proto = yield* Testkit.skillsServer({ skills: [{ ...yamlSkill("p", "name: p\ndescription: d"), frontmatter: polluting }] })
        const first = yield* McpClient.connect({ url: proto.url, revisions: ["2026-07-28"] })
        const { error } = yield* failureOf(first.listSkills())
        expect(error).toMatchObject({ _tag: "ProtocolViolation", reason: "invalid-result", stage: "list-skills" })
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
        expect(proto.reads()).toEqual([])
      })
  )

  scoped("a server that does not declare the extension: an empty listing, nothing sent", () =>
    Effect.gen(function*() {
      const server = yield* Testkit.skillsServer({ skills: [pdfSkill()], declare: false })
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2026-07-28"] })
      expect(yield* connection.listSkills()).toEqual({ skills: [], cacheHint: undefined })
      expect(server.methods()).not.toContain("skills/list")
      // A budget override is still validated.
      const { error } = yield* failureOf(connection.listSkills({ timeout: -1 }))
      expect(error).toMatchObject({ _tag: "InvalidOption" })
    }))

  scoped("a listing's hint is read as every listing's: a negative ttlMs as 0, none when a page has none", () =>
    Effect.gen(function*() {
      const entry = Testkit.skillEntry(yamlSkill("alpha", "name: alpha\ndescription: d"))
      const pages: { current: ReadonlyArray<Record<string, unknown>> } = { current: [] }
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          Testkit.startHostileServer({
            era: "stateless",
            script: (request) => {
              if (request.method === "server/discover") {
                return Testkit.messageAnswer(
                  Testkit.resultText({
                    resultType: "complete",
                    supportedVersions: ["2026-07-28"],
                    capabilities: { tools: {}, extensions: { [McpSkills.extensionId]: {} } },
                    serverInfo: { name: "hint", version: "1.0.0" }
                  }),
                  "json"
                )
              }
              if (request.method !== "skills/list") return "normal"
              const cursor = (request.params as { readonly cursor?: unknown } | undefined)?.cursor
              const index = typeof cursor === "string" ? Number(cursor) : 0
              const next = index + 1 < pages.current.length ? { nextCursor: String(index + 1) } : {}
              return Testkit.messageAnswer(Testkit.resultText({ resultType: "complete", skills: [entry], ...pages.current[index], ...next }), "json")
            }
          })
        ),
        (server) => Effect.promise(() => server.close())
      )
      const connection = yield* McpClient.connect({ url: server.url, revisions: ["2026-07-28"] })
      pages.current = [{ ttlMs: -5, cacheScope: "public" }]
      expect(yield* connection.listSkills()).toMatchObject({ skills: [entry], cacheHint: { ttlMs: 0, cacheScope: "public" } })
      pages.current = [{ ttlMs: 60_000, cacheScope: "public" }, {}]
      const mixed = yield* connection.listSkills()
      expect(mixed.skills).toHaveLength(2)
      expect(mixed.cacheHint).toBeUndefined()
      pages.current = [{ ttlMs: 60_000, cacheScope: "public" }, { ttlMs: 1_000, cacheScope: "private" }]
      expect((yield* connection.listSkills()).cacheHint).toEqual({ ttlMs: 1_000, cacheScope: "private" })
    }))

  it.live("the Promise API: list, read verified, a refusal typed", () =>
    Effect.gen(function*() {
      const server = yield* Testkit.skillsServer({ skills: [pdfSkill(), { ...pdfSkill({ served: "tampered" }), name: "bad" }] })
      const connection = yield* Effect.promise(() => connectPromise({ url: server.url, revisions: ["2026-07-28"] }))
      yield* Effect.addFinalizer(() => Effect.promise(() => connection.close()))
      const { skills } = yield* Effect.promise(() => connection.listSkills())
      const file = yield* Effect.promise(() => connection.readSkillFile(skills[0]!))
      expect(file.frontmatter).toEqual(fm)
      const refused = yield* Effect.promise(() => connection.readSkillFile(skills[1]!).then(() => undefined, (e: unknown) => e))
      expect(refused).toMatchObject({ _tag: "ProtocolViolation", reason: "skill-size-mismatch" })
      expect(yield* Effect.promise(() => connection.getSkill(Testkit.skillUri("pdf-processing")))).toMatchObject({ frontmatter: fm })
    }).pipe(Effect.scoped), 30_000)
})
