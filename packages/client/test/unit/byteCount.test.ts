import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, FastCheck as fc, Stream } from "effect"
import { readBody } from "../../src/internal/bodyReader.js"
import { decodeUtf8 } from "../../src/internal/byteCount.js"
import { FrameTooLarge, InvalidUtf8 } from "../../src/internal/frameErrors.js"
import { cut, pulled, streamResponse, utf8 } from "../support/chunking.js"

/** The fallback path of `readBody`: a client whose platform body we do not know. */
const readBounded = <E>(body: Stream.Stream<Uint8Array, E>, maxBytes: number) =>
  readBody(streamResponse(body), maxBytes) as Effect.Effect<Uint8Array, E | FrameTooLarge>

/** A never-ending body of `size`-byte chunks that counts pulls and finalization. */
const endless = (size: number) => {
  const state = { pulls: 0, finalized: false }
  const body = Stream.repeatEffect(
    Effect.sync(() => {
      state.pulls++
      return new Uint8Array(size).fill(0x61)
    })
  ).pipe(Stream.ensuring(Effect.sync(() => {
    state.finalized = true
  })))
  return { state, body }
}

describe("readBody over the Effect stream of an unknown HTTP client", () => {
  it.effect("accepts exactly the ceiling and returns the bytes", () =>
    Effect.gen(function*() {
      const bytes = utf8("héllo wörld, 😀!")
      const result = yield* readBounded(pulled(cut(bytes, [1, 2, 5, 9])), bytes.length)
      expect(result).toEqual(bytes)
    }))

  it.effect("refuses ceiling + 1, counting the whole chunk that crossed", () =>
    Effect.gen(function*() {
      const bytes = new Uint8Array(11).fill(0x20)
      const error = yield* Effect.flip(readBounded(pulled(cut(bytes, [4])), 10))
      expect(error).toBeInstanceOf(FrameTooLarge)
      expect(error).toMatchObject({ _tag: "FrameTooLarge", observedBytes: 11, maxBytes: 10 })
      const error2 = yield* Effect.flip(readBounded(pulled(cut(bytes, [4, 10])), 10))
      expect(error2).toMatchObject({ observedBytes: 11, maxBytes: 10 })
    }))

  it.effect("counts multi-byte characters split across chunks by their true length", () =>
    Effect.gen(function*() {
      const bytes = utf8("€😀") // 3 + 4 bytes
      const chunks = cut(bytes, [1, 2, 4, 5, 6])
      expect(yield* readBounded(pulled(chunks), 7)).toEqual(bytes)
      const error = yield* Effect.flip(readBounded(pulled(chunks), 6))
      expect(error).toMatchObject({ observedBytes: 7, maxBytes: 6 })
    }))

  it.effect("refuses a never-ending body while reading and stops pulling it", () =>
    Effect.gen(function*() {
      const { body, state } = endless(10)
      const error = yield* Effect.flip(readBounded(body, 95))
      expect(error).toMatchObject({ _tag: "FrameTooLarge", observedBytes: 100, maxBytes: 95 })
      expect(state.pulls).toBe(10)
      expect(state.finalized).toBe(true)
    }))

  it.effect("does not read past the chunk that crossed within one upstream chunk of arrays", () =>
    Effect.gen(function*() {
      const parts = [new Uint8Array(4), new Uint8Array(4), new Uint8Array(4)]
      const error = yield* Effect.flip(readBounded(Stream.fromChunk(Chunk.fromIterable(parts)), 5))
      expect(error).toMatchObject({ observedBytes: 8, maxBytes: 5 })
    }))

  it.effect("fails closed on a NaN ceiling", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(readBounded(pulled([utf8("a")]), Number.NaN))
      expect(error).toMatchObject({ _tag: "FrameTooLarge", observedBytes: 1 })
    }))

  it.effect("passes upstream failures through", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(readBounded(Stream.fail("boom" as const), 5))
      expect(error).toBe("boom")
    }))

  it.effect("reads an 8 MiB body in 64 KiB chunks with one copy", () =>
    Effect.gen(function*() {
      const size = 8 * 1024 * 1024
      const chunks = Array.from({ length: size / 65536 }, (_, k) => new Uint8Array(65536).fill(k & 0xff))
      const result = yield* readBounded(pulled(chunks), size)
      expect(result.length).toBe(size)
      expect(result[65536 * 3]).toBe(3)
      expect(yield* Effect.flip(readBounded(pulled(chunks), size - 1))).toMatchObject({ observedBytes: size })
    }))

  it("is the same for every chunking (property)", () =>
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.integer({ min: 1, max: 220 }),
        fc.boolean(),
        (bytes, offsets, maxBytes, onePerPull) => {
          const chunks = cut(bytes, offsets)
          const body = onePerPull ? pulled(chunks) : Stream.fromIterable(chunks)
          const result = Effect.runSync(Effect.either(readBounded(body, maxBytes)))
          if (bytes.length <= maxBytes) {
            expect(result).toEqual(Either.right(bytes))
          } else {
            // observedBytes: every byte up to the end of the chunk holding byte number maxBytes + 1.
            let end = 0
            for (const c of chunks) {
              end += c.length
              if (end > maxBytes) break
            }
            expect(Either.isLeft(result) && result.left).toMatchObject({ observedBytes: end, maxBytes })
          }
        }
      ),
      { numRuns: 300 }
    ))
})

describe("decodeUtf8", () => {
  it("decodes valid UTF-8 and drops a leading byte order mark", () => {
    expect(decodeUtf8(utf8("a€😀"))).toEqual(Either.right("a€😀"))
    expect(decodeUtf8(utf8("\uFEFF{}"))).toEqual(Either.right("{}"))
    expect(decodeUtf8(new Uint8Array(0))).toEqual(Either.right(""))
  })

  it("refuses invalid UTF-8 instead of repairing it", () => {
    const invalid = [
      [0xff],
      [0x61, 0xe2, 0x82], // truncated sequence
      [0xc0, 0xaf], // overlong
      [0xed, 0xa0, 0x80], // UTF-16 surrogate
      [0xf4, 0x90, 0x80, 0x80] // above U+10FFFF
    ]
    for (const bytes of invalid) {
      const result = decodeUtf8(Uint8Array.from(bytes))
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left).toBeInstanceOf(InvalidUtf8)
        expect(result.left.observedBytes).toBe(bytes.length)
      }
    }
  })
})
