/**
 * Connections sharing a token store (docs/AUTHORIZATION.md, "Storage"): a connection whose
 * refresh token another one has rotated adopts the stored tokens instead of sending its own
 * again, and an `invalid_grant` drops the stored entry only while it still holds the refresh
 * token that failed. Real processes sharing the token file: tokenStoreProcesses.test.ts.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Authorization, McpClient } from "../../src/index.js"
import { makeMemory, storeKeyOf, type TokenStoreService } from "../../src/internal/oauth/tokenStore.js"
import { failureOf } from "../support/harness.js"
import { consentingUser, oauthServer, protectedServer, redirectUri, textOf, tokenRequests } from "../support/oauth.js"

const storeLayer = (store: TokenStoreService) => Layer.succeed(Authorization.TokenStore, store)

describe("connections sharing a token store", () => {
  it.scopedLive("Authorization.layerMemoryTokenStore: the connections of one build share its tokens; each build is a new store", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const user = consentingUser(oauth)
      const connect = McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(user.layer))
      yield* Effect.all([connect, connect]).pipe(Effect.provide(Authorization.layerMemoryTokenStore))
      // The second connection found the first one's tokens.
      expect(user.urls).toHaveLength(1)
      // Provided to one connection, as the Promise API does: tokens of its own.
      yield* connect.pipe(Effect.provide(Authorization.layerMemoryTokenStore))
      expect(user.urls).toHaveLength(2)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("Authorization.layerNoInteraction: no redirect URI needed, and a 401 that needs a user is returned as it is", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const { error } = yield* failureOf(McpClient.connect({ url: srv.url, auth: {} }).pipe(Effect.provide(Authorization.layerDefaults)))
      expect(error).toMatchObject({ _tag: "Unauthorized", status: 401 })
      expect(tokenRequests(oauth)).toHaveLength(0)
      // With an interactive step, the redirect URI is required.
      const refused = yield* failureOf(
        McpClient.connect({ url: srv.url, auth: {} }).pipe(
          Effect.provide(Layer.merge(Authorization.layerMemoryTokenStore, consentingUser(oauth).layer))
        )
      )
      expect(refused.error).toMatchObject({ _tag: "InvalidOption", option: "auth.redirectUri" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scopedLive("a refresh token rotated by another connection is adopted, not sent again", () =>
    Effect.gen(function*() {
      const oauth = yield* oauthServer()
      const srv = yield* protectedServer(oauth)
      const store = yield* makeMemory
      const user = consentingUser(oauth)
      const connect = McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(
        Effect.provide(Layer.merge(storeLayer(store), user.layer))
      )
      const a = yield* connect
      // b loads the same tokens from the store.
      const b = yield* connect
      expect(user.urls).toHaveLength(1)
      const first = oauth.issuedTokens()[0]!
      oauth.expireAll()

      expect(textOf(yield* a.callTool("increment"))).toBe("1")
      // b still holds the first refresh token, which a's refresh rotated away.
      expect(textOf(yield* b.callTool("increment"))).toBe("2")
      const refreshes = tokenRequests(oauth, "refresh_token")
      expect(refreshes.map((request) => request.form["refresh_token"])).toEqual([first.refreshToken])
      const rotated = oauth.issuedTokens()[1]!
      const stored = Option.getOrThrow(yield* store.get(storeKeyOf(new URL(srv.url), {})))
      expect(Redacted.value(stored.tokens.refreshToken!)).toBe(rotated.refreshToken)
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults)))

  for (const interleaved of [false, true]) {
    it.scopedLive(
      interleaved
        ? "invalid_grant: an entry another process replaced meanwhile is kept"
        : "invalid_grant: the entry still holding the failed refresh token is dropped",
      () =>
        Effect.gen(function*() {
          const oauth = yield* oauthServer()
          const srv = yield* protectedServer(oauth)
          const memory = yield* makeMemory
          const key = storeKeyOf(new URL(srv.url), {})
          const login = McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(
            Effect.provide(Layer.merge(storeLayer(memory), consentingUser(oauth).layer))
          )
          yield* login
          const stored = Option.getOrThrow(yield* memory.get(key))
          const newer = { ...stored, tokens: { ...stored.tokens, refreshToken: Redacted.make("rt-stored-by-another-process") } }
          // A store that cannot keep its users apart (no `exclusive`): another process writes
          // newer tokens between this connection's failed refresh and its removal.
          const shared: TokenStoreService = {
            get: memory.get,
            set: memory.set,
            remove: (k, options) => Effect.zipRight(interleaved ? memory.set(k, newer) : Effect.void, memory.remove(k, options))
          }
          oauth.expireAll()
          oauth.script({ kind: "invalid-grant-on-refresh" })
          const { error } = yield* failureOf(
            McpClient.connect({ url: srv.url, auth: { redirectUri } }).pipe(Effect.provide(storeLayer(shared)))
          )
          expect(error).toMatchObject({ _tag: "AuthorizationFailed", reason: "invalid-grant", authorizationStep: "refresh" })
          const after = yield* memory.get(key)
          if (interleaved) {
            expect(Redacted.value(Option.getOrThrow(after).tokens.refreshToken!)).toBe("rt-stored-by-another-process")
          } else {
            expect(Option.isNone(after)).toBe(true)
          }
        }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provide(Authorization.layerDefaults))
    )
  }
})
