/**
 * The client under test, as the contract suite sees it: the few entry points and public fields
 * the families use. A runner (the client's own Vitest suite, the qualification of the packed
 * packages) builds it from the real client and the platform layers it runs on; the testkit
 * itself never imports the client, so the suite judges whatever build it is given.
 */
import type { Effect, Layer, Scope } from "effect"

/** A budget override, as the client's policy and per-call options take it. */
export interface Budget {
  readonly timeout?: number | undefined
  readonly maxBytes?: number | undefined
}

/** The subset of the client's phase policy the families set. */
export interface Policy extends Budget {
  readonly discovery?: Budget | undefined
  readonly call?: Budget | undefined
  readonly releaseTimeout?: number | undefined
}

/**
 * A call-site case's policy: the case's own budget for the call, and a discovery that no loaded
 * machine runs out of (a stdio child can take most of a second to start, and the stateless
 * probe waits only half of discovery's budget), so that only the fault at the call ends anything.
 */
export const forCallSite = (policy: Policy): Policy => ({ ...policy, discovery: { ...policy.discovery, timeout: 20_000 } })

export interface HttpTarget {
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly transport?: "auto" | "streamable-http" | "sse" | undefined
  readonly policy?: Policy | undefined
}

export interface StdioTarget {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly policy?: Policy | undefined
}

/** The public fields of the client's error family that the families check. */
export interface ClientError {
  readonly _tag: string
  readonly message: string
  readonly stage: string
  readonly phase: string
  readonly limits: { readonly timeoutMs: number; readonly maxBytes: number }
  readonly outcome: string
  readonly retryable: boolean
  readonly observedBytes?: number | undefined
  readonly status?: number | undefined
  readonly code?: number | undefined
  readonly remoteMessage?: string | undefined
  readonly reason?: string | undefined
  readonly exitCode?: number | undefined
}

export interface Diagnostics {
  readonly pending: number
  readonly background: number
  readonly droppedFrames: number
}

export interface Connection {
  readonly protocolVersion: string
  readonly tools: ReadonlyArray<{ readonly name: string }>
  readonly callTool: (
    name: string,
    args?: Readonly<Record<string, unknown>>,
    overrides?: Budget
  ) => Effect.Effect<unknown, ClientError>
  readonly listTools: Effect.Effect<ReadonlyArray<unknown>, ClientError>
  readonly diagnostics: Effect.Effect<Diagnostics>
  /** Per-stage records of the discovery (docs/DESIGN.md, "Observation"): timings, bytes, outcomes. */
  readonly discovery: ReadonlyArray<unknown>
  /** The records of the operations after discovery. */
  readonly observations: Effect.Effect<ReadonlyArray<unknown>>
}

export interface PromiseCallOptions {
  readonly signal?: AbortSignal | undefined
  readonly timeout?: number | undefined
  readonly maxBytes?: number | undefined
}

export interface PromiseConnection {
  readonly callTool: (name: string, args?: Readonly<Record<string, unknown>>, options?: PromiseCallOptions) => Promise<unknown>
  readonly close: () => Promise<void>
  readonly effect: Connection
}

export type PromiseTarget =
  | (Omit<HttpTarget, "policy"> & { readonly httpClient: string })
  | { readonly stdio: Omit<StdioTarget, "policy"> }

/**
 * What a runner hands the suite. `R` is every platform service the client needs (an HTTP
 * client, a command executor); `layer(http)` provides all of them, with the HTTP client named
 * `http` (one of `httpClients`).
 */
export interface ClientUnderTest<R> {
  readonly httpClients: ReadonlyArray<string>
  readonly layer: (http: string) => Layer.Layer<R>
  readonly connectHttp: (target: HttpTarget) => Effect.Effect<Connection, ClientError, R | Scope.Scope>
  readonly connectStdio: (target: StdioTarget) => Effect.Effect<Connection, ClientError, R | Scope.Scope>
  readonly connectPromise: (
    target: PromiseTarget & { readonly policy?: Policy | undefined; readonly signal?: AbortSignal | undefined }
  ) => Promise<PromiseConnection>
}
