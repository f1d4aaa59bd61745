/**
 * The token file shared by real processes (test/support/children/token-store-child.ts, run with tsx):
 * concurrent `set`s from several processes lose no entry, and two processes refreshing the same
 * expired grant send one refresh: the second adopts the tokens the first stored, so the rotated
 * refresh token is never sent again nor written back.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Testkit from "@phasebound/testkit"
import { Deferred, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Authorization, McpClient } from "../../src/index.js"
import { makeFile, storeKeyOf } from "../../src/internal/oauth/tokenStore.js"
import { consentingUser, redirectUri, tokenRequests } from "../support/oauth.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const tsx = path.join(path.dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/cli.mjs")
const platform = Layer.merge(NodeFileSystem.layer, NodePath.layer)

interface Child {
  /** Resolves once the child printed `ready`. */
  readonly ready: Promise<void>
  /** Lets it start. */
  readonly go: () => void
  readonly exit: Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>
}

const child = (args: ReadonlyArray<string>): Child => {
  const process_ = spawn(process.execPath, [tsx, "--conditions=@phasebound/source", path.join(here, "../support/children/token-store-child.ts"), ...args], {
    cwd: here,
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  let signalReady: () => void = () => {}
  let failReady: (error: Error) => void = () => {}
  const ready = new Promise<void>((resolve, reject) => {
    signalReady = resolve
    failReady = reject
  })
  process_.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
    if (stdout.startsWith("ready\n")) signalReady()
  })
  process_.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const killer = setTimeout(() => process_.kill("SIGKILL"), 60_000)
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    process_.on("exit", (code) => {
      clearTimeout(killer)
      // A child that died before it was ready fails the wait with its stderr, not the test's timeout.
      failReady(new Error(`the child exited (${code}) before printing ready:\n${stderr.slice(-3_000)}`))
      resolve({ code, stdout: stdout.replace(/^ready\n/, ""), stderr })
    })
  )
  return { ready, go: () => process_.stdin.end("go\n"), exit }
}

/** Waits (in real time) until the predicate holds: a sync point on what the servers saw. */
const until = async (predicate: () => boolean, timeoutMs = 30_000) => {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

let dir = ""
let file = ""
beforeEach(() => {
  dir = NodeFs.mkdtempSync(path.join(Os.tmpdir(), "phasebound-token-processes-"))
  file = path.join(dir, "phasebound", "tokens.json")
})
afterEach(() => {
  NodeFs.rmSync(dir, { recursive: true, force: true })
})

const readFile = () =>
  JSON.parse(NodeFs.readFileSync(file, "utf8")) as {
    entries: ReadonlyArray<{ resource: string; tokens: { accessToken: string; refreshToken?: string } }>
  }

describe("the token file across processes", () => {
  it("four processes storing 20 entries each at once: all 80 are in the file, no lock or temporary left", async () => {
    const children = ["a", "b", "c", "d"].map((prefix) => child(["set", file, prefix, "20"]))
    await Promise.all(children.map((c) => c.ready))
    for (const c of children) c.go()
    const exits = await Promise.all(children.map((c) => c.exit))
    for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0, stdout: "done\n" })
    const resources = readFile().entries.map((entry) => entry.resource).sort()
    const expected = ["a", "b", "c", "d"].flatMap((prefix) => Array.from({ length: 20 }, (_, i) => `https://${prefix}-${i}.example/mcp`)).sort()
    expect(resources).toEqual(expected)
    expect(NodeFs.readdirSync(path.dirname(file))).toEqual(["tokens.json"])
  }, 90_000)

  it("two processes refreshing one expired grant: one refresh is sent, the other adopts the rotated tokens", async () => {
    const oauth = await Testkit.startOAuthServer()
    const srv = await Testkit.startServer({ auth: { oauth } })
    try {
      // A login in this process: the tokens are in the file.
      const fileStore = Authorization.tokenStoreFile(file).pipe(Layer.provide(platform))
      await Effect.runPromise(
        Effect.scoped(McpClient.connect({ url: srv.url, auth: { redirectUri } })).pipe(
          Effect.provide(Layer.mergeAll(consentingUser(oauth).layer, fileStore, FetchHttpClient.layer))
        )
      )
      const first = oauth.issuedTokens()[0]!
      expect(readFile().entries.map((entry) => entry.tokens.refreshToken)).toEqual([first.refreshToken])
      oauth.expireAll()

      // This process holds the lock while both children load the entry and meet a 401: both
      // then hold the same refresh token, and ask to refresh it at the same time.
      const gate = Effect.runSync(Deferred.make<void>())
      const store = await Effect.runPromise(Effect.provide(makeFile(file), platform))
      const key = storeKeyOf(new URL(srv.url), {})
      const held = Effect.runSync(Deferred.make<void>())
      const holder = Effect.runFork(
        store.exclusive!(key, Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(gate)), { timeoutMs: 10_000 })
      )
      await Effect.runPromise(Deferred.await(held))
      const refusedBefore = srv.requests.filter((request) => request.refused === 401).length
      const metadataBefore = oauth.calls("metadata")
      const children = [child(["call", file, srv.url, redirectUri]), child(["call", file, srv.url, redirectUri])]
      await Promise.all(children.map((c) => c.ready))
      for (const c of children) c.go()
      // Both refused, both past the discovery that precedes a refresh: both at the lock.
      await until(() =>
        srv.requests.filter((request) => request.refused === 401).length >= refusedBefore + 2 &&
        oauth.calls("metadata") >= metadataBefore + 2
      )
      expect(tokenRequests(oauth, "refresh_token")).toHaveLength(0)
      Effect.runSync(Deferred.succeed(gate, undefined))
      await Effect.runPromise(Fiber.join(holder))

      const exits = await Promise.all(children.map((c) => c.exit))
      for (const exit of exits) expect(exit.code, exit.stdout + exit.stderr).toBe(0)
      expect(exits.map((exit) => exit.stdout.trim()).sort()).toEqual(["1", "2"])
      expect(srv.counter()).toBe(2)
      // One refresh, with the first refresh token; never that token again.
      const refreshes = tokenRequests(oauth, "refresh_token")
      expect(refreshes.map((request) => request.form["refresh_token"])).toEqual([first.refreshToken])
      // The file holds the rotated tokens, not the first ones.
      const rotated = oauth.issuedTokens()[1]!
      expect(rotated.grant).toBe("refresh_token")
      expect(readFile().entries.map((entry) => entry.tokens)).toEqual([
        expect.objectContaining({ accessToken: rotated.accessToken, refreshToken: rotated.refreshToken })
      ])
      const stored = Option.getOrThrow(await Effect.runPromise(store.get(key)))
      expect(Redacted.value(stored.tokens.refreshToken!)).not.toBe(first.refreshToken)
      expect(NodeFs.readdirSync(path.dirname(file))).toEqual(["tokens.json"])
    } finally {
      await srv.close()
      await oauth.close()
    }
  }, 90_000)
})
