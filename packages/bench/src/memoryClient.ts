/**
 * One client process of workload 5: connects (warm-up: discovery, one tools/list and one small
 * tools/call), takes the RSS baseline after a GC, then calls the tool whose answer is 1 GiB,
 * with a 16 MiB ceiling where the client has one. RSS is sampled every 2 ms and the kernel's peak RSS
 * (`maxRSS`) is read at the end, so a synchronous spike between samples is not missed.
 * Bounded by a time limit: whatever the client is doing then, the process reports and exits.
 *
 *   node --expose-gc --import tsx --conditions=@phasebound/source src/memoryClient.ts <client> <url> <mode> <ceiling> <limitMs>
 */
import { adapters, type ServerMode } from "./clients.js"
import { floorClients, floorSession } from "./memoryFloor.js"

const [client, url, mode, ceilingText, limitText] = process.argv.slice(2) as [string, string, ServerMode, string, string]
const ceiling = Number(ceilingText)
const limitMs = Number(limitText)

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const e = error as { _tag: string; observedBytes?: number }
    return e.observedBytes === undefined ? e._tag : `${e._tag} (observedBytes ${e.observedBytes})`
  }
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 200)
  return String(error).slice(0, 200)
}

const maxRss = () => process.resourceUsage().maxRSS * 1024

const main = async () => {
  const floor = floorClients.find((name) => name === client)
  const session = floor !== undefined
    ? floorSession(floor, url, ceiling)
    : await (await adapters[client]!()).connect(url, mode, { maxBytes: ceiling })
  await session.listTools()
  // A first call compiles and allocates the call path once: not part of refusing a body.
  await session.call("small", {})
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 20))
  globalThis.gc?.()
  const baseline = process.memoryUsage.rss()
  const maxRssBefore = maxRss()
  let peak = baseline
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 2)
  const started = performance.now()
  let outcome: string
  let timedOut = false
  let limit: NodeJS.Timeout | undefined
  try {
    const value = await Promise.race([
      session.call("huge", {}),
      new Promise<never>((_, reject) => {
        limit = setTimeout(() => {
          timedOut = true
          reject(new Error("time limit"))
        }, limitMs)
      })
    ])
    const text = (value as { content?: Array<{ text?: string }> }).content?.[0]?.text
    outcome = `accepted the whole body (${text?.length ?? "?"} chars of text)`
  } catch (error) {
    outcome = timedOut ? `still reading at the ${limitMs} ms time limit` : `refused: ${describe(error)}`
  }
  clearTimeout(limit)
  const elapsedMs = performance.now() - started
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage.rss())
  const maxRssAfter = maxRss()
  // The kernel's peak counts only if this call raised it above what the process had already seen.
  if (maxRssAfter > maxRssBefore) peak = Math.max(peak, maxRssAfter)
  process.stdout.write(
    JSON.stringify({ client, mode, rssGrowthBytes: peak - baseline, baselineRss: baseline, elapsedMs, outcome, timedOut }) + "\n"
  )
  process.exit(0)
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ client, mode, error: describe(error) }) + "\n")
  process.exit(0)
})
