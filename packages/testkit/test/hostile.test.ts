import { spawn } from "node:child_process"
import { request as httpRequest } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { hostileStdioCase, type HostileServer, resultText, startHostileServer } from "../src/index.js"

const servers: Array<HostileServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const rpc = (server: HostileServer, method: string, id: number | undefined, params: unknown = {}) =>
  fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(id === undefined ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", id, method, params })
  })

/** Raw response of a POST through node:http: status, raw header pairs, and the body chunks as they came. */
const rawPost = (url: string, body: string) =>
  new Promise<{ status: number; rawHeaders: Array<string>; chunks: Array<Buffer> }>((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, chunks }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

describe("HostileServer", () => {
  it("answers honestly by era until scripted, then exactly what the script says", async () => {
    const stateless = await startHostileServer({ era: "stateless" })
    const handshake = await startHostileServer({ era: "handshake", mode: "sse" })
    servers.push(stateless, handshake)

    const discovered = (await (await rpc(stateless, "server/discover", 1)).json()) as { id: number; result: { supportedVersions: Array<string> } }
    expect(discovered.id).toBe(1)
    expect(discovered.result.supportedVersions).toEqual(["2026-07-28"])
    expect((await rpc(stateless, "initialize", 2)).status).toBe(400)
    expect((await rpc(handshake, "server/discover", 3)).status).toBe(404)
    const initialized = await rpc(handshake, "initialize", 4)
    expect(initialized.headers.get("content-type")).toBe("text/event-stream")
    expect(initialized.headers.get("mcp-session-id")).toBe("hostile-session")
    expect(await initialized.text()).toMatch(/^event: message\ndata: \{"jsonrpc":"2.0","id":4,"result":\{"protocolVersion":"2025-11-25"/)
    expect((await rpc(handshake, "notifications/initialized", undefined)).status).toBe(202)

    stateless.setScript((request) =>
      request.method === "tools/call"
        ? {
          status: 200,
          headers: [["content-type", "application/json"], ["mcp-session-id", "a"], ["mcp-session-id", "b"]],
          body: resultText({ content: [] }),
          chunkSize: 3
        }
        : "normal"
    )
    const raw = await rawPost(
      stateless.url,
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x", arguments: { nonce: "n-1" } } })
    )
    expect(raw.status).toBe(200)
    const sessionHeaders = raw.rawHeaders.filter((_, i) => i % 2 === 0).filter((name) => name.toLowerCase() === "mcp-session-id")
    expect(sessionHeaders).toHaveLength(2)
    expect(Buffer.concat(raw.chunks).toString()).toBe(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
    expect(stateless.toolCallArrivals()).toEqual([{ id: 7, nonce: "n-1", effectIdentity: undefined }])
    stateless.reset()
    expect(stateless.requests).toHaveLength(0)
  })

  it("a held answer stays open and a stalled one never sends headers, until the client leaves", async () => {
    const server = await startHostileServer({ era: "stateless" })
    servers.push(server)
    server.setScript((
      request
    ) => (request.method === "tools/list" ? "stall" : { headers: [["content-type", "text/event-stream"]], body: ": hi\n", then: "hold" }))
    const held = new AbortController()
    const response = await fetch(server.url, { method: "POST", body: "{}", signal: held.signal })
    const reader = response.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(": hi\n")
    expect(server.openConnections()).toBe(1)
    held.abort()
    let settled = false
    const pending = rpc(server, "tools/list", 1).then(
      () => "answered",
      (error: unknown) => error
    ).finally(() => {
      settled = true
    })
    const deadline = Date.now() + 5_000
    while (!server.requests.some((request) => request.method === "tools/list") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(server.requests.map((request) => request.method)).toContain("tools/list")
    expect(settled).toBe(false)
    await server.close()
    expect(await pending).toBeInstanceOf(Error)
  })
})

describe("hostile stdio server", () => {
  it("answers from its script file, honestly otherwise, and logs every arrival", async () => {
    const scripted = hostileStdioCase({
      era: "stateless",
      answers: { "tools/call": [{ text: "banner\n" + resultText({ content: [] }).replace("}}", "}}\n"), chunkSize: 2 }] }
    })
    try {
      const child = spawn(scripted.command, [...scripted.args], { env: { ...process.env, ...scripted.env } })
      let stdout = ""
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => (stdout += chunk))
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }) + "\n")
      child.stdin.write(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "echo", arguments: { nonce: "n-2" }, _meta: { "io.phasebound/effect-identity": "e-2" } }
        }) + "\n"
      )
      const deadline = Date.now() + 10_000
      while (!stdout.includes(`"id":2`) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
      child.stdin.end()
      await exited
      const lines = stdout.split("\n")
      expect(JSON.parse(lines[0]!)).toMatchObject({ id: 1, result: { supportedVersions: ["2026-07-28"] } })
      expect(lines[1]).toBe("banner")
      expect(JSON.parse(lines[2]!)).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [] } })
      expect(scripted.received().map((entry) => entry.method)).toEqual(["server/discover", "tools/call"])
      expect(scripted.toolCallArrivals()).toEqual([{ id: 2, nonce: "n-2", effectIdentity: "e-2" }])
    } finally {
      scripted.cleanup()
    }
  })
})
