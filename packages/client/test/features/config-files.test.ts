/**
 * Config files of other formats end to end (docs/DESIGN.md, "Config files"): `McpServers.layerFile`
 * over a VS Code `mcp.json` (an HTTP server on loopback, its header from a password input) and
 * a Codex `config.toml` (a real child process, its environment from `${VAR}` and
 * `bearer_token_env_var`; its `disabled_tools` a block rule the catalog enforces before anything
 * is sent), and `layerDiscovered` over the search order (a server resolved on first use, so one
 * missing input fails that server alone; a refused file named by scope, format and place). The
 * values of an entry's `${VAR}`s and inputs are secrets wherever they went (an argument, a URL's
 * path, part of a header value): a server quoting them back finds them redacted.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { ConfigProvider, Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Authorization, McpCatalog, McpConnectionError, McpServers } from "../../src/index.js"
import { server } from "../support/harness.js"

const TOKEN = "input-token-CANARY-5c2e"
const CHILD_SECRET = "child-secret-CANARY-93ab"

const commandExecutor = NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer))
const platform = Layer.mergeAll(FetchHttpClient.layer, commandExecutor, NodeFileSystem.layer, NodePath.layer, Authorization.layerDefaults)

const buildIn = <A, E>(layer: Layer.Layer<A, E, never>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope)
    return { context, release: Scope.close(scope, Exit.void) }
  })

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "phasebound-config-files-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const write = (dir: string, name: string, text: string) => {
  const file = join(dir, name)
  mkdirSync(join(file, ".."), { recursive: true })
  writeFileSync(file, text)
  return file
}

const authorizationOf = (srv: Testkit.TestServer, method: string) => srv.requests.find((r) => r.rpcMethod === method)?.headers["authorization"]

/** A TOML basic string: JSON's escapes are TOML's. */
const toml = (value: string) => JSON.stringify(value)

describe.concurrent("config files of other formats", () => {
  it.scopedLive("VS Code mcp.json over HTTP: JSONC, the header from a password input (PHASEBOUND_INPUT_<ID>)", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const dir = yield* tempDir
      const file = write(
        dir,
        ".vscode/mcp.json",
        `{
          // the workspace's servers
          "inputs": [{ "type": "promptString", "id": "api-token", "description": "Token", "password": true }],
          "servers": {
            "remote": { "type": "http", "url": ${JSON.stringify(srv.url)}, "headers": { "Authorization": "Bearer \${input:api-token}" } },
          },
        }`
      )
      const provider = ConfigProvider.fromMap(new Map([["PHASEBOUND_INPUT_API_TOKEN", TOKEN]]))
      const built = yield* buildIn(McpServers.layerFile(file).pipe(Layer.provide(platform))).pipe(Effect.withConfigProvider(provider))
      const servers = Context.get(built.context, McpServers.McpServers)
      const result = yield* servers.callTool("remote", "add", { a: 1, b: 2 })
      expect(result.content[0]).toMatchObject({ type: "text", text: "3" })
      expect(authorizationOf(srv, "tools/call")).toBe(`Bearer ${TOKEN}`)
      yield* built.release

      // Without the input: the file is read, the server refused at its first use, before any
      // I/O, naming the input, never a value.
      const before = srv.requests.length
      const without = yield* buildIn(McpServers.layerFile(file).pipe(Layer.provide(platform))).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
      )
      const error = yield* Effect.flip(Context.get(without.context, McpServers.McpServers).connection("remote"))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "inputs.api-token" })
      expect(JSON.stringify(error) + String(error)).not.toContain(file)
      expect(srv.requests.length).toBe(before)
      yield* without.release
    }))

  it.scopedLive("Codex config.toml over stdio: a real child given ${VAR} from the ConfigProvider; an HTTP table's bearer_token_env_var", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const dir = yield* tempDir
      const report = join(dir, "env.json")
      const f = yield* Effect.acquireRelease(
        Effect.sync(() => Testkit.makeStdioFixture({ envReport: { file: report, names: ["CHILD_SECRET", "FALLBACK"] } })),
        (f) => Effect.sync(() => f.cleanup())
      )
      const env = Object.entries({ ...f.env, CHILD_SECRET: "${CODEX_CHILD_SECRET}", FALLBACK: "${UNSET_IN_TEST:-fallback}" })
        .map(([name, value]) => `${toml(name)} = ${toml(value)}`)
        .join("\n")
      const file = write(
        dir,
        "codex/config.toml",
        `# Codex's own settings first.
model = "gpt-5"

[mcp_servers.local]
command = ${toml(f.command)}
args = [${f.args.map(toml).join(", ")}]
startup_timeout_sec = 20

[mcp_servers.local.env]
${env}

[mcp_servers.remote]
url = ${toml(srv.url)}
bearer_token_env_var = "REMOTE_TOKEN"

[mcp_servers.off]
command = "never-started"
enabled = false
`
      )
      const provider = ConfigProvider.fromMap(new Map([["CODEX_CHILD_SECRET", CHILD_SECRET], ["REMOTE_TOKEN", TOKEN]]))
      const built = yield* buildIn(McpServers.layerFile(file).pipe(Layer.provide(platform))).pipe(Effect.withConfigProvider(provider))
      const servers = Context.get(built.context, McpServers.McpServers)
      expect(servers.names).toEqual(["local", "remote"])
      const local = yield* servers.connection("local")
      expect(local.transport).toBe("stdio")
      yield* servers.callTool("local", "add", { a: 2, b: 2 })
      expect(Testkit.readEnvReport(report)).toEqual({ CHILD_SECRET, FALLBACK: "fallback" })
      yield* servers.callTool("remote", "add", { a: 1, b: 1 })
      expect(authorizationOf(srv, "tools/call")).toBe(`Bearer ${TOKEN}`)
      yield* built.release
      expect(f.isAlive()).toBe(false)
    }))

  it.scopedLive("layerDiscovered: the project's .mcp.json before the user's Cursor file; a broken file found is InvalidOption file", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const root = yield* tempDir
      const project = join(root, "project")
      const home = join(root, "home")
      write(project, ".mcp.json", JSON.stringify({ mcpServers: { remote: { url: srv.url, type: "http" } } }))
      write(home, ".cursor/mcp.json", JSON.stringify({ mcpServers: { remote: { url: "http://127.0.0.1:1/never" }, other: { command: "never" } } }))
      const built = yield* buildIn(McpServers.layerDiscovered({ cwd: project, env: { HOME: home }, platform: "linux" }).pipe(Layer.provide(platform)))
      const servers = Context.get(built.context, McpServers.McpServers)
      expect(servers.names).toEqual(["remote", "other"])
      yield* servers.callTool("remote", "add", { a: 1, b: 2 })
      expect(srv.requests.some((request) => request.rpcMethod === "tools/call")).toBe(true)
      yield* built.release
      write(home, ".codex/config.toml", "[mcp_servers.x\ncommand = 'y'")
      const error = yield* Effect.flip(McpServers.fromDiscovered({ cwd: project, env: { HOME: home }, platform: "linux" })).pipe(Effect.provide(platform))
      // Which file, by its scope, format and place under the home directory; never the machine's paths.
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "file user codex ~/.codex/config.toml", reason: "invalid-json" })
      expect(JSON.stringify(error) + String(error)).not.toContain(root)
      write(project, ".vscode/mcp.json", "{ \"servers\": { \"x\": { \"command\": 1 } } }")
      const inProject = yield* Effect.flip(McpServers.fromDiscovered({ cwd: project, env: { HOME: home }, platform: "linux" })).pipe(Effect.provide(platform))
      expect(inProject).toMatchObject({ option: "file project vscode .vscode/mcp.json", reason: "invalid-value" })
    }))

  it.scopedLive("layerDiscovered: a VS Code input nobody gave fails its own server at first use; an unrelated server still connects", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const root = yield* tempDir
      const project = join(root, "project")
      const home = join(root, "home")
      write(
        project,
        ".vscode/mcp.json",
        JSON.stringify({
          inputs: [{ type: "promptString", id: "tok", password: true }],
          servers: { needsInput: { url: srv.url, headers: { Authorization: "Bearer ${input:tok}" } } }
        })
      )
      write(home, ".cursor/mcp.json", JSON.stringify({ mcpServers: { unrelated: { url: srv.url } } }))
      const built = yield* buildIn(McpServers.layerDiscovered({ cwd: project, env: { HOME: home }, platform: "linux" }).pipe(Layer.provide(platform))).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
      )
      const servers = Context.get(built.context, McpServers.McpServers)
      expect(servers.names).toEqual(["needsInput", "unrelated"])
      const result = yield* servers.callTool("unrelated", "add", { a: 2, b: 3 })
      expect(result.content[0]).toMatchObject({ type: "text", text: "5" })
      const sent = srv.requests.length
      expect(yield* Effect.flip(servers.connection("needsInput"))).toMatchObject({ _tag: "InvalidOption", option: "inputs.tok" })
      expect(srv.requests.length).toBe(sent)
      yield* built.release
    }))

  it.scopedLive("Codex disabled_tools: a block rule for that exact name; through the catalog the tool is refused before anything is sent", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const dir = yield* tempDir
      const file = write(
        dir,
        "codex/config.toml",
        `[mcp_servers.remote]
url = ${toml(srv.url)}
# Exact names: "e*" blocks the tool named "e*", not "echo".
disabled_tools = ["increment", "e*"]
`
      )
      const built = yield* buildIn(Layer.provideMerge(McpCatalog.layer(), McpServers.layerFile(file)).pipe(Layer.provide(platform)))
      expect(Context.get(built.context, McpServers.McpServers).catalog).toEqual({ servers: { remote: { blockTools: ["increment", "e\\*"] } } })
      const catalog = Context.get(built.context, McpCatalog.McpCatalog)
      const error = yield* Effect.flip(catalog.callTool("remote__increment"))
      expect(error).toMatchObject({ _tag: "InvalidOption", option: "tool", reason: "tool-blocked" })
      // Nothing was sent for it: not even a connection was needed to refuse it.
      expect(srv.requests.filter((request) => request.rpcMethod === "tools/call")).toEqual([])
      const echoed = yield* catalog.callTool("remote__echo", { text: "still callable" })
      expect(echoed.isError).not.toBe(true)
      expect(srv.counter()).toBe(0)
      yield* built.release
    }))
})

describe.concurrent("the values a config entry references are secrets of its connection", () => {
  /** Every text of the error a caller could show: none may hold a canary. */
  const shown = (error: McpConnectionError.McpConnectionError) => JSON.stringify(error) + String(error) + JSON.stringify(McpConnectionError.toRecord(error))

  it.scopedLive("stdio: a ${VAR} and an input in the arguments of a real child, quoted back in a JSON-RPC error, are redacted from remoteMessage", () =>
    Effect.gen(function*() {
      const canaries = { variable: "CANARY-arg-variable-4d1e", input: "CANARY-arg-input-8b3f" }
      const dir = yield* tempDir
      // The child is told, by its arguments, to refuse every call quoting what it was started with.
      const child = Testkit.stdioServerCommand({
        faults: [{ kind: "jsonrpc-error", on: "tools/call", code: -32000, message: "refused, started with: --token ${PB_ARG_TOKEN} --key=${input:api-key}" }]
      })
      const file = write(dir, "mcp.json", JSON.stringify({ mcpServers: { local: { command: child.command, args: child.args } } }))
      const provider = ConfigProvider.fromMap(new Map([["PB_ARG_TOKEN", canaries.variable], ["PHASEBOUND_INPUT_API_KEY", canaries.input]]))
      const built = yield* buildIn(McpServers.layerFile(file).pipe(Layer.provide(platform))).pipe(Effect.withConfigProvider(provider))
      const error = yield* Effect.flip(Context.get(built.context, McpServers.McpServers).callTool("local", "add", { a: 1, b: 2 }))
      expect(error).toMatchObject({ _tag: "RemoteRefusal", server: "local", remoteMessage: "refused, started with: --token [redacted] --key=[redacted]" })
      for (const canary of Object.values(canaries)) expect(shown(error)).not.toContain(canary)
      yield* built.release
    }))

  it.scopedLive("HTTP: a ${VAR} in a short path segment and one inside a header value, quoted back in a JSON-RPC error, are redacted from remoteMessage", () =>
    Effect.gen(function*() {
      // A path segment this short is no secret by itself (a route name), nor the part of a header value after a prefix.
      const canaries = { tenant: "t-5e9a", key: "CANARY-hdr-key-2c7b" }
      const hostile = yield* Effect.acquireRelease(
        Effect.promise(() =>
          Testkit.startHostileServer({
            era: "stateless",
            // It refuses every call, quoting the tenant of its path and the key of its header.
            script: (request) =>
              request.method === "tools/call"
                ? Testkit.messageAnswer(
                  JSON.stringify({
                    jsonrpc: "2.0",
                    id: request.id,
                    error: {
                      code: -32000,
                      message: `no tenant ${request.path.split("/")[2]} for key ${String(request.headers["x-api-key"]).slice("key-".length)}`
                    }
                  }),
                  "json"
                )
                : "normal"
          })
        ),
        (server) => Effect.promise(() => server.close())
      )
      const dir = yield* tempDir
      const file = write(
        dir,
        "mcp.json",
        JSON.stringify({
          mcpServers: { remote: { type: "http", url: `${hostile.origin}/t/\${PB_TENANT}/mcp`, headers: { "X-Api-Key": "key-${PB_API_KEY}" } } }
        })
      )
      const provider = ConfigProvider.fromMap(new Map([["PB_TENANT", canaries.tenant], ["PB_API_KEY", canaries.key]]))
      const built = yield* buildIn(McpServers.layerFile(file).pipe(Layer.provide(platform))).pipe(Effect.withConfigProvider(provider))
      const error = yield* Effect.flip(Context.get(built.context, McpServers.McpServers).callTool("remote", "echo", {}))
      // The server was reached where the entry said, with the key it said.
      expect(hostile.requests.find((request) => request.method === "tools/call")).toMatchObject({
        path: `/t/${canaries.tenant}/mcp`,
        headers: { "x-api-key": `key-${canaries.key}` }
      })
      expect(error).toMatchObject({ _tag: "RemoteRefusal", server: "remote", remoteMessage: "no tenant [redacted] for key [redacted]" })
      for (const canary of Object.values(canaries)) expect(shown(error)).not.toContain(canary)
      yield* built.release
    }))
})
