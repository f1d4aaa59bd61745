/**
 * Internal framing errors raised while reading raw bytes. Transports map them to the public
 * error family (`FrameTooLarge` to a byte-ceiling failure, `InvalidUtf8` to a protocol
 * violation); they never leave the package as they are.
 *
 * @internal
 */
import * as Data from "effect/Data"

/**
 * A body or frame passed its byte ceiling while it was being read. `observedBytes` is the
 * number of bytes of that body or frame the reader actually read before it stopped (always
 * more than `maxBytes`, never an inferred or declared total).
 *
 * @internal
 */
export class FrameTooLarge extends Data.TaggedError("FrameTooLarge")<{
  readonly observedBytes: number
  readonly maxBytes: number
}> {}

/**
 * A complete unit (body, SSE line, stdio line) is not valid UTF-8. It is never repaired.
 *
 * @internal
 */
export class InvalidUtf8 extends Data.TaggedError("InvalidUtf8")<{
  readonly observedBytes: number
}> {}
