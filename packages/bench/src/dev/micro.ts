/** Dev profiling aid: CPU cost of single pieces of a phasebound call, in isolation (no I/O). */
import { McpSchema } from "@phasebound/client"
import { Chunk, Duration, Effect, Schema, Stream } from "effect"

const N = 100_000
const time = async (name: string, run: () => Promise<void> | void) => {
  await run()
  const t = performance.now()
  await run()
  console.log(`${name.padEnd(60)} ${(((performance.now() - t) / N) * 1000).toFixed(2).padStart(7)} µs/op`)
}
const text = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"3"}]}}`
const json = JSON.parse(text)
await time("JSON.parse of the envelope", () => {
  for (let i = 0; i < N; i++) JSON.parse(text)
})
await time("McpSchema.classify (Schema decode of JsonRpcSuccess)", () => {
  for (let i = 0; i < N; i++) McpSchema.classify(json)
})
const decodeCall = Schema.decodeUnknown(McpSchema.CallToolResult)
await time("Schema.decodeUnknown(CallToolResult) run sync", () => {
  for (let i = 0; i < N; i++) Effect.runSync(decodeCall(json.result))
})
await time("Effect.runPromise(Effect.void) baseline", async () => {
  for (let i = 0; i < N; i++) await Effect.runPromise(Effect.void)
})
await time("Effect.runPromise(Effect.void.pipe(timeoutFail 60 s))", async () => {
  for (let i = 0; i < N; i++) await Effect.runPromise(Effect.void.pipe(Effect.timeoutFail({ duration: Duration.seconds(60), onTimeout: () => "x" })))
})
await time("Effect.runPromise(Effect.void.pipe(withSpan))", async () => {
  for (let i = 0; i < N; i++) {
    await Effect.runPromise(Effect.void.pipe(Effect.withSpan("x", { kind: "client", captureStackTrace: false, attributes: { a: 1, b: 2, c: 3, d: 4 } })))
  }
})
await time("Effect.runPromise(Effect.scoped(Effect.void))", async () => {
  for (let i = 0; i < N; i++) await Effect.runPromise(Effect.scoped(Effect.void))
})
const chunk = new TextEncoder().encode(text)
await time("Stream.runForEachChunk over a 1-chunk Stream", async () => {
  for (let i = 0; i < N; i++) await Effect.runPromise(Stream.runForEachChunk(Stream.fromChunk(Chunk.of(chunk)), () => Effect.void))
})
await time("new DOMException (AbortController.abort() per request)", () => {
  for (let i = 0; i < N; i++) new AbortController().abort()
})
process.exit(0)
