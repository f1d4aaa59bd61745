/**
 * `phasebound watch` as a subprocess (the Node bundle) against the official SDK v1 server of the
 * client's subscription tests (2025-11-25, Streamable HTTP): one JSON line per event on stdout
 * (`Watching` first), SIGINT its normal end (exit 0, nothing on stderr, the subscription ended on
 * the server), a server without `resources.subscribe` one record (exit 2) before any
 * `resources/subscribe` is sent, and neither is a URI the client refuses.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type Peer2025, start2025 } from "../../client/test/support/subscriptionsServers.js"
import { expectFailure, run, shellQuote, waitFor } from "./support/cli.js"

const stdioPeer = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../client/test/support/subscriptionsPeer.mjs")

let peers: Array<Peer2025> = []
afterEach(async () => {
  for (const peer of peers) await peer.close()
  peers = []
})
const peer = async (subscribe = true) => {
  const started = await start2025({ jsonResponse: true, subscribe })
  peers.push(started)
  return started
}

/** The JSON lines printed so far. */
const linesOf = (stdout: string) => stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>)

describe("watch", () => {
  it("prints Watching, then each update of a watched URI (not another's), until SIGINT: exit 0, unsubscribed", async () => {
    const srv = await peer()
    let stdout = ""
    const result = await run("node", ["watch", srv.url, "--resource", "doc://a"], {
      onSpawn: (child) => {
        child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
        void (async () => {
          await waitFor(() => linesOf(stdout).length === 1)
          await srv.touch("doc://other")
          await srv.touch("doc://a")
          await waitFor(() => linesOf(stdout).length === 2)
          child.kill("SIGINT")
        })()
      }
    })
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
    expect(linesOf(result.stdout)).toEqual([
      { event: "Watching", resources: ["doc://a"], lists: false },
      { event: "ResourceUpdated", uri: "doc://a", gap: false }
    ])
    expect(srv.counts).toEqual({ subscribes: { "doc://a": 1 }, unsubscribes: { "doc://a": 1 } })
  })

  it("a stdio server: subscribed over stdin, SIGINT ends it with exit 0 and nothing on stderr", async () => {
    let stdout = ""
    const result = await run("node", ["watch", "--stdio", shellQuote([process.execPath, stdioPeer]), "--resource", "doc://a", "--lists"], {
      onSpawn: (child) => {
        child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
        void waitFor(() => linesOf(stdout).length === 1).then(() => child.kill("SIGINT"))
      }
    })
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
    expect(linesOf(result.stdout)).toEqual([{ event: "Watching", resources: ["doc://a"], lists: true }])
  })

  it("without --resource it watches the lists; a GET stream the server ends is a gap", async () => {
    const srv = await peer()
    let stdout = ""
    const result = await run("node", ["watch", srv.url], {
      onSpawn: (child) => {
        child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
        void (async () => {
          await waitFor(() => linesOf(stdout).length === 1 && srv.getStreams() === 1)
          await srv.announcePrompts()
          await waitFor(() => linesOf(stdout).some((line) => line["event"] === "PromptsListChanged"))
          srv.dropStreams()
          await waitFor(() => linesOf(stdout).some((line) => line["gap"] === true))
          child.kill("SIGINT")
        })()
      }
    })
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
    const lines = linesOf(result.stdout)
    expect(lines[0]).toEqual({ event: "Watching", resources: [], lists: true })
    expect(lines[1]).toEqual({ event: "PromptsListChanged", gap: false })
    expect(lines.slice(2)).toEqual(expect.arrayContaining([
      { event: "ToolsListChanged", gap: true },
      { event: "PromptsListChanged", gap: true },
      { event: "ResourcesListChanged", gap: true }
    ]))
  })

  it("a server without resources.subscribe: one record, exit 2, nothing sent", async () => {
    const srv = await peer(false)
    const record = expectFailure(await run("node", ["watch", srv.url, "--resource", "doc://a"]), 2, "InvalidOption")
    expect(record).toMatchObject({ stage: "subscribe-resource", phase: "call", option: "uri", reason: "undeclared-capability", outcome: "not-sent" })
    expect(srv.counts.subscribes).toEqual({})
  })

  it("a URI longer than the client takes is refused before its resources/subscribe is sent", async () => {
    const srv = await peer()
    const record = expectFailure(await run("node", ["watch", srv.url, "--resource", `doc://${"x".repeat(9_000)}`]), 2, "InvalidOption")
    expect(record).toMatchObject({ stage: "subscribe-resource", option: "uri", reason: "invalid-value", outcome: "not-sent" })
    expect(JSON.stringify(record)).not.toContain("xxxx")
    expect(srv.counts.subscribes).toEqual({})
  })
})
