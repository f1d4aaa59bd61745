/**
 * Server-Sent Events decoding over raw bytes, following the WHATWG EventSource parsing rules
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
 * with a byte bound per event block.
 *
 * Lines end with CRLF, LF or CR; a CR that ends one chunk and an LF that starts the next are one
 * terminator. Lines are split on bytes (0x0A and 0x0D never occur inside a multi-byte UTF-8
 * sequence), then each complete line is decoded strictly. One leading byte order mark at the
 * very start of the stream is skipped (its bytes still count in the first block).
 *
 * Bound: the running raw byte count of the current block (every field line, comment line and
 * line terminator, up to and including the blank line that ends it) must not pass
 * `maxFrameBytes()`, read once when the block's first byte arrives. A block of exactly the bound
 * is accepted. As soon as a chunk takes the count past it, even mid-line, the stream fails with
 * `FrameTooLarge` and upstream is not pulled again. `observedBytes` is what was actually read of
 * that block: its bytes from its first byte through the end of the chunk that crossed the bound
 * (so it depends on where the chunks were cut; with one-byte chunks it is `maxBytes + 1`).
 * `InvalidUtf8.observedBytes` is counted the same way, up to the end of the chunk in which the
 * invalid line ended.
 *
 * Memory: only the current line's bytes and the current block's fields are kept.
 *
 * @internal
 */
import { decodeUtf8Exact, type FrameParser, LineBuffer } from "./byteCount.js"
import { FrameTooLarge, InvalidUtf8 } from "./frameErrors.js"

/** @internal */
export interface SseEvent {
  /** The `event` field, "message" when absent or empty. */
  readonly event: string
  /** The `data` lines joined by "\n" ("" when the block had no data line). */
  readonly data: string
  /** The `id` field of this block, if any (an id containing NUL is ignored). */
  readonly id: string | undefined
  /** The `retry` field of this block, if it was a valid integer (ASCII digits only). */
  readonly retry: number | undefined
  /** Raw bytes of the whole block, up to and including the blank line that ends it. */
  readonly bytes: number
}

/** @internal */
export interface SseDecodeOptions {
  /**
   * Bound for the block being read, read when a block starts (on a shared stream the bound
   * changes as requests come and go).
   */
  readonly maxFrameBytes: () => number
}

/**
 * A fresh SSE parser: feed it the body's chunks in order (`bodyReader.readFrames` does, or
 * `byteCount.parseFrames` over an Effect stream).
 *
 * Dispatch, one deviation from the WHATWG rules: the spec dispatches only when the data buffer
 * is non-empty (a `data:` line with an empty value already makes it non-empty, so
 * `id: x\ndata:\n\n` is dispatched with data ""). Here every block that held at least one line
 * other than a comment is emitted, with `data` possibly "", so blocks such as `id: x\n\n` or
 * `retry: 500\n\n` stay visible to the transport. Blocks of comments and blank lines only are
 * never emitted (their bytes are still counted against the bound, then the count resets).
 *
 * `id` is this block's own id, not the spec's "last event ID" carried over from earlier blocks.
 * A `retry` value too large to be a safe integer is ignored.
 *
 * At the end of input an incomplete block is discarded without error.
 *
 * Timing: a block is emitted as soon as the chunk holding its blank line is read, with one
 * exception. When that blank line ends with a CR that is the last byte of a chunk, the block
 * waits for the next chunk (or the end of input) to learn whether an LF follows and belongs to
 * it; this keeps `bytes` and the bound exact and the same for every chunking.
 *
 * @internal
 */
export const sseParser = (options: SseDecodeOptions): FrameParser<SseEvent, FrameTooLarge | InvalidUtf8> => new SseParser(options.maxFrameBytes)

const LF = 0x0a
const CR = 0x0d

class SseParser implements FrameParser<SseEvent, FrameTooLarge | InvalidUtf8> {
  private readonly line = new LineBuffer()
  /** Raw bytes of the current block read so far (0: no block started). */
  private blockBytes = 0
  /** The bound of the current block, read when its first byte arrived. */
  private limit = 0
  /** The last byte read was a CR ending a line: an LF right after it is part of that terminator. */
  private pendingCR = false
  /** The blank line ending the current block was read; dispatch waits for its terminator. */
  private complete = false
  private firstLine = true
  // Fields of the current block.
  private hasFields = false
  private eventType = ""
  private data: Array<string> = []
  private id: string | undefined = undefined
  private retry: number | undefined = undefined

  constructor(private readonly maxFrameBytes: () => number) {}

  feed = (chunk: Uint8Array, out: Array<SseEvent>): FrameTooLarge | InvalidUtf8 | undefined => {
    const n = chunk.length
    if (n === 0) return undefined
    let i = 0
    if (this.pendingCR) {
      // The previous chunk ended with a CR: an LF here completes that CRLF terminator.
      this.pendingCR = false
      if (chunk[0] === LF) {
        const error = this.count(1, n, 0)
        if (error !== undefined) return error
        i = 1
      }
      if (this.complete) this.dispatch(out)
    }
    // Next LF / CR at or after i; -1 when there is none in this chunk. Cached so that a chunk
    // with many LF-terminated lines is not rescanned for a CR at every line (and vice versa).
    let nextLf = -2
    let nextCr = -2
    while (i < n) {
      if (nextLf !== -1 && nextLf < i) nextLf = chunk.indexOf(LF, i)
      if (nextCr !== -1 && nextCr < i) nextCr = chunk.indexOf(CR, i)
      const t = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr)
      if (t === -1) {
        // The line goes on in the next chunk.
        const error = this.count(n - i, n, i)
        if (error !== undefined) return error
        this.line.keepTail(chunk, i)
        return undefined
      }
      // The line and the first byte of its terminator.
      const start = i
      i = t + 1
      const tooLarge = this.count(i - start, n, start)
      if (tooLarge !== undefined) return tooLarge
      // If invalid, what was read of this block: the bytes counted and the rest of the chunk.
      const invalid = this.endLine(this.line.take(chunk, start, t), this.blockBytes + n - i)
      if (invalid !== undefined) return invalid
      if (chunk[t] === CR) {
        if (i === n) {
          this.pendingCR = true
          return undefined
        }
        if (chunk[i] === LF) {
          const error = this.count(1, n, i)
          if (error !== undefined) return error
          i++
        }
      }
      if (this.complete) this.dispatch(out)
    }
    return undefined
  }

  end = (out: Array<SseEvent>): undefined => {
    // A block whose blank line ended with a CR at the very end of the input is complete.
    if (this.complete) this.dispatch(out)
    // Anything else is an incomplete block: discarded.
    this.line.clear()
    return undefined
  }

  /**
   * Counts `bytes` more bytes of the current block, read from `chunk[at, at + bytes)` in a chunk
   * of `chunkLength` bytes. Past the bound, fails with what was read of the block: its bytes
   * before `at` and the rest of the chunk from `at`.
   */
  private count(bytes: number, chunkLength: number, at: number): FrameTooLarge | undefined {
    if (this.blockBytes === 0) this.limit = this.maxFrameBytes()
    // Written as !(<=) so that a NaN bound refuses instead of reading without limit.
    if (!(this.blockBytes + bytes <= this.limit)) {
      return new FrameTooLarge({ observedBytes: this.blockBytes + chunkLength - at, maxBytes: this.limit })
    }
    this.blockBytes += bytes
    return undefined
  }

  /** A complete line (without its terminator); `observedBytes` in case it is not UTF-8. */
  private endLine(bytes: Uint8Array, observedBytes: number): InvalidUtf8 | undefined {
    let start = 0
    if (this.firstLine) {
      this.firstLine = false
      if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3
    }
    if (bytes.length === start) {
      this.complete = true
      return undefined
    }
    const text = decodeUtf8Exact(start === 0 ? bytes : bytes.subarray(start))
    if (text === undefined) return new InvalidUtf8({ observedBytes })
    this.field(text)
    return undefined
  }

  private field(line: string): void {
    const colon = line.indexOf(":")
    if (colon === 0) return // a comment
    this.hasFields = true
    let name = line
    let value = ""
    if (colon > 0) {
      name = line.slice(0, colon)
      value = line.charCodeAt(colon + 1) === 0x20 ? line.slice(colon + 2) : line.slice(colon + 1)
    }
    switch (name) {
      case "data":
        this.data.push(value)
        break
      case "event":
        this.eventType = value
        break
      case "id":
        if (!value.includes("\u0000")) this.id = value
        break
      case "retry":
        if (/^[0-9]+$/.test(value)) {
          const retry = Number(value)
          if (Number.isSafeInteger(retry)) this.retry = retry
        }
        break
        // Any other field is ignored.
    }
  }

  private dispatch(out: Array<SseEvent>): void {
    if (this.hasFields) {
      out.push({
        event: this.eventType === "" ? "message" : this.eventType,
        data: this.data.join("\n"),
        id: this.id,
        retry: this.retry,
        bytes: this.blockBytes
      })
    }
    this.blockBytes = 0
    this.complete = false
    this.hasFields = false
    this.eventType = ""
    this.data = []
    this.id = undefined
    this.retry = undefined
  }
}
