/**
 * Reads HTTP response bodies under byte bounds, from the platform's own body when it is one we
 * recognize (a web `ReadableStream`, as `FetchHttpClient` gives, or a Node `Readable`, as the
 * undici and node:http clients give), and through the response's Effect `Stream` otherwise:
 * whole bodies (`readBody`) and framed bodies such as SSE (`readFrames`).
 *
 * Why: measured under load, draining a body through the Effect `Stream` machinery costs about
 * 300 µs of CPU per response (more for SSE), a third of a whole tool call or more
 * (docs/BENCHMARKS.md); pulling the platform body chunk by chunk costs a few µs. The rules
 * are the same on every path: every chunk is counted before it is kept, the read fails as soon
 * as the count passes the bound (`observedBytes` = bytes read, the crossing chunk included),
 * and the platform body is cancelled on refusal and on interruption, so the server sees the
 * connection closed.
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { concatBytes, type FrameParser } from "./byteCount.js"
import { FrameTooLarge } from "./frameErrors.js"

/** The platform body failed while being read (reset, aborted). */
export class BodyReadFailed extends Data.TaggedError("BodyReadFailed")<{ readonly cause: unknown }> {}

interface NodeReadable {
  on(event: string, listener: (...args: Array<unknown>) => void): unknown
  removeListener(event: string, listener: (...args: Array<unknown>) => void): unknown
  read(): Uint8Array | null
  destroy(error?: Error): unknown
  resume?(): unknown
  readonly readableEnded?: boolean
  readonly destroyed?: boolean
  /** node:http's `IncomingMessage`: the whole body has arrived. */
  readonly complete?: boolean
  /** Node's stream state (internal, stable for years): `ended` once the source pushed its end. */
  readonly _readableState?: { readonly ended?: boolean }
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
  // A Node stream first: under Node 20, reading the global `Response` loads undici (~30 ms at
  // start-up) even for a client that uses node:http.
  if (isNodeReadable(source)) return source
  if (typeof Response !== "undefined" && source instanceof Response) return source.body ?? undefined
  const body = typeof source === "object" && source !== null ? (source as { readonly body?: unknown }).body : undefined
  return isNodeReadable(body) ? body : undefined
}

/**
 * A body pulled chunk by chunk. `next` gives the next chunk, `undefined` once the body ended;
 * `cancel` stops reading and releases the body (the server sees it closed); it is idempotent
 * and harmless after the end.
 */
export interface BodyChunks {
  readonly next: Effect.Effect<Uint8Array | undefined, BodyReadFailed | HttpClientError.ResponseError>
  readonly cancel: Effect.Effect<void>
}

const webChunks = (body: ReadableStream<Uint8Array>): BodyChunks => {
  const reader = body.getReader()
  let done = false
  return {
    next: Effect.async((resume) => {
      reader.read().then(
        (result) => {
          if (result.done) done = true
          resume(Effect.succeed(result.done ? undefined : result.value))
        },
        (cause: unknown) => resume(Effect.fail(new BodyReadFailed({ cause })))
      )
    }),
    cancel: Effect.sync(() => {
      if (done) return
      done = true
      reader.cancel().catch(() => undefined)
    })
  }
}

/**
 * Lets go of a Node body that is no longer read: one still arriving is cut (the server sees the
 * connection closed); one whose end has arrived is left to go with the response, never cut.
 */
const dropNodeBody = (body: NodeReadable): void => {
  if (body.readableEnded === true || body.destroyed === true) return
  // node:http's message: destroying it closes the socket even when the whole body is here, so
  // a complete body is drained instead (it is already in memory).
  if (body.complete === true) return void body.resume?.()
  // Any other Node stream whose end has arrived (undici's body): the connection is already
  // free and the buffered bytes go with the response. Destroying it would only build an
  // abort error, a measurable cost on every acknowledgement and every SSE answer read to its
  // last event.
  if (body._readableState?.ended === true) return
  body.destroy()
}

const nodeChunks = (body: NodeReadable): BodyChunks => {
  let ended = false
  let failure: unknown
  let wake: (() => void) | undefined
  const notify = () => wake?.()
  // Paused mode: `read()` hands over what is buffered, `readable` says more arrived.
  body.on("readable", notify)
  body.on("end", () => {
    ended = true
    notify()
  })
  body.on("error", (cause: unknown) => {
    failure ??= cause
    notify()
  })
  body.on("close", () => {
    // A close without 'end' is a premature end of the body.
    if (body.readableEnded !== true) failure ??= new Error("body closed early")
    notify()
  })
  const poll = (): Effect.Effect<Uint8Array | undefined, BodyReadFailed> | undefined => {
    if (failure !== undefined) return Effect.fail(new BodyReadFailed({ cause: failure }))
    const chunk = body.read()
    if (chunk !== null) return Effect.succeed(chunk)
    // Nothing left and its end arrived: the body is read, without waiting a turn for 'end'.
    return ended || body._readableState?.ended === true ? Effect.succeed(undefined) : undefined
  }
  return {
    next: Effect.async((resume) => {
      const ready = poll()
      if (ready !== undefined) return resume(ready)
      wake = () => {
        const result = poll()
        if (result === undefined) return
        wake = undefined
        resume(result)
      }
      return Effect.sync(() => {
        wake = undefined
      })
    }),
    cancel: Effect.sync(() => {
      wake = undefined
      if (ended || failure !== undefined) return
      ended = true
      // Without a 'readable' listener a drained body flows (`resume` does nothing beside one).
      body.removeListener("readable", notify)
      dropNodeBody(body)
    })
  }
}

/** Any other client: its Effect stream, pulled in `scope` (closed by `cancel`). */
const streamChunks = (stream: Stream.Stream<Uint8Array, HttpClientError.ResponseError>, scope: Scope.CloseableScope): BodyChunks => {
  let pull: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<HttpClientError.ResponseError>> | undefined
  const buffered: Array<Uint8Array> = []
  let ended = false
  const next: BodyChunks["next"] = Effect.suspend(() => {
    if (buffered.length > 0) return Effect.succeed(buffered.shift())
    if (ended) return Effect.succeed(undefined)
    const pulled = pull ?? Effect.flatMap(Scope.extend(Stream.toPull(stream), scope), (p) => {
      pull = p
      return p
    })
    return Effect.matchEffect(pulled, {
      onFailure: Option.match({
        onNone: () => {
          ended = true
          return Effect.succeed(undefined)
        },
        onSome: (error) => Effect.fail(error)
      }),
      onSuccess: (chunk) => {
        for (const bytes of chunk) buffered.push(bytes)
        return next
      }
    })
  })
  return { next, cancel: Scope.close(scope, Exit.void) }
}

/**
 * Opens a response's body for reading chunk by chunk: the platform's own body when we know it,
 * the response's Effect stream otherwise.
 */
export const openBody = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<BodyChunks> =>
  Effect.suspend(() => {
    const body = platformBody(response)
    if (body === undefined) return Effect.map(Scope.make(), (scope) => streamChunks(response.stream, scope))
    return Effect.succeed(body instanceof ReadableStream ? webChunks(body) : nodeChunks(body))
  })

/**
 * Releases a response's body whether or not it was read: a body still arriving is cut (the
 * server sees the connection closed); a body that fully arrived but was not read is dropped
 * without costing the connection its reuse; a body already read is left alone. For a client we
 * do not recognize this does nothing: `@effect/platform` aborts its request once the response
 * is garbage collected.
 */
export const releaseBody = (response: HttpClientResponse.HttpClientResponse): void => {
  const body = platformBody(response)
  if (body === undefined) return
  if (body instanceof ReadableStream) {
    // A locked body is being (or was) read by `webChunks`, which releases it itself.
    if (!body.locked) body.cancel().catch(() => undefined)
    return
  }
  dropNodeBody(body)
}

/** Runs `read` over a response's body, then releases the body however the read ended. */
const usingBody = <A, E, R>(
  response: HttpClientResponse.HttpClientResponse,
  read: (chunks: BodyChunks) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => Effect.acquireUseRelease(openBody(response), read, (chunks) => chunks.cancel)

/**
 * Reads a whole body under `maxBytes`: every chunk is counted before it is kept, and the read
 * fails as soon as the count passes the ceiling (`observedBytes` includes the crossing chunk,
 * which is not kept). The body is released however the read ends.
 */
export const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number
): Effect.Effect<Uint8Array, FrameTooLarge | BodyReadFailed | HttpClientError.ResponseError> =>
  usingBody(response, (chunks) => {
    const parts: Array<Uint8Array> = []
    let total = 0
    const step: Effect.Effect<Uint8Array, FrameTooLarge | BodyReadFailed | HttpClientError.ResponseError> = Effect
      .flatMap(chunks.next, (chunk) => {
        if (chunk === undefined) return Effect.succeed(concatBytes(parts, total))
        total += chunk.byteLength
        // Written as !(<=) so that a NaN bound refuses instead of reading without limit.
        if (!(total <= maxBytes)) return Effect.fail(new FrameTooLarge({ observedBytes: total, maxBytes }))
        if (chunk.byteLength > 0) parts.push(chunk)
        return step
      })
    return step
  })

/**
 * Feeds a body to a frame parser and hands each frame to `onFrame`, in order, until `onFrame`
 * gives a value (returned) or the body ends (`undefined`). Frames completed before a parser
 * error are handed over first, then the read fails with that error. The body is released
 * however the read ends.
 */
export const readFrames = <F, PE, A, E, R>(
  response: HttpClientResponse.HttpClientResponse,
  parser: FrameParser<F, PE>,
  onFrame: (frame: F) => Effect.Effect<A | undefined, E, R>
): Effect.Effect<A | undefined, PE | E | BodyReadFailed | HttpClientError.ResponseError, R> =>
  usingBody(response, (chunks) => {
    const frames: Array<F> = []
    type Step = Effect.Effect<A | undefined, PE | E | BodyReadFailed | HttpClientError.ResponseError, R>
    /** Hands over `frames[index..]`, then goes on with `after`. */
    const deliver = (index: number, after: () => Step): Step => {
      if (index >= frames.length) {
        frames.length = 0
        return after()
      }
      return Effect.flatMap(onFrame(frames[index]!), (value) => value === undefined ? deliver(index + 1, after) : Effect.succeed(value))
    }
    const step: Step = Effect.flatMap(chunks.next, (chunk) => {
      const error = chunk === undefined ? parser.end(frames) : parser.feed(chunk, frames)
      return deliver(0, () => error !== undefined ? Effect.fail(error) : chunk === undefined ? Effect.succeed(undefined) : step)
    })
    return step
  })
