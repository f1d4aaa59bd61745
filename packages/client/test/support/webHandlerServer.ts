/**
 * A node:http server on 127.0.0.1, port 0, that hands every request to a web-standard handler
 * (`(Request) => Promise<Response>`, as the SDK v2 servers are; `@modelcontextprotocol/node` is
 * not a dependency here) and streams its answer back. Every request is recorded, with the status
 * of its answer. An SSE answer's head is sent at once: node:http holds a head back until the
 * first body write, and a standalone GET stream may stay silent a long time.
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** A request as the server received it, and the status it was answered with. */
export interface WebRequestRecord {
  readonly method: string
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The answer's status, once answered. */
  readonly status?: number
  /** The answer's body, for a status of 400 and above. */
  readonly answer?: string
}

export interface WebHandlerServer {
  readonly port: number
  readonly requests: ReadonlyArray<WebRequestRecord>
  /** Runs `shutdown` (the handler's own), then destroys every socket and closes the server. */
  readonly close: (shutdown: () => Promise<void>) => Promise<void>
}

export const serveWebHandler = async (
  handle: (request: Request) => Promise<Response>,
  /** Called once the answer's head is sent, before its body is streamed. */
  onAnswer?: (record: WebRequestRecord, res: http.ServerResponse) => void
): Promise<WebHandlerServer> => {
  const requests: Array<{ -readonly [K in keyof WebRequestRecord]: WebRequestRecord[K] }> = []
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const headers = new Headers()
    const recorded: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
      recorded[name] = Array.isArray(value) ? value.join(", ") : value
    }
    const record: (typeof requests)[number] = { method: req.method ?? "GET", headers: recorded, body: body.toString("utf8") }
    requests.push(record)
    const abort = new AbortController()
    res.on("close", () => {
      if (!res.writableFinished) abort.abort()
    })
    const hasBody = req.method !== "GET" && req.method !== "HEAD"
    const request = new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`), {
      method: req.method ?? "GET",
      headers,
      ...(hasBody ? { body } : {}),
      signal: abort.signal
    })
    const response = await handle(request)
    record.status = response.status
    if (response.status >= 400) record.answer = await response.clone().text()
    const outHeaders: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      outHeaders[name] = value
    })
    res.writeHead(response.status, response.statusText, outHeaders)
    if (outHeaders["content-type"]?.startsWith("text/event-stream")) res.flushHeaders()
    if (response.body === null) {
      res.end()
      return
    }
    onAnswer?.(record, res)
    const reader = response.body.getReader()
    res.on("close", () => {
      void reader.cancel().catch(() => undefined)
    })
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      res.write(value)
    }
    res.end()
  }
  const httpServer = http.createServer((req, res) => {
    void serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
      else res.destroy()
    })
  })
  const sockets = new Set<Socket>()
  httpServer.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  let closing: Promise<void> | undefined
  return {
    port: (httpServer.address() as AddressInfo).port,
    requests,
    close: (shutdown) => (closing ??= (async () => {
      await shutdown().catch(() => undefined)
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    })())
  }
}
