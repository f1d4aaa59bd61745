/**
 * The proxied HTTP client over `fetch`, for Bun (docs/DESIGN.md, "Proxies"): Bun's fetch takes a
 * `proxy` URL per request (credentials in it become `Proxy-Authorization`, sent to the proxy
 * alone), tunnels `https` targets with `CONNECT` and sends `http` ones in absolute form. Each
 * request gets the proxy `proxyRoute.route` picks for it. A request routed directly is sent
 * without a `proxy` option, and Bun's fetch then applies its own reading of the environment (the
 * same variables, read the same way in the common cases).
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { route, type Settings } from "./proxyRoute.js"

/** `fetch` with the `proxy` option Bun reads. */
type ProxiedInit = RequestInit & { readonly proxy?: string }

export const make = (settings: Settings): Effect.Effect<HttpClient.HttpClient, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client) => {
    const proxiedFetch: typeof globalThis.fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input))
      const proxy = route(settings, url)
      if (proxy === undefined) return globalThis.fetch(input, init)
      const withProxy: ProxiedInit = { ...init, proxy: Redacted.value(proxy.url) }
      return globalThis.fetch(input, withProxy)
    }
    return HttpClient.transform(client, (effect) => Effect.provideService(effect, FetchHttpClient.Fetch, proxiedFetch))
  })
