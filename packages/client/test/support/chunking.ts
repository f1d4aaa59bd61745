/**
 * Byte helpers for the decoder tests: UTF-8, concatenation, and cutting one byte string into
 * chunks at arbitrary points (the chunk-boundary invariance the properties check).
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Stream } from "effect"

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

export const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** Cuts `bytes` at the given offsets (taken modulo the length, deduplicated); [-1]: one byte each. */
export const cut = (bytes: Uint8Array, offsets: ReadonlyArray<number>): Array<Uint8Array> => {
  if (offsets[0] === -1) return bytesEach(bytes)
  const points = [...new Set(offsets.map((o) => (bytes.length === 0 ? 0 : o % bytes.length)))]
    .filter((p) => p > 0)
    .sort((a, b) => a - b)
  const chunks: Array<Uint8Array> = []
  let start = 0
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(start, p))
    start = p
  }
  return chunks
}

export const bytesEach = (bytes: Uint8Array): Array<Uint8Array> => Array.from(bytes, (b) => Uint8Array.of(b))

/** One chunk per pull. */
export const pulled = (chunks: ReadonlyArray<Uint8Array>) => Stream.fromIterable(chunks).pipe(Stream.rechunk(1))

/**
 * A response of an HTTP client we know nothing about: only its Effect stream (no platform body
 * to read directly), the fallback path of the body reader.
 */
export const streamResponse = <E>(body: Stream.Stream<Uint8Array, E>): HttpClientResponse.HttpClientResponse =>
  ({ status: 200, headers: {}, stream: body }) as unknown as HttpClientResponse.HttpClientResponse
