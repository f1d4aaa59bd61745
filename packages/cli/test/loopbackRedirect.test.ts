/**
 * The loopback redirect listener over real sockets on 127.0.0.1: where it binds, what completes
 * `next` and what is refused (Host, path, method, query size, state), the fixed pages (nothing
 * reflected), the timeout, first-wins, forged callbacks that change nothing, interruption, and
 * the port closed with the scope.
 */
import { Cause, Effect, Exit, Fiber, Schedule } from "effect"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { describe, expect, it } from "vitest"
import {
  type LoopbackRedirect,
  LoopbackRedirectError,
  maxQueryBytes,
  openLoopbackRedirect,
  type LoopbackRedirectOptions
} from "../src/loopbackRedirect.js"

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

const portOf = (listener: LoopbackRedirect): number => Number(new URL(listener.redirectUri).port)

/** One request with full control of method, target and Host (no keep-alive agent). */
const send = (
  port: number,
  target: string,
  options: { readonly method?: string; readonly host?: string | null; readonly body?: string } = {}
): Effect.Effect<Answer> =>
  Effect.async<Answer>((resume) => {
    const headers: Record<string, string> = {}
    if (options.host !== null) headers["Host"] = options.host ?? `127.0.0.1:${port}`
    const req = http.request(
      { host: "127.0.0.1", port, path: target, method: options.method ?? "GET", headers, setHost: false, agent: false },
      (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (body += chunk))
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body })))
      }
    )
    req.on("error", (error) => resume(Effect.die(error)))
    req.end(options.body)
  })

/** A raw request line, for targets node:http's client cannot send (absolute-form). */
const sendRaw = (port: number, text: string): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(text))
    let answer = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (answer += chunk))
    socket.on("close", () => resume(Effect.succeed(answer)))
    socket.on("error", (error) => resume(Effect.die(error)))
  })

/** Resolves with the connect error code, or "connected". */
const tryConnect = (port: number, host = "127.0.0.1"): Promise<string> =>
  new Promise((resolve) => {
    const socket = net.connect({ port, host })
    socket.on("connect", () => {
      socket.destroy()
      resolve("connected")
    })
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
  })

const withListener = <A, E>(
  body: (listener: LoopbackRedirect) => Effect.Effect<A, E>,
  options?: LoopbackRedirectOptions
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.flatMap(openLoopbackRedirect(options), body)))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ? Cause.failureOption(exit.cause).pipe((o) => (o._tag === "Some" ? o.value : undefined)) : undefined

/** An authorization URL with `state`, as the library builds it. */
const authorizationUrl = (state: string) => {
  const url = new URL("https://as.example/authorize?response_type=code&client_id=c")
  url.searchParams.set("state", state)
  return url
}

/** The listener, told the state of the authorization request it waits for. */
const expecting = <E>(
  state: string,
  body: (listener: LoopbackRedirect) => Effect.Effect<void, E>,
  options?: LoopbackRedirectOptions
) => withListener((listener) => Effect.zipRight(listener.expect(authorizationUrl(state)), body(listener)), options)

/** Asserts that `next` has not completed: it times out. */
const expectPending = (listener: LoopbackRedirect) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(listener.next(100))
    expect(failureOf(exit)).toMatchObject({ _tag: "LoopbackRedirectError", reason: "timeout" })
  })

const secretCode = "c0de-SECRET-<script>alert(1)</script>"
const secretState = "st4te-\"'&<b>XYZ"
const callbackQuery = `?code=${encodeURIComponent(secretCode)}&state=${encodeURIComponent(secretState)}&iss=${encodeURIComponent("https://as.example")}`

const expectNoReflection = (body: string) => {
  for (const fragment of ["SECRET", "st4te", "XYZ", "script", "alert", "as.example", "%3C", "<b>"]) {
    expect(body).not.toContain(fragment)
  }
}

/** The listening TCP sockets of this process on `port` (Linux /proc), as hex local addresses. */
const listeningAddresses = (file: string, port: number): Array<string> => {
  const portHex = port.toString(16).toUpperCase().padStart(4, "0")
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length > 3 && fields[1]!.endsWith(`:${portHex}`) && fields[3] === "0A")
    .map((fields) => fields[1]!.split(":")[0]!)
}

describe("binding", () => {
  it("redirectUri is http://127.0.0.1:PORT/callback on an ephemeral port", () =>
    withListener((listener) =>
      Effect.promise(async () => {
        expect(listener.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
        const port = portOf(listener)
        expect(port).toBeGreaterThan(0)
        expect(await tryConnect(port)).toBe("connected")
      })
    ))

  it.runIf(process.platform === "linux")("listens on 127.0.0.1 only (no IPv6, no wildcard)", () =>
    withListener((listener) =>
      Effect.sync(() => {
        const port = portOf(listener)
        // 0100007F is 127.0.0.1 in /proc's little-endian hex.
        expect(listeningAddresses("/proc/net/tcp", port)).toEqual(["0100007F"])
        let v6: Array<string> = []
        try {
          v6 = listeningAddresses("/proc/net/tcp6", port)
        } catch {
          // No IPv6 on this machine: nothing can listen there.
        }
        expect(v6).toEqual([])
      })
    ))

  it("a custom path; an invalid path is a defect", async () => {
    await withListener((listener) => Effect.sync(() => expect(listener.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/cb$/)), {
      path: "/oauth/cb"
    })
    for (const path of ["callback", "/a/../b", "/a?b", "/a#b", "//x", "/a b", "/%2e"]) {
      const exit = await Effect.runPromiseExit(Effect.scoped(openLoopbackRedirect({ path })))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }
  })

  it("a port in use is listen-failed (EADDRINUSE), with no URL in the error", () =>
    withListener((first) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Effect.scoped(openLoopbackRedirect({ port: portOf(first) })))
        const error = failureOf(exit)
        expect(error).toBeInstanceOf(LoopbackRedirectError)
        expect(error).toMatchObject({ reason: "listen-failed", systemCode: "EADDRINUSE" })
        expect(error!.message).toBe("Loopback redirect listener: listen-failed (EADDRINUSE)")
        expect(error!.message).not.toContain("127.0.0.1")
      })
    ))

  it("a bad port number is listen-failed", async () => {
    const exit = await Effect.runPromiseExit(Effect.scoped(openLoopbackRedirect({ port: 70_000 })))
    expect(failureOf(exit)).toMatchObject({ _tag: "LoopbackRedirectError", reason: "listen-failed" })
  })
})

describe("the callback", () => {
  it("a GET with code and state resolves next with the full URL; the page reflects nothing", () =>
    expecting(secretState, (listener) =>
      Effect.gen(function*() {
        const waiting = yield* Effect.fork(listener.next(5_000))
        const answer = yield* send(portOf(listener), `/callback${callbackQuery}`)
        const url = yield* Fiber.join(waiting)
        // As the WHATWG parser reads it (it turns the raw ' of encodeURIComponent into %27).
        expect(url.href).toBe(new URL(`${listener.redirectUri}${callbackQuery}`).href)
        expect(url.href.startsWith(`${listener.redirectUri}?code=c0de-SECRET-`)).toBe(true)
        expect(url.searchParams.get("code")).toBe(secretCode)
        expect(url.searchParams.get("state")).toBe(secretState)
        expect(url.searchParams.get("iss")).toBe("https://as.example")
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8")
        expect(answer.headers["cache-control"]).toBe("no-store")
        expect(answer.headers["referrer-policy"]).toBe("no-referrer")
        expect(answer.headers["content-security-policy"]).toContain("default-src 'none'")
        expect(answer.headers["connection"]).toBe("close")
        expect(answer.body).toContain("received the authorization response")
        expectNoReflection(answer.body)
      })))

  it("an error response with the state is a callback too (the library judges it)", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const answer = yield* send(portOf(listener), "/callback?error=access_denied&state=s")
        expect(answer.status).toBe(200)
        const url = yield* listener.next(1_000)
        expect(url.searchParams.get("error")).toBe("access_denied")
        expect(answer.body).not.toContain("access_denied")
      })))

  it("a callback that arrived before next is returned at once", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        yield* send(portOf(listener), "/callback?code=early&state=s")
        const url = yield* listener.next(0)
        expect(url.searchParams.get("code")).toBe("early")
      })))

  it("two callbacks: the first wins, the second gets the 'already' page", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        const first = yield* send(port, "/callback?code=first&state=s")
        const second = yield* send(port, "/callback?code=second&state=s")
        expect(first.status).toBe(200)
        expect(second.status).toBe(200)
        expect(second.body).toContain("already received")
        expect(second.body).not.toContain("second")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("first")
        // next again: the same URL.
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("first")
      })))

  it("concurrent callbacks: exactly one completes next", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        const answers = yield* Effect.forEach(
          ["a", "b", "c", "d", "e"],
          (code) => send(port, `/callback?code=${code}&state=s`),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((a) => a.body.includes("already received"))).toHaveLength(4)
        const url = yield* listener.next(1_000)
        expect(["a", "b", "c", "d", "e"]).toContain(url.searchParams.get("code"))
      })))

  it("a query of exactly 8 KiB is accepted", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const query = `state=s&code=${"x".repeat(maxQueryBytes - 13)}`
        expect(query.length).toBe(8192)
        const answer = yield* send(portOf(listener), `/callback?${query}`)
        expect(answer.status).toBe(200)
        expect((yield* listener.next(1_000)).search).toBe(`?${query}`)
      })))
})

describe("refused requests leave next pending", () => {
  it("another path is 404 (no normalisation, nothing reflected)", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        for (
          const target of [
            "/",
            "/other?code=x",
            "/callback/?code=x",
            "/callbackx?code=x",
            "/%63allback?code=x",
            "/x/../callback?code=x",
            "/CALLBACK?code=x",
            "/favicon.ico",
            "/<script>"
          ]
        ) {
          const answer = yield* send(port, target)
          expect(answer.status, target).toBe(404)
          expect(answer.body).not.toContain("script")
          expect(answer.body).not.toContain("callback")
        }
        yield* expectPending(listener)
        yield* send(port, "/callback?code=after&state=s")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("after")
      })))

  it("a Host other than 127.0.0.1:PORT is 400 (DNS rebinding)", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        for (
          const host of [
            `localhost:${port}`,
            "evil.example",
            `evil.example:${port}`,
            "127.0.0.1",
            `127.0.0.1:${port + 1}`,
            `[::1]:${port}`,
            `127.0.0.1:${port}.evil.example`,
            ""
          ]
        ) {
          const answer = yield* send(port, "/callback?code=x&state=s", { host })
          expect(answer.status, host).toBe(400)
          expectNoReflection(answer.body)
        }
        // No Host at all (HTTP/1.1 requires one).
        expect((yield* send(port, "/callback?code=x&state=s", { host: null })).status).toBe(400)
        yield* expectPending(listener)
      })))

  it("an absolute-form request target is 400", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        const answer = yield* sendRaw(
          port,
          `GET http://127.0.0.1:${port}/callback?code=x&state=s HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`
        )
        expect(answer).toMatch(/^HTTP\/1\.1 400 /)
        yield* expectPending(listener)
      })))

  it("methods other than GET are 405 with Allow: GET", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        for (const method of ["POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"]) {
          const answer = yield* send(port, "/callback?code=x&state=s", { method, body: method === "POST" ? "code=y" : "" })
          expect(answer.status, method).toBe(405)
          expect(answer.headers["allow"]).toBe("GET")
        }
        yield* expectPending(listener)
      })))

  it("a query over 8 KiB is 414", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const answer = yield* send(portOf(listener), `/callback?state=s&code=${"x".repeat(maxQueryBytes - 12)}`)
        expect(answer.status).toBe(414)
        expect(answer.body).not.toContain("xxxx")
        yield* expectPending(listener)
      })))
})

describe("only the expected state completes next", () => {
  it("a forged callback sent first is 400 and the real one still completes the login", () =>
    expecting(secretState, (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        const waiting = yield* Effect.fork(listener.next(5_000))
        const forged = yield* send(port, "/callback?code=attacker&state=forged")
        expect(forged.status).toBe(400)
        expectNoReflection(forged.body)
        expect(forged.body).not.toContain("attacker")
        expect(forged.body).not.toContain("forged")
        const real = yield* send(port, `/callback${callbackQuery}`)
        expect(real.status).toBe(200)
        expect(real.body).toContain("received the authorization response")
        expect((yield* Fiber.join(waiting)).searchParams.get("code")).toBe(secretCode)
      })))

  it("no state, an empty, a longer, a shorter or a second state is 400; next keeps waiting", () =>
    expecting("st4te-abc", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        for (
          const query of [
            "?code=x",
            "?code=x&state=",
            "?code=x&state=st4te-abcd",
            "?code=x&state=st4te-ab",
            "?code=x&state=ST4TE-ABC",
            "?code=x&state=st4te-abc&state=st4te-abc",
            "?code=x&state=st4te-abc&state=other",
            "?error=access_denied",
            "?error=access_denied&state=other"
          ]
        ) {
          const answer = yield* send(port, `/callback${query}`)
          expect(answer.status, query).toBe(400)
          expect(answer.body).toContain("Bad request.")
          expect(answer.body).not.toContain("st4te")
        }
        yield* expectPending(listener)
        // The state percent-encoded is the same state.
        yield* send(port, "/callback?code=real&state=st4te%2Dabc")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("real")
      })))

  it("forged callbacks until the timeout: next fails with timeout, not with their content", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        const waiting = yield* Effect.fork(listener.next(300))
        for (let i = 0; i < 5; i++) expect((yield* send(port, `/callback?code=x${i}&state=f${i}`)).status).toBe(400)
        const error = failureOf(yield* Fiber.await(waiting))
        expect(error).toMatchObject({ _tag: "LoopbackRedirectError", reason: "timeout" })
      })))

  it("a callback before expect is refused, and not kept for later", () =>
    withListener((listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        expect((yield* send(port, "/callback?code=early&state=s")).status).toBe(400)
        yield* listener.expect(authorizationUrl("s"))
        yield* expectPending(listener)
        yield* send(port, "/callback?code=late&state=s")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("late")
      })
    ))

  it("after the callback, another state is still 400, the same state gets the 'already' page", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        yield* send(port, "/callback?code=first&state=s")
        expect((yield* send(port, "/callback?code=second&state=t")).status).toBe(400)
        const again = yield* send(port, "/callback?code=third&state=s")
        expect(again.status).toBe(200)
        expect(again.body).toContain("already received")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("first")
      })))

  it("expect again starts a new wait: the old state is refused, the new one completes", () =>
    expecting("one", (listener) =>
      Effect.gen(function*() {
        const port = portOf(listener)
        yield* send(port, "/callback?code=c1&state=one")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("c1")
        yield* listener.expect(authorizationUrl("two"))
        yield* expectPending(listener)
        expect((yield* send(port, "/callback?code=c1&state=one")).status).toBe(400)
        yield* send(port, "/callback?code=c2&state=two")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("c2")
      })))

  it("an authorization URL without one state, or next before expect, is a defect", async () => {
    for (const url of ["https://as.example/authorize", "https://as.example/authorize?state=", "https://as.example/authorize?state=a&state=b"]) {
      const exit = await Effect.runPromiseExit(Effect.scoped(Effect.flatMap(openLoopbackRedirect(), (l) => l.expect(new URL(url)))))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause), url).toBe(true)
    }
    const exit = await Effect.runPromiseExit(Effect.scoped(Effect.flatMap(openLoopbackRedirect(), (l) => l.next(1_000))))
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
  })
})

/** Polls the fiber's status until it waits for the callback (Suspended); fails after a generous bound. */
const untilWaiting = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
  Fiber.status(fiber).pipe(
    Effect.repeat({ until: (status) => status._tag === "Suspended", schedule: Schedule.spaced("1 millis") }),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("next never started waiting") })
  )

describe("time and lifetime", () => {
  it("next times out with reason timeout and no URL in the error", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const started = Date.now()
        const exit = yield* Effect.exit(listener.next(200))
        const elapsed = Date.now() - started
        const error = failureOf(exit)
        expect(error).toBeInstanceOf(LoopbackRedirectError)
        expect(error).toMatchObject({ _tag: "LoopbackRedirectError", reason: "timeout" })
        expect(error!.message).toBe("Loopback redirect listener: timeout")
        expect(elapsed).toBeGreaterThanOrEqual(190)
        expect(elapsed).toBeLessThan(2_000)
      })))

  it("interrupting next leaks nothing: the listener still takes the callback", () =>
    expecting("s", (listener) =>
      Effect.gen(function*() {
        const waiting = yield* Effect.fork(listener.next(60_000))
        yield* untilWaiting(waiting)
        const exit = yield* Fiber.interrupt(waiting)
        expect(Exit.isInterrupted(exit)).toBe(true)
        yield* send(portOf(listener), "/callback?code=later&state=s")
        expect((yield* listener.next(1_000)).searchParams.get("code")).toBe("later")
      })))

  it("after the scope closes the port refuses connections", async () => {
    const port = await withListener((listener) => Effect.succeed(portOf(listener)))
    expect(await tryConnect(port)).toBe("ECONNREFUSED")
  })

  it("closing the scope destroys open connections promptly", async () => {
    let socket: net.Socket | undefined
    const closed = new Promise<void>((resolve) => {
      void withListener((listener) =>
        Effect.promise(
          () =>
            new Promise<void>((connected) => {
              // An idle connection that never sends a request.
              socket = net.connect(portOf(listener), "127.0.0.1", () => connected())
              socket.on("close", () => resolve())
              socket.on("error", () => {})
            })
        )
      )
    })
    const started = Date.now()
    await closed
    expect(Date.now() - started).toBeLessThan(900)
    expect(socket!.destroyed).toBe(true)
  })

  it("closing the scope while next waits: the scope closes promptly", async () => {
    const started = Date.now()
    const exit = await Effect.runPromiseExit(
      Effect.scoped(
        Effect.gen(function*() {
          const listener = yield* openLoopbackRedirect()
          yield* listener.expect(authorizationUrl("s"))
          yield* untilWaiting(yield* Effect.fork(listener.next(60_000)))
        })
      )
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(Date.now() - started).toBeLessThan(900)
  })
})
