/**
 * The proxied HTTP client of `HttpProxy` (docs/DESIGN.md, "Proxies"): undici under Node, fetch
 * under Bun, each routing a request by `proxyRoute.route`, and, in front of both, the rule that a
 * credential for a plain-http origin never travels in clear through a proxy off this machine.
 * The Node client is imported only here, lazily: under Bun undici is never loaded.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ProxyFetch from "./proxyFetch.js"
import { ProxyCredentialRefused } from "./proxyErrors.js"
import type { TlsOptions } from "./proxyNode.js"
import { exposesCredential, route, type Settings } from "./proxyRoute.js"

/** Refuses, before it is sent, a request that would hand its `authorization` in clear to a proxy off this machine. */
const guarded = (client: HttpClient.HttpClient, settings: Settings): HttpClient.HttpClient =>
  HttpClient.mapRequestEffect(client, (request) => {
    const url = new URL(request.url)
    const proxy = route(settings, url)
    return proxy !== undefined && exposesCredential(proxy, url, request.headers)
      ? Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: new ProxyCredentialRefused() }))
      : Effect.succeed(request)
  })

/** The client for these settings; its sockets are closed when the scope closes. `tls` applies under Node only. */
export const make = (settings: Settings, tls?: TlsOptions): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.map(
    "Bun" in globalThis
      ? Effect.provide(ProxyFetch.make(settings), FetchHttpClient.layer)
      : Effect.flatMap(Effect.promise(() => import("./proxyNode.js")), (node) => node.make(settings, tls)),
    (client) => guarded(client, settings)
  )
