/**
 * `--catalog` (docs/DESIGN.md, "Catalog"; packages/cli/src/catalog.ts): `tools --catalog` and
 * `call --catalog <name>` over every server of a config file, the CLI as a subprocess (the Node
 * bundle) against testkit servers: the merged list with catalog names and servers on stdout, a
 * call routed to its server once, and the refusals (blocked, conflicted, unknown, a flag that
 * names one server, a bad pattern in the file) as exactly one JSON record on stderr with nothing
 * sent, proven by the servers' counters.
 */
import * as Testkit from "@phasebound/testkit"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectFailure, expectJson, run } from "./support/cli.js"

const TOKEN = "catalog-cli-CANARY-77a1"

let alpha: Testkit.TestServer
let beta: Testkit.TestServer
beforeAll(async () => {
  alpha = await Testkit.startServer()
  beta = await Testkit.startServer({ era: "stateless" })
})
afterAll(async () => {
  await Promise.all([alpha.close(), beta.close()])
})

const node = (args: ReadonlyArray<string>, options?: Parameters<typeof run>[2]) => run("node", args, options)

const configFile = (servers: Record<string, unknown>): string => {
  const dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-catalog-"))
  const file = path.join(dir, "servers.json")
  writeFileSync(file, JSON.stringify({ mcpServers: servers }))
  return file
}

const servers = () => ({
  alpha: { url: alpha.url, blockTools: ["incr*"], headers: { Authorization: "Bearer ${ALPHA_TOKEN}" } },
  beta: { url: beta.url, type: "http", prefix: "b" }
})

describe("tools --catalog", () => {
  it("lists the merged catalog: catalog names, servers, each server's own tool; blocked tools left out", async () => {
    const out = expectJson(await node(["tools", "--catalog", "--config", configFile(servers())], { env: { ALPHA_TOKEN: TOKEN } })) as {
      tools: Array<{ name: string; server: string; tool: { name: string } }>
      conflicts: Array<unknown>
      rejected: Array<unknown>
    }
    const names = out.tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(["alpha__add", "alpha__echo", "b__add", "b__echo", "b__increment"]))
    expect(names).not.toContain("alpha__increment")
    expect(out.tools.find((tool) => tool.name === "b__add")).toMatchObject({ server: "beta", tool: { name: "add" } })
    expect(out.conflicts).toEqual([])
    expect(out.rejected).toEqual([])
  })

  it("two servers with prefix false: their shared names are conflicts, reported and not listed", async () => {
    const file = configFile({ alpha: { url: alpha.url, prefix: false }, beta: { url: beta.url, prefix: false } })
    const out = expectJson(await node(["tools", "--catalog", "--config", file])) as {
      tools: Array<{ name: string }>
      conflicts: Array<{ name: string; tools: Array<{ server: string; tool: string }> }>
    }
    expect(out.tools.map((tool) => tool.name)).not.toContain("add")
    expect(out.conflicts).toContainEqual({ name: "add", tools: [{ server: "alpha", tool: "add" }, { server: "beta", tool: "add" }] })
  })

  it("a server that cannot be connected: the others' tools are listed and its failure named; when none answers, its error is the one record", async () => {
    const file = configFile({ alpha: { url: alpha.url }, gone: { url: "http://127.0.0.1:1/mcp" } })
    const out = expectJson(await node(["tools", "--catalog", "--config", file])) as {
      tools: Array<{ name: string; server: string }>
      failures: Array<{ server: string; error: Record<string, unknown> }>
      unresolved: Array<unknown>
    }
    expect(out.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["alpha__add", "alpha__echo"]))
    expect(out.tools.every((tool) => tool.server === "alpha")).toBe(true)
    expect(out.failures).toMatchObject([{ server: "gone", error: { tag: "TransportFailure", phase: "discovery", server: "gone" } }])
    expect(out.unresolved).toEqual([])
    expect(JSON.stringify(out)).not.toContain("127.0.0.1:1/")
    const result = await node(["tools", "--catalog", "--config", configFile({ gone: { url: "http://127.0.0.1:1/mcp" } })])
    expect(expectFailure(result, 7, "TransportFailure")).toMatchObject({ server: "gone", phase: "discovery" })
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(result.stderr).not.toContain("127.0.0.1:1/")
  })

  it("a malformed pattern in the file: one InvalidOption record naming it, exit 2, nothing connected", async () => {
    const before = alpha.requests.length
    const result = await node(["tools", "--catalog", "--config", configFile({ alpha: { url: alpha.url, blockTools: ["[oops"] } })])
    const record = expectFailure(result, 2, "InvalidOption")
    expect(record).toMatchObject({ option: "--config blockTools", outcome: "not-sent" })
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(alpha.requests.length).toBe(before)
  })
})

describe("call --catalog", () => {
  it("routes the catalog name to its server, once, with that server's header only", async () => {
    const [alphaCalls, betaCalls] = [alpha.rpcCalls("tools/call"), beta.rpcCalls("tools/call")]
    const out = expectJson(
      await node(["call", "--catalog", "--config", configFile(servers()), "alpha__add", "--args", "{\"a\":20,\"b\":22}"], { env: { ALPHA_TOKEN: TOKEN } })
    )
    expect(out).toMatchObject({ content: [{ type: "text", text: "42" }] })
    expect([alpha.rpcCalls("tools/call"), beta.rpcCalls("tools/call")]).toEqual([alphaCalls + 1, betaCalls])
    const call = alpha.requests.filter((r) => r.rpcMethod === "tools/call").at(-1)!
    expect(call.headers["authorization"]).toBe(`Bearer ${TOKEN}`)
    expect(beta.requests.every((r) => r.headers["authorization"] === undefined)).toBe(true)
  })

  it("a blocked name: InvalidOption tool-blocked, exit 2, one record; nothing reached the server, not even a discovery", async () => {
    const before = alpha.requests.length
    const counter = alpha.counter()
    const result = await node(["call", "--catalog", "--config", configFile(servers()), "alpha__increment"], { env: { ALPHA_TOKEN: TOKEN } })
    const record = expectFailure(result, 2, "InvalidOption")
    expect(record).toMatchObject({ option: "tool", reason: "tool-blocked", outcome: "not-sent" })
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(result.stderr).not.toContain(TOKEN)
    expect(alpha.requests.length).toBe(before)
    expect(alpha.counter()).toBe(counter)
  })

  it("a conflicted name and an unknown one: refused, no tools/call sent", async () => {
    const file = configFile({ alpha: { url: alpha.url, prefix: false }, beta: { url: beta.url, prefix: false } })
    const [alphaCalls, betaCalls] = [alpha.rpcCalls("tools/call"), beta.rpcCalls("tools/call")]
    expect(expectFailure(await node(["call", "--catalog", "--config", file, "increment"]), 2, "InvalidOption")).toMatchObject({ reason: "tool-conflict" })
    expect(expectFailure(await node(["call", "--catalog", "--config", file, "no_such_tool"]), 2, "InvalidOption")).toMatchObject({ reason: "unknown-tool" })
    expect([alpha.rpcCalls("tools/call"), beta.rpcCalls("tools/call")]).toEqual([alphaCalls, betaCalls])
  })

  it("a flag that names one server is refused with --catalog, before any I/O", async () => {
    const before = alpha.requests.length
    const file = configFile(servers())
    expect(expectFailure(await node(["call", "--catalog", "--config", file, "--header", "X-A: b", "alpha__add"]), 2, "InvalidOption")).toMatchObject({
      option: "--header"
    })
    expect(expectFailure(await node(["tools", "--catalog", "--config", file, "--transport", "sse"]), 2, "InvalidOption")).toMatchObject({
      option: "--transport"
    })
    expect(expectFailure(await node(["call", "--catalog", "--config", file, "--task", "alpha__add"]), 2, "InvalidOption")).toMatchObject({
      option: "--task"
    })
    expect(alpha.requests.length).toBe(before)
  })
})
