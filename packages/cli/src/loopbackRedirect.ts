/**
 * The loopback redirect listener of an interactive OAuth 2.1 authorization-code login (RFC 8252
 * §7.3): a tiny HTTP server on `127.0.0.1` that receives the authorization server's redirect
 * and hands the full redirect URL (with `code`, `state`, maybe `iss`, or `error`) to the caller.
 * It knows the `state` of the authorization request it waits for (`expect`), so that a request
 * sent to it by someone else (another local process, a web page) cannot end the login: only the
 * matching answer completes `next`, anything else is refused and the listener keeps waiting
 * until its timeout (docs/DESIGN.md, "Authorization": the loopback listener). The issuer and
 * the code are the library's job (it checks the state again).
 *
 * What it does, in the order each request is judged:
 *
 * 1. `Host` must be exactly `127.0.0.1:PORT` (a DNS-rebinding page reaching the socket under
 *    another name gets 400), and the request target must be origin-form (`/path?query`): 400.
 * 2. The path must be exactly the callback path, compared on the raw target (no
 *    normalisation): anything else is 404.
 * 3. The method must be GET: anything else is 405 (`Allow: GET`), HEAD included.
 * 4. The raw query must be at most 8 KiB: a longer one is 414.
 * 5. The query must carry exactly one `state`, equal to the expected one (compared in constant
 *    time): anything else (no state, another state, two states, or no authorization request
 *    expected yet) is 400. A forged callback sent before the real one changes nothing.
 * 6. The first request that passes all five completes `next`; any later one gets a fixed
 *    "already received" page and changes nothing.
 *
 * Every response is a small fixed page: nothing of the request (path, query, header) is
 * reflected, so there is nothing to inject and no code or state is echoed back. The pages are
 * sent with `Cache-Control: no-store`, `Referrer-Policy: no-referrer`, a `default-src 'none'`
 * CSP and `Connection: close` (no keep-alive socket outlives a response).
 *
 * The listener lives as long as its scope: closing the scope closes the server and destroys
 * every connection still open (`closeAllConnections`), so the port refuses connections once
 * the scope is closed. It uses `node:http` directly, which Bun provides too. One difference
 * under Bun (1.4.5): a connection accepted but on which no request was ever sent (a browser's
 * speculative preconnect) is neither destroyed by `closeAllConnections` nor visible through a
 * `connection` event; the port still refuses new connections once the scope is closed, the
 * socket does not keep the process alive, and it ends when the browser drops it.
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** The only address the listener ever binds: IPv4 loopback (never `localhost`, `::` or `0.0.0.0`). */
export const loopbackHost = "127.0.0.1"

/** The longest raw query (the bytes after `?`) a callback may carry: 8 KiB. Longer is 414. */
export const maxQueryBytes = 8 * 1024

/** Why the listener failed. */
export type LoopbackRedirectErrorReason =
  /** The server could not listen (port in use, permission denied, bad port number). */
  | "listen-failed"
  /** No callback arrived within the time given to `next`. */
  | "timeout"

/** A failure of the loopback redirect listener. No URL, query or header in any field or in the message. */
export class LoopbackRedirectError extends Data.TaggedError("LoopbackRedirectError")<{
  readonly reason: LoopbackRedirectErrorReason
  /** For `listen-failed`: the system error code when there is one (`EADDRINUSE`, `EACCES`, ...). */
  readonly systemCode?: string | undefined
}> {
  override get message(): string {
    return `Loopback redirect listener: ${this.reason}${this.systemCode === undefined ? "" : ` (${this.systemCode})`}`
  }
}

export interface LoopbackRedirect {
  /** `http://127.0.0.1:PORT/callback`: what the client registers and sends as `redirect_uri`. */
  readonly redirectUri: string
  /**
   * Starts waiting for the answer to `authorizationUrl`: from now on only a callback carrying
   * its `state` completes `next`. Call it before the URL is shown or a browser opened (until
   * then every callback is refused). Calling it again (a second authorization in the same
   * login) starts a new wait: the previous answer is forgotten. An authorization URL without
   * exactly one non-empty `state` is a defect (the library always sends one).
   */
  readonly expect: (authorizationUrl: URL) => Effect.Effect<void>
  /**
   * Waits for the first request to the callback path that passes every check (see the module
   * comment), answers the browser with a small fixed HTML page (nothing of the request
   * reflected), and succeeds with the full URL it was called with: `redirectUri` plus the query
   * as received (as the WHATWG URL parser reads it). A callback that arrived after `expect` but
   * before `next` was called is returned at once; calling `next` again after a success returns
   * the same URL. Fails with `LoopbackRedirectError("timeout")` after `timeoutMs` (Effect's
   * clock, so `TestClock` drives it); refused requests do not end the wait. Interrupting
   * `next` leaves nothing behind: the listener stays as it was, and a later `next` still sees
   * the callback. Calling it before `expect` is a defect.
   */
  readonly next: (timeoutMs: number) => Effect.Effect<URL, LoopbackRedirectError>
}

export interface LoopbackRedirectOptions {
  /** The port to listen on; 0 (the default) picks a free ephemeral port. A port in use is `listen-failed`. */
  readonly port?: number
  /**
   * The callback path, default `/callback`. It must be a plain absolute path of unreserved
   * characters (`A-Z a-z 0-9 - . _ ~` and `/`), without empty, `.` or `..` segments: anything
   * else is a defect (a programming error), not a typed failure.
   */
  readonly path?: string
}

const pathPattern = /^(?:\/[A-Za-z0-9\-._~]+)+\/?$|^\/$/

const validPath = (path: string): boolean => pathPattern.test(path) && !path.split("/").some((segment) => segment === "." || segment === "..")

const systemCodeOf = (error: unknown): string | undefined => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === "string" && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined
}

const page = (text: string): string =>
  "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">" +
  `<title>phasebound</title></head><body><p>${text}</p></body></html>\n`

const pages = {
  received: page("phasebound received the authorization response. You can close this window and return to the terminal."),
  already: page("phasebound has already received an authorization response. You can close this window."),
  badRequest: page("Bad request."),
  notFound: page("Not found."),
  methodNotAllowed: page("Method not allowed."),
  uriTooLong: page("URI too long.")
} as const

const respond = (
  res: http.ServerResponse,
  status: number,
  body: string,
  extraHeaders: Readonly<Record<string, string>> = {}
): void => {
  res.shouldKeepAlive = false
  res.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(body)),
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Connection": "close",
    ...extraHeaders
  })
  res.end(body)
}

/** Equal states, in time that does not depend on where they differ. */
const sameState = (received: Buffer, expected: Buffer): boolean => received.length === expected.length && timingSafeEqual(received, expected)

const listenFailed = (error: unknown) => new LoopbackRedirectError({ reason: "listen-failed", systemCode: systemCodeOf(error) })

type Started = { readonly server: http.Server; readonly port: number }

/** What a callback that passed the HTTP checks comes to. */
type Verdict = "received" | "already" | "refused"

/** Creates the server with its request handler already in place, then listens on 127.0.0.1. */
const start = (
  requestedPort: number,
  path: string,
  onCallback: (url: URL) => Verdict
): Effect.Effect<Started, LoopbackRedirectError> =>
  Effect.async<Started, LoopbackRedirectError>((resume) => {
    // Filled in by the listen callback, before the first request can be accepted.
    let host = ""
    let origin = ""
    const server = http.createServer((req, res) => {
      if (req.headers.host !== host) return respond(res, 400, pages.badRequest)
      const target = req.url ?? ""
      if (!target.startsWith("/") || target.startsWith("//")) return respond(res, 400, pages.badRequest)
      const queryAt = target.indexOf("?")
      const rawPath = queryAt < 0 ? target : target.slice(0, queryAt)
      if (rawPath !== path) return respond(res, 404, pages.notFound)
      if (req.method !== "GET") return respond(res, 405, pages.methodNotAllowed, { Allow: "GET" })
      // req.url holds one character per byte of the request target.
      if (queryAt >= 0 && target.length - queryAt - 1 > maxQueryBytes) return respond(res, 414, pages.uriTooLong)
      let url: URL
      try {
        url = new URL(target, origin)
      } catch {
        return respond(res, 400, pages.badRequest)
      }
      const verdict = onCallback(url)
      if (verdict === "refused") return respond(res, 400, pages.badRequest)
      return respond(res, 200, verdict === "received" ? pages.received : pages.already)
    })
    // An error after listening (none is expected) must not become an uncaught exception.
    const afterListen = () => {}
    const onListenError = (error: unknown) => {
      server.close()
      resume(Effect.fail(listenFailed(error)))
    }
    server.once("error", onListenError)
    try {
      server.listen({ port: requestedPort, host: loopbackHost, exclusive: true }, () => {
        server.off("error", onListenError)
        server.on("error", afterListen)
        const port = (server.address() as AddressInfo).port
        host = `${loopbackHost}:${port}`
        origin = `http://${host}`
        resume(Effect.succeed({ server, port }))
      })
    } catch (error) {
      // A bad port number throws synchronously (ERR_SOCKET_BAD_PORT).
      server.off("error", onListenError)
      server.on("error", afterListen)
      resume(Effect.fail(listenFailed(error)))
    }
  })

/** Closes the server and destroys its connections; waits for the close, at most one second. */
const stop = (server: http.Server): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    server.closeAllConnections()
  }).pipe(Effect.timeoutOption(Duration.seconds(1)), Effect.asVoid)

/**
 * Opens the loopback redirect listener for the life of the enclosing scope. Fails with
 * `LoopbackRedirectError("listen-failed")` when it cannot listen (for instance a fixed `port`
 * already in use).
 */
export const openLoopbackRedirect = (
  options: LoopbackRedirectOptions = {}
): Effect.Effect<LoopbackRedirect, LoopbackRedirectError, Scope.Scope> =>
  Effect.gen(function*() {
    const path = options.path ?? "/callback"
    if (!validPath(path)) return yield* Effect.dieMessage("openLoopbackRedirect: the callback path must be a plain absolute path")
    // The authorization request waited for: its state, and its answer once received.
    let round: { readonly state: Buffer; readonly received: Deferred.Deferred<URL>; done: boolean } | undefined
    const onCallback = (url: URL): Verdict => {
      const states = url.searchParams.getAll("state")
      if (round === undefined || states.length !== 1 || !sameState(Buffer.from(states[0]!, "utf8"), round.state)) {
        return "refused"
      }
      if (round.done) return "already"
      round.done = true
      Deferred.unsafeDone(round.received, Exit.succeed(url))
      return "received"
    }
    const { port } = yield* Effect.acquireRelease(
      start(options.port ?? 0, path, onCallback),
      ({ server }) => stop(server)
    )
    const redirectUri = `http://${loopbackHost}:${port}${path}`
    const expect = (authorizationUrl: URL): Effect.Effect<void> =>
      Effect.suspend(() => {
        const states = authorizationUrl.searchParams.getAll("state")
        if (states.length !== 1 || states[0] === "") {
          return Effect.dieMessage("LoopbackRedirect.expect: the authorization URL must carry one state")
        }
        return Effect.map(Deferred.make<URL>(), (received) => {
          round = { state: Buffer.from(states[0]!, "utf8"), received, done: false }
        })
      })
    const next = (timeoutMs: number): Effect.Effect<URL, LoopbackRedirectError> =>
      Effect.suspend(() => {
        if (round === undefined) return Effect.dieMessage("LoopbackRedirect.next: expect was not called")
        return Deferred.await(round.received).pipe(
          Effect.timeoutFail({
            // NaN and negatives time out at once; Infinity never does.
            duration: timeoutMs > 0 ? Duration.millis(timeoutMs) : Duration.zero,
            onTimeout: () => new LoopbackRedirectError({ reason: "timeout" })
          })
        )
      })
    return { redirectUri, expect, next } satisfies LoopbackRedirect
  })
