/**
 * Low-level response writing: whole messages in JSON or SSE, byte arrays in separate small
 * writes, and bodies that never end. Every writer stops as soon as the client has gone.
 */
import type { ServerResponse } from "node:http"
import type { JsonRpcOutgoing } from "./jsonrpc.js"
import { sseFrame } from "./payload.js"

export type ResponseMode = "json" | "sse"
export type ExtraHeaders = Readonly<Record<string, string>>

export const JSON_CONTENT_TYPE = "application/json"
export const SSE_CONTENT_TYPE = "text/event-stream"

export const jsonHeaders = (extra: ExtraHeaders = {}): Record<string, string> => ({
  "content-type": JSON_CONTENT_TYPE,
  ...extra
})

export const sseHeaders = (extra: ExtraHeaders = {}): Record<string, string> => ({
  "content-type": SSE_CONTENT_TYPE,
  "cache-control": "no-cache",
  ...extra
})

export const headersFor = (mode: ResponseMode, extra: ExtraHeaders = {}): Record<string, string> => mode === "sse" ? sseHeaders(extra) : jsonHeaders(extra)

/** True once the response is finished or its connection is gone. */
export const isGone = (res: ServerResponse): boolean => res.writableEnded || res.destroyed || res.socket === null || res.socket.destroyed

/** Sends one JSON-RPC message: as the JSON body, or as the single event of an SSE stream. */
export const sendMessage = (
  res: ServerResponse,
  message: JsonRpcOutgoing,
  mode: ResponseMode,
  extra: ExtraHeaders = {},
  status = 200
): void => {
  const json = JSON.stringify(message)
  res.writeHead(status, headersFor(mode, extra))
  res.end(mode === "sse" ? sseFrame(json) : json)
}

export const sendJsonBody = (res: ServerResponse, status: number, body: unknown, extra: ExtraHeaders = {}): void => {
  res.writeHead(status, jsonHeaders(extra))
  res.end(JSON.stringify(body))
}

export const sendText = (res: ServerResponse, status: number, text: string, extra: ExtraHeaders = {}): void => {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...extra })
  res.end(text)
}

/** One turn of the event loop. */
export const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Resolves on 'drain' or 'close', whichever comes first. */
export const drainOrClose = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      res.off("drain", done)
      res.off("close", done)
      resolve()
    }
    res.on("drain", done)
    res.on("close", done)
  })

/**
 * Writes `bytes` in chunks of `chunkSize`, one `res.write` per chunk with an event-loop turn
 * between them so each goes out as its own TCP write (Nagle is off), then ends the response.
 */
export const writeInChunks = async (res: ServerResponse, bytes: Uint8Array, chunkSize: number): Promise<void> => {
  res.flushHeaders()
  if (!(await writeChunks(res, bytes, chunkSize))) return
  if (!isGone(res)) res.end()
}

/**
 * Writes `bytes` in chunks of `chunkSize` as `writeInChunks` does, but leaves the response open
 * (for a long-lived SSE stream that carries more events). Resolves `false` if the client left
 * before every chunk was written.
 */
export const writeChunks = async (res: ServerResponse, bytes: Uint8Array, chunkSize: number): Promise<boolean> => {
  for (let offset = 0; offset < bytes.length; offset += chunkSize) {
    if (isGone(res)) return false
    if (!res.write(bytes.subarray(offset, offset + chunkSize))) await drainOrClose(res)
    await nextTick()
  }
  return !isGone(res)
}

/**
 * Writes `prefix`, then `chunk` over and over until the client closes the connection,
 * waiting for 'drain' whenever the socket buffer is full. Reports every byte handed to the socket.
 */
export const writeForever = async (
  res: ServerResponse,
  prefix: Uint8Array,
  chunk: Uint8Array,
  onWritten: (bytes: number) => void
): Promise<void> => {
  res.flushHeaders()
  let next = prefix
  while (!isGone(res)) {
    const ok = res.write(next)
    onWritten(next.length)
    next = chunk
    if (!ok) await drainOrClose(res)
    else await nextTick()
  }
}

/**
 * Resets the response's TCP connection (an RST, so the client sees ECONNRESET) where the runtime
 * offers `resetAndDestroy` (Node >= 18.3, Bun); elsewhere a destroy with an error. Call it once
 * what must arrive first was flushed (`writeChunksThenReset`): a reset discards what is still
 * queued, the headers included.
 */
export const resetConnection = (res: ServerResponse): void => {
  const socket = res.socket as (NonNullable<ServerResponse["socket"]> & { resetAndDestroy?: () => void }) | null
  if (socket === null) return
  if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy()
  else socket.destroy(new Error("testkit: connection reset"))
}

/**
 * Writes one piece and resolves an event-loop turn after its write callback (or once the client
 * left). The turn matters: a reset from within the callback itself is a plain close under Node
 * (the client sees a FIN), and under Bun the callback comes before the bytes are out.
 */
const writeFlushed = (res: ServerResponse, piece: Uint8Array): Promise<void> =>
  new Promise((resolve) => {
    if (isGone(res)) return resolve()
    const done = () => {
      res.off("close", done)
      resolve()
    }
    res.once("close", done)
    res.write(piece, () => setImmediate(done))
  })

/**
 * The headers (already given to `writeHead`) and `bytes` in chunks of `chunkSize`, then a TCP
 * reset once the last chunk was flushed: the client has the headers and part of the body in
 * hand when the RST comes, the middle-of-a-body case. Resolves false if the client left first.
 */
export const writeChunksThenReset = async (res: ServerResponse, bytes: Uint8Array, chunkSize: number): Promise<boolean> => {
  const lastChunkAt = bytes.length === 0 ? 0 : Math.floor((bytes.length - 1) / chunkSize) * chunkSize
  res.flushHeaders()
  if (!(await writeChunks(res, bytes.subarray(0, lastChunkAt), chunkSize))) return false
  await writeFlushed(res, bytes.subarray(lastChunkAt))
  if (isGone(res)) return false
  resetConnection(res)
  return true
}
