/**
 * ConfigImport (docs/DESIGN.md, "Config files"): each format's reader over a realistic fixture
 * (packages/client/test/support/configFiles), the fields other clients write (read past with a
 * note, mapped, or refused when ignoring them could change what happens), tool filters as the
 * catalog's exact-name patterns, detection by name and content, the search order and what a
 * definition shadows, an entry's expansion under one budget, Claude Code's large user file read
 * by extraction, and hostile files (huge, deep, `__proto__`, wrong types, world-writable): each a
 * typed refusal naming the path and a reason, never the file's content.
 */
import { Path } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Layer } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ConfigImport, ServersFile } from "../../src/index.js"
import * as Glob from "../../src/internal/catalog/glob.js"
import { exactToolPatterns } from "../../src/internal/configFormats/model.js"
import { extractJsonc } from "../../src/internal/configFormats/text.js"

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

  it("Windsurf: serverUrl is the URL, a disabled server is left out (and said so), disabledTools the catalog's block list", () => {
    const file = parsed(fixture("mcp_config.json"), "/home/me/.codeium/windsurf/mcp_config.json")
    expect(file.format).toBe("windsurf")
    expect(file.servers.map((server) => server.name)).toEqual(["remote", "github"])
    expect(file.skipped).toEqual([{ name: "off", note: "disabled: left out" }])
    expect(byName(file)["remote"]!.entry).toEqual({ url: "https://mcp.example.com/mcp", headers: { "X-Api-Key": "${EXAMPLE_KEY}" } })
    expect(byName(file)["github"]!.entry).toMatchObject({ blockTools: ["delete_repo", "admin_\\*"] })
    expect(byName(file)["github"]!.notes).toEqual([])
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
      headers: { "X-Figma-Region": "us-east-1", "X-Org-Id": "${FIGMA_ORG_ID}", Authorization: "Bearer ${FIGMA_OAUTH_TOKEN}" },
      allowTools: ["get_file"]
    })
    expect(servers["figma"]!.notes).toEqual([])
    expect(file.skipped).toEqual([{ name: "retired", note: "enabled = false: left out" }])
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

describe("fields other clients write", () => {
  const secret = "CANARY-field-51d0"

  it("VS Code gallery installs: gallery (true or a URL) and version are read past, each noted by name", () => {
    for (const gallery of [true, "https://api.mcp.github.com/v0/servers/abc"]) {
      const file = parsed(
        JSON.stringify({ servers: { github: { type: "http", url: "https://api.githubcopilot.com/mcp/", gallery, version: "0.13.0" } } }),
        "/home/me/.config/Code/User/mcp.json"
      )
      expect(byName(file)["github"]!.entry).toEqual({ url: "https://api.githubcopilot.com/mcp/" })
      expect(byName(file)["github"]!.notes).toEqual([expect.stringContaining("gallery"), expect.stringContaining("version")])
    }
  })

  it("disabled: true leaves the server out, listed with why; it shadows nothing; a disabled that is not a boolean is refused", () => {
    const desktop = parsed(
      JSON.stringify({ mcpServers: { on: { command: "a" }, off: { command: "b", disabled: true }, explicit: { command: "c", disabled: false } } }),
      "/x/claude_desktop_config.json"
    )
    expect(desktop.servers.map((server) => server.name)).toEqual(["on", "explicit"])
    expect(desktop.skipped).toEqual([{ name: "off", note: "disabled: left out" }])
    const user = parsed(JSON.stringify({ mcpServers: { off: { command: "user-version" } } }), "/h/.cursor/mcp.json")
    expect(ConfigImport.serversOf([desktop, user]).find((server) => server.name === "off")?.file.path).toBe("/h/.cursor/mcp.json")
    expect(refusal(JSON.stringify({ mcpServers: { a: { command: "x", disabled: "yes" } } }), "/x/claude_desktop_config.json")).toMatchObject({
      reason: "invalid-value",
      at: "a.disabled"
    })
  })

  it("Claude Code's oauth is auth.clientId and auth.redirectPort; any other key of it is refused", () => {
    const file = parsed(
      JSON.stringify({
        mcpServers: { notion: { type: "http", url: "https://mcp.notion.com/mcp", oauth: { clientId: "pre-registered", callbackPort: 8765 } } }
      }),
      "/p/.mcp.json"
    )
    expect(byName(file)["notion"]!.entry).toEqual({
      type: "http",
      url: "https://mcp.notion.com/mcp",
      auth: { clientId: "pre-registered", redirectPort: 8765 }
    })
    for (const oauth of [{ clientId: "a", authServerMetadataUrl: `https://${secret}` }, `${secret}`, { clientId: "a" }]) {
      const auth = typeof oauth === "object" && !("authServerMetadataUrl" in oauth) ? { clientId: "another" } : undefined
      const error = refusal(JSON.stringify({ mcpServers: { notion: { url: "https://x", oauth, ...(auth === undefined ? {} : { auth }) } } }), "/p/.mcp.json")
      expect(error).toMatchObject({ reason: "invalid-value", at: "notion.oauth" })
      expect(JSON.stringify(error) + error.message).not.toContain(secret)
    }
  })

  it("an unknown field is read past with a note naming it, unless its name says ignoring it could change what happens", () => {
    const file = parsed(JSON.stringify({ mcpServers: { a: { command: "x", icon: "data:...", timeout: 30 } } }), "/x/claude_desktop_config.json")
    expect(byName(file)["a"]!.notes).toEqual(["icon is not read (unknown to phasebound)", "timeout is not read (unknown to phasebound)"])
    for (const field of ["toolFilter", "excludeTools", "proxy", "caCertificate", "headersFile", "apiKey", "workingDirectory", "transportOptions", "sandbox"]) {
      for (const path of ["/x/claude_desktop_config.json", "/p/.vscode/mcp.json", "/p/.mcp.json", "/h/.cursor/mcp.json"]) {
        const top = path.endsWith(".vscode/mcp.json") ? "servers" : "mcpServers"
        const error = refusal(JSON.stringify({ [top]: { a: { command: "x", [field]: secret } } }), path)
        expect(error, `${field} in ${path}`).toMatchObject({ reason: "invalid-value", at: `a.${field}` })
        expect(JSON.stringify(error) + error.message).not.toContain(secret)
      }
    }
    // A field name that is not a plain identifier is neither shown nor read past.
    expect(refusal(JSON.stringify({ mcpServers: { a: { command: "x", [`x ${secret}`]: 1 } } }), "/x/claude_desktop_config.json")).toMatchObject({ at: "a" })
  })

  it("phasebound's own mcpServers file stays strict: gallery, disabled or a note-worthy field refuses it", () => {
    for (const extra of [{ gallery: true }, { disabled: true }, { icon: "x" }]) {
      expect(refusal(JSON.stringify({ mcpServers: { a: { command: "x", ...extra } } }), "/p/servers.json")).toMatchObject({ format: "mcp-servers", at: "a" })
    }
  })

  it("Codex: allow_tools, block_tools and prefix are the catalog's; enabled_tools with allow_tools refused; unknown keys noted or refused", () => {
    const file = parsed(
      `[mcp_servers.gh]
url = "https://api.githubcopilot.com/mcp/"
prefix = "github"
allow_tools = ["get_*", "list_*"]
block_tools = ["*_admin"]
disabled_tools = ["get_secret"]
label = "mine"
`,
      "/h/.codex/config.toml"
    )
    expect(byName(file)["gh"]!.entry).toEqual({
      url: "https://api.githubcopilot.com/mcp/",
      prefix: "github",
      allowTools: ["get_*", "list_*"],
      blockTools: ["*_admin", "get_secret"]
    })
    expect(byName(file)["gh"]!.notes).toEqual(["label is not read (unknown to phasebound)"])
    expect(ServersFile.catalogRulesOf({ mcpServers: { gh: byName(file)["gh"]!.entry } })).toEqual({
      gh: { prefix: "github", allowTools: ["get_*", "list_*"], blockTools: ["*_admin", "get_secret"] }
    })
    for (
      const [text, at] of [
        [
          `[mcp_servers.gh]
url = "https://x"
enabled_tools = ["a"]
allow_tools = ["b*"]`,
          "gh.allow_tools"
        ],
        [
          `[mcp_servers.gh]
url = "https://x"
disabled_tools = "${secret}"`,
          "gh.disabled_tools"
        ],
        [
          `[mcp_servers.gh]
url = "https://x"
proxy_url = "${secret}"`,
          "gh.proxy_url"
        ],
        [
          `[mcp_servers.gh]
url = "https://x"
allowTools = ["${secret}"]`,
          "gh.allowTools"
        ]
      ] as const
    ) {
      const error = refusal(text, "/h/.codex/config.toml")
      expect(error, text).toMatchObject({ reason: "invalid-value", at })
      expect(JSON.stringify(error) + error.message).not.toContain(secret)
    }
  })
})

describe("tool names as the catalog's patterns", () => {
  const metacharacters = fc.string({ unit: fc.constantFrom("*", "?", "[", "]", "\\", "!", "^", "-", "a", "b", "_", ".", "é"), minLength: 1, maxLength: 128 })

  it.prop("an escaped name compiles, matches that name and no other", [metacharacters, metacharacters], ([name, other]) => {
    const [pattern] = exactToolPatterns([name])
    const glob = Glob.compile(pattern!)
    expect(glob).toBeDefined()
    expect(Glob.matches(glob!, name)).toBe(true)
    if (other !== name) expect(Glob.matches(glob!, other)).toBe(false)
  })

  it("names no tool can have are left out", () => {
    expect(exactToolPatterns(["", "x".repeat(129), "ok"])).toEqual(["ok"])
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

describe("what a server is, and what it shadows", () => {
  it("the first definition wins; the later ones of the same name are its shadowed, in order; the variables it references are named", () => {
    const project = parsed(
      JSON.stringify({ mcpServers: { github: { url: "https://evil.example/mcp", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } } } }),
      "/p/.mcp.json",
      { scope: "project" }
    )
    const user = parsed(fixture("claude.json"), "/home/me/.claude.json", { scope: "user", cwd: "/home/me/project" })
    const mine = parsed(JSON.stringify({ mcpServers: { github: { url: "https://api.githubcopilot.com/mcp/" } } }), "/h/.cursor/mcp.json", { scope: "user" })
    const found = ConfigImport.serversOf([project, user, mine])
    expect(found.map((server) => [server.name, server.shadowed.map((shadowed) => [shadowed.file.path, shadowed.scope])])).toEqual([
      ["github", [["/h/.cursor/mcp.json", "user"]]],
      ["shared", [["/home/me/.claude.json", "user"]]],
      ["notion", []]
    ])
    expect(ConfigImport.variablesOf(found[0]!)).toEqual(["GITHUB_TOKEN"])
    expect(ConfigImport.variablesOf({ entry: { command: "${A}", args: ["${B:-x}", "${input:i}", "${A}"], env: { K: "${env:C}" } } })).toEqual(["A", "B", "C"])
  })
})

describe("an entry's expansion", () => {
  const values: ConfigImport.Values = {
    env: (name) => (name === "PATH" ? "/usr/local/bin:".repeat(8) : name === "T" ? "tok" : undefined),
    inputs: () => undefined,
    home: "/h"
  }

  it("every value resolved in one pass: command, args, env, cwd; url, headers, a client secret", () => {
    expect(ConfigImport.expandEntry({ command: "${T}", args: ["a${T}"], env: { K: "${T}" }, cwd: "${userHome}" }, { workspaceFolder: "/w" }, values)).toEqual(
      Either.right({ command: "tok", args: ["atok"], env: { K: "tok" }, cwd: "/h" })
    )
    expect(
      ConfigImport.expandEntry(
        { url: "https://x/${T}", headers: { A: "${T}" }, auth: { clientSecret: "${T}", clientId: "c" } },
        { workspaceFolder: "/w" },
        values
      )
    ).toEqual(Either.right({ url: "https://x/tok", headers: { A: "tok" }, auth: { clientSecret: "tok", clientId: "c" } }))
    expect(ConfigImport.expandEntry({ command: "x", env: { K: "${UNSET}" } }, { workspaceFolder: "/w" }, values)).toEqual(
      Either.left({ field: "env", problem: { kind: "variable", name: "UNSET" } })
    )
  })

  it("bounded in total, not only per value: 100,000 arguments of ${PATH} are refused, not built", () => {
    const args = Array.from({ length: 100_000 }, () => "${PATH}")
    expect(ConfigImport.expandEntry({ command: "x", args }, { workspaceFolder: "/w" }, values)).toEqual(Either.left({ field: "args", problem: "too-large" }))
    // Each value alone is far below the per-value bound; what fits in the entry's budget passes.
    expect(Either.isRight(ConfigImport.expandEntry({ command: "x", args: args.slice(0, 1_000) }, { workspaceFolder: "/w" }, values))).toBe(true)
  })

  it("its secrets: the value of every variable and input it references, each once, wherever it is; an unset one and the directories are none", () => {
    const secrets = { env: values.env, inputs: (id: string) => (id === "key" ? "input-value" : undefined) }
    expect(
      ConfigImport.secretsOf(
        { entry: { command: "${T}", args: ["--key=${input:key}", "${UNSET:-default}", "${userHome}", "${workspaceFolder}"], env: { K: "${T}" } } },
        secrets
      )
    ).toEqual(["tok", "input-value"])
    expect(
      ConfigImport.secretsOf({ entry: { url: "https://x/${T}", headers: { A: "key-${input:key}" }, auth: { clientSecret: "${input:missing}" } } }, secrets)
    )
      .toEqual(["tok", "input-value"])
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
    // Claude Code keeps its user file in CLAUDE_CONFIG_DIR when that is set.
    const relocated = ConfigImport.searchOrder(path, { cwd: "/p", env: { HOME: "/h", CLAUDE_CONFIG_DIR: "/c/claude" }, platform: "linux" })
    expect(relocated.filter((c) => c.format === "claude-code").map((c) => c.path)).toEqual(["/p/.mcp.json", "/c/claude/.claude.json"])
  })

  it("a file is shown relative to the project or the home directory, else by its name alone", () => {
    expect(ConfigImport.shownPath("/p/.vscode/mcp.json", { cwd: "/p", home: "/h" })).toBe(".vscode/mcp.json")
    expect(ConfigImport.shownPath("/h/.claude.json", { cwd: "/p", home: "/h" })).toBe("~/.claude.json")
    expect(ConfigImport.shownPath("/srv/me/codex/config.toml", { cwd: "/p", home: "/h" })).toBe("config.toml")
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

describe("Claude Code's ~/.claude.json: large, read by extraction", () => {
  const secret = "CANARY-history-c0de"
  const cwd = "/home/me/project"
  const history = (entries: number) =>
    Array.from({ length: entries }, (_, i) => ({ display: `${secret} ${i}`, pastedContents: { __proto__x: [i, { deep: [[[]]] }] } }))
  const userFile = (extra: Record<string, unknown>) =>
    JSON.stringify({
      numStartups: 7,
      history: history(150_000),
      projects: { [cwd]: { history: history(10), mcpServers: { mine: { command: "local-version" } } }, "/other": { mcpServers: { no: { command: "x" } } } },
      mcpServers: { notion: { type: "http", url: "https://mcp.notion.com/mcp" } },
      ...extra
    })

  it("past 1 MiB and 100,000 values: only the servers are built, the local scope first", () => {
    const text = userFile({})
    expect(text.length).toBeGreaterThan(ServersFile.maxFileBytes * 8)
    const file = parsed(text, "/home/me/.claude.json", { scope: "user", cwd })
    expect(file.servers.map((server) => [server.name, server.scope])).toEqual([["mine", "local"], ["notion", "user"]])
    // The same text under another name is an ordinary file: bounded as every other.
    expect(refusal(text, "/p/.mcp.json")).toMatchObject({ reason: "too-large" })
  })

  it("what is not built may hold anything; what is built is bounded as ever", () => {
    const withProto = userFile({ other: JSON.parse(`{"__proto__": {"polluted": "${secret}"}}`) as unknown })
    expect(parsed(withProto.replace("\"other\":{", "\"other\":{\"__proto__\":1,"), "/h/.claude.json", { cwd }).servers).toHaveLength(2)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    const refusals = [
      [`{"mcpServers": {"__proto__": {"command": "${secret}"}}}`, "forbidden-key"],
      [`{"mcpServers": {"a": ${"[".repeat(40)}${"]".repeat(40)}}}`, "too-deep"],
      [`{"x": ${"[".repeat(2000)}${"]".repeat(2000)}, "mcpServers": {}}`, "too-deep"],
      [`{"mcpServers": {}, "x": [1 2]}`, "invalid-syntax"],
      [`{"mcpServers": {}} {}`, "invalid-syntax"],
      [`{"mcpServers": {"a": {"command": "${secret}"}`, "invalid-syntax"]
    ] as const
    for (const [text, reason] of refusals) {
      const error = refusal(text, "/h/.claude.json", { cwd })
      expect(error, text.slice(0, 40)).toMatchObject({ reason, format: "claude-code" })
      expect(JSON.stringify(error) + error.message).not.toContain(secret)
    }
  })

  it.prop(
    "the extraction agrees with JSON.parse on the members it keeps, wherever they are and whatever surrounds them",
    [fc.jsonValue({ maxDepth: 4 }), fc.jsonValue({ maxDepth: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })],
    ([servers, local, noise]) => {
      const document = { ...noise, mcpServers: servers, projects: { ...noise, [cwd]: { ...noise, mcpServers: local } } }
      const text = JSON.stringify(document, null, 1)
      const extracted = extractJsonc(text, [["mcpServers"], ["projects", cwd, "mcpServers"]])
      if (extracted._tag === "Refused") {
        // Only the bounds of what is built may refuse: a key __proto__, depth or size.
        expect(["forbidden-key", "too-deep", "too-many-nodes"]).toContain(extracted.problem)
        return
      }
      const reference = JSON.parse(text) as { mcpServers: unknown; projects: Record<string, { mcpServers: unknown }> }
      expect(extracted.values.get(0)).toEqual(reference.mcpServers)
      expect(extracted.values.get(1)).toEqual(reference.projects[cwd]!.mcpServers)
      expect([...extracted.keys].sort()).toEqual(Object.keys(reference).sort())
    }
  )

  /** An object written as text, its keys drawn from a few (so that some repeat: JSON.parse keeps the last). */
  const objectText = (member: fc.Arbitrary<string>) =>
    fc.array(fc.tuple(fc.constantFrom("mcpServers", "projects", cwd, "x"), member), { maxLength: 5 }).map((pairs) =>
      `{${pairs.map(([key, value]) => `${JSON.stringify(key)}: ${value}`).join(", ")}}`
    )
  const leaf = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value))
  const documentText = objectText(fc.oneof(leaf, objectText(fc.oneof(leaf, objectText(leaf)))))

  it.prop("with members written twice (or their ancestors), the last one counts, as JSON.parse reads it", [documentText], ([text]) => {
    const extracted = extractJsonc(text, [["mcpServers"], ["projects", cwd, "mcpServers"]])
    if (extracted._tag === "Refused") {
      expect(["forbidden-key", "too-deep", "too-many-nodes"]).toContain(extracted.problem)
      return
    }
    const reference = JSON.parse(text) as Record<string, unknown>
    const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
    const projects = reference["projects"]
    const local = isObject(projects) && isObject(projects[cwd]) ? projects[cwd]["mcpServers"] : undefined
    expect(extracted.values.get(0)).toEqual(Object.hasOwn(reference, "mcpServers") ? reference["mcpServers"] : undefined)
    expect(extracted.values.get(1)).toEqual(local)
  })

  it.prop("any text: a value or a typed refusal, never a throw", [
    fc.string({ unit: fc.constantFrom("{", "}", "[", "]", ",", ":", "\"", "a", "1", " ", "/", "*", "\n", "mcpServers"), maxLength: 80 })
  ], ([text]) => {
    const extracted = extractJsonc(text, [["mcpServers"]])
    expect(["Extracted", "Refused"]).toContain(extracted._tag)
  })

  it.effect("by path: up to 64 MiB is read; past it refused before a byte is read", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "phasebound-claude-"))
      try {
        const file = join(root, ".claude.json")
        writeFileSync(file, userFile({}))
        expect((yield* ConfigImport.read(file, { scope: "user", cwd })).servers).toHaveLength(2)
        // A sparse file: its size says 64 MiB + 1 without writing them.
        truncateSync(file, ConfigImport.maxClaudeUserFileBytes + 1)
        expect(yield* Effect.flip(ConfigImport.read(file, { scope: "user", cwd }))).toMatchObject({ reason: "too-large", scope: "user", path: file })
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
