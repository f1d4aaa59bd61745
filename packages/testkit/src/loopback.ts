/**
 * Plumbing shared by the loopback HTTP test servers: the listener and its sockets, request
 * bodies, JSON parsing, header lookup, polling.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { methodsOf } from "./jsonrpc.js"
import { isGone, sendText } from "./wire.js"

export const headerValue = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

export const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/** One received request, as the recorder keeps it (for credential-fence tests). */
export interface RecordedRequest {
  /** HTTP method. */
  readonly method: string
  /** Path and query as received. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
  /** JSON-RPC method(s) if the body parses (a batch gives them comma-separated). */
  readonly rpcMethod?: string
}

/** Reads a request's body and records the request; `undefined` when the client went away. */
export const receive = async (
  req: IncomingMessage,
  requests: Array<RecordedRequest>
): Promise<string | undefined> => {
  let body: string
  try {
    body = await readBody(req)
  } catch {
    return undefined
  }
  const parsed = req.method === "POST" ? parseJson(body) : { ok: false as const }
  const rpcMethod = parsed.ok ? methodsOf(parsed.value) : undefined
  requests.push({
    method: req.method ?? "",
    url: req.url ?? "",
    headers: { ...req.headers },
    body,
    ...(rpcMethod === undefined ? {} : { rpcMethod })
  })
  return body
}

export const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** Polls every 5 ms until `pred` holds; rejects after `timeoutMs` (default 5000). */
export const waitFor = async (pred: () => boolean, timeoutMs = 5_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!pred()) {
    if (Date.now() >= deadline) throw new Error(`testkit: waitFor timed out after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A listening loopback HTTP server whose sockets are tracked, so `close` can end them all. */
export interface LoopbackListener {
  readonly port: number
  readonly openConnections: () => number
  /** Sockets accepted since the start: a client that reuses connections keeps this low. */
  readonly acceptedConnections: () => number
  /** Closes the server, destroys every socket and waits until each one is closed. */
  readonly close: () => Promise<void>
}

/**
 * Starts `handle` on 127.0.0.1, port 0. A handler that throws answers 500 (or cuts the
 * response when headers are already out).
 */
export const listenLoopback = async (
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>
): Promise<LoopbackListener> => {
  const sockets = new Map<Socket, Promise<void>>()
  let accepted = 0
  const server = createServer(
    // Leave every deadline to the client under test: a fault may stall for as long as it likes.
    { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000, noDelay: true },
    (req, res) => {
      handle(req, res).catch((cause: unknown) => {
        if (isGone(res)) return
        if (res.headersSent) res.destroy()
        else sendText(res, 500, `testkit: ${cause instanceof Error ? cause.message : String(cause)}`)
      })
    }
  )
  server.on("connection", (socket: Socket) => {
    accepted += 1
    sockets.set(
      socket,
      new Promise((resolve) =>
        socket.once("close", () => {
          sockets.delete(socket)
          resolve()
        })
      )
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  return {
    port: (server.address() as AddressInfo).port,
    openConnections: () => sockets.size,
    acceptedConnections: () => accepted,
    close: async () => {
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()))
      const socketsClosed = [...sockets.values()]
      for (const socket of sockets.keys()) socket.destroy()
      server.closeAllConnections()
      await Promise.all([serverClosed, ...socketsClosed])
    }
  }
}
