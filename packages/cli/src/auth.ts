/**
 * OAuth 2.1 for HTTP targets: the `--auth-*` flags and the config entry's `auth` object, merged
 * (a flag wins over the entry) and validated before any I/O; the token file; and what `login`
 * and the hint of a refused command need.
 *
 * Every HTTP target gets the library's `auth` option with the file token store, unless a
 * credential of the caller's is configured (an `Authorization` header or URL userinfo): then no
 * OAuth, and an explicit auth setting beside it is `InvalidOption`. Commands other than `login`
 * give no redirect URI and no interactive step, so stored tokens are used and refreshed and a
 * 401 that needs a user stays `Unauthorized`; `client_credentials` gets its tokens by itself.
 *
 * Problems name the option they come from: the flag (`--auth-client-id`, ...) or `--config auth`
 * for a value of the entry's `auth` object (never the value, a path or a variable name).
 */
import * as McpConnectionError from "@phasebound/client/McpConnectionError"
import * as Authorization from "@phasebound/client/Authorization"
import type * as McpClient from "@phasebound/client/McpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import type { AuthEntry } from "./config.js"
import { flag, flagTable, type FlagSpec, type SectionFlags, sectionKeys } from "./flags.js"
import { invalidOption } from "./record.js"
import { type Environment, expandVariables, type Target } from "./target.js"
import { parseDuration } from "./units.js"

/** The OAuth flags of the commands that reach an HTTP server. */
export type AuthFlags = SectionFlags<"auth">

/** The flags only `login` has. */
export type LoginFlags = SectionFlags<"login">

/** The option a problem of an entry's `auth` value is named by. */
export const entryOption = `${flag("config")} auth`

type Field =
  | "grant"
  | "clientId"
  | "clientSecret"
  | "clientMetadataUrl"
  | "privateKey"
  | "privateKeyAlgorithm"
  | "scope"
  | "issuer"
  | "allowPrivateAuthority"
  | "allowScopeStepUp"

/** The flag of each field: the table's `auth` column. */
const flagOf = Object.fromEntries(
  sectionKeys("auth").flatMap((key) => {
    const field: string | undefined = (flagTable[key] as FlagSpec).auth
    return field === undefined ? [] : [[field, flag(key)]]
  })
) as Readonly<Record<Field, string>>

/** The auth settings of an HTTP target, validated. */
export interface AuthSettings {
  /** The library's options (no redirect URI, no interactive timeout: `login` adds them). */
  readonly options: Authorization.Options
  readonly validated: Authorization.Validated
  /** The option each setting came from (its flag, or `--config auth`); a missing one is named by its flag. */
  readonly optionOf: (field: string) => string
  /** The first setting given explicitly (by a flag or the entry), named as in records; undefined when none. */
  readonly explicit: string | undefined
  /** The entry's `redirectPort`. */
  readonly redirectPort: number | undefined
  /** The client secret and the private key, as values to scrub. */
  readonly secrets: ReadonlyArray<string>
}

const value = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

/** The largest private key file read. */
const maxKeyFileBytes = 64 * 1024

/** A PKCS#8 PEM from a file; anything else (missing, not a file, too large, no PKCS#8 block) names `option`. */
const readPrivateKey = (file: string, option: string): Effect.Effect<string, McpConnectionError.InvalidOption> =>
  Effect.suspend(() => {
    try {
      const info = statSync(file)
      if (!info.isFile() || info.size > maxKeyFileBytes) return Effect.fail(invalidOption(option, "invalid-value"))
      const text = readFileSync(file, "utf8")
      return /-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(text)
        ? Effect.succeed(text)
        : Effect.fail(invalidOption(option, "invalid-value"))
    } catch {
      return Effect.fail(invalidOption(option, "invalid-value"))
    }
  })

/** A PEM's values to scrub: the whole text and its base64 lines (not the `-----BEGIN` lines). */
export const pemSecrets = (pem: string): ReadonlyArray<string> => {
  const lines = pem.split(/\r?\n/).map((line) => line.trim()).filter((line) => line.length >= 3 && !line.startsWith("-----"))
  return [pem.trim(), lines.join(""), ...lines]
}

/** The secrets of OAuth client credentials, to scrub from the run's output: the client secret's forms, the private key's. */
export const authSecrets = (clientSecret: string | undefined, privateKey: string | undefined): ReadonlyArray<string> =>
  McpConnectionError.mergeSecrets(
    clientSecret === undefined ? [] : McpConnectionError.secretValues([clientSecret]),
    privateKey === undefined ? [] : pemSecrets(privateKey)
  )

/**
 * An `InvalidOption` of the library naming `auth.<field>` renamed to the CLI option the value
 * came from (and `url`, the server URL, to `target`); any other error as it is.
 */
export const renameAuthOption = <E>(error: E, optionOf: (field: string) => string): E => {
  if (!McpConnectionError.isMcpConnectionError(error) || error._tag !== "InvalidOption") return error
  const option = error.option
  // The server URL the library refused for OAuth (plain http off loopback) is the CLI's target.
  const renamed = option === "url" ? "target" : option?.startsWith("auth.") ? optionOf(option.slice("auth.".length)) : undefined
  if (renamed === undefined) return error
  const { tag: _, ...fields } = McpConnectionError.toRecord(error)
  return new McpConnectionError.InvalidOption({ ...fields, option: renamed }) as E
}

const literal = <A extends string>(
  text: string | undefined,
  allowed: ReadonlyArray<A>,
  option: string
): Effect.Effect<A | undefined, McpConnectionError.InvalidOption> =>
  text === undefined
    ? Effect.succeed(undefined)
    : (allowed as ReadonlyArray<string>).includes(text)
    ? Effect.succeed(text as A)
    : Effect.fail(invalidOption(option, "invalid-value"))

/**
 * The auth settings of an HTTP target: each flag over the entry's value, `${VAR}` expanded in
 * the secret, the key file read, then the library's validation (its `auth.<field>` renamed).
 */
export const resolveAuth = (
  flags: AuthFlags,
  target: Extract<Target, { readonly _tag: "Http" }>,
  env: Environment
): Effect.Effect<AuthSettings, McpConnectionError.InvalidOption> =>
  Effect.gen(function*() {
    const entry: AuthEntry = target.auth ?? {}
    const sources = new Map<string, string>()
    let explicit: string | undefined
    const pick = <A>(field: Field, fromFlag: A | undefined, fromEntry: A | undefined): A | undefined => {
      const source = fromFlag !== undefined ? flagOf[field] : fromEntry !== undefined ? entryOption : undefined
      if (source === undefined) return undefined
      sources.set(field, source)
      explicit ??= source
      return fromFlag ?? fromEntry
    }
    const optionOf = (field: string): string => sources.get(field) ?? flagOf[field as Field] ?? "auth"

    const grant = pick("grant", yield* literal(value(flags.authGrant), ["authorization_code", "client_credentials"], flagOf.grant), entry.grant)
    const clientId = pick("clientId", value(flags.authClientId), entry.clientId)
    const secretFlag = value(flags.authClientSecret)
    const secretText = pick("clientSecret", secretFlag, entry.clientSecret)
    const clientSecret = secretText === undefined
      ? undefined
      : yield* expandVariables(secretText, env, () => invalidOption(optionOf("clientSecret"), "invalid-value"))
    const clientMetadataUrl = pick("clientMetadataUrl", value(flags.authClientMetadataUrl), entry.clientMetadataUrl)
    const keyFlag = value(flags.authPrivateKeyFile)
    const keyFile = pick(
      "privateKey",
      keyFlag === undefined ? undefined : path.resolve(keyFlag),
      entry.privateKeyFile === undefined ? undefined : path.resolve(target.configDir ?? ".", entry.privateKeyFile)
    )
    const privateKey = keyFile === undefined ? undefined : yield* readPrivateKey(keyFile, optionOf("privateKey"))
    const privateKeyAlgorithm = pick(
      "privateKeyAlgorithm",
      yield* literal(value(flags.authPrivateKeyAlg), ["RS256", "ES256"], flagOf.privateKeyAlgorithm),
      entry.privateKeyAlg
    )
    const scope = pick("scope", value(flags.authScope), entry.scope)
    const issuer = pick("issuer", value(flags.authIssuer), entry.issuer)
    // A boolean flag not given is `false`: only `true` overrides the entry.
    const allowPrivateAuthority = pick("allowPrivateAuthority", flags.authAllowPrivateAuthority || undefined, entry.allowPrivateAuthority)
    const allowScopeStepUp = pick("allowScopeStepUp", flags.authAllowScopeStepUp || undefined, entry.allowScopeStepUp)
    if (entry.redirectPort !== undefined) explicit ??= entryOption

    const options: Authorization.Options = {
      ...(grant === undefined ? {} : { grant }),
      ...(clientId === undefined ? {} : { clientId }),
      ...(clientSecret === undefined ? {} : { clientSecret }),
      ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
      ...(privateKey === undefined ? {} : { privateKey }),
      ...(privateKeyAlgorithm === undefined ? {} : { privateKeyAlgorithm }),
      ...(scope === undefined ? {} : { scope }),
      ...(issuer === undefined ? {} : { issuer }),
      ...(allowPrivateAuthority === undefined ? {} : { allowPrivateAuthority }),
      ...(allowScopeStepUp === undefined ? {} : { allowScopeStepUp })
    }
    const validated = yield* Effect.mapError(Authorization.validate(options), (error) => renameAuthOption(error, optionOf))
    return {
      options,
      validated,
      optionOf,
      explicit,
      redirectPort: entry.redirectPort,
      secrets: authSecrets(clientSecret, privateKey)
    }
  })

/** The first auth flag given (a stdio target refuses them all), named as in records. */
export const givenAuthFlag = (flags: Partial<AuthFlags & LoginFlags>): string | undefined => {
  const given = [...sectionKeys("auth"), ...sectionKeys("login")].find((key) => {
    const value = flags[key as keyof (AuthFlags & LoginFlags)]
    return value === true || (Option.isOption(value) && Option.isSome(value))
  })
  return given === undefined ? undefined : flag(given)
}

/**
 * The token file: `--token-file`, else `$PHASEBOUND_TOKEN_FILE`, else the user's config
 * directory (`Authorization.defaultTokenFile`); undefined when the environment names no home.
 */
export const tokenFileOf = (
  given: Option.Option<string>,
  env: Environment,
  platform: string = process.platform
): Effect.Effect<string | undefined, McpConnectionError.InvalidOption> => {
  if (Option.isSome(given)) {
    return given.value.trim() === ""
      ? Effect.fail(invalidOption(flag("tokenFile"), "invalid-value"))
      : Effect.succeed(path.resolve(given.value))
  }
  const fromEnv = env["PHASEBOUND_TOKEN_FILE"]
  if (fromEnv !== undefined && fromEnv.trim() !== "") return Effect.succeed(path.resolve(fromEnv))
  return Effect.succeed(Option.getOrUndefined(Authorization.defaultTokenFile(env, platform)))
}

/** The file token store (permissions checked where the platform has POSIX modes). */
export const tokenStoreLayer = (file: string) => Authorization.tokenStoreFile(file, { checkPermissions: process.platform !== "win32" })

/** `--auth-redirect-port`: an integer 0..65535 (0: any free port). */
export const parsePort = (text: string): Effect.Effect<number, McpConnectionError.InvalidOption> =>
  /^\d{1,5}$/.test(text.trim()) && Number(text.trim()) <= 65535
    ? Effect.succeed(Number(text.trim()))
    : Effect.fail(invalidOption(flag("authRedirectPort"), "invalid-value"))

export const defaultAuthTimeoutMs = Authorization.defaultInteractiveTimeoutMs

/** `--auth-timeout`, default 5 minutes. */
export const authTimeoutOf = (text: Option.Option<string>): Effect.Effect<number, McpConnectionError.InvalidOption> =>
  Option.isSome(text) ? parseDuration(flag("authTimeout"), text.value) : Effect.succeed(defaultAuthTimeoutMs)

/**
 * The library's own bound of the interactive step: a little longer than the listener's, so
 * that the listener's timeout is the one that ends the wait (an `AuthorizationFailed`
 * `interactive-step-failed`, deterministically).
 */
export const interactiveTimeoutOf = (authTimeoutMs: number): number => authTimeoutMs + 1_000

/** Whether the connection obtained a credential during its discovery (the server asked, and it was given). */
export const authorizedDuringDiscovery = (connection: McpClient.Connection): boolean =>
  connection.discovery.some((observation) => observation.operation === "authorization" && observation.outcome === "ok")

/** Whether a failure is one `phasebound login` would cure (a user's authorization is missing or no longer good). */
export const needsLogin = (error: unknown, grant: Authorization.Grant): boolean =>
  grant === "authorization_code" &&
  McpConnectionError.isMcpConnectionError(error) &&
  (error._tag === "Unauthorized" || (error._tag === "AuthorizationFailed" && error.reason === "invalid-grant"))
