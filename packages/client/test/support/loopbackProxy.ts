/**
 * Real proxies on loopback for the proxy tests (docs/DESIGN.md, "Proxies"): the `proxy` package
 * (CONNECT and absolute-form forwarding, optional Basic authentication) with a record of what it
 * received, and an HTTPS front for a testkit MCP server (TLS ends here, every request is passed on
 * to the plain-http server); both serve TLS with `loopbackCertificate.ts`.
 */
import { Effect } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import type { Socket } from "node:net"
import { createProxy } from "proxy"

/** One request the proxy received: a CONNECT (its `host:port`) or an absolute-form request (its URL). */
export interface ProxiedRequest {
  readonly kind: "connect" | "absolute"
  readonly target: string
  readonly proxyAuthorization: string | undefined
}

export interface LoopbackProxy {
  readonly url: string
  readonly port: number
  readonly received: ReadonlyArray<ProxiedRequest>
}

const listen = (server: http.Server | https.Server, sockets: Set<Socket>) =>
  new Promise<number>((resolve, reject) => {
    server.on("connection", (socket: Socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })

const closeAll = (server: http.Server | https.Server, sockets: Set<Socket>) =>
  new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy()
    server.close(() => resolve())
  })

/**
 * The `proxy` package on 127.0.0.1:0; with `credentials`, it answers 407 to anything else than
 * that Basic pair; with `tls`, it is an `https://` proxy (TLS between the client and the proxy).
 */
export const loopbackProxy = (
  options: {
    readonly credentials?: { readonly user: string; readonly password: string }
    readonly tls?: { readonly cert: string; readonly key: string }
  } = {}
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<ProxiedRequest> = []
      // The package takes an http.Server; an https.Server emits the same events.
      const front = options.tls === undefined ? http.createServer() : https.createServer({ cert: options.tls.cert, key: options.tls.key })
      const server = createProxy(front as http.Server)
      const header = (req: http.IncomingMessage) => req.headers["proxy-authorization"]
      server.prependListener("request", (req: http.IncomingMessage) =>
        received.push({ kind: "absolute", target: req.url ?? "", proxyAuthorization: header(req) }))
      server.prependListener("connect", (req: http.IncomingMessage) =>
        received.push({ kind: "connect", target: req.url ?? "", proxyAuthorization: header(req) }))
      const credentials = options.credentials
      if (credentials !== undefined) {
        const expected = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString("base64")}`
        server.authenticate = (req) => req.headers["proxy-authorization"] === expected
      }
      const sockets = new Set<Socket>()
      const port = await listen(server, sockets)
      const scheme = options.tls === undefined ? "http" : "https"
      return { proxy: { url: `${scheme}://127.0.0.1:${port}`, port, received } satisfies LoopbackProxy, close: () => closeAll(server, sockets) }
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ proxy }) => proxy))

/**
 * An HTTPS front on 127.0.0.1:0 for the plain-http server at `backend` (an origin such as
 * `http://127.0.0.1:PORT`): the MCP server as an https origin. `received` records the headers of
 * every request that reached it through TLS.
 */
export const httpsFront = (backend: string, tls: { readonly cert: string; readonly key: string }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<http.IncomingHttpHeaders> = []
      const target = new URL(backend)
      const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
        received.push(req.headers)
        const forwarded = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        })
        forwarded.on("error", () => res.destroy())
        req.pipe(forwarded)
      })
      const sockets = new Set<Socket>()
      const port = await listen(server, sockets)
      return { front: { origin: `https://127.0.0.1:${port}`, port, received }, close: () => closeAll(server, sockets) }
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ front }) => front))
