/**
 * A test instrument: an HttpClient layer that records the URL of every request the connection
 * makes, and sends only those for 127.0.0.1, `localhost` or `[::1]`. A request for any other
 * host is recorded and failed at once (a transport `RequestError`), never sent: the tests of
 * what the client would contact off loopback run without traffic leaving the machine.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import { Effect, Layer } from "effect"

const testLoopback: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "[::1]"])

export interface LoopbackOnly {
  /** Every URL requested, in order (sent or not). */
  readonly requested: Array<string>
  /** The URLs requested that were not sent (another host than loopback). */
  readonly held: () => ReadonlyArray<string>
  readonly layer: Layer.Layer<HttpClient.HttpClient>
}

export const loopbackOnly = (base: Layer.Layer<HttpClient.HttpClient>): LoopbackOnly => {
  const requested: Array<string> = []
  const layer = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      HttpClient.transform(client, (send, request) =>
        Effect.suspend(() => {
          requested.push(request.url)
          if (testLoopback.has(new URL(request.url).hostname)) return send
          return Effect.fail(
            new HttpClientError.RequestError({ request, reason: "Transport", description: "test instrument: not sent off loopback" })
          )
        })))
  ).pipe(Layer.provide(base))
  const held = () => requested.filter((url) => !testLoopback.has(new URL(url).hostname))
  return { requested, held, layer }
}
