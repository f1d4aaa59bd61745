/**
 * Token storage (internal/oauth/tokenStore.ts): the memory store's semantics, and the file store
 * on a temporary directory through NodeFileSystem: round trip, modes 0600/0700, atomic writes,
 * refusal of a group-readable, corrupt, foreign or oversized file or of a symbolic link with a
 * typed error that echoes nothing, another instance's view of the file, concurrent sets, the
 * compare-and-delete, `exclusive` (re-entrant, serializing), the lock file (a stale one taken
 * over, a live one waited for within the bound), and the default location. Real processes
 * sharing the file: tokenStoreProcesses.test.ts.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Layer, Option, Redacted, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as Os from "node:os"
import * as NodePathModule from "node:path"
import {
  defaultTokenFile,
  layerFile,
  layerMemory,
  makeFile,
  TokenStore,
  type TokenStoreEntry,
  TokenStoreError,
  type TokenStoreKey
} from "../../src/internal/oauth/tokenStore.js"

const ACCESS = "access-token-SECRET-1"
const REFRESH = "refresh-token-SECRET-2"
const CLIENT_SECRET = "client-secret-SECRET-3"

const key: TokenStoreKey = { resource: "https://mcp.example.com/mcp", clientId: "client-a" }
const otherKey: TokenStoreKey = { resource: "https://mcp.example.com/mcp", clientId: "client-b" }

const entry = (n = 0): TokenStoreEntry => ({
  tokens: {
    accessToken: Redacted.make(`${ACCESS}-${n}`),
    tokenType: "Bearer",
    expiresAt: 1_700_000_000_000 + n,
    refreshToken: Redacted.make(REFRESH),
    scope: "read write"
  },
  client: { clientId: "client-a", clientSecret: Redacted.make(CLIENT_SECRET), method: "client_secret_basic" },
  issuer: "https://auth.example.com"
})

const publicEntry: TokenStoreEntry = {
  tokens: { accessToken: Redacted.make(ACCESS), tokenType: "Bearer" },
  client: { clientId: "client-b", method: "none" },
  issuer: "https://auth.example.com"
}

const plain = (e: TokenStoreEntry) => ({
  accessToken: Redacted.value(e.tokens.accessToken),
  refreshToken: e.tokens.refreshToken === undefined ? undefined : Redacted.value(e.tokens.refreshToken),
  expiresAt: e.tokens.expiresAt,
  scope: e.tokens.scope,
  clientId: e.client.clientId,
  clientSecret: e.client.clientSecret === undefined ? undefined : Redacted.value(e.client.clientSecret),
  method: e.client.method
})

const platform = Layer.merge(NodeFileSystem.layer, NodePath.layer)

describe("TokenStore (memory)", () => {
  it.effect("get, set, overwrite, remove, per key", () =>
    Effect.gen(function*() {
      const store = yield* TokenStore
      expect(Option.isNone(yield* store.get(key))).toBe(true)
      yield* store.set(key, entry(1))
      yield* store.set(otherKey, publicEntry)
      expect(plain(Option.getOrThrow(yield* store.get(key)))).toEqual(plain(entry(1)))
      yield* store.set(key, entry(2))
      expect(plain(Option.getOrThrow(yield* store.get(key)))).toEqual(plain(entry(2)))
      // The resource is compared exactly: another resource is another entry.
      expect(Option.isNone(yield* store.get({ ...key, resource: "https://mcp.example.com/mcp/" }))).toBe(true)
      yield* store.remove(key)
      yield* store.remove(key)
      expect(Option.isNone(yield* store.get(key))).toBe(true)
      expect(Option.isSome(yield* store.get(otherKey))).toBe(true)
    }).pipe(Effect.provide(layerMemory)))

  it.effect("remove with onlyIf deletes only an entry that satisfies it (compare-and-delete)", () =>
    Effect.gen(function*() {
      const store = yield* TokenStore
      yield* store.set(key, entry(2))
      yield* store.remove(key, { onlyIf: (stored) => Redacted.value(stored.tokens.accessToken) === `${ACCESS}-1` })
      expect(plain(Option.getOrThrow(yield* store.get(key)))).toEqual(plain(entry(2)))
      yield* store.remove(key, { onlyIf: (stored) => Redacted.value(stored.tokens.accessToken) === `${ACCESS}-2` })
      expect(Option.isNone(yield* store.get(key))).toBe(true)
    }).pipe(Effect.provide(layerMemory)))

  it.effect("exclusive: one at a time, re-entrant, its wait bounded (lock-timeout)", () =>
    Effect.gen(function*() {
      const store = yield* TokenStore
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        store.exclusive!(key, Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(gate)), { timeoutMs: 60_000 })
      )
      yield* Deferred.await(entered)
      // Held: another waits, and gives up at its bound (TestClock).
      const second = yield* Effect.fork(store.exclusive!(key, Effect.succeed("ran"), { timeoutMs: 1_000 }))
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(second))
      expect(error).toBeInstanceOf(TokenStoreError)
      expect(error).toMatchObject({ reason: "lock-timeout", operation: "exclusive" })
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      // Free again; within it, exclusive again does not wait for itself.
      const nested = yield* store.exclusive!(key, store.exclusive!(key, Effect.succeed("inner"), { timeoutMs: 1_000 }), { timeoutMs: 1_000 })
      expect(nested).toBe("inner")
    }).pipe(Effect.provide(layerMemory)))

  it.effect("each layer build is its own store", () =>
    Effect.gen(function*() {
      yield* Effect.provide(Effect.flatMap(TokenStore, (s) => s.set(key, entry())), layerMemory)
      const after = yield* Effect.provide(Effect.flatMap(TokenStore, (s) => s.get(key)), layerMemory)
      expect(Option.isNone(after)).toBe(true)
    }))
})

describe("TokenStore (file)", () => {
  let dir = ""
  let file = ""
  beforeEach(() => {
    dir = NodeFs.mkdtempSync(NodePathModule.join(Os.tmpdir(), "phasebound-tokens-"))
    file = NodePathModule.join(dir, "config", "phasebound", "tokens.json")
  })
  afterEach(() => {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  })

  const withStore = <A, E>(f: (store: TokenStore["Type"]) => Effect.Effect<A, E>, maxBytes?: number) =>
    Effect.flatMap(TokenStore, f).pipe(Effect.provide(layerFile(file, { maxBytes })), Effect.provide(platform))

  const failureOf = <A>(effect: Effect.Effect<A, TokenStoreError>) =>
    Effect.map(Effect.either(effect), (result) => {
      if (Either.isRight(result)) throw new Error("expected a failure")
      return result.left
    })

  const expectClean = (error: TokenStoreError, extra: ReadonlyArray<string> = []) => {
    expect(error).toBeInstanceOf(TokenStoreError)
    const views = [error.message, JSON.stringify(error), String(error), JSON.stringify(Object.entries(error))]
    for (const view of views) {
      for (const secret of [ACCESS, REFRESH, CLIENT_SECRET, dir, "tokens.json", ...extra]) {
        expect(view).not.toContain(secret)
      }
    }
    expect(error.cause).toBeUndefined()
  }

  const writeRaw = (content: string | Uint8Array, mode = 0o600) => {
    NodeFs.mkdirSync(NodePathModule.dirname(file), { recursive: true, mode: 0o700 })
    NodeFs.writeFileSync(file, content, { mode })
    NodeFs.chmodSync(file, mode)
  }

  it.effect("an absent file is an empty store; remove of an absent key writes nothing", () =>
    Effect.gen(function*() {
      expect(Option.isNone(yield* withStore((s) => s.get(key)))).toBe(true)
      yield* withStore((s) => s.remove(key))
      expect(NodeFs.existsSync(file)).toBe(false)
    }))

  it.effect("round trip, with modes 0600 for the file and 0700 for the directory, no temporary left", () =>
    Effect.gen(function*() {
      yield* withStore((s) => s.set(key, entry(1)))
      yield* withStore((s) => s.set(otherKey, publicEntry))
      const got = yield* withStore((s) => s.get(key))
      expect(plain(Option.getOrThrow(got))).toEqual(plain(entry(1)))
      expect(Redacted.isRedacted(Option.getOrThrow(got).tokens.accessToken)).toBe(true)
      expect(String(Option.getOrThrow(got).tokens.accessToken)).not.toContain(ACCESS)
      expect(plain(Option.getOrThrow(yield* withStore((s) => s.get(otherKey))))).toEqual(plain(publicEntry))

      expect(NodeFs.statSync(file).mode & 0o777).toBe(0o600)
      expect(NodeFs.statSync(NodePathModule.dirname(file)).mode & 0o777).toBe(0o700)
      expect(NodeFs.readdirSync(NodePathModule.dirname(file))).toEqual(["tokens.json"])
      // The secrets are in the file (and only there).
      const raw = NodeFs.readFileSync(file, "utf8")
      expect(raw).toContain(ACCESS)
      expect(raw).toContain(CLIENT_SECRET)

      yield* withStore((s) => s.remove(key))
      expect(Option.isNone(yield* withStore((s) => s.get(key)))).toBe(true)
      expect(Option.isSome(yield* withStore((s) => s.get(otherKey)))).toBe(true)
      expect(NodeFs.statSync(file).mode & 0o777).toBe(0o600)
    }))

  it.effect("another instance (another process's view) reads what is on disk at each call", () =>
    Effect.gen(function*() {
      const a = yield* makeFile(file)
      const b = yield* makeFile(file)
      yield* a.set(key, entry(1))
      expect(plain(Option.getOrThrow(yield* b.get(key)))).toEqual(plain(entry(1)))
      yield* b.set(key, entry(2))
      expect(plain(Option.getOrThrow(yield* a.get(key)))).toEqual(plain(entry(2)))
      yield* b.remove(key)
      expect(Option.isNone(yield* a.get(key))).toBe(true)
    }).pipe(Effect.provide(platform)))

  it.effect("concurrent sets within one process lose no entry", () =>
    Effect.gen(function*() {
      const store = yield* makeFile(file)
      const keys = Array.from({ length: 25 }, (_, i) => ({ resource: `https://mcp${i}.example.com/mcp`, clientId: "c" }))
      yield* Effect.forEach(keys, (k, i) => store.set(k, entry(i)), { concurrency: "unbounded", discard: true })
      for (const [i, k] of keys.entries()) {
        expect(plain(Option.getOrThrow(yield* store.get(k)))).toEqual(plain(entry(i)))
      }
      expect(NodeFs.readdirSync(NodePathModule.dirname(file))).toEqual(["tokens.json"])
    }).pipe(Effect.provide(platform)))

  it.effect("a file readable by group or others is refused and left as it is", () =>
    Effect.gen(function*() {
      yield* withStore((s) => s.set(key, entry(1)))
      const before = NodeFs.readFileSync(file, "utf8")
      for (const mode of [0o640, 0o604, 0o660]) {
        NodeFs.chmodSync(file, mode)
        const error = yield* failureOf(withStore((s) => s.get(key)))
        expect(error.reason).toBe("insecure-permissions")
        expect(error.operation).toBe("get")
        expectClean(error)
        const onSet = yield* failureOf(withStore((s) => s.set(key, entry(2))))
        expect(onSet.reason).toBe("insecure-permissions")
        expect(NodeFs.readFileSync(file, "utf8")).toBe(before)
        expect(NodeFs.statSync(file).mode & 0o777).toBe(mode)
      }
    }))

  it.effect("a corrupt or foreign file is refused without echoing it, and not overwritten", () =>
    Effect.gen(function*() {
      const marker = "CONTENT-MARKER-xyz"
      const contents = [
        `{"format": "phasebound/tokens", "version": 1, "entries": [ ${marker}`,
        JSON.stringify({ some: "other", tool: marker }),
        JSON.stringify({ format: "phasebound/tokens", version: 2, entries: [], note: marker }),
        JSON.stringify({
          format: "phasebound/tokens",
          version: 1,
          entries: [{ resource: marker, clientId: "c", tokens: { accessToken: ACCESS, tokenType: "MAC" }, client: { clientId: "c", method: "none" } }]
        }),
        new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])
      ]
      for (const content of contents) {
        writeRaw(content)
        const error = yield* failureOf(withStore((s) => s.get(key)))
        expect(error.reason).toBe("corrupt")
        expectClean(error, [marker])
        const onSet = yield* failureOf(withStore((s) => s.set(key, entry())))
        expect(onSet.reason).toBe("corrupt")
        expect(NodeFs.readFileSync(file)).toEqual(Buffer.from(content))
      }
    }))

  it.effect("an oversized file is refused", () =>
    Effect.gen(function*() {
      yield* withStore((s) => s.set(key, entry(1)))
      const size = NodeFs.statSync(file).size
      // Exactly the bound is read; one byte less is refused.
      expect(Option.isSome(yield* withStore((s) => s.get(key), size))).toBe(true)
      const error = yield* failureOf(withStore((s) => s.get(key), size - 1))
      expect(error.reason).toBe("too-large")
      expectClean(error)
      // The default bound: 1 MiB.
      writeRaw(" ".repeat(1024 * 1024 + 1))
      expect((yield* failureOf(withStore((s) => s.get(key)))).reason).toBe("too-large")
    }))

  it.effect("a directory at the path is not a file", () =>
    Effect.gen(function*() {
      NodeFs.mkdirSync(file, { recursive: true, mode: 0o700 })
      const error = yield* failureOf(withStore((s) => s.get(key)))
      expect(error.reason).toBe("not-a-file")
      expectClean(error)
    }))

  it.effect("an entry that cannot be stored is refused before any write", () =>
    Effect.gen(function*() {
      const bad: TokenStoreEntry = { ...entry(), tokens: { ...entry().tokens, expiresAt: Number.NaN } }
      const error = yield* failureOf(withStore((s) => s.set(key, bad)))
      expect(error.reason).toBe("invalid-entry")
      expectClean(error)
      expect(NodeFs.existsSync(file)).toBe(false)
    }))

  it.effect("a symbolic link at the path is refused: nothing read or written through it, the target untouched", () =>
    Effect.gen(function*() {
      const target = NodePathModule.join(dir, "elsewhere.json")
      yield* withStore((s) => s.set(key, entry(1)))
      NodeFs.renameSync(file, target)
      NodeFs.symlinkSync(target, file)
      const before = NodeFs.readFileSync(target, "utf8")
      const error = yield* failureOf(withStore((s) => s.get(key)))
      expect(error.reason).toBe("symlink")
      expectClean(error, ["elsewhere"])
      expect((yield* failureOf(withStore((s) => s.set(key, entry(2))))).reason).toBe("symlink")
      expect((yield* failureOf(withStore((s) => s.remove(key)))).reason).toBe("symlink")
      expect(NodeFs.lstatSync(file).isSymbolicLink()).toBe(true)
      expect(NodeFs.readFileSync(target, "utf8")).toBe(before)
      // A dangling link too.
      NodeFs.rmSync(target)
      expect((yield* failureOf(withStore((s) => s.set(key, entry(2))))).reason).toBe("symlink")
      expect(NodeFs.existsSync(target)).toBe(false)
    }))

  it.effect("remove with onlyIf: an entry another instance replaced meanwhile is kept", () =>
    Effect.gen(function*() {
      const a = yield* makeFile(file)
      const b = yield* makeFile(file)
      yield* a.set(key, entry(1))
      // "Another process" stores newer tokens; a's refresh token then failed: only its own is dropped.
      yield* b.set(key, { ...entry(2), tokens: { ...entry(2).tokens, refreshToken: Redacted.make("rotated") } })
      const failed = Option.getOrThrow(yield* a.get(key))
      yield* a.remove(key, { onlyIf: (stored) => Redacted.value(stored.tokens.refreshToken!) === REFRESH })
      expect(Redacted.value(Option.getOrThrow(yield* b.get(key)).tokens.refreshToken!)).toBe("rotated")
      expect(Redacted.value(failed.tokens.refreshToken!)).toBe("rotated")
      yield* a.remove(key, { onlyIf: (stored) => Redacted.value(stored.tokens.refreshToken!) === "rotated" })
      expect(Option.isNone(yield* b.get(key))).toBe(true)
    }).pipe(Effect.provide(platform)))

  const lockFile = () => NodePathModule.join(NodePathModule.dirname(file), ".tokens.json.lock")

  it.live("the lock file: created beside the file with mode 0600 while held, removed after", () =>
    Effect.gen(function*() {
      const store = yield* makeFile(file)
      const seen = yield* store.exclusive!(key, Effect.sync(() => NodeFs.statSync(lockFile()).mode & 0o777), { timeoutMs: 1_000 })
      expect(seen).toBe(0o600)
      expect(NodeFs.existsSync(lockFile())).toBe(false)
      // set within exclusive takes no second lock (it would wait for itself).
      yield* store.exclusive!(key, store.set(key, entry(1)), { timeoutMs: 1_000 })
      expect(plain(Option.getOrThrow(yield* store.get(key)))).toEqual(plain(entry(1)))
      expect(NodeFs.readdirSync(NodePathModule.dirname(file))).toEqual(["tokens.json"])
    }).pipe(Effect.provide(platform)))

  it.live("a live lock (another holder) is waited for within the bound: lock-timeout, the file untouched", () =>
    Effect.gen(function*() {
      yield* withStore((s) => s.set(key, entry(1)))
      const before = NodeFs.readFileSync(file, "utf8")
      NodeFs.writeFileSync(lockFile(), "someone-else\n", { mode: 0o600 })
      const store = yield* makeFile(file, { lockTimeoutMs: 200 })
      const error = yield* failureOf(store.set(key, entry(2)))
      expect(error).toMatchObject({ reason: "lock-timeout", operation: "set" })
      expectClean(error)
      expect(yield* failureOf(store.exclusive!(key, Effect.void, { timeoutMs: 100 }))).toMatchObject({ reason: "lock-timeout", operation: "exclusive" })
      expect(NodeFs.readFileSync(file, "utf8")).toBe(before)
      // Not ours: left in place.
      expect(NodeFs.readFileSync(lockFile(), "utf8")).toBe("someone-else\n")
      // Released by its holder: the next set goes through.
      NodeFs.rmSync(lockFile())
      yield* store.set(key, entry(2))
      expect(plain(Option.getOrThrow(yield* store.get(key)))).toEqual(plain(entry(2)))
    }).pipe(Effect.provide(platform)))

  it.live("a stale lock (its holder crashed: untouched for staleLockMs) is taken over", () =>
    Effect.gen(function*() {
      NodeFs.mkdirSync(NodePathModule.dirname(file), { recursive: true, mode: 0o700 })
      NodeFs.writeFileSync(lockFile(), "crashed-holder\n", { mode: 0o600 })
      const past = new Date(Date.now() - 60_000)
      NodeFs.utimesSync(lockFile(), past, past)
      const store = yield* makeFile(file, { lockTimeoutMs: 5_000, staleLockMs: 10_000 })
      yield* store.set(key, entry(1))
      expect(plain(Option.getOrThrow(yield* store.get(key)))).toEqual(plain(entry(1)))
      expect(NodeFs.readdirSync(NodePathModule.dirname(file))).toEqual(["tokens.json"])
    }).pipe(Effect.provide(platform)))

  it.live("exclusive across two instances (two processes' views): the second runs after the first", () =>
    Effect.gen(function*() {
      const a = yield* makeFile(file)
      const b = yield* makeFile(file)
      const order: Array<string> = []
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        a.exclusive!(
          key,
          Effect.gen(function*() {
            order.push("a in")
            yield* Deferred.succeed(entered, undefined)
            yield* Deferred.await(gate)
            yield* a.set(key, entry(1))
            order.push("a out")
          }),
          { timeoutMs: 5_000 }
        )
      )
      yield* Deferred.await(entered)
      const second = yield* Effect.fork(
        b.exclusive!(
          key,
          Effect.gen(function*() {
            order.push("b in")
            // What a saw last: the re-read under the lock.
            return Option.map(yield* b.get(key), plain)
          }),
          { timeoutMs: 5_000 }
        )
      )
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      expect(yield* Fiber.join(second)).toEqual(Option.some(plain(entry(1))))
      expect(order).toEqual(["a in", "a out", "b in"])
    }).pipe(Effect.provide(platform)))

  it.effect("an unreadable file is an io error naming no path", () =>
    Effect.gen(function*() {
      if (process.getuid?.() === 0) return
      yield* withStore((s) => s.set(key, entry(1)))
      NodeFs.chmodSync(file, 0o000)
      const error = yield* failureOf(withStore((s) => s.get(key)))
      expect(error.reason).toBe("io")
      expect(error.systemReason).toBe("PermissionDenied")
      expectClean(error)
    }))
})

describe("defaultTokenFile", () => {
  it("follows each platform's config directory", () => {
    expect(defaultTokenFile({ HOME: "/home/u" }, "linux")).toEqual(Option.some("/home/u/.config/phasebound/tokens.json"))
    expect(defaultTokenFile({ HOME: "/home/u", XDG_CONFIG_HOME: "/xdg/" }, "linux")).toEqual(
      Option.some("/xdg/phasebound/tokens.json")
    )
    // A relative XDG_CONFIG_HOME is ignored (XDG Base Directory spec).
    expect(defaultTokenFile({ HOME: "/home/u", XDG_CONFIG_HOME: "rel" }, "freebsd")).toEqual(
      Option.some("/home/u/.config/phasebound/tokens.json")
    )
    expect(defaultTokenFile({ HOME: "/Users/u", XDG_CONFIG_HOME: "/xdg" }, "darwin")).toEqual(
      Option.some("/Users/u/Library/Application Support/phasebound/tokens.json")
    )
    expect(defaultTokenFile({ APPDATA: "C:\\Users\\u\\AppData\\Roaming" }, "win32")).toEqual(
      Option.some("C:\\Users\\u\\AppData\\Roaming\\phasebound\\tokens.json")
    )
    expect(defaultTokenFile({ USERPROFILE: "C:\\Users\\u" }, "win32")).toEqual(
      Option.some("C:\\Users\\u\\AppData\\Roaming\\phasebound\\tokens.json")
    )
    expect(defaultTokenFile({}, "linux")).toEqual(Option.none())
    expect(defaultTokenFile({ HOME: "" }, "darwin")).toEqual(Option.none())
    expect(defaultTokenFile({}, "win32")).toEqual(Option.none())
  })
})
