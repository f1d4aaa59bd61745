/**
 * Raw byte helpers for bodies and frames (docs/DESIGN.md, "Bytes"): joining parts with
 * one copy, strict UTF-8 decoding, the frame-parser interface and its driver over an Effect
 * stream, and a partial-line buffer.
 *
 * Bytes are counted as they arrive, before any text decoding, so a multi-byte UTF-8 character
 * split between chunks counts its true length (the ceilings themselves are applied by the body
 * reader, `bodyReader.ts`, and by each frame parser).
 *
 * @internal
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { InvalidUtf8 } from "./frameErrors.js"

/**
 * Joins byte parts whose lengths add up to `total` with a single copy (none for one part).
 *
 * @internal
 */
export const concatBytes = (parts: ReadonlyArray<Uint8Array>, total: number): Uint8Array => {
  if (parts.length === 1) return parts[0]!
  const out = new Uint8Array(total)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

// `fatal: true`: invalid UTF-8 throws instead of being replaced with U+FFFD.
const bodyDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })
const exactDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Strict UTF-8 decoding of a complete body. A leading byte order mark is dropped, as
 * `Response.text()` / `Response.json()` drop it; anything invalid is an `InvalidUtf8` whose
 * `observedBytes` is `bytes.length`.
 *
 * @internal
 */
export const decodeUtf8 = (bytes: Uint8Array): Either.Either<string, InvalidUtf8> => {
  try {
    return Either.right(bodyDecoder.decode(bytes))
  } catch {
    return Either.left(new InvalidUtf8({ observedBytes: bytes.length }))
  }
}

/**
 * Strict UTF-8 decoding of a complete unit that keeps every character, a leading U+FEFF
 * included. `undefined` when the bytes are not valid UTF-8.
 *
 * @internal
 */
export const decodeUtf8Exact = (bytes: Uint8Array): string | undefined => {
  try {
    return exactDecoder.decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * A stateful frame parser fed raw chunks in order.
 *
 * @internal
 */
export interface FrameParser<A, PE> {
  /** Reads one chunk, pushing completed frames to `out`; an error stops reading at once. */
  readonly feed: (chunk: Uint8Array, out: Array<A>) => PE | undefined
  /** Upstream ended: pushes whatever the end of input completes. */
  readonly end: (out: Array<A>) => PE | undefined
}

/**
 * Runs a fresh parser (one per stream run) over `body`. Frames completed before an error are
 * emitted, then the stream fails; upstream is not pulled again after an error.
 *
 * @internal
 */
export const parseFrames = <A, PE, E, R>(
  body: Stream.Stream<Uint8Array, E, R>,
  make: () => FrameParser<A, PE>
): Stream.Stream<A, E | PE, R> =>
  Stream.suspend(() => {
    const parser = make()
    type Loop = Channel.Channel<Chunk.Chunk<A>, Chunk.Chunk<Uint8Array>, E | PE, E, unknown, unknown>
    const emit = (out: Array<A>, error: PE | undefined, next: Loop): Loop => {
      const rest: Loop = error === undefined ? next : Channel.fail(error)
      return out.length === 0 ? rest : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), rest)
    }
    const loop: Loop = Channel.readWithCause({
      onInput: (input: Chunk.Chunk<Uint8Array>) => {
        const out: Array<A> = []
        for (const bytes of input) {
          const error = parser.feed(bytes, out)
          if (error !== undefined) return emit(out, error, loop)
        }
        return emit(out, undefined, loop)
      },
      onFailure: (cause) => Channel.failCause(cause),
      onDone: () => {
        const out: Array<A> = []
        const error = parser.end(out)
        return emit(out, error, Channel.void)
      }
    })
    return Stream.pipeThroughChannelOrFail(body, loop)
  })

/**
 * Remembers the bytes of a partial line. A part that ends the chunk it came from is copied
 * when it is only a piece of that chunk, so a short remnant never keeps a large chunk alive.
 *
 * @internal
 */
export class LineBuffer {
  private parts: Array<Uint8Array> = []
  private total = 0

  get length(): number {
    return this.total
  }

  /** Keeps `chunk[start, chunk.length)` for a line that continues in the next chunk. */
  keepTail(chunk: Uint8Array, start: number): void {
    if (start >= chunk.length) return
    const part = start === 0 ? chunk : chunk.slice(start)
    this.parts.push(part)
    this.total += part.length
  }

  /** The whole line: the kept parts followed by `chunk[start, end)`; then empties the buffer. */
  take(chunk: Uint8Array, start: number, end: number): Uint8Array {
    const last = chunk.subarray(start, end)
    if (this.parts.length === 0) return last
    this.parts.push(last)
    const line = concatBytes(this.parts, this.total + last.length)
    this.clear()
    return line
  }

  /** The kept parts only (a line cut short by the end of input); then empties the buffer. */
  takeAll(): Uint8Array {
    const line = concatBytes(this.parts, this.total)
    this.clear()
    return line
  }

  clear(): void {
    this.parts = []
    this.total = 0
  }
}
