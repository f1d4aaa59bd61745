/**
 * The Effect services (docs/DESIGN.md, "Services"): `McpConnection` (one connection as a layer,
 * from options or `Config` with `Redacted` secrets, and `secrets` given beside them) and
 * `McpServers` (named servers from options, `Config` or an `mcpServers` file: connected on first
 * use, one shared connection per server, released with the layer), against real loopback
 * servers and real child processes.
 */
import { FetchHttpClient, HttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import * as Testkit from "@phasebound/testkit"
import { Config, ConfigError, ConfigProvider, Context, Effect, Exit, Fiber, Layer, Redacted, Scope } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Authorization, McpConnection, McpServers } from "../../src/index.js"
import { eventually, failureOf, server } from "../support/harness.js"

const TOKEN = "svc-token-CANARY-41d7"

const commandExecutor = NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer))
const platform = Layer.mergeAll(FetchHttpClient.layer, commandExecutor, NodeFileSystem.layer, NodePath.layer, Authorization.layerDefaults)

const stdioFixture = Effect.acquireRelease(Effect.sync(() => Testkit.makeStdioFixture()), (f) => Effect.sync(() => f.cleanup()))

const initializes = (srv: Testkit.TestServer) => srv.requests.filter((r) => r.rpcMethod === "initialize").length
const authorizationOf = (srv: Testkit.TestServer, method: string) => srv.requests.find((r) => r.rpcMethod === method)?.headers["authorization"]

/** Builds `layer` in a scope of its own, so a test can release it and look at what is left. */
const buildIn = <A, E>(layer: Layer.Layer<A, E, never>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope)
    return { context, release: Scope.close(scope, Exit.void) }
  })

const tempFile = (content: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "phasebound-servers-"))
      const file = join(dir, "mcp.json")
      writeFileSync(file, content)
      return { dir, file }
    }),
    ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map(({ file }) => file))

describe.concurrent("McpConnection", () => {
  it.scopedLive("layerHttp: needs an HttpClient only; connects when built, serves the Tag, releases the session with the layer", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const options = { url: srv.url, headers: { authorization: Redacted.make(`Bearer ${TOKEN}`) } }
      const built = yield* buildIn(McpConnection.layerHttp(options).pipe(Layer.provide(FetchHttpClient.layer)))
      const connection = Context.get(built.context, McpConnection.McpConnection)
      const result = yield* connection.callTool("add", { a: 2, b: 3 })
      expect(result.content[0]).toMatchObject({ type: "text", text: "5" })
      expect(authorizationOf(srv, "tools/call")).toBe(`Bearer ${TOKEN}`)
      yield* built.release
      yield* eventually(() => srv.deletes() === 1)
    }))

  it.scopedLive("layerHttpConfig: the URL and a Redacted header from Config; a missing value fails with ConfigError before any I/O", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const config = {
        url: Config.string("MCP_URL"),
        headers: Config.all({ authorization: Config.redacted("MCP_AUTHORIZATION") })
      }
      const provider = ConfigProvider.fromMap(new Map([["MCP_URL", srv.url], ["MCP_AUTHORIZATION", `Bearer ${TOKEN}`]]))
      const answer = yield* Effect.flatMap(McpConnection.McpConnection, (connection) => connection.callTool("add", { a: 1, b: 1 })).pipe(
        Effect.provide(McpConnection.layerHttpConfig(config).pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, Authorization.layerDefaults)))),
        Effect.withConfigProvider(provider)
      )
      expect(answer.content[0]).toMatchObject({ text: "2" })
      expect(authorizationOf(srv, "initialize")).toBe(`Bearer ${TOKEN}`)
      const before = srv.requests.length
      const missing = yield* Effect.flip(
        Effect.provide(
          McpConnection.McpConnection,
          McpConnection.layerHttpConfig(config).pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, Authorization.layerDefaults)))
        ).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MCP_URL", srv.url]])))
        )
      )
      expect(ConfigError.isConfigError(missing)).toBe(true)
      expect(missing).toMatchObject({ _op: "MissingData", path: ["MCP_AUTHORIZATION"] })
      expect(String(missing)).not.toContain(TOKEN)
      expect(srv.requests.length).toBe(before)
    }))

  it.scopedLive("layerStdioConfig: needs a CommandExecutor only; a child process with a Redacted environment value; the child ends with the layer", () =>
    Effect.gen(function*() {
      // The child writes the SERVICE_TOKEN it was given before it reads stdin (`envReport`).
      const seenDir = mkdtempSync(join(tmpdir(), "phasebound-services-env-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(seenDir, { recursive: true, force: true })))
      const seenFile = join(seenDir, "service-token.json")
      const f = yield* Effect.acquireRelease(
        Effect.sync(() => Testkit.makeStdioFixture({ envReport: { file: seenFile, names: ["SERVICE_TOKEN"] } })),
        (f) => Effect.sync(() => f.cleanup())
      )
      const config = {
        command: Config.succeed(f.command),
        args: Config.succeed([...f.args]),
        env: Config.all({
          ...Object.fromEntries(Object.entries(f.env ?? {}).map(([k, v]) => [k, Config.succeed(v)])),
          SERVICE_TOKEN: Config.redacted("SERVICE_TOKEN")
        })
      }
      const built = yield* buildIn(McpConnection.layerStdioConfig(config).pipe(Layer.provide(commandExecutor))).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_TOKEN", TOKEN]])))
      )
      const connection = Context.get(built.context, McpConnection.McpConnection)
      expect(connection.transport).toBe("stdio")
      yield* connection.callTool("add", { a: 2, b: 2 })
      // The Redacted value reached the child as the plain value.
      expect(Testkit.readEnvReport(seenFile)).toEqual({ SERVICE_TOKEN: TOKEN })
      expect(f.isAlive()).toBe(true)
      yield* built.release
      expect(f.isAlive()).toBe(false)
    }))

  it.scopedLive("layerStdio: a value given in secrets, put into an argument and quoted back by the child, is redacted from remoteMessage and by redact", () =>
    Effect.gen(function*() {
      const child = Testkit.stdioServerCommand({
        faults: [{ kind: "jsonrpc-error", on: "tools/call", code: -32000, message: `refused, started with ${TOKEN}` }]
      })
      const built = yield* buildIn(
        McpConnection.layerStdio({ command: child.command, args: child.args, secrets: [Redacted.make(TOKEN)] }).pipe(Layer.provide(commandExecutor))
      )
      const connection = Context.get(built.context, McpConnection.McpConnection)
      expect(yield* Effect.flip(connection.callTool("add", { a: 1, b: 2 }))).toMatchObject({
        _tag: "RemoteRefusal",
        remoteMessage: "refused, started with [redacted]"
      })
      expect(connection.redact(`quoted: ${TOKEN}`)).toBe("quoted: [redacted]")
      yield* built.release
    }))

  it.scopedLive("layer (either kind, both services): a discovery that fails makes the layer fail with its McpConnectionError", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      srv.script({ on: "initialize", kind: "status", status: 503 })
      const error = yield* Effect.flip(
        Effect.provide(McpConnection.McpConnection, McpConnection.layer({ url: srv.url, transport: "streamable-http" }).pipe(Layer.provide(platform)))
      )
      expect(error).toMatchObject({ _tag: "UpstreamFailure", stage: "initialize" })
    }))
})

describe.concurrent("McpServers", () => {
  it.scopedLive("connects each server on first use only, and shares one connection among concurrent fibers", () =>
    Effect.gen(function*() {
      const a = yield* server()
      const b = yield* server({ era: "stateless" })
      const built = yield* buildIn(McpServers.layer({ servers: { a: { url: a.url }, b: { url: b.url } } }).pipe(Layer.provide(platform)))
      const servers = Context.get(built.context, McpServers.McpServers)
      expect(servers.names).toEqual(["a", "b"])
      expect(a.requests.length + b.requests.length).toBe(0)
      const results = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) => servers.callTool("a", "add", { a: i, b: 1 }), {
        concurrency: "unbounded"
      })
      expect(results.map((r) => (r.content[0] as unknown as { text: string }).text)).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)))
      expect(initializes(a)).toBe(1)
      expect(b.requests.length).toBe(0)
      const [first, second] = yield* Effect.all([servers.connection("a"), servers.connection("a")])
      expect(first).toBe(second)
      expect((yield* servers.tools("b")).map((tool) => tool.name)).toContain("add")
      yield* built.release
      yield* eventually(() => a.deletes() === 1)
      const { error } = yield* failureOf(servers.connection("a"))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", outcome: "not-sent" })
    }))

  it.scopedLive("an unknown name is InvalidOption server, without I/O; a failed discovery is reported to each waiter and tried again next time", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      srv.script({ on: "initialize", kind: "status", status: 503 })
      const servers = yield* McpServers.make({ servers: { flaky: { url: srv.url, transport: "streamable-http" } } }).pipe(Effect.provide(platform))
      const unknown = yield* Effect.flip(servers.connection("nope"))
      expect(unknown).toMatchObject({ _tag: "InvalidOption", option: "server", outcome: "not-sent" })
      // The caller's unknown name is no server's: not repeated in the error.
      expect(unknown.server).toBeUndefined()
      expect(srv.requests.length).toBe(0)
      const failures = yield* Effect.forEach([1, 2, 3], () => Effect.flip(servers.callTool("flaky", "add", { a: 1, b: 1 })), { concurrency: "unbounded" })
      expect(failures.map((e) => e._tag)).toEqual(["UpstreamFailure", "UpstreamFailure", "UpstreamFailure"])
      // Each names the server by its configured name, never its URL.
      expect(failures.map((e) => e.server)).toEqual(["flaky", "flaky", "flaky"])
      expect(failures[0]!.message).toContain("server flaky")
      expect(JSON.stringify(failures[0])).not.toContain(srv.url)
      expect(initializes(srv)).toBe(1)
      const result = yield* servers.callTool("flaky", "add", { a: 1, b: 1 })
      expect(result.content[0]).toMatchObject({ text: "2" })
      expect(initializes(srv)).toBe(2)
    }))

  it.scopedLive("released during a discovery: the callers waiting for it fail session-closed at once, nothing is left open", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      srv.script({ on: "initialize", kind: "response-never-sent" })
      const built = yield* buildIn(McpServers.layer({ servers: { s: { url: srv.url, transport: "streamable-http" } } }).pipe(Layer.provide(platform)))
      const servers = Context.get(built.context, McpServers.McpServers)
      const waiter = yield* Effect.fork(Effect.flip(servers.connection("s")))
      yield* eventually(() => initializes(srv) === 1)
      yield* built.release
      const error = yield* Fiber.join(waiter).pipe(Effect.timeout("5 seconds"))
      expect(error).toMatchObject({ _tag: "TransportFailure", reason: "session-closed", outcome: "not-sent" })
      yield* eventually(() => srv.openConnections() === 0)
    }))

  it.scopedLive("a discovery runs with the layer's services, never with those of the caller that started it", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const servers = yield* McpServers.make({ servers: { s: { url: srv.url } } }).pipe(Effect.provide(platform))
      // The first caller has an HTTP client of its own that can send nothing.
      const callersOwn = HttpClient.make(() => Effect.die("the caller's own HTTP client was used"))
      const result = yield* servers.callTool("s", "add", { a: 1, b: 2 }).pipe(Effect.provideService(HttpClient.HttpClient, callersOwn))
      expect(result.content[0]).toMatchObject({ text: "3" })
      expect(initializes(srv)).toBe(1)
    }))

  it.scopedLive("the shared connection heals: after SessionExpired the next call runs on a new session", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const servers = yield* McpServers.make({ servers: { s: { url: srv.url } } }).pipe(Effect.provide(platform))
      yield* servers.callTool("s", "add", { a: 1, b: 1 })
      srv.expireSession()
      const expired = yield* Effect.flip(servers.callTool("s", "add", { a: 1, b: 1 }))
      expect(expired).toMatchObject({ _tag: "SessionExpired", outcome: "not-applied" })
      yield* servers.callTool("s", "add", { a: 1, b: 1 })
      expect(initializes(srv)).toBe(2)
    }))

  it.scopedLive("a shared policy under each server's own; an invalid one is refused when the layer is built", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const servers = yield* McpServers.make({
        policy: { call: { timeout: "7 seconds" } },
        servers: { s: { url: srv.url, policy: { maxBytes: 65_536 } } }
      }).pipe(Effect.provide(platform))
      const connection = yield* servers.connection("s")
      expect(connection.policy.call.timeoutMs).toBe(7_000)
      expect(connection.policy.call.maxBytes).toBe(65_536)
      const bad = yield* Effect.flip(McpServers.make({ servers: { s: { url: srv.url, policy: { timeout: -1 } } } }).pipe(Effect.provide(platform)))
      expect(bad).toMatchObject({ _tag: "InvalidOption", option: "timeout" })
    }))

  it.scopedLive("layerConfig: the servers from Config, a Redacted header", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const layer = McpServers.layerConfig({
        servers: Config.all({
          remote: Config.all({ url: Config.string("REMOTE_URL"), headers: Config.all({ authorization: Config.redacted("REMOTE_AUTH") }) })
        })
      })
      yield* Effect.flatMap(McpServers.McpServers, (servers) => servers.callTool("remote", "add", { a: 1, b: 2 })).pipe(
        Effect.provide(layer.pipe(Layer.provide(platform))),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["REMOTE_URL", srv.url], ["REMOTE_AUTH", `Bearer ${TOKEN}`]])))
      )
      expect(authorizationOf(srv, "tools/call")).toBe(`Bearer ${TOKEN}`)
    }))
})

describe.concurrent("McpServers.layerFile: the CLI's mcpServers file", () => {
  it.scopedLive("HTTP and stdio entries; ${VAR} from the ConfigProvider; other top-level keys ignored; both released with the layer", () =>
    Effect.gen(function*() {
      const srv = yield* server()
      const f = yield* stdioFixture
      const file = yield* tempFile(JSON.stringify({
        theme: "dark",
        mcpServers: {
          remote: { url: srv.url, type: "http", headers: { Authorization: "Bearer ${REMOTE_TOKEN}" } },
          local: { command: f.command, args: f.args, env: { ...f.env, LOCAL_SECRET: "${LOCAL_SECRET}" } }
        }
      }))
      const provider = ConfigProvider.fromMap(new Map([["REMOTE_TOKEN", TOKEN], ["LOCAL_SECRET", "s3cret-value"]]))
      const built = yield* buildIn(McpServers.layerFile(file).pipe(Layer.provide(platform))).pipe(Effect.withConfigProvider(provider))
      const servers = Context.get(built.context, McpServers.McpServers)
      expect(servers.names).toEqual(["remote", "local"])
      yield* servers.callTool("remote", "add", { a: 1, b: 2 })
      expect(authorizationOf(srv, "tools/call")).toBe(`Bearer ${TOKEN}`)
      const local = yield* servers.connection("local")
      expect(local.transport).toBe("stdio")
      expect(f.isAlive()).toBe(true)
      yield* built.release
      expect(f.isAlive()).toBe(false)
      yield* eventually(() => srv.deletes() === 1)
    }))

  it.scopedLive("refused with InvalidOption, never echoing the path, a value or a variable's name", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["{ not json", "file"],
        [JSON.stringify({ settings: {} }), "file"],
        [JSON.stringify({ mcpServers: { a: { url: "http://127.0.0.1:1/mcp", header: {} } } }), "file"],
        [JSON.stringify({ mcpServers: { a: { url: "http://127.0.0.1:1/mcp", headers: { A: "Bearer ${UNSET_SECRET_VAR}" } } } }), "headers"],
        [JSON.stringify({ mcpServers: { a: { command: "node", env: { K: "${UNSET_SECRET_VAR}" } } } }), "env"],
        [JSON.stringify({ mcpServers: { a: { url: "${UNSET_SECRET_VAR}" } } }), "url"]
      ]
      for (const [content, option] of cases) {
        const file = yield* tempFile(content)
        // A refused file fails the reading; an unset variable the server's first use (its resolution).
        const error = yield* Effect.flip(
          Effect.flatMap(McpServers.fromFile(file), (options) => McpServers.resolveServer(options.servers["a"]!))
        ).pipe(
          Effect.provide(platform),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
        )
        expect(error, content).toMatchObject({ _tag: "InvalidOption", option })
        const text = JSON.stringify(error) + String(error)
        expect(text).not.toContain(file)
        expect(text).not.toContain("UNSET_SECRET_VAR")
      }
      const missing = yield* Effect.flip(McpServers.fromFile(join(tmpdir(), "no-such-dir-phasebound", "mcp.json"))).pipe(Effect.provide(platform))
      expect(missing).toMatchObject({ _tag: "InvalidOption", option: "file" })
    }))
})
