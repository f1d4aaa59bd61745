/**
 * The client side of the heap property (heap.test.ts), run in a process of its own with a small
 * old space (`--max-old-space-size=768`) so that a listing or an answer that costs more memory
 * than the policy allows crashes this process, not the test runner:
 *
 *   node --max-old-space-size=768 --import tsx --conditions=@phasebound/source heap-child.ts <url> listing|answer
 *
 * `listing` connects (the server lists every page at the ceiling); `answer` connects and calls
 * `t` (the server answers one 16 MiB result of `[{},{},...]`). Prints one JSON line: how the
 * operation ended (a typed error's tag, stage and reason), how long it took, and the peak heap
 * it saw (sampled every 10 ms, and at the end) with the heap limit in force and the peak RSS.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Cause, Effect, Exit } from "effect"
import { getHeapStatistics } from "node:v8"
import { McpClient, McpConnectionError } from "../../src/index.js"

const [url, which] = process.argv.slice(2)
if (url === undefined || (which !== "listing" && which !== "answer")) {
  process.stderr.write("usage: heap-child.ts <url> listing|answer\n")
  process.exit(2)
}

let peakHeapUsed = 0
const sample = () => {
  peakHeapUsed = Math.max(peakHeapUsed, getHeapStatistics().used_heap_size)
}
const sampler = setInterval(sample, 10)

const program = Effect.gen(function*() {
  const connection = yield* McpClient.connect({
    url,
    revisions: ["2026-07-28"],
    transport: "streamable-http"
    // The default policy (60 s, 16 MiB, 64 pages): the most a server may send is what it allows.
  })
  if (which === "answer") yield* connection.callTool("t", {})
  return connection.tools.length
}).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

const started = Date.now()
const exit = await Effect.runPromiseExit(program)
const elapsedMs = Date.now() - started
sample()
clearInterval(sampler)

const failure = Exit.isFailure(exit) ? [...Cause.failures(exit.cause)][0] : undefined
const defect = Exit.isFailure(exit) ? [...Cause.defects(exit.cause)][0] : undefined
const typed = McpConnectionError.isMcpConnectionError(failure) ? failure : undefined
process.stdout.write(
  JSON.stringify({
    case: which,
    outcome: Exit.isSuccess(exit) ? "success" : typed !== undefined ? "typed-failure" : defect !== undefined ? "defect" : "other-failure",
    ...(Exit.isSuccess(exit) ? { tools: exit.value } : {}),
    ...(typed === undefined ? {} : { tag: typed._tag, stage: typed.stage, reason: typed.reason, limit: typed.limit, observedBytes: typed.observedBytes }),
    ...(defect === undefined ? {} : { defect: String(defect).slice(0, 300) }),
    elapsedMs,
    peakHeapUsedBytes: peakHeapUsed,
    heapLimitBytes: getHeapStatistics().heap_size_limit,
    maxRssBytes: process.resourceUsage().maxRSS * 1024
  }) + "\n"
)
