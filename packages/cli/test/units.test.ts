/**
 * The pure parts of the command line: shell-like word splitting, durations and sizes, headers
 * and `${VAR}` expansion, config-file validation.
 */
import { Effect, Exit } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../src/config.js"
import { parseHeader, resolveTarget } from "../src/target.js"
import { parseDuration, parseSize } from "../src/units.js"
import { splitWords } from "../src/words.js"

const failureOf = <A, E>(effect: Effect.Effect<A, E>): E | undefined => {
  const exit = Effect.runSyncExit(effect)
  return Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
}

describe("splitWords", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["node server.js", ["node", "server.js"]],
    ["  node\t server.js \n", ["node", "server.js"]],
    ["echo 'a b' \"c d\"", ["echo", "a b", "c d"]],
    ["a'b'\"c\"d", ["abcd"]],
    ["'' \"\"", ["", ""]],
    ["'it'\\''s'", ["it's"]],
    ["\"a \\\"q\\\" \\\\ \\$HOME \\n\"", ["a \"q\" \\ $HOME \\n"]],
    ["a\\ b \\'c", ["a b", "'c"]],
    ["line\\\ncontinued", ["linecontinued"]],
    ["$HOME ~ * ${X} `id`", ["$HOME", "~", "*", "${X}", "`id`"]],
    ["--fault '{\"kind\":\"delay\",\"ms\":5}'", ["--fault", "{\"kind\":\"delay\",\"ms\":5}"]],
    ["", []]
  ]
  for (const [input, words] of cases) {
    it(`splits ${JSON.stringify(input)}`, () => expect(splitWords(input)).toEqual({ _tag: "Words", words }))
  }
  for (const input of ["'open", "\"open", "a 'b", "x \"y\\\""]) {
    it(`refuses the unterminated ${JSON.stringify(input)}`, () => expect(splitWords(input)).toEqual({ _tag: "Invalid", reason: "unterminated-quote" }))
  }
  it("refuses a trailing backslash", () => expect(splitWords("a\\")).toEqual({ _tag: "Invalid", reason: "trailing-backslash" }))
})

describe("durations and sizes", () => {
  it.each([["500ms", 500], ["30s", 30_000], ["2m", 120_000], ["1h", 3_600_000], ["1.5s", 1_500], [" 7s ", 7_000]])(
    "duration %s = %d ms",
    (text, ms) => expect(Effect.runSync(parseDuration("--timeout", text))).toBe(ms)
  )
  it.each([
    ["0s", "not-positive"],
    ["-5s", "not-positive"],
    ["30", "not-a-duration"],
    ["abc", "not-a-duration"],
    ["5 s", "not-a-duration"],
    ["Infinitys", "not-a-duration"],
    ["", "not-a-duration"]
  ])("duration %j is refused (%s)", (text, reason) =>
    expect(failureOf(parseDuration("--call-timeout", text))).toMatchObject({
      _tag: "InvalidOption",
      option: "--call-timeout",
      reason,
      stage: "config",
      outcome: "not-sent"
    }))
  it.each([["1048576", 1048576], ["64KiB", 65536], ["16MiB", 16777216], ["1GiB", 1073741824], ["2kb", 2000], ["1.5KiB", 1536], ["10B", 10]])(
    "size %s = %d bytes",
    (text, bytes) => expect(Effect.runSync(parseSize("--max-bytes", text))).toBe(bytes)
  )
  it.each([["0", "not-positive"], ["-1", "not-positive"], ["1.5", "not-integer"], ["12XB", "invalid-value"], ["lots", "invalid-value"], [
    "1e3",
    "invalid-value"
  ], [
    "99999999999999999999",
    "unsafe-integer"
  ]])("size %j is refused (%s)", (text, reason) => expect(failureOf(parseSize("--call-max-bytes", text))).toMatchObject({ option: "--call-max-bytes", reason }))
})

describe("headers and ${VAR}", () => {
  it("parses 'Name: value' and expands ${VAR}", () =>
    expect(Effect.runSync(parseHeader("Authorization: Bearer ${TOKEN}", { TOKEN: "t0k" }))).toEqual(["Authorization", "Bearer t0k"]))
  it("keeps colons in the value", () => expect(Effect.runSync(parseHeader("X-Url: a:b:c", {}))).toEqual(["X-Url", "a:b:c"]))
  it("an unset variable names the header, never the value or the variable", () => {
    const error = failureOf(parseHeader("X-Key: ${SECRET_CANARY_VAR}", {}))
    expect(error).toMatchObject({ _tag: "InvalidOption", option: "--header" })
    expect(JSON.stringify(error)).not.toContain("SECRET_CANARY_VAR")
  })
  it.each(["no colon", ": empty name", "bad name: x"])("refuses %j", (line) => expect(failureOf(parseHeader(line, {}))).toMatchObject({ option: "--header" }))
})

describe("config file", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "phasebound-config-"))
  const file = (name: string, content: unknown) => {
    const target = path.join(dir, name)
    writeFileSync(target, typeof content === "string" ? content : JSON.stringify(content))
    return target
  }

  it("accepts HTTP and stdio servers, and other top-level settings", () => {
    const config = Effect.runSync(loadConfig(file("ok.json", {
      globalShortcut: "x",
      mcpServers: {
        remote: { url: "https://example.com/mcp", type: "http", headers: { A: "b" } },
        legacy: { url: "https://example.com/sse", type: "sse" },
        local: { command: "node", args: ["s.js"], env: { K: "v" }, cwd: "/tmp" },
        typed: { type: "stdio", command: "node" }
      }
    })))
    expect(config.servers.map((server) => server.name)).toEqual(["remote", "legacy", "local", "typed"])
  })

  it.each([
    ["missing file", path.join(dir, "absent.json")],
    ["not JSON", "{nope"],
    ["no servers of any known format", { settings: {} }],
    ["an unknown field in an entry", { mcpServers: { a: { url: "https://x", token: "SECRET" } } }],
    ["both kinds at once", { mcpServers: { a: { url: "https://x", command: "node" } } }],
    ["a wrong type", { mcpServers: { a: { command: "node", args: "s.js" } } }],
    ["an unknown transport type", { mcpServers: { a: { url: "https://x", type: "websocket" } } }],
    ["a non-string header", { mcpServers: { a: { url: "https://x", headers: { A: 1 } } } }]
  ])("refuses %s, naming --config without echoing the content", (name, content) => {
    const target = name === "missing file" ? (content as string) : file(`${name}.json`, content)
    const error = failureOf(loadConfig(target))
    expect(error).toMatchObject({ _tag: "InvalidOption", option: "--config", stage: "config" })
    expect(JSON.stringify(error)).not.toMatch(/SECRET|absent|https/)
  })

  it("resolves names, expanding ${VAR} in header and env values", () => {
    const config = file("servers.json", {
      mcpServers: {
        remote: { url: "http://127.0.0.1:1/mcp", type: "sse", headers: { Authorization: "Bearer ${TOK}" } },
        local: { command: "node", args: ["a b"], env: { KEY: "${KEY}" } }
      }
    })
    const options = { stdio: undefined, config, headers: [], transport: undefined }
    expect(Effect.runSync(resolveTarget({ ...options, target: "remote" }, { TOK: "abc" }))).toMatchObject({
      _tag: "Http",
      headers: { Authorization: "Bearer abc" },
      transport: "sse"
    })
    expect(Effect.runSync(resolveTarget({ ...options, target: "local" }, { KEY: "k3y" }))).toMatchObject({
      _tag: "Stdio",
      command: "node",
      args: ["a b"],
      env: { KEY: "k3y" }
    })
    expect(failureOf(resolveTarget({ ...options, target: "local" }, {}))).toMatchObject({ option: "--config env" })
    expect(failureOf(resolveTarget({ ...options, target: "nobody" }, {}))).toMatchObject({ option: "target" })
    expect(failureOf(resolveTarget({ ...options, target: "local", headers: ["A: b"] }, { KEY: "k" }))).toMatchObject({
      option: "--header"
    })
  })
})
