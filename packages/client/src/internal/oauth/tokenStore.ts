/**
 * Token storage (docs/AUTHORIZATION.md, "Storage"): a service holding, per MCP server and
 * client, the tokens a token endpoint issued (`token.ts`'s `TokenSet`) and the client
 * registration they were issued to (`TokenClient`), so that a refresh needs no new registration.
 *
 * The key is the canonical resource URI of the MCP server (RFC 8707, as discovery found it)
 * plus the client id, compared as exact strings: the store does not canonicalize.
 *
 * Two implementations:
 *
 * - `layerMemory`, the default: a `Ref` of a `Map`, gone with the process.
 * - `layerFile(path)`, for the CLI: one JSON file holding every server's entry, shared by every
 *   process of the user. Every operation reads the file anew (another process's writes are
 *   seen); a `set` or `remove` is a read-modify-write under a lock across processes (see
 *   "The lock" below), so no process's update is lost or undone by a stale snapshot, and is
 *   written atomically: a temporary file in the same directory, created exclusively with mode
 *   0600, written and synced, then renamed over the file. The directory is created with mode
 *   0700 when missing (an existing one is left as it is). On read the path must not be a
 *   symbolic link (never read or replaced through one), the file must be a regular file, of at
 *   most `maxBytes` (1 MiB by default, counted while reading), with no permission bit for group
 *   or others (unless `checkPermissions: false`, for platforms without POSIX modes), and in this
 *   module's format; anything else is a `TokenStoreError` and the file is not used (nor
 *   overwritten).
 *
 * Both offer `exclusive(key, effect)`: `effect` runs alone among the store's users (for the
 * file, among processes), and its own `set` and `remove` do not wait for the lock it holds. A
 * refresh runs inside it: it re-reads the entry, adopts a refresh token another process has
 * rotated meanwhile, and only else sends its own (a rotated refresh token sent twice makes an
 * authorization server with reuse detection revoke the whole grant, RFC 9700 §4.14.2). And
 * `remove(key, { onlyIf })` is a compare-and-delete: an `invalid_grant` drops the entry only
 * while it still holds the token that failed.
 *
 * The lock: a file `.NAME.lock` beside the token file, created exclusively (mode 0600, never
 * through a symbolic link) with a random nonce in it; released by removing it when it still
 * holds that nonce. Its holder touches it every `heartbeatMs` (2 s); a waiter polls it (5-25
 * ms apart) and takes over a lock untouched for `staleLockMs` (10 s: its holder crashed). Every
 * wait is bounded: by the caller's `timeoutMs` for `exclusive` (the authorization budget), by
 * `lockTimeoutMs` (15 s) for `set` and `remove`; past it, a `TokenStoreError("lock-timeout")`.
 *
 * Secrets: the tokens and the client secret are `Redacted` in and out; their values are written
 * only into the file itself. A `TokenStoreError` has only a reason, the operation and, for an
 * I/O failure, the platform's reason (`NotFound`, `PermissionDenied`, ...): never a path, a
 * token or any of the file's content, and it keeps no cause (a `PlatformError` names the path;
 * a parse error may echo the content).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { canonicalResource } from "./discoveryUrls.js"
import type { TokenClient, TokenSet } from "./token.js"

/** Which entry: the MCP server (its canonical resource URI) and the client id registered with its authorization server. */
export interface TokenStoreKey {
  readonly resource: string
  readonly clientId: string
}

/**
 * Where a configuration's tokens are stored: the server's canonical URI (as configured, so that
 * `phasebound logout` finds them without asking the server) and the configuration's client (its
 * id, its metadata document URL, or dynamic registration).
 */
export const storeKeyOf = (
  serverUrl: URL,
  client: { readonly clientId?: string | undefined; readonly clientMetadataUrl?: string | undefined }
): TokenStoreKey => ({
  resource: canonicalResource(serverUrl),
  clientId: client.clientId ?? client.clientMetadataUrl ?? "dynamic-registration"
})

/**
 * What is stored for a key: the tokens, the registration they belong to (never a private key:
 * a `private_key_jwt` client's key comes from its configuration each time) and the issuer of
 * the authorization server that issued them (a refresh token goes to that server only).
 */
export interface TokenStoreEntry {
  readonly tokens: TokenSet
  readonly client: StoredClient
  readonly issuer: string
}

/** A registration as stored. */
export type StoredClient = Omit<TokenClient, "assertion">

export type TokenStoreErrorReason =
  /** The file is readable or writable by group or others. */
  | "insecure-permissions"
  /** The path is not a regular file. */
  | "not-a-file"
  /** The file is over the size bound. */
  | "too-large"
  /** The file is not JSON, or not this module's format (a foreign or damaged file). */
  | "corrupt"
  /** An entry that cannot be stored (for instance a non-finite `expiresAt`). */
  | "invalid-entry"
  /** The path is a symbolic link: the file is never read or replaced through one. */
  | "symlink"
  /** The lock of the file was held by another process for longer than the wait allowed. */
  | "lock-timeout"
  /** The file system failed (see `systemReason`). */
  | "io"

/** A failure of the token store. No path, token or file content in any field. */
export class TokenStoreError extends Data.TaggedError("TokenStoreError")<{
  readonly reason: TokenStoreErrorReason
  readonly operation: "get" | "set" | "remove" | "exclusive"
  /** For `io`: the platform's reason (`NotFound`, `PermissionDenied`, ...). */
  readonly systemReason?: string | undefined
}> {
  override get message(): string {
    return `Token store ${this.operation} failed: ${this.reason}${this.systemReason === undefined ? "" : ` (${this.systemReason})`}`
  }
}

/** A condition on the entry `remove` would delete (compare-and-delete). */
export interface RemoveOptions {
  /** Delete only when the stored entry satisfies this (for instance: it still holds the refresh token that failed). */
  readonly onlyIf?: ((stored: TokenStoreEntry) => boolean) | undefined
}

/** The token store service. */
export interface TokenStoreService {
  readonly get: (key: TokenStoreKey) => Effect.Effect<Option.Option<TokenStoreEntry>, TokenStoreError>
  readonly set: (key: TokenStoreKey, entry: TokenStoreEntry) => Effect.Effect<void, TokenStoreError>
  /** Removing an absent key, or one whose entry fails `onlyIf`, is not an error (and changes nothing). */
  readonly remove: (key: TokenStoreKey, options?: RemoveOptions) => Effect.Effect<void, TokenStoreError>
  /**
   * Runs `effect` alone among the store's users (see the module comment); waits at most
   * `timeoutMs` for the others, else fails with `TokenStoreError("lock-timeout")`. Optional: a
   * store of the caller's own may leave it out (its users then are not kept apart).
   */
  readonly exclusive?: <A, E, R>(
    key: TokenStoreKey,
    effect: Effect.Effect<A, E, R>,
    options: { readonly timeoutMs: number }
  ) => Effect.Effect<A, E | TokenStoreError, R>
}

export class TokenStore extends Context.Tag("@phasebound/client/TokenStore")<TokenStore, TokenStoreService>() {}

const mapKey = (key: TokenStoreKey): string => JSON.stringify([key.resource, key.clientId])

/**
 * The locks the current fiber holds (by name): `exclusive` within `exclusive`, and `set` within
 * it, do not wait for themselves.
 */
const heldLocks = FiberRef.unsafeMake<ReadonlySet<string>>(new Set())

/** Runs `effect` under the lock `name`, taken with `lock` unless this fiber already holds it. */
const reentrant = <A, E, R, E2>(
  name: string,
  lock: <A1, E1, R1>(locked: Effect.Effect<A1, E1, R1>) => Effect.Effect<A1, E1 | E2, R1>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | E2, R> =>
  Effect.flatMap(FiberRef.get(heldLocks), (held) => held.has(name) ? effect : lock(Effect.locally(effect, heldLocks, new Set([...held, name]))))

/** `effect` with the semaphore's one permit, waited for at most `timeoutMs` (`lock-timeout`, as `exclusive`). */
const withPermit = <A, E, R>(
  semaphore: Effect.Semaphore,
  timeoutMs: number,
  effect: Effect.Effect<A, E, R>,
  operation: TokenStoreError["operation"] = "exclusive"
): Effect.Effect<A, E | TokenStoreError, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(
      restore(semaphore.take(1)).pipe(
        Effect.timeoutFail({ duration: boundedWait(timeoutMs), onTimeout: () => lockTimeout(operation) })
      ),
      () => Effect.ensuring(restore(effect), semaphore.release(1))
    )
  )

const lockTimeout = (operation: TokenStoreError["operation"]) => new TokenStoreError({ operation, reason: "lock-timeout" })

/** A wait of `timeoutMs` at most (NaN and negatives: none at all). */
const boundedWait = (timeoutMs: number): Duration.Duration => timeoutMs > 0 ? Duration.millis(timeoutMs) : Duration.zero

// ---------------------------------------------------------------------------------------------
// Memory

let memoryStores = 0

/** A store in memory, for the life of the process. */
export const makeMemory: Effect.Effect<TokenStoreService> = Effect.gen(function*() {
  const ref = yield* Ref.make(new Map<string, TokenStoreEntry>())
  const semaphore = yield* Effect.makeSemaphore(1)
  const lockName = `memory:${++memoryStores}`
  return {
    get: (key) => Effect.map(Ref.get(ref), (map) => Option.fromNullable(map.get(mapKey(key)))),
    set: (key, entry) =>
      Ref.update(ref, (map) => {
        const next = new Map(map)
        next.set(mapKey(key), entry)
        return next
      }),
    remove: (key, options) =>
      Ref.update(ref, (map) => {
        const stored = map.get(mapKey(key))
        if (stored === undefined || (options?.onlyIf !== undefined && !options.onlyIf(stored))) return map
        const next = new Map(map)
        next.delete(mapKey(key))
        return next
      }),
    exclusive: (_key, effect, { timeoutMs }) => reentrant(lockName, (locked) => withPermit(semaphore, timeoutMs, locked), effect)
  } satisfies TokenStoreService
})

/** The default: a store in memory. */
export const layerMemory: Layer.Layer<TokenStore> = Layer.effect(TokenStore, makeMemory)

// ---------------------------------------------------------------------------------------------
// File

const FORMAT = "phasebound/tokens"

const FileEntry = Schema.Struct({
  resource: Schema.String,
  clientId: Schema.String,
  tokens: Schema.Struct({
    accessToken: Schema.String,
    tokenType: Schema.Literal("Bearer"),
    expiresAt: Schema.optional(Schema.Finite),
    refreshToken: Schema.optional(Schema.String),
    scope: Schema.optional(Schema.String)
  }),
  client: Schema.Struct({
    clientId: Schema.String,
    clientSecret: Schema.optional(Schema.String),
    method: Schema.Literal("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
  }),
  issuer: Schema.String
})
type FileEntry = typeof FileEntry.Type

const FileDocument = Schema.Struct({
  format: Schema.Literal(FORMAT),
  version: Schema.Literal(1),
  entries: Schema.Array(FileEntry)
})
type FileDocument = typeof FileDocument.Type

const decodeDocument = Schema.decodeUnknownEither(FileDocument, { onExcessProperty: "error", errors: "first" })
const validateEntry = Schema.validateEither(FileEntry, { onExcessProperty: "error", errors: "first" })

const toFileEntry = (key: TokenStoreKey, entry: TokenStoreEntry): FileEntry => {
  const { client, tokens } = entry
  return {
    resource: key.resource,
    clientId: key.clientId,
    tokens: {
      accessToken: Redacted.value(tokens.accessToken),
      tokenType: tokens.tokenType,
      ...(tokens.expiresAt === undefined ? {} : { expiresAt: tokens.expiresAt }),
      ...(tokens.refreshToken === undefined ? {} : { refreshToken: Redacted.value(tokens.refreshToken) }),
      ...(tokens.scope === undefined ? {} : { scope: tokens.scope })
    },
    client: {
      clientId: client.clientId,
      ...(client.clientSecret === undefined ? {} : { clientSecret: Redacted.value(client.clientSecret) }),
      method: client.method
    },
    issuer: entry.issuer
  }
}

const fromFileEntry = (entry: FileEntry): TokenStoreEntry => ({
  tokens: {
    accessToken: Redacted.make(entry.tokens.accessToken),
    tokenType: entry.tokens.tokenType,
    ...(entry.tokens.expiresAt === undefined ? {} : { expiresAt: entry.tokens.expiresAt }),
    ...(entry.tokens.refreshToken === undefined ? {} : { refreshToken: Redacted.make(entry.tokens.refreshToken) }),
    ...(entry.tokens.scope === undefined ? {} : { scope: entry.tokens.scope })
  },
  client: {
    clientId: entry.client.clientId,
    ...(entry.client.clientSecret === undefined ? {} : { clientSecret: Redacted.make(entry.client.clientSecret) }),
    method: entry.client.method
  },
  issuer: entry.issuer
})

const sameKey = (entry: FileEntry, key: TokenStoreKey): boolean => entry.resource === key.resource && entry.clientId === key.clientId

export interface FileStoreOptions {
  /** The largest file read, in bytes; default 1 MiB. */
  readonly maxBytes?: number | undefined
  /**
   * Refuse a file with any permission bit for group or others; default `true`. Pass `false`
   * only where the platform has no POSIX modes (Windows), where the file is protected by the
   * user profile's ACL instead.
   */
  readonly checkPermissions?: boolean | undefined
  /** The longest wait for the lock in `set` and `remove`, in milliseconds; default 15 s. */
  readonly lockTimeoutMs?: number | undefined
  /** A lock untouched this long (milliseconds) is a crashed holder's and is taken over; default 10 s. */
  readonly staleLockMs?: number | undefined
}

export const defaultMaxBytes = 1024 * 1024
export const defaultLockTimeoutMs = 15_000
export const defaultStaleLockMs = 10_000
/** How often a holder touches its lock: well within `staleLockMs`. */
const heartbeatMs = 2_000

const randomHex = (): string => {
  const bytes = new Uint8Array(8)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/** A store in one JSON file at `path` (see the module's comment). */
export const makeFile = (
  path: string,
  options: FileStoreOptions = {}
): Effect.Effect<TokenStoreService, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const pathService = yield* Path.Path
    const maxBytes = options.maxBytes ?? defaultMaxBytes
    const checkPermissions = options.checkPermissions ?? true
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
      return yield* Effect.dieMessage("TokenStore: maxBytes must be a safe integer of at least 1")
    }
    const directory = pathService.dirname(path)
    const baseName = pathService.basename(path)
    const lockPath = pathService.join(directory, `.${baseName}.lock`)
    const lockName = `file:${pathService.resolve(lockPath)}`
    const lockTimeoutMs = options.lockTimeoutMs ?? defaultLockTimeoutMs
    const staleLockMs = options.staleLockMs ?? defaultStaleLockMs
    const semaphore = yield* Effect.makeSemaphore(1)

    type Operation = TokenStoreError["operation"]
    const fail = (operation: Operation, reason: TokenStoreErrorReason) => Effect.fail(new TokenStoreError({ operation, reason }))
    const ioError = (operation: Operation) => (error: PlatformError) =>
      new TokenStoreError({
        operation,
        reason: "io",
        systemReason: error._tag === "SystemError" ? error.reason : "BadArgument"
      })

    /** The document on disk; an empty one when there is no file. */
    const read = (operation: Operation): Effect.Effect<FileDocument, TokenStoreError> =>
      Effect.scoped(
        Effect.gen(function*() {
          // Only a symbolic link has a link target (a regular file fails with EINVAL, none with ENOENT).
          if (Either.isRight(yield* Effect.either(fs.readLink(path)))) return yield* fail(operation, "symlink")
          const opened = yield* Effect.either(fs.open(path, { flag: "r" }))
          if (Either.isLeft(opened)) {
            const error = opened.left
            if (error._tag === "SystemError" && error.reason === "NotFound") {
              return { format: FORMAT, version: 1, entries: [] } as FileDocument
            }
            return yield* Effect.fail(ioError(operation)(error))
          }
          const file = opened.right
          const info = yield* Effect.mapError(file.stat, ioError(operation))
          if (info.type !== "File") return yield* fail(operation, "not-a-file")
          if (checkPermissions && (info.mode & 0o077) !== 0) return yield* fail(operation, "insecure-permissions")
          if (info.size > BigInt(maxBytes)) return yield* fail(operation, "too-large")
          // Counted while reading: the file may have grown since the stat.
          const chunks: Array<Uint8Array> = []
          let total = 0
          while (true) {
            const chunk = yield* Effect.mapError(file.readAlloc(FileSystem.Size(64 * 1024)), ioError(operation))
            if (Option.isNone(chunk)) break
            total += chunk.value.length
            if (total > maxBytes) return yield* fail(operation, "too-large")
            chunks.push(chunk.value)
          }
          const bytes = new Uint8Array(total)
          let offset = 0
          for (const chunk of chunks) {
            bytes.set(chunk, offset)
            offset += chunk.length
          }
          let json: unknown
          try {
            json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
          } catch {
            return yield* fail(operation, "corrupt")
          }
          const decoded = decodeDocument(json)
          if (Either.isLeft(decoded)) return yield* fail(operation, "corrupt")
          return decoded.right
        })
      )

    /** Atomic replacement: a private temporary file in the same directory, then a rename. */
    const write = (operation: Operation, document: FileDocument): Effect.Effect<void, TokenStoreError> => {
      const bytes = new TextEncoder().encode(JSON.stringify(document, null, 2) + "\n")
      const temporary = pathService.join(directory, `.${baseName}.${randomHex()}.tmp`)
      const writeTemporary = Effect.scoped(
        Effect.gen(function*() {
          const file = yield* fs.open(temporary, { flag: "wx", mode: 0o600 })
          yield* file.writeAll(bytes)
          yield* file.sync
        })
      )
      return fs.makeDirectory(directory, { recursive: true, mode: 0o700 }).pipe(
        Effect.zipRight(
          writeTemporary.pipe(
            Effect.zipRight(fs.rename(temporary, path)),
            Effect.onError(() => Effect.ignore(fs.remove(temporary)))
          )
        ),
        Effect.mapError(ioError(operation))
      )
    }

    // The lock across processes (see the module comment).

    /** The wall clock: a lock's age is measured against the file system's times, not Effect's clock. */
    const wallClock = Effect.sync(() => Date.now())

    const lockNonce = (operation: Operation): Effect.Effect<Option.Option<string>, TokenStoreError> =>
      fs.readFileString(lockPath).pipe(
        Effect.map((text) => Option.some(text.trim())),
        Effect.catchAll((error) =>
          error._tag === "SystemError" && error.reason === "NotFound"
            ? Effect.succeedNone
            : Effect.fail(ioError(operation)(error))
        )
      )

    const lockAge = Effect.flatMap(
      Effect.option(fs.stat(lockPath)),
      (info) => Effect.map(wallClock, (now) => Option.flatMap(info, (stat) => Option.map(stat.mtime, (mtime) => now - mtime.getTime())))
    )

    /** A lock untouched for `staleLockMs` is removed, if it is still the one judged stale. */
    const takeOverIfStale = (operation: Operation) =>
      Effect.gen(function*() {
        const age = yield* lockAge
        if (Option.isNone(age) || age.value <= staleLockMs) return
        const nonce = yield* lockNonce(operation)
        if (Option.isNone(nonce)) return
        const again = yield* lockAge
        // Touched or replaced since: a live holder, or another waiter took over first.
        if (Option.isNone(again) || again.value <= staleLockMs) return
        if (Option.contains(yield* lockNonce(operation), nonce.value)) yield* Effect.ignore(fs.remove(lockPath))
      })

    /** One try: the lock file created exclusively, with `nonce` in it. */
    const tryLock = (operation: Operation, nonce: string): Effect.Effect<boolean, TokenStoreError> =>
      Effect.scoped(
        Effect.gen(function*() {
          const opened = yield* Effect.either(fs.open(lockPath, { flag: "wx", mode: 0o600 }))
          if (Either.isLeft(opened)) {
            const error = opened.left
            if (error._tag === "SystemError" && error.reason === "AlreadyExists") return false
            return yield* Effect.fail(ioError(operation)(error))
          }
          yield* opened.right.writeAll(new TextEncoder().encode(`${nonce}\n`)).pipe(
            Effect.tapError(() => Effect.ignore(fs.remove(lockPath))),
            Effect.mapError(ioError(operation))
          )
          return true
        })
      )

    /**
     * `effect` under the lock file, waited for at most `timeoutMs`. The lock is released
     * whatever happens once it was taken (interruption included: each try is uninterruptible and
     * records what it took).
     */
    const withLockFile = <A, E, R>(
      operation: Operation,
      timeoutMs: number,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | TokenStoreError, R> =>
      Effect.suspend(() => {
        const nonce = randomHex()
        let owned = false
        const attempt = Effect.uninterruptible(
          Effect.tap(tryLock(operation, nonce), (taken) => Effect.sync(() => void (owned = taken)))
        )
        const poll = Effect.sleep(Duration.millis(5 + Math.floor(Math.random() * 20)))
        const acquire: Effect.Effect<void, TokenStoreError> = Effect.flatMap(
          attempt,
          (taken) => taken ? Effect.void : Effect.zipRight(Effect.zipRight(takeOverIfStale(operation), poll), acquire)
        )
        const release = Effect.suspend(() => {
          if (!owned) return Effect.void
          // Removed only while it is ours: a holder judged stale must not remove its successor's lock.
          return lockNonce(operation).pipe(
            Effect.flatMap((held) => Option.contains(held, nonce) ? fs.remove(lockPath) : Effect.void),
            // Left behind, the lock is a stale one for the next waiter: nothing to fail for.
            Effect.ignore
          )
        })
        const touch = Effect.flatMap(wallClock, (now) => Effect.ignore(fs.utimes(lockPath, new Date(now), new Date(now))))
        const heartbeat = Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(heartbeatMs)), touch))
        return Effect.gen(function*() {
          yield* Effect.mapError(fs.makeDirectory(directory, { recursive: true, mode: 0o700 }), ioError(operation))
          yield* acquire.pipe(
            Effect.timeoutFail({ duration: boundedWait(timeoutMs), onTimeout: () => lockTimeout(operation) })
          )
          const beating = yield* Effect.fork(Effect.interruptible(heartbeat))
          return yield* Effect.ensuring(effect, Fiber.interrupt(beating))
        }).pipe(Effect.ensuring(release))
      })

    /** `effect` alone among this process's fibers (the semaphore) and among processes (the lock file). */
    const locked = <A, E, R>(
      operation: Operation,
      timeoutMs: number,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | TokenStoreError, R> =>
      reentrant(
        lockName,
        (inner) => withPermit(semaphore, timeoutMs, withLockFile(operation, timeoutMs, inner), operation),
        effect
      )

    const service: TokenStoreService = {
      get: (key) =>
        Effect.map(read("get"), (document) =>
          Option.map(
            Option.fromNullable(document.entries.find((entry) => sameKey(entry, key))),
            fromFileEntry
          )),
      set: (key, entry) =>
        Effect.suspend(() => {
          const fileEntry = toFileEntry(key, entry)
          if (Either.isLeft(validateEntry(fileEntry))) return fail("set", "invalid-entry")
          return locked(
            "set",
            lockTimeoutMs,
            Effect.gen(function*() {
              const document = yield* read("set")
              const entries = document.entries.filter((existing) => !sameKey(existing, key))
              entries.push(fileEntry)
              yield* write("set", { format: FORMAT, version: 1, entries })
            })
          )
        }),
      remove: (key, removeOptions) => {
        const removeUnderLock = locked(
          "remove",
          lockTimeoutMs,
          Effect.gen(function*() {
            const document = yield* read("remove")
            const stored = document.entries.find((existing) => sameKey(existing, key))
            if (stored === undefined) return
            if (removeOptions?.onlyIf !== undefined && !removeOptions.onlyIf(fromFileEntry(stored))) return
            const entries = document.entries.filter((existing) => !sameKey(existing, key))
            yield* write("remove", { format: FORMAT, version: 1, entries })
          })
        )
        // Nothing to remove: no lock taken (nor a directory created).
        return Effect.flatMap(
          read("remove"),
          (seen) => seen.entries.some((existing) => sameKey(existing, key)) ? removeUnderLock : Effect.void
        )
      },
      exclusive: (_key, effect, { timeoutMs }) => locked("exclusive", timeoutMs, effect)
    }
    return service
  })

/** A store in one JSON file at `path`, readable only by the user (see the module's comment). */
export const layerFile = (
  path: string,
  options?: FileStoreOptions
): Layer.Layer<TokenStore, never, FileSystem.FileSystem | Path.Path> => Layer.effect(TokenStore, makeFile(path, options))

// ---------------------------------------------------------------------------------------------
// Where the CLI keeps it

const joinWith = (separator: string, base: string, ...parts: ReadonlyArray<string>): string => {
  let result = base
  while (result.length > 1 && (result.endsWith("/") || result.endsWith(separator))) result = result.slice(0, -1)
  for (const part of parts) result = result.endsWith(separator) ? `${result}${part}` : `${result}${separator}${part}`
  return result
}

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/**
 * The token file in the user's config directory: `$XDG_CONFIG_HOME` (when absolute) or
 * `~/.config` on Linux and other Unixes, `~/Library/Application Support` on macOS, `%APPDATA%`
 * on Windows (else `%USERPROFILE%\AppData\Roaming`), then `phasebound/tokens.json`. `none` when
 * the environment names no home.
 *
 * @param env the process environment (`process.env`)
 * @param platform `process.platform`
 */
export const defaultTokenFile = (
  env: Readonly<Record<string, string | undefined>>,
  platform: string
): Option.Option<string> => {
  if (platform === "win32") {
    const appData = env["APPDATA"]
    if (nonEmpty(appData)) return Option.some(joinWith("\\", appData, "phasebound", "tokens.json"))
    const profile = env["USERPROFILE"]
    if (nonEmpty(profile)) {
      return Option.some(joinWith("\\", profile, "AppData", "Roaming", "phasebound", "tokens.json"))
    }
    return Option.none()
  }
  const home = env["HOME"]
  if (platform === "darwin") {
    return nonEmpty(home)
      ? Option.some(joinWith("/", home, "Library", "Application Support", "phasebound", "tokens.json"))
      : Option.none()
  }
  const xdg = env["XDG_CONFIG_HOME"]
  if (nonEmpty(xdg) && xdg.startsWith("/")) return Option.some(joinWith("/", xdg, "phasebound", "tokens.json"))
  return nonEmpty(home) ? Option.some(joinWith("/", home, ".config", "phasebound", "tokens.json")) : Option.none()
}
