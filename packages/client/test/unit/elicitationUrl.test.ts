/**
 * The checks of a URL elicitation before anyone sees it (internal/elicitationUrl.ts): which URLs
 * are handed on and in which form, which are refused, and, for any text a hostile server may
 * send (FastCheck), that what is handed on is always an https URL or http to loopback, without
 * userinfo, without an invisible character, bounded, and already in its normalized form. Also
 * the elicitations of a `-32042` refusal, all or nothing; and the bounded completion tracker
 * (internal/urlElicitations.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, FastCheck as fc, Stream } from "effect"
import {
  checkUrl,
  maxElicitationsPerRefusal,
  maxUrlLength,
  refusalElicitations,
  urlElicitationOf
} from "../../src/internal/elicitationUrl.js"
import { addressKindOf } from "../../src/internal/oauth/addresses.js"
import * as UrlElicitations from "../../src/internal/urlElicitations.js"
import { TransportFailure } from "../../src/McpConnectionError.js"

describe("checkUrl", () => {
  it("hands on https, and http to loopback, normalized", () => {
    expect(checkUrl("https://example.com/connect?x=1#f")).toEqual({ url: "https://example.com/connect?x=1#f", host: "example.com", punycode: false })
    expect(checkUrl("HTTPS://Example.COM/a/../b")).toEqual({ url: "https://example.com/b", host: "example.com", punycode: false })
    expect(checkUrl("https://example.com:8443")?.url).toBe("https://example.com:8443/")
    for (const loopback of ["http://127.0.0.1:9/cb", "http://localhost:3000/", "http://[::1]/x", "http://dev.localhost/"]) {
      expect(checkUrl(loopback)?.url).toBe(new URL(loopback).href)
    }
    expect(checkUrl("https://xn--e1afmkfd.xn--p1ai/")).toMatchObject({ punycode: true })
    expect(checkUrl("https://пример.рф/")).toEqual({ url: "https://xn--e1afmkfd.xn--p1ai/", host: "xn--e1afmkfd.xn--p1ai", punycode: true })
  })

  it("refuses every other scheme, plain http elsewhere, userinfo, invisible characters, and length", () => {
    const refused = [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "data:text/html;base64,PHNjcmlwdD4=",
      "file:///etc/passwd",
      "vbscript:msgbox",
      "blob:https://example.com/uuid",
      "ftp://example.com/",
      "ws://example.com/",
      "mailto:a@example.com",
      "http://example.com/",
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data",
      "https://user@example.com/",
      "https://user:pass@example.com/",
      "https://:pass@example.com/",
      "http://user:pass@127.0.0.1/",
      " https://example.com/",
      "https://example.com/ ",
      "https://exa\tmple.com/",
      "https://example.com/\n",
      "https://example.com/\u0000",
      "https://example.com/\u202e",
      "https://example.com/\u200b",
      "https://example.com/\u00a0",
      "https://example.com/\ufeff",
      "//example.com/",
      "/relative",
      "example.com",
      "https://",
      "",
      `https://example.com/${"a".repeat(maxUrlLength)}`,
      // Normalized past the bound: each character percent-encoded to 9.
      `https://example.com/${"é".repeat(Math.floor(maxUrlLength / 6))}`
    ]
    for (const url of refused) expect(checkUrl(url), url).toBeUndefined()
    for (const value of [undefined, null, 42, {}, ["https://example.com/"], new URL("https://example.com/")]) {
      expect(checkUrl(value)).toBeUndefined()
    }
  })

  it.prop(
    "whatever a server sends, what is handed on is safe and already normalized",
    [fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.webUrl({ withFragments: true, withQueryParameters: true, authoritySettings: { withUserInfo: true, withPort: true } }),
      fc.tuple(fc.constantFrom("https://", "http://", "HTTP://", "javascript:", "data:", "file://"), fc.string({ maxLength: 60 })).map(([a, b]) => a + b),
      fc.tuple(fc.constantFrom("http://127.0.0.1", "https://h.example", "http://localhost"), fc.fullUnicodeString({ maxLength: 40 }))
        .map(([a, b]) => `${a}/${b}`)
    )],
    ([raw]) => {
      const checked = checkUrl(raw)
      if (checked === undefined) return
      const parsed = new URL(checked.url)
      expect(parsed.href).toBe(checked.url)
      expect(parsed.protocol === "https:" || (parsed.protocol === "http:" && addressKindOf(parsed.hostname) === "loopback")).toBe(true)
      expect(parsed.username).toBe("")
      expect(parsed.password).toBe("")
      expect(checked.host).toBe(parsed.hostname)
      expect(checked.url.length).toBeLessThanOrEqual(maxUrlLength)
      expect(checked.url).not.toMatch(/[\u0000-\u0020\u007f-\u00a0\u200b-\u200f\u2028-\u202e\ufeff]/)
      expect(checked.punycode).toBe(parsed.hostname.split(".").some((label) => label.startsWith("xn--")))
    }
  )

  it.prop(
    "a URL with userinfo is never handed on",
    [fc.webUrl({ authoritySettings: { withUserInfo: true } }).filter((url) => new URL(url).username !== "" || new URL(url).password !== "")],
    ([url]) => {
      expect(checkUrl(url)).toBeUndefined()
    }
  )
})

describe("urlElicitationOf and refusalElicitations", () => {
  const entry = { mode: "url", elicitationId: "e-1", url: "https://example.com/x", message: "Go" }

  it("requires an id where the revision does, keeps one given otherwise", () => {
    expect(urlElicitationOf(entry, true)).toEqual({
      mode: "url",
      elicitationId: "e-1",
      url: "https://example.com/x",
      host: "example.com",
      punycode: false,
      message: "Go"
    })
    expect(urlElicitationOf({ ...entry, elicitationId: undefined }, true)).toBeUndefined()
    expect(urlElicitationOf({ ...entry, elicitationId: undefined }, false)).toMatchObject({ elicitationId: undefined })
    for (const id of ["", "a\u0000b", "x".repeat(1_025), 5, null]) expect(urlElicitationOf({ ...entry, elicitationId: id }, false)).toBeUndefined()
    for (const bad of [{ ...entry, mode: "form" }, { ...entry, mode: undefined }, { ...entry, message: 3 }, null, "https://example.com/"]) {
      expect(urlElicitationOf(bad, true)).toBeUndefined()
    }
  })

  it("a refusal's elicitations: all of them checked, or none", () => {
    expect(refusalElicitations({ elicitations: [entry, { ...entry, elicitationId: "e-2" }] })?.map((e) => e.elicitationId)).toEqual(["e-1", "e-2"])
    expect(refusalElicitations({ elicitations: [entry, { ...entry, url: "javascript:x" }] })).toBeUndefined()
    expect(refusalElicitations({ elicitations: [] })).toBeUndefined()
    expect(refusalElicitations({ elicitations: Array(maxElicitationsPerRefusal).fill(entry) })).toHaveLength(maxElicitationsPerRefusal)
    expect(refusalElicitations({ elicitations: Array(maxElicitationsPerRefusal + 1).fill(entry) })).toBeUndefined()
    for (const data of [undefined, null, {}, { elicitations: entry }, [entry]]) expect(refusalElicitations(data)).toBeUndefined()
  })
})

/** Until the stream's readers have subscribed (a stream subscribes once it runs). */
const subscribed = (tracker: UrlElicitations.UrlElicitations, count = 1) => Effect.repeat(Effect.yieldNow(), { until: () => tracker.subscribers() >= count })

describe("hostile params (FastCheck)", () => {
  const hostileEntry = fc.record({
    mode: fc.oneof(fc.constant("url"), fc.constant("form"), fc.anything()),
    message: fc.oneof(fc.string(), fc.anything()),
    elicitationId: fc.oneof(fc.string({ maxLength: 1_100 }), fc.anything()),
    url: fc.oneof(fc.webUrl({ authoritySettings: { withUserInfo: true } }), fc.string(), fc.anything())
  }, { requiredKeys: [] })

  it.prop(
    "any params: never a throw; what passes is a URL elicitation with a checked URL",
    [fc.oneof(hostileEntry, fc.anything()), fc.boolean()],
    ([params, requireId]) => {
      const request = urlElicitationOf(params, requireId)
      if (request === undefined) return
      expect(request.mode).toBe("url")
      expect(typeof request.message).toBe("string")
      expect(checkUrl(request.url)).toEqual({ url: request.url, host: request.host, punycode: request.punycode })
      if (requireId) expect(typeof request.elicitationId).toBe("string")
    }
  )

  it.prop(
    "any refusal data: all of its elicitations pass, or nothing does",
    [fc.oneof(fc.record({ elicitations: fc.array(fc.oneof(hostileEntry, fc.anything()), { maxLength: 20 }) }), fc.anything())],
    ([data]) => {
      const elicitations = refusalElicitations(data)
      if (elicitations === undefined) return
      const listed = (data as { readonly elicitations: ReadonlyArray<unknown> }).elicitations
      expect(elicitations).toHaveLength(listed.length)
      for (const entry of listed) expect(urlElicitationOf(entry, true)).toBeDefined()
    }
  )
})

describe("the completion tracker", () => {
  const closed = () =>
    new TransportFailure({
      stage: "elicitation",
      phase: "call",
      limits: { timeoutMs: 1, maxBytes: 1 },
      reason: "session-closed",
      outcome: "not-sent",
      retryable: false
    })

  it.effect("completes expected ids once; ignores unknown, repeated and malformed ones", () =>
    Effect.gen(function*() {
      const tracker = UrlElicitations.make()
      const seen = yield* Effect.fork(Stream.runCollect(Stream.take(tracker.completions, 2)))
      yield* subscribed(tracker)
      tracker.expect("a")
      tracker.expect("b")
      for (
        const params of [{ elicitationId: "unknown" }, { elicitationId: 7 }, null, "a", { elicitationId: "a" }, { elicitationId: "a" }, { elicitationId: "b" }]
      ) {
        yield* tracker.complete(params)
      }
      expect(Chunk.toReadonlyArray(yield* Fiber.join(seen))).toEqual(["a", "b"])
      // Remembered: awaited after its completion, at once.
      yield* tracker.completion("a", closed)
    }))

  it.effect("is bounded: the oldest expected ids and completions are forgotten first", () =>
    Effect.gen(function*() {
      const tracker = UrlElicitations.make()
      for (let i = 0; i <= UrlElicitations.maxPending; i++) tracker.expect(`id-${i}`)
      const seen: Array<string> = []
      const reader = yield* Effect.fork(Stream.runForEach(tracker.completions, (id) => Effect.sync(() => seen.push(id))))
      yield* subscribed(tracker)
      // id-0 was forgotten: its completion is an unknown id's.
      yield* tracker.complete({ elicitationId: "id-0" })
      yield* tracker.complete({ elicitationId: `id-${UrlElicitations.maxPending}` })
      yield* tracker.close
      yield* Fiber.join(reader)
      expect(seen).toEqual([`id-${UrlElicitations.maxPending}`])
      // Completions remembered are bounded too: the oldest is awaited anew (and fails: closed).
      const remembering = UrlElicitations.make()
      for (let i = 0; i <= UrlElicitations.maxCompleted; i++) {
        remembering.expect(`c-${i}`)
        yield* remembering.complete({ elicitationId: `c-${i}` })
      }
      yield* remembering.completion(`c-${UrlElicitations.maxCompleted}`, closed)
      yield* remembering.close
      expect(yield* Effect.flip(remembering.completion("c-0", closed))).toMatchObject({ _tag: "TransportFailure" })
    }))

  it.effect("an id someone waits for is completed even after newer ids pushed it out", () =>
    Effect.gen(function*() {
      const tracker = UrlElicitations.make()
      const waiting = yield* Effect.fork(tracker.completion("awaited", closed))
      yield* Effect.yieldNow()
      for (let i = 0; i < UrlElicitations.maxPending + 10; i++) tracker.expect(`newer-${i}`)
      yield* tracker.complete({ elicitationId: "awaited" })
      yield* Fiber.join(waiting)
    }))

  it.effect("a waiter resumes on its completion; all fail when it closes; the stream ends", () =>
    Effect.gen(function*() {
      const tracker = UrlElicitations.make()
      const first = yield* Effect.fork(tracker.completion("x", closed))
      const second = yield* Effect.fork(Effect.flip(tracker.completion("y", closed)))
      const stream = yield* Effect.fork(Stream.runCollect(tracker.completions))
      yield* subscribed(tracker)
      yield* tracker.complete({ elicitationId: "x" })
      yield* Fiber.join(first)
      yield* tracker.close
      expect(yield* Fiber.join(second)).toMatchObject({ _tag: "TransportFailure", reason: "session-closed" })
      expect(Chunk.toReadonlyArray(yield* Fiber.join(stream))).toEqual(["x"])
      // After the close: at once.
      expect(yield* Effect.flip(tracker.completion("z", closed))).toMatchObject({ _tag: "TransportFailure" })
      expect(Chunk.toReadonlyArray(yield* Stream.runCollect(tracker.completions))).toEqual([])
    }))
})
