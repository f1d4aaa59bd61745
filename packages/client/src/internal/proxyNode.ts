/**
 * The proxied HTTP client under Node (docs/DESIGN.md, "Proxies"): undici, with one dispatcher
 * that sends each request where `proxyRoute.route` says: directly (an `Agent`) or through the
 * proxy of its scheme (a `ProxyAgent`). `https` targets go through a `CONNECT` tunnel (TLS to the
 * MCP server inside it); `http` targets in absolute form (`proxyTunnel: false`), as curl and Bun
 * send them. The proxy's credentials become its `Proxy-Authorization` header, which undici sends
 * to the proxy alone. Loaded only when a proxy is configured: `HttpProxy.ts` imports it lazily.
 *
 * Every request's handler is watched: an error before undici hands the request its connection
 * (`onConnect`, called just before the request's first byte is written) is wrapped as
 * `SetupFailed`, so a tunnel that broke while being set up reads as `not-sent`.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { SetupFailed } from "./proxyErrors.js"
import { route, type Settings } from "./proxyRoute.js"

/** TLS options for the MCP server behind a tunnel and for an `https` proxy (a private CA, say). */
export interface TlsOptions {
  readonly requestTls?: Undici.buildConnector.BuildOptions | undefined
  readonly proxyTls?: Undici.buildConnector.BuildOptions | undefined
}

type Method = (...args: Array<unknown>) => unknown

/**
 * The handler, with an error that comes before the request got its connection wrapped as
 * `SetupFailed`. Both handler styles of undici 7: `onConnect`/`onError`, and
 * `onRequestStart`/`onResponseError`; every other member is the handler's own, bound to it.
 * Each method is made once per handler, on its first read: undici reads `onData` (or
 * `onResponseData`) once per body chunk.
 */
const watched = (handler: Undici.Dispatcher.DispatchHandler): Undici.Dispatcher.DispatchHandler => {
  let connected = false
  const target = handler as Record<string | symbol, unknown>
  const methodOf = (property: string | symbol, member: Method): Method => {
    switch (property) {
      case "onConnect":
      case "onRequestStart":
        return (...args) => {
          connected = true
          return member.apply(target, args)
        }
      case "onError":
        return (error: unknown) => member.call(target, connected ? error : new SetupFailed(error))
      case "onResponseError":
        return (controller: unknown, error: unknown) => member.call(target, controller, connected ? error : new SetupFailed(error))
      default:
        return member.bind(target)
    }
  }
  const methods = new Map<string | symbol, { readonly member: Method; readonly method: Method }>()
  return new Proxy(target, {
    get(object, property) {
      const member = object[property]
      if (typeof member !== "function") return member
      const made = methods.get(property)
      if (made !== undefined && made.member === member) return made.method
      const method = methodOf(property, member as Method)
      methods.set(property, { member: member as Method, method })
      return method
    }
  }) as Undici.Dispatcher.DispatchHandler
}

/** A dispatcher that picks, per request, the direct agent or the proxy agent of the request's scheme. */
class Routing extends Undici.Dispatcher {
  readonly #direct: Undici.Agent
  readonly #agents = new Map<string, Undici.ProxyAgent>()
  readonly #settings: Settings
  readonly #tls: TlsOptions

  constructor(settings: Settings, tls: TlsOptions) {
    super()
    this.#settings = settings
    this.#tls = tls
    this.#direct = new Undici.Agent(tls.requestTls === undefined ? {} : { connect: tls.requestTls })
  }

  #pick(origin: string): Undici.Dispatcher {
    const proxy = route(this.#settings, new URL(origin))
    if (proxy === undefined) return this.#direct
    const uri = Redacted.value(proxy.url)
    let agent = this.#agents.get(uri)
    if (agent === undefined) {
      agent = new Undici.ProxyAgent({
        uri,
        proxyTunnel: false,
        ...(this.#tls.requestTls === undefined ? {} : { requestTls: this.#tls.requestTls }),
        ...(this.#tls.proxyTls === undefined ? {} : { proxyTls: this.#tls.proxyTls })
      })
      this.#agents.set(uri, agent)
    }
    return agent
  }

  override dispatch(options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler): boolean {
    return this.#pick(String(options.origin)).dispatch(options, watched(handler))
  }

  #all(): Array<Undici.Dispatcher> {
    return [this.#direct, ...this.#agents.values()]
  }

  override close(callback: () => void): void
  override close(): Promise<void>
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all(this.#all().map((dispatcher) => dispatcher.close())).then(() => undefined)
    if (callback === undefined) return closed
    void closed.then(callback)
  }

  override destroy(err: Error | null, callback: () => void): void
  override destroy(callback: () => void): void
  override destroy(err: Error | null): Promise<void>
  override destroy(): Promise<void>
  override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
    const err = typeof first === "function" || first === undefined ? null : first
    const callback = typeof first === "function" ? first : second
    const destroyed = Promise.all(this.#all().map((dispatcher) => dispatcher.destroy(err))).then(() => undefined)
    if (callback === undefined) return destroyed
    void destroyed.then(callback)
  }
}

/** The client, its dispatcher destroyed when the scope closes. */
export const make = (settings: Settings, tls: TlsOptions = {}): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => new Routing(settings, tls)),
      (dispatcher) => Effect.promise(() => dispatcher.destroy())
    ),
    NodeHttpClient.makeUndici
  )
