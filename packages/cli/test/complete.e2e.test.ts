/**
 * `complete` (docs/DESIGN.md, "Completion"), as the Node bundle runs it against the testkit's
 * features: a prompt argument and a template argument with `--context`, over HTTP in both eras
 * (a dual server: `--revision` picks the era) and over stdio; a server that did not declare
 * `completions` (never asked); a hostile answer; and the usage errors, each refused before any
 * I/O. Every failure is one record with its exit code.
 */
import * as Testkit from "@phasebound/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectFailure, expectJson, run, shellQuote } from "./support/cli.js"

let server: Testkit.TestServer
let plain: Testkit.TestServer
beforeAll(async () => {
  server = await Testkit.startServer({ era: "dual", features: true, mode: "sse" })
  plain = await Testkit.startServer({ era: "dual" })
})
afterAll(async () => {
  await server.close()
  await plain.close()
})

const node = (args: ReadonlyArray<string>) => run("node", args)
const calls = () => server.rpcCalls("completion/complete")

describe.each(["2026-07-28", "2025-11-25"] as const)("over HTTP, %s", (revision) => {
  const cli = (args: ReadonlyArray<string>) => node(["complete", ...args, "--revision", revision])

  // The result as the server sent it (2026-07-28 adds its resultType).
  it("a prompt argument: the suggestions as JSON", async () => {
    expect(expectJson(await cli([server.url, "--prompt", "greet", "--argument", "name", "--value", "al"]))).toMatchObject({
      completion: { values: ["Alan", "Alonzo"], total: 2, hasMore: false }
    })
  })

  it("a template argument, with the other argument's value in --context", async () => {
    const repo = ["--resource", "test://repos/{owner}/{repo}", "--argument", "repo"]
    expect(expectJson(await cli([server.url, ...repo, "--value", "ex", "--context", "owner=effect"]))).toMatchObject({
      completion: { values: ["examples"], total: 1, hasMore: false }
    })
    // Without a value: every suggestion; a context value may hold '='.
    expect(expectJson(await cli([server.url, ...repo, "--context", "owner=modelcontextprotocol", "--context", "x=a=b"]))).toMatchObject({
      completion: { values: ["modelcontextprotocol", "typescript-sdk", "inspector"] }
    })
  })

  it("7: more than 100 values (ProtocolViolation, applied)", async () => {
    const record = expectFailure(await cli([server.url, "--prompt", "completion_faults", "--argument", "too-many", "--value", "101"]), 7, "ProtocolViolation")
    expect(record).toMatchObject({ stage: "complete", phase: "call", reason: "invalid-result", outcome: "applied" })
  })

  it("5: an answer past --call-max-bytes", async () => {
    const record = expectFailure(
      await cli([server.url, "--prompt", "completion_faults", "--argument", "huge", "--value", "100000", "--call-max-bytes", "4KiB"]),
      5,
      "ByteCeilingExceeded"
    )
    expect(record).toMatchObject({ stage: "complete", phase: "call", limits: { maxBytes: 4096 } })
  })

  it("6: the server's refusal of an unknown prompt", async () => {
    expect(expectFailure(await cli([server.url, "--prompt", "nope", "--argument", "x"]), 6, "RemoteRefusal")).toMatchObject({
      stage: "complete",
      code: -32602
    })
  })

  it("2: a server that did not declare completions is not asked", async () => {
    const record = expectFailure(await cli([plain.url, "--prompt", "greet", "--argument", "name"]), 2, "InvalidOption")
    expect(record).toMatchObject({ stage: "complete", option: "completions", reason: "undeclared-capability", outcome: "not-sent" })
    expect(plain.rpcCalls("completion/complete")).toBe(0)
  })
})

describe("usage errors, before any I/O", () => {
  const cases = [
    [["--argument", "name"], "--prompt"],
    [["--prompt", "greet", "--resource", "test://docs/{id}", "--argument", "name"], "--prompt"],
    [["--prompt", "", "--argument", "name"], "--prompt"],
    [["--prompt", "greet"], "--argument"],
    [["--prompt", "greet", "--argument", "name", "--context", "novalue"], "--context"],
    [["--prompt", "greet", "--argument", "name", "--context", "=x"], "--context"],
    [["--prompt", "greet", "--argument", "name", "--context", "a=1", "--context", "a=2"], "--context"]
  ] as const
  for (const [args, option] of cases) {
    it(`2: ${args.join(" ")}`, async () => {
      const before = server.requests.length
      const record = expectFailure(await node(["complete", server.url, ...args]), 2, "InvalidOption")
      expect(record).toMatchObject({ stage: "config", option, outcome: "not-sent", retryable: false })
      expect(server.requests.length).toBe(before)
    })
  }
})

describe("over stdio (--features)", () => {
  const fixture = Testkit.makeStdioFixture({ features: true })
  afterAll(() => fixture.cleanup())
  const stdio = shellQuote([fixture.command, ...fixture.args])

  it("a template argument of the listed documents", async () => {
    expect(expectJson(await node(["complete", "--stdio", stdio, "--resource", "test://docs/{id}", "--argument", "id", "--value", "2"]))).toEqual({
      completion: { values: ["2"], total: 1, hasMore: false }
    })
  })
})

// Every request above reached the server once: no retry, nothing sent for a usage error.
afterAll(() => {
  expect(calls()).toBe(12)
})
