/**
 * ConfigImport (docs/DESIGN.md, "Config files"): each format's reader over a realistic fixture
 * (packages/client/test/support/configFiles), detection by name and content, the search order,
 * and hostile files (huge, deep, `__proto__`, wrong types, world-writable): each a typed
 * refusal naming the path and a reason, never the file's content.
 */
import { Path } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ConfigImport, ServersFile } from "../../src/index.js"

const fixtures = fileURLToPath(new URL("../support/configFiles/", import.meta.url))
const fixture = (name: string) => readFileSync(join(fixtures, name), "utf8")
const platform = Layer.merge(NodeFileSystem.layer, NodePath.layer)

const parsed = (text: string, path: string, options?: ConfigImport.ReadOptions): ConfigImport.File => {
  const result = ConfigImport.parse(text, path, options)
  if (Either.isLeft(result)) throw new Error(`refused: ${result.left.reason} at ${result.left.at}`)
  return result.right
}
const refusal = (text: string, path: string, options?: ConfigImport.ReadOptions): ConfigImport.ConfigFileError => {
  const result = ConfigImport.parse(text, path, options)
  if (Either.isRight(result)) throw new Error("accepted")
  return result.left
}
const byName = (file: ConfigImport.File) => Object.fromEntries(file.servers.map((server) => [server.name, server]))

describe("the format readers", () => {
  it("VS Code mcp.json: JSONC, inputs (password), http as auto, envFile noted, workspaceFolder the project", () => {
    const file = parsed(fixture("vscode/.vscode/mcp.json"), "/work/app/.vscode/mcp.json")
    expect(file.format).toBe("vscode")
    expect(file.workspaceFolder).toBe("/work/app")
    expect(file.inputs).toEqual([
      { id: "github-token", description: "GitHub personal access token", password: true },
      { id: "region", description: "Region", password: false }
    ])
    const servers = byName(file)
    expect(servers["github"]!.entry).toEqual({
      url: "https://api.githubcopilot.com/mcp/",
      headers: { Authorization: "Bearer ${input:github-token}", "X-Region": "${input:region}" }
    })
    expect(servers["files"]!.entry).toMatchObject({ type: "stdio", command: "npx", env: { LOG_LEVEL: "${env:LOG_LEVEL:-info}" } })
    expect(servers["files"]!.notes).toEqual([expect.stringContaining("envFile")])
    const found = ConfigImport.serversOf([file])
    expect(ConfigImport.inputsOf(found[0]!).map((input) => input.id)).toEqual(["github-token", "region"])
  })

  it("VS Code settings.json: the mcp object", () => {
    const file = parsed(fixture("vscode/settings.json"), "/home/me/.config/Code/User/settings.json")
    expect(file.format).toBe("vscode-settings")
    expect(file.servers.map((server) => server.name)).toEqual(["time"])
  })

  it("Cursor: mcpServers, envFile noted", () => {
    const file = parsed(fixture("cursor/.cursor/mcp.json"), "/p/.cursor/mcp.json")
    expect(file.format).toBe("cursor")
    expect(byName(file)["linear"]!.entry).toEqual({ url: "https://mcp.linear.app/sse" })
    expect(byName(file)["postgres"]!.notes).toEqual([expect.stringContaining("envFile")])
  })

  it("Claude Desktop: mcpServers beside the app's settings", () => {
    const file = parsed(fixture("claude_desktop_config.json"), "/Users/me/Library/Application Support/Claude/claude_desktop_config.json")
    expect(file.format).toBe("claude-desktop")
    expect(file.servers.map((server) => server.name)).toEqual(["filesystem", "brave-search"])
  })

  it("Claude Code: .mcp.json; ~/.claude.json's local scope (projects[cwd]) before its user scope", () => {
    const project = parsed(fixture("project.mcp.json"), "/p/.mcp.json")
    expect(project.format).toBe("claude-code")
    expect(byName(project)["local"]!.entry).toMatchObject({ command: "${TOOLS_DIR:-/opt/tools}/server" })
    const user = parsed(fixture("claude.json"), "/home/me/.claude.json", { scope: "user", cwd: "/home/me/project" })
    expect(user.servers.map((server) => [server.name, server.scope])).toEqual([["shared", "local"], ["notion", "user"], ["shared", "user"]])
    const found = ConfigImport.serversOf([user])
    expect(found.map((server) => server.name)).toEqual(["shared", "notion"])
    expect(found[0]!.entry).toMatchObject({ command: "local-version" })
    const elsewhere = parsed(fixture("claude.json"), "/home/me/.claude.json", { cwd: "/tmp/none" })
    expect(elsewhere.servers.map((server) => server.name)).toEqual(["notion", "shared"])
  })

  it("Windsurf: serverUrl is the URL, a disabled server is left out", () => {
    const file = parsed(fixture("mcp_config.json"), "/home/me/.codeium/windsurf/mcp_config.json")
    expect(file.format).toBe("windsurf")
    expect(file.servers.map((server) => server.name)).toEqual(["remote", "github"])
    expect(byName(file)["remote"]!.entry).toEqual({ url: "https://mcp.example.com/mcp", headers: { "X-Api-Key": "${EXAMPLE_KEY}" } })
    expect(byName(file)["github"]!.notes).toEqual([expect.stringContaining("disabledTools")])
  })

  it("Codex: tables mapped, bearer_token_env_var and env_http_headers as references, enabled = false left out, the rest noted", () => {
    const file = parsed(fixture("codex/config.toml"), "/home/me/.codex/config.toml")
    expect(file.format).toBe("codex")
    expect(file.servers.map((server) => server.name)).toEqual(["docs", "figma"])
    const servers = byName(file)
    expect(servers["docs"]!.entry).toEqual({
      command: "docs-server",
      args: ["--port", "4000"],
      env: { HTTP_PROXY: "${HTTP_PROXY:-}", API_KEY: "${DOCS_API_KEY}" },
      cwd: "/srv/docs"
    })
    expect(servers["docs"]!.notes).toHaveLength(2)
    expect(servers["figma"]!.entry).toEqual({
      url: "https://mcp.figma.com/mcp",
      headers: { "X-Figma-Region": "us-east-1", "X-Org-Id": "${FIGMA_ORG_ID}", Authorization: "Bearer ${FIGMA_OAUTH_TOKEN}" }
    })
    expect(servers["figma"]!.notes).toEqual([expect.stringContaining("enabled_tools")])
  })

  it("server.json: each package a command, each remote an HTTP server; the first package is the plain name", () => {
    const file = parsed(fixture("server.json"), "/src/weather/server.json")
    expect(file.format).toBe("server-json")
    expect(file.servers.map((server) => server.name)).toEqual([
      "weather",
      "weather:package:1",
      "weather:package:2",
      "weather:package:3",
      "weather:remote:1"
    ])
    const servers = byName(file)
    expect(servers["weather"]!.entry).toEqual({
      command: "npx",
      args: ["-y", "@example/weather-mcp@1.2.0", "--units", "metric", "${input:config_path}"],
      env: { WEATHER_API_KEY: "${WEATHER_API_KEY}", WEATHER_LOG: "${WEATHER_LOG:-warn}" }
    })
    expect(servers["weather:package:2"]!.entry).toEqual({ command: "uvx", args: ["weather-mcp==1.2.0"] })
    expect(servers["weather:package:3"]!.entry).toEqual({
      command: "docker",
      args: ["run", "-i", "--rm", "-e", "WEATHER_API_KEY", "ghcr.io/example/weather:1.2.0"],
      env: { WEATHER_API_KEY: "${WEATHER_API_KEY}" }
    })
    expect(servers["weather:remote:1"]!.entry).toEqual({
      url: "https://eu.weather.example.com/mcp",
      type: "streamable-http",
      headers: { Authorization: "${input:Authorization}" }
    })
    expect(file.inputs).toEqual([
      { id: "config_path", description: undefined, password: false },
      { id: "Authorization", description: "Bearer token", password: true }
    ])
  })

  it("the plain mcpServers file stays strict: an unknown field of an entry is refused, naming the server", () => {
    const error = refusal(JSON.stringify({ mcpServers: { svc: { url: "https://x", token: "SECRET-1" } } }), "/p/servers.json")
    expect(error).toMatchObject({ _tag: "ConfigFileError", path: "/p/servers.json", format: "mcp-servers", reason: "invalid-value", at: "svc" })
    expect(JSON.stringify(error) + error.message).not.toContain("SECRET-1")
  })
})

describe("detection", () => {
  it.each([
    ["/p/.vscode/mcp.json", "vscode"],
    ["/home/me/.config/Code/User/mcp.json", "vscode"],
    ["/p/.cursor/mcp.json", "cursor"],
    ["/p/.mcp.json", "claude-code"],
    ["/home/me/.claude.json", "claude-code"],
    ["/x/claude_desktop_config.json", "claude-desktop"],
    ["/home/me/.codeium/windsurf/mcp_config.json", "windsurf"],
    ["/home/me/.codex/config.toml", "codex"],
    ["/src/server.json", "server-json"],
    ["/x/settings.json", "vscode-settings"],
    ["/x/mcp.json", undefined],
    ["/x/other.json", undefined]
  ])("by name: %s is %s", (path, format) => {
    expect(ConfigImport.formatOfName(path)).toBe(format)
  })

  it("by content when the name says nothing; --format overrides both", () => {
    expect(parsed(JSON.stringify({ servers: {} }), "/x/a.json").format).toBe("vscode")
    expect(parsed(JSON.stringify({ mcpServers: {} }), "/x/a.json").format).toBe("mcp-servers")
    expect(parsed(fixture("server.json"), "/x/a.json").format).toBe("server-json")
    expect(parsed(JSON.stringify({ mcp: { servers: {} } }), "/x/a.json").format).toBe("vscode-settings")
    expect(parsed(JSON.stringify({ mcpServers: { a: { serverUrl: "https://x" } } }), "/x/a.json", { format: "windsurf" }).servers).toHaveLength(1)
    expect(refusal(JSON.stringify({ theme: "dark" }), "/x/a.json")).toMatchObject({ reason: "unknown-format", path: "/x/a.json" })
    expect(refusal(JSON.stringify({ servers: {} }), "/x/a.json", { format: "codex" })).toMatchObject({ reason: "invalid-syntax", format: "codex" })
  })
})

describe("the search order", () => {
  it("the project's files, then the user's, per platform", () => {
    const path = Effect.runSync(Effect.provide(Path.Path, NodePath.layer))
    const linux = ConfigImport.searchOrder(path, { cwd: "/p", env: { HOME: "/h" }, platform: "linux" }).map((c) => `${c.scope} ${c.format} ${c.path}`)
    expect(linux).toEqual([
      "project claude-code /p/.mcp.json",
      "project vscode /p/.vscode/mcp.json",
      "project cursor /p/.cursor/mcp.json",
      "project codex /p/.codex/config.toml",
      "user claude-code /h/.claude.json",
      "user vscode /h/.config/Code/User/mcp.json",
      "user cursor /h/.cursor/mcp.json",
      "user claude-desktop /h/.config/Claude/claude_desktop_config.json",
      "user windsurf /h/.codeium/windsurf/mcp_config.json",
      "user codex /h/.codex/config.toml"
    ])
    const mac = ConfigImport.searchOrder(path, { cwd: "/p", env: { HOME: "/h", CODEX_HOME: "/c" }, platform: "darwin" }).map((c) => c.path)
    expect(mac).toContain("/h/Library/Application Support/Claude/claude_desktop_config.json")
    expect(mac).toContain("/h/Library/Application Support/Code/User/mcp.json")
    expect(mac).toContain("/c/config.toml")
    expect(ConfigImport.searchOrder(path, { cwd: "/p", env: {}, platform: "linux" })).toHaveLength(4)
  })

  it.effect("discover reads the files that exist, the first definition of a name wins, a refused file is reported", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "phasebound-discover-"))
      try {
        const project = join(root, "project")
        const home = join(root, "home")
        mkdirSync(join(project, ".vscode"), { recursive: true })
        mkdirSync(join(home, ".cursor"), { recursive: true })
        writeFileSync(join(project, ".mcp.json"), JSON.stringify({ mcpServers: { a: { command: "project-a" } } }))
        writeFileSync(join(project, ".vscode", "mcp.json"), "{ \"servers\": { \"a\": { \"command\": \"vscode-a\" }, \"b\": { \"command\": \"vscode-b\" } } }")
        writeFileSync(join(home, ".cursor", "mcp.json"), "{ not json SECRET-2")
        const found = yield* ConfigImport.discover({ cwd: project, env: { HOME: home }, platform: "linux" })
        expect(found.files.map((file) => [file.format, file.scope])).toEqual([["claude-code", "project"], ["vscode", "project"]])
        expect(ConfigImport.serversOf(found.files).map((server) => [server.name, (server.entry as ServersFile.StdioServer).command])).toEqual([
          ["a", "project-a"],
          ["b", "vscode-b"]
        ])
        expect(found.refused).toHaveLength(1)
        expect(found.refused[0]).toMatchObject({ path: join(home, ".cursor", "mcp.json"), format: "cursor", reason: "invalid-syntax" })
        expect(JSON.stringify(found.refused)).not.toContain("SECRET-2")
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(platform)))
})

describe("hostile files", () => {
  const secret = "CANARY-config-7f3a"

  it.each([
    ["deep JSON", "[".repeat(5000), "too-deep"],
    ["deep JSON hidden after a comment's quote", "// \"\n{\"mcpServers\":" + "[".repeat(5000), "too-deep"],
    ["many nodes", `{"mcpServers":{}, "x":[${"0,".repeat(200_000)}0]}`, "too-many-nodes"],
    ["a __proto__ key", `{"mcpServers":{"__proto__":{"command":"${secret}"}}}`, "forbidden-key"],
    ["a __proto__ key written with an escape", `{"mcpServers":{"\\u005f_proto__":{"command":"${secret}"}}}`, "forbidden-key"],
    ["a wrong type", `{"mcpServers":{"a":{"command":"node","args":"${secret}"}}}`, "invalid-value"],
    ["servers not an object", `{"mcpServers":["${secret}"]}`, "invalid-value"],
    ["a control character in a name", `{"mcpServers":{"a\\u001b[2J":{"command":"x"}}}`, "invalid-name"],
    ["not JSON", `{ "mcpServers": ${secret}`, "invalid-syntax"]
  ])("JSON: %s is refused, nothing of it echoed", (_, text, reason) => {
    const error = refusal(text, "/p/.mcp.json")
    expect(error).toMatchObject({ _tag: "ConfigFileError", path: "/p/.mcp.json", reason })
    expect(JSON.stringify(error) + error.message + String(error)).not.toContain(secret)
    expect(({} as Record<string, unknown>)["command"]).toBeUndefined()
  })

  it.each([
    ["a deep dotted key", `[mcp_servers.a]\ncommand = "x"\n[${"t.".repeat(10_000)}t]\nv = 1`, "too-deep"],
    ["deep inline arrays", `x = ${"[".repeat(2000)}${"]".repeat(2000)}`, "invalid-syntax"],
    ["a __proto__ table", `[mcp_servers.__proto__]\ncommand = "${secret}"`, "forbidden-key"],
    ["a wrong type", `[mcp_servers.a]\ncommand = "x"\nargs = "${secret}"`, "invalid-value"],
    ["url and command at once", `[mcp_servers.a]\ncommand = "x"\nurl = "https://${secret}"`, "invalid-value"],
    ["a bad variable name", `[mcp_servers.a]\nurl = "https://x"\nbearer_token_env_var = "A-${secret}"`, "invalid-value"],
    ["not TOML", `[mcp_servers.a\ncommand = "${secret}"`, "invalid-syntax"]
  ])("TOML: %s is refused, nothing of it echoed", (_, text, reason) => {
    const error = refusal(text, "/h/.codex/config.toml")
    expect(error).toMatchObject({ path: "/h/.codex/config.toml", format: "codex", reason })
    expect(JSON.stringify(error) + error.message).not.toContain(secret)
  })

  it.effect("by path: a missing file, a huge one, a world-writable one, a directory; a symlink is followed", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "phasebound-hostile-"))
      try {
        const missing = yield* Effect.flip(ConfigImport.read(join(root, "absent.json")))
        expect(missing).toMatchObject({ reason: "not-found" })
        const huge = join(root, ".mcp.json")
        writeFileSync(huge, `{"mcpServers":{}, "pad": "${"x".repeat(ServersFile.maxFileBytes)}"}`)
        expect(yield* Effect.flip(ConfigImport.read(huge))).toMatchObject({ reason: "too-large", format: "claude-code", path: huge })
        const shared = join(root, "shared.json")
        writeFileSync(shared, JSON.stringify({ mcpServers: { a: { command: "x" } } }))
        chmodSync(shared, 0o666)
        expect(yield* Effect.flip(ConfigImport.read(shared))).toMatchObject({ reason: "world-writable" })
        chmodSync(shared, 0o644)
        expect((yield* ConfigImport.read(shared)).servers).toHaveLength(1)
        const link = join(root, "link.json")
        symlinkSync(shared, link)
        expect((yield* ConfigImport.read(link)).servers).toHaveLength(1)
        expect(yield* Effect.flip(ConfigImport.read(root))).toMatchObject({ reason: "unreadable" })
        const latin1 = join(root, "bad.json")
        writeFileSync(latin1, Buffer.from([0x7b, 0xff, 0x7d]))
        expect(yield* Effect.flip(ConfigImport.read(latin1))).toMatchObject({ reason: "invalid-syntax" })
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(platform)))
})
