/**
 * `login` and `logout`: the OAuth tokens of an HTTP server obtained now and kept in the token
 * file, or forgotten. OAuth settings and the token file: auth.ts.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { McpClient } from "@phasebound/client"
import * as Authorization from "@phasebound/client/Authorization"
import type { McpConnectionError } from "@phasebound/client/McpConnectionError"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  authorizedDuringDiscovery,
  authTimeoutOf,
  entryOption,
  interactiveTimeoutOf,
  parsePort,
  renameAuthOption,
  tokenFileOf,
  tokenStoreLayer
} from "./auth.js"
import { openBrowser } from "./browser.js"
import { prepare, type Requirements } from "./connection.js"
import { flag, type Flags } from "./flags.js"
import { openLoopbackRedirect } from "./loopbackRedirect.js"
import { renderLogin, renderLogout } from "./output.js"
import { invalidOption } from "./record.js"
import type { RunContext } from "./runContext.js"
import { resolveTarget } from "./target.js"

const tokenFileProblem = () => invalidOption(flag("tokenFile"), "invalid-value")

/**
 * `login`: the authorization of a user (or a client credentials grant) obtained now and kept in
 * the token file. The stored entry of the target is not read (a login always obtains new
 * tokens); the listener on 127.0.0.1 receives the browser's redirect.
 */
export const login = (
  ctx: RunContext,
  flags: Flags,
  positional: string | undefined
): Effect.Effect<void, McpConnectionError, Requirements> =>
  Effect.gen(function*() {
    const prepared = yield* prepare(ctx, flags, positional)
    const { policy, policyOptions, revisions, target, tokenFile } = prepared
    // A child process has no OAuth; a credential of the caller's leaves nothing to log in for.
    if (target._tag !== "Http") return yield* Effect.fail(invalidOption("target", "invalid-value"))
    if (target.authorization !== undefined) return yield* Effect.fail(invalidOption(target.authorization, "invalid-value"))
    const auth = prepared.auth!
    if (tokenFile === undefined) return yield* Effect.fail(tokenFileProblem())
    const authTimeoutMs = yield* authTimeoutOf(flags.authTimeout)
    const port = Option.isSome(flags.authRedirectPort) ? yield* parsePort(flags.authRedirectPort.value) : auth.redirectPort ?? 0
    const machine = ctx.machine(flags.json)

    const fileStore = yield* Effect.provide(Authorization.TokenStore, tokenStoreLayer(tokenFile))
    const key = Authorization.storeKeyOf(new URL(target.url), auth.validated)
    // A token file that cannot be used is refused before anyone is sent to a browser.
    yield* Effect.mapError(fileStore.get(key), tokenFileProblem)
    const loginStore: Context.Tag.Service<Authorization.TokenStore> = { ...fileStore, get: () => Effect.succeedNone }

    const interactive = auth.validated.grant === "authorization_code"
    const listener = interactive
      ? yield* Effect.mapError(
        openLoopbackRedirect({ port }),
        // The port is in use (or not allowed): named by where it came from.
        () => invalidOption(Option.isNone(flags.authRedirectPort) && auth.redirectPort !== undefined ? entryOption : flag("authRedirectPort"))
      )
      : undefined
    const authorize = (url: URL) =>
      Effect.gen(function*() {
        // Before anyone is sent to the browser: only the answer carrying this URL's state completes the login.
        yield* listener!.expect(url)
        yield* ctx.print(machine ? `${JSON.stringify({ authorize: url.href })}\n` : `Open this URL to authorize: ${url.href}\n`)
        yield* openBrowser(url.href, { env: ctx.env })
        // Its timeout fails the interactive step: AuthorizationFailed, interactive-step-failed.
        return yield* listener!.next(authTimeoutMs)
      })
    const services = Layer.merge(
      Layer.succeed(Authorization.TokenStore, loginStore),
      interactive ? Authorization.layerInteractive(authorize) : Authorization.layerNoInteraction
    )

    ctx.state.position = { stage: "connect", phase: "discovery", limits: policy.discovery }
    const connection = yield* McpClient.connect({
      url: target.url,
      headers: target.headers,
      transport: target.transport,
      revisions,
      policy: policyOptions,
      auth: {
        ...auth.options,
        redirectUri: listener?.redirectUri,
        interactiveTimeout: interactiveTimeoutOf(authTimeoutMs)
      }
    }).pipe(Effect.provide(services), Effect.mapError((error) => renameAuthOption(error, auth.optionOf)))
    ctx.state.position = { stage: "close", phase: "session", limits: policy.discovery }
    const authorized = authorizedDuringDiscovery(connection)
    if (authorized) {
      // The library keeps going when the store fails (the tokens live on in memory): a login must not.
      const stored = yield* Effect.mapError(fileStore.get(key), tokenFileProblem)
      if (Option.isNone(stored)) return yield* Effect.fail(tokenFileProblem())
    }
    ctx.state.stdout = renderLogin({ authorized, connection }, machine)
  })

/** `logout`: removes the target's entry from the token file (no network). */
export const logout = (
  ctx: RunContext,
  flags: Flags,
  positional: string | undefined
): Effect.Effect<void, McpConnectionError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const target = yield* resolveTarget(
      {
        target: positional,
        stdio: undefined,
        config: Option.getOrUndefined(flags.config),
        format: Option.getOrUndefined(flags.format),
        headers: [],
        transport: undefined
      },
      ctx.env
    )
    ctx.state.secrets = target.secrets
    if (target._tag !== "Http") return yield* Effect.fail(invalidOption("target", "invalid-value"))
    const entry = target.auth ?? {}
    const sources = new Map<string, string>()
    const pick = (field: string, key: "authClientId" | "authClientMetadataUrl", fromEntry: string | undefined) => {
      const given = flags[key]
      if (Option.isSome(given)) sources.set(field, flag(key))
      else if (fromEntry !== undefined) sources.set(field, entryOption)
      return Option.getOrUndefined(given) ?? fromEntry
    }
    const identity = {
      clientId: pick("clientId", "authClientId", entry.clientId),
      clientMetadataUrl: pick("clientMetadataUrl", "authClientMetadataUrl", entry.clientMetadataUrl)
    }
    const validated = yield* Effect.mapError(
      Authorization.validate(identity),
      (error) => renameAuthOption(error, (field) => sources.get(field) ?? `--auth-${field}`)
    )
    const tokenFile = yield* tokenFileOf(flags.tokenFile, ctx.env)
    if (tokenFile === undefined) return yield* Effect.fail(tokenFileProblem())
    const store = yield* Effect.provide(Authorization.TokenStore, tokenStoreLayer(tokenFile))
    const key = Authorization.storeKeyOf(new URL(target.url), validated)
    const existing = yield* Effect.mapError(store.get(key), tokenFileProblem)
    if (Option.isSome(existing)) yield* Effect.mapError(store.remove(key), tokenFileProblem)
    ctx.state.stdout = renderLogout(Option.isSome(existing), ctx.machine(flags.json))
  })
