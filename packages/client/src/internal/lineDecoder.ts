/**
 * Newline-delimited frames (stdio JSON-RPC) over raw bytes, with a byte bound per line.
 *
 * A line ends with `\n`; a `\r` right before it is dropped from the text but counted in the
 * bytes. The bound counts the line including its `\n`, read once (from `maxLineBytes()`) when
 * the line's first byte arrives; a line of exactly the bound is accepted. As soon as a chunk
 * takes a line past the bound (even a line that never ends) the stream fails with
 * `FrameTooLarge` and upstream is not pulled again. `observedBytes` is what was actually read of
 * that line: its bytes from its first byte through the end of the chunk that crossed the bound.
 * `InvalidUtf8.observedBytes` is counted the same way, through the end of the chunk in which
 * the invalid line ended (for a last line without `\n`: its bytes).
 *
 * Each complete line is decoded strictly as UTF-8; nothing is stripped but the final `\r`
 * (a byte order mark is kept as U+FEFF). Only the current line's bytes are kept in memory.
 *
 * @internal
 */
import type { Stream } from "effect"
import { decodeUtf8Exact, type FrameParser, LineBuffer, parseFrames } from "./byteCount.js"
import { FrameTooLarge, InvalidUtf8 } from "./frameErrors.js"

/** @internal */
export interface Line {
  /** The line's text, without its `\n` and without a `\r` right before it. */
  readonly text: string
  /** Raw bytes of the line, including its terminating `\n` (and any `\r` before it). */
  readonly bytes: number
}

/** @internal */
export interface LineDecodeOptions {
  /** Bound for the line being read, read when a line starts. */
  readonly maxLineBytes: () => number
}

/**
 * Splits a byte stream into lines.
 *
 * A last line without `\n` at the end of the input is still emitted (its `bytes` then have no
 * terminator; a final `\r` is dropped from its text as well): a process that exits right after
 * writing its last message without a newline does not lose it. Empty lines are emitted too
 * (text "", bytes 1 or 2); the consumer decides what to do with them.
 *
 * @internal
 */
export const decodeLines = <E, R>(
  body: Stream.Stream<Uint8Array, E, R>,
  options: LineDecodeOptions
): Stream.Stream<Line, E | FrameTooLarge | InvalidUtf8, R> => parseFrames(body, () => new LineParser(options.maxLineBytes))

const LF = 0x0a
const CR = 0x0d

class LineParser implements FrameParser<Line, FrameTooLarge | InvalidUtf8> {
  private readonly line = new LineBuffer()
  /** Raw bytes of the current line read so far (0: no line started). */
  private lineBytes = 0
  /** The bound of the current line, read when its first byte arrived. */
  private limit = 0

  constructor(private readonly maxLineBytes: () => number) {}

  feed = (chunk: Uint8Array, out: Array<Line>): FrameTooLarge | InvalidUtf8 | undefined => {
    const n = chunk.length
    let i = 0
    while (i < n) {
      if (this.lineBytes === 0) this.limit = this.maxLineBytes()
      const lf = chunk.indexOf(LF, i)
      const end = lf === -1 ? n : lf + 1
      // Written as !(<=) so that a NaN bound refuses instead of reading without limit.
      if (!(this.lineBytes + end - i <= this.limit)) {
        return new FrameTooLarge({ observedBytes: this.lineBytes + n - i, maxBytes: this.limit })
      }
      if (lf === -1) {
        // The line goes on in the next chunk.
        this.lineBytes += n - i
        this.line.keepTail(chunk, i)
        return undefined
      }
      const bytes = this.lineBytes + end - i
      const text = decodeLine(this.line.take(chunk, i, lf))
      if (text === undefined) return new InvalidUtf8({ observedBytes: this.lineBytes + n - i })
      out.push({ text, bytes })
      this.lineBytes = 0
      i = end
    }
    return undefined
  }

  end = (out: Array<Line>): InvalidUtf8 | undefined => {
    if (this.lineBytes === 0) return undefined
    const text = decodeLine(this.line.takeAll())
    if (text === undefined) return new InvalidUtf8({ observedBytes: this.lineBytes })
    out.push({ text, bytes: this.lineBytes })
    this.lineBytes = 0
    return undefined
  }
}

/** Strict decoding of a line without its `\n`, dropping a final `\r`. */
const decodeLine = (bytes: Uint8Array): string | undefined =>
  decodeUtf8Exact(bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, bytes.length - 1) : bytes)
