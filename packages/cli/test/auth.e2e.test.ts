/**
 * OAuth in the CLI (the Node bundle as a subprocess) against the testkit's OAuth authorization
 * server and a protected MCP server: client credentials with no login, `login` end to end
 * through a scripted "browser" and the loopback listener, tokens reused from the token file,
 * `logout`, a login that times out, config-file `auth` entries, and the refusals before any I/O.
 * Secrets (the client secret, the private key) never reach stdout or stderr.
 *
 * The TTY test needs util-linux `script` (support/pty.ts): on Linux a missing helper fails it
 * with the reason; elsewhere it is skipped, and its name says why.
 */
import * as Testkit from "@phasebound/testkit"
import { generateKeyPairSync } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { baseEnv, cliDir, expectFailure, expectJson, recordOf, run, type RunResult, shellQuote } from "./support/cli.js"
import { itOnTerminal, runOnTerminal, screenOf } from "./support/pty.js"

const SECRET = "CANARY-client-secret-9f3a"
const BASIC = Buffer.from(`svc:${SECRET}`).toString("base64")
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
const KEY_PEM = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
const KEY_LINE = KEY_PEM.split("\n")[3]!

let oauth: Testkit.OAuthTestServer
let server: Testkit.TestServer
let open: Testkit.TestServer
let dir: string
let browser: string
let keyFile: string

beforeAll(async () => {
  oauth = await Testkit.startOAuthServer({
    clients: [
      { clientId: "svc", clientSecret: SECRET, grantTypes: ["client_credentials"] },
      {
        clientId: "signed",
        tokenEndpointAuthMethod: "private_key_jwt",
        publicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
        grantTypes: ["client_credentials"]
      }
    ]
  })
  server = await Testkit.startServer({ auth: { oauth } })
  open = await Testkit.startServer()
  dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-auth-"))
  // The "browser": one executable that GETs the URL it is given, following the authorization
  // server's 302 to the CLI's loopback listener.
  browser = path.join(dir, "browser.mjs")
  writeFileSync(browser, `#!${process.execPath}\nfetch(process.argv[2]).then((r) => r.text()).catch(() => {})\n`)
  chmodSync(browser, 0o755)
  keyFile = path.join(dir, "key.pem")
  writeFileSync(keyFile, KEY_PEM, { mode: 0o600 })
})
afterAll(async () => {
  await server?.close()
  await open?.close()
  await oauth?.close()
})
beforeEach(() => {
  server.clearFaults()
  oauth.clearFaults()
})

let files = 0
/** A token file path in a directory that does not exist yet. */
const freshTokenFile = () => path.join(dir, `state-${++files}`, "tokens.json")

const node = (args: ReadonlyArray<string>, options?: Parameters<typeof run>[2]) => run("node", args, options)

const expectNoSecrets = (result: RunResult) => {
  for (const secret of [SECRET, BASIC, KEY_LINE]) {
    expect(result.stdout).not.toContain(secret)
    expect(result.stderr).not.toContain(secret)
  }
}

const credentials = ["--auth-grant", "client_credentials", "--auth-client-id", "svc", "--auth-client-secret", "${PB_SECRET}"]

describe("client credentials: no login", () => {
  it("tools with --auth-* flags: tokens obtained by the CLI, the token file need not exist; the secret is never printed", async () => {
    const tokenFile = freshTokenFile()
    const before = oauth.calls("token")
    const result = await node(["tools", server.url, ...credentials, "--token-file", tokenFile], { env: { PB_SECRET: SECRET } })
    expect(expectJson(result)).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expect(oauth.calls("token")).toBe(before + 1)
    expect(server.unauthorizedCount()).toBeGreaterThan(0)
    expectNoSecrets(result)
    // Kept for the next run, readable by the user only.
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600)
    const again = await node(["call", server.url, "add", "--args", "{\"a\":1,\"b\":2}", ...credentials, "--token-file", tokenFile], {
      env: { PB_SECRET: SECRET }
    })
    expect(expectJson(again)).toMatchObject({ content: [{ text: "3" }] })
    expect(oauth.calls("token")).toBe(before + 1)
  })

  it("a token endpoint echoing the secret in its error: AuthorizationFailed (3), one record, the secret nowhere (also with --debug)", async () => {
    oauth.script({ kind: "echo-secrets-in-error", times: 2 })
    for (const extra of [[], ["--debug"]]) {
      const result = await node(["tools", server.url, ...credentials, "--token-file", freshTokenFile(), ...extra], {
        env: { PB_SECRET: SECRET }
      })
      const record = expectFailure(result, 3, "AuthorizationFailed")
      expect(record).toMatchObject({ phase: "authorization", reason: "invalid-grant", oauthError: "invalid_grant" })
      expectNoSecrets(result)
    }
  })

  it("private_key_jwt from --auth-private-key-file; the key is never printed", async () => {
    const result = await node([
      "discover",
      server.url,
      "--auth-grant",
      "client_credentials",
      "--auth-client-id",
      "signed",
      "--auth-private-key-file",
      keyFile,
      "--auth-private-key-alg",
      "RS256",
      "--token-file",
      freshTokenFile()
    ])
    const summary = expectJson(result) as { tools: number; stages: Array<Record<string, unknown>> }
    expect(summary.tools).toBe(3)
    // The authorization after the first 401 is a stage entry of its own; the refused request is sent again.
    expect(summary.stages.filter((stage) => stage["operation"] === "authorization")).toMatchObject([{ outcome: "ok" }])
    expect(summary.stages.some((stage) => stage["resent"] === true)).toBe(true)
    expectNoSecrets(result)
    const defect = await node(
      ["tools", server.url, "--auth-grant", "client_credentials", "--auth-client-id", "signed", "--auth-private-key-file", keyFile, "--debug"],
      { env: { PHASEBOUND_TEST_DEFECT: "after-connect", PHASEBOUND_TOKEN_FILE: freshTokenFile() } }
    )
    expect(defect.code).toBe(8)
    expectNoSecrets(defect)
  })
})

describe("login, stored tokens, logout", () => {
  it("login through the browser and the loopback listener; tools then uses the token file; logout; then 401 again", async () => {
    const tokenFile = freshTokenFile()
    const env = { PHASEBOUND_BROWSER: browser, PHASEBOUND_TOKEN_FILE: tokenFile }
    const authorizations = oauth.calls("authorize")
    const login = await node(["login", server.url, "--json"], { env })
    expect({ code: login.code, stderr: login.stderr }).toEqual({ code: 0, stderr: "" })
    const [prompt, done, ...more] = login.stdout.trimEnd().split("\n")
    expect(more).toEqual([])
    const authorize = new URL((JSON.parse(prompt!) as { authorize: string }).authorize)
    expect(authorize.origin).toBe(oauth.origin)
    expect(authorize.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
    expect(JSON.parse(done!)).toEqual({ loggedIn: true, authorized: true, transport: "streamable-http", protocolVersion: "2025-11-25", tools: 3 })
    expect(oauth.calls("authorize")).toBe(authorizations + 1)
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600)
    expect(statSync(path.dirname(tokenFile)).mode & 0o777).toBe(0o700)

    // No auth flags: the stored tokens, and no new authorization.
    const tokens = oauth.calls("token")
    expect(expectJson(await node(["tools", server.url], { env: { PHASEBOUND_TOKEN_FILE: tokenFile } }))).toMatchObject({
      tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }]
    })
    expect(expectJson(await node(["call", server.url, "increment", "--token-file", tokenFile]))).toMatchObject({
      content: [{ type: "text" }]
    })
    expect(oauth.calls("authorize")).toBe(authorizations + 1)
    expect(oauth.calls("token")).toBe(tokens)

    // An expired access token is refreshed with the stored refresh token.
    oauth.expireAll()
    expectJson(await node(["tools", server.url, "--token-file", tokenFile]))
    expect(oauth.calls("token")).toBe(tokens + 1)
    expect(oauth.calls("authorize")).toBe(authorizations + 1)

    expect(expectJson(await node(["logout", server.url, "--token-file", tokenFile]))).toEqual({ loggedOut: true, removed: true })
    expect(JSON.parse(readFileSync(tokenFile, "utf8"))).toMatchObject({ entries: [] })
    expect(expectFailure(await node(["tools", server.url, "--token-file", tokenFile]), 3, "Unauthorized")).toMatchObject({ status: 401 })
    expect(expectJson(await node(["logout", server.url, "--token-file", tokenFile]))).toEqual({ loggedOut: true, removed: false })
  })

  it("a 401 with no stored tokens (default token file under an empty HOME): exactly one record, Unauthorized (3)", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "phasebound-cli-home-"))
    const result = await node(["tools", server.url], { env: { HOME: home, XDG_CONFIG_HOME: "", PHASEBOUND_TOKEN_FILE: "" } })
    // The first request of the discovery (the stateless probe) was refused.
    expect(expectFailure(result, 3, "Unauthorized")).toMatchObject({ status: 401, stage: "discover", phase: "discovery" })
    // Nothing was written: no tokens were obtained.
    expect(existsSync(path.join(home, ".config"))).toBe(false)
  })

  it("the token file: --token-file, else $PHASEBOUND_TOKEN_FILE, else the user's config directory", async () => {
    const home = mkdtempSync(path.join(tmpdir(), "phasebound-cli-home-"))
    const fromEnv = freshTokenFile()
    const fromFlag = freshTokenFile()
    const env = { HOME: home, XDG_CONFIG_HOME: "", PB_SECRET: SECRET }
    expectJson(await node(["login", server.url, ...credentials, "--token-file", fromFlag], { env: { ...env, PHASEBOUND_TOKEN_FILE: fromEnv } }))
    expect([existsSync(fromFlag), existsSync(fromEnv)]).toEqual([true, false])
    expectJson(await node(["login", server.url, ...credentials], { env: { ...env, PHASEBOUND_TOKEN_FILE: fromEnv } }))
    expect(existsSync(fromEnv)).toBe(true)
    const byDefault = path.join(home, ".config", "phasebound", "tokens.json")
    expect(existsSync(byDefault)).toBe(false)
    expectJson(await node(["login", server.url, ...credentials], { env: { ...env, PHASEBOUND_TOKEN_FILE: "" } }))
    expect(statSync(byDefault).mode & 0o777).toBe(0o600)
  })

  it("a login nobody completes: the listener's timeout, one typed record (AuthorizationFailed, 3), only the URL on stdout", async () => {
    const result = await node(["login", server.url, "--auth-timeout", "300ms"], {
      env: { PHASEBOUND_NO_BROWSER: "1", PHASEBOUND_TOKEN_FILE: freshTokenFile() }
    })
    const record = recordOf(result)
    expect(result.code).toBe(3)
    expect(record).toMatchObject({
      tag: "AuthorizationFailed",
      phase: "authorization",
      authorizationStep: "authorization",
      reason: "interactive-step-failed"
    })
    // Machine mode (stdout is not a TTY): the URL line, nothing else.
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toHaveProperty("authorize")
  })

  it("a server that asks for no authorization: login succeeds, authorized false, nothing stored", async () => {
    const tokenFile = freshTokenFile()
    const result = await node(["login", open.url, "--token-file", tokenFile], { env: { PHASEBOUND_NO_BROWSER: "1" } })
    expect(expectJson(result)).toEqual({ loggedIn: true, authorized: false, transport: "streamable-http", protocolVersion: "2025-11-25", tools: 3 })
    expect(existsSync(tokenFile)).toBe(false)
  })

  it("login with client credentials stores tokens that later runs use without flags for the secret", async () => {
    const tokenFile = freshTokenFile()
    const login = await node(["login", server.url, ...credentials, "--token-file", tokenFile], { env: { PB_SECRET: SECRET } })
    expect(expectJson(login)).toMatchObject({ loggedIn: true, authorized: true })
    expectNoSecrets(login)
    const tokens = oauth.calls("token")
    // The same client id names the same entry.
    expectJson(await node(["tools", server.url, "--auth-client-id", "svc", "--token-file", tokenFile]))
    expect(oauth.calls("token")).toBe(tokens)
    expect(expectJson(await node(["logout", server.url, "--auth-client-id", "svc", "--token-file", tokenFile]))).toEqual({
      loggedOut: true,
      removed: true
    })
  })
})

describe("config-file auth", () => {
  it("an entry's auth object (client credentials, ${VAR} secret) works; login/logout find the same entry by name", async () => {
    const config = path.join(dir, "auth.json")
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          svc: { url: server.url, auth: { grant: "client_credentials", clientId: "svc", clientSecret: "${PB_SECRET}" } },
          signed: { url: server.url, auth: { grant: "client_credentials", clientId: "signed", privateKeyFile: "key.pem" } }
        }
      })
    )
    const tokenFile = freshTokenFile()
    const env = { PB_SECRET: SECRET, PHASEBOUND_TOKEN_FILE: tokenFile }
    const result = await node(["tools", "--config", config, "svc"], { env })
    expect(expectJson(result)).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expectNoSecrets(result)
    // A relative privateKeyFile is read from the config file's directory.
    const signed = await node(["tools", "--config", config, "signed"], { env, cwd: tmpdir() })
    expect(expectJson(signed)).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    expectNoSecrets(signed)
    expect(expectJson(await node(["logout", "--config", config, "svc"], { env }))).toEqual({ loggedOut: true, removed: true })
    // An unset ${VAR} in the entry's secret names the entry's auth, never the variable.
    const unset = expectFailure(await node(["tools", "--config", config, "svc"], { env: { PHASEBOUND_TOKEN_FILE: tokenFile } }), 2, "InvalidOption")
    expect(unset).toMatchObject({ option: "--config auth", stage: "config" })
    // A flag overrides the entry: a wrong secret from the flag is refused by the token endpoint.
    const overridden = await node(["tools", "--config", config, "svc", "--auth-client-secret", "wrong-secret", "--token-file", freshTokenFile()], { env })
    expect(expectFailure(overridden, 3, "AuthorizationFailed")).toMatchObject({ oauthError: "invalid_client" })
  })

  it("--catalog: a server's private key is scrubbed from the --debug dump of a defect that carries it", async () => {
    const config = path.join(dir, "catalog-auth.json")
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { signed: { url: server.url, auth: { grant: "client_credentials", clientId: "signed", privateKeyFile: "key.pem" } } } })
    )
    // The hook's defect carries the server's options as resolved, the key unwrapped.
    const defect = await node(["tools", "--catalog", "--config", config, "--debug"], {
      env: { PHASEBOUND_TEST_DEFECT: "after-connect", PHASEBOUND_TOKEN_FILE: freshTokenFile() }
    })
    expect(defect.code).toBe(8)
    expect(JSON.parse(defect.stderr.split("\n")[0]!)).toMatchObject({ error: { tag: "InternalError" } })
    expect(defect.stderr).toContain("test defect")
    expect(defect.stderr).toContain("[redacted]")
    expectNoSecrets(defect)
  })

  it("an unknown field in an entry's auth object is refused: InvalidOption naming --config, before any I/O", async () => {
    const config = path.join(dir, "typo.json")
    writeFileSync(config, JSON.stringify({ mcpServers: { svc: { url: server.url, auth: { clientID: "svc" } } } }))
    const before = server.requests.length
    const record = expectFailure(await node(["tools", "--config", config, "svc"]), 2, "InvalidOption")
    expect(record).toMatchObject({ option: "--config", stage: "config" })
    expect(JSON.stringify(record)).not.toContain("clientID")
    expect(server.requests.length).toBe(before)
  })
})

describe("credentials bound to their authorization server", () => {
  it("--auth-issuer naming the server's authorization server works; naming another: AuthorizationFailed issuer-mismatch (3), no token asked", async () => {
    const ok = await node(["tools", server.url, ...credentials, "--auth-issuer", oauth.issuer, "--token-file", freshTokenFile()], {
      env: { PB_SECRET: SECRET }
    })
    expect(expectJson(ok)).toMatchObject({ tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }] })
    const before = oauth.calls("token")
    const other = await node(["tools", server.url, ...credentials, "--auth-issuer", "https://as.example.com", "--token-file", freshTokenFile()], {
      env: { PB_SECRET: SECRET }
    })
    expect(expectFailure(other, 3, "AuthorizationFailed")).toMatchObject({ reason: "issuer-mismatch", phase: "authorization" })
    expect(oauth.calls("token")).toBe(before)
    expectNoSecrets(other)
  })

  it("an entry's issuer binds the same way", async () => {
    const config = path.join(dir, "issuer.json")
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          bound: { url: server.url, auth: { grant: "client_credentials", clientId: "svc", clientSecret: "${PB_SECRET}", issuer: oauth.issuer } },
          elsewhere: { url: server.url, auth: { grant: "client_credentials", clientId: "svc", clientSecret: "${PB_SECRET}", issuer: "https://as.example.com" } }
        }
      })
    )
    const env = { PB_SECRET: SECRET, PHASEBOUND_TOKEN_FILE: freshTokenFile() }
    expect(expectJson(await node(["tools", "--config", config, "bound"], { env }))).toMatchObject({
      tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }]
    })
    const before = oauth.calls("token")
    const refused = await node(["tools", "--config", config, "elsewhere"], { env: { ...env, PHASEBOUND_TOKEN_FILE: freshTokenFile() } })
    expect(expectFailure(refused, 3, "AuthorizationFailed")).toMatchObject({ reason: "issuer-mismatch" })
    expect(oauth.calls("token")).toBe(before)
  })

  it("no --auth-issuer: bound at first use through the token file; a later run whose server names another authorization server sends it nothing", async () => {
    const clients = [{ clientId: "svc", clientSecret: SECRET, grantTypes: ["client_credentials" as const] }]
    const home = await Testkit.startOAuthServer({ clients })
    const rogue = await Testkit.startOAuthServer({ clients })
    const protectedServer = await Testkit.startServer({ auth: { oauth: home } })
    try {
      const tokenFile = freshTokenFile()
      const env = { PB_SECRET: SECRET }
      expect(expectJson(await node(["tools", protectedServer.url, ...credentials, "--token-file", tokenFile], { env }))).toMatchObject({
        tools: [{ name: "add" }, { name: "echo" }, { name: "increment" }]
      })
      const stored = JSON.parse(readFileSync(tokenFile, "utf8")) as { entries: Array<{ issuer: string }> }
      expect(stored.entries.map((entry) => entry.issuer)).toEqual([home.issuer])
      // The stored token stops working, and the server now names the rogue.
      home.revokeAll()
      protectedServer.scriptAuth({ kind: "other-authorization-servers", servers: [rogue.issuer], times: Infinity })
      const refused = await node(["tools", protectedServer.url, ...credentials, "--token-file", tokenFile], { env })
      expect(expectFailure(refused, 3, "AuthorizationFailed")).toMatchObject({ reason: "issuer-mismatch" })
      expect(rogue.requests).toHaveLength(0)
      expectNoSecrets(refused)
    } finally {
      await protectedServer.close()
      await rogue.close()
      await home.close()
    }
  })
})

describe("refused before any I/O (2)", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string, Readonly<Record<string, string>>?]> = [
    ["an unknown grant", ["tools", "URL", "--auth-grant", "password"], "--auth-grant"],
    ["an unknown key algorithm", ["tools", "URL", "--auth-private-key-alg", "HS256"], "--auth-private-key-alg"],
    ["client_credentials without a client id", ["tools", "URL", "--auth-grant", "client_credentials"], "--auth-client-id"],
    ["client_credentials without a secret or key", ["tools", "URL", "--auth-grant", "client_credentials", "--auth-client-id", "svc"], "--auth-client-secret"],
    [
      "an unset ${VAR} in --auth-client-secret",
      ["tools", "URL", "--auth-client-id", "svc", "--auth-client-secret", "${PB_UNSET_SECRET}"],
      "--auth-client-secret"
    ],
    ["a metadata URL that is not https", ["tools", "URL", "--auth-client-metadata-url", "http://example.com/client.json"], "--auth-client-metadata-url"],
    [
      "a private key file that does not exist",
      ["tools", "URL", "--auth-client-id", "x", "--auth-private-key-file", "/nonexistent/key.pem"],
      "--auth-private-key-file"
    ],
    ["a scope that is not scope tokens", ["tools", "URL", "--auth-scope", "a\"b"], "--auth-scope"],
    ["an --auth-issuer that is not an https issuer", ["tools", "URL", "--auth-issuer", "http://as.example.com"], "--auth-issuer"],
    ["auth flags with a plain http server off loopback", ["tools", "http://10.0.0.1/mcp", ...credentials], "target", { PB_SECRET: SECRET }],
    ["auth flags with a stdio target", ["tools", "--stdio", "node server.js", "--auth-client-id", "x"], "--auth-client-id"],
    ["--token-file with a stdio target", ["tools", "--stdio", "node server.js", "--token-file", "/tmp/x.json"], "--token-file"],
    ["auth flags beside an Authorization header", ["tools", "URL", "--header", "Authorization: Bearer x", "--auth-client-id", "x"], "--auth-client-id"],
    ["login with an Authorization header", ["login", "URL", "--header", "Authorization: Bearer x"], "--header"],
    ["login with a bad --auth-timeout", ["login", "URL", "--auth-timeout", "0s"], "--auth-timeout"],
    ["login with a bad --auth-redirect-port", ["login", "URL", "--auth-redirect-port", "70000"], "--auth-redirect-port"],
    ["login without a target", ["login"], "target"],
    ["logout without a target", ["logout"], "target"]
  ]
  for (const [name, args, option, env] of cases) {
    it(name, async () => {
      const before = server.requests.length
      const tokens = oauth.requests.length
      const record = expectFailure(
        await node(args.map((a) => (a === "URL" ? server.url : a)), { env: { PHASEBOUND_TOKEN_FILE: freshTokenFile(), ...env } }),
        2,
        "InvalidOption"
      )
      expect(record).toMatchObject({ option, stage: "config", outcome: "not-sent" })
      expect(server.requests.length).toBe(before)
      expect(oauth.requests.length).toBe(tokens)
    })
  }

  it("login and logout of a stdio server are refused (target); login has no --stdio", async () => {
    const config = path.join(dir, "stdio.json")
    writeFileSync(config, JSON.stringify({ mcpServers: { local: { command: "node", args: ["server.js"] } } }))
    expect(expectFailure(await node(["login", "--config", config, "local"]), 2, "InvalidOption")).toMatchObject({ option: "target" })
    expect(expectFailure(await node(["logout", "--config", config, "local"]), 2, "InvalidOption")).toMatchObject({ option: "target" })
    expectFailure(await node(["login", "--stdio", "node server.js"]), 2, "InvalidOption")
  })

  it("a token file readable by others is refused by login and logout (--token-file), before any browser", async () => {
    const tokenFile = path.join(dir, "loose.json")
    writeFileSync(tokenFile, JSON.stringify({ format: "phasebound/tokens", version: 1, entries: [] }), { mode: 0o644 })
    chmodSync(tokenFile, 0o644)
    const authorizations = oauth.calls("authorize")
    const login = await node(["login", server.url, "--token-file", tokenFile], { env: { PHASEBOUND_NO_BROWSER: "1" } })
    expect(expectFailure(login, 2, "InvalidOption")).toMatchObject({ option: "--token-file" })
    expect(oauth.calls("authorize")).toBe(authorizations)
    expect(expectFailure(await node(["logout", server.url, "--token-file", tokenFile]), 2, "InvalidOption")).toMatchObject({
      option: "--token-file"
    })
  })
})

describe("human mode", () => {
  // A terminal for both streams (support/pty.ts: required on Linux, a visible skip elsewhere).
  itOnTerminal("on a TTY a refused command adds the login hint after the record; machine mode never does", async () => {
    const tokenFile = freshTokenFile()
    const bundle = path.join(cliDir, "dist/bin.js")
    const line = shellQuote([process.execPath, bundle, "tools", server.url, "--token-file", tokenFile])
    const { raw } = await runOnTerminal(line, baseEnv())
    const lines = screenOf(raw).split("\n").filter((l) => l.trim() !== "")
    expect(JSON.parse(lines[0]!)).toMatchObject({ error: { tag: "Unauthorized" } })
    expect(lines[1]).toBe(`run: phasebound login ${server.url}`)
    // The same command in machine mode: the record alone (expectFailure checks the one line).
    expectFailure(await node(["tools", server.url, "--token-file", tokenFile]), 3, "Unauthorized")
    expectFailure(await node(["tools", server.url, "--token-file", tokenFile, "--json"]), 3, "Unauthorized")
  })
})

describe("help", () => {
  it("documents the auth flags, login and logout", async () => {
    const root = await node(["--help"])
    expect(root.stdout).toContain("login")
    expect(root.stdout).toContain("logout")
    const login = await node(["login", "--help"])
    expect(login).toMatchObject({ code: 0, stderr: "" })
    for (const flag of ["--auth-grant", "--auth-client-secret", "--auth-redirect-port", "--auth-timeout", "--token-file", "PHASEBOUND_TOKEN_FILE"]) {
      expect(login.stdout).toContain(flag)
    }
  })
})
