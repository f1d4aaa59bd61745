/**
 * The skills server on the raw wire: each era's opening (and the other era's refused), the
 * entries it lists (sizes and digests computed from the content, or the size it is told to lie
 * about), its pages, `skills/get`, the reads it serves (honest, tampered, padded, as a blob),
 * what it records, and a stalled method.
 */
import { createHash } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { skillDigest, skillMarkdown, type SkillsServer, skillUri, startSkillsServer } from "../src/skills.js"

const servers: Array<SkillsServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const rpc = async (server: SkillsServer, method: string, params: Record<string, unknown> = {}, id: number | null = 1) => {
  const response = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", ...(id === null ? {} : { id }), method, params })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text.startsWith("event:") ? text.slice(text.indexOf("data: ") + 6) : text) }
}

const manifest = skillMarkdown("name: a\ndescription: d")
const start = async (options: Parameters<typeof startSkillsServer>[0]) => {
  const server = await startSkillsServer(options)
  servers.push(server)
  return server
}

describe("the skills server", () => {
  it("stateless: discover declares the extension, initialize is refused; entries carry true sizes and digests; pages", async () => {
    const server = await start({
      skills: [
        { name: "a", frontmatter: { name: "a", description: "d" }, files: [{ path: "SKILL.md", content: manifest }] },
        { name: "b", frontmatter: { name: "b", description: "d" }, files: [{ path: "SKILL.md", content: manifest, listedSize: 3 }] }
      ],
      pageSize: 1
    })
    expect((await rpc(server, "server/discover")).body.result.capabilities.extensions).toEqual({ "io.modelcontextprotocol/skills": {} })
    expect((await rpc(server, "initialize")).status).toBe(400)
    const first = (await rpc(server, "skills/list")).body.result
    expect(first.skills).toEqual([{
      uri: "skill://a/SKILL.md",
      frontmatter: { name: "a", description: "d" },
      resources: [{ uri: "skill://a/SKILL.md", size: Buffer.byteLength(manifest), digest: `sha256:${createHash("sha256").update(manifest).digest("hex")}` }]
    }])
    expect(first.nextCursor).toBe("1")
    const second = (await rpc(server, "skills/list", { cursor: "1" })).body.result
    expect(second.skills[0].resources[0].size).toBe(3)
    expect(second.nextCursor).toBeUndefined()
    expect((await rpc(server, "skills/get", { uri: skillUri("b") })).body.result.skill.uri).toBe("skill://b/SKILL.md")
    expect((await rpc(server, "skills/get", { uri: "skill://none/SKILL.md" })).body.error.code).toBe(-32602)
    expect(server.reads()).toEqual([])
  })

  it("handshake: initialize answers, server/discover is refused; reads: tampered, padded, blob; what was asked is recorded", async () => {
    const server = await start({
      era: "handshake",
      sse: true,
      skills: [{
        name: "a",
        frontmatter: { name: "a", description: "d" },
        files: [
          { path: "SKILL.md", content: manifest, served: "other", padding: 10 },
          { path: "bin", content: new Uint8Array([0, 255]), blob: true }
        ]
      }]
    })
    expect((await rpc(server, "server/discover")).status).toBe(400)
    expect((await rpc(server, "initialize", { protocolVersion: "2025-06-18", capabilities: { x: {} } })).body.result.protocolVersion).toBe("2025-06-18")
    expect((await rpc(server, "notifications/initialized", {}, null)).status).toBe(202)
    const read = (await rpc(server, "resources/read", { uri: skillUri("a") })).body.result
    expect(read.contents[0].text).toBe("other")
    expect(read._meta["com.example/padding"]).toHaveLength(10)
    expect((await rpc(server, "resources/read", { uri: skillUri("a", "bin") })).body.result.contents[0].blob).toBe("AP8=")
    expect(server.reads()).toEqual([skillUri("a"), skillUri("a", "bin")])
    expect(server.clientCapabilities()).toEqual([{ x: {} }])
    expect(skillDigest(manifest)).toBe((await rpc(server, "skills/list")).body.result.skills[0].resources[0].digest)
  })

  it("a stalled method is recorded and answers its headers only (the client's deadline test proves it never answers)", async () => {
    const server = await start({ skills: [], stall: ["skills/list"] })
    const controller = new AbortController()
    const response = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "skills/list", params: {} }),
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    expect(server.methods()).toEqual(["skills/list"])
    controller.abort()
    await response.body?.cancel().catch(() => undefined)
  })
})
