/**
 * The building blocks of the option Schemas (`internal/options.ts`) and the one way a refused
 * option becomes an error: the first issue of a decoding, as `InvalidOption` naming the option
 * by its path (`call.timeout`, `headers`, `auth.clientId`) with the reason the refusing schema
 * gave. Never the value: an issue's `actual` (a header value, a URL, a secret) stays here.
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import { InvalidOption, type Phase, Reason, type Stage } from "../McpConnectionError.js"
import { defaults } from "./policyDefaults.js"

/**
 * A caller's value of type `I`, taken as it is: the transformation or the check that follows
 * refuses what is not one (with the reason it knows), so the shape is not checked twice.
 */
export const given = <I>(name: string): Schema.Schema<I> => Schema.declare((_: unknown): _ is I => true, { identifier: name })

const OptionLeaf: unique symbol = Symbol.for("@phasebound/client/OptionLeaf")

/**
 * An option whose problems are named by its own path, with `invalid-value`: what is inside (a
 * header's name, an array's index, a field of `clientInfo`) is not an option of its own.
 */
export const leaf = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ [OptionLeaf]: true }) as S

const OptionScope: unique symbol = Symbol.for("@phasebound/client/OptionScope")

/**
 * Options named from here, not from the value decoded: the policy's are `call.timeout`, not
 * `policy.call.timeout`, wherever the policy is given; refused as a whole, it is `name`.
 */
export const scope = <S extends Schema.Schema.Any>(name: string, schema: S): S => schema.annotations({ [OptionScope]: name }) as S

/** A refusal with its reason (a `Reason` literal: the issue's message is nothing else). */
export const refuse = (ast: AST.AST, actual: unknown, reason: Reason): ParseResult.ParseIssue => new ParseResult.Type(ast, actual, reason)

/** A refusal of the option at `path`, below the value being decoded. */
export const refuseAt = (path: PropertyKey, ast: AST.AST, actual: unknown, reason: Reason): ParseResult.ParseIssue =>
  new ParseResult.Pointer(path, actual, refuse(ast, actual, reason))

/** The reason a duration input is refused, else its milliseconds (as Effect's `Duration.decode` reads it). */
const millisOf = (input: unknown): number | Reason => {
  if (typeof input === "number") {
    if (Number.isNaN(input) || !Number.isFinite(input)) return "not-finite"
    return input <= 0 ? "not-positive" : input
  }
  // Everything else, a bigint (nanoseconds) included, goes through Effect's own decoding.
  const decoded = Duration.decodeUnknown(input)
  if (decoded._tag === "None") return "not-a-duration"
  if (!Duration.isFinite(decoded.value)) return "not-finite"
  const millis = Duration.toMillis(decoded.value)
  if (Number.isNaN(millis) || !Number.isFinite(millis)) return "not-finite"
  return millis <= 0 ? "not-positive" : millis
}

/**
 * A timeout: a finite duration > 0 (a number is milliseconds, a bigint nanoseconds), decoded
 * into milliseconds; refused as `not-positive`, `not-finite` or `not-a-duration`.
 */
export const Timeout: Schema.Schema<number, Duration.DurationInput> = Schema.transformOrFail(
  given<Duration.DurationInput>("DurationInput"),
  Schema.Number,
  {
    strict: true,
    decode: (input, _, ast) => {
      const millis = millisOf(input)
      return typeof millis === "number" ? ParseResult.succeed(millis) : ParseResult.fail(refuse(ast, input, millis))
    },
    encode: ParseResult.succeed
  }
)

const countProblem = (n: number): Reason | true =>
  Number.isNaN(n) || !Number.isFinite(n)
    ? "not-finite"
    : !Number.isInteger(n)
    ? "not-integer"
    : n < 1
    ? "not-positive"
    : !Number.isSafeInteger(n)
    ? "unsafe-integer"
    : true

/** A byte count or a limit: a safe integer >= 1 (`invalid-value` for anything but a number). */
export const Count: Schema.Schema<number> = Schema.Number.pipe(Schema.filter(countProblem))

/** Where the options decoded sit: how their paths become option names, and the error's stage. */
export interface Naming {
  /** Put before every path (`call.` for a call's own budget, `auth.` for `Authorization.validate`). */
  readonly prefix?: string | undefined
  /** The name of the value itself, when it is refused as a whole. */
  readonly root: string
  /** Default `config`; `call` for a call's own options (phase `call`). */
  readonly stage?: Stage | undefined
}

const isReason = Schema.is(Reason)

/** The first issue's path and reason, down to the issue that refused, or to a `leaf`. */
const located = (issue: ParseResult.ParseIssue, naming: Naming): {
  readonly option: string
  readonly reason: Reason
} => {
  let path: Array<PropertyKey> = []
  let root = naming.root
  let prefix = naming.prefix ?? ""
  const named = (reason: Reason) => ({ option: path.length === 0 ? root : `${prefix}${path.map(String).join(".")}`, reason })
  let current: ParseResult.ParseIssue = issue
  for (;;) {
    if ("ast" in current) {
      const scoped = current.ast.annotations[OptionScope]
      if (typeof scoped === "string") {
        path = []
        root = scoped
        prefix = ""
      }
      if (current.ast.annotations[OptionLeaf] === true) return named("invalid-value")
    }
    switch (current._tag) {
      case "Pointer":
        if (Array.isArray(current.path)) { for (const key of current.path) path.push(key) }
        else path.push(current.path as PropertyKey)
        current = current.issue
        break
      case "Composite": {
        const issues: ReadonlyArray<ParseResult.ParseIssue> = Array.isArray(current.issues) ? current.issues : [current.issues as ParseResult.ParseIssue]
        // An optional option is a union with `undefined`: its refusal is the other member's.
        current = issues.find((inner) => !(inner._tag === "Type" && inner.ast._tag === "UndefinedKeyword")) ?? issues[0]!
        break
      }
      case "Refinement":
      case "Transformation":
        current = current.issue
        break
      case "Type":
        return named(isReason(current.message) ? current.message : "invalid-value")
      default:
        return named("invalid-value")
    }
  }
}

const configLimits = { timeoutMs: defaults.timeoutMs, maxBytes: defaults.maxBytes }

/**
 * The `InvalidOption` of a refused option: stage `config` (or the naming's), phase
 * `authorization` for `auth` and an `insecure-url`, `call` at stage `call`, else `discovery`;
 * the default limits (none are in force yet), `not-sent`. Only the path and the reason are
 * read from the issue.
 */
export const invalidOptionOf = (issue: ParseResult.ParseIssue, naming: Naming): InvalidOption => {
  const { option, reason } = located(issue, naming)
  const stage = naming.stage ?? "config"
  const phase: Phase = stage === "call"
    ? "call"
    : option === "auth" || option.startsWith("auth.") || reason === "insecure-url"
    ? "authorization"
    : "discovery"
  return new InvalidOption({ stage, phase, limits: configLimits, option, reason, outcome: "not-sent", retryable: false })
}

/**
 * A decoder of options into what they mean, refusing the first problem (in the order the
 * schema declares its fields) as an `InvalidOption`. Synchronous: an `Either`, which is an Effect.
 */
export const decoder = <A, I>(schema: Schema.Schema<A, I>, naming: Naming) => {
  const decode = ParseResult.decodeUnknownEither(schema, { errors: "first" })
  return (input: unknown): Either.Either<A, InvalidOption> => Either.mapLeft(decode(input), (issue) => invalidOptionOf(issue, naming))
}
