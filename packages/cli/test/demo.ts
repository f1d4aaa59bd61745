/**
 * What `phasebound demo` (and so `npm start`) promises, read back from its JSON output and
 * checked fact by fact, so that a broken demo fails: a testkit server of the current revision
 * (2026-07-28) on loopback; a real discovery against it (`server/discover`, then the tools, each
 * stage with its time and bytes); the tools listed; three calls with their exact results
 * (the server's counter says `increment` reached it once); one oversized answer (100,000 bytes)
 * refused at the 64 KiB call ceiling while it was being read; the call phase's observations, one
 * per call, the refused one with the bytes the error reports. Then a server of the 2025
 * revisions: the negotiation's refused 2026-07-28 probe, labelled as such, and the handshake
 * that follows. Exit code 0 and nothing on stderr.
 */
import * as Testkit from "@phasebound/testkit"
import { expect } from "vitest"
import { expectJson, type RunResult } from "./support/cli.js"

/** The demo's call ceiling (`call.maxBytes`) and the size of the hostile answer it scripts. */
const CALL_CEILING = 64 * 1024
const OVERSIZED_BYTES = 100_000

interface DemoLine {
  readonly step: string
  readonly detail: string
}

interface Observation {
  readonly ms: number
  readonly bytes: number
  readonly outcome: string
}

/** `"12 ms, 538 bytes"` or `"192 ms, 96 bytes, RemoteRefusal"`: no outcome is `ok`. */
const observation = (detail: string): Observation => {
  const match = /^(\d+) ms, (\d+) bytes(?:, (\w+))?$/.exec(detail)
  expect(match, `an observation: ${JSON.stringify(detail)}`).not.toBeNull()
  return { ms: Number(match![1]), bytes: Number(match![2]), outcome: match![3] ?? "ok" }
}

export const expectDemo = (result: RunResult): void => {
  const out = expectJson(result) as { readonly demo: ReadonlyArray<DemoLine> }
  expect(Object.keys(out)).toEqual(["demo"])
  const lines = out.demo
  expect(lines.map((line) => line.step)).toEqual([
    "server",
    "connected",
    "discovery: discover",
    "discovery: list-tools",
    "tools",
    "call add(20, 22)",
    "call echo",
    "call increment",
    "oversized answer",
    "call phase: tools/call",
    "call phase: tools/call",
    "call phase: tools/call",
    "call phase: tools/call",
    "older server",
    "connected",
    "negotiation: 2026-07-28 probe",
    "discovery: initialize",
    "discovery: initialized",
    "discovery: list-tools"
  ])
  // The first of each step (the current server's), or the older server's where noted.
  const detail = (step: string): string => lines.find((line) => line.step === step)!.detail
  const older = lines.slice(lines.findIndex((line) => line.step === "older server"))
  const olderDetail = (step: string): string => older.find((line) => line.step === step)!.detail

  // The server: on loopback, on the port the system gave it.
  const server = /^testkit MCP server on loopback \(revision 2026-07-28, Streamable HTTP, SSE answers\), port (\d+)$/.exec(detail("server"))
  expect(server, detail("server")).not.toBeNull()
  const port = Number(server![1])
  expect(port).toBeGreaterThanOrEqual(1)
  expect(port).toBeLessThanOrEqual(65_535)

  // Discovery: the transport, the current revision, the server's own name and version.
  expect(detail("connected")).toBe(`streamable-http, revision 2026-07-28, server ${Testkit.SERVER_INFO.name} ${Testkit.SERVER_INFO.version}`)
  const discover = observation(detail("discovery: discover"))
  const listTools = observation(detail("discovery: list-tools"))
  expect(discover).toMatchObject({ outcome: "ok" })
  expect(discover.bytes).toBeGreaterThan(0)
  expect(listTools).toMatchObject({ outcome: "ok" })
  expect(listTools.bytes).toBeGreaterThan(0)

  // The negotiation with a 2025 server: the 2026-07-28 probe refused with a JSON-RPC error (a
  // body was read), said to be a step of the negotiation, then the handshake.
  expect(olderDetail("older server")).toMatch(/^testkit MCP server on loopback \(revisions 2024-11-05 to 2025-11-25\), port \d+$/)
  expect(olderDetail("connected")).toBe(`streamable-http, revision 2025-11-25, server ${Testkit.SERVER_INFO.name} ${Testkit.SERVER_INFO.version}`)
  const probe = /^refused \(RemoteRefusal\): the server speaks an earlier revision; (\d+) ms, (\d+) bytes$/.exec(olderDetail("negotiation: 2026-07-28 probe"))
  expect(probe, olderDetail("negotiation: 2026-07-28 probe")).not.toBeNull()
  expect(Number(probe![2])).toBeGreaterThan(0)
  const initialize = observation(olderDetail("discovery: initialize"))
  const initialized = observation(olderDetail("discovery: initialized"))
  expect(initialize).toMatchObject({ outcome: "ok" })
  expect(initialize.bytes).toBeGreaterThan(0)
  // A notification: its acknowledgement has no body to count.
  expect(initialized).toMatchObject({ outcome: "ok", bytes: 0 })
  expect(observation(olderDetail("discovery: list-tools"))).toMatchObject({ outcome: "ok" })

  // The tools listed, and three calls with their exact results.
  // The 2026-07-28 server's tools: the three of every era, and two of its own (header
  // declarations, an input round).
  expect(detail("tools")).toBe("add, echo, increment, region_query, ask_name")
  expect(detail("call add(20, 22)")).toBe("42")
  expect(detail("call echo")).toBe("héllo, phasebound 👋")
  expect(detail("call increment")).toBe("1 (server counter: 1)")

  // The oversized answer: refused at the call ceiling, after more than the ceiling and no more
  // than the answer was read; a response arrived, so the call was applied.
  const refused = /^ByteCeilingExceeded after (\d+) bytes \(ceiling (\d+)\), outcome applied$/.exec(detail("oversized answer"))
  expect(refused, detail("oversized answer")).not.toBeNull()
  const observedBytes = Number(refused![1])
  expect(Number(refused![2])).toBe(CALL_CEILING)
  expect(observedBytes).toBeGreaterThan(CALL_CEILING)
  expect(observedBytes).toBeLessThanOrEqual(OVERSIZED_BYTES)

  // The call phase: one observation per call, in order; the three answers fit the ceiling, the
  // refused one reports the bytes the error does.
  const calls = lines.filter((line) => line.step === "call phase: tools/call").map((line) => observation(line.detail))
  expect(calls.map((call) => call.outcome)).toEqual(["ok", "ok", "ok", "ByteCeilingExceeded"])
  for (const call of calls.slice(0, 3)) {
    expect(call.bytes).toBeGreaterThan(0)
    expect(call.bytes).toBeLessThanOrEqual(CALL_CEILING)
  }
  expect(calls[3]!.bytes).toBe(observedBytes)
}
