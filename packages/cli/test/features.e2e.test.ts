/**
 * `resources`, `templates`, `read`, `prompts`, `prompt`, and `call`'s `--idle-timeout`,
 * `--server-log-level` and progress bar, as the Node bundle runs them against the testkit's features:
 * over HTTP in both eras (a dual server: `--revision` picks the era), over stdio, and on a
 * terminal (a pty) for the human output. Every failure is one record with its exit code.
 *
 * The terminal tests need util-linux `script` (support/pty.ts): on Linux a missing helper fails
 * them with the reason; elsewhere they are skipped, and their names say why.
 */
import * as Testkit from "@phasebound/testkit"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { baseEnv, cliDir, expectFailure, expectJson, run, shellQuote, waitFor } from "./support/cli.js"
import { itOnTerminal, runOnTerminal, screenOf } from "./support/pty.js"

let server: Testkit.TestServer
beforeAll(async () => {
  // "sse": a request's notifications (progress, log messages) come on its own stream, before its answer.
  server = await Testkit.startServer({ era: "dual", features: true, mode: "sse" })
})
afterAll(() => server.close())

const node = (args: ReadonlyArray<string>, options?: Parameters<typeof run>[2]) => run("node", args, options)

/** Bytes 0..255, as `test://blob/1` holds them. */
const blob = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString("base64")

/** The last tools/call the server received. */
const lastCall = () => server.requests.filter((request) => request.rpcMethod === "tools/call").at(-1)!

const eras = [
  { revision: "2026-07-28", notFound: -32602 },
  { revision: "2025-11-25", notFound: -32002 }
] as const

describe.each(eras)("over HTTP, $revision", ({ notFound, revision }) => {
  const cli = (args: ReadonlyArray<string>) => node([...args, "--revision", revision])

  it("resources: the listed resources", async () => {
    expect(expectJson(await cli(["resources", server.url]))).toEqual({
      resources: [
        { uri: "test://docs/1", name: "doc-1", mimeType: "text/plain" },
        { uri: "test://docs/2", name: "doc-2", mimeType: "text/plain" },
        { uri: "test://docs/3", name: "doc-3", mimeType: "text/plain" },
        { uri: "test://blob/1", name: "blob-1", mimeType: "application/octet-stream" }
      ]
    })
  })

  it("templates: the resource templates", async () => {
    expect(expectJson(await cli(["templates", server.url]))).toEqual({
      resourceTemplates: [{ uriTemplate: "test://docs/{id}", name: "doc", mimeType: "text/plain" }]
    })
  })

  it("read: a text resource and a blob, as the server sent them", async () => {
    expect(expectJson(await cli(["read", server.url, "test://docs/2"]))).toMatchObject({
      contents: [{ uri: "test://docs/2", mimeType: "text/plain", text: "Document 2" }]
    })
    expect(expectJson(await cli(["read", server.url, "test://blob/1"]))).toMatchObject({
      contents: [{ uri: "test://blob/1", mimeType: "application/octet-stream", blob }]
    })
  })

  it("prompts: each prompt and its arguments", async () => {
    expect(expectJson(await cli(["prompts", server.url]))).toEqual({
      prompts: [
        { name: "greet", description: "Greets someone", arguments: [{ name: "name", required: true }] },
        { name: "plain" }
      ]
    })
  })

  it("prompt: the messages, the arguments filled in", async () => {
    expect(expectJson(await cli(["prompt", server.url, "greet", "--args", "{\"name\":\"Ada\"}"]))).toMatchObject({
      messages: [{ role: "user", content: { type: "text", text: "Hello, Ada" } }]
    })
    expect(expectJson(await cli(["prompt", server.url, "plain"]))).toMatchObject({
      messages: [{ role: "user", content: { type: "text", text: "A plain prompt" } }]
    })
  })

  it("6: an unknown resource is RemoteRefusal at read-resource, the era's code", async () => {
    const record = expectFailure(await cli(["read", server.url, "test://nowhere/1"]), 6, "RemoteRefusal")
    expect(record).toMatchObject({ stage: "read-resource", phase: "call", code: notFound, outcome: "not-applied" })
  })

  it("6: a missing prompt argument is RemoteRefusal at get-prompt", async () => {
    const record = expectFailure(await cli(["prompt", server.url, "greet"]), 6, "RemoteRefusal")
    expect(record).toMatchObject({ stage: "get-prompt", phase: "call", code: -32602, remoteMessage: "Missing required argument: name" })
  })

  it("5: a resource over --call-max-bytes is ByteCeilingExceeded at read-resource", async () => {
    const record = expectFailure(await cli(["read", "--call-max-bytes", "4KiB", server.url, "test://big/10000"]), 5, "ByteCeilingExceeded")
    expect(record).toMatchObject({ stage: "read-resource", phase: "call", limits: { maxBytes: 4096 }, outcome: "applied" })
    // Under the ceiling, the same command reads it.
    const small = expectJson(await cli(["read", "--call-max-bytes", "4KiB", server.url, "test://big/1000"])) as {
      contents: ReadonlyArray<{ text: string }>
    }
    expect(Buffer.byteLength(small.contents[0]!.text)).toBe(1000)
  })

  it("4: --idle-timeout shorter than the progress interval is DeadlineExceeded, reason idle-timeout", async () => {
    const args = ["call", server.url, "slow_progress", "--args", "{\"steps\":3,\"intervalMs\":1000}", "--idle-timeout", "200ms"]
    const started = Date.now()
    const record = expectFailure(await cli(args), 4, "DeadlineExceeded")
    expect(record).toMatchObject({
      stage: "call",
      phase: "call",
      reason: "idle-timeout",
      limits: { timeoutMs: 60000, idleTimeoutMs: 200 },
      outcome: "unknown"
    })
    // Long before the 3 s the call would take.
    expect(Date.now() - started).toBeLessThan(2_900)
  })

  it("--idle-timeout longer than the progress interval: the call succeeds; progress was asked for", async () => {
    const args = ["call", server.url, "slow_progress", "--args", "{\"steps\":4,\"intervalMs\":100}", "--idle-timeout", "2s"]
    expect(expectJson(await cli(args))).toMatchObject({ content: [{ type: "text", text: "done" }] })
    expect(lastCall().meta).toHaveProperty("progressToken")
  })

  it("machine mode without --idle-timeout asks for no progress (no bar to draw)", async () => {
    expect(expectJson(await cli(["call", server.url, "slow_progress", "--args", "{\"steps\":2,\"intervalMs\":10}"]))).toMatchObject({
      content: [{ text: "done" }]
    })
    expect(lastCall().meta ?? {}).not.toHaveProperty("progressToken")
  })

  it("--server-log-level: the server's messages at that level and above, in the JSON output; stderr stays empty", async () => {
    const logged = expectJson(
      await cli(["call", server.url, "log", "--server-log-level", "info", "--args", "{\"level\":\"warning\",\"message\":\"careful\",\"count\":2}"])
    )
    expect(logged).toMatchObject({
      content: [{ text: "logged 2" }],
      logs: [{ level: "warning", logger: "testkit", data: "careful" }, { level: "warning", logger: "testkit", data: "careful" }]
    })
    expect(logged).not.toHaveProperty("logsDropped")
    // Below the level: the server sends nothing, the output says so with an empty list.
    const quiet = expectJson(
      await cli(["call", server.url, "log", "--server-log-level=error", "--args", "{\"level\":\"info\",\"message\":\"chatter\",\"count\":5}"])
    )
    expect(quiet).toMatchObject({ content: [{ text: "logged 0" }], logs: [] })
  })

  it("--server-log-level keeps 100 messages and counts the rest in logsDropped", async () => {
    const out = expectJson(
      await cli(["call", server.url, "log", "--server-log-level", "debug", "--args", "{\"level\":\"error\",\"message\":\"m\",\"count\":130}"])
    ) as { logs: ReadonlyArray<unknown>; logsDropped: number }
    expect(out.logs).toHaveLength(100)
    expect(out.logsDropped).toBe(30)
  })

  it("--server-log-level with a failing call: the one record on stderr, no log line anywhere", async () => {
    const args = [
      "call",
      server.url,
      "slow_progress",
      "--server-log-level",
      "debug",
      "--idle-timeout",
      "150ms",
      "--args",
      "{\"steps\":2,\"intervalMs\":1000}"
    ]
    expect(expectFailure(await cli(args), 4, "DeadlineExceeded")).toMatchObject({ reason: "idle-timeout" })
  })
})

describe("130: SIGINT during a call with an idle timeout", () => {
  it("Interrupted, at the call, its limits with the idle timeout", async () => {
    const calls = server.rpcCalls("tools/call")
    const args = ["call", server.url, "slow_progress", "--idle-timeout", "5s", "--args", "{\"steps\":3,\"intervalMs\":2000}"]
    const result = await node(args, {
      onSpawn: (child) => void waitFor(() => server.rpcCalls("tools/call") > calls).then(() => child.kill("SIGINT"))
    })
    expect(expectFailure(result, 130, "Interrupted")).toMatchObject({
      stage: "call",
      phase: "call",
      limits: { timeoutMs: 60000, idleTimeoutMs: 5000 }
    })
  })
})

describe("2: invalid options, before any I/O", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
    ["prompt --args with a value that is not a string", ["prompt", "URL", "greet", "--args", "{\"name\":1}"], "--args"],
    ["prompt --args that is not an object", ["prompt", "URL", "greet", "--args", "[\"Ada\"]"], "--args"],
    ["prompt --args that is not JSON", ["prompt", "URL", "greet", "--args", "name=Ada"], "--args"],
    ["an unknown --server-log-level", ["call", "URL", "log", "--server-log-level", "verbose"], "--server-log-level"],
    ["a --server-log-level in capitals (MCP levels are lower case)", ["call", "URL", "log", "--server-log-level=INFO"], "--server-log-level"],
    [
      "an Effect level that MCP has not (@effect/cli's own --server-log-level does not take it)",
      ["call", "URL", "log", "--server-log-level", "trace"],
      "--server-log-level"
    ],
    ["a zero --idle-timeout", ["call", "URL", "slow_progress", "--idle-timeout", "0s"], "--idle-timeout"],
    ["a negative --idle-timeout", ["call", "URL", "slow_progress", "--idle-timeout", "-1s"], "--idle-timeout"],
    ["a bare number as --idle-timeout", ["call", "URL", "slow_progress", "--idle-timeout", "30"], "--idle-timeout"],
    ["read without a uri", ["read", "URL"], "uri"],
    ["prompt without a name", ["prompt", "URL"], "prompt"],
    ["read with a surplus positional", ["read", "URL", "test://docs/1", "extra"], "arguments"],
    ["--server-log-level on a command without it", ["tools", "URL", "--server-log-level", "info"], "arguments"]
  ]
  for (const [name, args, option] of cases) {
    it(name, async () => {
      const before = server.requests.length
      const record = expectFailure(await node(args.map((a) => (a === "URL" ? server.url : a))), 2, "InvalidOption")
      expect(record).toMatchObject({ stage: "config", option, outcome: "not-sent", retryable: false })
      expect(server.requests.length).toBe(before)
    })
  }
})

describe("over stdio (--features)", () => {
  const fixture = Testkit.makeStdioFixture({ features: true })
  afterAll(() => fixture.cleanup())
  const stdio = shellQuote([fixture.command, ...fixture.args])

  it("resources, read, prompt, and call with --server-log-level and --idle-timeout", async () => {
    expect(expectJson(await node(["resources", "--stdio", stdio]))).toMatchObject({ resources: [{ uri: "test://docs/1" }, {}, {}, {}] })
    expect(expectJson(await node(["read", "--stdio", stdio, "test://docs/3"]))).toMatchObject({ contents: [{ text: "Document 3" }] })
    expect(expectJson(await node(["prompt", "--stdio", stdio, "greet", "--args", "{\"name\":\"Bo\"}"]))).toMatchObject({
      messages: [{ content: { text: "Hello, Bo" } }]
    })
    expect(
      expectJson(
        await node(["call", "--stdio", stdio, "log", "--server-log-level", "notice", "--args", "{\"level\":\"alert\",\"message\":\"up\"}"])
      )
    ).toMatchObject({ logs: [{ level: "alert", logger: "testkit", data: "up" }] })
    const slow = ["call", "--stdio", stdio, "slow_progress", "--args", "{\"steps\":3,\"intervalMs\":100}"]
    expect(expectJson(await node([...slow, "--idle-timeout", "2s"]))).toMatchObject({ content: [{ text: "done" }] })
    expect(expectFailure(await node([...slow, "--idle-timeout", "30ms"]), 4, "DeadlineExceeded")).toMatchObject({
      reason: "idle-timeout",
      limits: { idleTimeoutMs: 30 }
    })
  })

  it("6: an unknown resource (-32002)", async () => {
    expect(expectFailure(await node(["read", "--stdio", stdio, "test://nowhere"]), 6, "RemoteRefusal")).toMatchObject({
      stage: "read-resource",
      code: -32002
    })
  })
})

describe("on a terminal (human output)", () => {
  // A pty for stdout and stderr both (support/pty.ts: required on Linux, a visible skip elsewhere).
  const bundle = path.join(cliDir, "dist/bin.js")

  /** What the pty received, raw (stdout and stderr interleaved as a terminal shows them). */
  const onTerminal = (args: ReadonlyArray<string>) => runOnTerminal(shellQuote([process.execPath, bundle, ...args]), baseEnv())

  const human = async (args: ReadonlyArray<string>, code = 0): Promise<string> => {
    const result = await onTerminal(args)
    expect(result.code).toBe(code)
    return screenOf(result.raw)
  }

  itOnTerminal("resources, templates and prompts: one line each, under a header", async () => {
    expect(await human(["resources", server.url])).toBe(
      [
        "URI            NAME    MIME TYPE",
        "test://docs/1  doc-1   text/plain",
        "test://docs/2  doc-2   text/plain",
        "test://docs/3  doc-3   text/plain",
        "test://blob/1  blob-1  application/octet-stream",
        ""
      ].join("\n")
    )
    expect(await human(["templates", server.url])).toBe("URI TEMPLATE      NAME  MIME TYPE\ntest://docs/{id}  doc   text/plain\n")
    expect(await human(["prompts", server.url, "--revision", "2026-07-28"])).toBe(
      "PROMPT  ARGUMENTS  DESCRIPTION\ngreet   name       Greets someone\nplain\n"
    )
  })

  itOnTerminal("read: the text as is, a blob as one summary line", async () => {
    expect(await human(["read", server.url, "test://docs/1"])).toBe("Document 1\n")
    expect(await human(["read", server.url, "test://blob/1", "--revision", "2026-07-28"])).toBe(
      "<256 bytes, application/octet-stream>\n"
    )
  })

  itOnTerminal("prompt: role and text of each message", async () => {
    expect(await human(["prompt", server.url, "greet", "--args", "{\"name\":\"Ada\"}"])).toBe("user: Hello, Ada\n")
  })

  itOnTerminal("call --server-log-level: the result, then the server's log, one printable line per message", async () => {
    const args = ["call", server.url, "log", "--server-log-level", "info", "--args", "{\"level\":\"error\",\"message\":\"bad\\u001b[2J\\nthing\",\"count\":2}"]
    const result = await onTerminal(args)
    expect(result.code).toBe(0)
    // The escape sequence never reached the terminal.
    expect(result.raw).not.toContain("\x1b[2J")
    expect(screenOf(result.raw)).toBe("logged 2\nserver log:\n  error testkit: bad [2J thing\n  error testkit: bad [2J thing\n")
    expect(await human(["call", server.url, "log", "--server-log-level", "emergency", "--args", "{\"level\":\"info\",\"message\":\"x\"}"]))
      .toBe("logged 0\nserver log: (none)\n")
  })

  itOnTerminal("call: a progress bar on stderr, redrawn in place, cleared before the result", async () => {
    const result = await onTerminal(["call", server.url, "slow_progress", "--args", "{\"steps\":4,\"intervalMs\":100}"])
    expect(result.code).toBe(0)
    for (const step of ["[#####---------------] 1/4 step 1 of 4", "[##########----------] 2/4 step 2 of 4", "[####################] 4/4 step 4 of 4"]) {
      expect(result.raw).toContain(`\r${step}\x1b[K`)
    }
    expect(result.raw).toContain("\r\x1b[Kdone")
    expect(screenOf(result.raw)).toBe("done\n")
    // Progress was asked for because the bar is drawn.
    expect(lastCall().meta).toHaveProperty("progressToken")
  })

  itOnTerminal("--json on a terminal: no bar, no progress asked for", async () => {
    const result = await onTerminal(["call", "--json", server.url, "slow_progress", "--args", "{\"steps\":2,\"intervalMs\":50}"])
    expect(result.code).toBe(0)
    expect(result.raw).not.toContain("[#")
    expect(JSON.parse(screenOf(result.raw))).toMatchObject({ content: [{ text: "done" }] })
    expect(lastCall().meta ?? {}).not.toHaveProperty("progressToken")
  })
})

describe("help", () => {
  it("lists the new commands; call documents --idle-timeout and --server-log-level, prompt its --args", async () => {
    const root = await node(["--help"])
    expect(root).toMatchObject({ code: 0, stderr: "" })
    for (const command of ["resources", "templates", "read", "prompts", "prompt"]) expect(root.stdout).toContain(command)
    const call = await node(["call", "--help"])
    expect(call).toMatchObject({ code: 0, stderr: "" })
    expect(call.stdout).toContain("--idle-timeout")
    expect(call.stdout).toContain("--server-log-level")
    expect(call.stdout).toContain("emergency")
    const prompt = await node(["prompt", "--help"])
    expect(prompt.stdout).toContain("JSON object of strings")
    for (const command of ["resources", "templates", "read", "prompts"]) {
      const help = await node([command, "--help"])
      expect(help).toMatchObject({ code: 0, stderr: "" })
      expect(help.stdout).toContain("--call-max-bytes")
    }
  })
})
