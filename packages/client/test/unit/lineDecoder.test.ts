import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Stream } from "effect"
import { FrameTooLarge, InvalidUtf8 } from "../../src/internal/frameErrors.js"
import { decodeLines, type Line } from "../../src/internal/lineDecoder.js"
import { concat, cut, utf8 } from "../support/chunking.js"

interface Outcome {
  readonly lines: Array<Line>
  readonly error: FrameTooLarge | InvalidUtf8 | undefined
}

const run = (chunks: ReadonlyArray<Uint8Array>, maxLineBytes: number | (() => number) = 1_000_000): Outcome => {
  const lines: Array<Line> = []
  const bound = typeof maxLineBytes === "number" ? () => maxLineBytes : maxLineBytes
  const body = Stream.fromIterable(chunks).pipe(Stream.rechunk(1))
  const result = Effect.runSync(
    Effect.either(Stream.runForEach(decodeLines(body, { maxLineBytes: bound }), (l) =>
      Effect.sync(() => {
        lines.push(l)
      })))
  )
  return { lines, error: Either.isLeft(result) ? result.left : undefined }
}
const plain = (error: FrameTooLarge | InvalidUtf8 | undefined) => error === undefined ? undefined : { ...error, _tag: error._tag }

describe("decodeLines", () => {
  it("splits on LF, drops a CR before it, counts both", () => {
    const text = utf8("{\"a\":1}\r\n\nplain\rtext\n\r\n")
    const expected = [
      { text: "{\"a\":1}", bytes: 9 },
      { text: "", bytes: 1 },
      { text: "plain\rtext", bytes: 11 },
      { text: "", bytes: 2 }
    ]
    expect(run([text])).toEqual({ lines: expected, error: undefined })
    expect(run(cut(text, [-1]))).toEqual({ lines: expected, error: undefined })
    expect(run(cut(text, [8, 9]))).toEqual({ lines: expected, error: undefined }) // CR | LF
  })

  it("emits a last line without LF at the end of the input", () => {
    expect(run([utf8("a\nbc")]).lines).toEqual([{ text: "a", bytes: 2 }, { text: "bc", bytes: 2 }])
    expect(run([utf8("a\nbc\r")]).lines).toEqual([{ text: "a", bytes: 2 }, { text: "bc", bytes: 3 }])
    expect(run([utf8("a\n")]).lines).toEqual([{ text: "a", bytes: 2 }])
    expect(run([]).lines).toEqual([])
  })

  it("emits a line without waiting for more input", () =>
    Effect.gen(function*() {
      const body = Stream.concat(Stream.make(utf8("one\ntw")), Stream.never)
      const lines = yield* Stream.runCollect(Stream.take(decodeLines(body, { maxLineBytes: () => 100 }), 1))
      expect([...lines]).toEqual([{ text: "one", bytes: 4 }])
    }).pipe(Effect.runPromise))

  it("decodes multi-byte characters split across chunks and keeps a byte order mark", () => {
    const text = utf8("\uFEFFé€😀\n日本\n")
    const expected = [{ text: "\uFEFFé€😀", bytes: 13 }, { text: "日本", bytes: 7 }]
    expect(run(cut(text, [-1])).lines).toEqual(expected)
    expect(run(cut(text, [1, 4, 6, 9, 11, 15])).lines).toEqual(expected)
  })

  it("refuses invalid UTF-8", () => {
    const text = concat(utf8("ok\n"), Uint8Array.of(0x7b, 0xff, 0x7d), utf8("\nnext\n"))
    const whole = run([text])
    expect(whole.lines).toEqual([{ text: "ok", bytes: 3 }])
    expect(whole.error).toBeInstanceOf(InvalidUtf8)
    expect(whole.error).toMatchObject({ observedBytes: 9 }) // the line, then the rest of the chunk read
    expect(plain(run(cut(text, [-1])).error)).toEqual({ _tag: "InvalidUtf8", observedBytes: 4 })
    // A last line without LF is decoded strictly too.
    expect(plain(run([Uint8Array.of(0x61, 0xe2, 0x82)]).error)).toEqual({ _tag: "InvalidUtf8", observedBytes: 3 })
  })

  it("accepts a line of exactly the bound (LF included) and refuses one byte more", () => {
    const line = utf8("{\"é\":1}\n") // 9 bytes
    expect(run([line, line], 9).lines).toEqual([{ text: "{\"é\":1}", bytes: 9 }, { text: "{\"é\":1}", bytes: 9 }])
    expect(plain(run(cut(line, [-1]), 8).error)).toEqual({ _tag: "FrameTooLarge", observedBytes: 9, maxBytes: 8 })
    // observedBytes: what was read of the line, through the end of the chunk that crossed.
    expect(plain(run([concat(line, line)], 8).error)).toEqual({
      _tag: "FrameTooLarge",
      observedBytes: 18,
      maxBytes: 8
    })
    // A last line without LF is bounded by its bytes.
    expect(run([utf8("abcd")], 4).lines).toEqual([{ text: "abcd", bytes: 4 }])
    expect(plain(run([utf8("abcde")], 4).error)).toMatchObject({ _tag: "FrameTooLarge", maxBytes: 4 })
  })

  it("reads the bound when a line starts", () => {
    const bounds = [5, 2, 5]
    let calls = 0
    const outcome = run(cut(utf8("abc\nd\nefg\n"), [-1]), () => bounds[calls++] ?? 0)
    expect(calls).toBe(3)
    expect(outcome.lines).toEqual([{ text: "abc", bytes: 4 }, { text: "d", bytes: 2 }, { text: "efg", bytes: 4 }])
  })

  it("refuses a never-ending line while reading and stops pulling upstream", () =>
    Effect.gen(function*() {
      const state = { pulls: 0, finalized: false }
      const body = Stream.concat(
        Stream.make(utf8("{\"ok\":true}\n{")),
        Stream.repeatEffect(Effect.sync(() => {
          state.pulls++
          return utf8("\"x\":1,\"y\":2,")
        }))
      ).pipe(Stream.ensuring(Effect.sync(() => {
        state.finalized = true
      })))
      const lines: Array<Line> = []
      const error = yield* Effect.flip(
        Stream.runForEach(decodeLines(body, { maxLineBytes: () => 1000 }), (l) => Effect.sync(() => lines.push(l)))
      )
      expect(lines).toEqual([{ text: "{\"ok\":true}", bytes: 12 }])
      // 1 byte, then 12 per pull: 1 + 83 * 12 = 997, the 84th pull crosses 1000.
      expect(state.pulls).toBe(84)
      expect(error).toBeInstanceOf(FrameTooLarge)
      expect(error).toMatchObject({ observedBytes: 1009, maxBytes: 1000 })
      expect(state.finalized).toBe(true)
    }).pipe(Effect.runPromise))

  it("splits an 8 MiB stream of lines quickly", () => {
    const line = utf8(`${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text: "x".repeat(1000) } })}\n`)
    const count = Math.floor((8 * 1024 * 1024) / line.length)
    const all = new Uint8Array(line.length * count)
    for (let k = 0; k < count; k++) all.set(line, k * line.length)
    const outcome = run(cut(all, Array.from({ length: all.length / 65536 }, (_, k) => (k + 1) * 65536 + 7)), 2000)
    expect(outcome.error).toBeUndefined()
    expect(outcome.lines.length).toBe(count)
    expect(outcome.lines.every((l) => l.bytes === line.length)).toBe(true)
  })
})

describe("decodeLines: properties", () => {
  const lineArb = fc.record({
    text: fc
      .array(fc.constantFrom("a", "{", "}", " ", "\r", "é", "€", "😀", "日", "\uFEFF"), { maxLength: 10 })
      .map((cs) => cs.join("")),
    crlf: fc.boolean()
  })
  const cutsArb = fc.oneof(fc.array(fc.nat(), { maxLength: 40 }), fc.constant([-1]))

  /** Encodes lines (the last one possibly without LF); returns the bytes and the expected lines. */
  const encode = (lines: ReadonlyArray<{ text: string; crlf: boolean }>, lastTerminated: boolean) => {
    const parts: Array<Uint8Array> = []
    const expected: Array<Line> = []
    lines.forEach((line, k) => {
      const last = k === lines.length - 1
      const terminator = last && !lastTerminated ? "" : line.crlf ? "\r\n" : "\n"
      const raw = utf8(line.text + terminator)
      if (raw.length === 0) return // an empty last line without LF is no line
      parts.push(raw)
      // The line without its LF, less one final CR (before the LF, or at the end of the input).
      const text = (terminator === "\r\n" ? `${line.text}\r` : line.text).replace(/\r$/, "")
      expected.push({ text, bytes: raw.length })
    })
    return { bytes: concat(...parts), expected }
  }

  it("every chunking yields the same lines", () =>
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 8 }), fc.boolean(), cutsArb, (lines, lastTerminated, offsets) => {
        const { bytes, expected } = encode(lines, lastTerminated)
        expect(run([bytes])).toEqual({ lines: expected, error: undefined })
        expect(run(cut(bytes, offsets))).toEqual({ lines: expected, error: undefined })
      }),
      { numRuns: 400 }
    ))

  it("every chunking refuses the same line with the bytes read of it", () =>
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        cutsArb,
        fc.integer({ min: 1, max: 30 }),
        (lines, lastTerminated, offsets, maxBytes) => {
          const { bytes, expected } = encode(lines, lastTerminated)
          const chunks = cut(bytes, offsets)
          const outcome = run(chunks, maxBytes)
          const over = expected.findIndex((l) => l.bytes > maxBytes)
          if (over === -1) {
            expect(outcome).toEqual({ lines: expected, error: undefined })
            return
          }
          const start = expected.slice(0, over).reduce((n, l) => n + l.bytes, 0)
          let end = 0
          for (const c of chunks) {
            end += c.length
            if (end > start + maxBytes) break
          }
          expect(outcome.lines).toEqual(expected.slice(0, over))
          expect(plain(outcome.error)).toEqual({ _tag: "FrameTooLarge", observedBytes: end - start, maxBytes })
        }
      ),
      { numRuns: 400 }
    ))
})
