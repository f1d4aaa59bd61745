/**
 * The body reader over real loopback HTTP, through each HTTP client: it reads the platform's
 * own body (checked, so the fast path cannot silently fall back), accepts exactly the
 * ceiling, refuses ceiling + 1 while reading, and the server sees a refused body closed.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, type Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { platformBody, readBody } from "../src/internal/bodyReader.js"

const clients: ReadonlyArray<readonly [string, Layer.Layer<HttpClient.HttpClient>, "web" | "node"]> = [
  ["FetchHttpClient", FetchHttpClient.layer, "web"],
  ["NodeHttpClient (undici)", NodeHttpClient.layerUndici, "node"],
  ["NodeHttpClient (node:http)", NodeHttpClient.layer, "node"]
]

/** A server answering `size` bytes ("é" split across 3-byte writes), or an endless body. */
const serve = Effect.acquireRelease(
  Effect.promise(async () => {
    let aborted = 0
    const server = http.createServer((req, res) => {
      const size = Number(new URL(req.url ?? "/", "http://x").searchParams.get("size"))
      res.writeHead(200, { "content-type": "application/json" })
      res.on("close", () => {
        if (!res.writableFinished) aborted++
      })
      if (size === 0) {
        const chunk = Buffer.alloc(64 * 1024, 0x61)
        const write = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once("drain", write)
        }
        return write()
      }
      const bytes = Buffer.from("é".repeat(Math.floor(size / 2)) + (size % 2 === 1 ? "a" : ""))
      let offset = 0
      const next = () => {
        if (offset >= bytes.length) return res.end()
        res.write(bytes.subarray(offset, offset + 3), () => setImmediate(next))
        offset += 3
      }
      next()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, aborted: () => aborted }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
)

describe.each(clients)("readBody through %s", (_, layer, kind) => {
  const get = (url: string) => Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(HttpClientRequest.get(url)))

  it.scopedLive("reads the platform's own body, and exactly the ceiling", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const response = yield* get(`${url}?size=1001`)
      const body = platformBody(response)
      expect(body === undefined ? "none" : body instanceof ReadableStream ? "web" : "node").toBe(kind)
      const bytes = yield* readBody(response, 1001)
      expect(bytes.length).toBe(1001)
      expect(new TextDecoder("utf-8", { fatal: true }).decode(bytes)).toBe("é".repeat(500) + "a")
    }).pipe(Effect.provide(layer)))

  it.scopedLive("refuses ceiling + 1 with the bytes read", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const exit = yield* Effect.exit(Effect.flatMap(get(`${url}?size=1001`), (response) => readBody(response, 1000)))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
        _tag: "FrameTooLarge",
        maxBytes: 1000,
        observedBytes: 1001
      })
    }).pipe(Effect.provide(layer)))

  it.scopedLive("refuses an endless body while reading; the server sees it closed", () =>
    Effect.gen(function*() {
      const { aborted, url } = yield* serve
      const error = yield* Effect.flip(Effect.flatMap(get(`${url}?size=0`), (response) => readBody(response, 256 * 1024)))
      expect(error).toMatchObject({ _tag: "FrameTooLarge" })
      // Past the ceiling by at most the chunk that crossed it (the platform sizes chunks).
      expect((error as { observedBytes: number }).observedBytes).toBeLessThanOrEqual(256 * 1024 + 512 * 1024)
      yield* Effect.promise(async () => {
        const started = Date.now()
        while (aborted() === 0 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 10))
      })
      expect(aborted()).toBe(1)
    }).pipe(Effect.provide(layer)))
})
