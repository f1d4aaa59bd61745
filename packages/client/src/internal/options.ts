/**
 * The options of a connection as Schemas, declared once (docs/REFERENCE.md, "Connection
 * options"): the policy, the authorization, the part every connection shares, the HTTP part, the
 * stdio part and the Promise API's additions. Decoding one checks every option before any I/O,
 * in the order its fields are declared, and gives what the options mean (milliseconds, a URL
 * without userinfo, lower-case header names, the secrets of the configuration); the first
 * problem is an `InvalidOption` naming the option (`internal/optionSchema.ts`). The public
 * option types are held equal to the Encoded side of these Schemas (test/unit/options.test.ts).
 *
 * Every check is linear in its input: the patterns below are single character classes.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Authorization from "../Authorization.js"
import type * as ClientHandlers from "../ClientHandlers.js"
import type { ChangeEvent } from "../McpClient.js"
import * as McpSchema from "../McpSchema.js"
import type * as PhasePolicy from "../PhasePolicy.js"
import type * as PromiseApi from "../promise.js"
import type * as Stdio from "./transport/stdio.js"
import { isScopeToken } from "./oauth/challenge.js"
import type { ClientAssertionAlgorithm } from "./oauth/clientAssertion.js"
import { isSecure, parseHttpUrl, parseIssuer } from "./oauth/discoveryUrls.js"
import { Count, decoder, given, leaf, refuse, refuseAt, scope, Timeout } from "./optionSchema.js"
import { defaults, maxDepthCeiling } from "./policyDefaults.js"
import { isStringRecord } from "./records.js"
import { secretsOf, secretValues } from "./secrets.js"

/** Decoding only: what the options mean is never turned back into options. */
const decodingOnly = (value: unknown, _: unknown, ast: Schema.Schema.Any["ast"]) => ParseResult.fail(new ParseResult.Forbidden(ast, value, "decoding only"))

// ---------------------------------------------------------------------------------------------
// The policy (docs/DESIGN.md, "Phases and budgets")

const Budget = Schema.Struct({
  timeout: Schema.optional(Timeout),
  maxBytes: Schema.optional(Count)
})

/**
 * The task budget (docs/DESIGN.md, "Tasks"): a wait's deadline and byte ceiling, and the bounds
 * of the poll interval, the smallest no larger than the largest (defaults included).
 */
const TaskBudget = Schema.Struct({
  timeout: Schema.optional(Timeout),
  maxBytes: Schema.optional(Count),
  minPollInterval: Schema.optional(Timeout),
  maxPollInterval: Schema.optional(Timeout)
}).pipe(Schema.filter((task, _, ast) =>
  (task.minPollInterval ?? defaults.taskMinPollIntervalMs) <= (task.maxPollInterval ?? defaults.taskMaxPollIntervalMs)
    ? undefined
    : refuseAt(task.minPollInterval === undefined ? "maxPollInterval" : "minPollInterval", ast, task, "invalid-value")
))

const Depth = Count.pipe(Schema.filter((depth) => depth <= maxDepthCeiling || "invalid-value"))

/** `PhasePolicy.Options`, in the order `PhasePolicy.make` has always checked them. */
export const PolicyFields = Schema.Struct({
  maxDepth: Schema.optional(Depth),
  maxNodes: Schema.optional(Count),
  timeout: Schema.optional(Timeout),
  maxBytes: Schema.optional(Count),
  discovery: Schema.optional(Budget),
  call: Schema.optional(Budget),
  authorization: Schema.optional(Budget),
  ping: Schema.optional(Budget),
  unsolicited: Schema.optional(Schema.Struct({ maxBytes: Schema.optional(Count) })),
  maxTools: Schema.optional(Count),
  maxPages: Schema.optional(Count),
  maxSchemaBytes: Schema.optional(Count),
  maxListingBytes: Schema.optional(Count),
  maxInputRounds: Schema.optional(Count),
  maxSessionRenewals: Schema.optional(Count),
  releaseTimeout: Schema.optional(Timeout),
  relistDelay: Schema.optional(Timeout),
  logBuffer: Schema.optional(Count),
  task: Schema.optional(TaskBudget)
})

type BudgetFields = typeof Budget.Type

const resolvePolicy = (options: typeof PolicyFields.Type): PhasePolicy.PhasePolicy => {
  const maxDepth = options.maxDepth ?? defaults.maxDepth
  const maxNodes = options.maxNodes ?? defaults.maxNodes
  // The structure bound is the policy's, whatever the phase.
  const budget = (fields: BudgetFields | undefined, base: { readonly timeoutMs: number; readonly maxBytes: number }) => ({
    timeoutMs: fields?.timeout ?? base.timeoutMs,
    maxBytes: fields?.maxBytes ?? base.maxBytes,
    maxDepth,
    maxNodes
  })
  const baseline = budget(options, defaults)
  return {
    discovery: budget(options.discovery, baseline),
    call: budget(options.call, baseline),
    authorization: budget(options.authorization, baseline),
    // Not the baseline: a ping is small and quick whatever the tools are.
    ping: budget(options.ping, { timeoutMs: defaults.pingTimeoutMs, maxBytes: defaults.pingMaxBytes }),
    unsolicitedMaxBytes: options.unsolicited?.maxBytes ?? baseline.maxBytes,
    maxTools: options.maxTools ?? defaults.maxTools,
    maxPages: options.maxPages ?? defaults.maxPages,
    maxSchemaBytes: options.maxSchemaBytes ?? defaults.maxSchemaBytes,
    maxListingBytes: options.maxListingBytes ?? defaults.maxListingBytes,
    maxDepth,
    maxNodes,
    maxInputRounds: options.maxInputRounds ?? defaults.maxInputRounds,
    maxSessionRenewals: options.maxSessionRenewals ?? defaults.maxSessionRenewals,
    releaseTimeoutMs: options.releaseTimeout ?? defaults.releaseTimeoutMs,
    relistDelayMs: options.relistDelay ?? defaults.relistDelayMs,
    logBuffer: options.logBuffer ?? defaults.logBuffer,
    task: {
      ...budget(options.task, { timeoutMs: defaults.taskTimeoutMs, maxBytes: baseline.maxBytes }),
      minPollIntervalMs: options.task?.minPollInterval ?? defaults.taskMinPollIntervalMs,
      maxPollIntervalMs: options.task?.maxPollInterval ?? defaults.taskMaxPollIntervalMs
    }
  }
}

/** `PhasePolicy.Options` decoded into the policy they give. */
export const Policy: Schema.Schema<PhasePolicy.PhasePolicy, typeof PolicyFields.Encoded> = Schema.transformOrFail(
  PolicyFields,
  given<PhasePolicy.PhasePolicy>("PhasePolicy"),
  { strict: true, decode: (options) => ParseResult.succeed(resolvePolicy(options)), encode: decodingOnly }
)

export const decodePolicy = decoder(Policy, { root: "policy" })

/** A call's own budget (`PhasePolicy.CallBudgetOptions`), in milliseconds. */
export const CallBudget = Schema.Struct({
  timeout: Schema.optional(Timeout),
  maxBytes: Schema.optional(Count),
  idleTimeout: Schema.optional(Timeout)
})

export const decodeCallBudget = decoder(CallBudget, { prefix: "call.", root: "call", stage: "call" })

// ---------------------------------------------------------------------------------------------
// Authorization (docs/AUTHORIZATION.md)

/** Longest text option (a client id, a name). */
const maxTextLength = 2048

const isText = (u: unknown): u is string =>
  // eslint-disable-next-line no-control-regex -- a text with a C0 control character or DEL is refused
  typeof u === "string" && u.length > 0 && u.length <= maxTextLength && !/[\u0000-\u001f\u007f]/.test(u)

const Text = Schema.String.pipe(Schema.filter(isText))

/** A PEM has lines: its content is checked when the key is imported (`oauth/clientAssertion.ts`). */
const isPem = (u: unknown): u is string => typeof u === "string" && u.length > 0 && u.length <= 16 * 1024

/** A secret given plainly or `Redacted`, held `Redacted`. */
const secret = (valid: (u: unknown) => u is string) =>
  Schema.transformOrFail(given<string | Redacted.Redacted<string>>("Secret"), given<Redacted.Redacted<string>>("Redacted"), {
    strict: true,
    decode: (input, _, ast) => {
      const value = Redacted.isRedacted(input) ? Redacted.value(input as Redacted.Redacted<unknown>) : input
      return valid(value) ? ParseResult.succeed(Redacted.make(value)) : ParseResult.fail(refuse(ast, input, "invalid-value"))
    },
    encode: decodingOnly
  })

/** A URL as given (a string), `valid` as `parse` reads it; anything else is `invalid-url`. */
const urlText = (parse: (text: string) => URL | undefined, valid: (url: URL) => boolean = () => true) =>
  given<string>("URL text").pipe(Schema.filter((text) => {
    const url = typeof text === "string" ? parse(text) : undefined
    return (url !== undefined && valid(url)) || "invalid-url"
  }))

const SigningKey = given<CryptoKey>("CryptoKey").pipe(
  Schema.filter((key) => typeof CryptoKey !== "undefined" && key instanceof CryptoKey)
)

/** A `CryptoKey` that can sign, or a PKCS#8 PEM. */
const PrivateKey = Schema.Union(SigningKey, secret(isPem))

const Scope = leaf(Schema.transformOrFail(given<string | ReadonlyArray<string>>("Scope"), given<ReadonlyArray<string>>("Scope"), {
  strict: true,
  decode: (input, _, ast) => {
    const tokens: ReadonlyArray<unknown> | undefined = typeof input === "string"
      ? input.split(" ").filter((token) => token !== "")
      : Array.isArray(input)
      ? input
      : undefined
    if (tokens === undefined || tokens.length === 0 || !tokens.every((t) => typeof t === "string" && isScopeToken(t))) {
      return ParseResult.fail(refuse(ast, input, "invalid-value"))
    }
    return ParseResult.succeed([...new Set(tokens as ReadonlyArray<string>)])
  },
  encode: decodingOnly
}))

/** `Authorization.Options`, first part: who the client is, in the order they have always been checked. */
export const AuthClientFields = Schema.Struct({
  grant: Schema.optional(Schema.Literal("authorization_code", "client_credentials")),
  redirectUri: Schema.optional(urlText(parseHttpUrl, (url) => url.hash === "")),
  clientId: Schema.optional(Text),
  issuer: Schema.optional(urlText(parseIssuer)),
  allowScopeStepUp: Schema.optional(Schema.Boolean),
  allowPrivateAuthority: Schema.optional(Schema.Boolean),
  clientSecret: Schema.optional(secret(isText)),
  // A metadata document URL is https with a path (draft-ietf-oauth-client-id-metadata-document).
  clientMetadataUrl: Schema.optional(
    urlText(parseHttpUrl, (url) => url.protocol === "https:" && url.pathname !== "/" && url.hash === "" && isSecure(url))
  ),
  privateKey: Schema.optional(PrivateKey),
  privateKeyAlgorithm: Schema.optional(Schema.Literal("RS256", "ES256")),
  keyId: Schema.optional(Text)
})

/** `Authorization.Options`, second part: what it asks for, checked once the client is known to be whole. */
export const AuthRequestFields = Schema.Struct({
  scope: Schema.optional(Scope),
  clientName: Schema.optional(Text),
  interactiveTimeout: Schema.optional(leaf(Timeout)),
  maxStepUps: Schema.optional(
    Schema.Number.pipe(Schema.filter((n) => Number.isSafeInteger(n) && n >= 0 && n <= 16))
  )
})

/** @internal the default bound of the interactive step, and of step-ups per connection */
export const authDefaults = { interactiveTimeoutMs: 5 * 60 * 1000, maxStepUps: 2 } as const

const decodeClient = ParseResult.decodeUnknownEither(AuthClientFields)
const decodeRequest = ParseResult.decodeUnknownEither(AuthRequestFields)

/**
 * A client must be whole: `client_credentials` needs a client id and a secret or a key, a key
 * needs a client id.
 */
const incompleteClient = (client: typeof AuthClientFields.Type): "clientId" | "clientSecret" | undefined => {
  if (client.grant === "client_credentials") {
    if (client.clientId === undefined) return "clientId"
    if (client.clientSecret === undefined && client.privateKey === undefined) return "clientSecret"
  }
  return client.privateKey !== undefined && client.clientId === undefined ? "clientId" : undefined
}

/** `Authorization.Options` decoded into `Authorization.Validated`. */
export const Auth: Schema.Schema<Authorization.Validated, Authorization.Options> = Schema.transformOrFail(
  given<Authorization.Options>("Authorization.Options"),
  given<Authorization.Validated>("Authorization.Validated"),
  {
    strict: true,
    decode: (input, _, ast) => {
      // Not an object: the first field, the grant, cannot be read.
      if (typeof input !== "object" || input === null) return ParseResult.fail(refuseAt("grant", ast, input, "invalid-value"))
      const client = decodeClient(input)
      if (client._tag === "Left") return ParseResult.fail(client.left)
      const incomplete = incompleteClient(client.right)
      if (incomplete !== undefined) return ParseResult.fail(refuseAt(incomplete, ast, input, "invalid-value"))
      const request = decodeRequest(input)
      if (request._tag === "Left") return ParseResult.fail(request.left)
      const c = client.right
      const r = request.right
      return ParseResult.succeed({
        grant: c.grant ?? "authorization_code",
        redirectUri: c.redirectUri,
        clientId: c.clientId,
        issuer: c.issuer,
        clientSecret: c.clientSecret,
        clientMetadataUrl: c.clientMetadataUrl,
        privateKey: c.privateKey,
        privateKeyAlgorithm: (c.privateKeyAlgorithm ?? "RS256") satisfies ClientAssertionAlgorithm,
        keyId: c.keyId,
        scope: r.scope,
        clientName: r.clientName ?? "phasebound",
        interactiveTimeoutMs: r.interactiveTimeout ?? authDefaults.interactiveTimeoutMs,
        maxStepUps: r.maxStepUps ?? authDefaults.maxStepUps,
        allowScopeStepUp: c.allowScopeStepUp ?? false,
        allowPrivateAuthority: c.allowPrivateAuthority ?? false
      })
    },
    encode: decodingOnly
  }
)

export const decodeAuth = decoder(Auth, { prefix: "auth.", root: "auth" })

// ---------------------------------------------------------------------------------------------
// What every connection shares

/** The client's name and version when the caller gives none. */
export const defaultClientInfo: McpSchema.Implementation = { name: "phasebound", version: "0.1.0" }

/** The supported revisions the caller allows, newest first. */
const Revisions = leaf(Schema.transformOrFail(Schema.Array(Schema.String), given<ReadonlyArray<McpSchema.Revision>>("Revisions"), {
  strict: true,
  decode: (input, _, ast) =>
    input.length > 0 && input.every(McpSchema.isSupportedRevision)
      ? ParseResult.succeed(McpSchema.supportedRevisions.filter((revision) => input.includes(revision)))
      : ParseResult.fail(refuse(ast, input, "invalid-value")),
  encode: decodingOnly
}))

const handlerNames: ReadonlySet<string> = new Set(["elicitation", "sampling", "roots", "elicitationUrl"])

/** Answers to what the server may ask: an object of functions under the known names. */
const handlers = <H>(name: string) =>
  leaf(Schema.declare(
    (u: unknown): u is H =>
      typeof u === "object" && u !== null && !Array.isArray(u) &&
      Object.entries(u).every(([name, handler]) => handlerNames.has(name) && (handler === undefined || typeof handler === "function")),
    { identifier: name }
  ))

/** The fields every connection has, whatever its transport. */
export const common = {
  policy: Schema.optionalWith(scope("policy", Policy), { default: () => resolvePolicy({}) }),
  clientInfo: Schema.optionalWith(leaf(McpSchema.Implementation), { default: () => defaultClientInfo }),
  revisions: Schema.optionalWith(Revisions, { default: () => McpSchema.supportedRevisions }),
  handlers: Schema.optional(handlers<ClientHandlers.Handlers>("ClientHandlers.Handlers"))
}

// ---------------------------------------------------------------------------------------------
// HTTP

const Url = Schema.transformOrFail(given<string | URL>("Url"), given<URL>("URL"), {
  strict: true,
  decode: (input, _, ast) => {
    let url: URL | undefined
    try {
      url = typeof input === "string" || input instanceof URL ? new URL(input) : undefined
    } catch {
      url = undefined
    }
    return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
      ? ParseResult.succeed(url)
      : ParseResult.fail(refuse(ast, input, "invalid-url"))
  },
  encode: decodingOnly
})

// RFC 7230 token for names; values without CR, LF or NUL (header injection).
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const headerValue = /^[^\r\n\0]*$/

/** Headers, their names in lower case. */
const Headers = leaf(Schema.transformOrFail(
  Schema.Record({ key: Schema.String, value: Schema.String }),
  given<Readonly<Record<string, string>>>("Headers"),
  {
    strict: true,
    decode: (input, _, ast) => {
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(input)) {
        if (!headerName.test(name) || !headerValue.test(value)) return ParseResult.fail(refuse(ast, input, "invalid-value"))
        headers[name.toLowerCase()] = value
      }
      return ParseResult.succeed(headers)
    },
    encode: decodingOnly
  }
))

/** `McpClient.TransportChoice`. */
export const TransportChoices = Schema.Literal("auto", "streamable-http", "sse")

const TransportChoice = leaf(TransportChoices)

/**
 * `McpClient.ConnectOptions`, in the order they have always been checked; `auth` is decoded
 * with the target (`Http`), once the caller's own credential is known.
 */
export const HttpFields = Schema.Struct({
  policy: common.policy,
  url: Url,
  headers: Schema.optionalWith(Headers, { default: () => ({}) }),
  clientInfo: common.clientInfo,
  transport: Schema.optionalWith(TransportChoice, { default: () => "auto" as const }),
  revisions: common.revisions,
  handlers: common.handlers,
  auth: Schema.optional(given<Authorization.Options>("Authorization.Options"))
})

/** What HTTP options mean. */
export interface HttpSettings extends Omit<typeof HttpFields.Type, "auth"> {
  /** The secrets of the configuration: header values, URL userinfo and query values, OAuth client secrets. */
  readonly secrets: ReadonlyArray<string>
  readonly auth: Authorization.Validated | undefined
}

/** URL userinfo moved into a Basic `Authorization` header (unless one is given), and out of the URL. */
const withoutUserinfo = (url: URL, headers: Record<string, string>): void => {
  if (url.username === "" && url.password === "") return
  if (headers["authorization"] === undefined) {
    const user = decodeURIComponent(url.username)
    const password = decodeURIComponent(url.password)
    headers["authorization"] = `Basic ${btoa(unescape(encodeURIComponent(`${user}:${password}`)))}`
  }
  url.username = ""
  url.password = ""
}

const decodeAuthFields = ParseResult.decodeUnknownEither(Auth)

/** An MCP server URL `auth` may be used with: over plain http off loopback, the bearer token would travel in clear. */
const SecureServerUrl = given<URL>("URL").pipe(Schema.filter((url) => isSecure(url) || "insecure-url"))

export const decodeServerUrl = decoder(SecureServerUrl, { root: "url" })

const checkServerUrl = ParseResult.decodeUnknownEither(SecureServerUrl)

/** The target of an HTTP connection: the URL and headers as sent, the secrets, and its authorization. */
export const Http: Schema.Schema<HttpSettings, typeof HttpFields.Encoded> = Schema.transformOrFail(
  HttpFields,
  given<HttpSettings>("HttpSettings"),
  {
    strict: true,
    decode: ({ auth, ...fields }, _, ast) => {
      const url = fields.url
      const headers = { ...fields.headers }
      // Taken before userinfo moves into a header: it covers the Basic token built from it.
      const secrets = [...secretsOf(url, headers)]
      withoutUserinfo(url, headers)
      const settings = { ...fields, url, headers, secrets, auth: undefined }
      if (auth === undefined) return ParseResult.succeed(settings)
      // A credential of the caller's and one of the authority's cannot both be sent.
      if (headers["authorization"] !== undefined) return ParseResult.fail(refuseAt("auth", ast, auth, "invalid-value"))
      const validated = decodeAuthFields(auth)
      if (validated._tag === "Left") return ParseResult.fail(new ParseResult.Pointer("auth", auth, validated.left))
      const secure = checkServerUrl(url)
      if (secure._tag === "Left") return ParseResult.fail(new ParseResult.Pointer("url", url, secure.left))
      for (const secret of [validated.right.clientSecret, validated.right.privateKey]) {
        if (!Redacted.isRedacted(secret)) continue
        for (const value of secretValues([Redacted.value(secret as Redacted.Redacted<string>)])) secrets.push(value)
      }
      return ParseResult.succeed({ ...settings, auth: validated.right })
    },
    encode: decodingOnly
  }
)

export const decodeHttp = decoder(Http, { root: "options" })

// ---------------------------------------------------------------------------------------------
// stdio

const stderrModes: ReadonlySet<unknown> = new Set(["tail", "inherit", "drop"])

const StderrHandling = leaf(Schema.declare(
  (u: unknown): u is Stdio.StderrHandling =>
    typeof u === "object" && u !== null && stderrModes.has((u as Stdio.StderrHandling).mode) &&
    ((u as Stdio.StderrHandling).onSpawn === undefined || typeof (u as Stdio.StderrHandling).onSpawn === "function"),
  { identifier: "Stdio.StderrHandling" }
))

/** `McpClient.StdioConnectOptions`, in the order they have always been checked. */
export const StdioFields = Schema.Struct({
  policy: common.policy,
  clientInfo: common.clientInfo,
  command: leaf(Schema.String.pipe(Schema.filter((command) => command.length > 0 && !command.includes("\0")))),
  args: Schema.optional(leaf(Schema.Array(Schema.String))),
  env: Schema.optional(leaf(Schema.declare(isStringRecord, { identifier: "Environment" }) as Schema.Schema<Readonly<Record<string, string>>>)),
  cwd: Schema.optional(leaf(Schema.String)),
  stderr: Schema.optional(StderrHandling),
  revisions: common.revisions,
  handlers: common.handlers
})

type StdioFieldsType = typeof StdioFields.Type

/** What stdio options mean. */
export interface StdioSettings extends StdioFieldsType {
  /** Values given for the child's environment are secrets as far as error texts go. */
  readonly secrets: ReadonlyArray<string>
}

export const StdioOptions: Schema.Schema<StdioSettings, typeof StdioFields.Encoded> = Schema.transform(
  StdioFields,
  given<StdioSettings>("StdioSettings"),
  {
    strict: true,
    decode: (fields) => ({ ...fields, secrets: secretValues(Object.values(fields.env ?? {})) }),
    encode: (settings) => settings
  }
)

export const decodeStdio = decoder(StdioOptions, { root: "options" })

// ---------------------------------------------------------------------------------------------
// A set of servers (`McpServers.Options`): named, each an object, decoded when first used.

const ServerOptions = given<object>("ServerOptions").pipe(Schema.filter((server) => typeof server === "object" && server !== null))

export const Servers = Schema.Struct({
  servers: leaf(Schema.Record({ key: Schema.String.pipe(Schema.minLength(1)), value: ServerOptions }))
})

export const decodeServers = decoder(Servers, { root: "servers" })

// ---------------------------------------------------------------------------------------------
// The Promise API's additions (`promise.ts`): values it uses as they are (a callback that is
// not a function is not called), declared here so that its option types are these fields'.

export const promiseFields = {
  handlers: Schema.optional(handlers<PromiseApi.Handlers>("promise.Handlers")),
  signal: Schema.optional(given<AbortSignal>("AbortSignal")),
  onToolsChanged: Schema.optional(given<(tools: ReadonlyArray<McpSchema.Tool>) => void>("OnToolsChanged")),
  onLogMessage: Schema.optional(given<(message: McpSchema.LogMessage) => void>("OnLogMessage")),
  onElicitationComplete: Schema.optional(given<(elicitationId: string) => void>("OnElicitationComplete")),
  cache: Schema.optional(given<PromiseApi.Cache>("promise.Cache")),
  onChange: Schema.optional(given<(event: ChangeEvent) => void>("OnChange")),
  onPromptsChanged: Schema.optional(given<(prompts: ReadonlyArray<McpSchema.Prompt>) => void>("OnPromptsChanged")),
  onResourcesChanged: Schema.optional(given<(resources: ReadonlyArray<McpSchema.Resource>) => void>("OnResourcesChanged"))
}

export const promiseHttpFields = {
  httpClient: Schema.optional(given<Layer.Layer<HttpClient.HttpClient>>("HttpClient layer"))
}
