/**
 * The client side of the heap property (heap.test.ts), run in a process of its own with a small
 * old space (`--max-old-space-size=768`) so that a listing or an answer that costs more memory
 * than the policy allows crashes this process, not the test runner:
 *
 *   node --max-old-space-size=768 --import tsx --conditions=@phasebound/source heap-child.ts <url> listing|answer
 *
 * `listing` connects (the server lists every page at the ceiling); `answer` connects and calls
 * `t` (the server answers one 16 MiB result of `[{},{},...]`). Ends its stdout with the child
 * report (@phasebound/testkit's formatReport), two checks:
 *
 * - `typed result`: the operation ended in success or a typed McpConnectionError (never a
 *   defect); the detail says how (a typed error's tag, stage and reason), `ms` how long it took;
 * - `heap limit`: the heap limit in force is the old space this process was started with
 *   (`--max-old-space-size`, plus V8's young space), so a heap crash was possible; the detail
 *   has the peak heap it saw (sampled every 10 ms, and at the end) and the peak RSS.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { formatReport } from "@phasebound/testkit/childReport"
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
const outcome = Exit.isSuccess(exit) ? "success" : typed !== undefined ? "typed-failure" : defect !== undefined ? "defect" : "other-failure"

const MiB = 1024 * 1024
/** The `--max-old-space-size` this process was started with, in MiB. */
const oldSpaceMb = process.execArgv.map((arg) => /^--max-old-space-size=(\d+)$/.exec(arg)?.[1]).find((mb) => mb !== undefined)
// V8's heap limit is the old space plus the young generation's semi-spaces (well under 256 MiB).
const heapLimitBound = oldSpaceMb === undefined ? undefined : (Number(oldSpaceMb) + 256) * MiB
const heapLimit = getHeapStatistics().heap_size_limit

process.stdout.write(formatReport({
  results: [
    {
      name: "typed result",
      ok: outcome === "success" || outcome === "typed-failure",
      detail: JSON.stringify({
        case: which,
        outcome,
        ...(Exit.isSuccess(exit) ? { tools: exit.value } : {}),
        ...(typed === undefined ? {} : { tag: typed._tag, stage: typed.stage, reason: typed.reason, limit: typed.limit, observedBytes: typed.observedBytes }),
        ...(defect === undefined ? {} : { defect: String(defect).slice(0, 300) }),
        ...(Exit.isFailure(exit) && typed === undefined && defect === undefined ? { cause: Cause.pretty(exit.cause).slice(0, 300) } : {})
      }),
      ms: elapsedMs
    },
    {
      name: "heap limit",
      ok: heapLimitBound !== undefined && heapLimit < heapLimitBound,
      detail: JSON.stringify({
        maxOldSpaceSizeMb: oldSpaceMb ?? "not given",
        heapLimitBytes: heapLimit,
        peakHeapUsedBytes: peakHeapUsed,
        maxRssBytes: process.resourceUsage().maxRSS * 1024
      })
    }
  ]
}))
