/**
 * One client process of the heap-bound measurement: connects (and calls `echo` when asked)
 * under the default policy or with the structure bounds raised as far as they go, sampling the
 * heap every 5 ms; prints the outcome and the peaks as one JSON line.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { McpClient, PhasePolicy } from "@phasebound/client"
import { Effect, Exit } from "effect"

const [url, policyName, operation] = process.argv.slice(2) as [string, "default" | "unbounded", "connect" | "call"]
const unbounded: PhasePolicy.Options = {
  maxDepth: PhasePolicy.maxDepthCeiling,
  maxNodes: Number.MAX_SAFE_INTEGER,
  maxListingBytes: Number.MAX_SAFE_INTEGER
}
let heapPeak = process.memoryUsage().heapUsed
const timer = setInterval(() => {
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
}, 5)

const program = Effect.gen(function*() {
  const connection = yield* McpClient.connect({
    url,
    transport: "streamable-http",
    policy: { timeout: "120 seconds", ...(policyName === "unbounded" ? unbounded : {}) }
  })
  if (operation === "call") yield* connection.callTool("echo")
}).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

const exit = await Effect.runPromiseExit(program)
clearInterval(timer)
heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
const failure = Exit.isFailure(exit) ? (exit.cause as { error?: { _tag?: string; limit?: string } }).error : undefined
const outcome = Exit.isSuccess(exit)
  ? "ok"
  : failure?._tag === undefined
  ? "defect"
  : `${failure._tag}${failure.limit === undefined ? "" : ` ${failure.limit}`}`
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024)
console.log(JSON.stringify({ outcome, maxRssMiB: mib(process.resourceUsage().maxRSS * 1024), heapUsedPeakMiB: mib(heapPeak) }))
