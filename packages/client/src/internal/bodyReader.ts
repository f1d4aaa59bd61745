/**
 * Reads a whole HTTP response body under a byte ceiling, from the platform's own body when it
 * is one we recognize (a web `ReadableStream`, as `FetchHttpClient` gives, or a Node
 * `Readable`, as the undici and node:http clients give), and through the response's Effect
 * `Stream` otherwise.
 *
 * Why: measured under load, draining a one-chunk body through the Effect `Stream` machinery
 * costs about 300 µs of CPU per response, a third of a whole tool call (docs/BENCHMARKS.md).
 * The rules are the same on both paths: every chunk is counted before it is kept, the read
 * fails as soon as the count passes the ceiling (`observedBytes` = bytes read, the crossing
 * chunk included), and the platform body is cancelled on refusal and on interruption, so the
 * server sees the connection closed.
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { concatBytes, readBounded } from "./byteCount.js"
import { FrameTooLarge } from "./frameErrors.js"

/** The platform body failed while being read (reset, aborted). */
export class BodyReadFailed extends Data.TaggedError("BodyReadFailed")<{ readonly cause: unknown }> {}

interface NodeReadable {
  on(event: string, listener: (...args: Array<any>) => void): unknown
  removeAllListeners(event?: string): unknown
  destroy(error?: Error): unknown
  readonly readableEnded?: boolean
}

const isNodeReadable = (u: unknown): u is NodeReadable =>
  typeof u === "object" && u !== null && typeof (u as NodeReadable).on === "function" &&
  typeof (u as NodeReadable).destroy === "function" && "readable" in u

/**
 * The platform body behind a response, when it is one we know how to read. `source` is not
 * part of the `HttpClientResponse` interface: this looks at it defensively and falls back to
 * the Effect stream for anything else.
 */
export const platformBody = (response: HttpClientResponse.HttpClientResponse): ReadableStream<Uint8Array> | NodeReadable | undefined => {
  // The client wraps responses (an interruptible wrapper keeps the original).
  let current: unknown = response
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null && "original" in current; depth++) {
    current = (current as { readonly original: unknown }).original
  }
  const source: unknown = typeof current === "object" && current !== null
    ? (current as { readonly source?: unknown }).source
    : undefined
  if (typeof Response !== "undefined" && source instanceof Response) return source.body ?? undefined
  if (isNodeReadable(source)) return source
  const body = typeof source === "object" && source !== null ? (source as { readonly body?: unknown }).body : undefined
  return isNodeReadable(body) ? body : undefined
}

const readWeb = (body: ReadableStream<Uint8Array>, maxBytes: number) =>
  Effect.async<Uint8Array, FrameTooLarge | BodyReadFailed>((resume) => {
    const reader = body.getReader()
    const parts: Array<Uint8Array> = []
    let total = 0
    let settled = false
    const settle = (effect: Effect.Effect<Uint8Array, FrameTooLarge | BodyReadFailed>) => {
      if (settled) return
      settled = true
      resume(effect)
    }
    const cancel = () => reader.cancel().catch(() => undefined)
    const pump = (): void => {
      reader.read().then(({ done, value }) => {
        if (settled) return
        if (done) return settle(Effect.succeed(concatBytes(parts, total)))
        total += value.byteLength
        if (total > maxBytes) {
          void cancel()
          return settle(Effect.fail(new FrameTooLarge({ observedBytes: total, maxBytes })))
        }
        parts.push(value)
        pump()
      }, (cause: unknown) => settle(Effect.fail(new BodyReadFailed({ cause }))))
    }
    pump()
    return Effect.sync(() => {
      settled = true
      void cancel()
    })
  })

const readNode = (body: NodeReadable, maxBytes: number) =>
  Effect.async<Uint8Array, FrameTooLarge | BodyReadFailed>((resume) => {
    const parts: Array<Uint8Array> = []
    let total = 0
    let settled = false
    const settle = (effect: Effect.Effect<Uint8Array, FrameTooLarge | BodyReadFailed>) => {
      if (settled) return
      settled = true
      body.removeAllListeners("data")
      resume(effect)
    }
    body.on("data", (chunk: Uint8Array) => {
      total += chunk.byteLength
      if (total > maxBytes) {
        body.destroy()
        return settle(Effect.fail(new FrameTooLarge({ observedBytes: total, maxBytes })))
      }
      parts.push(chunk)
    })
    body.on("end", () => settle(Effect.succeed(concatBytes(parts, total))))
    body.on("error", (cause: unknown) => settle(Effect.fail(new BodyReadFailed({ cause }))))
    body.on("close", () => {
      // A close without 'end' is a premature end of the body.
      if (body.readableEnded !== true) settle(Effect.fail(new BodyReadFailed({ cause: new Error("body closed early") })))
    })
    return Effect.sync(() => {
      settled = true
      body.destroy()
    })
  })

/**
 * Reads a whole body under `maxBytes`.
 */
export const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number
): Effect.Effect<Uint8Array, FrameTooLarge | BodyReadFailed | HttpClientError.ResponseError> => {
  const body = platformBody(response)
  if (body === undefined) return readBounded(response.stream, maxBytes)
  return body instanceof ReadableStream ? readWeb(body, maxBytes) : readNode(body, maxBytes)
}
