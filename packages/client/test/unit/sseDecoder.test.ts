import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Stream } from "effect"
import { FrameTooLarge, InvalidUtf8 } from "../../src/internal/frameErrors.js"
import { parseFrames } from "../../src/internal/byteCount.js"
import { type SseDecodeOptions, type SseEvent, sseParser } from "../../src/internal/sseDecoder.js"
import { bytesEach, concat, cut, pulled, utf8 } from "../support/chunking.js"

/** The SSE parser over an Effect stream of chunks. */
const decodeSse = <E>(body: Stream.Stream<Uint8Array, E>, options: SseDecodeOptions) => parseFrames(body, () => sseParser(options))

interface Outcome {
  readonly events: Array<SseEvent>
  readonly error: FrameTooLarge | InvalidUtf8 | undefined
}

/** Runs the decoder synchronously, keeping the events emitted before any failure. */
const run = (
  chunks: ReadonlyArray<Uint8Array>,
  maxFrameBytes: number | (() => number) = 1_000_000
): Outcome => {
  const events: Array<SseEvent> = []
  const bound = typeof maxFrameBytes === "number" ? () => maxFrameBytes : maxFrameBytes
  const result = Effect.runSync(
    Effect.either(Stream.runForEach(decodeSse(pulled(chunks), { maxFrameBytes: bound }), (e) =>
      Effect.sync(() => {
        events.push(e)
      })))
  )
  return { events, error: Either.isLeft(result) ? result.left : undefined }
}
const plain = (error: FrameTooLarge | InvalidUtf8 | undefined) => error === undefined ? undefined : { ...error, _tag: error._tag }

const ev = (fields: Partial<SseEvent> & { readonly bytes: number }): SseEvent => ({
  event: "message",
  data: "",
  id: undefined,
  retry: undefined,
  ...fields
})

describe("decodeSse: fields", () => {
  it("parses data, event, id, retry and comments", () => {
    const text = ": hello\nevent: update\ndata: one\ndata:two\ndata:  three\nid: 7\nretry: 1500\nfoo: bar\n\n"
    const { error, events } = run([utf8(text)])
    expect(error).toBeUndefined()
    expect(events).toEqual([
      ev({ event: "update", data: "one\ntwo\n three", id: "7", retry: 1500, bytes: utf8(text).length })
    ])
  })

  it("treats a line without colon as a field with an empty value", () => {
    const { events } = run([utf8("data\ndata\nevent\n\n")])
    expect(events).toEqual([ev({ data: "\n", bytes: 17 })])
  })

  it("ignores an id containing NUL and a retry that is not all digits", () => {
    const { events } = run([utf8("id: 1\nid: a\u0000b\nretry: 10\nretry: 2x\nretry: -3\nretry:\ndata: x\n\n")])
    expect(events).toMatchObject([{ id: "1", retry: 10, data: "x" }])
  })

  it("emits a priming event with empty data and an id-only block; skips comment-only blocks", () => {
    const text = "id: p1\ndata:\n\n: keep-alive\n\nid: p2\n\n\n\nretry: 5\n\n"
    const { events } = run([utf8(text)])
    expect(events).toEqual([
      ev({ id: "p1", bytes: 14 }),
      ev({ id: "p2", bytes: 8 }),
      ev({ retry: 5, bytes: 10 })
    ])
  })

  it("handles CR, LF and CRLF line endings, including CRLF split across chunks", () => {
    const text = "data: a\r\ndata: b\rdata: c\n\r\nevent: e\r\r"
    const whole = run([utf8(text)])
    expect(whole.error).toBeUndefined()
    expect(whole.events).toEqual([
      ev({ data: "a\nb\nc", bytes: 27 }),
      ev({ event: "e", bytes: 10 })
    ])
    for (const split of [8, 9, 17, 25, 26, 36]) {
      expect(run(cut(utf8(text), [split]))).toEqual(whole)
    }
    expect(run(bytesEach(utf8(text)))).toEqual(whole)
  })

  it("counts the LF of a CRLF that ends a block in that block, even when it arrives in the next chunk", () => {
    const text = utf8("data: a\r\n\r\n") // 11 bytes
    expect(run(cut(text, [10]), 11).events).toEqual([ev({ data: "a", bytes: 11 })])
    expect(plain(run(cut(text, [10]), 10).error)).toEqual({ _tag: "FrameTooLarge", observedBytes: 11, maxBytes: 10 })
    expect(plain(run([text], 10).error)).toEqual({ _tag: "FrameTooLarge", observedBytes: 11, maxBytes: 10 })
  })

  it("dispatches a block ended by a CR at the very end of the input", () => {
    expect(run([utf8("data: a\r"), utf8("\r")]).events).toEqual([ev({ data: "a", bytes: 9 })])
  })

  it("emits an LF-terminated event without waiting for more input", () =>
    Effect.gen(function*() {
      const body = Stream.concat(Stream.make(utf8("data: a\n\n")), Stream.never)
      const events = yield* Stream.runCollect(Stream.take(decodeSse(body, { maxFrameBytes: () => 100 }), 1))
      expect([...events]).toEqual([ev({ data: "a", bytes: 9 })])
    }).pipe(Effect.runPromise))

  it("skips a leading byte order mark, counting it in the first block, even split across chunks", () => {
    const text = concat(Uint8Array.of(0xef, 0xbb, 0xbf), utf8("data: a\n\ndata: b\n\n"))
    const expected = [ev({ data: "a", bytes: 12 }), ev({ data: "b", bytes: 9 })]
    expect(run([text]).events).toEqual(expected)
    expect(run(bytesEach(text)).events).toEqual(expected)
    expect(run(cut(text, [1, 2])).events).toEqual(expected)
    // Only at the very start: later it is part of the field name (an unknown field).
    const later = run([utf8("data: a\n\n\uFEFFdata: b\n\n")])
    expect(later.events).toEqual([ev({ data: "a", bytes: 9 }), ev({ bytes: 12 })])
    // A byte order mark alone on the first line makes it blank.
    expect(run([utf8("\uFEFF\ndata: c\n\n")]).events).toEqual([ev({ data: "c", bytes: 9 })])
  })

  it("decodes multi-byte characters split across chunks", () => {
    const text = utf8("data: é€😀\nevent: 日本\n\n")
    const expected = [ev({ event: "日本", data: "é€😀", bytes: text.length })]
    expect(run(bytesEach(text)).events).toEqual(expected)
    expect(run(cut(text, [7, 9, 12, 14])).events).toEqual(expected)
  })

  it("refuses invalid UTF-8", () => {
    const text = concat(utf8("data: ok\n\ndata: "), Uint8Array.of(0xc3, 0x28), utf8("\n\n"))
    const { error, events } = run([text])
    expect(events).toEqual([ev({ data: "ok", bytes: 10 })])
    expect(error).toBeInstanceOf(InvalidUtf8)
    // What was read of the failing block: through the end of the only chunk.
    expect(error).toMatchObject({ observedBytes: 10 })
    expect(run(bytesEach(text)).error).toMatchObject({ _tag: "InvalidUtf8", observedBytes: 9 })
  })

  it("discards an incomplete block at the end of the input without error", () => {
    expect(run([utf8("data: a\n\ndata: b\n")])).toEqual({ events: [ev({ data: "a", bytes: 9 })], error: undefined })
    expect(run([utf8("data: a\n\ndata: b")])).toEqual({ events: [ev({ data: "a", bytes: 9 })], error: undefined })
    expect(run([utf8("data: b\r")])).toEqual({ events: [], error: undefined })
  })

  it("passes upstream failures through after the events already decoded", () =>
    Effect.gen(function*() {
      const body = Stream.concat(Stream.make(utf8("data: a\n\ndata: b")), Stream.fail("boom" as const))
      const events: Array<SseEvent> = []
      const error = yield* Effect.flip(
        Stream.runForEach(decodeSse(body, { maxFrameBytes: () => 100 }), (e) => Effect.sync(() => events.push(e)))
      )
      expect(error).toBe("boom")
      expect(events).toEqual([ev({ data: "a", bytes: 9 })])
    }).pipe(Effect.runPromise))
})

describe("decodeSse: frame bound", () => {
  it("accepts a block of exactly the bound and refuses one byte more", () => {
    const block = utf8(": c\ndata: é\n\n") // comment and terminators count: 4 + 9 + 1
    expect(block.length).toBe(14)
    expect(run([block, block], 14).events).toEqual([ev({ data: "é", bytes: 14 }), ev({ data: "é", bytes: 14 })])
    const refused = run(bytesEach(block), 13)
    expect(refused.events).toEqual([])
    expect(plain(refused.error)).toEqual({ _tag: "FrameTooLarge", observedBytes: 14, maxBytes: 13 })
    // observedBytes is what was read of the block: through the end of the chunk that crossed.
    expect(plain(run([concat(block, block)], 13).error)).toEqual({
      _tag: "FrameTooLarge",
      observedBytes: 28,
      maxBytes: 13
    })
  })

  it("counts comment-only blocks against the bound", () => {
    const text = utf8(": 0123456789\n\ndata: a\n\n")
    expect(plain(run([text], 10).error)).toMatchObject({ _tag: "FrameTooLarge", maxBytes: 10 })
    expect(run([text], 14).events).toEqual([ev({ data: "a", bytes: 9 })])
  })

  it("reads the bound when a block starts", () => {
    const bounds = [100, 9, 100]
    let calls = 0
    const bound = () => bounds[calls++] ?? 0
    const text = utf8("data: a\n\ndata: b\n\ndata: c\n\n")
    expect(run(bytesEach(text), bound).events.map((e) => e.data)).toEqual(["a", "b", "c"])
    expect(calls).toBe(3)
    calls = 0
    const bounds2 = [100, 8]
    const bound2 = () => bounds2[calls++] ?? 0
    const refused = run([text], bound2)
    expect(refused.events.map((e) => e.data)).toEqual(["a"])
    expect(plain(refused.error)).toEqual({ _tag: "FrameTooLarge", observedBytes: 18, maxBytes: 8 })
  })

  it("refuses a never-ending line while reading and stops pulling upstream", () =>
    Effect.gen(function*() {
      const state = { pulls: 0, finalized: false }
      const body = Stream.concat(
        Stream.make(utf8("data: a\n\ndata: ")),
        Stream.repeatEffect(Effect.sync(() => {
          state.pulls++
          return utf8("xxxxxxxxxx")
        }))
      ).pipe(Stream.ensuring(Effect.sync(() => {
        state.finalized = true
      })))
      const events: Array<SseEvent> = []
      const error = yield* Effect.flip(
        Stream.runForEach(decodeSse(body, { maxFrameBytes: () => 1000 }), (e) => Effect.sync(() => events.push(e)))
      )
      expect(events).toEqual([ev({ data: "a", bytes: 9 })])
      expect(error).toBeInstanceOf(FrameTooLarge)
      // 6 bytes of "data: " then 10 per pull: 6 + 99 * 10 = 996, the 100th pull crosses 1000.
      expect(state.pulls).toBe(100)
      expect(error).toMatchObject({ observedBytes: 1006, maxBytes: 1000 })
      expect(state.finalized).toBe(true)
    }).pipe(Effect.runPromise))

  it("refuses a never-ending stream of comment lines in one block", () =>
    Effect.gen(function*() {
      let pulls = 0
      const body = Stream.repeatEffect(Effect.sync(() => {
        pulls++
        return utf8(":\r\n")
      }))
      const error = yield* Effect.flip(Stream.runDrain(decodeSse(body, { maxFrameBytes: () => 300 })))
      expect(error).toMatchObject({ _tag: "FrameTooLarge", observedBytes: 303, maxBytes: 300 })
      expect(pulls).toBe(101)
    }).pipe(Effect.runPromise))
})

// ---------------------------------------------------------------------------------------------
// Properties: random event streams, every chunking gives the same result.

type Line =
  | { readonly _tag: "comment"; readonly text: string }
  | { readonly _tag: "field"; readonly name: string; readonly value: string; readonly colonSpace: boolean }

interface Block {
  readonly lines: ReadonlyArray<Line>
  readonly terminators: ReadonlyArray<string> // one per line, then one for the blank line
}

const textArb = fc
  .array(fc.constantFrom("a", "Z", "0", " ", ":", "é", "€", "😀", "日", "\u00a0", "\uFEFF", "{", "\"", "\t"), {
    maxLength: 8
  })
  .map((cs) => cs.join(""))
const lineArb: fc.Arbitrary<Line> = fc.oneof(
  textArb.map((text) => ({ _tag: "comment" as const, text })),
  fc.record({
    name: fc.constantFrom("data", "data", "event", "id", "retry", "foo"),
    value: fc.oneof(textArb, fc.constantFrom("", "12", "007", "3x")),
    colonSpace: fc.boolean()
  }).map((f) => ({ _tag: "field" as const, ...f }))
)
const terminatorArb = fc.constantFrom("\n", "\r", "\r\n")
const blockArb: fc.Arbitrary<Block> = fc.array(lineArb, { maxLength: 5 }).chain((lines) =>
  fc.array(terminatorArb, { minLength: lines.length + 1, maxLength: lines.length + 1 }).map((terminators) => ({
    lines,
    terminators
  }))
)

const encodeLine = (line: Line): string => {
  if (line._tag === "comment") return `:${line.text}`
  if (line.value === "" && !line.colonSpace) return line.name
  // With "name:value", a value starting with a space would lose it: always add the one space then.
  return line.colonSpace || line.value.startsWith(" ") ? `${line.name}: ${line.value}` : `${line.name}:${line.value}`
}

/** Encodes blocks; returns the bytes and each block's byte length. */
const encode = (blocks: ReadonlyArray<Block>, bom: boolean) => {
  let text = bom ? "\uFEFF" : ""
  const sizes: Array<number> = []
  let previous = ""
  for (const block of blocks) {
    let blockText = ""
    const lines = [...block.lines.map(encodeLine), ""]
    lines.forEach((line, k) => {
      let terminator = block.terminators[k]!
      // A bare CR followed by an empty line ending with LF would read as one CRLF.
      if (line === "" && previous === "\r" && terminator === "\n") terminator = "\r\n"
      blockText += line + terminator
      previous = terminator
    })
    sizes.push(utf8(blockText).length + (bom && sizes.length === 0 ? 3 : 0))
    text += blockText
  }
  return { bytes: utf8(text), sizes }
}

/** The events the blocks stand for (an independent model of the rules). */
const model = (blocks: ReadonlyArray<Block>, sizes: ReadonlyArray<number>): Array<SseEvent> =>
  blocks.flatMap((block, k) => {
    const fields = block.lines.filter((l): l is Extract<Line, { _tag: "field" }> => l._tag === "field")
    if (fields.length === 0) return []
    let event = ""
    const data: Array<string> = []
    let id: string | undefined
    let retry: number | undefined
    for (const f of fields) {
      if (f.name === "data") data.push(f.value)
      if (f.name === "event") event = f.value
      if (f.name === "id") id = f.value
      if (f.name === "retry" && /^[0-9]+$/.test(f.value)) retry = Number(f.value)
    }
    return [{ event: event === "" ? "message" : event, data: data.join("\n"), id, retry, bytes: sizes[k]! }]
  })

const cutsArb = fc.oneof(
  fc.array(fc.nat(), { maxLength: 40 }),
  fc.constant([-1]) // -1: one byte per chunk
)

describe("decodeSse: properties", () => {
  it("every chunking yields the model's events", () =>
    fc.assert(
      fc.property(fc.array(blockArb, { maxLength: 6 }), fc.boolean(), cutsArb, (blocks, bom, offsets) => {
        const { bytes, sizes } = encode(blocks, bom)
        const expected = model(blocks, sizes)
        expect(run([bytes])).toEqual({ events: expected, error: undefined })
        expect(run(cut(bytes, offsets))).toEqual({ events: expected, error: undefined })
      }),
      { numRuns: 400 }
    ))

  it("every chunking refuses the same block with the bytes read of it", () =>
    fc.assert(
      fc.property(
        fc.array(blockArb, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        cutsArb,
        fc.integer({ min: 1, max: 60 }),
        (blocks, bom, offsets, maxBytes) => {
          const { bytes, sizes } = encode(blocks, bom)
          const chunks = cut(bytes, offsets)
          const outcome = run(chunks, maxBytes)
          const over = sizes.findIndex((s) => s > maxBytes)
          if (over === -1) {
            expect(outcome).toEqual({ events: model(blocks, sizes), error: undefined })
            return
          }
          const start = sizes.slice(0, over).reduce((a, b) => a + b, 0)
          // The chunk holding the block's byte number maxBytes + 1 is the last one read.
          let end = 0
          for (const c of chunks) {
            end += c.length
            if (end > start + maxBytes) break
          }
          expect(outcome.events).toEqual(model(blocks.slice(0, over), sizes))
          expect(plain(outcome.error)).toEqual({ _tag: "FrameTooLarge", observedBytes: end - start, maxBytes })
        }
      ),
      { numRuns: 400 }
    ))

  it("invalid UTF-8 anywhere in a line is refused for every chunking", () =>
    fc.assert(
      fc.property(
        fc.array(blockArb, { minLength: 1, maxLength: 4 }),
        fc.constantFrom([0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0x80]),
        cutsArb,
        (blocks, bad, offsets) => {
          const { bytes, sizes } = encode(blocks, false)
          const poisoned = concat(bytes, utf8("data: x"), Uint8Array.from(bad), utf8("y\n\n"))
          const outcome = run(cut(poisoned, offsets))
          expect(outcome.events).toEqual(model(blocks, sizes))
          expect(outcome.error).toBeInstanceOf(InvalidUtf8)
        }
      ),
      { numRuns: 200 }
    ))
})
