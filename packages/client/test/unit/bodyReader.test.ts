/**
 * The body reader over real loopback HTTP, through each HTTP client: it reads the platform's
 * own body (checked, so the fast path cannot silently fall back), accepts exactly the
 * ceiling, refuses ceiling + 1 while reading, and the server sees a refused body closed. The
 * same for framed (SSE) bodies read with `readFrames`: frames across 3-byte writes, a stop at
 * the wanted frame (the rest of the body released), a frame past its bound, a reset mid-body.
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, type Layer, Stream } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { platformBody, readBody, readFrames } from "../../src/internal/bodyReader.js"
import { type SseEvent, sseParser } from "../../src/internal/sseDecoder.js"
import { pulled, streamResponse, utf8 } from "../support/chunking.js"

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
      const params = new URL(req.url ?? "/", "http://x").searchParams
      const size = Number(params.get("size"))
      res.on("close", () => {
        if (!res.writableFinished) aborted++
      })
      const sse = params.get("sse")
      if (sse === "whole") {
        // Three events and the end of the body in one write: the whole body arrives at once.
        const body = Buffer.from([0, 1, 2].map((n) => `id: ${n}\ndata: {"n":${n}}\n\n`).join(""))
        res.writeHead(200, { "content-type": "text/event-stream", "content-length": body.length })
        return res.end(body)
      }
      if (sse !== null) {
        // Events "n" = 0, 1, ... written 3 bytes at a time; "endless" never ends, "reset" breaks
        // the connection after the first event.
        res.writeHead(200, { "content-type": "text/event-stream" })
        const count = sse === "endless" ? Infinity : sse === "reset" ? 1 : Number(sse)
        let n = 0
        let pending = Buffer.alloc(0)
        const next = () => {
          if (res.destroyed) return
          if (pending.length === 0) {
            if (n >= count) return sse === "reset" ? res.destroy() : res.end()
            pending = Buffer.from(`id: ${n}\ndata: {"n":${n}}\n\n`)
            n++
          }
          res.write(pending.subarray(0, 3), () => setImmediate(next))
          pending = pending.subarray(3)
        }
        return next()
      }
      res.writeHead(200, { "content-type": "application/json" })
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
  ({ server }) =>
    Effect.promise(() =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
    )
)

/** Waits (up to 5 s) until the server has seen a response closed before it finished. */
const untilAborted = (aborted: () => number) =>
  Effect.promise(async () => {
    const started = Date.now()
    while (aborted() === 0 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 10))
  })

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
      yield* untilAborted(aborted)
      expect(aborted()).toBe(1)
    }).pipe(Effect.provide(layer)))
})

describe.each(clients)("readFrames (SSE) through %s", (_, layer) => {
  const get = (url: string) => Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(HttpClientRequest.get(url)))
  const collect = (events: Array<SseEvent>, stopAt?: number) => (event: SseEvent) =>
    Effect.sync(() => {
      events.push(event)
      return JSON.parse(event.data).n === stopAt ? event : undefined
    })

  it.scopedLive("hands over every frame in order, then undefined at the end of the body", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const events: Array<SseEvent> = []
      const response = yield* get(`${url}?sse=5`)
      const result = yield* readFrames(response, sseParser({ maxFrameBytes: () => 100 }), collect(events))
      expect(result).toBeUndefined()
      expect(events.map((e) => e.data)).toEqual([0, 1, 2, 3, 4].map((n) => `{"n":${n}}`))
      expect(events.map((e) => e.id)).toEqual(["0", "1", "2", "3", "4"])
    }).pipe(Effect.provide(layer)))

  it.scopedLive("stops at the frame wanted and releases the rest of an endless body", () =>
    Effect.gen(function*() {
      const { aborted, url } = yield* serve
      const events: Array<SseEvent> = []
      const response = yield* get(`${url}?sse=endless`)
      const result = yield* readFrames(response, sseParser({ maxFrameBytes: () => 100 }), collect(events, 3))
      expect(result?.data).toBe(`{"n":3}`)
      expect(events.length).toBe(4)
      yield* untilAborted(aborted)
      expect(aborted()).toBe(1)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("refuses a frame past its bound while reading it; the server sees the body closed", () =>
    Effect.gen(function*() {
      const { aborted, url } = yield* serve
      const events: Array<SseEvent> = []
      const response = yield* get(`${url}?sse=endless`)
      // Each event is 19-20 bytes: a bound of 10 is passed by the first.
      const error = yield* Effect.flip(readFrames(response, sseParser({ maxFrameBytes: () => 10 }), collect(events)))
      expect(error).toMatchObject({ _tag: "FrameTooLarge", maxBytes: 10 })
      expect(events).toEqual([])
      yield* untilAborted(aborted)
      expect(aborted()).toBe(1)
    }).pipe(Effect.provide(layer)))

  it.scopedLive("hands over the frames before a reset, then fails with BodyReadFailed", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const events: Array<SseEvent> = []
      const response = yield* get(`${url}?sse=reset`)
      const error = yield* Effect.flip(readFrames(response, sseParser({ maxFrameBytes: () => 100 }), collect(events)))
      expect(error).toMatchObject({ _tag: "BodyReadFailed" })
      expect(events.map((e) => e.data)).toEqual([`{"n":0}`])
    }).pipe(Effect.provide(layer)))
})

describe("readFrames over the Effect stream of an unknown HTTP client", () => {
  it.effect("frames completed before a parser error are handed over first; the stream is released", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      let released = false
      const body = pulled([utf8("data: a\n\ndata: b\n"), utf8("\ndata: "), utf8("x".repeat(50))]).pipe(
        Stream.ensuring(Effect.sync(() => {
          released = true
        }))
      )
      const error = yield* Effect.flip(
        readFrames(streamResponse(body), sseParser({ maxFrameBytes: () => 20 }), (e) =>
          Effect.sync(() => {
            events.push(e.data)
            return undefined
          }))
      )
      expect(error).toMatchObject({ _tag: "FrameTooLarge", maxBytes: 20 })
      expect(events).toEqual(["a", "b"])
      expect(released).toBe(true)
    }))

  it.effect("a value from onFrame ends the read at that frame", () =>
    Effect.gen(function*() {
      let pulls = 0
      const body = Stream.repeatEffect(Effect.sync(() => {
        pulls++
        return utf8(`data: ${pulls}\n\n`)
      }))
      const result = yield* readFrames(streamResponse(body), sseParser({ maxFrameBytes: () => 20 }), (e) => Effect.succeed(e.data === "3" ? e.data : undefined))
      expect(result).toBe("3")
      expect(pulls).toBe(3)
    }))
})

describe.each(clients.filter(([, , kind]) => kind === "node"))("a Node body read to its last frame, through %s", (name, layer) => {
  const kind = name.includes("node:http") ? "node:http" : "undici"
  it.scopedLive("is let go once its end has arrived, never cut: no abort error, nothing destroyed", () =>
    Effect.gen(function*() {
      const { url } = yield* serve
      const response = yield* Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(HttpClientRequest.get(`${url}?sse=whole`)))
      const body = platformBody(response) as unknown as { destroyed: boolean; errored: unknown; readableEnded: boolean }
      const result = yield* readFrames(
        response,
        sseParser({ maxFrameBytes: () => 100 }),
        (event) => Effect.succeed(JSON.parse(event.data).n === 2 ? event : undefined)
      )
      expect(result?.data).toBe(`{"n":2}`)
      // Cutting it would have built an abort error for nothing (undici), or closed a socket
      // that can serve the next request (node:http).
      expect({ destroyed: body.destroyed, errored: body.errored ?? null }).toEqual({ destroyed: false, errored: null })
      // node:http's message is drained to its end, which frees its socket (undici's already is).
      if (kind === "node:http") {
        yield* Effect.promise(() =>
          new Promise((resolve) => body.readableEnded ? resolve(undefined) : (body as unknown as http.IncomingMessage).once("end", resolve))
        )
      }
    }).pipe(Effect.provide(layer)))
})
