/**
 * Responses of an exact byte size. Padding mixes 1-, 2-, 3- and 4-byte UTF-8 characters
 * (none of which JSON escapes), so that a response written in odd-sized chunks splits
 * multi-byte characters across chunk boundaries.
 */
import { isRecord, type JsonRpcId } from "./jsonrpc.js"

const encoder = new TextEncoder()

export const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8")

/** "é" (2 bytes) + "€" (3) + "😀" (4) + "a" (1) = 10 bytes. */
const PAD_UNIT = "é€😀a"
const PAD_UNIT_BYTES = 10

/** A string of exactly `bytes` UTF-8 bytes; JSON.stringify leaves it unescaped. */
export const padString = (bytes: number): string => PAD_UNIT.repeat(Math.floor(bytes / PAD_UNIT_BYTES)) + "a".repeat(bytes % PAD_UNIT_BYTES)

/** Builds a JSON-RPC `result` around a padding string, which must appear exactly once in it. */
export type ResultTemplate = (pad: string) => unknown

/** The bytes that frame one SSE event around its JSON data (see `sseFrame`). */
export const SSE_EVENT_PREFIX = "event: message\ndata: "
export const SSE_EVENT_SUFFIX = "\n\n"
const SSE_OVERHEAD = utf8Length(SSE_EVENT_PREFIX) + utf8Length(SSE_EVENT_SUFFIX)

/** One SSE event block carrying `json` as a single `data:` line. */
export const sseFrame = (json: string, eventId?: string): string =>
  (eventId === undefined ? "" : `id: ${eventId}\n`) + SSE_EVENT_PREFIX + json + SSE_EVENT_SUFFIX

/**
 * A valid JSON-RPC response `{"jsonrpc":"2.0","id":…,"result":…}` whose UTF-8 encoding is
 * exactly `bytes` long. Throws a RangeError if `bytes` is below the size of the response with
 * an empty pad.
 */
export const exactJsonResponse = (id: JsonRpcId, resultTemplate: ResultTemplate, bytes: number): Uint8Array => {
  const render = (pad: string) => JSON.stringify({ jsonrpc: "2.0", id, result: resultTemplate(pad) })
  const minimum = utf8Length(render(""))
  if (!Number.isSafeInteger(bytes) || bytes < minimum) {
    throw new RangeError(`exact-size: ${bytes} bytes is not possible, the smallest response is ${minimum} bytes`)
  }
  const out = encoder.encode(render(padString(bytes - minimum)))
  if (out.length !== bytes) {
    throw new Error(`exact-size: template did not place the pad exactly once (${out.length} != ${bytes})`)
  }
  return out
}

/**
 * One SSE event block (`event: message\ndata: <json>\n\n`) of exactly `bytes` bytes, from the
 * first byte of `event:` through the blank line that ends it.
 */
export const exactSseFrame = (id: JsonRpcId, resultTemplate: ResultTemplate, bytes: number): Uint8Array => {
  if (!Number.isSafeInteger(bytes) || bytes <= SSE_OVERHEAD) {
    throw new RangeError(`exact-size: ${bytes} bytes is not possible for an SSE frame`)
  }
  const json = exactJsonResponse(id, resultTemplate, bytes - SSE_OVERHEAD)
  return encoder.encode(SSE_EVENT_PREFIX + new TextDecoder().decode(json) + SSE_EVENT_SUFFIX)
}

const asRecord = (value: unknown): Readonly<Record<string, unknown>> => isRecord(value) ? value : {}

/**
 * The padded form of a method's normal result: tools/call carries the pad as its text content
 * (keeping a stateless-era `resultType`), tools/list in the first tool's description, initialize
 * and server/discover in `instructions`, anything else in `_meta` (next to what `_meta` holds).
 */
export const paddedResultTemplate = (method: string, normalResult: unknown): ResultTemplate => {
  const normal = asRecord(normalResult)
  const padMeta = (pad: string) => ({ ...asRecord(normal["_meta"]), "phasebound/pad": pad })
  switch (method) {
    case "tools/call":
      return "resultType" in normal
        ? (pad) => ({ resultType: normal["resultType"], content: [{ type: "text", text: pad }] })
        : (pad) => ({ content: [{ type: "text", text: pad }] })
    case "initialize":
    case "server/discover":
      return (pad) => ({ ...normal, instructions: pad })
    case "tools/list": {
      const tools: ReadonlyArray<unknown> = Array.isArray(normal["tools"]) ? normal["tools"] : []
      if (tools.length === 0) return (pad) => ({ ...normal, tools: [], _meta: padMeta(pad) })
      return (pad) => ({
        ...normal,
        tools: tools.map((tool, i) => {
          if (i !== 0) return tool
          const first = asRecord(tool)
          const description = typeof first["description"] === "string" ? first["description"] : ""
          return { ...first, description: description + pad }
        })
      })
    }
    default:
      return (pad) => ({ ...normal, _meta: padMeta(pad) })
  }
}
