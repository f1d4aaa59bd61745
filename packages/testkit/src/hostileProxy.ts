/**
 * A hostile HTTP proxy on loopback, for the proxy tests of an MCP client: it reads one request
 * head per connection (a `CONNECT host:port` or an absolute-form request), records it, and then
 * misbehaves as told. It never forwards anything: whatever the client meant for the MCP server
 * stops here.
 *
 * - `stall`: reads the head and never answers (the client's deadline must end the wait);
 * - `status`: answers the given status (`407` with a `Proxy-Authenticate` challenge) and closes;
 * - `reset`: resets the TCP connection as soon as the head arrived;
 * - `reset-mid-response`: answers `200` (a tunnel established, or the head of a JSON answer of
 *   1,000 bytes in absolute form), sends part of it, then resets;
 * - `garbage`: answers bytes that are not HTTP, then closes;
 * - `oversized-head`: answers a status line and then header lines without end (past any
 *   client's header limit), never the blank line that would end them;
 * - `echo-credentials`: answers an absolute-form JSON-RPC request with a JSON-RPC error (its
 *   own id) whose message quotes the `Proxy-Authorization` it received, as the header and
 *   base64-decoded (`user:password`); a `CONNECT` gets `403` with the same text as its body.
 */
import { Effect, type Scope } from "effect"
import { createServer, type Socket } from "node:net"

/** What the proxy does with each request. */
export type ProxyFault =
  | { readonly kind: "stall" }
  | { readonly kind: "status"; readonly status: number }
  | { readonly kind: "reset" }
  | { readonly kind: "reset-mid-response" }
  | { readonly kind: "garbage" }
  | { readonly kind: "oversized-head" }
  | { readonly kind: "echo-credentials" }

/** One request head the proxy read. */
export interface ProxyRequest {
  /** `CONNECT` or the method of an absolute-form request. */
  readonly method: string
  /** The request target: `host:port` for `CONNECT`, the absolute URL otherwise. */
  readonly target: string
  /** Every header, names in lower case. */
  readonly headers: Readonly<Record<string, string>>
}

export interface HostileProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  readonly port: number
  /** The request heads read so far, in order. */
  readonly requests: ReadonlyArray<ProxyRequest>
  /** Resolves when the first request head has been read (a sync point: the client reached the proxy). */
  readonly arrived: Promise<ProxyRequest>
  /** Resolves when every connection the proxy accepted has closed (the client let go). */
  readonly drained: () => Promise<void>
  readonly close: () => Promise<void>
}

const reasons: Readonly<Record<number, string>> = {
  403: "Forbidden",
  407: "Proxy Authentication Required",
  502: "Bad Gateway",
  503: "Service Unavailable"
}

const parseHead = (head: string): ProxyRequest | undefined => {
  const [line, ...fields] = head.split("\r\n")
  const match = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(line ?? "")
  if (match === null) return undefined
  const headers: Record<string, string> = {}
  for (const field of fields) {
    const colon = field.indexOf(":")
    if (colon > 0) headers[field.slice(0, colon).trim().toLowerCase()] = field.slice(colon + 1).trim()
  }
  return { method: match[1]!, target: match[2]!, headers }
}

/** What the echoing proxy says: the header as received, and its Basic token decoded. */
const echoText = (request: ProxyRequest): string => {
  const header = request.headers["proxy-authorization"] ?? ""
  const token = /^Basic\s+(\S+)$/i.exec(header)?.[1]
  const decoded = token === undefined ? "" : Buffer.from(token, "base64").toString("utf8")
  return `proxy rejected Proxy-Authorization: ${header} (${decoded})`
}

/**
 * Answers an absolute-form request with a JSON-RPC error quoting the credentials (the id of the
 * request, read from its body of `Content-Length` bytes), a CONNECT with a 403 quoting them.
 */
const echoCredentials = (socket: Socket, request: ProxyRequest, rest: Buffer) => {
  const text = echoText(request)
  if (request.method === "CONNECT") {
    const body = Buffer.from(text)
    socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${text}`)
    return
  }
  const length = Number.parseInt(request.headers["content-length"] ?? "0", 10)
  let body = rest
  const answer = () => {
    let id: unknown
    try {
      id = (JSON.parse(body.subarray(0, length).toString("utf8")) as { id?: unknown }).id ?? null
    } catch {
      id = null
    }
    const json = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32600, message: text } }))
    socket.end(
      Buffer.concat([
        Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n`),
        json
      ])
    )
  }
  if (body.length >= length) return answer()
  const onBody = (chunk: Buffer) => {
    body = Buffer.concat([body, chunk])
    if (body.length < length) return
    socket.off("data", onBody)
    answer()
  }
  socket.on("data", onBody)
}

/** Starts the proxy on 127.0.0.1, port 0. */
export const startHostileProxy = async (fault: ProxyFault): Promise<HostileProxy> => {
  const requests: Array<ProxyRequest> = []
  const sockets = new Set<Socket>()
  let drainedWaiters: Array<() => void> = []
  let onArrived: (request: ProxyRequest) => void = () => {}
  const arrived = new Promise<ProxyRequest>((resolve) => {
    onArrived = resolve
  })

  const misbehave = (socket: Socket, request: ProxyRequest, rest: Buffer) => {
    switch (fault.kind) {
      case "stall":
        return
      case "status": {
        const challenge = fault.status === 407 ? "Proxy-Authenticate: Basic realm=\"hostile\"\r\n" : ""
        socket.end(`HTTP/1.1 ${fault.status} ${reasons[fault.status] ?? "Refused"}\r\n${challenge}Content-Length: 0\r\nConnection: close\r\n\r\n`)
        return
      }
      case "reset":
        socket.resetAndDestroy()
        return
      case "reset-mid-response": {
        if (request.method === "CONNECT") {
          socket.write("HTTP/1.1 200 Connection Established\r\n\r\n")
          // The client's first bytes through the tunnel (its TLS hello): reset before any answer.
          socket.once("data", () => socket.resetAndDestroy())
          return
        }
        socket.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":")
        setImmediate(() => socket.resetAndDestroy())
        return
      }
      case "garbage":
        socket.end("SSH-2.0-OpenSSH_9.6\r\n\u0000\u0001\u0002 not http at all\r\n\r\n")
        return
      case "oversized-head": {
        socket.write("HTTP/1.1 200 Connection Established\r\n")
        // 64 KiB lines until the client lets go: no client reads a head this long.
        const line = `X-Filler: ${"a".repeat(65_536)}\r\n`
        const pump = () => {
          while (!socket.destroyed && socket.write(line)) { /* until the buffer is full */ }
        }
        socket.on("drain", pump)
        pump()
        return
      }
      case "echo-credentials":
        echoCredentials(socket, request, rest)
        return
    }
  }

  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on("error", () => {})
    socket.on("close", () => {
      sockets.delete(socket)
      if (sockets.size === 0) {
        const waiters = drainedWaiters
        drainedWaiters = []
        for (const waiter of waiters) waiter()
      }
    })
    let buffered = ""
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("latin1")
      const end = buffered.indexOf("\r\n\r\n")
      if (end < 0) {
        // A head past 64 KiB is not a request this proxy reads.
        if (buffered.length > 65_536) socket.destroy()
        return
      }
      socket.off("data", onData)
      const rest = Buffer.from(buffered.slice(end + 4), "latin1")
      const request = parseHead(buffered.slice(0, end))
      if (request === undefined) {
        socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        return
      }
      requests.push(request)
      onArrived(request)
      misbehave(socket, request, rest)
    }
    socket.on("data", onData)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    arrived,
    drained: () => sockets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainedWaiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** The proxy as an Effect resource: started on acquire, closed (sockets destroyed) on release. */
export const scopedHostileProxy = (fault: ProxyFault): Effect.Effect<HostileProxy, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startHostileProxy(fault)),
    (proxy) => Effect.promise(() => proxy.close())
  )
