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

export const headersFor = (mode: ResponseMode, extra: ExtraHeaders = {}): Record<string, string> =>
  mode === "sse" ? sseHeaders(extra) : jsonHeaders(extra)

/** True once the response is finished or its connection is gone. */
export const isGone = (res: ServerResponse): boolean =>
  res.writableEnded || res.destroyed || res.socket === null || res.socket.destroyed

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
 * offers `resetAndDestroy` (Node >= 18.3); elsewhere (Bun) a plain destroy, which the client
 * sees as a close.
 */
export const resetConnection = (res: ServerResponse): void => {
  const socket = res.socket as (NonNullable<ServerResponse["socket"]> & { resetAndDestroy?: () => void }) | null
  if (socket === null) return
  if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy()
  else socket.destroy()
}
