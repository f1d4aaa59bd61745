/**
 * The floor of workload 5: what the platform's own HTTP clients cost in RSS when a reader does
 * the least a bounded client must do: keep every chunk it accepts, count the bytes, and drop
 * the body once the count passes the ceiling. No MCP, no Effect, no decoding: `undici.request`
 * (Node `Readable` in paused mode) and `fetch` (web `ReadableStream` reader). Anything a
 * bounded client grows beyond this is its own; what this grows is the HTTP stack's and V8's.
 */
import { request } from "undici"
import type { Session } from "./clients.js"

export const floorClients = ["undici-floor", "fetch-floor"] as const

const message = (id: number, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params })
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** What a floor read did: `observedBytes` once it passed the ceiling, or the whole body. */
type Read = { readonly refused: boolean; readonly observedBytes: number }

/** Reads a body keeping the accepted chunks, until it ends or passes `ceiling`. */
const readUpTo = {
  "undici-floor": async (url: string, body: string, ceiling: number): Promise<Read> => {
    const response = await request(url, { method: "POST", headers, body })
    const readable = response.body
    const kept: Array<Uint8Array> = []
    let total = 0
    return await new Promise((resolve, reject) => {
      readable.on("error", () => undefined)
      readable.on("end", () => resolve({ refused: false, observedBytes: total }))
      readable.on("close", () => reject(new Error("closed early")))
      readable.on("readable", () => {
        let chunk: Uint8Array | null
        while ((chunk = readable.read()) !== null) {
          total += chunk.byteLength
          if (total > ceiling) {
            readable.destroy()
            return resolve({ refused: true, observedBytes: total })
          }
          kept.push(chunk)
        }
      })
    })
  },
  "fetch-floor": async (url: string, body: string, ceiling: number): Promise<Read> => {
    const response = await fetch(url, { method: "POST", headers, body })
    const reader = response.body!.getReader()
    const kept: Array<Uint8Array> = []
    let total = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { refused: false, observedBytes: total }
      total += value.byteLength
      if (total > ceiling) {
        await reader.cancel().catch(() => undefined)
        return { refused: true, observedBytes: total }
      }
      kept.push(value)
    }
  }
}

/** A `Session` shaped floor for memoryClient.ts: `listTools` warms up, `call` is the measured read. */
export const floorSession = (name: typeof floorClients[number], url: string, ceiling: number) => {
  let id = 0
  const read = readUpTo[name]
  const session: Pick<Session, "listTools" | "call"> = {
    listTools: async () => {
      await read(url, message(id++, "tools/list", {}), ceiling)
      return 0
    },
    call: async (tool) => {
      const result = await read(url, message(id++, "tools/call", { name: tool, arguments: {} }), ceiling)
      // Reported by memoryClient.ts like a client's typed refusal.
      if (result.refused) throw { _tag: "dropped the body", observedBytes: result.observedBytes }
      return result
    }
  }
  return session
}
